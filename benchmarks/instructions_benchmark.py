#!/usr/bin/env python3
"""The compare-and-delete ops of ``cad_benchmark.py``, counted in the server's instructions.

Usage (from the repository root, after ``cargo build --release``; needs valgrind)::

    python3 benchmarks/instructions_benchmark.py --goblin-bin target/release/goblin-core --ops 5000
    python3 benchmarks/instructions_benchmark.py --redis-bin redis-server   # + Redis's Lua

Why: time on a shared virtual machine moves by tens of per cent from one run to
the next, so a change of a few per cent in the server's path cannot be seen in
µs. The number of instructions the server executes per op does not move: each
server runs under ``valgrind --tool=callgrind``, and for each form the driver
preloads ``--ops`` fresh keys, zeroes the counters (``callgrind_control -z``),
runs the ops pipelined (``--pipeline`` in flight, Unix socket), dumps the
counters (``callgrind_control -d``) and divides their total by ``--ops``. That
covers everything the server does for the ops -- reading the socket, parsing,
the command or the script, the reply, writing it back -- and the little its
periodic timer does meanwhile.
The forms are the same as ``cad_benchmark.py``'s (each engine's
``benchmarks/scripts/cad.<ext>`` by EVALSHA, native GOBLIN.CAD, the naive GET+DEL,
and Redis's Lua with ``--redis-bin``), verified the same way before counting, and
each op deletes a preloaded key (the hit path). Instructions are not time: cache
misses, branch mispredictions and the system calls' own cost are not in them, so
this complements the timed drivers rather than replacing them. A first round
warms the server up (caches, allocator) and is not counted.

A second table is each engine's floor: EVALSHA of ``benchmarks/scripts/noop.<ext>``
(``return 1``; in Tcl ``return [redis int 1]``, its integer reply) with the
same key and token, which it does not touch -- what entering the VM and leaving
it costs, with no command called. It is counted the
same way (no key is preloaded: the op reads none) and set against the native
command's whole op: a compare-and-delete script can cost no less than its
engine's floor plus its two commands.

Each cell is ratio first, as in ``cad_benchmark.py``: the ratio to the native
command's count (to Goblin Core's Lua row if the server has no GOBLIN.CAD),
then the instructions per op in parentheses, e.g. ``4.72× (10898)``.
``--json FILE`` writes the counts.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

import benchlib
from benchlib import BenchmarkError, note
from cad_benchmark import Form, Keys, verify

START_TIMEOUT = 120.0  # seconds: six engines start slowly under valgrind


class Counted:
    """A server under callgrind: zero and dump its counters, read a dump's total."""

    def __init__(self, server):
        self.server = server
        self.pattern = os.path.join(server.dir, "callgrind.out")

    def control(self, flag):
        pid = str(self.server.proc.pid)
        done = subprocess.run(["callgrind_control", flag, pid], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            raise BenchmarkError(f"callgrind_control {flag} {pid} failed: {done.stderr.strip()}")

    def zero(self):
        for path in glob.glob(self.pattern + "*"):
            os.remove(path)
        self.control("-z")

    def dump_total(self, keep_as=None):
        """Instructions since the last zero (the total of the one dump written now).

        keep_as: a path to move the dump to, for ``callgrind_annotate`` (per-function counts).
        """
        self.control("-d")
        dumps = [p for p in glob.glob(self.pattern + "*") if p != self.pattern]
        if len(dumps) != 1:
            raise BenchmarkError(f"expected one callgrind dump, found {dumps}")
        with open(dumps[0]) as f:
            total = next((int(m.group(1)) for m in
                          (re.match(r"(?:summary|totals): (\d+)", line) for line in f) if m), None)
        if total is None:
            raise BenchmarkError(f"no total in {dumps[0]}")
        if keep_as is None:
            os.remove(dumps[0])
        else:
            shutil.move(dumps[0], keep_as)
        return total


def start(servers, name, binary):
    note(f"starting {name} ({binary}) under callgrind")
    server = servers.add(name, binary, wrapper=[
        "valgrind", "--tool=callgrind", "--callgrind-out-file=callgrind.out",
    ], start_timeout=START_TIMEOUT).start()
    target = benchlib.Target(name if name != "Redis" else "redis-server", server.host,
                             server.port, server.socket, server=server)
    target.counted = Counted(server)
    return target


def counted_run(form, keys, pipeline, deletes=True, keep_as=None):
    """Instructions per op of one run of --ops fresh keys, pipelined over the Unix socket.

    deletes: the form deletes each key (compare-and-delete), so the keys are preloaded and
    must all be gone after the run; a noop form gets keys it never reads, and none exist.
    keep_as: where to keep the run's callgrind dump.
    """
    target = form.target
    conn = target.conn()
    if deletes:
        keys.load(conn)
    reqs, exps = form.plan("pipe", keys.keys, keys.tokens, pipeline)
    target.counted.zero()
    conn.batches(reqs, exps)
    total = target.counted.dump_total(keep_as)
    left = keys.left(conn)
    if left:
        raise BenchmarkError(f"{form.name}: {left} keys left after the run")
    target.check_running()
    return total / len(keys.keys)


def main():
    parser = argparse.ArgumentParser(
        description="Server instructions per compare-and-delete op, by form (callgrind).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--goblin-bin", default="target/release/goblin-core",
                        help="the Goblin Core binary the driver starts")
    parser.add_argument("--redis-bin", help="also start this redis-server and add a reference "
                        "row: the same Lua script on real Redis")
    parser.add_argument("--engines", default=",".join(benchlib.ENGINE_NAMES),
                        help="comma-separated engines to try")
    parser.add_argument("--scripts-dir", default=benchlib.SCRIPTS_DIR,
                        help="where the scripts are (cad.<ext> per engine)")
    parser.add_argument("--ops", type=int, default=5000, help="operations (fresh keys) per run")
    parser.add_argument("--pipeline", type=int, default=256, help="requests in flight")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--keep-dumps", metavar="DIR",
                        help="keep each form's counted callgrind dump in DIR (for "
                             "callgrind_annotate --inclusive=yes)")
    args = parser.parse_args()
    if args.ops < 1 or args.pipeline < 1:
        parser.error("--ops and --pipeline must be positive")
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            parser.exit(2, f"{tool} not found (Debian: apt-get install valgrind)\n")
    args.external = False
    args.host = args.port = args.unix_socket = None
    args.chart = None
    benchlib.check_target_arguments(parser, args)
    benchlib.install_signal_handlers()

    servers = benchlib.Servers()

    def run():
        main_target = start(servers, "Goblin Core", args.goblin_path)
        main_target.version = benchlib.version(args.goblin_path)
        keys = Keys(args.ops)
        conn = main_target.conn()
        forms = [Form(f"{e.name} {e.evalsha}", "script", main_target, e)
                 for e in benchlib.load_scripts(conn, "cad", args.scripts_dir, args.engines)]
        if benchlib.has_command(conn, "GOBLIN.CAD", keys.prefix + "probe", "x"):
            forms.append(Form("native GOBLIN.CAD", "native", main_target))
        forms.append(Form("naive GET+DEL", "naive", main_target))
        reference = None
        if args.redis_bin is not None:
            reference = start(servers, "Redis", args.redis_path)
            reference.version = benchlib.version(args.redis_path)
            ref = benchlib.load_scripts(reference.conn(), "cad", args.scripts_dir, ["lua"],
                                        " on redis-server")
            if not ref:
                raise BenchmarkError("redis-server did not load the Lua script")
            forms.append(Form("lua EVALSHA (redis-server)", "script", reference, ref[0]))
        verify(forms, keys.prefix)
        # The noop scripts reply 1 whatever they are given, as the op's right reply is.
        floors = [Form(f"{e.name} {e.evalsha} noop", "script", main_target, e)
                  for e in benchlib.load_scripts(conn, "noop", args.scripts_dir, args.engines)]
        if reference is not None:
            floors += [Form("lua EVALSHA noop (redis-server)", "script", reference, e)
                       for e in benchlib.load_scripts(reference.conn(), "noop", args.scripts_dir,
                                                      ["lua"], " on redis-server")]
        counts = {}
        for form in forms + floors:
            deletes = form not in floors
            counted_run(form, keys, args.pipeline, deletes)  # warm-up, not counted
            keep_as = None
            if args.keep_dumps:
                os.makedirs(args.keep_dumps, exist_ok=True)
                keep_as = os.path.join(args.keep_dumps,
                                       re.sub(r"[^A-Za-z0-9.]+", "-", form.name) + ".callgrind")
            counts[form.name] = counted_run(form, keys, args.pipeline, deletes, keep_as)
            note(f"{form.name}: {counts[form.name]:.0f} instructions/op")
        report(args, main_target, reference, forms, floors, counts)
        return 0

    return benchlib.run_guarded(servers, run)


