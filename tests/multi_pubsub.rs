//! Transactions and pub/sub: differential cases against redis-server (several connections per case,
//! replies compared byte for byte), fan-out and ordering over raw sockets, the slow-subscriber output
//! limit, and the `redis` crate's transaction and pub/sub APIs.

mod common;
use std::io::Read;
use std::time::{Duration, Instant};

use common::{encode, goblin, redis, scenarios, show, Raw, Server};

const DEBUG: &[&str] = &["--enable-debug-command", "yes"];

#[test]
fn transactions() {
    scenarios(
        DEBUG,
        &[
            &["MULTI", "SET a 1", "INCR a", "GET a", "EXEC", "GET a"],
            // The queued commands share EXEC's instant (a key that expires during the transaction
            // is still there inside it); commands after EXEC see the time move on.
            &["SET b 1 PX 50 ;; MULTI ;; DEBUG SLEEP 0.1 ;; GET b ;; EXEC ;; GET b"],
            &["SET b 1 PX 50 ;; DEBUG SLEEP 0.1 ;; GET b"],
            &["EXEC", "DISCARD", "MULTI", "MULTI", "SET a 1", "EXEC"],
            &["MULTI", "EXEC", "MULTI", "DISCARD", "GET a", "DISCARD"],
            &["MULTI", "SET a 1", "DISCARD", "GET a", "EXEC"],
            // Errors at queue time abort the transaction.
            &[
                "MULTI",
                "SET a 1",
                "NOSUCHCMD x",
                "SET b 2",
                "EXEC",
                "MGET a b",
                "EXEC",
            ],
            &["MULTI", "SET a", "EXEC"],
            &["MULTI", "GET", "SET b 1", "EXEC", "GET b"],
            &["MULTI", "CONFIG NOSUCH", "EXEC"],
            &["MULTI", "CONFIG", "EXEC"],
            &["MULTI", "SHUTDOWN", "EXEC"],
            &["MULTI", "WATCH x", "SET x 1", "EXEC", "GET x"],
            &["MULTI", "MULTI", "SET x 1", "EXEC"],
            // Runtime errors don't stop the rest.
            &[
                "SET s notanumber",
                "MULTI",
                "INCR s",
                "SET t 1",
                "INCRBYFLOAT s 1",
                "INCR t",
                "EXEC",
            ],
            &[
                "MULTI",
                "INCRBY k abc",
                "GET k",
                "SET k 5",
                "INCR k",
                "EXEC",
            ],
            // Queued commands that change the connection.
            &[
                "MULTI", "SELECT 2", "SET k v", "EXEC", "GET k", "SELECT 0", "GET k",
            ],
            &["MULTI", "SELECT 99", "PING", "EXEC"],
            &["MULTI", "PING", "ECHO hi", "UNWATCH", "EXEC"],
            &["MULTI", "QUIT"],
            &["MULTI", "SET a 1", "RESET", "EXEC", "GET a"],
            &["multi", "set a 1", "exec", "Multi", "Exec"],
            &[
                "MULTI",
                "EXEC x",
                "EXEC",
                "MULTI",
                "DISCARD x",
                "DISCARD",
                "EXEC x",
                "DISCARD x",
            ],
            &[
                "SUBSCRIBE q",
                "EXEC",
                "DISCARD",
                "MULTI",
                "UNSUBSCRIBE",
                "EXEC",
            ],
            &[
                "b:CONFIG SET requirepass pw",
                "c:EXEC",
                "c:MULTI",
                "c:AUTH pw",
                "c:MULTI",
                "c:SET k v",
                "c:EXEC",
                "CONFIG SET requirepass \"\"",
            ],
            &["MULTI x", "WATCH", "UNWATCH x"],
            // Replies of every shape inside EXEC.
            &[
                "MULTI",
                "SET k 1",
                "GET nokey",
                "MGET k nokey",
                "TTL k",
                "CONFIG GET maxmemory",
                "EXEC",
            ],
            &[
                "HELLO 3",
                "MULTI",
                "SET k 1",
                "GET nokey",
                "CONFIG GET maxmemory",
                "INCR nokey2",
                "EXEC",
            ],
            &["HELLO 3", "MULTI", "SET a", "EXEC", "EXEC", "DISCARD"],
            &["HELLO 3", "MULTI", "MULTI", "WATCH k", "EXEC"],
            // The stats EXEC and its commands count as Redis counts them.
            &[
                "CONFIG RESETSTAT",
                "MULTI",
                "SET k 2",
                "INCR k",
                "SET k x",
                "INCR k",
                "EXEC",
                "MULTI",
                "SET k",
                "EXEC",
                "INFO errorstats",
            ],
        ],
    );
}

