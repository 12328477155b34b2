#!/usr/bin/env python3
"""Compare-and-delete: every scripting engine, the native command and the naive client.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/cad_benchmark.py --goblin-bin target/release/goblin-core --keys 20000 --rounds 9
    python3 benchmarks/cad_benchmark.py --redis-bin redis-server        # + a Redis reference row
    python3 benchmarks/cad_benchmark.py --port 6379 --unix-socket /tmp/g.sock   # a running server

The workload is the Redlock unlock idiom: ``if GET key == token then DEL key``
-- reply 1 if the key held the token and is now gone, 0 otherwise (other token:
key kept; missing key). It is trivial, so what is measured is per-call
overhead, not script execution. The forms, one table row each:

* ``<engine> <P.>EVALSHA`` -- for every scripting engine the server has
  (lua, luau, quickjs, tcl, upython, wren: ``benchmarks/scripts/cad.<ext>``,
  loaded once with ``<P.>SCRIPT LOAD``, so no call pays for compilation). An
  engine whose SCRIPT LOAD is an unknown command is "not available" (stderr)
  and skipped.
* ``native GOBLIN.CAD`` -- ``GOBLIN.CAD key token``, when the server has it.
* ``naive GET+DEL`` -- what a client without scripts does: GET, compare the
  value with the token in the client, then DEL. It is *racy* (another client
  can change the key between the read and the delete) and costs two round
  trips. Sequentially: GET, wait for its reply, compare, DEL, wait. Pipelined,
  "naive" means the DEL still depends on the GET's reply, so it cannot travel
  in the same pipeline as its own GET: a batch of GETs (256 in flight), all
  replies read and compared, then a batch of the DELs whose token matched
  (here: all of them), all replies read -- two round trips per batch. (Sending
  GET and DEL together in one pipeline would delete the key whatever its
  value: a different, wrong operation.)
* ``lua EVALSHA (redis-server)`` -- with ``--redis-bin PATH``: the same Lua
  script on a real redis-server the driver starts, as a reference.

Before any timing the driver verifies that every form gives identical, right
replies on the same inputs (matching token: 1 and key gone; other token: 0 and
key kept; missing key: 0); if not, it says which form replied what and exits
with status 1.

Each timed run preloads ``--keys`` fresh keys with their tokens (pipelined, not
timed), then deletes every one of them with the form under test, each op with
its own key and the right token (so every reply is 1 -- checked), and asserts
afterwards that no key is left. Four numbers per row, in microseconds per
operation (lower is better), each the median over ``--rounds`` rounds:

* ``seq tcp`` / ``seq unix`` -- sequential: one request at a time, each reply
  awaited before the next request (a round trip per op; two for naive), over
  TCP loopback / over the Unix socket.
* ``pipe tcp`` / ``pipe unix`` -- pipelined: ``--pipeline`` (256) requests sent
  in one write, then their 256 replies read, and so on.

Each cell is ratio first: the ratio to the native command (``1.00×`` is as
fast as GOBLIN.CAD, ``2.00×`` twice as slow), or to Goblin Core's Lua row when
the server has no GOBLIN.CAD, then the µs/op in parentheses, e.g. ``3.02×
(2.45)``. **The ratios are what to read**: the absolute numbers are bound by
this single Python client and by the machine. The forms' order
rotates from one round to the next so none always gets the warmer caches.

The client is benchlib's raw RESP client over one TCP and one Unix-socket
connection, not redis-py: requests are encoded before the clock starts and
replies are checked as bytes, so the client costs about one write and one read
per round trip -- a general client's per-call overhead would be of the order
of what is measured, and would dominate it.

Progress goes to stderr, the table to stdout; ``--json FILE`` also writes every
sample, ``--chart FILE.png`` draws the medians (needs matplotlib). Traffic goes
only to 127.0.0.1 and Unix sockets (unless --host says otherwise); servers the
driver started are stopped at the end, also on Ctrl-C or an error; on a running
server the driver's keys (``bench:cad:<pid>:*``) are deleted at the end. Exit
status: 0 measured, 1 a check failed or a server misbehaved, 2 usage, 130
interrupted.
"""

