#!/usr/bin/env python3
"""Goblin Core against Redis, side by side, with redis-benchmark.

Usage (from the repository root, after ``cargo build --release``)::

    python3 benchmarks/server_benchmark.py
    python3 benchmarks/server_benchmark.py --requests 100000 --rounds 3
    python3 benchmarks/server_benchmark.py --tests set,get,lpush,lpop

The script starts Goblin Core (``--goblin-bin``, default
``target/release/goblin-core``) and Debian's ``redis-server`` (``--redis-bin``)
side by side, each on a free loopback TCP port and on a Unix socket in a
temporary directory, both with ``--save '' --appendonly no`` and nothing else
changed. It then runs ``redis-benchmark -t <test> -n <requests> -c 50 -P <p>
--csv`` for every test of ``--tests`` (default ``set,get``), at pipelines 1, 16
and 256, over TCP (``-h 127.0.0.1 -p port``) and over the Unix socket (``-s
path``), and parses the CSV rows (test name, requests per second).

For each (transport, pipeline, test) point it prints one row: Goblin Core's
ops/s, Redis's ops/s, and the ratio Goblin/Redis. The absolute numbers depend
on the machine and on whatever else it is doing; **the ratio is what to
read**: 1.00 means as fast as Redis, above 1 faster, below 1 slower. Both
servers run on the same machine at the same time, with the same client, and
which server is measured first alternates from one point to the next (and from
one round to the next) so neither always gets the warmer caches or the quieter
moment. With ``--rounds N`` every point is measured N times on each server and
the median is reported.

Traffic goes only to 127.0.0.1 and to the two Unix sockets. Both servers are
stopped at the end, also on Ctrl-C, SIGTERM or an error, and every
redis-benchmark run is bounded by ``--timeout`` seconds. A run that fails on
one server (for instance a test whose command that server does not have yet)
shows "failed" in its row and is explained on stderr; the other points still
run, and the exit status is 1. The exit status is 0 when every point was
measured.
"""

import argparse
import csv
import io
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = (1, 16, 256)
TRANSPORTS = ("tcp", "unix")
START_TIMEOUT = 10.0  # seconds for a server to answer PING
STOP_TIMEOUT = 5.0  # seconds for a server to exit after SIGTERM, before SIGKILL


class BenchmarkError(Exception):
    """Stops the whole run (a server did not start or exited)."""


class PointError(Exception):
    """One redis-benchmark run failed (e.g. a command the server does not have yet)."""


