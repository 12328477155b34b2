#!/usr/bin/env python3
"""Memory per key and per member, Goblin Core against Redis in the same run.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/keyspace_memory_benchmark.py
    python3 benchmarks/keyspace_memory_benchmark.py --keys 10000000 --shapes strings
    python3 benchmarks/keyspace_memory_benchmark.py --json keyspace-memory.json

Goblin Core (``--goblin-bin``, default ``target/release/goblin-core``) and
Debian's ``redis-server`` (``--redis-bin``) are started fresh for each shape,
side by side, by benchlib.py (``--save '' --appendonly no``, every other
setting at its default on both). Each shape is loaded pipelined from one
connection, every reply checked, the result checked (DBSIZE or the
aggregate's length, and one value read back), then INFO memory read:

* ``strings``: ``--keys`` (default 1,000,000) keys, ``SET key:%08d val:%08d``;
* ``hash``, ``set``, ``zset``: one key of ``--members`` (default 1,000,000)
  members, ``HSET h field:%08d val:%08d``, ``SADD s member:%08d``,
  ``ZADD z <i> member:%08d`` (each the server's table encoding: past the
  listpack and intset limits);
* ``small-hashes``: ``--small-hashes`` (default 100,000) keys of 10 fields,
  ``HSET h:%08d f0 v0 ... f9 v9`` (each the listpack encoding).

For each, ratio first (Goblin/Redis, lower is better), then each server's
figure in bytes:

* ``net RSS``: the resident set after loading less the resident set of the
  fresh server: what the data costs in RAM, the allocator's overhead and
  fragmentation included -- the figure both servers count alike;
* ``net used_memory``: the same for INFO's ``used_memory``. Redis counts
  jemalloc's size class of each allocation, Goblin Core the size asked for,
  so this one flatters Goblin Core; ``net RSS`` is the one to judge by.

``--json FILE`` writes benchlib's shape ("benchmark", "unit", "time", "server",
"reference", then the options and one entry of "rows" per shape and measure).
Both servers are stopped at the end, also on Ctrl-C or an error. Exit status:
0 measured, 1 a check failed or a server misbehaved, 2 usage, 130 interrupted.
"""

import argparse
import sys

import benchlib
from benchlib import BenchmarkError, note

BATCH = 1000  # commands in flight


def send_all(conn, commands, expect):
    """Sends the encoded commands BATCH at a time; every reply must satisfy ``expect``."""
    batch = []
    for command in commands:
        batch.append(command)
        if len(batch) == BATCH:
            flush(conn, batch, expect)
            batch = []
    if batch:
        flush(conn, batch, expect)


def flush(conn, batch, expect):
    conn.send(b"".join(batch))
    for reply in conn.read(len(batch)):
        if not expect(reply):
            raise BenchmarkError(f"{conn.label}: unexpected reply {benchlib.show(reply)}")


def strings(conn, n):
    send_all(conn, (benchlib.encode("SET", f"key:{i:08d}", f"val:{i:08d}") for i in range(n)),
             lambda r: r == b"OK")
    check(conn, conn.call("DBSIZE"), n, conn.call("GET", f"key:{n - 1:08d}"),
          f"val:{n - 1:08d}".encode())


def hash_members(conn, n):
    send_all(conn, (benchlib.encode("HSET", "h", f"field:{i:08d}", f"val:{i:08d}")
                    for i in range(n)), lambda r: r == 1)
    check(conn, conn.call("HLEN", "h"), n, conn.call("HGET", "h", f"field:{n - 1:08d}"),
          f"val:{n - 1:08d}".encode())


def set_members(conn, n):
    send_all(conn, (benchlib.encode("SADD", "s", f"member:{i:08d}") for i in range(n)),
             lambda r: r == 1)
    check(conn, conn.call("SCARD", "s"), n, conn.call("SISMEMBER", "s", f"member:{n - 1:08d}"),
          1)


def zset_members(conn, n):
    send_all(conn, (benchlib.encode("ZADD", "z", str(i), f"member:{i:08d}") for i in range(n)),
             lambda r: r == 1)
    check(conn, conn.call("ZCARD", "z"), n, conn.call("ZSCORE", "z", f"member:{n - 1:08d}"),
          str(n - 1).encode())