import argparse
import os
import random
import sys

import benchlib
from benchlib import BenchmarkError, encode, note

COLUMNS = (("seq", "tcp"), ("seq", "unix"), ("pipe", "tcp"), ("pipe", "unix"))
SEED = 20240607
PRELOAD_BATCH = 1000


class Form:
    """One row: how an op is sent to which target."""

    def __init__(self, name, kind, target, engine=None):
        self.name = name
        self.kind = kind  # "script", "native" or "naive"
        self.target = target
        self.engine = engine
        self.samples = {c: [] for c in COLUMNS}
        self._plan = {}

    def op(self, key, token):
        """The atomic op's request bytes (script and native forms)."""
        if self.kind == "script":
            return encode(self.engine.evalsha, self.engine.sha, 1, key, token)
        return encode("GOBLIN.CAD", key, token)

    def call(self, conn, key, token):
        """One op, for the verification: (reply bytes, a description)."""
        if self.kind != "naive":
            conn.send(self.op(key, token))
            return conn.read_raw(1)[0]
        value = conn.call("GET", key)
        if value != token.encode():
            return b":0\r\n"
        return conn.call_raw("DEL", key)

    def plan(self, mode, keys, tokens, pipeline):
        """(requests, expected replies) for a timed run, encoded once and cached.

        seq: a list of requests, each sent alone, and the reply each must get.
        pipe: a list of batches (joined requests), and the replies of each.
        """
        if mode in self._plan:
            return self._plan[mode]
        one = b":1\r\n"
        if self.kind == "naive":
            gets = [encode("GET", k) for k in keys]
            dels = [encode("DEL", k) for k in keys]
            values = [benchlib.encode_reply(t) for t in tokens]
            if mode == "seq":
                reqs = [r for pair in zip(gets, dels) for r in pair]
                exps = [e for v in values for e in (v, one)]
            else:
                reqs, exps = [], []
                for i in range(0, len(keys), pipeline):
                    j = min(i + pipeline, len(keys))
                    reqs += [b"".join(gets[i:j]), b"".join(dels[i:j])]
                    exps += [b"".join(values[i:j]), one * (j - i)]
        else:
            ops = [self.op(k, t) for k, t in zip(keys, tokens)]
            if mode == "seq":
                reqs, exps = ops, one
            else:
                reqs = [b"".join(ops[i:i + pipeline]) for i in range(0, len(ops), pipeline)]
                exps = [one * (min(i + pipeline, len(ops)) - i)
                        for i in range(0, len(ops), pipeline)]
        self._plan[mode] = (reqs, exps)
        return reqs, exps


class Keys:
    """The keys and tokens of one timed run, and the bulk requests around it."""

    def __init__(self, count):
        rng = random.Random(SEED)
        self.prefix = f"bench:cad:{os.getpid()}:"
        self.keys = [f"{self.prefix}{i}" for i in range(count)]
        self.tokens = [f"{rng.getrandbits(64):016x}" for _ in range(count)]
        self.preload = []
        self.exists = []
        for i in range(0, count, PRELOAD_BATCH):
            chunk = range(i, min(i + PRELOAD_BATCH, count))
            self.preload.append((
                b"".join(encode("SET", self.keys[j], self.tokens[j]) for j in chunk),
                b"+OK\r\n" * len(chunk),
            ))
            self.exists.append(encode("EXISTS", *(self.keys[j] for j in chunk)))

    def load(self, conn):
        for req, exp in self.preload:
            conn.send(req)
            conn.expect(exp)

    def left(self, conn):
        """How many of the keys exist."""
        total = 0
        for req in self.exists:
            conn.send(req)
            total += conn.read(1)[0]
        return total

    def cleanup(self, conn):
        for i in range(0, len(self.keys), PRELOAD_BATCH):
            conn.call("DEL", *self.keys[i:i + PRELOAD_BATCH])


