#!/usr/bin/env python3
"""Persistence costs, Goblin Core against Redis in the same run.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/persistence_benchmark.py
    python3 benchmarks/persistence_benchmark.py --requests 200000 --keys 1000000 --rounds 3
    python3 benchmarks/persistence_benchmark.py --skip-bgsave

Two measurements, each on Goblin Core (``--goblin-bin``, default
``target/release/goblin-core``) and on Debian's ``redis-server``
(``--redis-bin``), started side by side by benchlib.py on free loopback ports
in a temporary directory:

* **SET with the AOF on** -- for each fsync policy of ``--policies`` (default
  ``everysec,always``), both servers are started with ``--appendonly yes
  --appendfsync <policy>``, and ``redis-benchmark -t set -n <requests> -c
  <clients> -P 1 -r 100000 --csv`` measures SET requests per second. With
  ``always`` a reply leaves only once its write is on disk (both servers make
  one fdatasync per event-loop turn for every write of the turn), so the
  number mostly measures the disk and how well writes are grouped; with
  ``everysec`` the fsync is in the background. The data written is checked
  afterwards: each server's ``aof_current_size`` must have grown.

* **BGSAVE of ``--keys`` keys** (default 1,000,000) -- both servers (AOF off)
  are filled with ``SET key:<i> value:<i>`` by pipelined MSET, then BGSAVE is
  sent while another connection PINGs continuously from a thread: the time
  until ``rdb_bgsave_in_progress`` returns to 0 is the BGSAVE time, and the
  longest PING round trip while it ran is the longest event-loop stall (the
  fork, for both servers). The snapshot is checked with DBSIZE and
  ``rdb_last_bgsave_status:ok``.

For every point the table shows, ratio first, the ratio Goblin/Redis, then
Goblin Core's figure and Redis's. With ``--rounds N`` every point is measured N
times on each server (alternating which goes first) and the median is
reported. The absolute numbers depend on the machine and its disk; the ratio,
measured on the same machine at the same time, is what to read. ``--json
FILE`` writes the figures in benchlib's shape ("benchmark", "unit", "time",
"server", "reference", "rows"); the rows' units differ (ops/s, seconds), so
each row has its own "unit" and the top-level one is null. Both servers are
stopped at the end, also on Ctrl-C or an error. Exit status: 0 measured, 1 a
check failed or a server misbehaved, 2 usage, 130 interrupted.
"""

import argparse
import csv
import io
import subprocess
import sys
import time

import benchlib
from benchlib import BenchmarkError

POLICIES = ("everysec", "always")


def info_field(conn, field):
    """A field of INFO persistence, as a string (None if absent)."""
    text = conn.call("INFO", "persistence").decode()
    for line in text.split("\r\n"):
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def set_throughput(args, server):
    """SET requests per second from redis-benchmark against server."""
    cmd = [
        args.benchmark_bin, "-h", "127.0.0.1", "-p", str(server.port),
        "-t", "set", "-n", str(args.requests), "-c", str(args.clients),
        "-P", "1", "-r", "100000", "--csv",
    ]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"redis-benchmark against {server.name} took over "
                             f"{args.timeout:g}s") from None
    server.check_running()
    for row in csv.reader(io.StringIO(out.stdout)):
        if row and row[0] == "SET":
            return float(row[1])
    raise BenchmarkError(f"redis-benchmark against {server.name} gave no SET row:\n"
                         f"{out.stdout}\n{out.stderr}")


def aof_point(args, group, binaries, policy):
    """{server name: [SET ops/s, one per round]} with appendfsync `policy`."""
    extra = ["--appendonly", "yes", "--appendfsync", policy]
    servers = [group.start(f"{name} {policy}", binary, extra) for name, binary in binaries]
    samples = {s.name: [] for s in servers}
    for rnd in range(args.rounds):
        order = servers if rnd % 2 == 0 else servers[::-1]
        for s in order:
            with benchlib.Connection.tcp("127.0.0.1", s.port) as conn:
                before = int(info_field(conn, "aof_current_size") or 0)
                samples[s.name].append(set_throughput(args, s))
                after = int(info_field(conn, "aof_current_size") or 0)
                if after <= before:
                    raise BenchmarkError(f"{s.name}: the AOF did not grow "
                                         f"({before} -> {after} bytes) with appendonly yes")
    for s in servers:
        s.stop()
    return {name: samples[s.name] for (name, _), s in zip(binaries, servers)}


def fill(conn, keys):
    batch = 1000
    cmds = []
    for start in range(0, keys, batch):
        flat = []
        for i in range(start, min(keys, start + batch)):
            flat += [f"key:{i}", f"value:{i}"]
        cmds.append(("MSET", *flat))
    for reply in conn.pipeline(cmds, batch=50):
        if reply != b"OK":
            raise BenchmarkError(f"{conn.label}: MSET replied {reply!r}")
    size = conn.call("DBSIZE")
    if size != keys:
        raise BenchmarkError(f"{conn.label}: DBSIZE {size} after filling {keys} keys")


