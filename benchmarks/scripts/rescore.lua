-- Time-decay leaderboard rescore. KEYS[1]: the board (score = last-activity unix time).
-- ARGV: now, mode (LINEAR | EXP | STEP, in any case), param (half-life or window, seconds), k.
-- Replies the top-k member names by weight, ties by name ascending, zero weights left out,
-- keeping a bounded insertion-sorted array (no full sort).
local now, mode = tonumber(ARGV[1]), string.upper(ARGV[2])
local param, k = tonumber(ARGV[3]), tonumber(ARGV[4])
if mode ~= 'LINEAR' and mode ~= 'EXP' and mode ~= 'STEP' then
  return redis.error_reply("ERR unknown mode '" .. ARGV[2] .. "', expected LINEAR, EXP or STEP")
end
local board = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local names, weights, n = {}, {}, 0
for i = 1, #board, 2 do
  local member = board[i]
  -- A NaN age (now and score infinite alike) stays NaN: no weight, left out.
  local age = now - tonumber(board[i + 1])
  if age < 0 then age = 0 end
  local w
  if mode == 'LINEAR' then
    w = 1 / (1 + age / param)
  elseif mode == 'EXP' then
    w = 0.5 ^ (age / param)
  elseif age <= param then
    w = 1
  else
    w = 0
  end
  if w > 0 and (n < k or w > weights[n] or (w == weights[n] and member < names[n])) then
    local j = n
    if n < k then
      j = n + 1
      n = n + 1
    end
    while j > 1 and (weights[j - 1] < w or (weights[j - 1] == w and names[j - 1] > member)) do
      names[j], weights[j] = names[j - 1], weights[j - 1]
      j = j - 1
    end
    names[j], weights[j] = member, w
  end
end
return names