def verify(forms, prefix):
    """Every form: matching token -> 1 and key gone, other token -> 0 and key kept,
    missing key -> 0. Raises BenchmarkError naming each form's replies if any differs."""
    key = prefix + "verify"
    token, other = "tok-4f1c2e", "tok-other"
    want = (b":1\r\n", "gone", b":0\r\n", "kept", b":0\r\n")
    got = {}
    for form in forms:
        conn = form.target.conn()
        conn.call("SET", key, token)
        r1 = form.call(conn, key, token)
        gone = "gone" if conn.call("EXISTS", key) == 0 else "kept"
        conn.call("SET", key, token)
        r2 = form.call(conn, key, other)
        kept = "kept" if conn.call("GET", key) == token.encode() else "changed"
        conn.call("DEL", key)
        r3 = form.call(conn, key, token)
        if conn.call("EXISTS", key) != 0:
            r3 += b" (and the key exists)"
        got[form.name] = (r1, gone, r2, kept, r3)
    bad = [name for name, g in got.items() if g != want]
    if bad:
        lines = ["verification failed: the forms do not all give the right replies "
                 "(matching token -> 1, key gone | other token -> 0, key kept | "
                 "missing key -> 0):"]
        for name, g in got.items():
            mark = "WRONG" if name in bad else "ok   "
            shown = " | ".join(benchlib.show(x) if isinstance(x, bytes) else x for x in g)
            lines.append(f"  {mark} {name:<34} {shown}")
        raise BenchmarkError("\n".join(lines))
    note(f"verified: {len(forms)} forms agree (1/gone, 0/kept, 0 on a missing key)")


def timed_run(form, mode, transport, keys, pipeline):
    """µs/op of one run: preload, time the ops, assert no key left."""
    target = form.target
    setup = target.conn()
    conn = target.conns[transport]
    keys.load(setup)
    reqs, exps = form.plan(mode, keys.keys, keys.tokens, pipeline)
    with benchlib.gc_paused():
        if mode == "seq":
            seconds = conn.roundtrips(reqs, exps)
        else:
            seconds = conn.batches(reqs, exps)
    left = keys.left(setup)
    if left:
        raise BenchmarkError(f"{form.name} ({mode} {transport}): {left} keys left after the run")
    target.check_running()
    return seconds * 1e6 / len(keys.keys)


