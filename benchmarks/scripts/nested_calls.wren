// Nested-call cost: argv[0] iterations of Redis.call("GET", keys[0]) (argv[1] == "call"),
// or of the empty loop alone (anything else), for the driver to subtract.
var n = Num.fromString(argv[0])
if (argv[1] == "call") {
  for (i in 0...n) Redis.call("GET", keys[0])
} else {
  for (i in 0...n) {}
}
return n
