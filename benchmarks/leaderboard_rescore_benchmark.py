#!/usr/bin/env python3
"""Time-decay leaderboard rescore: every scripting engine against the native command.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/leaderboard_rescore_benchmark.py --goblin-bin target/release/goblin-core --members 1000 --k 10
    python3 benchmarks/leaderboard_rescore_benchmark.py --redis-bin redis-server   # + a Redis reference row
    python3 benchmarks/leaderboard_rescore_benchmark.py --redis-bin redis-server --orders desc  # one order
    python3 benchmarks/leaderboard_rescore_benchmark.py --port 6379                # a running server

The workload: a leaderboard is a sorted set of ``--members`` members whose
score is each member's last-activity unix timestamp. A read-only rescore reads
the whole board, computes every member's recency weight at a fixed ``now``,
and replies the top ``--k`` member names. ~1000 iterations of parse +
arithmetic + branch + list ops per call: this measures the interpreter's
execution speed, not per-call overhead. The exact semantics (which every form
must meet, verified before timing)::

    age = max(0, now - score)
    LINEAR: weight = 1 / (1 + age / param)
    EXP:    weight = 0.5 ^ (age / param)
    STEP:   weight = 1 if age <= param else 0
    top-k by weight descending, ties by member name ascending (byte order),
    zero weights left out; the reply is the member names.

The board (deterministic, seed below): ``now`` = 1700000000; 3 members a few
seconds *ahead* of now (clock skew: age clamps to 0, so they tie at weight 1
and their names decide), about 80 % active within the last 30 days (most
within hours: exponential ages, mean 6 h), about 20 % dormant for 1-3 years;
one member in ten shares its timestamp with another (batch updates), so ties
occur. The driver prints how many members have a weight > 0 in each mode. The
``param`` per mode, chosen so each top-k means something:

* LINEAR, param 3600 -- the weight halves at one hour of age; every member
  has a weight > 0, so the top-k is the k most recently active.
* EXP, param 3600 -- a one-hour half-life; a dormant member's weight
  underflows to exactly 0 (0.5^8760 and beyond) and is left out, while every
  active member's stays a normal double (>= 0.5^720), so no engine's pow
  rounding can reorder anything.
* STEP, param 14400 -- a four-hour window: about 40 % of the members are
  in (weight 1, ties broken by name), the rest left out -- the top-k is the k
  smallest names active in the last four hours.

(Any decay is monotone in age, so LINEAR and EXP rank alike; they differ in the
work per member -- a division against a pow -- and in what EXP leaves out.)

The forms, one table row each: ``<engine> <P.>EVALSHA`` for every scripting
engine the server has, and ``<engine> <P.>EVALSHA REV`` for its descending
variant (below); ``native
GOBLIN.TD_LEADERBOARD_RESCORE key now mode param k`` when the server has it
(one row: it walks the set in its own order); and with ``--redis-bin PATH``
the same Lua script(s) on a real redis-server the driver starts, as a
reference. An engine whose SCRIPT LOAD is an unknown command is "not
available" on stderr and skipped.

The reading orders (``--orders``, default both, ``asc,desc``). ``benchmarks/scripts/
rescore.<ext>`` reads the board with ``ZRANGE key 0 -1 WITHSCORES`` (asc):
oldest first, the worst order for a bounded insertion-sorted top-k, since
every member is more recent than all kept ones, enters the array and shifts
up to k entries. desc is the same script with ``ZRANGE key 0 -1 REV
WITHSCORES`` (the driver adds ``REV`` to the script's ZRANGE call and loads
that as a second script): most recent first, so after the first k members
almost none enters the array. The per-member work (read, re-weigh, compare)
is the same in both; what asc adds is the shifting. With desc, the driver
also prints, per mode, the fastest engine's desc time against Redis's Lua
desc and the slowest engine's against the fastest's.

Verification, before any timing: a pure-Python implementation of the
semantics above computes the expected reply for every mode, at ``--k`` and at
k = all members (which checks that zero weights are left out); every form's
reply must equal it -- so even a single engine is checked. A mismatch names
the form, the mode and the first differing position, and the driver exits
with status 1. An engine listed in MAY_NOT_SUPPORT for a mode may answer it
with an error: that cell is "n/a", any other error fails the verification.
(None is listed: our Jim Tcl build has pow/exp, so Tcl runs EXP too.)

Timing: per mode and form, ``--calls`` calls by EVALSHA (or the native
command), ``--pipeline`` in flight, over the Unix socket (over TCP only if the
target has no Unix socket), each reply checked against the expected bytes.
One number per mode: microseconds per call (lower is better), the median of
``--rounds`` (5) rounds; the forms' order rotates from round to round. Each
cell is ratio first: the ratio to the native command (``10.00×`` = ten times as
slow), or to Goblin Core's Lua row when the server has no native command, then
the µs/call in parentheses, e.g. ``91.00× (812.3)``. **The ratios are what to
read**; the absolute numbers depend on the machine. The header names the
transport used.

The client is benchlib's raw RESP client (one Python connection), not
redis-py: requests are encoded before the clock starts and replies compared as
bytes, so the client's own per-call cost stays small next to what is
measured. Progress goes to stderr, the table to stdout; ``--json FILE`` also
writes every sample, ``--chart FILE.png`` draws the medians (needs
matplotlib). Traffic goes only to 127.0.0.1 and Unix sockets (unless --host
says otherwise); servers the driver started are always stopped; on a running
server the board (``bench:rescore:<pid>:board``) is deleted at the end. Exit
status: 0 measured, 1 a check failed (including: the server has no sorted
sets) or a server misbehaved, 2 usage, 130 interrupted.
"""

