//! The blocking sorted-set pops (BZPOPMIN, BZPOPMAX, BZMPOP), differentially against Debian's
//! redis-server: immediate service and errors in RESP2 and RESP3, and multi-client scenarios (woken
//! by ZADD and the other sorted-set writes, FIFO among waiters, several keys, keys deleted or
//! changed to another type while blocked, list and sorted-set waiters on one key, timeouts, MULTI
//! and scripts that may not block, CLIENT UNBLOCK, disconnects) run step by step on both servers
//! with every reply compared byte for byte.

mod common;
use std::time::{Duration, Instant};

use common::{compare, encode, goblin, redis, show, split, Raw};

/// Every case once in RESP2 and once after `HELLO 3`.
fn compare_both(cases: &[&[&str]]) {
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

/// Blocking pops that are served at once, or fail at once, need no second client.
#[test]
fn served_at_once_and_errors() {
    compare_both(&[
        &[
            "ZADD z 1 a 2 b 3 c 4 d",
            "ZADD z2 1.5 x -2.25 y",
            "BZPOPMIN z 0",
            "BZPOPMAX z 0",
            "BZPOPMIN missing z2 z 0",
            "BZPOPMAX missing z 0.5",
            "BZPOPMIN z 0",
            "EXISTS z",
            "BZPOPMAX z2 z2 0",
            "BZPOPMIN z2 0.01",
            "EXISTS z2",
            "BZPOPMIN missing 0.01",
            "BZPOPMAX missing other 0.01",
            "ZADD inf -inf lo +inf hi 0 zero",
            "BZPOPMIN inf 0",
            "BZPOPMAX inf 0",
        ],
        &[
            "ZADD z 1 a 2 b 3 c 4 d 5 e",
            "BZMPOP 0 1 z MIN",
            "BZMPOP 0 1 z MAX",
            "BZMPOP 0 2 missing z min COUNT 2",
            "BZMPOP 0 1 z max count 10",
            "EXISTS z",
            "BZMPOP 0.01 1 z MIN",
            "BZMPOP 0.01 3 a b c MAX COUNT 3",
            "ZADD z3 1 m",
            "BZMPOP 0 1 z3 MIN COUNT 9223372036854775807",
        ],
        &[
            "BZPOPMIN z -1",
            "BZPOPMIN z abc",
            "BZPOPMIN z nan",
            "BZPOPMIN z inf",
            "BZPOPMIN z 1e30",
            "BZPOPMIN z ' 1'",
            "BZPOPMIN z 0x",
            "BZPOPMIN z 9223372036854775807",
            "BZPOPMAX z -0.5",
            "ZADD z 1 a 2 b 3 c",
            "BZPOPMIN z -0.0001",
            "BZPOPMIN z 0x10",
            "BZPOPMAX z 0x1.8p3",
            "BZPOPMIN z",
            "BZPOPMAX",
            "BZMPOP -1 1 z MIN",
            "BZMPOP x 1 z MIN",
            "BZMPOP x 0 z MIN",
            "BZMPOP x 1 z UP",
            "BZMPOP x 1 z MIN COUNT 0",
            "BZMPOP 0 0 z MIN",
            "BZMPOP 0 -1 z MIN",
            "BZMPOP 0 x z MIN",
            "BZMPOP 0 2 z MIN",
            "BZMPOP 0 1 z FOO",
            "BZMPOP 0 1 z MIN COUNT 0",
            "BZMPOP 0 1 z MIN COUNT -1",
            "BZMPOP 0 1 z MIN COUNT x",
            "BZMPOP 0 1 z MIN COUNT 1 COUNT 1",
            "BZMPOP 0 1 z MIN COUNT",
            "BZMPOP 0 1 z MIN FOO",
            "BZMPOP 0 1 z",
            "BZMPOP 0 1",
            "BZMPOP 0 9223372036854775807 z MIN",
            "ZRANGE z 0 -1 WITHSCORES",
        ],
        &[
            "SET s v",
            "RPUSH l a",
            "ZADD z 1 a",
            "BZPOPMIN s 0",
            "BZPOPMIN missing s z 0",
            "BZPOPMAX z s 0",
            "BZPOPMIN l 0",
            "BZMPOP 0 2 missing s MIN",
            "BZMPOP 0 2 l z MIN",
            "ZADD z 2 b",
            "BZMPOP 0 2 z l MAX",
            "ZADD z 3 c",
            "BLPOP z 0",
            "ZRANGE z 0 -1 WITHSCORES",
        ],
        &[
            "COMMAND GETKEYS BZPOPMIN a b 0",
            "COMMAND GETKEYS BZPOPMAX a 0",
            "COMMAND GETKEYS BZMPOP 0 2 a b MIN",
            "COMMAND GETKEYS BZMPOP 0 1 a MAX COUNT 2",
            "COMMAND GETKEYS BZMPOP 0 3 a b MIN",
            "COMMAND GETKEYS ZMPOP 2 a b MIN",
            "COMMAND GETKEYS ZMPOP 1 a MAX COUNT 3",
        ],
    ]);
}

/// Inside MULTI and in scripts a blocking pop never blocks: it pops, or answers the null array.
#[test]
fn multi_and_scripts_never_block() {
    compare_both(&[
        &[
            "MULTI",
            "BZPOPMIN z 0",
            "BZPOPMAX z 1",
            "BZMPOP 0 1 z MIN",
            "ZADD z 1 a 2 b 3 c",
            "BZPOPMIN z 0",
            "BZMPOP 0 2 missing z MAX COUNT 5",
            "BZPOPMAX z 0",
            "EXEC",
            "MULTI",
            "BZPOPMIN z -1",
            "EXEC",
            "SET s v",
            "MULTI",
            "BZPOPMIN s 0",
            "BZMPOP 0 1 s MIN",
            "EXEC",
        ],
        &[
            "EVAL \"return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')\" 1 z",
            "ZADD z 1 a 2 b",
            "EVAL \"return redis.call('bzmpop', 0, 1, KEYS[1], 'MAX', 'COUNT', 5)\" 1 z",
            "EVAL \"return redis.pcall('bzpopmin', KEYS[1], 0)\" 1 z",
            "EVAL \"return redis.pcall('bzpopmax', KEYS[1], 0)\" 1 z",
            "EXISTS z",
            "MULTI",
            "EVAL \"return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')\" 1 z",
            "EXEC",
            "PING",
        ],
    ]);
}

/// One step of a multi-client scenario.
enum Step {
    /// Send a command on connection n and read its reply.
    Cmd(usize, &'static str),
    /// Send a command on connection n without reading.
    Send(usize, &'static str),
    /// Send raw bytes (several commands: a pipeline) on connection n.
    Pipeline(usize, &'static [&'static str]),
    /// Read one reply on connection n (waiting for it).
    Read(usize),
    /// Assert connection n got no reply for a while (records what came otherwise).
    Quiet(usize),
    /// Close connection n.
    Drop(usize),
    /// One `field:value` line of INFO, read on connection n.
    Info(usize, &'static str),
    /// Let the server run the previous steps (a blocking command registers) before the next.
    Pause,
}
use Step::*;

/// Replaces `{idN}` by connection N's client id.
fn with_ids(line: &str, ids: &[i64]) -> String {
    let mut s = line.to_string();
    for (i, id) in ids.iter().enumerate() {
        s = s.replace(&format!("{{id{i}}}"), &id.to_string());
    }
    s
}

fn client_id(c: &mut Raw) -> i64 {
    let r = c.cmd_str("CLIENT ID");
    String::from_utf8_lossy(&r[1..r.len() - 2]).parse().unwrap()
}

/// Runs a scenario with `conns` connections on one server; returns the transcript of replies.
/// (The same harness as `tests/lists.rs`'s.)
fn run_scenario(port: u16, conns: usize, steps: &[Step]) -> Vec<String> {
    let mut cs: Vec<Option<Raw>> = (0..conns).map(|_| Some(Raw::connect(port))).collect();
    cs[0].as_mut().unwrap().cmd_str("FLUSHALL");
    let ids: Vec<i64> = cs
        .iter_mut()
        .map(|c| client_id(c.as_mut().unwrap()))
        .collect();
    let mut log = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        match step {
            Cmd(c, line) => {
                let r = cs[*c].as_mut().unwrap().cmd_str(&with_ids(line, &ids));
                if line.starts_with("HELLO") {
                    continue; // its reply carries the server's version and the client id
                }
                log.push(format!("{n}: [{c}] {line} -> {}", show(&r)));
            }
            Send(c, line) => {
                let args = split(&with_ids(line, &ids));
                let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
                cs[*c].as_mut().unwrap().send(&encode(&refs));
            }
            Pipeline(c, lines) => {
                let mut bytes = Vec::new();
                for line in *lines {
                    let args = split(line);
                    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
                    bytes.extend(encode(&refs));
                }
                cs[*c].as_mut().unwrap().send(&bytes);
            }
            Read(c) => {
                let r = cs[*c].as_mut().unwrap().reply();
                log.push(format!("{n}: [{c}] read -> {}", show(&r)));
            }
            Quiet(c) => {
                let conn = cs[*c].as_mut().unwrap();
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
                log.push(format!("{n}: [{c}] quiet -> {got:?}"));
            }
            Drop(c) => cs[*c] = None,
            Info(c, field) => {
                let r = cs[*c].as_mut().unwrap().cmd_str("INFO everything");
                let text = String::from_utf8_lossy(&r).into_owned();
                let line = text
                    .lines()
                    .find(|l| l.starts_with(&format!("{field}:")))
                    .unwrap_or("(absent)");
                // Command stats: the call counts only (timings differ).
                let line = line.split(",usec=").next().unwrap_or(line).to_string();
                log.push(format!("{n}: [{c}] info -> {line}"));
            }
            Pause => std::thread::sleep(Duration::from_millis(60)),
        }
    }
    log
}

/// Runs the scenario on redis-server and on Goblin Core; the transcripts must be identical.
fn scenario(conns: usize, steps: &[Step]) -> Vec<String> {
    let r = redis(&[]);
    let g = goblin(&[]);
    let want = run_scenario(r.port, conns, steps);
    let got = run_scenario(g.port, conns, steps);
    assert_eq!(
        want.join("\n"),
        got.join("\n"),
        "\nredis:\n{}\ngoblin:\n{}",
        want.join("\n"),
        got.join("\n")
    );
    got
}

#[test]
fn woken_by_zadd() {
    let log = scenario(
        2,
        &[
            Send(1, "BZPOPMIN z 0"),
            Pause,
            Quiet(1),
            Cmd(0, "ZADD z 2 b 1 a 3 c"),
            Read(1),
            Cmd(0, "ZRANGE z 0 -1 WITHSCORES"),
            Send(1, "BZPOPMAX z 0"),
            Pause,
            Read(1),
            Cmd(0, "DEL z"),
            Send(1, "BZPOPMAX k1 k2 0"),
            Pause,
            Cmd(0, "ZADD k2 5 x 7 y"),
            Read(1),
            Cmd(0, "ZRANGE k2 0 -1 WITHSCORES"),
            // BZMPOP with COUNT takes up to count of what arrived.
            Send(1, "BZMPOP 0 2 m1 m2 MAX COUNT 2"),
            Pause,
            Cmd(0, "ZADD m2 1 a 2 b 3 c"),
            Read(1),
            Send(1, "BZMPOP 0 1 m3 MIN COUNT 10"),
            Pause,
            Cmd(0, "ZADD m3 1 a 2 b 3 c"),
            Read(1),
            Cmd(0, "EXISTS m3"),
            Send(1, "BZMPOP 0 1 m4 MIN"),
            Pause,
            Cmd(0, "ZADD m4 1 a 2 b"),
            Read(1),
            Info(0, "cmdstat_bzpopmin"),
            Info(0, "cmdstat_bzpopmax"),
            Info(0, "cmdstat_bzmpop"),
            Info(0, "blocked_clients"),
        ],
    );
    let first_read = log.iter().find(|l| l.contains("read ->")).unwrap();
    assert!(
        first_read.ends_with("*3\\r\\n$1\\r\\nz\\r\\n$1\\r\\na\\r\\n$1\\r\\n1\\r\\n"),
        "{log:?}"
    );
}

/// The woken replies in RESP3: BZPOPMIN's score is a double, BZMPOP's pairs are nested.
#[test]
fn resp3_reply_shapes() {
    let log = scenario(
        2,
        &[
            Cmd(1, "HELLO 3"),
            Send(1, "BZPOPMIN z 0"),
            Pause,
            Cmd(0, "ZADD z 1.5 a 2 b"),
            Read(1),
            Send(1, "BZPOPMAX z 0"),
            Pause,
            Read(1),
            Send(1, "BZMPOP 0 1 z MIN COUNT 3"),
            Pause,
            Cmd(0, "ZADD z -inf lo 0.1 x inf hi 5 y"),
            Read(1),
            Cmd(1, "BZPOPMIN z 0"),
            Cmd(1, "BZPOPMIN nothing 0.01"),
            Cmd(1, "BZMPOP 0.01 1 nothing MAX"),
        ],
    );
    assert!(
        log.iter().any(|l| l.contains(",1.5\\r\\n")),
        "no RESP3 double: {log:?}"
    );
}

/// Other writes that create or fill a sorted set serve the waiters too.
#[test]
fn woken_by_other_sorted_set_writes() {
    scenario(
        2,
        &[
            Send(1, "BZPOPMIN a 0"),
            Pause,
            Cmd(0, "ZINCRBY a 3 m"),
            Read(1),
            Cmd(0, "ZADD src 1 x 2 y 3 z"),
            Send(1, "BZPOPMAX dst 0"),
            Pause,
            Cmd(0, "ZRANGESTORE dst src 0 1"),
            Read(1),
            Cmd(0, "DEL dst"),
            Send(1, "BZMPOP 0 1 dst MIN COUNT 5"),
            Pause,
            Cmd(0, "ZUNIONSTORE dst 1 src WEIGHTS 2"),
            Read(1),
            Send(1, "BZPOPMIN u 0"),
            Pause,
            Cmd(0, "ZINTERSTORE u 1 src"),
            Read(1),
            Send(1, "BZPOPMIN d 0"),
            Pause,
            Cmd(0, "ZDIFFSTORE d 2 src nothing"),
            Read(1),
            // RENAME and COPY onto the waited key.
            Send(1, "BZPOPMIN r 0"),
            Pause,
            Cmd(0, "RENAME src r"),
            Read(1),
            Send(1, "BZPOPMAX c 0"),
            Pause,
            Cmd(0, "COPY r c"),
            Read(1),
            Cmd(0, "ZRANGE r 0 -1 WITHSCORES"),
            Cmd(0, "ZRANGE c 0 -1 WITHSCORES"),
            // A ZADD that changes nothing (XX on a missing key) creates nothing: still blocked.
            Send(1, "BZPOPMIN n 0"),
            Pause,
            Cmd(0, "ZADD n XX 1 a"),
            Quiet(1),
            Cmd(0, "ZADD n NX 1 a"),
            Read(1),
            Info(0, "blocked_clients"),
        ],
    );
}

#[test]
fn fifo_among_waiters() {
    scenario(
        4,
        &[
            Send(1, "BZPOPMIN z 0"),
            Pause,
            Send(2, "BZPOPMAX z 0"),
            Pause,
            Send(3, "BZMPOP 0 1 z MIN COUNT 2"),
            Pause,
            Cmd(0, "ZADD z 1 a"),
            Read(1),
            Quiet(2),
            Quiet(3),
            Cmd(0, "ZADD z 1 a 2 b 3 c 4 d"),
            Read(2),
            Read(3),
            Cmd(0, "ZRANGE z 0 -1 WITHSCORES"),
            Cmd(0, "DEL z"),
            // New waiters queue behind each other again.
            Send(3, "BZPOPMAX z 0"),
            Pause,
            Send(1, "BZPOPMAX z 0"),
            Pause,
            Cmd(0, "ZADD z 1 a 2 b"),
            Read(3),
            Read(1),
            Cmd(0, "EXISTS z"),
            Info(0, "cmdstat_bzpopmax"),
            Info(0, "blocked_clients"),
        ],
    );
}

#[test]
fn several_keys() {
    scenario(
        2,
        &[
            // Served at once from the first non-empty key, in argument order.
            Cmd(0, "ZADD k3 3 c"),
            Cmd(0, "ZADD k2 2 b"),
            Cmd(1, "BZPOPMIN k1 k2 k3 0"),
            // Blocked on several keys: served from whichever is written.
            Send(1, "BZPOPMIN k1 k2 0"),
            Pause,
            Cmd(0, "ZADD k2 9 z"),
            Read(1),
            // Served from the key that became ready, even when an earlier key is not empty.
            Send(1, "BZMPOP 0 2 k5 k6 MIN COUNT 3"),
            Pause,
            Cmd(
                0,
                "EVAL \"redis.call('zadd', KEYS[2], 1, 'x'); redis.call('zadd', KEYS[1], 1, 'y')\" 2 k5 k6",
            ),
            Read(1),
            Cmd(0, "ZRANGE k5 0 -1"),
            Cmd(0, "EXISTS k6"),
            // The same key twice waits once.
            Send(1, "BZPOPMAX k4 k4 0"),
            Pause,
            Cmd(0, "ZADD k4 1 a 2 b"),
            Read(1),
            Cmd(0, "ZRANGE k4 0 -1"),
            Info(0, "blocked_clients"),
        ],
    );
}

#[test]
fn key_deleted_or_type_changed_while_blocked() {
    scenario(
        3,
        &[
            Send(1, "BZPOPMIN k 0"),
            Pause,
            Cmd(0, "SET k str"),
            Quiet(1),
            Cmd(0, "DEL k"),
            Cmd(0, "RPUSH k a"),
            Quiet(1),
            Cmd(0, "DEL k"),
            Cmd(0, "SADD k m"),
            Quiet(1),
            Cmd(0, "DEL k"),
            Cmd(0, "HSET k f v"),
            Quiet(1),
            Cmd(0, "DEL k"),
            Cmd(0, "ZADD k 1 a"),
            Read(1),
            // A sorted set created and emptied in one transaction serves nobody.
            Send(1, "BZPOPMIN k 0"),
            Pause,
            Cmd(0, "MULTI"),
            Cmd(0, "ZADD k 1 a"),
            Cmd(0, "ZPOPMIN k"),
            Cmd(0, "EXEC"),
            Quiet(1),
            // Served after the whole transaction, with what is left.
            Cmd(0, "MULTI"),
            Cmd(0, "ZADD k 1 a 2 b"),
            Cmd(0, "ZREM k a"),
            Cmd(0, "EXEC"),
            Read(1),
            // A list waiter and a sorted-set waiter on one key: each served by its type only.
            Send(1, "BLPOP k 0"),
            Pause,
            Send(2, "BZPOPMIN k 0"),
            Pause,
            Cmd(0, "ZADD k 1 a"),
            Read(2),
            Quiet(1),
            Cmd(0, "RPUSH k x"),
            Read(1),
            Cmd(0, "EXISTS k"),
            Info(0, "blocked_clients"),
        ],
    );
}

#[test]
fn timeouts() {
    let log = scenario(
        2,
        &[
            Cmd(1, "BZPOPMIN z 0.05"),
            Cmd(1, "BZPOPMAX z z2 0.01"),
            Cmd(1, "BZMPOP 0.02 2 z z2 MIN COUNT 3"),
            Cmd(1, "HELLO 3"),
            Cmd(1, "BZPOPMIN z 0.02"),
            Cmd(1, "BZMPOP 0.02 1 z MAX"),
            Info(0, "blocked_clients"),
            Info(0, "cmdstat_bzpopmin"),
            Info(0, "cmdstat_bzmpop"),
        ],
    );
    assert!(log[0].ends_with("*-1\\r\\n"), "{log:?}");
    // The deadline is honoured within a small margin (fractional seconds).
    let g = goblin(&[]);
    let mut c = g.raw();
    for line in ["BZPOPMIN k 0.2", "BZMPOP 0.2 1 k MIN"] {
        let start = Instant::now();
        assert_eq!(c.cmd_str(line), b"*-1\r\n");
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(195) && took < Duration::from_millis(450),
            "{line}: {took:?}"
        );
    }
}

#[test]
fn timeouts_in_deadline_order() {
    scenario(
        3,
        &[
            Send(1, "BZPOPMIN k 0.4"),
            Send(2, "BZMPOP 0.1 1 k MAX"),
            Pause,
            Info(0, "clients_in_timeout_table"),
            Read(2),
            Quiet(1),
            Read(1),
            Info(0, "clients_in_timeout_table"),
        ],
    );
}

#[test]
fn client_unblock() {
    scenario(
        2,
        &[
            Send(1, "BZPOPMIN k 0"),
            Pause,
            Cmd(0, "CLIENT UNBLOCK {id1}"),
            Read(1),
            Send(1, "BZMPOP 0 1 k MIN"),
            Pause,
            Cmd(0, "CLIENT UNBLOCK {id1} TIMEOUT"),
            Read(1),
            Send(1, "BZPOPMAX k 100"),
            Pause,
            Cmd(0, "CLIENT UNBLOCK {id1} ERROR"),
            Read(1),
            Cmd(0, "CLIENT UNBLOCK {id1}"),
            // The unblocked client is not left waiting on the key.
            Cmd(0, "ZADD k 1 a"),
            Cmd(0, "ZRANGE k 0 -1"),
            Info(0, "blocked_clients"),
            Info(0, "errorstat_UNBLOCKED"),
            Info(0, "cmdstat_bzpopmin"),
            Info(0, "cmdstat_bzpopmax"),
            Info(0, "cmdstat_bzmpop"),
        ],
    );
}

#[test]
fn blocked_client_disconnects() {
    scenario(
        3,
        &[
            Send(1, "BZPOPMIN k 0"),
            Pause,
            Send(2, "BZMPOP 0 1 k MAX"),
            Pause,
            Drop(1),
            Pause,
            Info(0, "blocked_clients"),
            Cmd(0, "ZADD k 1 a 2 b"),
            Read(2),
            Cmd(0, "ZRANGE k 0 -1"),
            Info(0, "blocked_clients"),
            // CLIENT KILL of a blocked client removes it from the wait list.
            Send(2, "BZPOPMIN j 0"),
            Pause,
            Cmd(0, "CLIENT KILL ID {id2}"),
            Pause,
            Info(0, "blocked_clients"),
            Cmd(0, "ZADD j 1 a"),
            Cmd(0, "ZCARD j"),
        ],
    );
}

#[test]
fn pipeline_waits_behind_blocked_command() {
    scenario(
        2,
        &[
            Pipeline(
                1,
                &[
                    "BZPOPMIN k 0",
                    "PING",
                    "ZCARD k",
                    "BZPOPMAX k 0",
                    "ECHO done",
                ],
            ),
            Pause,
            Quiet(1),
            Cmd(0, "ZADD k 1 a 2 b 3 c"),
            Read(1),
            Read(1),
            Read(1),
            Read(1),
            Read(1),
            Cmd(0, "ZRANGE k 0 -1"),
            // The waiter is served right after the write, before the writer's next command.
            Send(1, "BZPOPMIN w 0"),
            Pause,
            Pipeline(0, &["ZADD w 1 a", "ZCARD w", "ZADD w 2 b", "ZPOPMIN w"]),
            Read(0),
            Read(0),
            Read(0),
            Read(0),
            Read(1),
        ],
    );
}

#[test]
fn command_info_and_docs_match_redis() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for n in ["bzpopmin", "bzpopmax", "bzmpop", "zmpop"] {
        let line = format!("COMMAND INFO {n}");
        let (want, got) = (rc.cmd_str(&line), gc.cmd_str(&line));
        // Name, arity, flags and key positions exactly; ACL categories as a set. (Key specs are
        // beyond what our table expresses.)
        let parts = |b: &[u8]| {
            let text = show(b);
            let toks: Vec<&str> = text.split("\\r\\n").collect();
            let first_cat = toks.iter().position(|t| t.starts_with("+@")).unwrap();
            let mut cats: Vec<String> = toks[first_cat..]
                .iter()
                .take_while(|t| t.starts_with("+@"))
                .map(|t| t.to_string())
                .collect();
            cats.sort();
            (toks[..first_cat - 1].join(" "), cats)
        };
        assert_eq!(parts(&want), parts(&got), "{line}");
    }
    // Docs: every leaf in order, without the aggregate headers and the key-spec indexes; from
    // `arguments` on only for commands with a history (which the table cannot express), without
    // the per-argument `since`.
    let leaves = |b: &[u8]| {
        let text = show(b);
        let toks: Vec<String> = text.split("\\r\\n").map(String::from).collect();
        let mut out: Vec<String> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if t == "key_spec_index" {
                out.pop();
                i += 2;
                continue;
            }
            if !t.starts_with(['*', '%']) {
                out.push(t.clone());
            }
            i += 1;
        }
        out
    };
    let arguments = |l: Vec<String>| {
        let k = l.iter().position(|t| t == "arguments").unwrap();
        let mut out: Vec<String> = Vec::new();
        let mut i = k;
        while i < l.len() {
            if l[i] == "since" {
                out.pop();
                i += 3;
                continue;
            }
            out.push(l[i].clone());
            i += 1;
        }
        out
    };
    for n in ["bzpopmin", "bzpopmax", "bzmpop"] {
        let line = format!("COMMAND DOCS {n}");
        let (want, got) = (leaves(&rc.cmd_str(&line)), leaves(&gc.cmd_str(&line)));
        if want.iter().any(|t| t == "history" || t == "doc_flags") {
            // The summary, since, group and complexity (up to the history or the arguments, each
            // after its length line), then the arguments.
            let head = |l: &[String]| {
                let mut h: Vec<String> = l
                    .iter()
                    .take_while(|t| *t != "history" && *t != "arguments")
                    .cloned()
                    .collect();
                h.pop();
                h
            };
            assert_eq!(head(&want), head(&got), "{line}");
            assert_eq!(arguments(want), arguments(got), "{line}");
        } else {
            assert_eq!(want, got, "{line}");
        }
    }
}
