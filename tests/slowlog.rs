//! SLOWLOG and the slow log's configuration. The same scenario runs on Debian's redis-server and
//! on Goblin Core and the replies must match byte for byte once what legitimately differs is
//! blanked (entry ids, times, durations, client ports and ids); then Goblin Core's own entries
//! are checked for what a blanked comparison cannot see (durations, times, ids).

mod common;
use common::{goblin, mask_id, redis, show, Raw, Server};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Every `[id, time, duration, ...]` entry head blanked, and `127.0.0.1:port` addresses.
fn blank(reply: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(reply).into_owned();
    let mut out = String::new();
    let mut lines = text.split_inclusive("\r\n").peekable();
    while let Some(line) = lines.next() {
        if line == "*6\r\n" && lines.peek().is_some_and(|l| l.starts_with(':')) {
            out.push_str(line);
            for _ in 0..3 {
                lines.next();
                out.push_str(":N\r\n");
            }
            continue;
        }
        if let Some(port) = line.strip_prefix("127.0.0.1:") {
            let rest = port.trim_start_matches(|c: char| c.is_ascii_digit());
            out.push_str("127.0.0.1:P");
            out.push_str(rest);
            continue;
        }
        out.push_str(line);
    }
    // The address's length prefix varies with the port's digits.
    out.replace("$15\r\n127.0.0.1:P", "$A\r\n127.0.0.1:P")
        .replace("$14\r\n127.0.0.1:P", "$A\r\n127.0.0.1:P")
        .replace("$16\r\n127.0.0.1:P", "$A\r\n127.0.0.1:P")
        .into_bytes()
}

fn scenario(server: &Server) -> Vec<(String, Vec<u8>)> {
    let mut c = server.raw();
    let mut other = server.raw();
    let mut replies = Vec::new();
    let run = |c: &mut Raw, line: &str, replies: &mut Vec<(String, Vec<u8>)>| {
        let r = mask_id(c.cmd_str(line));
        replies.push((line.to_string(), blank(&r)));
    };
    let long = "v".repeat(200);
    let many: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    for line in [
        "CONFIG SET slowlog-log-slower-than 0",
        "CONFIG SET slowlog-max-len 128",
        "SLOWLOG RESET",
        &format!("SET k {long}"),
        &format!("RPUSH l {}", many.join(" ")),
        "AUTH a b",
        "AUTH a b c",
        "HELLO 2 SETNAME nm AUTH default wrong",
        "HELLO x AUTH u p",
        "CONFIG SET requirepass \"\" maxmemory 0",
        "CONFIG SET maxmemory 0 requirepass",
        "CONFIG SET nosuch 1 requirepass hidden",
        "CLIENT SETNAME me",
        "EVAL \"redis.call('set','x','1') return 1\" 0",
        "MULTI",
        "SET a 1",
        "GET a",
        "EXEC",
        "NOSUCH",
        "GET",
        "INCR k",
        "SLOWLOG LEN",
        "SLOWLOG GET -1",
        "SLOWLOG GET 2",
        "SLOWLOG GET 0",
        "SLOWLOG GET -2",
        "SLOWLOG GET x",
        "SLOWLOG GET 1 2",
        "SLOWLOG LEN x",
        "SLOWLOG RESET x",
        "SLOWLOG foo",
        "SLOWLOG",
        "SLOWLOG HELP",
        // A lower maximum applies at the next entry.
        "CONFIG SET slowlog-max-len 2",
        "SLOWLOG LEN",
        "PING",
        "SLOWLOG LEN",
        "CONFIG SET slowlog-max-len 0",
        "SLOWLOG LEN",
        "CONFIG SET slowlog-max-len 128",
        "CONFIG SET slowlog-log-slower-than -1",
        "SLOWLOG RESET",
        "PING",
        "SLOWLOG LEN",
        "CONFIG SET slowlog-log-slower-than -2",
        "CONFIG SET slowlog-max-len -1",
        "CONFIG GET slowlog-max-len",
        "CONFIG GET slowlog-log-slower-than",
        "CONFIG SET slowlog-log-slower-than 0",
        "SLOWLOG RESET",
    ] {
        run(&mut c, line, &mut replies);
    }
    // A blocked command is logged once served; one that times out is not; one ended by CLIENT
    // UNBLOCK is logged with no arguments (Redis 7.0's behaviour).
    other.send(&common::encode_line("BLPOP bl 5"));
    std::thread::sleep(Duration::from_millis(200));
    run(&mut c, "RPUSH bl x", &mut replies);
    other.reply();
    other.send(&common::encode_line("BLPOP bl2 0.05"));
    other.reply();
    let id = common::client_id(&mut other);
    other.send(&common::encode_line("BLPOP bl3 5"));
    std::thread::sleep(Duration::from_millis(200));
    c.cmd_str(&format!("CLIENT UNBLOCK {id}"));
    other.reply();
    let log = blank(&c.cmd_str("SLOWLOG GET -1"));
    let unblock = format!("UNBLOCK\r\n${}\r\n{id}\r\n", id.to_string().len());
    let log = String::from_utf8_lossy(&log).replace(&unblock, "UNBLOCK\r\n$I\r\nID\r\n");
    replies.push(("SLOWLOG GET -1".to_string(), log.into_bytes()));
    replies
}

