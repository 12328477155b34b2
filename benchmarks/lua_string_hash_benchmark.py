#!/usr/bin/env python3
"""Lua strings that differ only in their middle bytes: how long a script takes to make them.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/lua_string_hash_benchmark.py --redis-bin redis-server
    python3 benchmarks/lua_string_hash_benchmark.py --values 40000 --rounds 3

Stock Lua 5.1 hashes only every ``(len >> 5) + 1``-th byte of a string when it
interns it, so long strings that differ only in the bytes it skips share one
chain of the string table, and making each costs a walk of that chain:
quadratic in their number. Redis's Lua hashes every byte; so does ours
(``vendor/lua51/goblin.patch``). Two workloads, each on ``--values`` strings of
``--size`` bytes, a counter in the middle and the same bytes around it:

* ``LRANGE``: ``EVAL "return #redis.call('LRANGE', KEYS[1], 0, -1)"`` over a
  list holding them (each element becomes a Lua string);
* ``build``: a script that makes them itself (``string.rep`` around
  ``string.format``) and keeps them in a table.

Each reply is checked (the number of strings). Median of ``--rounds`` rounds,
milliseconds per EVAL, with ``--redis-bin`` the same on redis-server and the
ratio. Progress goes to stderr, the table to stdout; ``--json FILE`` also
writes every sample, ``--chart FILE.png`` draws the medians (needs
matplotlib). Exit status: 0 measured, 1 a check failed or a server
misbehaved, 2 usage, 130 interrupted.
"""

import argparse
import sys
import time

import benchlib
from benchlib import BenchmarkError, note

KEY = "goblin-bench:lua-hash:list"

LRANGE = "return #redis.call('LRANGE', KEYS[1], 0, -1)"

BUILD = """
local n, half = tonumber(ARGV[1]), tonumber(ARGV[2])
local head, tail = string.rep('h', half), string.rep('t', half)
local t = {}
for i = 1, n do t[i] = head .. string.format('%08d', i) .. tail end
return #t
"""

WORKLOADS = ("LRANGE", "build")


def middle_values(count, size):
    """count values of size bytes, equal but for an 8-digit counter in the middle."""
    half = max(size - 8, 0) // 2
    head, tail = b"h" * half, b"t" * (max(size - 8, 0) - half)
    return [head + b"%08d" % i + tail for i in range(count)]


def fill_list(conn, values):
    conn.call("DEL", KEY)
    for start in range(0, len(values), 1000):
        conn.call("RPUSH", KEY, *values[start:start + 1000])
    if conn.call("LLEN", KEY) != len(values):
        raise BenchmarkError("the list was not filled")


def timed(conn, workload, args):
    """Milliseconds one EVAL of the workload takes (its reply checked)."""
    if workload == "LRANGE":
        command = ("EVAL", LRANGE, "1", KEY)
    else:
        command = ("EVAL", BUILD, "0", str(args.values), str(max(args.size - 8, 0) // 2))
    start = time.perf_counter()
    got = conn.call(*command)
    ms = (time.perf_counter() - start) * 1e3
    if got != args.values:
        raise BenchmarkError(f"{workload}: the script replied {got!r}, not {args.values}")
    return ms


def main():
    parser = argparse.ArgumentParser(
        description="Lua strings that differ only in their middle bytes, made by a script.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    benchlib.add_target_arguments(parser)
    parser.add_argument("--values", type=int, default=10000, help="strings per EVAL")
    parser.add_argument("--size", type=int, default=1024, help="bytes per string")
    parser.add_argument("--rounds", type=int, default=5,
                        help="timed EVALs per workload and server; the median is reported")
    args = parser.parse_args()
    if args.values < 1 or args.size < 8 or args.rounds < 1:
        parser.error("--values and --rounds must be positive, --size at least 8")
    benchlib.check_target_arguments(parser, args)
    benchlib.install_signal_handlers()

    servers = benchlib.Servers()

    def run():
        main_target, reference = benchlib.open_targets(args, servers)
        targets = [main_target] + ([reference] if reference is not None else [])
        values = middle_values(args.values, args.size)
        samples = {}
        for target in targets:
            fill_list(target.conn(), values)
            for workload in WORKLOADS:
                name = (target.label, workload)
                samples[name] = []
                for rnd in range(args.rounds):
                    with benchlib.gc_paused():
                        samples[name].append(timed(target.conn(), workload, args))
                    target.check_running()
                    note(f"round {rnd + 1}/{args.rounds}  {target.label} {workload}: "
                         f"{samples[name][-1]:.1f} ms")
            target.conn().call("DEL", KEY)
        report(args, main_target, reference, samples)
        return 0

    return benchlib.run_guarded(servers, run)


def report(args, main_target, reference, samples):
    medians = {name: benchlib.median(s) for name, s in samples.items()}
    print(f"{args.values} Lua strings of {args.size} bytes differing only in their middle bytes, "
          f"ms per EVAL, median of {args.rounds}; lower is better")
    print(f"Server:    {main_target.description()}")
    if reference is not None:
        print(f"Reference: {reference.description()}")
    print()
    rows = []
    for workload in WORKLOADS:
        mine = medians[(main_target.label, workload)]
        if reference is None:
            rows.append([workload, f"{mine:.1f}"])
        else:
            theirs = medians[(reference.label, workload)]
            rows.append([workload, benchlib.ratio_cell(mine, theirs, lambda v: f"{v:.1f}"),
                         f"{theirs:.1f}"])
    headers = (["workload", "ms"] if reference is None
               else ["workload", benchlib.ratio_header("vs redis-server", "ms"),
                     "redis-server ms"])
    benchlib.print_table(headers, rows)
    if args.json:
        benchlib.write_json(args.json, benchlib.json_results(
            "lua_string_hash", "ms/eval", main_target.description(),
            reference and reference.description(),
            values=args.values,
            size=args.size,
            rounds=args.rounds,
            rows=[{"server": label, "workload": workload, "median": medians[(label, workload)],
                   "samples": samples[(label, workload)]}
                  for (label, workload) in samples],
        ))
    if args.chart:
        targets = [main_target] + ([reference] if reference is not None else [])
        benchlib.write_chart(args.chart, f"Lua strings differing in their middle, ms "
                             f"(median of {args.rounds})", list(WORKLOADS),
                             [(t.label, [medians[(t.label, w)] for w in WORKLOADS])
                              for t in targets], "ms/EVAL")


if __name__ == "__main__":
    sys.exit(main())