def report(args, main_target, reference, forms, floors, counts):
    base = next((f for f in forms if f.kind == "native"), None) or next(
        (f for f in forms if f.engine is not None and f.engine.name == "lua"
         and f.target is main_target), forms[0])
    print(f"Compare-and-delete (GET key == token ? DEL key), server instructions per op "
          f"(callgrind), {args.ops} ops pipelined {args.pipeline} over the Unix socket after "
          f"a warm-up run; lower is better")
    print(f"Server:    {main_target.description()}")
    if reference is not None:
        print(f"Reference: {reference.description()}")
    print(f"Cells:     ratio to {base.name}, then instructions/op in parentheses")
    print()
    headers = ["form", benchlib.ratio_header("", "instructions/op")]

    def rows(of):
        return [[f.name, benchlib.ratio_cell(counts[f.name], counts[base.name],
                                             lambda v: f"{v:.0f}")] for f in of]

    benchlib.print_table(headers, rows(forms))
    if floors:
        print()
        print("Floor: EVALSHA of each engine's noop script (return 1; the key and token are "
              f"passed, not read), ratio to {base.name}'s whole op")
        print()
        benchlib.print_table(headers, rows(floors))
    if args.json:
        benchlib.write_json(args.json, benchlib.json_results(
            "cad_instructions", "instructions/op", main_target.description(),
            reference and reference.description(),
            ops=args.ops,
            pipeline=args.pipeline,
            rows=[{"form": f.name, "instructions_per_op": counts[f.name]} for f in forms],
            floor_rows=[{"form": f.name, "instructions_per_op": counts[f.name]}
                        for f in floors],
        ))


if __name__ == "__main__":
    sys.exit(main())
