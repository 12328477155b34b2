//! MONITOR: the same commands go to Debian's redis-server and to Goblin Core while a client
//! monitors, and the monitor streams must match line for line once times and client ports are
//! blanked: what is shown (not admin commands, not refused ones, a script's calls after the
//! script, EXEC after the commands it ran), argument quoting, secrets redacted, and what a monitor
//! may still do itself.

mod common;
use common::{goblin, redis, show, Raw, Server};
use std::time::Duration;

/// `+<secs>.<µs> [db 127.0.0.1:<port>] ...` with the time and port blanked, and integer replies.
fn blank(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line).into_owned();
    // The monitor's own CLIENT ID differs between the servers.
    if text.starts_with(':') {
        return ":N\r\n".to_string();
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    if let Some(r) = rest.strip_prefix('+') {
        if let Some(sp) = r.find(" [") {
            if r[..sp].bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                out.push_str("+T");
                rest = &r[sp..];
            }
        }
    }
    while let Some(at) = rest.find("127.0.0.1:") {
        out.push_str(&rest[..at]);
        out.push_str("127.0.0.1:P");
        rest = rest[at + 10..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Reads replies from `c` until one contains `marker`.
fn until(c: &mut Raw, marker: &str) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        let r = c.reply();
        let done = String::from_utf8_lossy(&r).contains(marker);
        lines.push(blank(&r));
        if done {
            return lines;
        }
    }
}

fn scenario(server: &Server) -> Vec<String> {
    let mut m = server.raw();
    assert_eq!(m.cmd_str("MONITOR"), b"+OK\r\n");
    let (mut c, mut other) = (server.raw(), server.raw());
    c.cmd(&[b"SET", b"k", b"a \"q\" \\ \n\t\x07\x08\x01\xff \xc3\xa9"]);
    for line in [
        "SELECT 2",
        "EVAL \"redis.call('select','3') redis.call('set','x','1') return 1\" 0",
        "MULTI",
        "SET a 1",
        "GET a",
        "EXEC",
        "NOSUCH",
        "GET",
        "AUTH p",
        "AUTH u p x",
        "HELLO 2 AUTH u p",
        "HELLO 3 SETNAME n",
        "HELLO 2",
        "CONFIG GET port",
        "SLOWLOG LEN",
        "CLIENT ID",
        "PING",
        "EXEC",
        "MULTI",
        "NOSUCH",
        "EXEC",
        "WATCH wk",
        "MULTI",
        "SET q 1",
    ] {
        c.cmd_str(line);
    }
    other.cmd_str("SET wk changed");
    for line in [
        "EXEC",
        "INCR k",
        "EVAL \"return redis.call('nosuch')\" 0",
        "EVAL_RO \"return redis.call('get','k')\" 0",
        "FUNCTION LOAD \"#!lua name=lib\nredis.register_function('f', function(k, a) return redis.call('get', 'k') end)\"",
        "FCALL f 0",
        "FUNCTION DELETE lib",
        "MULTI",
        "MONITOR",
        "EXEC",
        "EXEC x",
    ] {
        c.cmd_str(line);
    }
    // A blocked command is shown when it blocks, not again when it is served.
    other.send(&common::encode_line("BLPOP bl 5"));
    std::thread::sleep(Duration::from_millis(100));
    c.cmd_str("SELECT 0");
    c.cmd_str("RPUSH bl x");
    other.reply();
    c.cmd_str("ECHO end-of-clients");
    let mut stream = until(&mut m, "end-of-clients");
    // What the monitor itself may do: a second MONITOR has no reply; no keyspace access;
    // RESET ends monitoring.
    for line in [
        "PING",
        "CLIENT ID",
        "MONITOR",
        "GET k",
        "EVAL \"return 1\" 0",
        "PUBLISH ch m",
        "SUBSCRIBE ch",
        "INFO server",
        "RESET",
        "ECHO end-of-monitor",
    ] {
        m.send(&common::encode_line(line));
    }
    stream.extend(until(&mut m, "end-of-monitor"));
    c.cmd_str("SET after reset");
    assert_eq!(m.cmd_str("ECHO still-here"), b"$10\r\nstill-here\r\n");
    stream
}

#[test]
fn monitor_stream_matches_redis() {
    let (r, g) = (redis(&[]), goblin(&[]));
    let want = scenario(&r);
    let got = scenario(&g);
    assert_eq!(
        want,
        got,
        "\nredis:\n{}\ngoblin:\n{}",
        want.join(""),
        got.join("")
    );
    let text = got.join("");
    for needle in [
        "\"a \\\"q\\\" \\\\ \\n\\t\\a\\b\\x01\\xff \\xc3\\xa9\"",
        "[3 lua] \"set\" \"x\" \"1\"",
        "\"AUTH\" \"(redacted)\"",
        "\"BLPOP\" \"bl\" \"5\"",
        "Replica can't interact with the keyspace",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    assert!(
        !text.contains("CONFIG"),
        "an admin command was shown:\n{text}"
    );
}

#[test]
fn unix_socket_clients_and_closed_monitors() {
    let dir = common::scratch_dir("monitor-unix");
    let sock = dir.join("goblin.sock");
    let sock_s = sock.to_str().unwrap();
    let g = goblin(&["--unixsocket", sock_s]);
    let mut m = g.raw();
    assert_eq!(m.cmd_str("MONITOR"), b"+OK\r\n");
    // A monitor that goes away is forgotten: the next command must not fail or stall.
    let mut gone = g.raw();
    assert_eq!(gone.cmd_str("MONITOR"), b"+OK\r\n");
    drop(gone);
    std::thread::sleep(Duration::from_millis(100));
    let mut u = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    use std::io::{Read, Write};
    u.write_all(&common::encode_line("SET via unix")).unwrap();
    let mut buf = [0u8; 5];
    u.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"+OK\r\n");
    let line = m.reply();
    let want = format!("[0 unix:{sock_s}] \"SET\" \"via\" \"unix\"\r\n");
    assert!(
        String::from_utf8_lossy(&line).ends_with(&want),
        "{}",
        show(&line)
    );
    // CLIENT LIST flags a monitor with O.
    let mut c = g.raw();
    let list = String::from_utf8(c.cmd_str("CLIENT LIST")).unwrap();
    assert_eq!(list.matches(" flags=O ").count(), 1, "{list}");
    // MONITOR queued in a transaction is refused when EXEC runs it.
    c.cmd_str("MULTI");
    c.cmd_str("MONITOR");
    assert_eq!(
        c.cmd_str("EXEC"),
        b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n"
    );
}
