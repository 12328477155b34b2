"""Shared code for the benchmark drivers in this directory.

Used by ``server_benchmark.py`` (redis-benchmark, Goblin Core against Redis),
``persistence_benchmark.py`` (AOF fsync policies, BGSAVE stalls),
``cad_benchmark.py`` (compare-and-delete), ``instructions_benchmark.py`` (the same
ops counted in instructions under callgrind),
``leaderboard_rescore_benchmark.py`` (time-decay leaderboard rescore) and
``nested_call_benchmark.py`` (one ``redis.call`` from a script). It is
not a program of its own; the drivers import it (their directory is on
``sys.path`` when they are run as ``python3 benchmarks/<driver>.py``).

What is here:

* **Servers** -- ``free_port``, ``find_binary``, ``version``, ``Server`` (one
  process on a free loopback TCP port *and* a Unix socket in a temporary
  directory, with ``--save '' --appendonly no`` and any ``extra`` directives
  after them, optionally under a ``wrapper`` command, ready once it answers
  PING on both) and ``Servers`` (a context manager owning the temporary
  directory: every server it started is stopped on the way out -- SIGTERM, then SIGKILL
  after ``STOP_TIMEOUT`` seconds -- also on Ctrl-C, SIGTERM, SIGHUP or an
  error, once ``install_signal_handlers`` has turned those signals into
  ``KeyboardInterrupt``).

* **A light RESP client** -- ``Connection`` over TCP (``TCP_NODELAY``) or a
  Unix socket: a raw socket, commands encoded to RESP bytes once, before any
  timing, many of them sent with one ``sendall``, and a small reader written
  for speed (``bytes.find`` over one buffer, replies read in bulk). Timed loops
  use ``expect``: the replies of a whole batch are compared, as bytes, with the
  bytes they must be -- no per-reply objects at all. Why not redis-py: the
  drivers measure the *server's* cost per operation, a few microseconds, from a
  single Python connection. A general client's per-call overhead (argument
  normalisation, connection-pool checkout, reply objects and callbacks) is of
  the same order or larger, so it would dominate -- and flatten -- the very
  differences we want to see. The raw client keeps the Python side to roughly
  one ``sendall`` and one ``recv`` per round trip. Every socket has a timeout
  (``SOCKET_TIMEOUT``), so no read can wait forever.

* **Loop stalls** -- ``Pinger``, a thread PINGing on its own connection that
  keeps the longest round trip: how long the server's event loop stopped while
  something else ran (a fork, a large free).

* **Results** -- ``median``, ``print_table`` (aligned columns on stdout),
  ``ratio_cell`` and ``ratio_header`` (tables read ratios first: ``3.02×
  (2.45)``, the unit of the parenthesised number in the header),
  ``json_results`` and ``write_json`` (``--json FILE``: every driver's file
  starts with "benchmark", "unit", "time", "server", "reference") and
  ``write_chart`` (``--chart FILE.png``; matplotlib is imported only then --
  ``require_matplotlib`` makes its absence a usage error, status 2, before a
  run starts rather than after).
"""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT = 10.0  # seconds for a server to answer PING
STOP_TIMEOUT = 5.0  # seconds for a server to exit after SIGTERM, before SIGKILL
SOCKET_TIMEOUT = 60.0  # seconds any one read or write on a client socket may take
RECV_SIZE = 1 << 16  # below glibc's mmap threshold: no mmap/munmap per recv


class BenchmarkError(Exception):
    """Stops the whole run (a server did not start or exited, a check failed)."""


# ---------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------


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


def find_binary(path):
    """The absolute path of an executable, or None.

    A name without a slash is looked up on PATH (``redis-server``); a relative
    path is tried from the current directory, then from the repository root
    (``target/release/goblin-core``).
    """
    if not path:
        return None
    if os.sep not in path:
        return shutil.which(path)
    if not os.path.isabs(path) and not os.path.exists(path):
        path = os.path.join(REPO_ROOT, path)
    path = os.path.abspath(path)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def version(binary):
    """The first line of ``binary --version``, or "?"."""
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.strip().splitlines()[0] if out.strip() else "?"


