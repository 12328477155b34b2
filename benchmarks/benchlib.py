"""Shared code for the benchmark drivers in this directory.

Used by ``server_benchmark.py`` (redis-benchmark, Goblin Core against Redis),
``cad_benchmark.py`` (compare-and-delete) and
``leaderboard_rescore_benchmark.py`` (time-decay leaderboard rescore). It is
not a program of its own; the drivers import it (their directory is on
``sys.path`` when they are run as ``python3 benchmarks/<driver>.py``).

What is here:

* **Servers** -- ``free_port``, ``find_binary``, ``version``, ``Server`` (one
  process on a free loopback TCP port *and* a Unix socket in a temporary
  directory, with ``--save '' --appendonly no``, ready once it answers PING on
  both) and ``Servers`` (a context manager owning the temporary directory:
  every server it started is stopped on the way out -- SIGTERM, then SIGKILL
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

* **Results** -- ``median``, ``print_table`` (aligned columns on stdout),
  ``write_json`` (``--json FILE``) and ``write_chart`` (``--chart FILE.png``;
  matplotlib is imported only then -- ``require_matplotlib`` says clearly that
  it is missing before a run starts rather than after).
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
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
START_TIMEOUT = 10.0  # seconds for a server to answer PING
STOP_TIMEOUT = 5.0  # seconds for a server to exit after SIGTERM, before SIGKILL
SOCKET_TIMEOUT = 60.0  # seconds any one read or write on a client socket may take
RECV_SIZE = 1 << 18


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

    def __init__(self, name, binary, workdir):
        self.name = name
        self.binary = binary
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

    def add(self, name, binary):
        """A Server, not started yet (it is stopped with the others all the same)."""
        server = Server(name, binary, self.workdir)
        self.servers.append(server)
        return server

    def start(self, name, binary):
        return self.add(name, binary).start()

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
    return f"{v / base:.2f}x" if v is not None and base else "-"


def write_json(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    print(f"wrote {path}", file=sys.stderr)


def require_matplotlib():
    """Exits with a clear message if --chart was asked for and matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit(
            "--chart needs matplotlib, which is not installed "
            "(pip install matplotlib, or Debian: apt-get install python3-matplotlib); "
            "run without --chart, or with --json, otherwise"
        )


def write_chart(path, title, groups, series, ylabel="µs/op (lower is better)"):
    """A grouped bar chart: one group per entry of groups, one bar per series.

    series: [(name, [value or None per group])].
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
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    positive = [v for _, vs in series for v in vs if v]
    if positive and max(positive) / min(positive) > 30:
        ax.set_yscale("log")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)
