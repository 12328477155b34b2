#!/usr/bin/env python3
"""Goblin Core against Redis, side by side, with redis-benchmark.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/server_benchmark.py
    python3 benchmarks/server_benchmark.py --requests 100000 --rounds 3
    python3 benchmarks/server_benchmark.py --tests set,get,lpush,lpop
    python3 benchmarks/server_benchmark.py --suite types --requests 20000
    python3 benchmarks/server_benchmark.py --tests zadd,zrange --zrange-members 10000
    python3 benchmarks/server_benchmark.py --suite streams --xrange-entries 10000

The script starts Goblin Core (``--goblin-bin``, default
``target/release/goblin-core``) and Debian's ``redis-server`` (``--redis-bin``)
side by side, each on a free loopback TCP port and on a Unix socket in a
temporary directory, both with ``--save '' --appendonly no`` and nothing else
changed. It then runs ``redis-benchmark -t <test> -n <requests> -c 50 -P <p>
--csv`` for every test of ``--tests`` (default ``set,get``), at pipelines 1, 16
and 256, over TCP (``-h 127.0.0.1 -p port``) and over the Unix socket (``-s
path``), and parses the CSV rows (test name, requests per second).

The tests are redis-benchmark's built-in ``-t`` tests (``BUILTIN_TESTS``:
``set``, ``get``, ``incr``, ``lpush``, ``rpush``, ``lpop``, ``rpop``, ``sadd``,
``hset``, ``spop``, ``zadd``, ``zpopmin``, ``lrange_100`` ... ``lrange_600``,
``mset``, ``ping_inline``, ``ping_mbulk``) and the custom workloads of
``CUSTOM_TESTS``, which redis-benchmark runs as a command line of its own:

* ``zrange`` -- the key ``bench:zrange`` is (re)filled before every run with
  ``--zrange-members`` members (default 1000; ``member:000000`` ... with scores
  0, 1, ...) by ZADD, checked with ZCARD and one ZRANGE, then measured with
  ``redis-benchmark ... ZRANGE bench:zrange 0 9 WITHSCORES`` (the ten lowest
  members and their scores, a read of a skiplist-encoded set).

* ``xadd`` -- the key ``bench:xadd`` is recreated before every run (DEL, one
  XADD, checked with XLEN), so every run appends to a stream of one entry, then
  ``redis-benchmark ... XADD bench:xadd * f v`` is measured (an ID made from
  the clock, one small entry appended to the stream's last node).

* ``xrange`` -- the key ``bench:xrange`` is (re)filled before every run with
  ``--xrange-entries`` entries (default 1000; IDs ``1-0``, ``2-0`` ..., each
  ``field value:000000`` ...) by XADD, checked with XLEN and one XRANGE, then
  measured with ``redis-benchmark ... XRANGE bench:xrange - + COUNT 10`` (the
  ten first entries, a read from the stream's first node).

* ``xreadgroup`` -- a consumer group's two commands, measured one after the other on the same
  stream (two rows): ``bench:xreadgroup`` is recreated before every run with ``10 * (requests +
  pipeline * clients) + 10`` entries (IDs ``0-1``, ``1-1`` ..., each ``f v``, by XADD) and the
  group ``bench:group`` at ``0``; then ``redis-benchmark ... XREADGROUP GROUP bench:group worker
  COUNT 10 STREAMS bench:xreadgroup >`` is measured: the stream never runs out, so every request
  delivers 10 new entries into the group's and the consumer's pending lists (checked afterwards:
  XPENDING counts a multiple of 10, at least 10 per request, and fewer than XLEN). Then, on the
  pending list that run left, ``redis-benchmark -r <10 * requests> ... XACK bench:xreadgroup
  bench:group __rand_int__-1`` (the ``__rand_int__-1`` ten times) is measured: each request acks
  ten IDs drawn among the ``10 * requests`` first entries, which the first run certainly
  delivered, as a consumer acks what one COUNT 10 read gave it. An ID drawn again after its ack is
  a miss (XACK counts it 0): the first requests find all ten pending, the last ones about four, a
  request acks 6.3 of its ten on average (1 - 1/e), the same draw on both servers (checked
  afterwards: at least 5 acked per request).

* ``evalsha_cad`` -- the compare-and-delete script ``scripts/cad.lua``, loaded
  with SCRIPT LOAD before every run, then ``EVALSHA <sha> 1 cad:__rand_int__
  token`` on keys that don't exist (the GET, the comparison, reply 0): the cost
  of one Lua script call and one command called from it, with a C client.
  ``benchmarks/cad_benchmark.py`` times the deleting path with a Python client.

``--suite types`` is ``lpush,lpop,sadd,hset,zadd,zrange``, the data-type
workloads; ``--suite streams`` is ``xadd,xrange,xreadgroup``; ``--suite scripts`` is
``evalsha_cad``; ``--tests`` given as well adds its tests after the suite's.

``--user restricted`` runs every redis-benchmark as an ACL user that may only
run ``+@read +@write`` commands on ``~key:*`` (``ACL SETUSER`` on both servers
before each run, ``--user``/``-a`` for redis-benchmark): the cost of the ACL
checks beside ``--user default``, which has every permission (the default).

For each (transport, pipeline, test) point it prints one row, ratio first: the
ratio Goblin/Redis of the ops/s, then Goblin Core's ops/s and Redis's; then the
CPU each server process spent per request (user and system time, read from
/proc before and after each redis-benchmark run, over the requests of the run):
the ratio Goblin/Redis (lower is better) and each server's µs. The
absolute numbers depend on the machine and on whatever else it is doing; **the
ratio is what to read**: 1.00× means as fast as Redis, above 1 faster, below 1
slower. Both servers run on the same machine at the same time, with the same
client, and which server is measured first alternates from one point to the
next (and from one round to the next) so neither always gets the warmer caches
or the quieter moment. With ``--rounds N`` every point is measured N times on
each server and the median is reported.

Traffic goes only to 127.0.0.1 and to the two Unix sockets. Both servers are
stopped at the end, also on Ctrl-C, SIGTERM or an error, and every
redis-benchmark run is bounded by ``--timeout`` seconds. (Starting and stopping
the servers is benchlib.py's, shared with the scripting benchmark drivers.) A run that fails on
one server (for instance a test whose command that server does not have yet)
shows "failed" in its row and is explained on stderr; the other points still
run, and the exit status is 1. The exit status is 0 when every point was
measured, 2 on a usage error.

``--json FILE`` also writes the results: benchlib's shape ("benchmark",
"unit", "time", "server", "reference", then one entry of "rows" per printed
row with both medians, the ratio and every sample; a run under redis-benchmark's
resolution, reported as inf, is null there).
"""