def small_hashes(conn, n):
    fields = [x for f in range(10) for x in (f"f{f}", f"v{f}")]
    send_all(conn, (benchlib.encode("HSET", f"h:{i:08d}", *fields) for i in range(n)),
             lambda r: r == 10)
    check(conn, conn.call("DBSIZE"), n, conn.call("HGET", f"h:{n - 1:08d}", "f9"), b"v9")


def check(conn, length, n, sample, expected):
    if length != n or sample != expected:
        raise BenchmarkError(f"{conn.label}: not loaded as expected (length {length!r}, "
                             f"sample {sample!r})")


SHAPES = {
    "strings": ("{keys:,} keys: SET key:%08d val:%08d", strings, "keys"),
    "hash": ("1 hash of {members:,} fields: HSET h field:%08d val:%08d", hash_members, "members"),
    "set": ("1 set of {members:,} members: SADD s member:%08d", set_members, "members"),
    "zset": ("1 sorted set of {members:,} members: ZADD z i member:%08d", zset_members,
             "members"),
    "small-hashes": ("{small_hashes:,} hashes of 10 fields: HSET h:%08d f0 v0 ... f9 v9",
                     small_hashes, "small_hashes"),
}


def measure(server, load, n):
    """(net RSS, net used_memory) of loading the shape into a fresh server."""
    with benchlib.Connection.unix(server.socket) as conn:
        start = benchlib.info_memory(conn)
        load(conn, n)
        server.check_running()
        after = benchlib.info_memory(conn)
    return (after["used_memory_rss"] - start["used_memory_rss"],
            after["used_memory"] - start["used_memory"])


MEASURES = ("net RSS", "net used_memory")


def main():
    parser = argparse.ArgumentParser(
        description="memory per key and per member, Goblin Core against Redis",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    benchlib.add_binary_arguments(parser)
    parser.add_argument("--keys", type=int, default=1_000_000, help="keys of the strings shape")
    parser.add_argument("--members", type=int, default=1_000_000,
                        help="members of the hash, set and zset shapes")
    parser.add_argument("--small-hashes", type=int, default=100_000,
                        help="keys of the small-hashes shape")
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="which shapes, comma-separated, of: " + ", ".join(SHAPES))
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown or not shapes:
        parser.error(f"unknown shape(s): {', '.join(unknown) or '(none given)'}")
    if min(args.keys, args.members, args.small_hashes) < 1:
        parser.error("--keys, --members and --small-hashes must be positive")
    binaries = benchlib.found_binaries(parser, args)
    benchlib.install_signal_handlers()
    group = benchlib.Servers(prefix="goblin-keyspace-memory-")

    def run():
        versions = {name: benchlib.version(binary) for name, binary in binaries}
        rows, results = [], []
        for shape in shapes:
            title, load, count_arg = SHAPES[shape]
            n = getattr(args, count_arg)
            title = title.format(keys=args.keys, members=args.members,
                                 small_hashes=args.small_hashes)
            figures = {}
            for name, binary in binaries:
                note(f"{name}: {title}")
                server = group.start(f"{name} {shape}", binary)
                figures[name] = measure(server, load, n)
                server.stop()
            for i, measure_name in enumerate(MEASURES):
                g, r = figures["Goblin Core"][i], figures["Redis"][i]
                rows.append([title, measure_name, benchlib.fmt_ratio(g, r), f"{g:,}", f"{r:,}",
                             f"{g / n:.1f}", f"{r / n:.1f}"])
                results.append({"shape": shape, "count": n, "measure": measure_name,
                                "goblin": g, "redis": r, "ratio": g / r if r else None})
        print(f"Goblin Core: {versions['Goblin Core']}")
        print(f"Redis:       {versions['Redis']}")
        print("Memory of each shape loaded into a fresh server, bytes; lower is better")
        print()
        benchlib.print_table(["shape", "measure", "Goblin/Redis", "Goblin Core", "Redis",
                              "Goblin/item", "Redis/item"], rows)
        if args.json:
            benchlib.write_json(args.json, benchlib.json_results(
                "keyspace_memory", "bytes", f"Goblin Core: {versions['Goblin Core']}",
                f"Redis: {versions['Redis']}",
                keys=args.keys, members=args.members, small_hashes=args.small_hashes,
                rows=results,
            ))
        return 0

    return benchlib.run_guarded(group, run)


if __name__ == "__main__":
    sys.exit(main())
