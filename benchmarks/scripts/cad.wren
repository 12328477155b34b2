if (Redis.call("GET", keys[0]) == argv[0]) {
  return Redis.call("DEL", keys[0])
}
return 0