import argparse
import csv
import hashlib
import io
import math
import pathlib
import subprocess
import sys

import benchlib
from benchlib import BenchmarkError

PIPELINES = (1, 16, 256)
TRANSPORTS = ("tcp", "unix")

# redis-benchmark 7.0's -t tests (``ping`` selects both pings, ``lrange`` the four LRANGEs).
BUILTIN_TESTS = (
    "ping", "ping_inline", "ping_mbulk", "set", "get", "incr", "lpush", "rpush", "lpop", "rpop",
    "sadd", "hset", "spop", "zadd", "zpopmin", "lrange", "lrange_100", "lrange_300",
    "lrange_500", "lrange_600", "mset",
)

ZRANGE_KEY = "bench:zrange"
XADD_KEY = "bench:xadd"
XRANGE_KEY = "bench:xrange"


class CustomTest:
    """A workload redis-benchmark runs as a command line: ``prepare(conn, args)`` fills the
    server (over a benchlib Connection) before every run, then ``command`` is measured.

    ``options(args)``, if given, are more redis-benchmark arguments (``-r`` for ``__rand_int__``);
    ``verify(conn, args, state)``, if given, runs after the measured run and checks the requests
    did the work they were meant to (its return value is the next one's ``state``); ``then``, if
    given, is another CustomTest measured right after this one on the state it left (its own
    ``prepare`` is not run), a row of its own."""

    def __init__(self, name, command, prepare, label, options=None, verify=None, then=None):
        self.name = name
        self.command = command
        self.prepare = prepare
        self.label = label  # the row name, for the table
        self.options = options
        self.verify = verify
        self.then = then