#[test]
fn slowlog_matches_redis() {
    let (r, g) = (redis(&[]), goblin(&[]));
    let want = scenario(&r);
    let got = scenario(&g);
    let mut failures = Vec::new();
    for ((line, w), (_, g)) in want.iter().zip(&got) {
        if w != g {
            failures.push(format!(
                "{line}\n    redis:  {}\n    goblin: {}",
                show(w),
                show(g)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // What the comparison covered, so an empty log on both sides cannot pass.
    let full = &got.iter().find(|(l, _)| l == "SLOWLOG GET -1").unwrap().1;
    let text = String::from_utf8_lossy(full);
    for needle in [
        "(redacted)",
        "... (72 more bytes)",
        "... (11 more arguments)",
        "?:0",
        "nm",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    assert!(
        !text.contains("wrong") && !text.contains("hidden"),
        "a password reached the log: {text}"
    );
}

/// Parses `SLOWLOG GET` into (id, time, duration, arguments) per entry.
fn entries(c: &mut Raw) -> Vec<(i64, i64, i64, Vec<String>)> {
    let r = String::from_utf8(c.cmd_str("SLOWLOG GET -1")).unwrap();
    let lines: Vec<&str> = r.split("\r\n").collect();
    let n: usize = lines[0][1..].parse().unwrap();
    let (mut at, mut out) = (1, Vec::new());
    for _ in 0..n {
        assert_eq!(lines[at], "*6", "{r}");
        let num = |s: &str| s[1..].parse::<i64>().unwrap();
        let (id, time, micros) = (num(lines[at + 1]), num(lines[at + 2]), num(lines[at + 3]));
        let argc: usize = lines[at + 4][1..].parse().unwrap();
        let args = (0..argc)
            .map(|i| lines[at + 6 + 2 * i].to_string())
            .collect();
        at += 5 + 2 * argc + 4;
        out.push((id, time, micros, args));
    }
    out
}

#[test]
fn only_slow_commands_are_logged_with_their_duration_and_time() {
    let g = goblin(&["--enable-debug-command", "yes"]);
    let mut c = g.raw();
    c.cmd_str("CONFIG SET slowlog-log-slower-than 20000");
    c.cmd_str("SLOWLOG RESET");
    c.cmd_str("PING");
    assert_eq!(c.cmd_str("DEBUG SLEEP 0.03"), b"+OK\r\n");
    c.cmd_str("SET k v");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let log = entries(&mut c);
    assert_eq!(log.len(), 1, "{log:?}");
    let (id, time, micros, args) = &log[0];
    assert_eq!(args, &["DEBUG", "SLEEP", "0.03"]);
    assert!(*micros >= 30_000, "{micros} µs");
    assert!((now - 5..=now).contains(time), "{time} vs {now}");
    // Ids keep counting across RESET.
    c.cmd_str("SLOWLOG RESET");
    c.cmd_str("DEBUG SLEEP 0.03");
    let log = entries(&mut c);
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].0 > *id, "{} after {id}", log[0].0);
    assert_eq!(c.cmd_str("SLOWLOG LEN"), b":1\r\n");
}

#[test]
fn the_slow_log_keeps_at_most_its_maximum_newest_first() {
    let g = goblin(&["--slowlog-log-slower-than", "0", "--slowlog-max-len", "3"]);
    let mut c = g.raw();
    for i in 0..10 {
        c.cmd_str(&format!("SET k{i} v"));
    }
    let log = entries(&mut c);
    let args: Vec<&str> = log.iter().map(|e| e.3[1].as_str()).collect();
    assert_eq!(args, ["k9", "k8", "k7"]);
    let ids: Vec<i64> = log.iter().map(|e| e.0).collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1] + 1), "{ids:?}");
    assert_eq!(
        c.cmd_str("CONFIG GET slowlog-max-len"),
        b"*2\r\n$15\r\nslowlog-max-len\r\n$1\r\n3\r\n"
    );
}