import argparse
import os
import random
import re
import sys

import benchlib
from benchlib import BenchmarkError, ReplyError, encode, encode_reply, note

NOW = 1700000000
SEED = 20240607
MODES = (("LINEAR", 3600), ("EXP", 3600), ("STEP", 14400))
ORDERS = ("asc", "desc")
ORDER_SUFFIX = {"asc": "", "desc": " REV"}  # of a row's name
# The script's ZRANGE call's WITHSCORES, quoted or bare (Tcl): where desc adds REV.
WITHSCORES = re.compile(r"""(ZRANGE\b[^\n]*?)(['"]?)WITHSCORES\2""")
# (engine, mode) pairs an engine may not be able to express: an error reply there is "n/a".
MAY_NOT_SUPPORT = {}
NATIVE = "GOBLIN.TD_LEADERBOARD_RESCORE"
ZADD_BATCH = 200


def build_board(members, seed=SEED):
    """[(member name, score)], deterministic for (members, seed)."""
    rng = random.Random(seed)
    names = [f"player:{i:05d}" for i in range(members)]
    rng.shuffle(names)  # so that names and recency are unrelated
    scores = []
    for i in range(members):
        if i < min(3, members):
            score = NOW + rng.randint(1, 30)  # clock skew: ahead of now
        elif rng.random() < 0.2:
            score = NOW - rng.randint(365 * 86400, 3 * 365 * 86400)  # dormant
        else:
            score = NOW - min(int(rng.expovariate(1 / 21600)), 30 * 86400)  # active
        if scores and rng.random() < 0.1:
            score = rng.choice(scores)  # a batch update: the same timestamp as another
        scores.append(score)
    return list(zip(names, scores))


def reference(board, mode, param, k):
    """The exact semantics, in Python: the expected reply (member names, bytes)."""
    now = float(NOW)
    scored = []
    for name, score in board:
        age = now - float(score)
        if age < 0:
            age = 0.0
        if mode == "LINEAR":
            w = 1 / (1 + age / param)
        elif mode == "EXP":
            w = 0.5 ** (age / param)
        else:
            w = 1.0 if age <= param else 0.0
        if w > 0:
            scored.append((-w, name.encode()))
    scored.sort()
    return [name for _w, name in scored[:k]]


class Form:
    """One row: an engine's EVALSHA or the native command, on a target."""

    def __init__(self, name, target, engine=None, order=None):
        self.name = name
        self.target = target
        self.engine = engine
        self.order = order  # "asc" or "desc" for a script; None for the native command
        self.samples = {m: [] for m, _ in MODES}
        self.unsupported = {}  # mode -> reason

    def request(self, key, mode, param, k):
        if self.engine is None:
            return encode(NATIVE, key, NOW, mode, param, k)
        return encode(self.engine.evalsha, self.engine.sha, 1, key, NOW, mode, param, k)


