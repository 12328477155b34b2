# Time-decay leaderboard rescore. KEYS[0]: the board (score = last-activity unix time).
# ARGV: now, mode (LINEAR | EXP | STEP, in any case), param (half-life or window, seconds), k.
# Replies the top-k member names by weight, ties by name ascending, zero weights left out,
# keeping a bounded insertion-sorted array (no full sort).
now = float(ARGV[0])
mode = ARGV[1].upper()
if mode != b'LINEAR' and mode != b'EXP' and mode != b'STEP':
    return redis.error_reply(b"ERR unknown mode '" + ARGV[1] + b"', expected LINEAR, EXP or STEP")
param = float(ARGV[2])
k = int(ARGV[3])
board = redis.call('ZRANGE', KEYS[0], 0, -1, 'WITHSCORES')
names = []
weights = []
n = 0
for i in range(0, len(board), 2):
    member = board[i]
    # A NaN age (now and score infinite alike) stays NaN: no weight, left out.
    age = now - float(board[i + 1])
    if age < 0:
        age = 0
    if mode == b'LINEAR':
        w = 1 / (1 + age / param)
    elif mode == b'EXP':
        w = 0.5 ** (age / param)
    elif age <= param:
        w = 1
    else:
        w = 0
    if w > 0 and (n < k or w > weights[n - 1] or (w == weights[n - 1] and member < names[n - 1])):
        if n < k:
            names.append(member)
            weights.append(w)
            n += 1
        j = n - 1
        while j > 0 and (weights[j - 1] < w or (weights[j - 1] == w and names[j - 1] > member)):
            names[j] = names[j - 1]
            weights[j] = weights[j - 1]
            j -= 1
        names[j] = member
        weights[j] = w
return names
