#!/usr/bin/env python3
"""Replication, Goblin Core against Redis: writes with replicas attached, catch-up, full sync.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/replication_benchmark.py
    python3 benchmarks/replication_benchmark.py --requests 200000 --keys 1000000 --rounds 3

For each server (Goblin Core, then redis-server: ``--goblin-bin``, ``--redis-bin``) it starts a
primary and two replicas of the same binary, all on loopback ports with ``--save ''`` (full syncs
disk-based on both: Redis with ``--repl-diskless-sync no``, which is what Goblin Core does), and
measures, ``--rounds`` times each, the median kept:

* writes with 0, 1 and 2 replicas attached: ``redis-benchmark -t set -n <requests> -c 50 -P 16``
  against the primary, in requests per second (every SET fed to the replicas' streams);
* catch-up: once redis-benchmark returns, the milliseconds a ``WAIT <replicas> 0`` takes on a
  connection that just wrote: the primary asks its replicas for an ACK (``REPLCONF GETACK``) and
  answers once all of them applied the whole burst -- the replication lag it left;
* full sync: the primary holds ``--keys`` keys (``DEBUG POPULATE``), a fresh replica is attached
  and the seconds until it reports ``master_link_status:up`` at the primary's offset are timed
  (fork, snapshot, transfer, load).

Each cell is ratio first (Goblin Core ÷ Redis, so above 1 is better for throughput and below 1 for
times), then the value. Client and servers share the machine: read the ratios. ``--json FILE``
writes the figures.
"""

import argparse
import statistics
import subprocess
import sys
import time

import benchlib
from benchlib import BenchmarkError, note

CLIENTS = 50
PIPELINE = 16


def info(conn, section="replication"):
    fields = {}
    for line in conn.call("INFO", section).decode().split("\r\n"):
        name, _, value = line.partition(":")
        if value:
            fields[name] = value
    return fields


def wait_until(what, check, timeout=120.0):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise BenchmarkError(f"timed out waiting for {what}")
        time.sleep(0.005)


def synced(primary, replica):
    p = int(info(primary)["master_repl_offset"])
    r = info(replica)
    return r.get("master_link_status") == "up" and int(r.get("slave_repl_offset", -1)) >= p


def attach(replica, primary_server):
    reply = replica.call("REPLICAOF", "127.0.0.1", str(primary_server.port))
    if reply != b"OK":
        raise BenchmarkError(f"REPLICAOF answered {reply!r}")


def set_throughput(server, requests):
    out = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(server.port), "-t", "set",
         "-n", str(requests), "-c", str(CLIENTS), "-P", str(PIPELINE), "--csv"],
        capture_output=True, text=True, timeout=600,
    )
    if out.returncode != 0:
        raise BenchmarkError(f"redis-benchmark failed: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        cells = [c.strip('"') for c in line.split(",")]
        if cells and cells[0] == "SET":
            return float(cells[1])
    raise BenchmarkError(f"no SET row in redis-benchmark's output:\n{out.stdout}")


def measure(name, binary, args, servers):
    extra = ["--enable-debug-command", "yes"]
    if name == "Redis":
        extra += ["--repl-diskless-sync", "no"]
    primary = servers.start(f"{name} primary", binary, extra)
    replicas = [servers.start(f"{name} replica {i}", binary, extra) for i in (1, 2)]
    pc = benchlib.Connection.tcp("127.0.0.1", primary.port)
    rcs = [benchlib.Connection.tcp("127.0.0.1", r.port) for r in replicas]
    results = {}
    for attached in (0, 1, 2):
        if attached:
            attach(rcs[attached - 1], primary)
            wait_until("a replica's sync", lambda: synced(pc, rcs[attached - 1]))
        rates, catchups = [], []
        for _ in range(args.rounds):
            rates.append(set_throughput(primary, args.requests))
            if attached:
                # WAIT counts the replicas that took this connection's last write: the burst's end.
                pc.call("SET", "bench:last", "1")
                start = time.monotonic()
                got = pc.call("WAIT", str(attached), "60000")
                catchups.append((time.monotonic() - start) * 1000)
                if got != attached:
                    raise BenchmarkError(f"{name}: WAIT answered {got}, not {attached}")
        results[f"set_{attached}"] = statistics.median(rates)
        if attached:
            results[f"catchup_{attached}"] = statistics.median(catchups)
        note(f"{name}: SET with {attached} replica(s): {results[f'set_{attached}']:.0f} req/s")
    for rc in rcs:
        rc.call("REPLICAOF", "NO", "ONE")
    pc.call("FLUSHALL")
    pc.call("DEBUG", "POPULATE", str(args.keys))
    times = []
    for _ in range(args.rounds):
        fresh = servers.start(f"{name} fresh replica {len(times)}", binary, extra)
        fc = benchlib.Connection.tcp("127.0.0.1", fresh.port)
        start = time.monotonic()
        attach(fc, primary)
        wait_until("the full sync", lambda: synced(pc, fc), timeout=600)
        times.append(time.monotonic() - start)
        if int(fc.call("DBSIZE")) != args.keys:
            raise BenchmarkError(f"{name}: the replica holds {fc.call('DBSIZE')} keys")
        fc.close()
        fresh.stop()
    results["full_sync"] = statistics.median(times)
    note(f"{name}: full sync of {args.keys} keys: {results['full_sync']:.2f} s")
    for c in [pc] + rcs:
        c.close()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    benchlib.add_binary_arguments(parser)
    parser.add_argument("--requests", type=int, default=200000, help="SETs per run")
    parser.add_argument("--keys", type=int, default=1000000, help="keys of the full sync")
    parser.add_argument("--rounds", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args()
    if args.requests < 1 or args.keys < 1 or args.rounds < 1:
        parser.error("--requests, --keys and --rounds must be positive")
    binaries = benchlib.found_binaries(parser, args)
    benchlib.install_signal_handlers()
    servers = benchlib.Servers()

    def run():
        found = {name: measure(name, binary, args, servers) for name, binary in binaries}
        g, r = found["Goblin Core"], found["Redis"]
        print(f"Replication: a primary and its replicas of the same server, SET -c {CLIENTS} "
              f"-P {PIPELINE} x {args.requests}, full sync of {args.keys} keys (disk-based), "
              f"median of {args.rounds}")
        print("Cells: Goblin Core ÷ Redis, then Goblin Core's and Redis's values")
        print()
        rows = []
        for n in (0, 1, 2):
            rows.append([f"SET req/s, {n} replica(s)", f"{g[f'set_{n}'] / r[f'set_{n}']:.2f}×",
                         f"{g[f'set_{n}']:.0f}", f"{r[f'set_{n}']:.0f}"])
        for n in (1, 2):
            rows.append([f"catch-up ms after the run, {n} replica(s)",
                         f"{g[f'catchup_{n}'] / max(r[f'catchup_{n}'], 0.001):.2f}×",
                         f"{g[f'catchup_{n}']:.1f}", f"{r[f'catchup_{n}']:.1f}"])
        rows.append([f"full sync s, {args.keys} keys", f"{g['full_sync'] / r['full_sync']:.2f}×",
                     f"{g['full_sync']:.2f}", f"{r['full_sync']:.2f}"])
        benchlib.print_table(["figure", "ratio", "Goblin Core", "Redis"], rows)
        if args.json:
            benchlib.write_json(args.json, {"benchmark": "replication", "goblin": g,
                                            "redis": r, "requests": args.requests,
                                            "keys": args.keys, "rounds": args.rounds})
        return 0

    return benchlib.run_guarded(servers, run)


if __name__ == "__main__":
    sys.exit(main())
