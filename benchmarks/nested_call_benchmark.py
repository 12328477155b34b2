#!/usr/bin/env python3
"""What one ``redis.call`` from a script costs, in every engine.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/nested_call_benchmark.py --goblin-bin target/release/goblin-core --calls 1000000 --rounds 5
    python3 benchmarks/nested_call_benchmark.py --redis-bin redis-server   # + Redis's Lua

Each engine runs ``benchmarks/scripts/nested_calls.<ext>`` by EVALSHA: a loop of
``--calls`` iterations of ``redis.call('GET', key)`` on a missing key, and the
same loop empty; the difference divided by ``--calls`` is the cost of one call
from inside a script -- the command found in the table, run under the script
rules and accounted, its reply turned into a value of the language -- with
nothing missing the cache. It is the floor under any script that calls
commands: the compare-and-delete script makes two such calls per op
(``cad_benchmark.py``). Median of ``--rounds`` rounds, µs per call, over the
Unix socket (one request at a time: the loop is the work, not the transport).

Progress goes to stderr, the table to stdout; ``--json FILE`` also writes every
sample, ``--chart FILE.png`` draws the medians (needs matplotlib). Exit status:
0 measured, 1 a check failed or a server misbehaved, 2 usage, 130 interrupted.
"""

import argparse
import sys
import time

import benchlib
from benchlib import BenchmarkError, note


def timed_eval(conn, engine, key, calls, mode):
    """Seconds one EVALSHA of the loop takes (its reply checked)."""
    start = time.perf_counter()
    got = conn.call(engine.evalsha, engine.sha, "1", key, str(calls), mode)
    seconds = time.perf_counter() - start
    if got != calls:
        raise BenchmarkError(f"{engine.name}: the {mode} loop replied {got!r}, not {calls}")
    return seconds


def main():
    parser = argparse.ArgumentParser(
        description="The cost of one redis.call from a script, in every engine.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    benchlib.add_target_arguments(parser)
    parser.add_argument("--calls", type=int, default=1000000, help="calls per timed run")
    parser.add_argument("--rounds", type=int, default=5,
                        help="timed runs per engine; the median is reported")
    args = parser.parse_args()
    if args.calls < 1 or args.rounds < 1:
        parser.error("--calls and --rounds must be positive")
    benchlib.check_target_arguments(parser, args)
    benchlib.install_signal_handlers()

    key = "goblin-bench:nested:missing"
    servers = benchlib.Servers()

    def run():
        main_target, reference = benchlib.open_targets(args, servers)
        forms = [(f"{e.name} {e.evalsha}", main_target, e) for e in benchlib.load_scripts(
            main_target.conn(), "nested_calls", args.scripts_dir, args.engines)]
        if reference is not None:
            forms += [(f"{e.name} {e.evalsha} (redis-server)", reference, e)
                      for e in benchlib.load_scripts(reference.conn(), "nested_calls",
                                                     args.scripts_dir, ["lua"],
                                                     " on redis-server")]
        if not forms:
            raise BenchmarkError("the server has no scripting engine")
        samples = {name: [] for name, _, _ in forms}
        for rnd in range(args.rounds):
            for name, target, engine in forms:
                conn = target.conn()
                conn.call("DEL", key)
                with benchlib.gc_paused():
                    loop = timed_eval(conn, engine, key, args.calls, "loop")
                    call = timed_eval(conn, engine, key, args.calls, "call")
                target.check_running()
                samples[name].append(max(call - loop, 0.0) * 1e6 / args.calls)
                note(f"round {rnd + 1}/{args.rounds}  {name}: {samples[name][-1]:.3f} µs/call")
        report(args, main_target, reference, forms, samples)
        return 0

    return benchlib.run_guarded(servers, run)


def report(args, main_target, reference, forms, samples):
    medians = {name: benchlib.median(samples[name]) for name, _, _ in forms}
    print(f"One redis.call('GET', missing key) from a script, µs/call (the empty loop "
          f"subtracted), median of {args.rounds} rounds of {args.calls} calls; lower is better")
    print(f"Server:    {main_target.description()}")
    if reference is not None:
        print(f"Reference: {reference.description()}")
    print()
    benchlib.print_table(["form", "µs/call"],
                         [[name, f"{medians[name]:.3f}"] for name, _, _ in forms])
    if args.json:
        benchlib.write_json(args.json, benchlib.json_results(
            "nested_call", "us/call", main_target.description(),
            reference and reference.description(),
            calls=args.calls,
            rounds=args.rounds,
            rows=[{"form": name, "median": medians[name], "samples": samples[name]}
                  for name, _, _ in forms],
        ))
    if args.chart:
        benchlib.write_chart(args.chart, f"One redis.call, µs (median of {args.rounds})",
                             ["redis.call"], [(name, [medians[name]]) for name, _, _ in forms],
                             "µs/call")


if __name__ == "__main__":
    sys.exit(main())
