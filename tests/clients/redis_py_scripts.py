"""Real-library scripting through redis-py, run by tests/scripting_clients.rs against a server.

Usage: python3 tests/clients/redis_py_scripts.py PORT

redis-py's Lock (its Lua release, extend and reacquire scripts, run unmodified by the library
through EVALSHA with its NOSCRIPT fallback), redis-py's Script objects, and the Redlock unlock
script from the Redlock specification. Exits non-zero with a message on the first mismatch.
"""

import sys
import time

import redis
from redis.exceptions import LockError, LockNotOwnedError, NoScriptError, ResponseError

REDLOCK_UNLOCK = """
if redis.call("get",KEYS[1]) == ARGV[1] then
    return redis.call("del",KEYS[1])
else
    return 0
end
"""


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def main():
    r = redis.Redis(port=int(sys.argv[1]))
    r.flushall()
    r.script_flush()

    # redis-py's Lock: acquire, extend, reacquire, release, and refusal when not owned.
    lock = r.lock("resource", timeout=10)
    check(lock.acquire(blocking=False), "lock acquired")
    check(not r.lock("resource", timeout=10).acquire(blocking=False), "second lock refused")
    check(lock.extend(5), "lock extended")
    check(r.pttl("resource") > 10_000, "extend added time")
    check(lock.reacquire(), "lock reacquired")
    check(9_000 < r.pttl("resource") <= 10_000, "reacquire reset the timeout")
    lock.release()
    check(r.exists("resource") == 0, "release deleted the key")
    try:
        lock.release()
        check(False, "releasing an unlocked lock raises")
    except LockError:
        pass
    other = r.lock("resource", timeout=10)
    other.acquire()
    r.set("resource", "someone-else")
    try:
        other.release()
        check(False, "releasing a lock owned by another token raises")
    except LockNotOwnedError:
        pass
    check(r.get("resource") == b"someone-else", "a foreign lock is left alone")

    # The NOSCRIPT fallback: the cache is flushed under the library's feet.
    r.script_flush()
    third = r.lock("fresh", timeout=10)
    check(third.acquire(blocking=False), "lock after SCRIPT FLUSH")
    third.release()
    check(r.exists("fresh") == 0, "release after SCRIPT FLUSH")

    # Script objects: EVALSHA first, EVAL on NOSCRIPT.
    incr_by = r.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    check(incr_by(keys=["n"], args=[5]) == 5, "registered script")
    r.script_flush()
    check(incr_by(keys=["n"], args=[2]) == 7, "registered script after flush")
    sha = r.script_load("return ARGV[1] .. KEYS[1]")
    check(r.evalsha(sha, 1, "k", "v") == b"vk", "evalsha")
    check(r.script_exists(sha, "0" * 40) == [True, False], "script exists")
    try:
        r.evalsha("0" * 40, 0)
        check(False, "unknown sha raises NoScriptError")
    except NoScriptError:
        pass
    try:
        r.eval("return redis.call('INCR', KEYS[1])", 1, "resource")
        check(False, "a script error raises")
    except ResponseError as e:
        check("not an integer" in str(e), f"script error text: {e}")

    # Redlock's unlock script.
    unlock = r.register_script(REDLOCK_UNLOCK)
    r.set("redlock", "my-token", px=30_000)
    check(unlock(keys=["redlock"], args=["not-mine"]) == 0, "redlock keeps a foreign lock")
    check(unlock(keys=["redlock"], args=["my-token"]) == 1, "redlock releases its own lock")
    check(r.exists("redlock") == 0, "redlock key gone")

    # A lock that expires is gone.
    short = r.lock("short", timeout=0.2)
    check(short.acquire(blocking=False), "short lock")
    time.sleep(0.35)
    check(r.exists("short") == 0, "short lock expired")
    print("ok")


if __name__ == "__main__":
    main()
