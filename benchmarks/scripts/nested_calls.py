# Nested-call cost: ARGV[0] iterations of redis.call('GET', KEYS[0]) (ARGV[1] == 'call'),
# or of the empty loop alone (anything else), for the driver to subtract.
n = int(ARGV[0])
if ARGV[1] == b'call':
    for _ in range(n):
        redis.call('GET', KEYS[0])
else:
    for _ in range(n):
        pass
return n
