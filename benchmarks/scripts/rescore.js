// Time-decay leaderboard rescore. KEYS[0]: the board (score = last-activity unix time).
// ARGV: now, mode (LINEAR | EXP | STEP, in any case), param (half-life or window, seconds), k.
// Replies the top-k member names by weight, ties by name ascending, zero weights left out,
// keeping a bounded insertion-sorted array (no full sort).
// Number() reads Infinity but not inf, -inf (how ZRANGE writes infinite scores) or +inf.
const num = (s) => {
  const x = Number(s);
  return x === x || !/^[+-]?inf(inity)?$/i.test(s) ? x : s[0] === '-' ? -Infinity : Infinity;
};
// 0 LINEAR, 1 EXP, 2 STEP, in any case: the i flag (without u) folds ASCII letters only.
const m = ARGV[1];
const mode = /^linear$/i.test(m) ? 0 : /^exp$/i.test(m) ? 1 : /^step$/i.test(m) ? 2 : -1;
if (mode < 0) {
  return redis.error_reply(`ERR unknown mode '${m}', expected LINEAR, EXP or STEP`);
}
const now = num(ARGV[0]), param = num(ARGV[2]), k = Number(ARGV[3]);
const board = redis.call('ZRANGE', KEYS[0], 0, -1, 'WITHSCORES');
const names = [], weights = [];
let n = 0;
for (let i = 0; i < board.length; i += 2) {
  const member = board[i];
  // A NaN age (now and score infinite alike) stays NaN: no weight, left out.
  let age = now - num(board[i + 1]);
  if (age < 0) age = 0;
  let w;
  if (mode === 0) {
    w = 1 / (1 + age / param);
  } else if (mode === 1) {
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
