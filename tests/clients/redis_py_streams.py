"""A consumer-group workflow, through redis-py's own stream API, on a real redis-server and on
Goblin Core: every call's parsed result must be equal on both.

Usage: python3 tests/clients/redis_py_streams.py REDIS_PORT GOBLIN_PORT

The workflow, as a job queue runs it: a producer adds jobs (XADD with generated IDs) to a stream
made with its group (XGROUP CREATE ... MKSTREAM); two workers read in the group with COUNT, one of
them blocked (BLOCK) until a producer thread adds a job; one worker acks its jobs, the other
"crashes" and leaves its jobs pending (XPENDING, summary and extended forms, by consumer and by
IDLE); once they are stale, a third worker claims them with XAUTOCLAIM (one of them deleted
meanwhile: the reply's third element) and XCLAIM (JUSTID, and a min idle time not reached yet),
re-reads its history, acks them, and XPENDING is empty; the dead consumers are removed, the stream
is trimmed (XTRIM MAXLEN and MINID), a transaction (pipeline(transaction=True)) adds a job and
reads it in the group, XINFO STREAM/GROUPS/CONSUMERS (and STREAM FULL) describe the result, and
the group is destroyed (then XREADGROUP is refused with NOGROUP).

Masked, as they depend on the clock: generated IDs (every ID an XADD made is replaced by its rank
among them, "<id 0>", "<id 1>"...: the ms part is the clock's and the sequence part depends on
how many XADDs fell in the same ms; the IDs are checked to be well formed and increasing) and the
idle, seen, active and delivery times (checked to be integers, and at least the time slept where
the workflow waited for entries to go stale). Delivery counts, consumers, IDs' ranks, lags and
entries-read are compared exactly. Exits non-zero on the first difference.
"""

import re
import sys
import threading
import time

import redis

STREAM = "jobs"
GROUP = "workers"
STALE_MS = 100  # the min idle time of the claims; the workflow sleeps longer than this first

# The fields of redis-py's parsed replies (and XINFO's) that hold a time from the server's clock.
TIME_FIELDS = {"time_since_delivered", "idle", "seen-time", "active-time", "inactive",
               "delivery-time"}
ID_SHAPE = re.compile(r"^[0-9]+-[0-9]+$")


class Ids:
    """The IDs the XADDs generated, in order; ``mask`` replaces each by its rank."""

    def __init__(self):
        self.made = []
        self.lock = threading.Lock()

    def add(self, entry_id):
        with self.lock:
            self.made.append(entry_id)
        return entry_id

    def check(self):
        """Well formed and strictly increasing: a generated ID is greater than the previous."""
        parsed = []
        for i in self.made:
            if not ID_SHAPE.match(i):
                raise AssertionError(f"not an ID: {i!r}")
            ms, seq = i.split("-")
            parsed.append((int(ms), int(seq)))
        if parsed != sorted(set(parsed)):
            raise AssertionError(f"generated IDs not increasing: {self.made!r}")

    def mask(self, value, key=None, at_least=None):
        """value with generated IDs replaced by their ranks and clock times by '<time>'."""
        if isinstance(value, dict):
            # (XINFO STREAM FULL's entries are a dict keyed by ID.)
            return {self.mask(k): self.mask(v, k, at_least) for k, v in value.items()}
        if key == "pending" and isinstance(value, list):
            # XINFO STREAM FULL's PELs: [id, consumer, delivery time, count] for the group's,
            # [id, delivery time, count] for a consumer's.
            out = []
            for nack in value:
                nack = [self.mask(v) for v in nack]
                at = {4: 2, 3: 1}.get(len(nack))
                if at is not None:
                    nack[at] = self.mask(nack[at], "delivery-time")
                out.append(nack)
            return out
        if isinstance(value, (list, tuple)):
            out = [self.mask(v, None, at_least) for v in value]
            # XINFO STREAM FULL's consumers are flat [name, value, ...] lists in RESP2: mask
            # the values that follow a time field's name.
            for j in range(len(out) - 1):
                if isinstance(value[j], str) and value[j] in TIME_FIELDS:
                    out[j + 1] = self.mask(value[j + 1], value[j], at_least)
            return type(value)(out) if isinstance(value, tuple) else out
        if key in TIME_FIELDS:
            if not isinstance(value, int) or value < 0:
                return f"<bad time {value!r}>"
            if at_least is not None and value < at_least:
                return f"<time {value} < {at_least}>"
            return "<time>"
        if isinstance(value, str) and value in self.made:
            return f"<id {self.made.index(value)}>"
        return value


