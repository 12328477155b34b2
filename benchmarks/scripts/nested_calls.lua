-- Nested-call cost: ARGV[1] iterations of redis.call('GET', KEYS[1]) (ARGV[2] == 'call'),
-- or of the empty loop alone (anything else), for the driver to subtract.
local n = tonumber(ARGV[1])
if ARGV[2] == 'call' then
  for _ = 1, n do redis.call('GET', KEYS[1]) end
else
  for _ = 1, n do end
end
return n
