//! Test harness: starts the real `goblin-core` binary (and, for differential tests, Debian's
//! `redis-server`) on free loopback ports, and talks raw RESP to them.
#![allow(dead_code)]

pub mod persist;
pub mod repl;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port no other server of this test process was given, and free when asked. Ports the kernel
/// picks (bind to port 0) can come back to a parallel test before the first server has bound its
/// own, and that test would then talk to the wrong server; a counter repeats only after `SPAN`.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    // Below the kernel's ephemeral range; each process starts at its own place in it.
    const FIRST: u32 = 10_000;
    const SPAN: u32 = 20_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id().wrapping_mul(2_654_435_761) % SPAN;
    for _ in 0..SPAN {
        let port = (FIRST + (start + NEXT.fetch_add(1, Ordering::Relaxed)) % SPAN) as u16;
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(_) => return port,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => panic!("cannot bind a test port: {e}"),
        }
    }
    panic!("no free port between {FIRST} and {}", FIRST + SPAN);
}

/// Whether process `pid` holds the socket listening on `port` (`/proc/net/tcp`'s inode of the
/// listener among the process's file descriptors), without sending the server anything a test
/// could later see in its statistics.
fn listens_on(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return true;
    };
    let local = format!(":{port:04X}");
    // Columns: sl local_address rem_address st ... inode; st 0A is LISTEN.
    let inode = table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 9 && f[1].ends_with(&local) && f[3] == "0A").then(|| f[9].to_string())
    });
    let Some(inode) = inode else {
        return false;
    };
    let target = format!("socket:[{inode}]");
    std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy() == target))
    })
}

pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "goblin-test-{}-{}-{}",
        tag,
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn goblin_bin() -> &'static str {
    env!("CARGO_BIN_EXE_goblin-core")
}

fn spawn(bin: &str, tag: &str, args: &[&str]) -> Server {
    // Another test process may pick the same free port at the same moment: the server that loses
    // the race exits, and the test must not go on talking to the winner. Such a start is retried
    // on a new port.
    for _ in 0..5 {
        if let Some(s) = try_spawn(bin, tag, args) {
            return s;
        }
    }
    panic!("{bin} did not come up on any of five ports");
}

fn try_spawn(bin: &str, tag: &str, args: &[&str]) -> Option<Server> {
    let port = free_port();
    let dir = scratch_dir(tag);
    let port_s = port.to_string();
    // A config file must come first, as with redis-server.
    let (file, rest) = match args.first() {
        Some(f) if !f.starts_with("--") => (vec![*f], &args[1..]),
        _ => (vec![], args),
    };
    let mut full: Vec<&str> = file;
    full.extend_from_slice(&["--port", &port_s]);
    full.extend_from_slice(rest);
    let child = Command::new(bin)
        .args(&full)
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    let mut s = Server { child, port, dir };
    s.wait_ready().then_some(s)
}

impl Server {
    /// Waits until this server answers on its port: false if it exited first, or if the process
    /// listening there is another.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return listens_on(self.child.id(), self.port);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("server on port {} did not come up", self.port);
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(self.port)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn client(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    /// Waits for the process to exit on its own; returns its exit status success.
    pub fn wait_exit(&mut self, within: Duration) -> Option<bool> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st.success());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Goblin Core with extra arguments (after `--port N`).
pub fn goblin(args: &[&str]) -> Server {
    spawn(goblin_bin(), "goblin", args)
}

/// Debian's redis-server, configured as the differential tests need.
pub fn redis(args: &[&str]) -> Server {
    // A config file stays first, as redis-server wants it.
    let (mut full, rest) = match args.first() {
        Some(f) if !f.starts_with("--") => (vec![*f], &args[1..]),
        _ => (vec![], args),
    };
    full.extend_from_slice(&["--save", "", "--appendonly", "no"]);
    full.extend_from_slice(rest);
    spawn("redis-server", "redis", &full)
}

/// A raw RESP connection: send bytes, read whole replies as bytes.
pub struct Raw {
    pub s: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        Raw::over(TcpStream::connect(("127.0.0.1", port)).unwrap())
    }

