"""redis-py's client-side cache (RESP3, `cache_config`), run by tests/client_library.rs against
redis-server and Goblin Core.

Usage: python3 tests/clients/redis_py_tracking.py PORT [PORT ...]

The library turns CLIENT TRACKING on, answers repeated GETs from its cache, and drops an entry
when the server's invalidation push for its key arrives: a value changed by another client must be
seen at the next read. redis-py enables its cache only for servers announcing 7.4 or later in
HELLO (a policy of the library, not a protocol need): the test lowers that gate to 7.0, so the
same library code runs against both servers. Prints `ok`, or exits non-zero on the first mismatch.
"""

import sys
import time

import redis
from redis.cache import CacheConfig
from redis.connection import CacheProxyConnection


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def get_calls(r):
    return r.info("commandstats").get("cmdstat_get", {}).get("calls", 0)


def run(port):
    other = redis.Redis(port=port)
    other.flushall()
    other.config_resetstat()
    cached = redis.Redis(port=port, protocol=3, cache_config=CacheConfig())
    other.set("k", "v1")
    check(cached.get("k") == b"v1", "first read")
    check(cached.get("k") == b"v1", "cached read")
    check(get_calls(other) == 1, "the second read came from the cache")
    check(cached.get_cache().size == 1, "one entry cached")

    other.set("k", "v2")
    deadline = time.time() + 5
    while cached.get("k") != b"v2":
        check(time.time() < deadline, "the change made by another client is seen")
        time.sleep(0.01)
    check(get_calls(other) == 2, "the invalidated key was read again from the server")

    # A flush drops every cached entry.
    other.set("j", "1")
    check(cached.get("j") == b"1", "read j")
    other.flushall()
    deadline = time.time() + 5
    while cached.get("j") is not None or cached.get("k") is not None:
        check(time.time() < deadline, "FLUSHALL invalidates the cache")
        time.sleep(0.01)
    cached.close()
    other.close()


def main():
    CacheProxyConnection.MIN_ALLOWED_VERSION = "7.0.0"
    for port in sys.argv[1:]:
        run(int(port))
    print("ok")


main()
