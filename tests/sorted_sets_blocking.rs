//! The blocking sorted-set pops (BZPOPMIN, BZPOPMAX, BZMPOP), differentially against Debian's
//! redis-server: immediate service and errors in RESP2 and RESP3, and multi-client scenarios (woken
//! by ZADD and the other sorted-set writes, FIFO among waiters, several keys, keys deleted or
//! changed to another type while blocked, list and sorted-set waiters on one key, timeouts, MULTI
//! and scripts that may not block, CLIENT UNBLOCK, disconnects) run step by step on both servers
//! with every reply compared byte for byte.

mod common;
use std::time::{Duration, Instant};

use common::{compare_both, goblin, scenario};

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

#[test]
fn woken_by_zadd() {
    let log = scenario(&[
        "b:!BZPOPMIN z 0",
        "sleep 60",
        "b:quiet",
        "ZADD z 2 b 1 a 3 c",
        "b:<",
        "ZRANGE z 0 -1 WITHSCORES",
        "b:!BZPOPMAX z 0",
        "sleep 60",
        "b:<",
        "DEL z",
        "b:!BZPOPMAX k1 k2 0",
        "sleep 60",
        "ZADD k2 5 x 7 y",
        "b:<",
        "ZRANGE k2 0 -1 WITHSCORES",
        // BZMPOP with COUNT takes up to count of what arrived.
        "b:!BZMPOP 0 2 m1 m2 MAX COUNT 2",
        "sleep 60",
        "ZADD m2 1 a 2 b 3 c",
        "b:<",
        "b:!BZMPOP 0 1 m3 MIN COUNT 10",
        "sleep 60",
        "ZADD m3 1 a 2 b 3 c",
        "b:<",
        "EXISTS m3",
        "b:!BZMPOP 0 1 m4 MIN",
        "sleep 60",
        "ZADD m4 1 a 2 b",
        "b:<",
        "info:cmdstat_bzpopmin",
        "info:cmdstat_bzpopmax",
        "info:cmdstat_bzmpop",
        "info:blocked_clients",
    ]);
    let first_read = log.iter().find(|l| l.contains("read ->")).unwrap();
    assert!(
        first_read.ends_with("*3\\r\\n$1\\r\\nz\\r\\n$1\\r\\na\\r\\n$1\\r\\n1\\r\\n"),
        "{log:?}"
    );
}

/// The woken replies in RESP3: BZPOPMIN's score is a double, BZMPOP's pairs are nested.
#[test]
fn resp3_reply_shapes() {
    let log = scenario(&[
        "b:#HELLO 3",
        "b:!BZPOPMIN z 0",
        "sleep 60",
        "ZADD z 1.5 a 2 b",
        "b:<",
        "b:!BZPOPMAX z 0",
        "sleep 60",
        "b:<",
        "b:!BZMPOP 0 1 z MIN COUNT 3",
        "sleep 60",
        "ZADD z -inf lo 0.1 x inf hi 5 y",
        "b:<",
        "b:BZPOPMIN z 0",
        "b:BZPOPMIN nothing 0.01",
        "b:BZMPOP 0.01 1 nothing MAX",
    ]);
    assert!(
        log.iter().any(|l| l.contains(",1.5\\r\\n")),
        "no RESP3 double: {log:?}"
    );
}