    /// A connection made by the caller (from a chosen address, say).
    pub fn over(s: TcpStream) -> Raw {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Raw { s, buf: Vec::new() }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }

    pub fn cmd(&mut self, args: &[&[u8]]) -> Vec<u8> {
        self.send(&encode(args));
        self.reply()
    }

    pub fn cmd_str(&mut self, line: &str) -> Vec<u8> {
        let args = split(line);
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        self.cmd(&refs)
    }

    fn fill(&mut self) -> bool {
        let mut tmp = [0u8; 65536];
        match self.s.read(&mut tmp) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&tmp[..n]);
                true
            }
        }
    }

    /// One complete reply (aggregates included), as raw bytes. Panics on EOF mid-reply.
    pub fn reply(&mut self) -> Vec<u8> {
        loop {
            if let Some(n) = reply_len(&self.buf, 0) {
                return self.buf.drain(..n).collect();
            }
            assert!(
                self.fill(),
                "connection closed while waiting for a reply ({:?})",
                String::from_utf8_lossy(&self.buf)
            );
        }
    }

    /// True if the server closed the connection (after any pending bytes).
    pub fn is_closed(&mut self) -> bool {
        self.s
            .set_read_timeout(Some(Duration::from_secs(3)))
            .unwrap();
        let mut tmp = [0u8; 1024];
        loop {
            match self.s.read(&mut tmp) {
                Ok(0) => return true,
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                Err(_) => return false,
            }
        }
    }
}

/// Length of the complete RESP2/RESP3 reply starting at `at`, or None if incomplete.
pub fn reply_len(b: &[u8], at: usize) -> Option<usize> {
    let line_end = at + b.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
    let head = b[at];
    let n: i64 = std::str::from_utf8(&b[at + 1..line_end])
        .ok()?
        .parse()
        .unwrap_or(0);
    let after = line_end + 2;
    match head {
        b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some(after - at),
        b'$' | b'=' | b'!' => {
            if n < 0 {
                Some(after - at)
            } else if b.len() >= after + n as usize + 2 {
                Some(after + n as usize + 2 - at)
            } else {
                None
            }
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let items = if head == b'%' || head == b'|' {
                2 * n
            } else {
                n
            };
            let mut pos = after;
            for _ in 0..items.max(0) {
                pos += reply_len(b, pos)?;
            }
            Some(pos - at)
        }
        _ => panic!("not a RESP reply: {:?}", String::from_utf8_lossy(&b[at..])),
    }
}

pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Splits a command line as redis-cli does (quotes, escapes).
pub fn split(line: &str) -> Vec<Vec<u8>> {
    let mut buf = Vec::new();
    let mut spans = Vec::new();
    goblin_core::resp::parser::split_args(line.as_bytes(), &mut buf, &mut spans)
        .expect("balanced quotes");
    spans.iter().map(|&(s, e)| buf[s..e].to_vec()).collect()
}

pub fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace("\r\n", "\\r\\n")
}

/// A reply with its top-level elements sorted (pairs kept together for a RESP3 map), for commands
/// whose order Redis leaves unspecified (SMEMBERS of a hashtable set, HGETALL of a big hash...).
pub fn sorted_reply(b: &[u8]) -> Vec<u8> {
    let head = b[0];
    if !matches!(head, b'*' | b'~' | b'%') {
        return b.to_vec();
    }
    let after = b.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    let mut items = Vec::new();
    let mut pos = after;
    while pos < b.len() {
        let mut n = reply_len(b, pos).unwrap();
        if head == b'%' {
            n += reply_len(b, pos + n).unwrap();
        }
        items.push(&b[pos..pos + n]);
        pos += n;
    }
    items.sort();
    let mut out = b[..after].to_vec();
    out.extend(items.concat());
    out
}