def free_port():
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ping(family, address):
    """True if a server at address answers PING with +PONG."""
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            s.connect(address)
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class Server:
    """One server process on a loopback port and a Unix socket."""

    def __init__(self, name, binary, workdir):
        self.name = name
        self.binary = binary
        self.dir = os.path.join(workdir, name.lower().replace(" ", "-"))
        os.mkdir(self.dir)
        self.socket = os.path.join(self.dir, "server.sock")
        self.log_path = os.path.join(self.dir, "server.log")
        self.port = None
        self.proc = None
        self.log = None

    def start(self):
        for _attempt in range(3):
            self.port = free_port()
            args = [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--unixsocket", self.socket,
                "--save", "",
                "--appendonly", "no",
                "--dir", self.dir,
            ]
            self.log = open(self.log_path, "ab")
            # A session of its own: Ctrl-C reaches this script only, which then stops the server.
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=self.log,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
                start_new_session=True,
            )
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and self.proc.poll() is None:
                if ping(socket.AF_INET, ("127.0.0.1", self.port)) and ping(
                    socket.AF_UNIX, self.socket
                ):
                    return
                time.sleep(0.05)
            self.stop()  # exited (port taken meanwhile?) or never answered: try another port
        raise BenchmarkError(
            f"{self.name} ({self.binary}) did not start; its log:\n{self.log_tail()}"
        )

    def log_tail(self, lines=15):
        try:
            with open(self.log_path, "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_TIMEOUT)
        self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def target(self, transport):
        if transport == "tcp":
            return ["-h", "127.0.0.1", "-p", str(self.port)]
        return ["-s", self.socket]


def version(binary):
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.strip().splitlines()[0] if out.strip() else "?"


def parse_csv(text):
    """{test name: requests per second} from redis-benchmark --csv output."""
    rows = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 2 or row[0] == "test":
            continue
        if "(needed to benchmark" in row[0]:  # e.g. the LPUSH that fills the list for LRANGE
            continue
        try:
            rows[row[0]] = float(row[1])
        except ValueError:
            continue
    return rows


def run_benchmark(args, server, transport, pipeline, test):
    cmd = (
        [args.benchmark_bin]
        + server.target(transport)
        + ["-t", test, "-n", str(args.requests), "-c", str(args.clients),
           "-P", str(pipeline), "--csv"]
    )
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise PointError(
            f"redis-benchmark against {server.name} ({transport}, -P {pipeline}, {test}) "
            f"took more than {args.timeout:g}s"
        ) from None
    finally:
        # Never leave a client behind (timeout, Ctrl-C): kill it and reap it.
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    if server.proc is None or server.proc.poll() is not None:
        raise BenchmarkError(f"{server.name} exited during the run:\n{server.log_tail()}")
    rows = parse_csv(out)
    if proc.returncode != 0 or not rows:
        raise PointError(
            f"redis-benchmark against {server.name} ({transport}, -P {pipeline}, {test}) "
            f"failed (exit {proc.returncode}):\n{out}{err}"
        )
    return rows


def fmt_ops(v):
    return f"{v:,.0f}" if v is not None else "-"


def main():
    parser = argparse.ArgumentParser(
        description="Run redis-benchmark against Goblin Core and Redis side by side; "
        "read the Goblin/Redis ratio.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--goblin-bin", default="target/release/goblin-core",
                        help="the Goblin Core binary (relative paths are tried from the "
                        "current directory, then from the repository root)")
    parser.add_argument("--redis-bin", default="redis-server", help="the Redis server binary")
    parser.add_argument("--benchmark-bin", default="redis-benchmark",
                        help="the redis-benchmark binary")
    parser.add_argument("--requests", "-n", type=int, default=200000,
                        help="requests per redis-benchmark run (-n)")
    parser.add_argument("--clients", "-c", type=int, default=50,
                        help="parallel connections (-c)")
    parser.add_argument("--tests", "-t", default="set,get",
                        help="comma-separated redis-benchmark tests (-t), run in this order")
    parser.add_argument("--pipelines", default=",".join(map(str, PIPELINES)),
                        help="comma-separated pipeline depths (-P)")
    parser.add_argument("--transports", default=",".join(TRANSPORTS),
                        help="comma-separated transports: tcp, unix")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measurements per point and server; the median is reported")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds one redis-benchmark run may take")
    args = parser.parse_args()

    tests = [t.strip().lower() for t in args.tests.split(",") if t.strip()]
    pipelines = [int(p) for p in args.pipelines.split(",") if p.strip()]
    transports = [t.strip().lower() for t in args.transports.split(",") if t.strip()]
    if not tests or not pipelines or not transports:
        parser.error("--tests, --pipelines and --transports must not be empty")
    if any(t not in TRANSPORTS for t in transports):
        parser.error("--transports takes tcp and/or unix")
    if args.rounds < 1 or args.requests < 1 or args.clients < 1 or min(pipelines) < 1:
        parser.error("--rounds, --requests, --clients and --pipelines must be positive")

    goblin_bin = args.goblin_bin
    if not os.path.isabs(goblin_bin) and not os.path.exists(goblin_bin):
        goblin_bin = os.path.join(REPO_ROOT, goblin_bin)
    goblin_bin = os.path.abspath(goblin_bin)
    if not os.access(goblin_bin, os.X_OK):
        sys.exit(f"Goblin Core binary not found: {goblin_bin} (build it with cargo build --release)")
    for tool in (args.redis_bin, args.benchmark_bin):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found (Debian: apt-get install redis-server redis-tools)")
    redis_bin = shutil.which(args.redis_bin)
    benchmark_bin = shutil.which(args.benchmark_bin)
    args.benchmark_bin = benchmark_bin

    # SIGTERM (and SIGHUP) stop the run like Ctrl-C does, so the servers are stopped below.
    def interrupted(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, interrupted)

    workdir = tempfile.mkdtemp(prefix="goblin-bench-")
    goblin = Server("Goblin Core", goblin_bin, workdir)
    redis = Server("Redis", redis_bin, workdir)
    servers = (goblin, redis)
    status = 0
    errors = []
    try:
        for s in servers:
            s.start()
        print(f"Goblin Core: {version(goblin_bin)}")
        print(f"Redis:       {version(redis_bin)}")
        print(f"Client:      {version(benchmark_bin)}, -c {args.clients}, "
              f"-n {args.requests}, rounds {args.rounds} (median)")
        print()
        header = f"{'transport':<9} {'pipeline':>8}  {'test':<20} {'Goblin ops/s':>14} " \
                 f"{'Redis ops/s':>14} {'Goblin/Redis':>12}"
        print(header)
        print("-" * len(header))
        sys.stdout.flush()
        point = 0
        for transport in transports:
            for pipeline in pipelines:
                for test in tests:
                    samples = {s.name: {} for s in servers}  # server -> row name -> [ops/s]
                    failed = set()
                    for rnd in range(args.rounds):
                        order = servers if (point + rnd) % 2 == 0 else servers[::-1]
                        for s in order:
                            if s.name in failed:
                                continue
                            try:
                                rows = run_benchmark(args, s, transport, pipeline, test)
                            except PointError as e:
                                failed.add(s.name)
                                errors.append(str(e))
                                continue
                            for name, rps in rows.items():
                                samples[s.name].setdefault(name, []).append(rps)
                    point += 1
                    names = list(samples[goblin.name])
                    names += [n for n in samples[redis.name] if n not in names]
                    if not names:  # failed on both servers
                        names = [test.upper()]
                    for name in names:
                        g = samples[goblin.name].get(name)
                        r = samples[redis.name].get(name)
                        g = statistics.median(g) if g else None
                        r = statistics.median(r) if r else None
                        ratio = f"{g / r:.2f}" if g and r else "-"
                        gs = "failed" if goblin.name in failed else fmt_ops(g)
                        rs = "failed" if redis.name in failed else fmt_ops(r)
                        print(f"{transport:<9} {pipeline:>8}  {name:<20} {gs:>14} "
                              f"{rs:>14} {ratio:>12}")
                        sys.stdout.flush()
        if errors:
            status = 1
            print(f"\n{len(errors)} run(s) failed:", file=sys.stderr)
            for e in errors:
                print(f"error: {e}", file=sys.stderr)
    except BenchmarkError as e:
        print(f"error: {e}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("\ninterrupted; stopping the servers", file=sys.stderr)
        status = 130
    finally:
        # Ignore further signals while stopping, so a second Ctrl-C can't leave a server behind.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
        for s in servers:
            try:
                s.stop()
            except Exception as e:  # keep stopping the other one
                print(f"error stopping {s.name}: {e}", file=sys.stderr)
                if s.proc is not None:
                    s.proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