def bgsave_point(args, server):
    """(seconds until the BGSAVE ended, longest PING round trip in seconds while it ran)."""
    with benchlib.Connection.tcp("127.0.0.1", server.port) as conn:
        pinger = benchlib.Pinger(server.port)
        pinger.start()
        time.sleep(0.2)  # the pinger's baseline
        start = time.perf_counter()
        reply = conn.call("BGSAVE")
        if reply != b"Background saving started":
            raise BenchmarkError(f"{server.name}: BGSAVE replied {reply!r}")
        while info_field(conn, "rdb_bgsave_in_progress") != "0":
            time.sleep(0.002)
        elapsed = time.perf_counter() - start
        pinger.stop.set()
        pinger.join(10)
        if info_field(conn, "rdb_last_bgsave_status") != "ok":
            raise BenchmarkError(f"{server.name}: BGSAVE failed")
        if pinger.count == 0:
            raise BenchmarkError(f"{server.name}: no PING answered during BGSAVE")
        return elapsed, pinger.worst


def bgsave_points(args, group, binaries):
    """({server name: [BGSAVE seconds]}, {server name: [longest stall, seconds]})."""
    servers = [group.start(f"{name} bgsave", binary) for name, binary in binaries]
    for s in servers:
        with benchlib.Connection.tcp("127.0.0.1", s.port) as conn:
            fill(conn, args.keys)
    times = {s.name: [] for s in servers}
    stalls = {s.name: [] for s in servers}
    for rnd in range(args.rounds):
        order = servers if rnd % 2 == 0 else servers[::-1]
        for s in order:
            elapsed, worst = bgsave_point(args, s)
            times[s.name].append(elapsed)
            stalls[s.name].append(worst)
            s.check_running()
    for s in servers:
        s.stop()
    names = [name for name, _ in binaries]
    return ({n: times[s.name] for n, s in zip(names, servers)},
            {n: stalls[s.name] for n, s in zip(names, servers)})


def main():
    parser = argparse.ArgumentParser(
        description="AOF SET throughput and BGSAVE stalls, Goblin Core against Redis",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for flag, default, what in (
        ("--goblin-bin", "target/release/goblin-core", "the Goblin Core binary"),
        ("--redis-bin", "redis-server", "the Redis server binary"),
        ("--benchmark-bin", "redis-benchmark", "the redis-benchmark binary"),
    ):
        parser.add_argument(flag, default=default, help=what)
    parser.add_argument("--requests", "-n", type=int, default=100000,
                        help="SET requests per redis-benchmark run")
    parser.add_argument("--clients", "-c", type=int, default=50,
                        help="redis-benchmark connections")
    parser.add_argument("--policies", default=",".join(POLICIES),
                        help="comma-separated appendfsync policies to measure")
    parser.add_argument("--keys", type=int, default=1_000_000, help="keys saved by BGSAVE")
    parser.add_argument("--skip-bgsave", action="store_true", help="only the AOF points")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measurements per point and server (median reported)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds one redis-benchmark run may take")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    for p in policies:
        if p not in ("always", "everysec", "no"):
            parser.error(f"unknown appendfsync policy {p!r}")
    goblin_bin = benchlib.find_binary(args.goblin_bin)
    redis_bin = benchlib.find_binary(args.redis_bin)
    bench_bin = benchlib.find_binary(args.benchmark_bin)
    for what, b in (("goblin", goblin_bin), ("redis", redis_bin), ("benchmark", bench_bin)):
        if b is None:
            parser.error(f"--{what}-bin: not found")
    args.benchmark_bin = bench_bin
    binaries = [("Goblin Core", goblin_bin), ("Redis", redis_bin)]
    benchlib.install_signal_handlers()
    group = benchlib.Servers(prefix="goblin-persist-bench-")
    rows, results = [], []

    def add(measure, key, unit, samples, show, scale=1):
        """A row of the table (ratio first) and of the JSON file, from both servers' samples."""
        g, r = (benchlib.median(samples[n]) for n in ("Goblin Core", "Redis"))
        rows.append([measure, benchlib.fmt_ratio(g, r), show(g * scale), show(r * scale)])
        results.append({
            "measure": key,
            "label": measure,  # the row's name in the table
            "unit": unit,
            "goblin": g,
            "redis": r,
            "ratio": g / r if r else None,
            "samples": {"goblin": samples["Goblin Core"], "redis": samples["Redis"]},
        })

    def run():
        versions = {name: benchlib.version(binary) for name, binary in binaries}
        print(f"Goblin Core: {versions['Goblin Core']}")
        print(f"Redis:       {versions['Redis']}")
        for policy in policies:
            add(f"SET ops/s, appendfsync {policy}", f"set_ops_{policy}", "ops/s",
                aof_point(args, group, binaries, policy), lambda v: f"{v:,.0f}")
        if not args.skip_bgsave:
            times, stalls = bgsave_points(args, group, binaries)
            add(f"BGSAVE {args.keys:,} keys, s", "bgsave_seconds", "s", times,
                lambda v: f"{v:.3f}")
            add("longest stall during BGSAVE, ms", "bgsave_max_stall_seconds", "s", stalls,
                lambda v: f"{v:.2f}", scale=1000)
        print()
        benchlib.print_table(["measure", "Goblin/Redis", "Goblin Core", "Redis"], rows)
        if args.json:
            benchlib.write_json(args.json, benchlib.json_results(
                "persistence", None, f"Goblin Core: {versions['Goblin Core']}",
                f"Redis: {versions['Redis']}",
                requests=args.requests,
                clients=args.clients,
                keys=None if args.skip_bgsave else args.keys,
                rounds=args.rounds,
                policies=policies,
                rows=results,
            ))
        return 0

    return benchlib.run_guarded(group, run)


if __name__ == "__main__":
    sys.exit(main())