class Server:
    """One server process on a loopback port and a Unix socket (see ``Servers``)."""

    def __init__(self, name, binary, workdir, extra=(), wrapper=(), start_timeout=START_TIMEOUT):
        self.name = name
        self.binary = binary
        self.extra = list(extra)  # more "--directive value" arguments, after the defaults
        self.wrapper = list(wrapper)  # a command the server runs under (valgrind ...)
        self.start_timeout = start_timeout
        self.dir = os.path.join(workdir, name.lower().replace(" ", "-"))
        os.mkdir(self.dir)
        self.socket = os.path.join(self.dir, "server.sock")
        self.log_path = os.path.join(self.dir, "server.log")
        self.host = "127.0.0.1"
        self.port = None
        self.proc = None
        self.log = None

    def start(self):
        for _attempt in range(3):
            self.port = free_port()
            args = self.wrapper + [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--unixsocket", self.socket,
                "--save", "",
                "--appendonly", "no",
                "--dir", self.dir,
            ] + self.extra
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
            deadline = time.monotonic() + self.start_timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                if ping(socket.AF_INET, ("127.0.0.1", self.port)) and ping(
                    socket.AF_UNIX, self.socket
                ):
                    return self
                time.sleep(0.05)
            self.stop()  # exited (port taken meanwhile?) or never answered: try another port
        raise BenchmarkError(
            f"{self.name} ({self.binary}) did not start; its log:\n{self.log_tail()}"
        )

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def check_running(self):
        """Raises BenchmarkError (with the end of the log) if the process has exited."""
        if not self.running():
            raise BenchmarkError(f"{self.name} exited during the run:\n{self.log_tail()}")

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


def run_guarded(group, body):
    """Runs ``body()`` and returns its exit status; a BenchmarkError (status 1) or Ctrl-C/SIGTERM
    (status 130) is reported on stderr. Every server of ``group`` is stopped on the way out."""
    try:
        return body()
    except BenchmarkError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted; stopping the servers", file=sys.stderr)
        return 130
    finally:
        group.stop_all()


def install_signal_handlers():
    """SIGTERM (and SIGHUP) stop the run like Ctrl-C does: as KeyboardInterrupt."""

    def interrupted(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, interrupted)


class Servers:
    """The servers of one run, in one temporary directory.

    ``with Servers() as servers: s = servers.start("Redis", "/usr/bin/redis-server")``
    -- on leaving the block, however it is left, every server is stopped and the
    directory removed.
    """

    def __init__(self, prefix="goblin-bench-"):
        self.workdir = tempfile.mkdtemp(prefix=prefix)
        self.servers = []

    def add(self, name, binary, extra=(), **options):
        """A Server, not started yet (it is stopped with the others all the same); options are
        Server's (wrapper, start_timeout)."""
        server = Server(name, binary, self.workdir, extra, **options)
        self.servers.append(server)
        return server

    def start(self, name, binary, extra=(), **options):
        return self.add(name, binary, extra, **options).start()

    def stop_all(self):
        # Ignore further signals while stopping, so a second Ctrl-C can't leave a server behind.
        previous = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, signal.SIG_IGN)
        try:
            for s in self.servers:
                try:
                    s.stop()
                except Exception as e:  # keep stopping the others
                    print(f"error stopping {s.name}: {e}", file=sys.stderr)
                    if s.proc is not None:
                        s.proc.kill()
            shutil.rmtree(self.workdir, ignore_errors=True)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.stop_all()
        return False


# ---------------------------------------------------------------------------
# The RESP client
# ---------------------------------------------------------------------------


class ReplyError(Exception):
    """An error reply (``-ERR ...``); the parser returns it, ``call`` raises it."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __eq__(self, other):
        return isinstance(other, ReplyError) and other.message == self.message

    def __hash__(self):
        return hash(self.message)

    def is_unknown_command(self):
        return self.message.startswith("ERR unknown command")


class ReplyMismatch(BenchmarkError):
    """A timed batch got other replies than the ones it must get."""


class _Incomplete(Exception):
    pass


_INCOMPLETE = _Incomplete()


def encode(*args):
    """One command as RESP bytes (arguments: bytes, str or int)."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = b"%d" % a
        parts.append(b"$%d\r\n%b\r\n" % (len(a), a))
    return b"".join(parts)