/// A reply with its clock-dependent integers masked: each integer reply of `min_digits` digits or
/// more becomes `:<n>` (12 for Unix millisecond times, such as XINFO's seen-time; 1 for every
/// integer, such as XPENDING's idle times). Bulk payloads are left as they are.
pub fn mask_ints(b: &[u8], min_digits: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut pos = 0;
    while pos < b.len() {
        let Some(len) = b[pos..].windows(2).position(|w| w == b"\r\n") else {
            out.extend_from_slice(&b[pos..]);
            break;
        };
        let line = &b[pos..pos + len];
        let next = pos + len + 2;
        match line.first() {
            Some(b'$' | b'=' | b'!') => {
                let n: i64 = String::from_utf8_lossy(&line[1..]).parse().unwrap_or(-1);
                let end = if n >= 0 { next + n as usize + 2 } else { next };
                out.extend_from_slice(&b[pos..end.min(b.len())]);
                pos = end;
                continue;
            }
            Some(b':') if line.len() > min_digits && line[1..].iter().all(u8::is_ascii_digit) => {
                out.extend_from_slice(b":<n>\r\n");
            }
            _ => out.extend_from_slice(&b[pos..next]),
        }
        pos = next;
    }
    out
}

/// Waits until INFO shows no rewrite running and `aof_rewrites` reached `n`.
pub fn wait_rewrites(c: &mut Raw, n: i64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while info_field(c, "aof_rewrite_in_progress") != Some(0)
        || info_field(c, "aof_rewrites").unwrap_or(0) < n
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the AOF rewrite did not finish"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// BGREWRITEAOF, and waits until that rewrite is done.
pub fn rewrite_aof(c: &mut Raw) {
    let done = info_field(c, "aof_rewrites").unwrap_or(0);
    let started = c.cmd_str("BGREWRITEAOF");
    assert_eq!(started.first(), Some(&b'+'), "{}", show(&started));
    wait_rewrites(c, done + 1);
}

/// The lines of a multi-part AOF's incremental files in `dir`, in order, without bulk headers.
pub fn aof_incr_lines(dir: &Path) -> Vec<String> {
    let ad = dir.join("appendonlydir");
    let manifest = std::fs::read_to_string(ad.join("appendonly.aof.manifest")).unwrap();
    let mut text = String::new();
    for name in manifest
        .lines()
        .filter(|l| l.ends_with("type i"))
        .filter_map(|l| l.split(' ').nth(1))
    {
        text += &String::from_utf8_lossy(&std::fs::read(ad.join(name)).unwrap());
    }
    text.split("\r\n")
        .filter(|l| !l.starts_with('$'))
        .map(String::from)
        .collect()
}

/// The numeric value of INFO's `field`, as sent by `c` (`None` if absent).
pub fn info_field(c: &mut Raw, field: &str) -> Option<i64> {
    let info = String::from_utf8_lossy(&c.cmd_str("INFO")).into_owned();
    info.split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.parse().ok())
}