def descending(body, path):
    """The script reading the board in descending score order: REV added to its ZRANGE."""
    text, found = WITHSCORES.subn(
        lambda m: m[1] + (f"{m[2]}REV{m[2]}, " if m[2] else "REV ") + f"{m[2]}WITHSCORES{m[2]}",
        body.decode())
    if found != 1:
        raise BenchmarkError(f"{path}: not one ZRANGE ... WITHSCORES call to add REV to")
    return text.encode()


def script_forms(conn, target, scripts_dir, orders, only=None, where="", suffix=""):
    """A form per engine and order: the rescore script as it is (asc), with REV (desc)."""
    forms = []
    for order in orders:
        rewrite = descending if order == "desc" else None
        engines = benchlib.load_scripts(conn, "rescore", scripts_dir, only, where, rewrite)
        forms += [Form(f"{e.name} {e.evalsha}{ORDER_SUFFIX[order]}{suffix}", target, e, order)
                  for e in engines]
        only = [e.name for e in engines]  # an engine not available is said once
    return sorted(forms, key=lambda f: (benchlib.ENGINE_NAMES.index(f.engine.name),
                                        ORDERS.index(f.order)))


def load_board(target, key, board):
    conn = target.conn()
    conn.call("DEL", key)
    commands = []
    for i in range(0, len(board), ZADD_BATCH):
        args = ["ZADD", key]
        for name, score in board[i:i + ZADD_BATCH]:
            args += [score, name]
        commands.append(tuple(args))
    for reply in conn.pipeline(commands):
        if isinstance(reply, ReplyError):
            if reply.is_unknown_command():
                raise BenchmarkError(f"{target.label} has no ZADD (no sorted sets yet); "
                                     "this benchmark needs them to build the board")
            raise BenchmarkError(f"ZADD on {target.label} failed: {reply.message}")
    size = conn.call("ZCARD", key)
    if size != len(board):
        raise BenchmarkError(f"the board on {target.label} has {size} members, "
                             f"not {len(board)}")


def verify(forms, key, board, k):
    """Every form, every mode, at k and at k = all: the Python reference's reply.

    Returns {mode: expected reply bytes at k}; raises BenchmarkError on any mismatch."""
    failures = []
    expected = {}
    for mode, param in MODES:
        for kk in sorted({k, len(board)}):
            want = reference(board, mode, param, kk)
            if kk == k:
                expected[mode] = encode_reply(want)
            for form in forms:
                conn = form.target.conn()
                conn.send(form.request(key, mode, param, kk))
                got = conn.read(1)[0]
                if got == want:
                    continue
                reason = form.engine and MAY_NOT_SUPPORT.get((form.engine.name, mode))
                if isinstance(got, ReplyError) and reason:
                    form.unsupported[mode] = reason
                    continue
                failures.append(describe(form.name, mode, param, kk, got, want))
    if failures:
        raise BenchmarkError(
            "verification failed: these replies differ from the reference semantics "
            "(age = max(0, now - score); top-k by weight desc, name asc; zero weights "
            "left out):\n" + "\n".join(failures))
    for form in forms:
        for mode, reason in form.unsupported.items():
            note(f"{form.name}: {mode} not supported ({reason}); n/a")
    note(f"verified: {len(forms)} forms x {len(MODES)} modes equal the Python reference "
         f"(k = {k} and k = all {len(board)})")
    return expected


def describe(name, mode, param, k, got, want):
    head = f"  {name}, {mode} param {param} k {k}: "
    if not isinstance(got, list):
        return head + f"got {benchlib.show(got)}, want {len(want)} names"
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return head + (f"position {i + 1}: got {benchlib.show(g)}, want "
                           f"{benchlib.show(w)} ({len(got)} names, want {len(want)})")
    return head + f"got {len(got)} names, want {len(want)} (equal up to the shorter)"


def describe_board(board, k):
    counts = {m: len(reference(board, m, p, len(board))) for m, p in MODES}
    note(f"board: {len(board)} members, now {NOW}; weight > 0 for "
         + ", ".join(f"{m} {c}" for m, c in counts.items()))
    for m, c in counts.items():
        if c <= k:
            note(f"note: {m} has only {c} members with weight > 0, not more than k = {k}; "
                 "a larger --members makes its top-k more telling")