def encode_reply(value):
    """The RESP2 bytes of a reply: int, bytes/str (bulk), None (null bulk) or a list."""
    if isinstance(value, int):
        return b":%d\r\n" % value
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return b"$%d\r\n%b\r\n" % (len(value), value)
    return b"*%d\r\n" % len(value) + b"".join(encode_reply(v) for v in value)


def _parse(buf, pos):
    """(value, end) of the reply at buf[pos:], or raises _INCOMPLETE.

    Bulk and simple strings are bytes, integers int, nulls None, arrays lists,
    errors ReplyError instances. The RESP3 types are understood too, in case a
    server answers with them.
    """
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise _INCOMPLETE
    t = buf[pos]
    if t == 36 or t == 61:  # $ bulk, = verbatim
        n = int(buf[pos + 1:end])
        if n < 0:
            return None, end + 2
        start = end + 2
        stop = start + n
        if len(buf) < stop + 2:
            raise _INCOMPLETE
        return buf[start:stop], stop + 2
    if t == 58:  # : integer
        return int(buf[pos + 1:end]), end + 2
    if t == 43:  # + simple string
        return buf[pos + 1:end], end + 2
    if t == 42 or t == 126 or t == 62:  # * array, ~ set, > push
        n = int(buf[pos + 1:end])
        if n < 0:
            return None, end + 2
        items = []
        p = end + 2
        for _ in range(n):
            v, p = _parse(buf, p)
            items.append(v)
        return items, p
    if t == 45:  # - error
        return ReplyError(buf[pos + 1:end].decode(errors="replace")), end + 2
    if t == 95:  # _ null
        return None, end + 2
    if t == 44:  # , double
        return float(buf[pos + 1:end]), end + 2
    if t == 35:  # # boolean
        return buf[pos + 1:end] == b"t", end + 2
    if t == 40:  # ( big number
        return int(buf[pos + 1:end]), end + 2
    if t == 37:  # % map, as a flat list of key, value, ...
        n = int(buf[pos + 1:end])
        items = []
        p = end + 2
        for _ in range(2 * n):
            v, p = _parse(buf, p)
            items.append(v)
        return items, p
    raise BenchmarkError(f"not a RESP reply: {show(buf[pos:pos + 80])}")


def show(raw):
    """Reply bytes, printable on one line."""
    if isinstance(raw, ReplyError):
        return f"(error) {raw.message}"
    if isinstance(raw, (bytes, bytearray)):
        text = bytes(raw).decode(errors="replace").replace("\r\n", "\\r\\n")
        return text if len(text) <= 200 else text[:200] + "..."
    return repr(raw)


