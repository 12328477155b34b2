//! `client-output-buffer-limit` for normal clients, on Goblin Core and Debian's redis-server alike:
//! a client that pipelines big replies and never reads shows its unsent output in CLIENT LIST's
//! `omem`, is closed once that passes the hard limit (or the soft limit for longer than its
//! seconds), and its buffer is given back.

mod common;

use common::{goblin, info_field, redis, Raw, Server};
use std::time::{Duration, Instant};

const VALUE_LEN: usize = 10 * 1024;

/// The CLIENT LIST line of the client named `name`, if connected.
fn client_line(admin: &mut Raw, name: &str) -> Option<String> {
    let list = String::from_utf8(admin.cmd_str("CLIENT LIST")).unwrap();
    list.lines()
        .find(|l| l.contains(&format!(" name={name} ")))
        .map(String::from)
}

fn field(line: &str, name: &str) -> u64 {
    line.split(' ')
        .find_map(|f| f.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} in {line}"))
        .parse()
        .unwrap()
}

/// Waits until the client named `name` is gone; false if it is still there after `within`.
fn gone_within(admin: &mut Raw, name: &str, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if client_line(admin, name).is_none() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A client named `name` that asks for `gets` copies of the big value without reading them.
fn greedy(s: &Server, name: &str, gets: usize) -> Raw {
    let mut c = s.raw();
    assert_eq!(c.cmd_str(&format!("CLIENT SETNAME {name}")), b"+OK\r\n");
    c.send(&b"GET big\r\n".repeat(gets));
    c
}

/// Reads what the server still sent until it closed the connection (an end of file, or a reset);
/// false if it is still open.
fn closed(c: &mut Raw) -> bool {
    use std::io::Read;
    c.s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut tmp = vec![0u8; 1 << 16];
    loop {
        match c.s.read(&mut tmp) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

fn servers(args: &[&str]) -> Vec<(&'static str, Server)> {
    vec![("redis", redis(args)), ("goblin", goblin(args))]
}

/// With no normal limit (the default), a client that never reads holds its replies in the server
/// (CLIENT LIST `omem`); setting a hard limit closes it at its next reply, and the memory goes.
#[test]
fn hard_limit_closes_a_client_that_never_reads() {
    for (name, s) in servers(&[]) {
        let mut admin = s.raw();
        let value = "x".repeat(VALUE_LEN);
        assert_eq!(admin.cmd(&[b"SET", b"big", value.as_bytes()]), b"+OK\r\n");
        let before = info_field(&mut admin, "used_memory").unwrap();
        let mut x = greedy(&s, "greedy", 2000);
        // 20 MB of replies: far more than the sockets' kernel buffers take.
        let start = Instant::now();
        let omem = loop {
            let line = client_line(&mut admin, "greedy").expect("still connected");
            let omem = field(&line, "omem");
            if omem > 8 << 20 || start.elapsed() > Duration::from_secs(10) {
                assert!(field(&line, "tot-mem") >= omem, "{name}: {line}");
                break omem;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(omem > 8 << 20, "{name}: omem {omem}");
        let held = info_field(&mut admin, "used_memory").unwrap();
        assert!(
            held - before > 8 << 20,
            "{name}: used_memory {before} -> {held}"
        );

        assert_eq!(
            admin.cmd_str("CONFIG SET client-output-buffer-limit \"normal 1mb 0 0\""),
            b"+OK\r\n"
        );
        x.send(b"GET big\r\n");
        assert!(
            gone_within(&mut admin, "greedy", Duration::from_secs(10)),
            "{name}"
        );
        let after = info_field(&mut admin, "used_memory").unwrap();
        assert!(
            after < before + (2 << 20),
            "{name}: used_memory {before} -> {after}"
        );
        assert!(closed(&mut x), "{name}");
    }
}

/// Past the hard limit the client is closed while its pipeline is still being read: the server
/// never buffers the whole 40 MB it asked for.
#[test]
fn hard_limit_holds_during_one_pipeline() {
    for (name, s) in servers(&["--client-output-buffer-limit", "normal 4mb 2mb 10"]) {
        let mut admin = s.raw();
        let value = "x".repeat(VALUE_LEN);
        assert_eq!(admin.cmd(&[b"SET", b"big", value.as_bytes()]), b"+OK\r\n");
        let before = info_field(&mut admin, "used_memory").unwrap();
        let mut x = greedy(&s, "greedy", 4000);
        assert!(
            gone_within(&mut admin, "greedy", Duration::from_secs(10)),
            "{name}"
        );
        let peak = info_field(&mut admin, "used_memory_peak").unwrap();
        assert!(
            peak < before + (16 << 20),
            "{name}: peak {peak} from {before}"
        );
        assert!(closed(&mut x), "{name}");
        assert_eq!(admin.cmd_str("PING"), b"+PONG\r\n");
    }
}

/// Over the soft limit, a client is closed only when a reply finds it still over after the soft
/// seconds have passed.
#[test]
fn soft_limit_closes_after_its_seconds() {
    for (name, s) in servers(&["--client-output-buffer-limit", "normal 0 1mb 2"]) {
        let mut admin = s.raw();
        let value = "x".repeat(VALUE_LEN);
        assert_eq!(admin.cmd(&[b"SET", b"big", value.as_bytes()]), b"+OK\r\n");
        let mut x = greedy(&s, "greedy", 2000);
        std::thread::sleep(Duration::from_millis(500));
        let line = client_line(&mut admin, "greedy")
            .unwrap_or_else(|| panic!("{name}: closed before its soft limit's seconds"));
        assert!(field(&line, "omem") > 1 << 20, "{name}: {line}");
        // Past the 2 seconds (counted in whole seconds, as Redis does), the next reply closes it.
        std::thread::sleep(Duration::from_millis(3500));
        x.send(b"GET big\r\n");
        assert!(
            gone_within(&mut admin, "greedy", Duration::from_secs(10)),
            "{name}"
        );
        assert!(closed(&mut x), "{name}");
    }
}