def workflow(port, protocol):
    """The calls, in order, over RESP2 or RESP3: (label, result or the error's text), masked."""
    r = redis.Redis(port=port, decode_responses=True, protocol=protocol)
    r.flushall()
    ids = Ids()
    out = []

    def step(label, call, at_least=None):
        try:
            result = call()
        except redis.RedisError as e:
            result = f"error: {type(e).__name__}: {e}"
        out.append((label, result, at_least))
        return result

    # The queue and its group, then the producer's first jobs.
    step("xgroup_create mkstream", lambda: r.xgroup_create(STREAM, GROUP, id="$", mkstream=True))
    step("xgroup_create again", lambda: r.xgroup_create(STREAM, GROUP, id="$"))
    for i in range(10):
        step(f"xadd {i}", lambda i=i: ids.add(r.xadd(STREAM, {"job": f"job-{i}", "n": i})))
    step("xlen", lambda: r.xlen(STREAM))
    step("xinfo_groups new", lambda: r.xinfo_groups(STREAM))

    # Two workers read new jobs in the group.
    step("alice reads 4", lambda: r.xreadgroup(GROUP, "alice", {STREAM: ">"}, count=4))
    step("bob reads 4", lambda: r.xreadgroup(GROUP, "bob", {STREAM: ">"}, count=4))
    step("alice reads the rest", lambda: r.xreadgroup(GROUP, "alice", {STREAM: ">"}, count=10))
    step("nothing new", lambda: r.xreadgroup(GROUP, "bob", {STREAM: ">"}, count=10))

    # Bob blocks for new jobs; a producer thread adds one once bob is blocked.
    producer = redis.Redis(port=port, decode_responses=True, protocol=protocol)

    def produce():
        deadline = time.monotonic() + 10
        while producer.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        ids.add(producer.xadd(STREAM, {"job": "job-10", "n": 10}))

    thread = threading.Thread(target=produce)
    thread.start()
    step("bob blocks, woken by xadd",
         lambda: r.xreadgroup(GROUP, "bob", {STREAM: ">"}, count=3, block=10000))
    thread.join()
    step("bob blocks, times out",
         lambda: r.xreadgroup(GROUP, "bob", {STREAM: ">"}, count=3, block=100))
    for i in range(11, 14):
        step(f"xadd {i}", lambda i=i: ids.add(r.xadd(STREAM, {"job": f"job-{i}", "n": i})))
    step("alice reads 2", lambda: r.xreadgroup(GROUP, "alice", {STREAM: ">"}, count=2))

    # Alice acks what she has done (one ID twice, and one no one was given); bob crashes.
    alice_ids = ids.made[0:4] + ids.made[8:10] + ids.made[11:13]
    step("alice acks", lambda: r.xack(STREAM, GROUP, *alice_ids, alice_ids[0], "99999999999999-0"))
    step("xpending summary", lambda: r.xpending(STREAM, GROUP))
    step("xpending_range", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 20))
    step("xpending_range bob", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 2,
                                                         consumername="bob"))
    step("xpending_range alice", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 10,
                                                           consumername="alice"))

    # Bob's jobs go stale. One of them is deleted from the stream meanwhile.
    time.sleep(STALE_MS * 1.5 / 1000)
    step("xpending_range idle", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 20,
                                                         idle=STALE_MS), STALE_MS)
    step("xdel a pending job", lambda: r.xdel(STREAM, ids.made[5]))
    # Carol claims them: XAUTOCLAIM (the deleted one comes back in the third element), ...
    step("xautoclaim 3", lambda: r.xautoclaim(STREAM, GROUP, "carol", STALE_MS, "0-0", count=3))
    step("xautoclaim justid", lambda: r.xautoclaim(STREAM, GROUP, "carol", STALE_MS,
                                                    ids.made[7], count=1, justid=True))
    # ... and XCLAIM: not what another consumer just claimed, then bob's last one, then one with
    # the delivery count and the idle time set (RETRYCOUNT, IDLE, JUSTID).
    step("xclaim not stale yet", lambda: r.xclaim(STREAM, GROUP, "dave", 60000, [ids.made[4]]))
    step("xclaim", lambda: r.xclaim(STREAM, GROUP, "carol", STALE_MS, [ids.made[10]]))
    step("xclaim retrycount justid", lambda: r.xclaim(STREAM, GROUP, "carol", 0, [ids.made[7]],
                                                      idle=5000, retrycount=5, justid=True))
    step("xpending_range carol", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 20,
                                                           consumername="carol"))
    step("xpending_range idle 5s", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 20,
                                                            idle=5000), 5000)
    step("xinfo_consumers", lambda: r.xinfo_consumers(STREAM, GROUP))
    step("carol's history", lambda: r.xreadgroup(GROUP, "carol", {STREAM: "0"}, count=10))
    step("xpending_range redelivered", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 20))

    # Carol does the jobs and acks them: nothing is pending any more.
    carol_ids = [ids.made[i] for i in (4, 5, 6, 7, 10)]
    step("carol acks", lambda: r.xack(STREAM, GROUP, *carol_ids))
    step("xpending empty", lambda: r.xpending(STREAM, GROUP))
    step("xpending_range empty", lambda: r.xpending_range(STREAM, GROUP, "-", "+", 10))
    step("xgroup_delconsumer bob", lambda: r.xgroup_delconsumer(STREAM, GROUP, "bob"))
    step("xgroup_delconsumer ghost", lambda: r.xgroup_delconsumer(STREAM, GROUP, "ghost"))
    step("xgroup_createconsumer", lambda: r.xgroup_createconsumer(STREAM, GROUP, "erin"))
    step("xinfo_consumers after", lambda: r.xinfo_consumers(STREAM, GROUP))
    step("xinfo_groups done", lambda: r.xinfo_groups(STREAM))

    # The stream is trimmed: exactly to 8 entries, then up to an ID.
    step("xtrim maxlen", lambda: r.xtrim(STREAM, maxlen=8, approximate=False))
    step("xtrim minid", lambda: r.xtrim(STREAM, minid=ids.made[9], approximate=False))
    step("xtrim minid again", lambda: r.xtrim(STREAM, minid=ids.made[9], approximate=False))
    step("xlen trimmed", lambda: r.xlen(STREAM))
    step("xrange trimmed", lambda: r.xrange(STREAM, "-", "+"))
    step("xrevrange count", lambda: r.xrevrange(STREAM, "+", "-", count=2))

    # A job added and taken in one transaction.
    def transaction():
        p = r.pipeline(transaction=True)
        p.xadd(STREAM, {"job": "job-14", "n": 14})
        p.xreadgroup(GROUP, "erin", {STREAM: ">"}, count=5)
        p.xpending(STREAM, GROUP)
        got = p.execute()
        ids.add(got[0])
        return got

    step("pipeline xadd+xreadgroup", transaction)
    step("xinfo_stream", lambda: r.xinfo_stream(STREAM))
    step("xinfo_stream full", lambda: r.xinfo_stream(STREAM, full=True))
    step("xinfo_groups end", lambda: r.xinfo_groups(STREAM))

    # Inside a transaction XREADGROUP does not block: nothing new is an empty reply at once.
    def no_block_in_multi():
        p = r.pipeline(transaction=True)
        p.xreadgroup(GROUP, "erin", {STREAM: ">"}, count=1, block=5000)
        return p.execute()

    step("xreadgroup block in multi", no_block_in_multi)

    # The group goes away while a worker is blocked on it: the worker is released with an error.
    def blocked_then_destroyed():
        blocked = redis.Redis(port=port, decode_responses=True, protocol=protocol)
        got = []

        def read():
            try:
                got.append(blocked.xreadgroup(GROUP, "frank", {STREAM: ">"}, block=10000))
            except redis.RedisError as e:
                got.append(f"error: {type(e).__name__}: {e}")

        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + 10
        while r.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        destroyed = r.xgroup_destroy(STREAM, GROUP)
        reader.join()
        return destroyed, got

    step("xgroup_destroy while blocked", blocked_then_destroyed)
    step("xgroup_create again at 0", lambda: r.xgroup_create(STREAM, GROUP, id="0"))
    step("xinfo_groups recreated", lambda: r.xinfo_groups(STREAM))

    # The group goes away.
    step("xgroup_destroy", lambda: r.xgroup_destroy(STREAM, GROUP))
    step("xgroup_destroy again", lambda: r.xgroup_destroy(STREAM, GROUP))
    step("xreadgroup no group", lambda: r.xreadgroup(GROUP, "alice", {STREAM: ">"}))
    step("xinfo_groups none", lambda: r.xinfo_groups(STREAM))
    step("type", lambda: r.type(STREAM))

    ids.check()
    return [(label, ids.mask(result, at_least=at_least)) for label, result, at_least in out]