def timed_run(form, key, mode, param, k, expected, calls, pipeline):
    """µs per call of one run, pipelined over the Unix socket (or TCP)."""
    target = form.target
    conn = target.conns.get("unix") or target.conns["tcp"]
    req = form.request(key, mode, param, k)
    batches, exps = [], []
    for i in range(0, calls, pipeline):
        n = min(pipeline, calls - i)
        batches.append(req * n)
        exps.append(expected * n)
    with benchlib.gc_paused():
        seconds = conn.batches(batches, exps)
    target.check_running()
    return seconds * 1e6 / calls


def main():
    parser = argparse.ArgumentParser(
        description="Time-decay leaderboard rescore by every scripting engine (EVALSHA) and "
        "the native GOBLIN.TD_LEADERBOARD_RESCORE; read the ratios.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    benchlib.add_target_arguments(parser)
    parser.add_argument("--members", type=int, default=1000, help="members on the board")
    parser.add_argument("--k", type=int, default=10, help="how many top members a call replies")
    parser.add_argument("--rounds", type=int, default=5,
                        help="timed runs per number; the median is reported")
    parser.add_argument("--calls", type=int, default=500, help="calls per timed run")
    parser.add_argument("--pipeline", type=int, default=50, help="calls in flight")
    parser.add_argument("--seed", type=int, default=SEED, help="the board's random seed")
    parser.add_argument("--orders", default="asc,desc",
                        help="the scripts' reading orders, comma-separated: asc (ZRANGE as "
                        "written), desc (ZRANGE ... REV)")
    args = parser.parse_args()
    orders = set(args.orders.split(","))
    if not orders or not orders <= set(ORDERS):
        parser.error(f"--orders: a comma-separated list of {', '.join(ORDERS)}")
    args.orders = [o for o in ORDERS if o in orders]
    if min(args.members, args.k, args.rounds, args.calls, args.pipeline) < 1:
        parser.error("--members, --k, --rounds, --calls and --pipeline must be positive")
    benchlib.check_target_arguments(parser, args)
    benchlib.install_signal_handlers()

    board = build_board(args.members, args.seed)
    key = f"bench:rescore:{os.getpid()}:board"
    main_target = reference_target = None
    status = 0
    with benchlib.Servers() as servers:
        try:
            main_target, reference_target = benchlib.open_targets(args, servers)
            describe_board(board, args.k)
            conn = main_target.conn()
            forms = script_forms(conn, main_target, args.scripts_dir, args.orders, args.engines)
            if benchlib.has_command(conn, NATIVE, key + ":probe", NOW, "LINEAR", 3600, 1):
                forms.append(Form(f"native {NATIVE}", main_target))
            else:
                note(f"native {NATIVE}: not available (unknown command); skipped")
            if reference_target is not None:
                ref = script_forms(reference_target.conn(), reference_target, args.scripts_dir,
                                   args.orders, ["lua"], " on redis-server", " (redis-server)")
                if not ref:
                    raise BenchmarkError("redis-server did not load the Lua script")
                forms += ref
            if not forms:
                raise BenchmarkError(f"the server has no scripting engine and no {NATIVE}")
            for t in {id(f.target): f.target for f in forms}.values():
                load_board(t, key, board)
            expected = verify(forms, key, board, args.k)
            transports = {("unix" if "unix" in f.target.conns else "tcp") for f in forms}
            if transports != {"unix"}:
                note("note: no Unix socket to some server; pipelined over TCP there")

            for rnd in range(args.rounds):
                shift = rnd % len(forms)
                for form in forms[shift:] + forms[:shift]:
                    for mode, param in MODES:
                        if mode in form.unsupported:
                            continue
                        form.samples[mode].append(timed_run(
                            form, key, mode, param, args.k, expected[mode],
                            args.calls, args.pipeline))
                    shown = ", ".join(f"{m} {form.samples[m][-1]:.1f}" for m, _ in MODES
                                      if form.samples[m])
                    note(f"round {rnd + 1}/{args.rounds}  {form.name}: {shown} µs/call")
            report(args, main_target, reference_target, forms, transports)
        except BenchmarkError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
        except KeyboardInterrupt:
            print("\ninterrupted; stopping", file=sys.stderr)
            status = 130
        finally:
            for t in (main_target, reference_target):
                if t is None:
                    continue
                if t.server is None:  # a running server: leave it clean
                    try:
                        t.conn().call("DEL", key)
                    except Exception as e:  # noqa: BLE001 - best effort, report and go on
                        print(f"warning: could not delete {key}: {e}", file=sys.stderr)
                t.close()
    return status


def report(args, main_target, reference_target, forms, transports):
    modes = [m for m, _ in MODES]
    medians = {f.name: {m: benchlib.median(f.samples[m]) for m in modes} for f in forms}
    base = next((f for f in forms if f.engine is None), None) or next(
        (f for f in forms if f.engine.name == "lua" and f.target is main_target), forms[0])
    # The transport actually used: a target started here has a Unix socket, a running server
    # given by --host/--port alone has TCP only.
    if transports == {"unix"}:
        over = "the Unix socket"
    elif transports == {"tcp"}:
        over = "TCP"
    else:
        over = "the Unix socket (TCP to a server without one)"
    print(f"Leaderboard rescore ({args.members} members, top {args.k}), µs/call, pipelined "
          f"({args.pipeline} in flight) over {over}, median of {args.rounds} rounds "
          f"of {args.calls} calls; lower is better")
    print(f"Server:    {main_target.description()}")
    if reference_target is not None:
        print(f"Reference: {reference_target.description()}")
    print("Client:    benchlib raw RESP, one Python connection")
    print("Params:    " + ", ".join(f"{m} {p}" for m, p in MODES) + f" (now {NOW})")
    print(f"Cells:     ratio to {base.name} (1.00× = as fast, 10.00× = ten times as slow), "
          "then µs/call in parentheses")
    print()
    headers = ["form"] + [benchlib.ratio_header(m, "µs/call") for m in modes]
    rows = []
    for f in forms:
        rows.append([f.name] + ["n/a" if m in f.unsupported else
                                benchlib.ratio_cell(medians[f.name][m], medians[base.name][m])
                                for m in modes])
    benchlib.print_table(headers, rows)
    summarize(main_target, forms, medians, modes)
    if args.json:
        benchlib.write_json(args.json, benchlib.json_results(
            "leaderboard_rescore", "us/call", main_target.description(),
            reference_target and reference_target.description(),
            members=args.members,
            k=args.k,
            rounds=args.rounds,
            calls=args.calls,
            pipeline=args.pipeline,
            orders=args.orders,
            transports=sorted(transports),
            now=NOW,
            params=dict(MODES),
            baseline=base.name,
            rows=[{
                "form": f.name,
                "order": f.order,
                "median": medians[f.name],
                "ratio": {m: (medians[f.name][m] / medians[base.name][m]
                              if medians[f.name][m] and medians[base.name][m] else None)
                          for m in modes},
                "unsupported": f.unsupported,
                "samples": f.samples,
            } for f in forms],
        ))
    if args.chart:
        benchlib.write_chart(
            args.chart,
            f"Leaderboard rescore, {args.members} members, top {args.k}: µs/call "
            f"(median of {args.rounds})",
            modes, [(f.name, [medians[f.name][m] for m in modes]) for f in forms], "µs/call")


def summarize(main_target, forms, medians, modes):
    """Per mode, in the descending idiom: the fastest engine against Redis's Lua, the spread."""
    engines = [f for f in forms if f.order == "desc" and f.target is main_target]
    redis_lua = next((f for f in forms if f.order == "desc" and f.target is not main_target), None)
    if not engines:
        return
    print()
    for m in modes:
        timed = sorted((medians[f.name][m], f.engine.name) for f in engines
                       if m not in f.unsupported and medians[f.name][m])
        if not timed:
            continue
        (fast, fast_name), (slow, slow_name) = timed[0], timed[-1]
        against = ""
        if redis_lua is not None and medians[redis_lua.name][m]:
            against = f"{fast / medians[redis_lua.name][m]:.2f}× Redis's Lua (desc), "
        print(f"desc {m}: fastest engine {fast_name} {against}slowest {slow_name} "
              f"{slow / fast:.2f}× the fastest")


if __name__ == "__main__":
    sys.exit(main())