def prepare_zrange(conn, args):
    """``bench:zrange`` with ``--zrange-members`` members, checked with ZCARD and one ZRANGE."""
    n = args.zrange_members
    conn.call("DEL", ZRANGE_KEY)
    batch = 500
    for start in range(0, n, batch):
        flat = []
        for i in range(start, min(n, start + batch)):
            flat += [str(i), f"member:{i:06d}"]
        conn.call("ZADD", ZRANGE_KEY, *flat)
    card = conn.call("ZCARD", ZRANGE_KEY)
    got = conn.call("ZRANGE", ZRANGE_KEY, "0", "9", "WITHSCORES")
    want = []
    for i in range(min(n, 10)):
        want += [f"member:{i:06d}".encode(), str(i).encode()]
    if card != n or got != want:
        raise PointError(
            f"{conn.label}: {ZRANGE_KEY} was not filled as expected "
            f"(ZCARD {card!r}, ZRANGE 0 9 WITHSCORES {got!r})"
        )


def prepare_xadd(conn, args):
    """``bench:xadd`` recreated with one entry, so every run appends to the same stream."""
    conn.call("DEL", XADD_KEY)
    conn.call("XADD", XADD_KEY, "*", "f", "v")
    length = conn.call("XLEN", XADD_KEY)
    if length != 1:
        raise PointError(f"{conn.label}: {XADD_KEY} has XLEN {length!r} after one XADD")


def xrange_entry(i):
    """The i-th entry (from 0) of ``bench:xrange``, as XRANGE replies it."""
    return [f"{i + 1}-0".encode(), [b"field", f"value:{i:06d}".encode()]]


def prepare_xrange(conn, args):
    """``bench:xrange`` with ``--xrange-entries`` entries, checked with XLEN and one XRANGE."""
    n = args.xrange_entries
    conn.call("DEL", XRANGE_KEY)
    commands = [("XADD", XRANGE_KEY, f"{i + 1}-0", "field", f"value:{i:06d}") for i in range(n)]
    conn.pipeline(commands, batch=500)
    length = conn.call("XLEN", XRANGE_KEY)
    got = conn.call("XRANGE", XRANGE_KEY, "-", "+", "COUNT", "10")
    want = [xrange_entry(i) for i in range(min(n, 10))]
    if length != n or got != want:
        raise PointError(
            f"{conn.label}: {XRANGE_KEY} was not filled as expected "
            f"(XLEN {length!r}, XRANGE - + COUNT 10 {got!r})"
        )


XREADGROUP_KEY = "bench:xreadgroup"
XREADGROUP_GROUP = "bench:group"
XREADGROUP_COUNT = 10  # entries a read delivers, IDs an ack names


def xreadgroup_entries(args):
    """Entries enough that no XREADGROUP ... > of the run comes back short: COUNT per request,
    with room for the whole last pipeline of every client (and a few more, so some are left)."""
    most = max(int(p) for p in str(args.pipelines).split(",") if p.strip())
    return XREADGROUP_COUNT * (args.requests + most * args.clients) + 10


def prepare_xreadgroup(conn, args):
    """``bench:xreadgroup`` with its entries (IDs ``0-1``, ``1-1`` ...) and the group at 0."""
    n = xreadgroup_entries(args)
    conn.call("DEL", XREADGROUP_KEY)
    commands = [("XADD", XREADGROUP_KEY, f"{i}-1", "f", "v") for i in range(n)]
    conn.pipeline(commands, batch=1000)
    created = conn.call("XGROUP", "CREATE", XREADGROUP_KEY, XREADGROUP_GROUP, "0")
    length = conn.call("XLEN", XREADGROUP_KEY)
    pending = conn.call("XPENDING", XREADGROUP_KEY, XREADGROUP_GROUP)
    if created != b"OK" or length != n or pending[0] != 0:
        raise PointError(
            f"{conn.label}: {XREADGROUP_KEY} was not prepared as expected (XGROUP CREATE "
            f"{created!r}, XLEN {length!r} for {n}, XPENDING {pending!r})"
        )