/// Differential check: runs each case's lines on Debian's redis-server and on Goblin Core, each case
/// on a fresh connection after FLUSHALL, and asserts every reply is byte-for-byte identical;
/// returns redis-server's compared replies (after sorting, for `~` lines), in order.
/// Line prefixes:
/// - `!` sends without waiting for a reply (CLIENT REPLY OFF/SKIP and what they silence);
/// - `#` sends and reads the reply without comparing it (e.g. `#HELLO 3`, whose client id differs);
/// - `~` compares the reply with its top-level elements sorted (see `sorted_reply`);
/// - `&` compares the reply with Unix millisecond times masked, `%` with every integer masked
///   (see `mask_ints`);
/// - `?field` compares how much INFO's numeric `field` grew since the case started or since the
///   previous `?field` (e.g. `?rdb_changes_since_last_save`, `?keyspace_hits`).
pub fn compare(cases: &[&[&str]]) -> Vec<Vec<u8>> {
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut replies = Vec::new();
    let mut failures = Vec::new();
    for (case_no, case) in cases.iter().enumerate() {
        let mut rc = r.raw();
        let mut gc = g.raw();
        rc.cmd_str("FLUSHALL");
        gc.cmd_str("FLUSHALL");
        let mut baselines = std::collections::HashMap::new();
        for line in case.iter().filter_map(|l| l.strip_prefix('?')) {
            let base = (info_field(&mut rc, line), info_field(&mut gc, line));
            baselines.insert(line.to_string(), base);
        }
        for line in *case {
            if let Some(quiet) = line.strip_prefix('#') {
                rc.cmd_str(quiet);
                gc.cmd_str(quiet);
                continue;
            }
            // `!` marks a command that gets no reply (CLIENT REPLY OFF/SKIP and what they silence).
            if let Some(silent) = line.strip_prefix('!') {
                for c in [&mut rc, &mut gc] {
                    c.send(&encode_line(silent));
                }
                continue;
            }
            if let Some(field) = line.strip_prefix('?') {
                let (now_r, now_g) = (info_field(&mut rc, field), info_field(&mut gc, field));
                let (base_r, base_g) = baselines[field];
                let want = now_r.zip(base_r).map(|(n, b)| n - b);
                let got = now_g.zip(base_g).map(|(n, b)| n - b);
                if want != got {
                    failures.push(format!(
                        "INFO {field} growth\n    redis:  {want:?}\n    goblin: {got:?}"
                    ));
                }
                baselines.insert(field.to_string(), (now_r, now_g));
                continue;
            }
            let (line, unordered, masked) = match line.as_bytes()[0] {
                b'~' => (&line[1..], true, None),
                b'&' => (&line[1..], false, Some(12)),
                b'%' => (&line[1..], false, Some(1)),
                _ => (*line, false, None),
            };
            let mut want = rc.cmd_str(line);
            let mut got = gc.cmd_str(line);
            if unordered {
                want = sorted_reply(&want);
                got = sorted_reply(&got);
            }
            if let Some(digits) = masked {
                want = mask_ints(&want, digits);
                got = mask_ints(&got, digits);
            }
            if want != got {
                failures.push(format!(
                    "case {case_no}: {line}\n    redis:  {}\n    goblin: {}",
                    show(&want),
                    show(&got)
                ));
            }
            replies.push(want);
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    replies
}

/// `compare`, then every case again in RESP3: after an uncompared `#HELLO 3`.
pub fn compare_both(cases: &[&[&str]]) {
    compare(cases);
    let resp3: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| {
            let mut v = vec!["#HELLO 3"];
            v.extend_from_slice(c);
            v
        })
        .collect();
    let refs: Vec<&[&str]> = resp3.iter().map(|v| v.as_slice()).collect();
    compare(&refs);
}

/// One command line (redis-cli quoting), RESP-encoded.
pub fn encode_line(line: &str) -> Vec<u8> {
    let args = split(line);
    encode(&args.iter().map(|a| a.as_slice()).collect::<Vec<_>>())
}

/// The connection's id (`CLIENT ID`).
pub fn client_id(c: &mut Raw) -> i64 {
    let r = c.cmd_str("CLIENT ID");
    String::from_utf8_lossy(&r[1..r.len() - 2]).parse().unwrap()
}

/// HELLO's client id differs between the servers (each counts its own connections): blank it.
pub fn mask_id(reply: Vec<u8>) -> Vec<u8> {
    let tag = b"$2\r\nid\r\n:";
    let Some(at) = reply.windows(tag.len()).position(|w| w == tag) else {
        return reply;
    };
    let start = at + tag.len();
    let end = start + reply[start..].iter().position(|&c| c == b'\r').unwrap();
    let mut out = reply[..start].to_vec();
    out.push(b'0');
    out.extend_from_slice(&reply[end..]);
    out
}

/// Waits until no client of a previous case is still subscribed (their close is asynchronous),
/// then empties the server.
pub fn settle(s: &Server) {
    let mut c = s.raw();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let idle = c.cmd_str("PUBSUB NUMPAT") == b":0\r\n"
            && c.cmd_str("PUBSUB CHANNELS") == b"*0\r\n"
            && c.cmd_str("PUBSUB SHARDCHANNELS") == b"*0\r\n";
        if idle || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    c.cmd_str("FLUSHALL");
}

/// The connections of one scenario run, opened on first use.
struct Conns<'a> {
    server: &'a Server,
    /// Letters whose client id the scenario uses (`{id:b}`).
    need_id: Vec<bool>,
    conns: Vec<Option<Raw>>,
    ids: Vec<i64>,
}