def woken_with(reply):
    """The IDs of an XREADGROUP reply of one stream: redis-py parses RESP2's [[key, entries]]
    and RESP3's {key: [entries]}."""
    entries = reply[0][1] if isinstance(reply, list) else reply[STREAM][0]
    return [entry_id for entry_id, _ in entries]


def compare(redis_port, goblin_port, protocol, verbose):
    """The workflow on both servers over one protocol; exits on a difference."""
    want = workflow(redis_port, protocol)
    got = workflow(goblin_port, protocol)
    failed = False
    for (label, w), (_, g) in zip(want, got):
        if verbose:
            print(f"RESP{protocol} {label}: {w!r}", file=sys.stderr)
        if w != g:
            print(f"FAILED RESP{protocol} {label}:\n  redis:  {w!r}\n  goblin: {g!r}",
                  file=sys.stderr)
            failed = True
            if not verbose:
                break
    if failed:
        sys.exit(1)
    # A comparison of two empty runs would prove nothing: the workflow did what it should.
    results = dict(got)
    plausible = (
        len(want) == len(got)
        and results["alice acks"] == 8
        and results["carol acks"] == 4
        and results["xpending empty"]["pending"] == 0
        and woken_with(results["bob blocks, woken by xadd"]) == ["<id 10>"]
        and results["xlen trimmed"] == 5
        and results["xautoclaim 3"][2] == ["<id 5>"]
    )
    if not plausible:
        print(f"FAILED RESP{protocol}: implausible results {got!r}", file=sys.stderr)
        sys.exit(1)


def main():
    redis_port, goblin_port = int(sys.argv[1]), int(sys.argv[2])
    verbose = "-v" in sys.argv[3:]  # every result on stderr, and every difference
    for protocol in (2, 3):
        compare(redis_port, goblin_port, protocol, verbose)
    print("ok")


if __name__ == "__main__":
    main()
