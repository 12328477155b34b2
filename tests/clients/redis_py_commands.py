"""The commands added for Redis users, called through redis-py the way applications call them, on a
real redis-server and on Goblin Core: every call's parsed result must be equal on both.

Usage: python3 tests/clients/redis_py_commands.py REDIS_PORT GOBLIN_PORT

Covers SORT, the bitmap commands (including redis-py's BitFieldOperation builder), LCS,
HyperLogLog, the geo commands, SLOWLOG (through redis-py's parsed entries), MEMORY and LATENCY
(the shapes redis-py parses), maxmemory's refusals and evictions, MONITOR (through redis-py's
Monitor, which parses each line), WAIT and ROLE. Exits non-zero on the first difference.
"""

import sys
import threading

import redis


def calls(r):
    """The calls, in order; each yields (label, result or the error's text)."""
    r.flushall()
    steps = [
        ("rpush", lambda: r.rpush("l", 3, 1, 2, 10)),
        ("sort", lambda: r.sort("l")),
        ("sort desc alpha", lambda: r.sort("l", desc=True, alpha=True)),
        ("mset weights", lambda: r.mset({"w_1": 30, "w_2": 20, "w_3": 10, "w_10": 0})),
        ("sort by get", lambda: r.sort("l", by="w_*", get=["#", "w_*"], groups=True)),
        ("sort store", lambda: r.sort("l", start=1, num=2, store="sorted")),
        ("sort_ro", lambda: r.sort_ro("l", alpha=True)),
        ("setbit", lambda: r.setbit("b", 7, 1)),
        ("getbit", lambda: r.getbit("b", 7)),
        ("bitcount", lambda: r.bitcount("b")),
        ("bitcount bit", lambda: r.bitcount("b", 0, 7, mode="BIT")),
        ("bitpos", lambda: r.bitpos("b", 1)),
        ("bitop", lambda: r.bitop("NOT", "nb", "b")),
        ("bitfield", lambda: r.bitfield("bf").set("u8", 0, 255).incrby("u8", 0, 10).get("i4", 4).execute()),
        ("bitfield sat", lambda: r.bitfield("bf", default_overflow="SAT").incrby("u8", 0, 500).execute()),
        ("bitfield_ro", lambda: r.bitfield_ro("bf", "u8", 0, items=[("u4", 4)])),
        ("lcs setup", lambda: r.mset({"k1": "ohmytext", "k2": "mynewtext"})),
        ("lcs", lambda: r.lcs("k1", "k2")),
        ("lcs len", lambda: r.lcs("k1", "k2", len=True)),
        ("lcs idx", lambda: r.lcs("k1", "k2", idx=True, minmatchlen=4, withmatchlen=True)),
        ("pfadd", lambda: r.pfadd("h", *[f"e{i}" for i in range(1000)])),
        ("pfadd 2", lambda: r.pfadd("h2", "a", "b", "e1")),
        ("pfcount", lambda: r.pfcount("h")),
        ("pfcount union", lambda: r.pfcount("h", "h2")),
        ("pfmerge", lambda: r.pfmerge("hm", "h", "h2")),
        ("hll bytes", lambda: r.get("hm")),
        ("geoadd", lambda: r.geoadd("g", [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"])),
        ("geodist", lambda: r.geodist("g", "Palermo", "Catania", unit="km")),
        ("geopos", lambda: r.geopos("g", "Palermo", "nowhere")),
        ("geohash", lambda: r.geohash("g", "Palermo", "Catania")),
        ("geosearch", lambda: r.geosearch("g", longitude=15, latitude=37, radius=200, unit="km",
                                          withdist=True, withcoord=True, withhash=True, sort="ASC")),
        ("geosearch box", lambda: r.geosearch("g", member="Palermo", width=400, height=400, unit="km",
                                              sort="DESC", count=1)),
        ("geosearchstore", lambda: r.geosearchstore("gs", "g", longitude=15, latitude=37, radius=200,
                                                    unit="km", storedist=True)),
        ("georadius", lambda: r.georadius("g", 15, 37, 200, unit="km", withdist=True, sort="ASC")),
        ("wait", lambda: r.wait(0, 0)),
        ("role", lambda: r.role()),
        ("slowlog threshold", lambda: r.config_set("slowlog-log-slower-than", 0)),
        ("slowlog reset", lambda: r.slowlog_reset()),
        ("slowlog entry", lambda: r.set("slow", "x")),
        ("slowlog len", lambda: r.slowlog_len()),
        ("slowlog get", lambda: [e["command"] for e in r.slowlog_get(2)]),
        ("slowlog off", lambda: r.config_set("slowlog-log-slower-than", 10000)),
        # MEMORY: the figures differ between the servers, their types and names do not.
        ("memory usage", lambda: type(r.memory_usage("l")).__name__),
        ("memory usage missing", lambda: r.memory_usage("nokey")),
        ("memory stats", lambda: sorted(r.memory_stats().keys())),
        ("memory purge", lambda: r.memory_purge()),
        ("memory doctor", lambda: r.execute_command("MEMORY", "DOCTOR")),
        # LATENCY, with the monitor off: no events, and the same report.
        ("latency latest", lambda: r.latency_latest()),
        ("latency history", lambda: r.latency_history("command")),
        ("latency reset", lambda: r.latency_reset()),
        ("latency doctor", lambda: r.execute_command("LATENCY", "DOCTOR")),
        # maxmemory: refusals and evictions as redis-py reports them.
        ("oom limit", lambda: r.config_set("maxmemory", 1)),
        ("oom set", lambda: r.set("x", "y")),
        ("oom get", lambda: r.get("slow")),
        ("oom eval", lambda: r.eval("return redis.call('set', 'x', 'y')", 0)),
        ("evict all", lambda: r.config_set("maxmemory-policy", "allkeys-random")),
        ("evicted", lambda: (r.get("slow"), r.dbsize())),
        ("no limit", lambda: r.config_set("maxmemory", 0)),
        ("lfu policy", lambda: r.config_set("maxmemory-policy", "allkeys-lfu")),
        ("lfu key", lambda: r.set("f", "str")),
        ("object freq", lambda: r.object("freq", "f")),
        ("noeviction", lambda: r.config_set("maxmemory-policy", "noeviction")),
    ]
    for label, call in steps:
        try:
            yield label, call()
        except redis.RedisError as e:
            yield label, f"error: {e}"


def monitored(port):
    """What redis-py's Monitor parses for two commands another connection sends."""
    pool = redis.ConnectionPool(port=port)
    seen = []
    with redis.Redis(connection_pool=pool).monitor() as m:
        writer = redis.Redis(port=port)

        def send():
            writer.set("mon", 'a "quoted" value')
            writer.eval("return redis.call('get', KEYS[1])", 1, "mon")

        threading.Timer(0.2, send).start()
        for info in m.listen():
            # redis-py names itself with CLIENT SETINFO, which Redis 7.0 refuses (it is 7.2's).
            if info["command"].startswith("CLIENT SETINFO"):
                continue
            seen.append((info["db"], info["client_type"], info["command"]))
            if len(seen) == 3:
                break
    return seen


def main():
    redis_port, goblin_port = int(sys.argv[1]), int(sys.argv[2])
    want = list(calls(redis.Redis(port=redis_port)))
    got = list(calls(redis.Redis(port=goblin_port)))
    for (label, w), (_, g) in zip(want, got):
        if w != g:
            print(f"FAILED {label}:\n  redis:  {w!r}\n  goblin: {g!r}", file=sys.stderr)
            sys.exit(1)
    # A comparison of two empty runs would prove nothing.
    if dict(got)["geodist"] is None or dict(got)["pfcount"] < 900:
        print(f"FAILED: implausible results {got!r}", file=sys.stderr)
        sys.exit(1)
    want_mon, got_mon = monitored(redis_port), monitored(goblin_port)
    if want_mon != got_mon or len(got_mon) != 3:
        print(f"FAILED monitor:\n  redis:  {want_mon!r}\n  goblin: {got_mon!r}", file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