impl Conns<'_> {
    /// Connection `who`, opened (and asked its id, if the scenario uses it) on first use.
    fn get(&mut self, who: usize) -> &mut Raw {
        while self.conns.len() <= who {
            let mut c = self.server.raw();
            let n = self.conns.len();
            self.ids.push(if self.need_id[n] {
                client_id(&mut c)
            } else {
                0
            });
            self.conns.push(Some(c));
        }
        self.conns[who]
            .as_mut()
            .unwrap_or_else(|| panic!("connection {} was closed", (b'a' + who as u8) as char))
    }

    /// `line` with `{id:x}` replaced by connection x's client id.
    fn with_ids(&mut self, line: &str) -> String {
        let mut s = line.to_string();
        for who in 0..26 {
            let tag = format!("{{id:{}}}", (b'a' + who as u8) as char);
            if s.contains(&tag) {
                self.get(who);
                s = s.replace(&tag, &self.ids[who].to_string());
            }
        }
        s
    }
}

/// Runs one scenario on `server` and returns its transcript: one entry per recorded reply,
/// `"{line number}: [{connection}] {line} -> {reply}"`. Line syntax:
/// - `b:line` runs `line` on connection `b` (a letter; `a` by default); connections open on first
///   use;
/// - `cmd` sends a command and records its reply; `cmd1 ;; cmd2` sends the commands in one write
///   and records every reply;
/// - `!cmd` (or `!cmd1 ;; cmd2`, a pipeline) sends without reading;
/// - `#cmd` sends and reads without recording (e.g. `#HELLO 3`);
/// - `~cmd` records the reply with its top-level elements sorted (see `sorted_reply`); `&cmd` and
///   `%cmd` with clock-dependent integers masked (see `mask_ints`);
/// - `<` reads and records one more reply or pushed message, sending nothing (`read -> ...`); `%<`
///   with every integer masked (a client id);
/// - `quiet` records what arrived within 150 ms without consuming it (normally nothing);
/// - `close` closes the connection;
/// - `info:field` records INFO's `field:value` line (command stats without their timings);
/// - `sleep MS` lets the servers run for MS milliseconds (e.g. until a blocking command waits);
/// - `{id:b}` in a command stands for connection `b`'s client id (asked when `b` opens; the
///   transcript keeps the placeholder).
///
/// Every recorded reply has HELLO's client id masked (`mask_id`).
pub fn run_scenario(server: &Server, lines: &[&str]) -> Vec<String> {
    let text = lines.concat();
    let mut cs = Conns {
        server,
        need_id: (0..26)
            .map(|w| text.contains(&format!("{{id:{}}}", (b'a' + w as u8) as char)))
            .collect(),
        conns: Vec::new(),
        ids: Vec::new(),
    };
    let mut log = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let (who, line) = match line.as_bytes() {
            [w, b':', ..] if w.is_ascii_lowercase() => ((w - b'a') as usize, &line[2..]),
            _ => (0, *line),
        };
        let name = (b'a' + who as u8) as char;
        if let Some(ms) = line.strip_prefix("sleep ") {
            std::thread::sleep(Duration::from_millis(ms.parse().unwrap()));
            continue;
        }
        if line == "close" {
            cs.get(who);
            cs.conns[who] = None;
            continue;
        }
        if line == "quiet" {
            let conn = cs.get(who);
            conn.s
                .set_read_timeout(Some(Duration::from_millis(150)))
                .unwrap();
            let mut tmp = [0u8; 256];
            let got = match conn.s.peek(&mut tmp) {
                Ok(k) => show(&tmp[..k]),
                Err(_) => String::new(),
            };
            conn.s
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            log.push(format!("{n}: [{name}] quiet -> {got:?}"));
            continue;
        }
        if let Some(field) = line.strip_prefix("info:") {
            let r = cs.get(who).cmd_str("INFO everything");
            let text = String::from_utf8_lossy(&r).into_owned();
            let found = text
                .lines()
                .find(|l| l.starts_with(&format!("{field}:")))
                .unwrap_or("(absent)");
            // Command stats: the call counts only (timings differ).
            let found = found.split(",usec=").next().unwrap_or(found);
            log.push(format!("{n}: [{name}] info -> {found}"));
            continue;
        }
        if line == "<" || line == "%<" {
            let mut r = mask_id(cs.get(who).reply());
            if line == "%<" {
                r = mask_ints(&r, 1);
            }
            log.push(format!("{n}: [{name}] read -> {}", show(&r)));
            continue;
        }
        let (line, silent, unrecorded, unordered) = match line.as_bytes().first() {
            Some(b'!') => (&line[1..], true, false, false),
            Some(b'#') => (&line[1..], false, true, false),
            Some(b'~') => (&line[1..], false, false, true),
            _ => (line, false, false, false),
        };
        let (line, masked) = match line.as_bytes().first() {
            Some(b'&') => (&line[1..], Some(12)),
            Some(b'%') => (&line[1..], Some(1)),
            _ => (line, None),
        };
        let mut bytes = Vec::new();
        for part in line.split(" ;; ") {
            bytes.extend(encode_line(&cs.with_ids(part)));
        }
        let conn = cs.get(who);
        conn.send(&bytes);
        if silent {
            continue;
        }
        for _ in line.split(" ;; ") {
            let mut r = mask_id(conn.reply());
            if unrecorded {
                continue;
            }
            if unordered {
                r = sorted_reply(&r);
            }
            if let Some(digits) = masked {
                r = mask_ints(&r, digits);
            }
            log.push(format!("{n}: [{name}] {line} -> {}", show(&r)));
        }
    }
    log
}