/// Other writes that create or fill a sorted set serve the waiters too.
#[test]
fn woken_by_other_sorted_set_writes() {
    scenario(&[
        "b:!BZPOPMIN a 0",
        "sleep 60",
        "ZINCRBY a 3 m",
        "b:<",
        "ZADD src 1 x 2 y 3 z",
        "b:!BZPOPMAX dst 0",
        "sleep 60",
        "ZRANGESTORE dst src 0 1",
        "b:<",
        "DEL dst",
        "b:!BZMPOP 0 1 dst MIN COUNT 5",
        "sleep 60",
        "ZUNIONSTORE dst 1 src WEIGHTS 2",
        "b:<",
        "b:!BZPOPMIN u 0",
        "sleep 60",
        "ZINTERSTORE u 1 src",
        "b:<",
        "b:!BZPOPMIN d 0",
        "sleep 60",
        "ZDIFFSTORE d 2 src nothing",
        "b:<",
        // RENAME and COPY onto the waited key.
        "b:!BZPOPMIN r 0",
        "sleep 60",
        "RENAME src r",
        "b:<",
        "b:!BZPOPMAX c 0",
        "sleep 60",
        "COPY r c",
        "b:<",
        "ZRANGE r 0 -1 WITHSCORES",
        "ZRANGE c 0 -1 WITHSCORES",
        // A ZADD that changes nothing (XX on a missing key) creates nothing: still blocked.
        "b:!BZPOPMIN n 0",
        "sleep 60",
        "ZADD n XX 1 a",
        "b:quiet",
        "ZADD n NX 1 a",
        "b:<",
        "info:blocked_clients",
    ]);
}

#[test]
fn fifo_among_waiters() {
    scenario(&[
        "b:!BZPOPMIN z 0",
        "sleep 60",
        "c:!BZPOPMAX z 0",
        "sleep 60",
        "d:!BZMPOP 0 1 z MIN COUNT 2",
        "sleep 60",
        "ZADD z 1 a",
        "b:<",
        "c:quiet",
        "d:quiet",
        "ZADD z 1 a 2 b 3 c 4 d",
        "c:<",
        "d:<",
        "ZRANGE z 0 -1 WITHSCORES",
        "DEL z",
        // New waiters queue behind each other again.
        "d:!BZPOPMAX z 0",
        "sleep 60",
        "b:!BZPOPMAX z 0",
        "sleep 60",
        "ZADD z 1 a 2 b",
        "d:<",
        "b:<",
        "EXISTS z",
        "info:cmdstat_bzpopmax",
        "info:blocked_clients",
    ]);
}

#[test]
fn several_keys() {
    scenario(&[
        // Served at once from the first non-empty key, in argument order.
        "ZADD k3 3 c",
        "ZADD k2 2 b",
        "b:BZPOPMIN k1 k2 k3 0",
        // Blocked on several keys: served from whichever is written.
        "b:!BZPOPMIN k1 k2 0",
        "sleep 60",
        "ZADD k2 9 z",
        "b:<",
        // Served from the key that became ready, even when an earlier key is not empty.
        "b:!BZMPOP 0 2 k5 k6 MIN COUNT 3",
        "sleep 60",
        "EVAL \"redis.call('zadd', KEYS[2], 1, 'x'); redis.call('zadd', KEYS[1], 1, 'y')\" 2 k5 k6",
        "b:<",
        "ZRANGE k5 0 -1",
        "EXISTS k6",
        // The same key twice waits once.
        "b:!BZPOPMAX k4 k4 0",
        "sleep 60",
        "ZADD k4 1 a 2 b",
        "b:<",
        "ZRANGE k4 0 -1",
        "info:blocked_clients",
    ]);
}

#[test]
fn key_deleted_or_type_changed_while_blocked() {
    scenario(&[
        "b:!BZPOPMIN k 0",
        "sleep 60",
        "SET k str",
        "b:quiet",
        "DEL k",
        "RPUSH k a",
        "b:quiet",
        "DEL k",
        "SADD k m",
        "b:quiet",
        "DEL k",
        "HSET k f v",
        "b:quiet",
        "DEL k",
        "ZADD k 1 a",
        "b:<",
        // A sorted set created and emptied in one transaction serves nobody.
        "b:!BZPOPMIN k 0",
        "sleep 60",
        "MULTI",
        "ZADD k 1 a",
        "ZPOPMIN k",
        "EXEC",
        "b:quiet",
        // Served after the whole transaction, with what is left.
        "MULTI",
        "ZADD k 1 a 2 b",
        "ZREM k a",
        "EXEC",
        "b:<",
        // A list waiter and a sorted-set waiter on one key: each served by its type only.
        "b:!BLPOP k 0",
        "sleep 60",
        "c:!BZPOPMIN k 0",
        "sleep 60",
        "ZADD k 1 a",
        "c:<",
        "b:quiet",
        "RPUSH k x",
        "b:<",
        "EXISTS k",
        "info:blocked_clients",
    ]);
}