/// INFO commandstats lines (calls, rejected and failed counts, without the timings), sorted.
fn commandstats(c: &mut Raw) -> Vec<String> {
    let reply = c.cmd_str("INFO commandstats");
    let text = String::from_utf8_lossy(&reply).into_owned();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("cmdstat_"))
        .map(|l| {
            l.split(',')
                .filter(|f| !f.starts_with("usec"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    lines.sort();
    lines
}

fn stat(c: &mut Raw, name: &str) -> String {
    let reply = c.cmd_str("INFO stats");
    let text = String::from_utf8_lossy(&reply).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")).map(String::from))
        .unwrap_or_default()
}

#[test]
fn exec_statistics() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut results = Vec::new();
    for s in [&r, &g] {
        let mut c = s.raw();
        for line in [
            "CONFIG RESETSTAT",
            "MULTI",
            "SET k 2",
            "INCR k",
            "SET k x",
            "INCR k",
            "EXEC",
            "MULTI",
            "SET k",
            "EXEC",
            "MULTI",
            "MULTI",
            "EXEC",
        ] {
            c.cmd_str(line);
        }
        let processed = stat(&mut c, "total_commands_processed");
        let errors = stat(&mut c, "total_error_replies");
        results.push((commandstats(&mut c), processed, errors));
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[1].1, "12");
}

#[test]
fn watch() {
    scenarios(
        DEBUG,
        &[
            // Another connection changes the key: EXEC returns a null array.
            &[
                "SET k 1",
                "WATCH k",
                "b:SET k 2",
                "MULTI",
                "GET k",
                "EXEC",
                "GET k",
            ],
            &["HELLO 3", "WATCH k", "b:SET k 2", "MULTI", "GET k", "EXEC"],
            &[
                "WATCH k",
                "b:DEL nokey",
                "b:SET other 1",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &["WATCH k", "b:SET k 1", "b:DEL k", "MULTI", "PING", "EXEC"],
            &[
                "SET k 1",
                "WATCH k",
                "b:EXPIRE k 100",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &["SET k 1", "WATCH k", "b:GET k", "MULTI", "PING", "EXEC"],
            &["SET k 1", "WATCH k", "b:PERSIST k", "MULTI", "PING", "EXEC"],
            &["WATCH k", "b:SET k 2", "UNWATCH", "MULTI", "PING", "EXEC"],
            &[
                "WATCH k",
                "b:SET k 2",
                "MULTI",
                "DISCARD",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &["WATCH k", "b:SET k 2", "RESET", "MULTI", "PING", "EXEC"],
            &["WATCH k", "b:SET k 2", "WATCH j", "MULTI", "PING", "EXEC"],
            &["WATCH a b c", "b:SET c 1", "MULTI", "PING", "EXEC"],
            &["WATCH k k k", "MULTI", "PING", "EXEC", "MULTI", "EXEC"],
            // The watcher's own change counts too.
            &["WATCH k", "SET k 1", "MULTI", "PING", "EXEC"],
            // A second EXEC doesn't see the old watch.
            &[
                "WATCH k",
                "MULTI",
                "EXEC",
                "b:SET k 1",
                "MULTI",
                "PING",
                "EXEC",
            ],
            // Keys are watched per database.
            &[
                "WATCH k",
                "b:SELECT 1",
                "b:SET k 1",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &[
                "SELECT 3",
                "WATCH k",
                "b:SELECT 3",
                "b:SET k 1",
                "MULTI",
                "EXEC",
            ],
            // FLUSHDB / FLUSHALL touch only watched keys that exist.
            &["WATCH k", "b:FLUSHDB", "MULTI", "PING", "EXEC"],
            &["SET k 1", "WATCH k", "b:FLUSHDB", "MULTI", "PING", "EXEC"],
            &[
                "WATCH k",
                "b:SELECT 1",
                "b:SET k 1",
                "b:FLUSHDB",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &[
                "SET k 1",
                "WATCH k",
                "b:SELECT 1",
                "b:FLUSHDB",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &["SET k 1", "WATCH k", "b:FLUSHALL", "MULTI", "PING", "EXEC"],
            &["WATCH k", "b:FLUSHALL", "MULTI", "PING", "EXEC"],
            // SWAPDB: the key in either database counts.
            &[
                "WATCH k",
                "b:SELECT 1",
                "b:SET k 1",
                "b:SWAPDB 0 1",
                "MULTI",
                "EXEC",
            ],
            &["SET k 1", "WATCH k", "b:SWAPDB 0 1", "MULTI", "EXEC"],
            &["WATCH k", "b:SWAPDB 0 1", "MULTI", "EXEC"],
            &["WATCH k", "b:SWAPDB 1 2", "MULTI", "EXEC"],
            // Expiry: a key watched live that expires before EXEC aborts it (one pipeline, so the
            // active expiry cycle cannot reclaim it first).
            &["SET t v PX 100 ;; WATCH t ;; DEBUG SLEEP 0.2 ;; MULTI ;; EXEC"],
            // Already expired at WATCH time: its expiry is no change.
            &["SET t v PX 50 ;; DEBUG SLEEP 0.1 ;; WATCH t ;; MULTI ;; EXEC"],
            &["SET t v PX 50 ;; DEBUG SLEEP 0.1 ;; WATCH t ;; SET t x ;; MULTI ;; EXEC"],
            &["SET t v PX 50 ;; DEBUG SLEEP 0.1 ;; WATCH t ;; DEL t ;; MULTI ;; EXEC"],
            &["SET t v PX 50 ;; DEBUG SLEEP 0.1 ;; WATCH t ;; FLUSHDB ;; MULTI ;; EXEC"],
            &["SET t v PX 100 ;; WATCH t ;; DEBUG SLEEP 0.2 ;; FLUSHDB ;; MULTI ;; EXEC"],
            &["SET t v PX 100 ;; WATCH t ;; DEBUG SLEEP 0.2 ;; GET t ;; MULTI ;; EXEC"],
            // Reclaimed by the active expiry cycle (DBSIZE 0 shows it ran): a change if the key was
            // live at WATCH time, none if it had already expired.
            &[
                "SET t v PX 30 ;; WATCH t",
                "sleep 400",
                "DBSIZE",
                "MULTI",
                "PING",
                "EXEC",
            ],
            &[
                "SET t v PX 30 ;; DEBUG SLEEP 0.05 ;; WATCH t",
                "sleep 400",
                "DBSIZE",
                "MULTI",
                "PING",
                "EXEC",
            ],
            // The transaction itself changing a watched key is fine.
            &["WATCH k", "MULTI", "SET k 1", "EXEC", "GET k"],
        ],
    );
}

/// CLIENT INFO fields `flags`, `sub`, `psub`, `ssub`, `multi` (the rest differs by nature).
fn client_fields(c: &mut Raw) -> String {
    let reply = c.cmd_str("CLIENT INFO");
    let text = String::from_utf8_lossy(&reply).into_owned();
    text.split_whitespace()
        .filter(|f| {
            ["flags=", "sub=", "psub=", "ssub=", "multi="]
                .iter()
                .any(|p| f.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn client_list_fields() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let mut seen = Vec::new();
    for s in [&r, &g] {
        let mut a = s.raw();
        let mut b = s.raw();
        let mut out = vec![client_fields(&mut a)];
        a.cmd_str("WATCH k");
        b.cmd_str("SET k 1");
        out.push(client_fields(&mut a));
        a.cmd_str("MULTI");
        a.cmd_str("SET x 1");
        a.cmd_str("SET y 1");
        // Inside EXEC, the client is still in MULTI with its queued count.
        a.cmd_str("CLIENT INFO");
        let exec = a.cmd_str("EXEC");
        let info = String::from_utf8_lossy(&exec).into_owned();
        out.push(
            info.split_whitespace()
                .filter(|f| f.starts_with("flags=") || f.starts_with("multi="))
                .collect::<Vec<_>>()
                .join(" "),
        );
        out.push(client_fields(&mut a));
        a.cmd_str("MULTI");
        a.cmd_str("PING");
        // CLIENT LIST from another connection sees the queue.
        let list = b.cmd_str("CLIENT LIST");
        let text = String::from_utf8_lossy(&list).into_owned();
        out.push(
            text.lines()
                .flat_map(|l| l.split_whitespace())
                .filter(|f| f.starts_with("flags=") || f.starts_with("multi="))
                .collect::<Vec<_>>()
                .join(" "),
        );
        a.cmd_str("DISCARD");
        b.cmd_str("SUBSCRIBE c1 c2");
        b.reply();
        b.cmd_str("PSUBSCRIBE p*");
        b.cmd_str("SSUBSCRIBE s");
        out.push(client_fields(&mut a));
        let list = a.cmd_str("CLIENT LIST TYPE pubsub");
        let text = String::from_utf8_lossy(&list).into_owned();
        out.push(
            text.split_whitespace()
                .filter(|f| {
                    ["flags=", "sub=", "psub=", "ssub="]
                        .iter()
                        .any(|p| f.starts_with(p))
                })
                .collect::<Vec<_>>()
                .join(" "),
        );
        let normal = a.cmd_str("CLIENT LIST TYPE normal");
        out.push(String::from_utf8_lossy(&normal).lines().count().to_string());
        let info = a.cmd_str("INFO stats");
        let text = String::from_utf8_lossy(&info).into_owned();
        out.extend(
            text.lines()
                .filter(|l| l.starts_with("pubsub"))
                .map(String::from),
        );
        seen.push(out);
    }
    assert_eq!(seen[0], seen[1]);
    assert!(
        seen[1].iter().any(|l| l.contains("flags=P")),
        "{:?}",
        seen[1]
    );
}

/// CLIENT REPLY OFF or SKIP silences replies but not pushes: subscription confirmations and
/// messages still arrive (Redis's CLIENT_PUSHING), in RESP3 and RESP2 alike; a subscriber waiting for
/// its confirmation never hangs.
#[test]
fn reply_off_still_delivers_pushes() {
    scenarios(
        &[],
        &[
            &[
                "#HELLO 3",
                "!CLIENT REPLY OFF",
                "!SUBSCRIBE ch other",
                "<",
                "<",
                "b:PUBLISH ch hi",
                "<",
                "!PING",
                "!PUBLISH ch self",
                "<",
                "!PSUBSCRIBE p*",
                "<",
                "b:PUBLISH pq there",
                "<",
                // Named: UNSUBSCRIBE alone goes in Redis's hash order.
                "!UNSUBSCRIBE ch other",
                "<",
                "<",
                "quiet",
                "CLIENT REPLY ON",
                "PING",
            ],
            &[
                "!CLIENT REPLY OFF",
                "!SUBSCRIBE ch",
                "<",
                "b:PUBLISH ch hi",
                "<",
                "!UNSUBSCRIBE ch",
                "<",
                "quiet",
                "CLIENT REPLY ON",
                "PING",
            ],
            &[
                "#HELLO 3",
                "!CLIENT REPLY SKIP",
                "!SUBSCRIBE ch",
                "<",
                "quiet",
                "PING",
                "UNSUBSCRIBE ch",
            ],
        ],
    );
}

#[test]
fn pubsub_commands() {
    scenarios(
        DEBUG,
        &[
            &[
                "SUBSCRIBE a",
                "PSUBSCRIBE p*",
                "SSUBSCRIBE s",
                "SSUBSCRIBE s2 s",
                "<",
                "SUBSCRIBE a b",
                "<",
                "b:PUBLISH a hi",
                "<",
                "b:PUBLISH pa x",
                "<",
                "b:SPUBLISH s y",
                "<",
                "b:PUBLISH s z",
                "b:PUBSUB NUMSUB a b c",
                "b:PUBSUB NUMSUB",
                "b:PUBSUB NUMPAT",
                "b:PUBSUB SHARDNUMSUB s s2 x",
                "b:PUBSUB SHARDNUMSUB",
                "b:~PUBSUB SHARDCHANNELS",
                "b:PUBSUB SHARDCHANNELS s?",
                "b:~PUBSUB CHANNELS",
                "b:PUBSUB CHANNELS a*",
                "b:~PUBSUB CHANNELS [ab]",
                "b:PUBSUB CHANNELS nomatch",
                "UNSUBSCRIBE a x",
                "<",
                "SUNSUBSCRIBE s2",
                "PUNSUBSCRIBE p* q*",
                "<",
                "b:PUBSUB NUMPAT",
            ],
            // Errors and arity.
            &[
                "PUBSUB",
                "PUBSUB foo",
                "PUBSUB HELP",
                "PUBSUB help x",
                "PUBSUB NUMPAT x",
                "PUBSUB CHANNELS a b",
                "PUBSUB SHARDCHANNELS a b",
                "PUBLISH a",
                "PUBLISH a b c",
                "SPUBLISH a",
                "SUBSCRIBE",
                "PSUBSCRIBE",
                "SSUBSCRIBE",
                "PUBLISH nobody hello",
                "SPUBLISH nobody hello",
            ],
            // Unsubscribing with nothing subscribed.
            &[
                "UNSUBSCRIBE",
                "PUNSUBSCRIBE",
                "SUNSUBSCRIBE",
                "UNSUBSCRIBE x",
                "PUNSUBSCRIBE x*",
            ],
            &[
                "HELLO 3",
                "UNSUBSCRIBE",
                "PUNSUBSCRIBE",
                "SUNSUBSCRIBE",
                "SUNSUBSCRIBE x",
            ],
            // Unsubscribe-all from one channel each, so the order is defined.
            &[
                "SUBSCRIBE a",
                "PSUBSCRIBE a*",
                "SSUBSCRIBE s",
                "UNSUBSCRIBE",
                "PUNSUBSCRIBE",
                "SUNSUBSCRIBE",
                "PING",
            ],
            // RESP2 subscriber mode: only a few commands, with Redis's error text.
            &[
                "SUBSCRIBE a",
                "PING",
                "PING hello",
                "PING a b",
                "SET x 1",
                "GET x",
                "MULTI",
                "CLIENT INFO",
                "PUBLISH a x",
                "SPUBLISH a x",
                "HELLO 2",
                "PUBSUB NUMPAT",
                "SELECT 1",
                "NOSUCH",
                "GET",
                "PSUBSCRIBE b*",
                "UNSUBSCRIBE a",
                "PING",
                "PUNSUBSCRIBE",
                "PING",
                "SET x 1",
            ],
            // Shard subscriptions keep subscriber mode too.
            &[
                "SSUBSCRIBE s",
                "SUBSCRIBE c",
                "UNSUBSCRIBE c",
                "PING",
                "SET x 1",
                "SUNSUBSCRIBE",
                "PING",
            ],
            &["SUBSCRIBE a", "QUIT"],
            &[
                "SUBSCRIBE a",
                "RESET",
                "PING",
                "b:PUBSUB NUMSUB a",
                "SET x 1",
            ],
            // RESP3: pushes, and every command allowed.
            &[
                "HELLO 3",
                "SUBSCRIBE a",
                "PSUBSCRIBE a*",
                "SSUBSCRIBE s",
                "PING",
                "PING x",
                "GET x",
                "b:PUBLISH a msg",
                "<",
                "<",
                "b:SPUBLISH s smsg",
                "<",
                "SET foo bar",
                "PUBLISH a self",
                "<",
                "<",
                "UNSUBSCRIBE",
                "PUNSUBSCRIBE",
                "SUNSUBSCRIBE",
                "PUBSUB NUMSUB a",
            ],
            // Pub/sub inside MULTI: SUBSCRIBE works, SSUBSCRIBE is refused (deny-blocking in EXEC).
            &[
                "MULTI",
                "SUBSCRIBE a b",
                "PING",
                "SSUBSCRIBE s",
                "PSUBSCRIBE p*",
                "EXEC",
                "<",
                "PING",
                "PUNSUBSCRIBE",
                "UNSUBSCRIBE a",
                "UNSUBSCRIBE b",
                "PING",
            ],
            &[
                "HELLO 3",
                "MULTI",
                "SUBSCRIBE a",
                "PUBLISH a x",
                "EXEC",
                "UNSUBSCRIBE",
            ],
            // Patterns: glob syntax and a channel matching several subscriptions.
            &[
                "PSUBSCRIBE h?llo",
                "b:PSUBSCRIBE h[ae]llo",
                "c:PSUBSCRIBE *",
                "d:PUBLISH hello 1",
                "<",
                "b:<",
                "c:<",
                "d:PUBLISH hallo 2",
                "<",
                "c:<",
                "d:PUBLISH hxllo 3",
                "<",
                "c:<",
                "d:PUBLISH Hello 4",
                "c:<",
                "d:PUBSUB NUMPAT",
                "d:PUBSUB CHANNELS",
            ],
            // The same client subscribed to a channel and a matching pattern gets both.
            &[
                "SUBSCRIBE news",
                "PSUBSCRIBE n*",
                "b:PUBLISH news hi",
                "<",
                "<",
                "b:PUBLISH nope x",
                "<",
            ],
            // Binary-safe channels and payloads.
            &[
                "SUBSCRIBE \"a\\x00b\"",
                "b:PUBLISH \"a\\x00b\" \"\\r\\n\\x00\"",
                "<",
                "b:PUBLISH \"\" \"\"",
                "b:PUBSUB NUMSUB \"a\\x00b\"",
            ],
            // COMMAND INFO / DOCS of the new commands.
            &[
                "COMMAND INFO multi exec discard unwatch",
                "COMMAND INFO subscribe unsubscribe psubscribe punsubscribe publish",
                "COMMAND INFO pubsub|numsub pubsub|help pubsub|channels",
                "COMMAND DOCS multi exec unwatch",
                "COMMAND DOCS publish subscribe",
            ],
        ],
    );
}

/// Publishes over raw sockets to many subscribers (channel and pattern) and returns what every
/// subscriber received and what every PUBLISH answered.
fn fan_out(s: &Server, subscribers: usize, messages: usize) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut subs = Vec::new();
    for i in 0..subscribers {
        let mut c = s.raw();
        if i % 3 == 0 {
            c.cmd_str("PSUBSCRIBE news.*");
        } else if i % 3 == 1 {
            c.cmd_str("SUBSCRIBE news.sport news.other");
            c.reply();
        } else {
            c.cmd_str("HELLO 3");
            c.cmd_str("SUBSCRIBE news.sport");
        }
        subs.push(c);
    }
    let mut publisher = s.raw();
    let mut answers = Vec::new();
    let mut batch = Vec::new();
    for m in 0..messages {
        let ch = if m % 4 == 0 {
            "news.other"
        } else {
            "news.sport"
        };
        batch.extend(encode(&[
            b"PUBLISH",
            ch.as_bytes(),
            format!("msg-{m}").as_bytes(),
        ]));
    }
    publisher.send(&batch);
    for _ in 0..messages {
        answers.push(publisher.reply());
    }
    let mut received = Vec::new();
    for (i, c) in subs.iter_mut().enumerate() {
        let expected = match i % 3 {
            0 | 1 => messages,
            _ => messages - messages.div_ceil(4),
        };
        let mut all = Vec::new();
        for _ in 0..expected {
            all.extend(c.reply());
        }
        received.push(all);
    }
    (received, answers)
}

#[test]
fn fan_out_to_many_subscribers_in_order() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (want_recv, want_ans) = fan_out(&r, 30, 200);
    let (got_recv, got_ans) = fan_out(&g, 30, 200);
    assert_eq!(want_ans, got_ans);
    // Every PUBLISH reached its subscribers: 10 pattern + 10 two-channel + (10 RESP3 on sport).
    assert_eq!(show(&got_ans[0]), ":20\\r\\n");
    assert_eq!(show(&got_ans[1]), ":30\\r\\n");
    for (i, (w, g)) in want_recv.iter().zip(&got_recv).enumerate() {
        assert!(w == g, "subscriber {i} differs:\n{}\n{}", show(w), show(g));
    }
    // Messages arrive in publish order.
    let text = String::from_utf8_lossy(&got_recv[0]).into_owned();
    let order: Vec<usize> = text
        .split("msg-")
        .skip(1)
        .map(|t| t.split('\r').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(order, (0..200).collect::<Vec<_>>());
}

/// Publishes `size`-byte messages until PUBLISH reaches nobody (the slow subscriber was dropped)
/// or `max` messages; returns how many were published.
fn flood(publisher: &mut Raw, channel: &str, size: usize, max: usize) -> usize {
    let payload = vec![b'x'; size];
    for n in 0..max {
        let reply = publisher.cmd(&[b"PUBLISH", channel.as_bytes(), &payload]);
        if reply == b":0\r\n" {
            return n;
        }
    }
    max
}

/// Reads everything until the server closes the connection; true if it did within `within`.
fn drains_to_eof(c: &mut Raw, within: Duration) -> bool {
    c.s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let deadline = Instant::now() + within;
    let mut buf = vec![0u8; 1 << 16];
    while Instant::now() < deadline {
        match c.s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn slow_subscriber_is_disconnected_at_the_hard_limit() {
    let g = goblin(&["--logfile", "server.log"]);
    let mut admin = g.raw();
    assert_eq!(
        admin.cmd_str("CONFIG SET client-output-buffer-limit \"pubsub 256kb 128kb 60\""),
        b"+OK\r\n"
    );
    let mut slow = g.raw();
    slow.cmd_str("SUBSCRIBE feed");
    let mut fast = g.raw();
    fast.cmd_str("SUBSCRIBE other");
    let mut publisher = g.raw();
    // 64 KB messages: past the kernel's socket buffers and then 256 KB, the server drops the reader
    // that never reads, instead of buffering without bound.
    let sent = flood(&mut publisher, "feed", 64 * 1024, 4000);
    assert!(sent < 4000, "the slow subscriber was never disconnected");
    assert_eq!(
        publisher.cmd_str("PUBSUB NUMSUB feed"),
        b"*2\r\n$4\r\nfeed\r\n:0\r\n"
    );
    assert!(drains_to_eof(&mut slow, Duration::from_secs(10)));
    // The server goes on serving everyone else.
    assert_eq!(publisher.cmd_str("PUBLISH other hi"), b":1\r\n");
    assert_eq!(
        show(&fast.reply()),
        "*3\\r\\n$7\\r\\nmessage\\r\\n$5\\r\\nother\\r\\n$2\\r\\nhi\\r\\n"
    );
    assert_eq!(admin.cmd_str("PING"), b"+PONG\r\n");
    let log = std::fs::read_to_string(g.dir.join("server.log")).unwrap_or_default();
    assert!(
        log.contains("scheduled to be closed ASAP for overcoming of output buffer limits."),
        "log: {log}"
    );
    assert!(log.contains("cmd=subscribe"), "log: {log}");
}

#[test]
fn slow_subscriber_is_disconnected_after_the_soft_limit_time() {
    let g = goblin(&[]);
    let mut admin = g.raw();
    assert_eq!(
        admin.cmd_str("CONFIG SET client-output-buffer-limit \"pubsub 0 64kb 1\""),
        b"+OK\r\n"
    );
    let mut slow = g.raw();
    slow.cmd_str("SUBSCRIBE feed");
    let mut publisher = g.raw();
    // Fill the kernel buffers and get past the soft limit (no hard limit).
    let payload = vec![b'y'; 64 * 1024];
    let start = Instant::now();
    let mut dropped = false;
    while start.elapsed() < Duration::from_secs(20) {
        let reply = publisher.cmd(&[b"PUBLISH", b"feed", &payload]);
        if reply == b":0\r\n" {
            dropped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(dropped, "the soft limit never disconnected the subscriber");
    // Not at once: the soft limit has to hold for more than a second.
    assert!(start.elapsed() > Duration::from_secs(1));
    assert!(drains_to_eof(&mut slow, Duration::from_secs(10)));
}

#[test]
fn a_reading_subscriber_is_not_disconnected() {
    let g = goblin(&[]);
    let mut admin = g.raw();
    admin.cmd_str("CONFIG SET client-output-buffer-limit \"pubsub 1mb 512kb 60\"");
    let mut sub = g.raw();
    sub.cmd_str("SUBSCRIBE feed");
    let mut publisher = g.raw();
    let payload = vec![b'z'; 1024];
    for _ in 0..2000 {
        assert_eq!(publisher.cmd(&[b"PUBLISH", b"feed", &payload]), b":1\r\n");
        let m = sub.reply();
        assert!(m.ends_with(b"zz\r\n"));
    }
}

#[test]
fn redis_crate_transactions() {
    let g = goblin(&[]);
    let mut con = g.client();
    let (a, b): (i64, i64) = redis::pipe()
        .atomic()
        .set("counter", 10)
        .ignore()
        .incr("counter", 5)
        .incr("counter", 1)
        .query(&mut con)
        .unwrap();
    assert_eq!((a, b), (15, 16));
    // The optimistic-locking helper: WATCH, read, MULTI ... EXEC, retried on a null EXEC.
    let mut other = g.client();
    let mut tries = 0;
    let v: (i64,) = redis::transaction(&mut con, &["counter"], |con, pipe| {
        tries += 1;
        let cur: i64 = redis::cmd("GET").arg("counter").query(con)?;
        if tries == 1 {
            // Someone else changes the key between WATCH and EXEC: the first attempt fails.
            let _: () = redis::cmd("SET")
                .arg("counter")
                .arg(100)
                .query(&mut other)
                .unwrap();
        }
        pipe.set("counter", cur * 2)
            .ignore()
            .get("counter")
            .query(con)
    })
    .unwrap();
    assert_eq!(tries, 2);
    assert_eq!(v, (200,));
    let err = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("x")
        .query::<()>(&mut con)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("EXECABORT") || text.contains("wrong number of arguments"),
        "{text}"
    );
    let v: Option<String> = redis::cmd("GET").arg("x").query(&mut con).unwrap();
    assert_eq!(v, None);
}

#[test]
fn redis_crate_pubsub() {
    let g = goblin(&[]);
    let mut sub_con = g.client();
    let mut publisher = g.client();
    let mut ps = sub_con.as_pubsub();
    ps.subscribe("orders").unwrap();
    ps.psubscribe("user.*").unwrap();
    ps.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let n: i64 = redis::cmd("PUBLISH")
        .arg("orders")
        .arg("o-1")
        .query(&mut publisher)
        .unwrap();
    assert_eq!(n, 1);
    let _: i64 = redis::cmd("PUBLISH")
        .arg("user.42")
        .arg("login")
        .query(&mut publisher)
        .unwrap();
    let m = ps.get_message().unwrap();
    assert_eq!(m.get_channel_name(), "orders");
    assert_eq!(m.get_payload::<String>().unwrap(), "o-1");
    assert!(!m.from_pattern());
    let m = ps.get_message().unwrap();
    assert_eq!(m.get_channel_name(), "user.42");
    assert_eq!(m.get_pattern::<String>().unwrap(), "user.*");
    assert_eq!(m.get_payload::<String>().unwrap(), "login");
    ps.unsubscribe("orders").unwrap();
    ps.punsubscribe("user.*").unwrap();
    drop(ps);
    let n: i64 = redis::cmd("PUBLISH")
        .arg("orders")
        .arg("o-2")
        .query(&mut publisher)
        .unwrap();
    assert_eq!(n, 0);
    // Back out of subscriber mode, the connection runs ordinary commands again.
    let pong: String = redis::cmd("PING").query(&mut sub_con).unwrap();
    assert_eq!(pong, "PONG");
}

/// A subscriber that disconnects is forgotten at once (no message goes to a freed client slot).
#[test]
fn disconnected_subscribers_are_forgotten() {
    let g = goblin(&[]);
    let mut publisher = g.raw();
    for round in 0..5 {
        let mut subs: Vec<Raw> = (0..10).map(|_| g.raw()).collect();
        for s in &mut subs {
            s.cmd_str("SUBSCRIBE ch");
        }
        assert_eq!(
            publisher.cmd_str("PUBLISH ch x"),
            b":10\r\n",
            "round {round}"
        );
        drop(subs);
        let deadline = Instant::now() + Duration::from_secs(5);
        while publisher.cmd_str("PUBLISH ch x") != b":0\r\n" {
            assert!(Instant::now() < deadline, "subscribers not forgotten");
            std::thread::sleep(Duration::from_millis(10));
        }
        // A new client that reuses a freed slot gets no stray message.
        let mut fresh = g.raw();
        assert_eq!(fresh.cmd_str("PING"), b"+PONG\r\n");
    }
}

/// `timeout` closes idle clients but never subscribers, on both servers.
#[test]
fn idle_timeout_spares_subscribers() {
    for s in [redis(&[]), goblin(&[])] {
        let mut admin = s.raw();
        assert_eq!(admin.cmd_str("CONFIG SET timeout 1"), b"+OK\r\n");
        let mut idle = s.raw();
        assert_eq!(idle.cmd_str("PING"), b"+PONG\r\n");
        let mut sub = s.raw();
        sub.cmd_str("SUBSCRIBE ch");
        std::thread::sleep(Duration::from_millis(2500));
        assert!(idle.is_closed(), "the idle client was not closed");
        assert_eq!(
            show(&sub.cmd_str("PING")),
            "*2\\r\\n$4\\r\\npong\\r\\n$0\\r\\n\\r\\n"
        );
    }
}