class Connection:
    """A raw RESP2 connection, see the module docstring.

    ``Connection.tcp(host, port)`` or ``Connection.unix(path)``. ``call`` runs
    one command; ``pipeline`` sends many and returns their replies; ``expect``
    and ``send`` are for timed loops: the requests are encoded beforehand, and
    the replies checked as bytes.
    """

    def __init__(self, sock, label):
        sock.settimeout(SOCKET_TIMEOUT)
        self.sock = sock
        self.label = label
        self.buf = b""
        self.pos = 0

    @classmethod
    def tcp(cls, host, port):
        sock = socket.create_connection((host, port), timeout=SOCKET_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock, f"tcp {host}:{port}")

    @classmethod
    def unix(cls, path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(SOCKET_TIMEOUT)
        try:
            sock.connect(path)
        except OSError:
            sock.close()
            raise
        return cls(sock, f"unix {path}")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.close()
        return False

    def _recv(self):
        try:
            chunk = self.sock.recv(RECV_SIZE)
        except socket.timeout:
            raise BenchmarkError(
                f"{self.label}: no reply within {SOCKET_TIMEOUT:g}s "
                f"(buffered: {show(self.buf[self.pos:])})"
            ) from None
        if not chunk:
            raise BenchmarkError(f"{self.label}: the server closed the connection")
        return chunk

    def _fill(self):
        chunk = self._recv()
        if self.pos:
            self.buf = self.buf[self.pos:] + chunk
            self.pos = 0
        else:
            self.buf += chunk

    def send(self, data):
        self.sock.sendall(data)

    def read_raw(self, n=1):
        """The next n replies, each as its raw bytes."""
        out = []
        while len(out) < n:
            try:
                _value, end = _parse(self.buf, self.pos)
            except _Incomplete:
                self._fill()
                continue
            out.append(self.buf[self.pos:end])
            self.pos = end
        return out

    def read(self, n=1):
        """The next n replies, parsed (errors as ReplyError values)."""
        out = []
        while len(out) < n:
            try:
                value, end = _parse(self.buf, self.pos)
            except _Incomplete:
                self._fill()
                continue
            out.append(value)
            self.pos = end
        return out

    def call(self, *args):
        """One command; its parsed reply (an error reply is raised as ReplyError)."""
        self.sock.sendall(encode(*args))
        value = self.read(1)[0]
        if isinstance(value, ReplyError):
            raise value
        return value

    def call_raw(self, *args):
        """One command; its reply's raw bytes."""
        self.sock.sendall(encode(*args))
        return self.read_raw(1)[0]

    def pipeline(self, commands, batch=1000):
        """Parsed replies of many commands (tuples of arguments), sent batch at a time."""
        out = []
        for i in range(0, len(commands), batch):
            chunk = commands[i:i + batch]
            self.sock.sendall(b"".join(encode(*c) for c in chunk))
            out.extend(self.read(len(chunk)))
        return out

    def expect(self, expected):
        """Reads exactly len(expected) bytes of replies; they must equal expected.

        The fast path of the timed loops: one recv (usually) and one bytes
        comparison for a whole batch of replies.
        """
        need = len(expected)
        buf, pos = self.buf, self.pos
        have = len(buf) - pos
        if have >= need:
            got = buf[pos:pos + need]
            self.pos = pos + need
        else:
            chunks = [buf[pos:]] if have else []
            while have < need:
                chunk = self._recv()
                chunks.append(chunk)
                have += len(chunk)
            data = b"".join(chunks)
            got = data[:need]
            self.buf = data[need:]
            self.pos = 0
        if got != expected:
            raise ReplyMismatch(
                f"{self.label}: unexpected replies:\n  got      {show(got)}\n"
                f"  expected {show(expected)}"
            )


    def _finish(self, got, expected):
        """The rest of a reply that came in pieces; raises ReplyMismatch if it is not expected."""
        while len(got) < len(expected) and expected.startswith(got):
            got += self._recv()
        if got != expected:
            raise ReplyMismatch(
                f"{self.label}: unexpected reply:\n  got      {show(got)}\n"
                f"  expected {show(expected)}"
            )

    def roundtrips(self, requests, expected):
        """Sends each request and waits for its reply before the next: sequential.

        expected: the reply bytes every request must get, or a list of them
        (one per request). Returns the seconds taken.
        """
        if self.pos < len(self.buf):
            raise BenchmarkError(f"{self.label}: unread replies before a timed run")
        sendall = self.sock.sendall
        recv = self.sock.recv
        finish = self._finish
        try:
            if isinstance(expected, bytes):
                t0 = time.perf_counter()
                for req in requests:
                    sendall(req)
                    got = recv(RECV_SIZE)
                    if got != expected:
                        finish(got, expected)
            else:
                t0 = time.perf_counter()
                for req, exp in zip(requests, expected):
                    sendall(req)
                    got = recv(RECV_SIZE)
                    if got != exp:
                        finish(got, exp)
            return time.perf_counter() - t0
        except socket.timeout:
            raise BenchmarkError(f"{self.label}: no reply within {SOCKET_TIMEOUT:g}s") from None

    def batches(self, batches, expected):
        """Sends each batch (many commands, one sendall) and reads all its replies
        (compared as bytes with the matching entry of expected) before the next:
        pipelined, len(batch) commands in flight. Returns the seconds taken.
        """
        if self.pos < len(self.buf):
            raise BenchmarkError(f"{self.label}: unread replies before a timed run")
        sendall = self.sock.sendall
        expect = self.expect
        try:
            t0 = time.perf_counter()
            for batch, exp in zip(batches, expected):
                sendall(batch)
                expect(exp)
            return time.perf_counter() - t0
        except socket.timeout:
            raise BenchmarkError(f"{self.label}: no reply within {SOCKET_TIMEOUT:g}s") from None


# ---------------------------------------------------------------------------
# Engines and targets (what the scripting drivers share)
# ---------------------------------------------------------------------------

# Every scripting engine: (name, command prefix, script file extension). An
# engine is reached by <prefix>EVALSHA, <prefix>SCRIPT LOAD; its version of a
# driver's script is benchmarks/scripts/<script>.<ext>.
ENGINES = (
    ("lua", "", "lua"),
    ("luau", "LUAU.", "luau"),
    ("quickjs", "QUICKJS.", "js"),
    ("tcl", "TCL.", "tcl"),
    ("upython", "UPYTHON.", "py"),
    ("wren", "WREN.", "wren"),
)
ENGINE_NAMES = tuple(e[0] for e in ENGINES)
SCRIPTS_DIR = os.path.join(REPO_ROOT, "benchmarks", "scripts")
TRANSPORTS = ("tcp", "unix")


def note(message):
    """Progress and notices go to stderr; stdout is kept for the results."""
    print(message, file=sys.stderr, flush=True)


class Engine:
    """A scripting engine the server has, with the driver's script loaded."""

    def __init__(self, name, prefix, path, sha):
        self.name = name
        self.prefix = prefix
        self.path = path
        self.sha = sha
        self.evalsha = prefix + "EVALSHA"


def load_scripts(conn, script, scripts_dir=SCRIPTS_DIR, only=None, where="", rewrite=None):
    """<prefix>SCRIPT LOAD of scripts_dir/<script>.<ext> for every engine the server has.

    An engine whose SCRIPT LOAD is an unknown command is reported as not
    available (stderr) and skipped. An engine that is there but has no script
    file, or whose script does not load, stops the run (BenchmarkError).
    only: engine names to try (None: all). rewrite: None, or a function (body, path) -> body
    applied to each script before it is loaded (a variant of the script). Returns [Engine].
    """
    found = []
    for name, prefix, ext in ENGINES:
        if only is not None and name not in only:
            continue
        path = os.path.join(scripts_dir, f"{script}.{ext}")
        try:
            with open(path, "rb") as f:
                body = f.read()
        except OSError:
            body = None
        if body is not None and rewrite is not None:
            body = rewrite(body, path)
        if body is None:  # is the engine there at all?
            conn.send(encode(prefix + "SCRIPT", "EXISTS", "0" * 40))
        else:
            conn.send(encode(prefix + "SCRIPT", "LOAD", body))
        reply = conn.read(1)[0]
        if isinstance(reply, ReplyError) and reply.is_unknown_command():
            note(f"{name}: not available{where} ({prefix}SCRIPT is an unknown command); skipped")
            continue
        if body is None:
            raise BenchmarkError(f"engine {name} is available{where} but {path} is missing")
        if isinstance(reply, ReplyError) or not isinstance(reply, bytes) or len(reply) != 40:
            raise BenchmarkError(
                f"{name}: {prefix}SCRIPT LOAD {path} failed{where}: {show(reply)}"
            )
        found.append(Engine(name, prefix, path, reply.decode()))
    return found


def info_memory(conn):
    """INFO memory's integer fields."""
    fields = {}
    for line in conn.call("INFO", "memory").decode().split("\r\n"):
        name, _, value = line.partition(":")
        if value.isdigit():
            fields[name] = int(value)
    return fields


def cpu_seconds(pid):
    """User plus system CPU seconds process pid has used so far (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        # The command name (field 2) may hold spaces: the fields after it follow its ")".
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def add_binary_arguments(parser):
    """--goblin-bin and --redis-bin, for a driver that starts both servers itself."""
    parser.add_argument("--goblin-bin", default="target/release/goblin-core",
                        help="the Goblin Core binary (relative paths are tried from the "
                        "current directory, then from the repository root)")
    parser.add_argument("--redis-bin", default="redis-server", help="the Redis server binary")


def found_binaries(parser, args):
    """[("Goblin Core", path), ("Redis", path)] from add_binary_arguments' options; exits with
    status 2 if one is not found."""
    binaries = [("Goblin Core", find_binary(args.goblin_bin)),
                ("Redis", find_binary(args.redis_bin))]
    for (name, found), given in zip(binaries, (args.goblin_bin, args.redis_bin)):
        if found is None:
            parser.exit(2, f"{name} binary not found: {given}\n")
    return binaries


def has_command(conn, *probe):
    """False if the probe command is unknown to the server; True otherwise (any reply)."""
    conn.send(encode(*probe))
    reply = conn.read(1)[0]
    return not (isinstance(reply, ReplyError) and reply.is_unknown_command())


class Target:
    """One server the driver talks to: a label and a connection per transport."""

    def __init__(self, label, host=None, port=None, unix=None, server=None):
        self.label = label
        self.server = server
        self.version = "?"
        self.conns = {}
        try:
            if port is not None:
                self.conns["tcp"] = Connection.tcp(host, port)
            if unix is not None:
                self.conns["unix"] = Connection.unix(unix)
        except OSError as e:
            self.close()
            where = ", ".join(filter(None, [port and f"{host}:{port}", unix]))
            raise BenchmarkError(f"cannot connect to {label} ({where}): {e}") from None

    def conn(self):
        """The connection for setup and checks: the Unix socket if there is one."""
        return self.conns.get("unix") or self.conns["tcp"]

    def check_running(self):
        if self.server is not None:
            self.server.check_running()

    def info_version(self):
        try:
            info = self.conn().call("INFO", "server")
        except ReplyError:
            return "?"
        for line in info.decode(errors="replace").splitlines():
            if line.startswith("redis_version:"):
                return "redis_version " + line.split(":", 1)[1]
        return "?"

    def description(self):
        """How headers and JSON files name the server: "label: version"."""
        return f"{self.label}: {self.version}"

    def close(self):
        for c in self.conns.values():
            c.close()


def add_target_arguments(parser):
    """The options every scripting driver has: which server, a reference, outputs."""
    parser.add_argument("--goblin-bin", default="target/release/goblin-core",
                        help="the Goblin Core binary the driver starts (relative paths are "
                        "tried from the current directory, then from the repository root)")
    parser.add_argument("--host", help="target a running server at this host instead of "
                        "starting one (with --port; default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="target a running server's TCP port")
    parser.add_argument("--unix-socket", help="target a running server's Unix socket")
    parser.add_argument("--redis-bin", help="also start this redis-server and add a reference "
                        "row: the same Lua script on real Redis")
    parser.add_argument("--engines", default=",".join(ENGINE_NAMES),
                        help="comma-separated engines to try (those the server lacks are "
                        "skipped)")
    parser.add_argument("--scripts-dir", default=SCRIPTS_DIR,
                        help="where the scripts are (<script>.<ext> per engine)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--chart", metavar="FILE.png",
                        help="also draw the results (needs matplotlib)")


def check_target_arguments(parser, args):
    engines = [e.strip().lower() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINE_NAMES]
    if unknown or not engines:
        parser.error(f"--engines takes some of {','.join(ENGINE_NAMES)}")
    args.engines = engines
    args.external = args.host is not None or args.port is not None or args.unix_socket is not None
    if args.external:
        if args.host is not None and args.port is None:
            args.port = 6379
        if args.port is not None and args.host is None:
            args.host = "127.0.0.1"
    else:
        args.goblin_path = find_binary(args.goblin_bin)
        if args.goblin_path is None:
            parser.exit(2, f"Goblin Core binary not found: {args.goblin_bin} "
                        "(build it with cargo build --release, or pass --goblin-bin, "
                        "or --host/--port/--unix-socket for a running server)\n")
    if args.redis_bin is not None:
        args.redis_path = find_binary(args.redis_bin)
        if args.redis_path is None:
            parser.exit(2, f"{args.redis_bin} not found (Debian: apt-get install redis-server)\n")
    if args.chart:
        require_matplotlib(parser)


def open_targets(args, servers):
    """(main target, reference target or None): started in servers, or connected to."""
    if args.external:
        where = ", ".join(filter(None, [args.port and f"{args.host}:{args.port}",
                                        args.unix_socket]))
        main = Target(f"server at {where}", args.host, args.port, args.unix_socket)
        main.version = main.info_version()
    else:
        note(f"starting Goblin Core ({args.goblin_path})")
        s = servers.start("Goblin Core", args.goblin_path)
        main = Target("Goblin Core", s.host, s.port, s.socket, server=s)
        main.version = version(args.goblin_path)
    reference = None
    if args.redis_bin is not None:
        note(f"starting redis-server ({args.redis_path}) for the reference row")
        s = servers.start("Redis", args.redis_path)
        reference = Target("redis-server", s.host, s.port, s.socket, server=s)
        reference.version = version(args.redis_path)
    return main, reference


def gc_paused():
    """A context manager: no garbage collection pauses inside a timed loop."""
    import contextlib
    import gc

    @contextlib.contextmanager
    def paused():
        was = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            if was:
                gc.enable()

    return paused()


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


def median(values):
    """The median of the numbers that are not None, or None if there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def print_table(headers, rows, file=None):
    """Aligned columns: the first left-aligned, the others right-aligned."""
    file = file or sys.stdout
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r):
        parts = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        return "  ".join(parts).rstrip()

    print(line(cells[0]), file=file)
    print("-" * len(line(cells[0])), file=file)
    for r in cells[1:]:
        print(line(r), file=file)
    file.flush()


