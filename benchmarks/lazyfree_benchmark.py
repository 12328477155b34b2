#!/usr/bin/env python3
"""How long deleting one large value stops the event loop, Goblin Core against Redis.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/lazyfree_benchmark.py
    python3 benchmarks/lazyfree_benchmark.py --elements 1000000 --rounds 3 --types hash,set,zset,list

For each type of ``--types`` (default hash, set, zset and list) and each
deleting command of ``--commands`` (default UNLINK and DEL), both servers --
Goblin Core (``--goblin-bin``) and Debian's ``redis-server`` (``--redis-bin``),
started by benchlib.py with their default lazy-freeing settings -- are given
one key holding ``--elements`` elements (default 1,000,000: HSET, SADD, ZADD or
RPUSH of 1,000 elements at a time, pipelined; the size is checked), then the
command deletes it while another connection PINGs continuously from a thread
(benchlib's ``Pinger``). Two figures per point: the deleting command's own
round trip, and the longest PING round trip while it ran -- how long the loop
stopped for every other client. Redis's UNLINK hands a value of more than 64
elements to its background thread; its DEL frees in place (``lazyfree-lazy-
user-del no``). With ``--rounds N`` every point is measured N times (the
servers alternating which goes first) and the median is reported. The table
shows, ratio first, Goblin/Redis, then Goblin Core's figure and Redis's, in
milliseconds. ``--json FILE`` writes the figures in benchlib's shape. Exit
status: 0 measured, 1 a check failed or a server misbehaved, 2 usage, 130
interrupted.
"""

import argparse
import sys
import time

import benchlib
from benchlib import BenchmarkError

TYPES = {
    # type: (filling command, elements of one batch as arguments, size command)
    "hash": ("HSET", lambda i: (f"field:{i}", f"value:{i}"), "HLEN"),
    "set": ("SADD", lambda i: (f"member:{i}",), "SCARD"),
    "zset": ("ZADD", lambda i: (str(i), f"member:{i}"), "ZCARD"),
    "list": ("RPUSH", lambda i: (f"element:{i}",), "LLEN"),
}
BATCH = 1000


def fill(conn, kind, key, elements):
    command, element, size = TYPES[kind]
    cmds = []
    for start in range(0, elements, BATCH):
        flat = []
        for i in range(start, min(elements, start + BATCH)):
            flat += element(i)
        cmds.append((command, key, *flat))
    for reply in conn.pipeline(cmds, batch=100):
        if not isinstance(reply, int):
            raise BenchmarkError(f"{conn.label}: {command} replied {reply!r}")
    got = conn.call(size, key)
    if got != elements:
        raise BenchmarkError(f"{conn.label}: {size} {got} after filling {elements}")


def delete_point(args, server, kind, command):
    """(the deleting command's round trip, the longest PING round trip while it ran), seconds."""
    with benchlib.Connection.tcp("127.0.0.1", server.port) as conn:
        fill(conn, kind, "big", args.elements)
        pinger = benchlib.Pinger(server.port)
        pinger.start()
        time.sleep(0.2)  # the pinger's baseline
        start = time.perf_counter()
        reply = conn.call(command, "big")
        elapsed = time.perf_counter() - start
        time.sleep(0.05)  # a PING that waited behind the delete is counted
        pinger.stop.set()
        pinger.join(10)
        if reply != 1:
            raise BenchmarkError(f"{server.name}: {command} replied {reply!r}")
        if pinger.count == 0:
            raise BenchmarkError(f"{server.name}: no PING answered")
        return elapsed, pinger.worst


OPTIONS = (
    # (flag, type, default, help)
    ("--goblin-bin", str, "target/release/goblin-core", "the Goblin Core binary"),
    ("--redis-bin", str, "redis-server", "the Redis server binary"),
    ("--elements", int, 1_000_000, "elements of the value deleted"),
    ("--types", str, ",".join(TYPES), "comma-separated value types"),
    ("--commands", str, "UNLINK,DEL", "comma-separated delete commands"),
    ("--rounds", int, 1, "measurements per point and server (median reported)"),
    ("--json", str, None, "also write the figures as JSON to this file"),
)


def main():
    parser = argparse.ArgumentParser(
        description="Event-loop stall while deleting a large value, Goblin Core against Redis",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for flag, kind, default, what in OPTIONS:
        parser.add_argument(flag, type=kind, default=default, help=what)
    args = parser.parse_args()
    kinds = [t for t in args.types.split(",") if t]
    unknown = sorted(set(kinds) - set(TYPES))
    if unknown:
        parser.error(f"unknown types {unknown}")
    commands = [c.upper() for c in args.commands.split(",") if c]
    goblin_bin = benchlib.find_binary(args.goblin_bin)
    redis_bin = benchlib.find_binary(args.redis_bin)
    for what, b in (("goblin", goblin_bin), ("redis", redis_bin)):
        if b is None:
            parser.error(f"--{what}-bin: not found")
    binaries = [("Goblin Core", goblin_bin), ("Redis", redis_bin)]
    benchlib.install_signal_handlers()
    group = benchlib.Servers(prefix="goblin-lazyfree-bench-")
    rows, results = [], []

    def run():
        versions = {name: benchlib.version(binary) for name, binary in binaries}
        print(f"Goblin Core: {versions['Goblin Core']}")
        print(f"Redis:       {versions['Redis']}")
        servers = [group.start(name, binary) for name, binary in binaries]
        for kind in kinds:
            for command in commands:
                took = {s.name: [] for s in servers}
                stall = {s.name: [] for s in servers}
                for rnd in range(args.rounds):
                    for s in (servers if rnd % 2 == 0 else servers[::-1]):
                        t, w = delete_point(args, s, kind, command)
                        took[s.name].append(t)
                        stall[s.name].append(w)
                        s.check_running()
                        print(f"{s.name}: {command} {kind}: {t * 1000:.1f} ms, "
                              f"longest PING {w * 1000:.1f} ms", file=sys.stderr)
                for label, key, samples in (
                    (f"{command} {kind}: command, ms", f"{command.lower()}_{kind}_seconds", took),
                    (f"{command} {kind}: longest PING, ms", f"{command.lower()}_{kind}_stall_seconds",
                     stall),
                ):
                    g, r = (benchlib.median(samples[s.name]) for s in servers)
                    rows.append([label, benchlib.fmt_ratio(g, r), f"{g * 1000:.1f}",
                                 f"{r * 1000:.1f}"])
                    results.append({
                        "measure": key, "label": label, "unit": "s", "goblin": g, "redis": r,
                        "ratio": g / r if r else None,
                        "samples": {"goblin": samples[servers[0].name],
                                    "redis": samples[servers[1].name]},
                    })
        print()
        benchlib.print_table(["measure", "Goblin/Redis", "Goblin Core", "Redis"], rows)
        if args.json:
            benchlib.write_json(args.json, benchlib.json_results(
                "lazyfree", "s", f"Goblin Core: {versions['Goblin Core']}",
                f"Redis: {versions['Redis']}",
                elements=args.elements, rounds=args.rounds, rows=results,
            ))
        return 0

    return benchlib.run_guarded(group, run)


if __name__ == "__main__":
    sys.exit(main())
