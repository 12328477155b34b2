#!/usr/bin/env python3
"""The memory of one stream, Goblin Core against Redis in the same run.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/stream_memory_benchmark.py
    python3 benchmarks/stream_memory_benchmark.py --entries 100000 --json stream-memory.json

Goblin Core (``--goblin-bin``, default ``target/release/goblin-core``) and
Debian's ``redis-server`` (``--redis-bin``) are started fresh, side by side, by
benchlib.py (``--save '' --appendonly no``, nothing else changed: Redis's
``stream-node-max-bytes`` 4096 and ``stream-node-max-entries`` 100 on both).
Each gets ``--entries`` (default 1,000,000) commands ``XADD s * field value``
-- small entries, IDs made from each server's clock -- pipelined from one
connection, every reply checked to be an ID, then ``XLEN s`` and the first and
last entries' fields checked, and INFO memory read.

The table shows, ratio first (Goblin/Redis, lower is better), then each
server's figure in bytes:

* ``used_memory`` -- what the issue's target is stated in: the whole server's
  allocated bytes with the stream in it;
* ``used_memory less at start`` -- the same less ``used_memory`` of the
  fresh server before the first XADD: the stream's own share, without what
  each server allocates at start;
* ``used_memory_rss`` -- the resident set, the allocator's overhead and
  fragmentation included.

The two ``used_memory`` figures are not counted the same way: Redis's adds
jemalloc's size class of every allocation (its usable size), Goblin Core's the
size each allocation asked for. The resident set is the figure both count
alike. ``--json FILE`` writes benchlib's shape ("benchmark", "unit", "time",
"server", "reference", then the options and one entry of "rows" per printed
row). Both servers are stopped at the end, also on Ctrl-C or an error. Exit
status: 0 measured, 1 a check failed or a server misbehaved, 2 usage, 130
interrupted.
"""

import argparse
import sys

import benchlib
from benchlib import BenchmarkError, note

KEY = "s"
BATCH = 1000  # XADDs in flight


def fill(conn, entries):
    """XADD s * field value, entries times, pipelined; each reply must be an ID."""
    for start in range(0, entries, BATCH):
        n = min(BATCH, entries - start)
        conn.send(benchlib.encode("XADD", KEY, "*", "field", "value") * n)
        for reply in conn.read(n):
            if not isinstance(reply, bytes) or b"-" not in reply:
                raise BenchmarkError(f"{conn.label}: XADD replied {benchlib.show(reply)}")
    length = conn.call("XLEN", KEY)
    ends = [conn.call(cmd, KEY, a, b, "COUNT", "1") for cmd, a, b in
            (("XRANGE", "-", "+"), ("XREVRANGE", "+", "-"))]
    if length != entries or any(e[0][1] != [b"field", b"value"] for e in ends):
        raise BenchmarkError(f"{conn.label}: the stream was not filled as expected "
                             f"(XLEN {length!r}, first and last {ends!r})")


def measure(server, entries):
    """(used_memory, used_memory less at start, used_memory_rss) with the stream filled."""
    with benchlib.Connection.unix(server.socket) as conn:
        start = benchlib.info_memory(conn)["used_memory"]
        fill(conn, entries)
        server.check_running()
        after = benchlib.info_memory(conn)
    return after["used_memory"], after["used_memory"] - start, after["used_memory_rss"]


MEASURES = ("used_memory", "used_memory less at start", "used_memory_rss")


def main():
    parser = argparse.ArgumentParser(
        description="used_memory of a stream of small entries, Goblin Core against Redis",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    benchlib.add_binary_arguments(parser)
    parser.add_argument("--entries", type=int, default=1_000_000,
                        help="XADD s * field value, this many times")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.entries < 1:
        parser.error("--entries must be positive")
    binaries = benchlib.found_binaries(parser, args)
    benchlib.install_signal_handlers()
    group = benchlib.Servers(prefix="goblin-stream-memory-")

    def run():
        versions = {name: benchlib.version(binary) for name, binary in binaries}
        figures = {}
        for name, binary in binaries:
            note(f"{name}: XADD {KEY} * field value, {args.entries:,} times")
            server = group.start(name, binary)
            figures[name] = measure(server, args.entries)
            server.stop()
        print(f"Goblin Core: {versions['Goblin Core']}")
        print(f"Redis:       {versions['Redis']}")
        print(f"One stream of {args.entries:,} entries (XADD {KEY} * field value), bytes; "
              "lower is better")
        print()
        rows, results = [], []
        for i, measure_name in enumerate(MEASURES):
            g, r = figures["Goblin Core"][i], figures["Redis"][i]
            rows.append([measure_name, benchlib.fmt_ratio(g, r), f"{g:,}", f"{r:,}"])
            results.append({"measure": measure_name, "goblin": g, "redis": r,
                             "ratio": g / r if r else None})
        benchlib.print_table(["measure", "Goblin/Redis", "Goblin Core", "Redis"], rows)
        if args.json:
            benchlib.write_json(args.json, benchlib.json_results(
                "stream_memory", "bytes", f"Goblin Core: {versions['Goblin Core']}",
                f"Redis: {versions['Redis']}",
                entries=args.entries,
                command=f"XADD {KEY} * field value",
                rows=results,
            ))
        return 0

    return benchlib.run_guarded(group, run)


if __name__ == "__main__":
    sys.exit(main())