def fmt_us(v):
    return "-" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.1f}")


def fmt_ratio(v, base):
    """v / base as "3.02×", or "-" when either is missing or base is 0."""
    return f"{v / base:.2f}×" if v is not None and base else "-"


def ratio_cell(v, base, fmt=fmt_us):
    """A table cell, ratio first: "3.02× (2.45)" -- v / base, then v itself (formatted by fmt)
    in parentheses. The ratio leads because it is what to read: the absolute number depends on
    the machine and the client. "-" if v is None."""
    if v is None:
        return "-"
    return f"{fmt_ratio(v, base)} ({fmt(v)})"


def ratio_header(label, unit):
    """The header of a column of ratio_cell cells, naming the parenthesised number's unit:
    "seq tcp: × (µs/op)"."""
    return f"{label}: × ({unit})" if label else f"× ({unit})"


def json_results(benchmark, unit, server, reference, **fields):
    """What every driver's --json file holds first: which benchmark, its unit (None when the
    rows have units of their own), when (UTC), the server measured and the reference (a
    "label: version" string, or None), then the driver's own fields (its rows, its options)."""
    return {
        "benchmark": benchmark,
        "unit": unit,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "server": server,
        "reference": reference,
        **fields,
    }


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    print(f"wrote {path}", file=sys.stderr)


