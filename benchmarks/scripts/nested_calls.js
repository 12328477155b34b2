// Nested-call cost: ARGV[0] iterations of redis.call('GET', KEYS[0]) (ARGV[1] === 'call'),
// or of the empty loop alone (anything else), for the driver to subtract.
const n = Number(ARGV[0]);
if (ARGV[1] === 'call') {
  for (let i = 0; i < n; i++) redis.call('GET', KEYS[0]);
} else {
  for (let i = 0; i < n; i++) {}
}
return n;
