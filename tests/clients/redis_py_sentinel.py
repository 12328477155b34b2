"""A redis-py client that follows Redis Sentinel across a failover, run by tests/sentinel.rs
while the primary is killed.

Usage: python3 tests/clients/redis_py_sentinel.py SECONDS SENTINEL_PORT [SENTINEL_PORT ...]

For SECONDS it increments a counter on whatever primary the sentinels name (`Sentinel.master_for`
finds the new one after a failover; a write that fails while there is none is retried), and
asks `WAIT 1 1000` after each: an INCR a replica acknowledged must survive the failover. At the
end the counter, read from the primary then, must be at least the highest acknowledged value.
Prints `ok`, or exits non-zero.
"""

import sys
import time

import redis
from redis.sentinel import Sentinel


def main():
    seconds = float(sys.argv[1])
    sentinel = Sentinel([("127.0.0.1", int(p)) for p in sys.argv[2:]], socket_timeout=1.0)
    master = sentinel.master_for("mymaster", socket_timeout=1.0, retry_on_timeout=False)
    acked, failed, done = 0, 0, 0
    end = time.time() + seconds
    while time.time() < end:
        try:
            value = master.incr("counter")
            if master.execute_command("WAIT", 1, 1000) >= 1:
                acked = max(acked, value)
            done += 1
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError, redis.ResponseError):
            failed += 1
            time.sleep(0.1)
    final = None
    for _ in range(50):
        try:
            final = int(master.get("counter"))
            break
        except (redis.ConnectionError, redis.TimeoutError):
            time.sleep(0.2)
    if final is None or final < acked or done == 0:
        print(f"FAILED: final {final}, acknowledged {acked}, writes {done}, failures {failed}",
              file=sys.stderr)
        sys.exit(1)
    print("ok")


main()
