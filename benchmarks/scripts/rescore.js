// Time-decay leaderboard rescore. KEYS[0]: the board (score = last-activity unix time).
// ARGV: now, mode (LINEAR | EXP | STEP), param (half-life or window, seconds), k.
// Replies the top-k member names by weight, ties by name ascending, zero weights left out,
// keeping a bounded insertion-sorted array (no full sort).
const now = Number(ARGV[0]), mode = ARGV[1];
const param = Number(ARGV[2]), k = Number(ARGV[3]);
const board = redis.call('ZRANGE', KEYS[0], 0, -1, 'WITHSCORES');
const names = [], weights = [];
let n = 0;
for (let i = 0; i < board.length; i += 2) {
  const member = board[i];
  let age = now - Number(board[i + 1]);
  if (age < 0) age = 0;
  let w;
  if (mode === 'LINEAR') {
    w = 1 / (1 + age / param);
  } else if (mode === 'EXP') {
    w = 0.5 ** (age / param);
  } else if (age <= param) {
    w = 1;
  } else {
    w = 0;
  }
  if (w > 0 && (n < k || w > weights[n - 1] || (w === weights[n - 1] && member < names[n - 1]))) {
    let j = n - 1;
    if (n < k) {
      j = n;
      n += 1;
    }
    while (j > 0 && (weights[j - 1] < w || (weights[j - 1] === w && names[j - 1] > member))) {
      names[j] = names[j - 1];
      weights[j] = weights[j - 1];
      j -= 1;
    }
    names[j] = member;
    weights[j] = w;
  }
}
return names;
