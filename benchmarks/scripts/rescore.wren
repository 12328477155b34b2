// Time-decay leaderboard rescore. keys[0]: the board (score = last-activity unix time).
// argv: now, mode (LINEAR | EXP | STEP, in any case), param (half-life or window, seconds), k.
// Replies the top-k member names by weight, ties by name ascending, zero weights left out,
// keeping a bounded insertion-sorted array (no full sort).
var now = Num.fromString(argv[0])
// Wren strings have no case mapping: the mode's ASCII letters upper-cased byte by byte.
var mode = argv[1].bytes.map { |b| String.fromByte(b >= 97 && b <= 122 ? b - 32 : b) }.join()
if (mode != "LINEAR" && mode != "EXP" && mode != "STEP") {
  return Redis.errorReply("ERR unknown mode '%(argv[1])', expected LINEAR, EXP or STEP")
}
var param = Num.fromString(argv[2])
var k = Num.fromString(argv[3])
var board = Redis.call("ZRANGE", keys[0], 0, -1, "WITHSCORES")
var names = []
var weights = []
var n = 0
// Byte-wise a < b: Wren strings have no ordering operators.
var before = Fn.new { |a, b|
  var ab = a.bytes
  var bb = b.bytes
  var m = ab.count < bb.count ? ab.count : bb.count
  var i = 0
  while (i < m) {
    if (ab[i] != bb[i]) return ab[i] < bb[i]
    i = i + 1
  }
  return ab.count < bb.count
}
var i = 0
while (i < board.count) {
  var member = board[i]
  // A NaN age (now and score infinite alike) stays NaN: no weight, left out.
  var age = now - Num.fromString(board[i + 1])
  if (age < 0) age = 0
  var w = 0
  if (mode == "LINEAR") {
    w = 1 / (1 + age / param)
  } else if (mode == "EXP") {
    w = 0.5.pow(age / param)
  } else if (age <= param) {
    w = 1
  }
  if (w > 0 && (n < k || (n > 0 && (w > weights[n - 1] || (w == weights[n - 1] && before.call(member, names[n - 1])))))) {
    var j = n - 1
    if (n < k) {
      j = n
      n = n + 1
      names.add(null)
      weights.add(0)
    }
    while (j > 0 && (weights[j - 1] < w || (weights[j - 1] == w && before.call(member, names[j - 1])))) {
      names[j] = names[j - 1]
      weights[j] = weights[j - 1]
      j = j - 1
    }
    names[j] = member
    weights[j] = w
  }
  i = i + 2
}
return names