def main():
    parser = argparse.ArgumentParser(
        description="Compare-and-delete by every scripting engine (EVALSHA), the native "
        "GOBLIN.CAD and a naive GET+DEL; read the ratios.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    benchlib.add_target_arguments(parser)
    parser.add_argument("--keys", type=int, default=20000,
                        help="operations (fresh keys) per timed run")
    parser.add_argument("--rounds", type=int, default=9,
                        help="timed runs per number; the median is reported")
    parser.add_argument("--pipeline", type=int, default=256,
                        help="requests in flight in the pipelined columns")
    args = parser.parse_args()
    if args.keys < 1 or args.rounds < 1 or args.pipeline < 1:
        parser.error("--keys, --rounds and --pipeline must be positive")
    benchlib.check_target_arguments(parser, args)
    benchlib.install_signal_handlers()

    main_target = reference = None
    keys = None
    status = 0
    with benchlib.Servers() as servers:
        try:
            main_target, reference = benchlib.open_targets(args, servers)
            keys = Keys(args.keys)
            conn = main_target.conn()
            forms = [Form(f"{e.name} {e.evalsha}", "script", main_target, e)
                     for e in benchlib.load_scripts(conn, "cad", args.scripts_dir, args.engines)]
            probe = (keys.prefix + "probe", "x")
            if benchlib.has_command(conn, "GOBLIN.CAD", *probe):
                forms.append(Form("native GOBLIN.CAD", "native", main_target))
            else:
                note("native GOBLIN.CAD: not available (unknown command); skipped")
            forms.append(Form("naive GET+DEL", "naive", main_target))
            if reference is not None:
                ref = benchlib.load_scripts(reference.conn(), "cad", args.scripts_dir,
                                            ["lua"], " on redis-server")
                if not ref:
                    raise BenchmarkError("redis-server did not load the Lua script")
                forms.append(Form("lua EVALSHA (redis-server)", "script", reference, ref[0]))
            if not any(f.kind != "naive" for f in forms):
                raise BenchmarkError("the server has no scripting engine and no GOBLIN.CAD")
            verify(forms, keys.prefix)

            columns = [c for c in COLUMNS if all(c[1] in f.target.conns for f in forms)]
            for c in COLUMNS:
                if c not in columns:
                    note(f"{c[0]} {c[1]}: no {c[1]} connection to every server; not measured")
            for rnd in range(args.rounds):
                shift = rnd % len(forms)
                for form in forms[shift:] + forms[:shift]:
                    for col in columns:
                        form.samples[col].append(timed_run(form, *col, keys, args.pipeline))
                    shown = ", ".join(f"{m} {t} {form.samples[(m, t)][-1]:.2f}" for m, t in columns)
                    note(f"round {rnd + 1}/{args.rounds}  {form.name}: {shown} µs/op")

            report(args, main_target, reference, forms, columns)
        except BenchmarkError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
        except KeyboardInterrupt:
            print("\ninterrupted; stopping", file=sys.stderr)
            status = 130
        finally:
            for t in (main_target, reference):
                if t is None:
                    continue
                if keys is not None and t.server is None:  # a running server: leave it clean
                    try:
                        keys.cleanup(t.conn())
                        t.conn().call("DEL", keys.prefix + "verify", keys.prefix + "probe")
                    except Exception as e:  # noqa: BLE001 - best effort, report and go on
                        print(f"warning: could not delete the driver's keys: {e}",
                              file=sys.stderr)
                t.close()
    return status


def report(args, main_target, reference, forms, columns):
    medians = {f.name: {c: benchlib.median(f.samples[c]) for c in columns} for f in forms}
    base = next((f for f in forms if f.kind == "native"), None) or next(
        (f for f in forms if f.engine is not None and f.engine.name == "lua"
         and f.target is main_target), forms[0])
    print(f"Compare-and-delete (GET key == token ? DEL key), µs/op, median of {args.rounds} "
          f"rounds of {args.keys} ops; lower is better")
    print(f"Server:    {main_target.description()}")
    if reference is not None:
        print(f"Reference: {reference.description()}")
    print(f"Client:    benchlib raw RESP, one Python connection per transport; pipelined = "
          f"{args.pipeline} in flight")
    print(f"Cells:     ratio to {base.name} (1.00× = as fast, 2.00× = twice as slow), "
          "then µs/op in parentheses")
    print()
    headers = ["form"]
    for m, t in columns:
        label = f"{m}{args.pipeline}" if m == "pipe" else m
        headers.append(benchlib.ratio_header(f"{label} {t}", "µs/op"))
    rows = [[f.name] + [benchlib.ratio_cell(medians[f.name][c], medians[base.name][c])
                        for c in columns] for f in forms]
    benchlib.print_table(headers, rows)
    if args.json:
        benchlib.write_json(args.json, benchlib.json_results(
            "cad", "us/op", main_target.description(),
            reference and reference.description(),
            keys=args.keys,
            rounds=args.rounds,
            pipeline=args.pipeline,
            baseline=base.name,
            columns=[f"{m} {t}" for m, t in columns],
            rows=[{
                "form": f.name,
                "median": {f"{m} {t}": medians[f.name][(m, t)] for m, t in columns},
                "ratio": {f"{m} {t}": (medians[f.name][(m, t)] / medians[base.name][(m, t)])
                          for m, t in columns},
                "samples": {f"{m} {t}": f.samples[(m, t)] for m, t in columns},
            } for f in forms],
        ))
    if args.chart:
        benchlib.write_chart(
            args.chart, f"Compare-and-delete, µs/op (median of {args.rounds})",
            [f"{m} {t}" for m, t in columns],
            [(f.name, [medians[f.name][c] for c in columns]) for f in forms],
            "µs/op",
        )


if __name__ == "__main__":
    sys.exit(main())