def require_matplotlib(parser):
    """A usage error (status 2, before any server starts) if --chart was asked for and
    matplotlib is missing, rather than a failure after the whole run."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        parser.exit(
            2,
            f"{parser.prog}: error: --chart needs matplotlib, which is not installed "
            "(pip install matplotlib, or Debian: apt-get install python3-matplotlib); "
            "run without --chart (--json still writes the results)\n",
        )


def write_chart(path, title, groups, series, unit):
    """A grouped bar chart: one group per entry of groups, one bar per series.

    series: [(name, [value or None per group])]; unit: what the values are (the y axis label,
    e.g. "µs/op" or "µs/call").
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(len(series), 1)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups) * max(1, n / 3)), 4.5))
    for i, (name, values) in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        ys = [v if v is not None else 0 for v in values]
        ax.bar(xs, ys, width, label=name)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(f"{unit} (lower is better)")
    ax.set_title(title)
    positive = [v for _, vs in series for v in vs if v]
    if positive and max(positive) / min(positive) > 30:
        ax.set_yscale("log")
    # Outside the axes, to the right: inside, it would hide some group's bars whatever the corner.
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")  # "tight": the canvas grows to the legend
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)


# ---------------------------------------------------------------------------
# Loop stalls
# ---------------------------------------------------------------------------


class Pinger(threading.Thread):
    """PINGs continuously on its own connection; `worst` is the longest round trip (seconds)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.stop = threading.Event()
        self.worst = 0.0
        self.count = 0

    def run(self):
        while not self.stop.is_set():
            t = time.perf_counter()
            self.sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            got = b""
            while len(got) < 7:
                chunk = self.sock.recv(64)
                if not chunk:
                    return
                got += chunk
            self.worst = max(self.worst, time.perf_counter() - t)
            self.count += 1
        self.sock.close()