def verify_xreadgroup(conn, args, state):
    """Every XREADGROUP delivered COUNT new entries: the pending count is a multiple of COUNT,
    at least COUNT per request, and the stream was not exhausted (a short read would have
    emptied it). Returns the pending count for the XACK run."""
    pending = conn.call("XPENDING", XREADGROUP_KEY, XREADGROUP_GROUP)[0]
    length = conn.call("XLEN", XREADGROUP_KEY)
    if (pending % XREADGROUP_COUNT or pending < XREADGROUP_COUNT * args.requests
            or pending >= length):
        raise PointError(
            f"{conn.label}: after {args.requests} XREADGROUP COUNT {XREADGROUP_COUNT}, "
            f"{pending!r} entries pending of {length!r}: not {XREADGROUP_COUNT} new ones each"
        )
    return pending


def xack_options(args):
    """``__rand_int__`` in 0 .. 10 * requests - 1: IDs the XREADGROUP run certainly delivered
    (it delivered entries in order, at least 10 * requests of them)."""
    return ["-r", str(XREADGROUP_COUNT * args.requests)]


def verify_xack(conn, args, pending_before):
    """The XACKs really found pending IDs: at least 5 of the 10 per request acked (6.3 are
    expected: see the module docstring)."""
    pending = conn.call("XPENDING", XREADGROUP_KEY, XREADGROUP_GROUP)[0]
    acked = pending_before - pending
    if acked < (XREADGROUP_COUNT // 2) * args.requests:
        raise PointError(
            f"{conn.label}: {args.requests} XACKs of {XREADGROUP_COUNT} pending IDs acked only "
            f"{acked!r} ({pending_before!r} pending before, {pending!r} after)"
        )
    return None


CAD_SCRIPT = (pathlib.Path(__file__).parent / "scripts" / "cad.lua").read_bytes()
CAD_SHA = hashlib.sha1(CAD_SCRIPT).hexdigest()


def prepare_evalsha_cad(conn, args):
    """The compare-and-delete idiom (``scripts/cad.lua``) loaded with SCRIPT LOAD."""
    sha = conn.call("SCRIPT", "LOAD", CAD_SCRIPT)
    if sha != CAD_SHA.encode():
        raise PointError(f"{conn.label}: SCRIPT LOAD replied {sha!r}, expected {CAD_SHA}")


CUSTOM_TESTS = {
    "zrange": CustomTest(
        "zrange",
        ["ZRANGE", ZRANGE_KEY, "0", "9", "WITHSCORES"],
        prepare_zrange,
        "ZRANGE 0 9 WITHSCORES",
    ),
    "xadd": CustomTest(
        "xadd",
        ["XADD", XADD_KEY, "*", "f", "v"],
        prepare_xadd,
        "XADD * f v",
    ),
    "xrange": CustomTest(
        "xrange",
        ["XRANGE", XRANGE_KEY, "-", "+", "COUNT", "10"],
        prepare_xrange,
        "XRANGE - + COUNT 10",
    ),
    # A consumer group reading 10 new entries a request, then acking 10 pending IDs a request
    # (prepare_xreadgroup, verify_xreadgroup, xack_options, verify_xack: every request of both
    # runs does real work on both servers -- the stream is long enough never to run out, and the
    # acked IDs are drawn among those the reads delivered).
    "xreadgroup": CustomTest(
        "xreadgroup",
        ["XREADGROUP", "GROUP", XREADGROUP_GROUP, "worker", "COUNT", str(XREADGROUP_COUNT),
         "STREAMS", XREADGROUP_KEY, ">"],
        prepare_xreadgroup,
        "XREADGROUP COUNT 10 >",
        verify=verify_xreadgroup,
        then=CustomTest(
            "xack",
            ["XACK", XREADGROUP_KEY, XREADGROUP_GROUP] + ["__rand_int__-1"] * XREADGROUP_COUNT,
            None,
            "XACK 10 delivered IDs",
            options=xack_options,
            verify=verify_xack,
        ),
    ),
    # Keys that don't exist: GET, the comparison, reply 0 -- one script call and one command
    # called from it, per request (benchmarks/cad_benchmark.py times the deleting path).
    "evalsha_cad": CustomTest(
        "evalsha_cad",
        ["EVALSHA", CAD_SHA, "1", "cad:__rand_int__", "token"],
        prepare_evalsha_cad,
        "EVALSHA cad.lua (missing keys)",
    ),
}

SUITES = {
    "types": ("lpush", "lpop", "sadd", "hset", "zadd", "zrange"),
    "streams": ("xadd", "xrange", "xreadgroup"),
    "scripts": ("evalsha_cad",),
}


class PointError(Exception):
    """One redis-benchmark run failed (e.g. a command the server does not have yet)."""


def target(server, transport):
    """redis-benchmark's arguments to reach server over transport."""
    if transport == "tcp":
        return ["-h", "127.0.0.1", "-p", str(server.port)]
    return ["-s", server.socket]


def parse_csv(text):
    """{test name: requests per second} from redis-benchmark --csv output."""
    rows = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 2 or row[0] == "test":
            continue
        if "(needed to benchmark" in row[0]:  # e.g. the LPUSH that fills the list for LRANGE
            continue
        try:
            rows[row[0]] = float(row[1])
        except ValueError:
            continue
    return rows


def prepare(args, server, custom):
    """Runs a custom test's preparation on server (over TCP)."""
    try:
        with benchlib.Connection.tcp("127.0.0.1", server.port) as conn:
            custom.prepare(conn, args)
    except (OSError, BenchmarkError, benchlib.ReplyError) as e:
        server.check_running()
        raise PointError(f"preparing {custom.name} on {server.name} failed: {e}") from None


def verify(args, server, custom, state):
    """Runs a custom test's check after its measured run (over TCP); the check's result."""
    try:
        with benchlib.Connection.tcp("127.0.0.1", server.port) as conn:
            return custom.verify(conn, args, state)
    except (OSError, BenchmarkError, benchlib.ReplyError) as e:
        server.check_running()
        raise PointError(f"checking {custom.name} on {server.name} failed: {e}") from None


def run_benchmark(args, server, transport, pipeline, test):
    """{row name: (ops/s, server CPU µs per request)} of one measurement."""
    custom = CUSTOM_TESTS.get(test)
    if custom is None:
        return run_once(args, server, transport, pipeline, test, ["-t", test])
    prepare(args, server, custom)
    rows = {}
    state = None
    while custom is not None:  # the workload's runs, one after the other, a row each
        what = (custom.options(args) if custom.options else []) + custom.command
        # One row, named by its command line: name it by the workload.
        for measured in run_once(args, server, transport, pipeline, custom.name, what).values():
            rows[custom.label] = measured
        if custom.verify is not None:
            state = verify(args, server, custom, state)
        custom = custom.then
    return rows


# The restricted user of ``--user restricted``: redis-benchmark's -t set,get keys are key:NNN.
BENCH_USER = ("bench", "bench-password", ["on", ">bench-password", "~key:*", "+@read", "+@write"])


def user_options(args, server):
    """redis-benchmark's authentication for ``--user``, the user made first on server."""
    if args.user == "default":
        return []
    name, password, rules = BENCH_USER
    with benchlib.Connection.tcp("127.0.0.1", server.port) as conn:
        conn.call("ACL", "SETUSER", name, "reset", *rules)
    return ["--user", name, "-a", password]


def run_once(args, server, transport, pipeline, test, what):
    """One redis-benchmark run of what (-t test, or a command line): {row name: (ops/s,
    server CPU µs per request)}, the CPU shared out evenly when the run has several rows."""
    cmd = (
        [args.benchmark_bin]
        + target(server, transport)
        + user_options(args, server)
        + ["-n", str(args.requests), "-c", str(args.clients), "-P", str(pipeline), "--csv"]
        + what
    )
    cpu_before = benchlib.cpu_seconds(server.proc.pid)
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise PointError(
            f"redis-benchmark against {server.name} ({transport}, -P {pipeline}, {test}) "
            f"took more than {args.timeout:g}s"
        ) from None
    finally:
        # Never leave a client behind (timeout, Ctrl-C): kill it and reap it.
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    server.check_running()
    cpu = benchlib.cpu_seconds(server.proc.pid) - cpu_before
    rows = parse_csv(out)
    if proc.returncode != 0 or not rows:
        raise PointError(
            f"redis-benchmark against {server.name} ({transport}, -P {pipeline}, {test}) "
            f"failed (exit {proc.returncode}):\n{out}{err}"
        )
    per_request_us = cpu * 1e6 / (args.requests * len(rows))
    return {name: (rps, per_request_us) for name, rps in rows.items()}


def fmt_cpu(us):
    return "-" if us is None else f"{us:.2f}"


def fmt_ops(v):
    if v is None:
        return "-"
    # redis-benchmark reports inf when a run took under its 1 ms resolution.
    return f"{v:,.0f}" if math.isfinite(v) else "too short"


def finite(v):
    """v, or None if it is missing or not finite (JSON has no inf)."""
    return v if v is not None and math.isfinite(v) else None


def main():
    parser = argparse.ArgumentParser(
        description="Run redis-benchmark against Goblin Core and Redis side by side; "
        "read the Goblin/Redis ratio.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--goblin-bin", default="target/release/goblin-core",
                        help="the Goblin Core binary (relative paths are tried from the "
                        "current directory, then from the repository root)")
    parser.add_argument("--redis-bin", default="redis-server", help="the Redis server binary")
    parser.add_argument("--benchmark-bin", default="redis-benchmark",
                        help="the redis-benchmark binary")
    parser.add_argument("--requests", "-n", type=int, default=200000,
                        help="requests per redis-benchmark run (-n)")
    parser.add_argument("--clients", "-c", type=int, default=50,
                        help="parallel connections (-c)")
    parser.add_argument("--tests", "-t", default=None,
                        help="comma-separated tests, run in this order: redis-benchmark's -t "
                        f"tests ({', '.join(BUILTIN_TESTS)}) and the custom workloads "
                        f"({', '.join(CUSTOM_TESTS)}); default set,get unless --suite is given")
    parser.add_argument("--suite", choices=sorted(SUITES),
                        help="a named list of tests: "
                        + "; ".join(f"{k} = {','.join(v)}" for k, v in SUITES.items()))
    parser.add_argument("--zrange-members", type=int, default=1000,
                        help="members of the sorted set the zrange workload reads")
    parser.add_argument("--xrange-entries", type=int, default=1000,
                        help="entries of the stream the xrange workload reads")
    parser.add_argument("--pipelines", default=",".join(map(str, PIPELINES)),
                        help="comma-separated pipeline depths (-P)")
    parser.add_argument("--transports", default=",".join(TRANSPORTS),
                        help="comma-separated transports: tcp, unix")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measurements per point and server; the median is reported")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds one redis-benchmark run may take")
    parser.add_argument("--user", choices=["default", "restricted"], default="default",
                        help="the ACL user redis-benchmark runs as: the default one (every "
                        "permission) or one restricted to +@read +@write on ~key:*")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args()

    tests = list(SUITES[args.suite]) if args.suite else []
    if args.tests is not None or not args.suite:
        for t in (args.tests or "set,get").split(","):
            t = t.strip().lower()
            if t and t not in tests:
                tests.append(t)
    unknown = [t for t in tests if t not in BUILTIN_TESTS and t not in CUSTOM_TESTS]
    if unknown:
        parser.error(f"unknown test(s) {', '.join(unknown)}: --tests takes "
                     f"{', '.join(BUILTIN_TESTS + tuple(CUSTOM_TESTS))}")
    pipelines = [int(p) for p in args.pipelines.split(",") if p.strip()]
    transports = [t.strip().lower() for t in args.transports.split(",") if t.strip()]
    if not tests or not pipelines or not transports:
        parser.error("--tests, --pipelines and --transports must not be empty")
    if any(t not in TRANSPORTS for t in transports):
        parser.error("--transports takes tcp and/or unix")
    if args.rounds < 1 or args.requests < 1 or args.clients < 1 or min(pipelines) < 1:
        parser.error("--rounds, --requests, --clients and --pipelines must be positive")
    if args.zrange_members < 1 or args.xrange_entries < 1:
        parser.error("--zrange-members and --xrange-entries must be positive")

    goblin_bin = benchlib.find_binary(args.goblin_bin)
    if goblin_bin is None:
        parser.exit(2, f"Goblin Core binary not found: {args.goblin_bin} "
                    "(build it with cargo build --release)\n")
    redis_bin = benchlib.find_binary(args.redis_bin)
    benchmark_bin = benchlib.find_binary(args.benchmark_bin)
    for tool, found in ((args.redis_bin, redis_bin), (args.benchmark_bin, benchmark_bin)):
        if found is None:
            parser.exit(2, f"{tool} not found (Debian: apt-get install redis-server "
                        "redis-tools)\n")
    args.benchmark_bin = benchmark_bin

    # SIGTERM (and SIGHUP) stop the run like Ctrl-C does, so the servers are stopped below.
    benchlib.install_signal_handlers()

    group = benchlib.Servers()
    goblin = group.add("Goblin Core", goblin_bin)
    redis = group.add("Redis", redis_bin)
    servers = (goblin, redis)
    status = 0
    errors = []
    short = False
    results = []  # the JSON rows
    try:
        for s in servers:
            s.start()
        goblin_version, redis_version = benchlib.version(goblin_bin), benchlib.version(redis_bin)
        print(f"Goblin Core: {goblin_version}")
        print(f"Redis:       {redis_version}")
        print(f"Client:      {benchlib.version(benchmark_bin)}, -c {args.clients}, "
              f"-n {args.requests}, rounds {args.rounds} (median)")
        if "zrange" in tests:
            print(f"zrange:      {ZRANGE_KEY} of {args.zrange_members} members, "
                  f"ZRANGE {ZRANGE_KEY} 0 9 WITHSCORES")
        if "xadd" in tests:
            print(f"xadd:        {XADD_KEY} recreated with one entry before every run")
        if "xrange" in tests:
            print(f"xrange:      {XRANGE_KEY} of {args.xrange_entries} entries, "
                  f"XRANGE {XRANGE_KEY} - + COUNT 10")
        if "xreadgroup" in tests:
            print(f"xreadgroup:  {XREADGROUP_KEY} of {xreadgroup_entries(args)} entries, group "
                  f"{XREADGROUP_GROUP}; XREADGROUP ... COUNT 10 >, then XACK of 10 IDs drawn "
                  f"among the first {XREADGROUP_COUNT * args.requests} (delivered)")
        if args.user == "restricted":
            print(f"user:        {BENCH_USER[0]} ({' '.join(BENCH_USER[2][2:])}) on both servers")
        print()
        header = f"{'transport':<9} {'pipeline':>8}  {'test':<32} {'Goblin/Redis':>12} " \
                 f"{'Goblin ops/s':>14} {'Redis ops/s':>14}  {'CPU G/R':>8} " \
                 f"{'Goblin µs':>9} {'Redis µs':>9}"
        print(header)
        print("-" * len(header))
        sys.stdout.flush()
        point = 0
        for transport in transports:
            for pipeline in pipelines:
                for test in tests:
                    # server -> row name -> [ops/s], and the same for CPU µs per request
                    samples = {s.name: {} for s in servers}
                    cpu_samples = {s.name: {} for s in servers}
                    failed = set()
                    for rnd in range(args.rounds):
                        order = servers if (point + rnd) % 2 == 0 else servers[::-1]
                        for s in order:
                            if s.name in failed:
                                continue
                            try:
                                rows = run_benchmark(args, s, transport, pipeline, test)
                            except PointError as e:
                                failed.add(s.name)
                                errors.append(str(e))
                                continue
                            for name, (rps, cpu_us) in rows.items():
                                samples[s.name].setdefault(name, []).append(rps)
                                cpu_samples[s.name].setdefault(name, []).append(cpu_us)
                    point += 1
                    names = list(samples[goblin.name])
                    names += [n for n in samples[redis.name] if n not in names]
                    if not names:  # failed on both servers
                        names = [test.upper()]
                    for name in names:
                        gss = samples[goblin.name].get(name, [])
                        rss = samples[redis.name].get(name, [])
                        g = benchlib.median(gss) if gss else None
                        r = benchlib.median(rss) if rss else None
                        timed = g and r and math.isfinite(g) and math.isfinite(r)
                        ratio = benchlib.fmt_ratio(g, r) if timed else "-"
                        short = short or (g is not None and not math.isfinite(g)) or (
                            r is not None and not math.isfinite(r))
                        gs = "failed" if goblin.name in failed else fmt_ops(g)
                        rs = "failed" if redis.name in failed else fmt_ops(r)
                        gcs = cpu_samples[goblin.name].get(name, [])
                        rcs = cpu_samples[redis.name].get(name, [])
                        gc = benchlib.median(gcs) if gcs else None
                        rc = benchlib.median(rcs) if rcs else None
                        cpu_ratio = benchlib.fmt_ratio(gc, rc) if gc and rc else "-"
                        print(f"{transport:<9} {pipeline:>8}  {name:<32} {ratio:>12} "
                              f"{gs:>14} {rs:>14}  {cpu_ratio:>8} {fmt_cpu(gc):>9} "
                              f"{fmt_cpu(rc):>9}")
                        sys.stdout.flush()
                        results.append({
                            "transport": transport,
                            "pipeline": pipeline,
                            "test": name,
                            "goblin": finite(g),
                            "redis": finite(r),
                            "ratio": g / r if timed else None,
                            "cpu_us_per_request": {"goblin": gc, "redis": rc},
                            "cpu_ratio": gc / rc if gc and rc else None,
                            "failed": sorted(failed),
                            "samples": {"goblin": [finite(v) for v in gss],
                                        "redis": [finite(v) for v in rss]},
                        })
        if args.json:  # also when some point failed: its row says so ("failed")
            benchlib.write_json(args.json, benchlib.json_results(
                "server", "ops/s", f"Goblin Core: {goblin_version}", f"Redis: {redis_version}",
                client=benchlib.version(benchmark_bin),
                requests=args.requests,
                clients=args.clients,
                rounds=args.rounds,
                tests=tests,
                pipelines=pipelines,
                transports=transports,
                zrange_members=args.zrange_members,
                xrange_entries=args.xrange_entries,
                xreadgroup_entries=xreadgroup_entries(args),
                user=args.user,
                rows=results,
            ))
        if short:
            print("note: 'too short' runs took under redis-benchmark's 1 ms resolution; "
                  "raise --requests", file=sys.stderr)
        if errors:
            status = 1
            print(f"\n{len(errors)} run(s) failed:", file=sys.stderr)
            for e in errors:
                print(f"error: {e}", file=sys.stderr)
    except BenchmarkError as e:
        print(f"error: {e}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("\ninterrupted; stopping the servers", file=sys.stderr)
        status = 130
    finally:
        group.stop_all()  # every server stopped, even on a second Ctrl-C; the temp dir removed
    return status


if __name__ == "__main__":
    sys.exit(main())
