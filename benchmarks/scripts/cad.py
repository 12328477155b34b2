if redis.call('GET', KEYS[0]) == ARGV[0]:
    return redis.call('DEL', KEYS[0])
return 0