#[test]
fn timeouts() {
    let log = scenario(&[
        "b:BZPOPMIN z 0.05",
        "b:BZPOPMAX z z2 0.01",
        "b:BZMPOP 0.02 2 z z2 MIN COUNT 3",
        "b:#HELLO 3",
        "b:BZPOPMIN z 0.02",
        "b:BZMPOP 0.02 1 z MAX",
        "info:blocked_clients",
        "info:cmdstat_bzpopmin",
        "info:cmdstat_bzmpop",
    ]);
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
    scenario(&[
        "b:!BZPOPMIN k 0.4",
        "c:!BZMPOP 0.1 1 k MAX",
        "sleep 60",
        "info:clients_in_timeout_table",
        "c:<",
        "b:quiet",
        "b:<",
        "info:clients_in_timeout_table",
    ]);
}

#[test]
fn client_unblock() {
    scenario(&[
        "b:!BZPOPMIN k 0",
        "sleep 60",
        "CLIENT UNBLOCK {id:b}",
        "b:<",
        "b:!BZMPOP 0 1 k MIN",
        "sleep 60",
        "CLIENT UNBLOCK {id:b} TIMEOUT",
        "b:<",
        "b:!BZPOPMAX k 100",
        "sleep 60",
        "CLIENT UNBLOCK {id:b} ERROR",
        "b:<",
        "CLIENT UNBLOCK {id:b}",
        // The unblocked client is not left waiting on the key.
        "ZADD k 1 a",
        "ZRANGE k 0 -1",
        "info:blocked_clients",
        "info:errorstat_UNBLOCKED",
        "info:cmdstat_bzpopmin",
        "info:cmdstat_bzpopmax",
        "info:cmdstat_bzmpop",
    ]);
}

#[test]
fn blocked_client_disconnects() {
    scenario(&[
        "b:!BZPOPMIN k 0",
        "sleep 60",
        "c:!BZMPOP 0 1 k MAX",
        "sleep 60",
        "b:close",
        "sleep 60",
        "info:blocked_clients",
        "ZADD k 1 a 2 b",
        "c:<",
        "ZRANGE k 0 -1",
        "info:blocked_clients",
        // CLIENT KILL of a blocked client removes it from the wait list.
        "c:!BZPOPMIN j 0",
        "sleep 60",
        "CLIENT KILL ID {id:c}",
        "sleep 60",
        "info:blocked_clients",
        "ZADD j 1 a",
        "ZCARD j",
    ]);
}

#[test]
fn pipeline_waits_behind_blocked_command() {
    scenario(&[
        "b:!BZPOPMIN k 0 ;; PING ;; ZCARD k ;; BZPOPMAX k 0 ;; ECHO done",
        "sleep 60",
        "b:quiet",
        "ZADD k 1 a 2 b 3 c",
        "b:<",
        "b:<",
        "b:<",
        "b:<",
        "b:<",
        "ZRANGE k 0 -1",
        // The waiter is served right after the write, before the writer's next command.
        "b:!BZPOPMIN w 0",
        "sleep 60",
        "!ZADD w 1 a ;; ZCARD w ;; ZADD w 2 b ;; ZPOPMIN w",
        "<",
        "<",
        "<",
        "<",
        "b:<",
    ]);
}

#[test]
fn command_info_and_docs_match_redis() {
    common::command_info_and_docs_match_redis(
        &["bzpopmin", "bzpopmax", "bzmpop", "zmpop"],
        &["bzpopmin", "bzpopmax", "bzmpop"],
    );
}