/// Runs each scenario (see `run_scenario`) on redis-server and on Goblin Core, both started with
/// `args`, one after the other on one pair of servers (`settle`d before each), and asserts the
/// transcripts are identical; returns Goblin Core's.
pub fn scenarios(args: &[&str], cases: &[&[&str]]) -> Vec<Vec<String>> {
    let r = redis(args);
    let g = goblin(args);
    let mut failures = Vec::new();
    let mut logs = Vec::new();
    for (case_no, case) in cases.iter().enumerate() {
        settle(&r);
        settle(&g);
        let want = run_scenario(&r, case);
        let got = run_scenario(&g, case);
        for (w, o) in want.iter().zip(&got) {
            if w != o {
                failures.push(format!("case {case_no}:\n    redis:  {w}\n    goblin: {o}"));
            }
        }
        if want.len() != got.len() {
            failures.push(format!(
                "case {case_no}: transcripts differ in length\nredis:\n{}\ngoblin:\n{}",
                want.join("\n"),
                got.join("\n")
            ));
        }
        logs.push(got);
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    logs
}

/// One scenario (see `run_scenario`) on fresh servers; returns Goblin Core's transcript.
pub fn scenario(lines: &[&str]) -> Vec<String> {
    scenarios(&[], &[lines]).pop().unwrap()
}

/// COMMAND INFO of `info` and COMMAND DOCS of `docs`, byte for byte as redis-server answers them
/// (name, arity, flags, key positions, ACL categories, tips, key specs; summary, history and the
/// argument tree). A container's subcommands come in Redis's hash order: name them one by one.
pub fn command_info_and_docs_match_redis(info: &[&str], docs: &[&str]) {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for (sub, names) in [("INFO", info), ("DOCS", docs)] {
        for n in names {
            let line = format!("COMMAND {sub} {n}");
            assert_eq!(show(&rc.cmd_str(&line)), show(&gc.cmd_str(&line)), "{line}");
        }
    }
}

/// `<prefix>EVAL script numkeys keys... args...` (prefix: an engine's, such as `"TCL."`; `""` for
/// Lua), its reply as raw bytes.
pub fn eval_raw(
    c: &mut Raw,
    prefix: &str,
    script: &str,
    keys: &[&[u8]],
    args: &[&[u8]],
) -> Vec<u8> {
    let command = format!("{prefix}EVAL");
    let numkeys = keys.len().to_string();
    let mut line: Vec<&[u8]> = vec![command.as_bytes(), script.as_bytes(), numkeys.as_bytes()];
    line.extend_from_slice(keys);
    line.extend_from_slice(args);
    c.cmd(&line)
}

/// `<prefix>SCRIPT LOAD script`: the digest it replies (asserted to be one).
pub fn script_load(c: &mut Raw, prefix: &str, script: &str) -> String {
    let command = format!("{prefix}SCRIPT");
    let r = c.cmd(&[command.as_bytes(), b"LOAD", script.as_bytes()]);
    assert!(r.starts_with(b"$40\r\n"), "{}", show(&r));
    String::from_utf8(r[5..45].to_vec()).unwrap()
}

/// Runs every `(script, expected reply shown)` with no keys or arguments; fails listing every
/// case that replied otherwise.
pub fn check_evals(c: &mut Raw, prefix: &str, cases: &[(&str, &str)]) {
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|(script, want)| {
            let got = show(&eval_raw(c, prefix, script, &[], &[]));
            (got != *want).then(|| format!("{script:?}: got {got}, want {want}"))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// One server's transcript of a keyspace-events case (see `compare_events`): each line with its
/// reply, then the messages it caused.
pub fn events_transcript(server: &Server, flags: &str, case: &[&str]) -> Vec<String> {
    let mut a = server.raw();
    let mut sub = server.raw();
    let mut c = server.raw();
    // Publishes the markers: from `a`, one would be queued inside a MULTI.
    let mut m = server.raw();
    a.cmd_str("FLUSHALL");
    // A previous case may have stopped the active expiry cycle.
    a.cmd_str("DEBUG SET-ACTIVE-EXPIRE 1");
    a.cmd(&[
        b"CONFIG",
        b"SET",
        b"notify-keyspace-events",
        flags.as_bytes(),
    ]);
    sub.cmd_str("PSUBSCRIBE __key*__:*");
    let mut log = Vec::new();
    for (n, line) in case.iter().enumerate() {
        if let Some(ms) = line.strip_prefix("sleep ") {
            std::thread::sleep(Duration::from_millis(ms.parse().unwrap()));
        } else if line == &"<c" {
            log.push(format!("{n}: [c] read -> {}", show(&c.reply())));
        } else if let Some(cmd) = line.strip_prefix("c:!") {
            c.send(&encode_line(cmd));
        } else {
            let r = a.cmd_str(line);
            log.push(format!("{n}: {line} -> {}", show(&r)));
        }
        // Every message a line caused arrives before the marker published after it.
        let marker = format!("__keyevent@0__:marker-{n}");
        m.cmd(&[b"PUBLISH", marker.as_bytes(), b"-"]);
        loop {
            let m = sub.reply();
            if m.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                break;
            }
            log.push(format!("{n}:   message {}", show(&m)));
        }
    }
    a.cmd_str("CONFIG SET notify-keyspace-events \"\"");
    log
}

/// Keyspace notifications against Redis: each case runs on both servers with
/// `notify-keyspace-events` set to `flags` while a subscriber (PSUBSCRIBE `__key*__:*`) listens;
/// each line's reply and the messages it caused, in order, must be identical. A line may be
/// `sleep MS`, `c:!CMD` (sent on a third connection without waiting, e.g. a blocking pop) or `<c`
/// (that connection's next reply). DEBUG is enabled (`DEBUG SET-ACTIVE-EXPIRE 0` keeps the
/// active expiry cycle from racing a case's lazy expiry).
pub fn compare_events(flags: &str, cases: &[&[&str]]) {
    let debug = ["--enable-debug-command", "yes"];
    let r = redis(&debug);
    let g = goblin(&debug);
    let mut failures = Vec::new();
    for (case_no, case) in cases.iter().enumerate() {
        let want = events_transcript(&r, flags, case);
        let got = events_transcript(&g, flags, case);
        if want != got {
            failures.push(format!(
                "case {case_no}:\nredis:\n  {}\ngoblin:\n  {}",
                want.join("\n  "),
                got.join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs a Python client script of `tests/clients/` with the given server ports as arguments and
/// asserts it exits successfully after printing exactly `ok`.
pub fn run_client_script(name: &str, ports: &[u16]) {
    let script = format!("{}/tests/clients/{name}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(&script)
        .args(ports.iter().map(|p| p.to_string()))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{name} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}
