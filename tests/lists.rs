//! Lists and blocking operations, differentially against Debian's redis-server: every non-blocking
//! list command (options, errors, arity, wrong types, indexes, RESP2 and RESP3), and multi-client
//! blocking scenarios (BLPOP woken by a push, FIFO fairness, chained BLMOVE, timeouts, CLIENT
//! UNBLOCK, disconnects, pipelines behind a blocked command) run step by step on both servers with
//! every reply compared byte for byte.

mod common;
use std::time::{Duration, Instant};

use common::{client_id, compare_both, encode, goblin, scenario};

#[test]
fn push_pop_len() {
    compare_both(&[
        &[
            "LPUSH l a b c",
            "RPUSH l d e",
            "LRANGE l 0 -1",
            "LLEN l",
            "LLEN missing",
            "LPOP l",
            "RPOP l",
            "LRANGE l 0 -1",
            "OBJECT ENCODING l",
            "TYPE l",
        ],
        &[
            "LPUSHX l a",
            "RPUSHX l a",
            "EXISTS l",
            "RPUSH l x",
            "LPUSHX l a b",
            "RPUSHX l c d",
            "LRANGE l 0 -1",
        ],
        &[
            "RPUSH l a b c d e",
            "LPOP l 0",
            "LPOP l 2",
            "RPOP l 2",
            "RPOP l 10",
            "EXISTS l",
            "LPOP l",
            "RPOP l",
            "LPOP l 3",
            "RPOP l 0",
            "LPOP l -1",
            "LPOP l x",
            "LPOP l 1 2",
            "RPOP l 1 2 3",
        ],
        &[
            "SET s str",
            "LPUSH s a",
            "RPUSH s a",
            "LPUSHX s a",
            "RPUSHX s a",
            "LPOP s",
            "RPOP s 2",
            "LPOP s x",
            "LLEN s",
            "LPUSH",
            "LPUSH l",
            "RPUSH l",
            "LPOP",
            "LLEN",
            "LLEN a b",
        ],
        &[
            "RPUSH l 1 2 3",
            "OBJECT ENCODING l",
            "LPOP l 9223372036854775807",
            "LPOP l 9223372036854775808",
            "DEL l",
            "RPUSH l ''",
            "LRANGE l 0 -1",
            "LPOP l",
            "EXISTS l",
        ],
    ]);
}

#[test]
fn range_index_set() {
    compare_both(&[
        &[
            "RPUSH l a b c d e",
            "LRANGE l 0 -1",
            "LRANGE l 1 3",
            "LRANGE l -2 -1",
            "LRANGE l -100 100",
            "LRANGE l 3 1",
            "LRANGE l 5 10",
            "LRANGE l -1 -2",
            "LRANGE l 0 0",
            "LRANGE l x 1",
            "LRANGE l 0 y",
            "LRANGE missing 0 -1",
            "LRANGE missing x 1",
            "LRANGE l 0",
        ],
        &[
            "RPUSH l a b c",
            "LINDEX l 0",
            "LINDEX l -1",
            "LINDEX l 2",
            "LINDEX l 3",
            "LINDEX l -4",
            "LINDEX l x",
            "LINDEX missing 0",
            "LINDEX missing x",
            "SET s v",
            "LINDEX s 0",
            "LINDEX s x",
            "LRANGE s 0 -1",
        ],
        &[
            "RPUSH l a b c",
            "LSET l 0 A",
            "LSET l -1 C",
            "LSET l 3 x",
            "LSET l -4 x",
            "LSET l x v",
            "LSET missing 0 v",
            "LSET missing x v",
            "LRANGE l 0 -1",
            "SET s v",
            "LSET s 0 v",
            "LSET s x v",
            "LSET l 0",
        ],
    ]);
}

#[test]
fn rem_trim_insert() {
    compare_both(&[
        &[
            "RPUSH l a b a c a b a",
            "LREM l 2 a",
            "LRANGE l 0 -1",
            "LREM l -1 a",
            "LRANGE l 0 -1",
            "LREM l 0 b",
            "LRANGE l 0 -1",
            "LREM l 0 zz",
            "LREM l 0 a",
            "LREM l 0 c",
            "EXISTS l",
            "LREM missing 0 a",
            "LREM l x a",
            "SET s v",
            "LREM s 0 a",
            "LREM s x a",
        ],
        &[
            "RPUSH l a b a c a b a",
            "LREM l -2 a",
            "LRANGE l 0 -1",
            "LREM l -100 b",
            "LRANGE l 0 -1",
            "LREM l 9223372036854775807 a",
            "LRANGE l 0 -1",
        ],
        &[
            "RPUSH l a b c d e",
            "LTRIM l 1 -2",
            "LRANGE l 0 -1",
            "LTRIM l -100 100",
            "LRANGE l 0 -1",
            "LTRIM l 1 1",
            "LRANGE l 0 -1",
            "LTRIM l 2 1",
            "EXISTS l",
            "LTRIM missing 0 1",
            "LTRIM missing x 1",
            "RPUSH l a b",
            "LTRIM l 5 10",
            "EXISTS l",
            "RPUSH l a b",
            "LTRIM l -1 -2",
            "EXISTS l",
            "SET s v",
            "LTRIM s 0 1",
            "LTRIM s x 1",
        ],
        &[
            "RPUSH l a b c",
            "LINSERT l BEFORE b x",
            "LINSERT l after b y",
            "LINSERT l before a first",
            "LINSERT l AFTER c last",
            "LRANGE l 0 -1",
            "LINSERT l BEFORE nope z",
            "LINSERT l MIDDLE b z",
            "LINSERT missing BEFORE a z",
            "LINSERT missing MIDDLE a z",
            "EXISTS missing",
            "SET s v",
            "LINSERT s BEFORE a z",
            "LINSERT s MIDDLE a z",
            "LINSERT l BEFORE a",
        ],
    ]);
}

#[test]
fn lpos() {
    compare_both(&[&[
        "RPUSH l a b c 1 2 3 c c",
        "LPOS l c",
        "LPOS l c RANK 2",
        "LPOS l c RANK -1",
        "LPOS l c RANK -2",
        "LPOS l c RANK 4",
        "LPOS l c RANK -4",
        "LPOS l c COUNT 0",
        "LPOS l c COUNT 2",
        "LPOS l c COUNT 2 RANK 2",
        "LPOS l c COUNT 0 RANK -1",
        "LPOS l c COUNT 1 RANK -3",
        "LPOS l c MAXLEN 2",
        "LPOS l c MAXLEN 3",
        "LPOS l c COUNT 0 MAXLEN 7",
        "LPOS l c COUNT 0 MAXLEN 1 RANK -1",
        "LPOS l c rank 1 count 1 maxlen 0",
        "LPOS l zz",
        "LPOS l zz COUNT 3",
        "LPOS missing a",
        "LPOS missing a COUNT 1",
        "LPOS missing a RANK 0",
        "LPOS l c RANK 0",
        "LPOS l c RANK x",
        "LPOS l c COUNT -1",
        "LPOS l c COUNT x",
        "LPOS l c MAXLEN -1",
        "LPOS l c MAXLEN x",
        "LPOS l c FOO",
        "LPOS l c RANK",
        "LPOS l c COUNT",
        "LPOS l c RANK -9223372036854775808",
        "LPOS l c RANK 9223372036854775807",
        "LPOS l",
        "SET s v",
        "LPOS s a",
        "LPOS s a RANK 0",
    ]]);
}

#[test]
fn moves_and_mpop() {
    compare_both(&[
        &[
            "RPUSH src a b c",
            "LMOVE src dst LEFT RIGHT",
            "LMOVE src dst RIGHT LEFT",
            "LRANGE src 0 -1",
            "LRANGE dst 0 -1",
            "LMOVE src dst left left",
            "EXISTS src",
            "LMOVE src dst LEFT LEFT",
            "LRANGE dst 0 -1",
            "LMOVE dst dst LEFT RIGHT",
            "LRANGE dst 0 -1",
            "RPOPLPUSH dst dst",
            "LRANGE dst 0 -1",
            "LMOVE dst x UP LEFT",
            "LMOVE dst x LEFT DOWN",
            "LMOVE missing x UP LEFT",
            "SET s v",
            "LMOVE s dst LEFT LEFT",
            "LMOVE dst s LEFT LEFT",
            "LMOVE missing s LEFT LEFT",
            "RPOPLPUSH dst s",
            "RPOPLPUSH s dst",
            "LRANGE dst 0 -1",
            "LMOVE a b LEFT",
            "RPOPLPUSH a",
        ],
        &[
            "RPUSH one x",
            "LMOVE one one LEFT RIGHT",
            "LRANGE one 0 -1",
            "RPOPLPUSH one two",
            "EXISTS one",
            "LRANGE two 0 -1",
        ],
        &[
            "RPUSH l2 a b c d",
            "RPUSH l3 x",
            "LMPOP 2 l1 l2 LEFT",
            "LMPOP 2 l1 l2 RIGHT COUNT 2",
            "LMPOP 3 l1 l2 l3 LEFT COUNT 10",
            "LMPOP 3 l1 l2 l3 LEFT COUNT 10",
            "LMPOP 3 l1 l2 l3 LEFT COUNT 10",
            "EXISTS l2 l3",
            "LMPOP 1 l1 LEFT",
            "LMPOP 0 l1 LEFT",
            "LMPOP -1 l1 LEFT",
            "LMPOP x l1 LEFT",
            "LMPOP 2 l1 LEFT",
            "LMPOP 1 l1 UP",
            "LMPOP 1 l1 LEFT COUNT 0",
            "LMPOP 1 l1 LEFT COUNT -1",
            "LMPOP 1 l1 LEFT COUNT x",
            "LMPOP 1 l1 LEFT COUNT",
            "LMPOP 1 l1 LEFT COUNT 1 COUNT 2",
            "LMPOP 1 l1 LEFT FOO",
            "LMPOP 9223372036854775807 l1 LEFT",
            "SET s v",
            "LMPOP 2 l1 s LEFT",
            "RPUSH l1 a",
            "LMPOP 2 l1 s LEFT",
            "LMPOP 1 l1",
            "COMMAND GETKEYS LMPOP 2 a b LEFT",
            "COMMAND GETKEYS LMPOP 1 a b c d",
            "COMMAND GETKEYS LMPOP 0 a LEFT",
            "COMMAND GETKEYS LMPOP 5 a LEFT",
            "COMMAND GETKEYS LMPOP x a LEFT",
            "COMMAND GETKEYS BLMPOP 0 2 a b LEFT COUNT 3",
            "COMMAND GETKEYS BLMPOP 0 x a LEFT",
            "COMMAND GETKEYS BLPOP a b 0",
            "COMMAND GETKEYS LMOVE a b LEFT RIGHT",
            "COMMAND GETKEYS RPOPLPUSH a b",
        ],
    ]);
}

/// Blocking commands that are served at once, or fail at once, need no second client.
#[test]
fn blocking_immediate() {
    compare_both(&[
        &[
            "RPUSH l a b c",
            "RPUSH l2 x",
            "BLPOP l 0",
            "BRPOP l 0",
            "BLPOP missing l2 l 0",
            "BLPOP l 0.5",
            "EXISTS l",
            "BLPOP missing 0.01",
            "BRPOP missing 0.01",
            "BLMOVE missing x LEFT LEFT 0.01",
            "BRPOPLPUSH missing x 0.01",
            "BLMPOP 0.01 1 missing LEFT",
        ],
        &[
            "RPUSH l a b c d",
            "BLMPOP 0 2 missing l RIGHT COUNT 3",
            "BLMPOP 0 1 l LEFT",
            "EXISTS l",
            "RPUSH src a b",
            "BLMOVE src dst RIGHT LEFT 0",
            "BRPOPLPUSH src dst 0",
            "LRANGE dst 0 -1",
            "EXISTS src",
        ],
        &[
            "BLPOP l -1",
            "BLPOP l abc",
            // BLMPOP checks its other arguments before the timeout.
            "BLMPOP abc 1 l LEFT COUNT 0",
            "BLMPOP abc 0 l LEFT",
            "BLMPOP abc 1 l MIDDLE",
            "BLMPOP -1 1 l RIGHT COUNT 0",
            "BLMPOP abc 1 l LEFT",
            "BLPOP l nan",
            "BLPOP l inf",
            "BLPOP l 1e30",
            "BLPOP l ' 1'",
            "BLPOP l -0x10",
            "BLPOP l 0x",
            "BLPOP l 0xg",
            "BLPOP l 0x1p",
            "BLPOP l 9223372036854775807",
            "RPUSH l a b c",
            "BLPOP l -0.0001",
            "BLPOP l 0x10",
            "BLPOP l 0x1.8p3",
            "BRPOP l -1",
            "BLMOVE a b LEFT LEFT -1",
            "BLMOVE a b UP LEFT -1",
            "BLMOVE a b LEFT LEFT x",
            "BRPOPLPUSH a b -1",
            "BRPOPLPUSH a b x",
            "BLMPOP -1 1 l LEFT",
            "BLMPOP x 1 l LEFT",
            "BLMPOP 0 0 l LEFT",
            "BLMPOP 0 1 l UP",
            "BLMPOP 0 1 l LEFT COUNT 0",
            "BLMPOP 0 2 l LEFT",
            "BLPOP l",
            "BLMPOP 0 1 l",
            "BLMOVE a b LEFT LEFT",
        ],
        &[
            "SET s v",
            "RPUSH l a",
            "BLPOP s 0",
            "BLPOP missing s l 0",
            "BLPOP l s 0",
            "BRPOP s 0",
            "BLMOVE s d LEFT LEFT 0",
            "RPUSH src a",
            "BLMOVE src s LEFT LEFT 0",
            "BRPOPLPUSH src s 0",
            "LRANGE src 0 -1",
            "BLMPOP 0 2 missing s LEFT",
        ],
        // A script never blocks: BLMPOP (allowed in scripts) answers at once.
        &[
            "EVAL \"return redis.call('blmpop', 0, 1, KEYS[1], 'LEFT')\" 1 l",
            "EVAL \"return redis.pcall('blmpop', 0, 1, KEYS[1], 'LEFT', 'COUNT', 2)\" 1 l",
            "RPUSH l a b c",
            "EVAL \"return redis.call('blmpop', 0, 1, KEYS[1], 'RIGHT', 'COUNT', 2)\" 1 l",
            "EVAL \"return redis.call('blmpop', 0.5, 1, KEYS[1], 'RIGHT', 'COUNT', 2)\" 1 l",
            "EXISTS l",
            "EVAL \"return redis.call('blmpop', 0, 1, KEYS[1], 'RIGHT')\" 1 l",
            "PING",
        ],
    ]);
}

#[test]
fn blpop_woken_by_push() {
    let log = scenario(&[
        "b:!BLPOP k 0",
        "sleep 60",
        "b:quiet",
        "LPUSH k a",
        "b:<",
        "EXISTS k",
        "b:!BRPOP k2 k3 0",
        "sleep 60",
        "RPUSH k3 x y",
        "b:<",
        "LRANGE k3 0 -1",
    ]);
    let first_read = log.iter().find(|l| l.contains("read ->")).unwrap();
    assert!(
        first_read.ends_with("*2\\r\\n$1\\r\\nk\\r\\n$1\\r\\na\\r\\n"),
        "{log:?}"
    );
}

#[test]
fn fifo_fairness_and_one_push_serving_many() {
    scenario(&[
        "b:!BLPOP k 0",
        "sleep 60",
        "c:!BLPOP k 0",
        "sleep 60",
        "d:!BRPOP k 0",
        "sleep 60",
        "RPUSH k a",
        "b:<",
        "c:quiet",
        "d:quiet",
        "RPUSH k b c d",
        "c:<",
        "d:<",
        "LRANGE k 0 -1",
        // New waiters queue behind each other again.
        "b:!BLMPOP 0 1 k2 LEFT COUNT 2",
        "sleep 60",
        "c:!BLPOP k2 0",
        "sleep 60",
        "RPUSH k2 1 2 3",
        "b:<",
        "c:<",
        "EXISTS k2",
        "info:cmdstat_blpop",
        "info:cmdstat_blmpop",
    ]);
}

#[test]
fn multiple_keys() {
    scenario(&[
        // Served at once from the first non-empty key, in argument order.
        "RPUSH k3 c",
        "RPUSH k2 b",
        "b:BLPOP k1 k2 k3 0",
        // Blocked on several keys: served from whichever is pushed.
        "b:!BLPOP k1 k2 k3 0",
        "sleep 60",
        "RPUSH k3 z",
        "b:<",
        "LLEN k3",
        // A waited key changed to another type: served from the key that became ready.
        "b:!BLPOP k1 k2 0",
        "sleep 60",
        "SET k1 str",
        "b:quiet",
        "RPUSH k2 v",
        "b:<",
        // The same key twice waits once.
        "b:!BLPOP k4 k4 0",
        "sleep 60",
        "RPUSH k4 a b",
        "b:<",
        "LRANGE k4 0 -1",
        "info:blocked_clients",
    ]);
}

#[test]
fn key_deleted_or_type_changed_while_blocked() {
    scenario(&[
        "b:!BLPOP k 0",
        "sleep 60",
        "SET k str",
        "b:quiet",
        "APPEND k more",
        "b:quiet",
        "DEL k",
        "b:quiet",
        "INCR k",
        "b:quiet",
        "DEL k",
        "RPUSH k a",
        "b:<",
        // RENAME onto the waited key serves it.
        "b:!BRPOP dst 0",
        "sleep 60",
        "RPUSH src x y",
        "b:quiet",
        "RENAME src dst",
        "b:<",
        "LRANGE dst 0 -1",
        // A destination of the wrong type: the blocked BLMOVE gets WRONGTYPE and pops nothing.
        "b:!BLMOVE from to LEFT RIGHT 0",
        "sleep 60",
        "SET to str",
        "b:quiet",
        "RPUSH from a",
        "b:<",
        "LRANGE from 0 -1",
        "info:blocked_clients",
    ]);
}

#[test]
fn blmove_chains() {
    scenario(&[
        "b:!BLMOVE a b LEFT RIGHT 0",
        "sleep 60",
        "c:!BRPOPLPUSH b c 0",
        "sleep 60",
        "d:!BLPOP c 0",
        "sleep 60",
        "RPUSH a x",
        "b:<",
        "c:<",
        "d:<",
        "EXISTS a b c",
        // A rotation onto itself.
        "b:!BLMOVE r r RIGHT LEFT 0",
        "sleep 60",
        "RPUSH r 1 2 3",
        "b:<",
        "LRANGE r 0 -1",
        // Two waiters, the first moves the element where the second waits.
        "b:!BLMPOP 0 2 p q RIGHT",
        "sleep 60",
        "c:!BLMOVE p q LEFT LEFT 0",
        "sleep 60",
        "LPUSH p e1 e2",
        "b:<",
        "c:<",
        "LRANGE q 0 -1",
    ]);
}

#[test]
fn timeouts() {
    let log = scenario(&[
        "b:BLPOP k 0.05",
        "b:BRPOP k k2 0.01",
        "b:BLMOVE k d LEFT LEFT 0.02",
        "b:BRPOPLPUSH k d 0.02",
        "b:BLMPOP 0.02 2 k k2 LEFT COUNT 3",
        "b:#HELLO 3",
        "b:BLPOP k 0.02",
        "b:BLMOVE k d LEFT LEFT 0.02",
        "info:blocked_clients",
    ]);
    assert!(log[0].ends_with("*-1\\r\\n"), "{log:?}");
    // The deadline is honoured within a small margin (fractional seconds).
    let g = goblin(&[]);
    let mut c = g.raw();
    let start = Instant::now();
    assert_eq!(c.cmd_str("BLPOP k 0.2"), b"*-1\r\n");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(195) && took < Duration::from_millis(450),
        "{took:?}"
    );
}

#[test]
fn client_unblock() {
    scenario(&[
        "b:!BLPOP k 0",
        "sleep 60",
        "CLIENT UNBLOCK {id:b}",
        "b:<",
        "b:!BLMOVE k d LEFT LEFT 0",
        "sleep 60",
        "CLIENT UNBLOCK {id:b} TIMEOUT",
        "b:<",
        "b:!BLPOP k 100",
        "sleep 60",
        "CLIENT UNBLOCK {id:b} ERROR",
        "b:<",
        "CLIENT UNBLOCK {id:b}",
        "CLIENT UNBLOCK {id:a}",
        "CLIENT UNBLOCK 999999",
        "CLIENT UNBLOCK x",
        "CLIENT UNBLOCK {id:b} foo",
        "CLIENT UNBLOCK x foo",
        "CLIENT UNBLOCK {id:b} timeout extra",
        "CLIENT UNBLOCK",
        // The unblocked client is not left waiting on the key.
        "RPUSH k a",
        "LRANGE k 0 -1",
        "info:blocked_clients",
        "info:errorstat_UNBLOCKED",
        "info:cmdstat_blpop",
        "info:cmdstat_blmove",
    ]);
}

#[test]
fn blocked_client_disconnects() {
    scenario(&[
        "b:!BLPOP k 0",
        "sleep 60",
        "c:!BLPOP k 0",
        "sleep 60",
        "b:close",
        "sleep 60",
        "info:blocked_clients",
        "RPUSH k a b",
        "c:<",
        "LRANGE k 0 -1",
        "info:blocked_clients",
    ]);
}

#[test]
fn pipeline_waits_behind_blocked_command() {
    scenario(&[
        "b:!BLPOP k 0 ;; PING ;; LLEN k ;; BLPOP k 0 ;; ECHO done",
        "sleep 60",
        "b:quiet",
        "RPUSH k a b",
        "b:<",
        "b:<",
        "b:<",
        "b:<",
        "b:<",
        "EXISTS k",
        "b:!BLPOP k 0 ;; ECHO after",
        "sleep 60",
        "b:quiet",
        "CLIENT UNBLOCK {id:b}",
        "b:<",
        "b:<",
    ]);
}

#[test]
fn other_databases_and_whole_database_changes() {
    scenario(&[
        // A push in another database does not wake a client blocked in db 0.
        "b:!BLPOP k 0",
        "sleep 60",
        "SELECT 1",
        "RPUSH k a b",
        "b:quiet",
        // MOVE brings the list into db 0: served.
        "MOVE k 0",
        "b:<",
        "SELECT 0",
        "LRANGE k 0 -1",
        // FLUSHALL while blocked: still blocked; SWAPDB bringing a list in serves it.
        "DEL k",
        "b:!BLPOP k 0",
        "sleep 60",
        "FLUSHALL",
        "b:quiet",
        "SELECT 2",
        "RPUSH k x",
        "SWAPDB 0 2",
        "b:<",
        "DBSIZE",
        "SELECT 0",
        "DBSIZE",
        // COPY into the waited key.
        "b:!BRPOP c 0",
        "sleep 60",
        "RPUSH orig 1 2",
        "COPY orig c",
        "b:<",
        "LRANGE c 0 -1",
        "info:blocked_clients",
    ]);
}

#[test]
fn pusher_pipeline_and_kill() {
    scenario(&[
        // The waiter is served right after the push, before the pusher's next command.
        "b:!BLPOP k 0",
        "sleep 60",
        "!RPUSH k a ;; LPOP k ;; RPUSH k b c ;; LPOP k",
        "<",
        "<",
        "<",
        "<",
        "b:<",
        "LRANGE k 0 -1",
        "DEL k",
        // CLIENT KILL of a blocked client removes it from the wait list.
        "b:!BLPOP k 0",
        "sleep 60",
        "c:!BLPOP k 0",
        "sleep 60",
        "CLIENT KILL ID {id:b}",
        "sleep 60",
        "info:blocked_clients",
        "RPUSH k z",
        "c:<",
        "info:blocked_clients",
    ]);
}

#[test]
fn timeouts_in_deadline_order() {
    scenario(&[
        "b:!BLPOP k 0.4",
        "c:!BLMOVE k d LEFT LEFT 0.1",
        "sleep 60",
        "info:clients_in_timeout_table",
        "c:<",
        "b:quiet",
        "b:<",
        "info:clients_in_timeout_table",
        "info:cmdstat_blpop",
        "info:cmdstat_blmove",
    ]);
}

/// A blocked client is not closed by the idle `timeout`: it waits for its own deadline.
#[test]
fn idle_timeout_spares_blocked_clients() {
    let g = goblin(&["--timeout", "1"]);
    let mut idle = g.raw();
    let mut waiter = g.raw();
    idle.cmd_str("PING");
    waiter.send(&encode(&[b"BLPOP", b"k", b"3"]));
    let start = Instant::now();
    assert_eq!(waiter.reply(), b"*-1\r\n");
    assert!(start.elapsed() >= Duration::from_millis(2900));
    assert!(idle.is_closed(), "the idle client was not closed");
}

/// Redis lists a blocked client with the `b` flag and counts it in INFO clients.
#[test]
fn blocked_flag_and_info() {
    let g = goblin(&[]);
    let mut a = g.raw();
    let mut b = g.raw();
    let id = client_id(&mut b);
    b.send(&encode(&[b"BLPOP", b"k", b"10"]));
    std::thread::sleep(Duration::from_millis(60));
    let list = String::from_utf8(a.cmd_str(&format!("CLIENT LIST ID {id}"))).unwrap();
    assert!(list.contains(" flags=b "), "{list}");
    assert!(list.contains(" cmd=blpop "), "{list}");
    let info = String::from_utf8(a.cmd_str("INFO clients")).unwrap();
    assert!(info.contains("blocked_clients:1\r\n"), "{info}");
    assert!(info.contains("clients_in_timeout_table:1\r\n"), "{info}");
    a.cmd_str("RPUSH k v");
    assert_eq!(b.reply(), b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
    let info = String::from_utf8(a.cmd_str("INFO clients")).unwrap();
    assert!(info.contains("blocked_clients:0\r\n"), "{info}");
    assert!(info.contains("clients_in_timeout_table:0\r\n"), "{info}");
    let list = String::from_utf8(a.cmd_str(&format!("CLIENT LIST ID {id}"))).unwrap();
    assert!(list.contains(" flags=N "), "{list}");
}

/// The same through the `redis` crate, with a thread pushing while the main thread blocks.
#[test]
fn redis_crate_blocking() {
    let g = goblin(&[]);
    let mut con = g.client();
    let url = g.url();
    let pusher = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let mut p = redis::Client::open(url).unwrap().get_connection().unwrap();
        let n: i64 = redis::cmd("RPUSH")
            .arg("jobs")
            .arg("j1")
            .arg("j2")
            .query(&mut p)
            .unwrap();
        n
    });
    let got: (String, String) = redis::cmd("BLPOP")
        .arg("jobs")
        .arg(5)
        .query(&mut con)
        .unwrap();
    assert_eq!(got, ("jobs".to_string(), "j1".to_string()));
    assert_eq!(pusher.join().unwrap(), 2);
    let rest: Vec<String> = redis::cmd("LRANGE")
        .arg("jobs")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .unwrap();
    assert_eq!(rest, vec!["j2".to_string()]);
    let none: Option<(String, String)> = redis::cmd("BRPOP")
        .arg("nothing")
        .arg(0.05)
        .query(&mut con)
        .unwrap();
    assert_eq!(none, None);
}

#[test]
fn command_info_and_docs_match_redis() {
    common::command_info_and_docs_match_redis(
        &[
            "lpush",
            "rpush",
            "lpushx",
            "rpushx",
            "lpop",
            "rpop",
            "llen",
            "lrange",
            "lindex",
            "lset",
            "lrem",
            "ltrim",
            "linsert",
            "lpos",
            "lmove",
            "rpoplpush",
            "blpop",
            "brpop",
            "blmove",
            "brpoplpush",
            "lmpop",
            "blmpop",
            "client|unblock",
        ],
        &[
            "lpos",
            "lrange",
            "lindex",
            "lset",
            "lrem",
            "ltrim",
            "linsert",
            "llen",
            "lmove",
            "lmpop",
            "blmove",
            "blmpop",
            "lpush",
            "rpush",
            "lpushx",
            "rpushx",
            "lpop",
            "rpop",
            "blpop",
            "brpop",
            "rpoplpush",
            "brpoplpush",
        ],
    );
}

/// Keyspace notifications of the list commands against Redis: each write's event (`lpush`, `rpush`,
/// `lpop`, `rpop`, `lset`, `lrem`, `ltrim`, `linsert`), `del` after the event that empties a list,
/// the moves' push on the destination before the pop from the source, nothing on no-op and error
/// paths, and `keymiss` from the reads only.
#[test]
fn list_keyspace_events() {
    let cases: &[&[&str]] = &[
        &[
            "LPUSH l a b c",
            "RPUSH l d",
            "LPUSHX nol x",
            "RPUSHX nol x",
            "RPUSHX l e f",
            "LPUSHX l z",
            "LPOP l",
            "RPOP l 2",
            "LPOP l 0",
            "RPOP l 0",
            "LPOP nol",
            "RPOP nol 2",
            "LPOP l -1",
            "LPOP l 1 2",
            "RPOP l 100",
            "EXISTS l",
        ],
        &[
            "RPUSH l a b c b",
            "LSET l 0 q",
            "LSET l -1 q",
            "LSET l 99 q",
            "LSET l x q",
            "LSET nol 0 q",
            "LREM l 0 nothing",
            "LREM nol 0 a",
            "LREM l x a",
            "LREM l -1 q",
            "LREM l 0 b",
            "LINSERT l BEFORE nothing x",
            "LINSERT l AFTER c x",
            "LINSERT l BEFORE c y",
            "LINSERT l MIDDLE c y",
            "LINSERT nol AFTER c x",
            "LRANGE l 0 -1",
            "LREM l 0 q",
            "LREM l 0 y",
            "LREM l 0 c",
            "LREM l 0 x",
            "EXISTS l",
        ],
        &[
            "RPUSH l a b c d",
            "LTRIM l 0 -1",
            "LTRIM l 1 -2",
            "LTRIM nol 0 1",
            "LTRIM l x 1",
            "LRANGE l 0 -1",
            "LTRIM l 5 6",
            "EXISTS l",
            "RPUSH l a",
            "LTRIM l 0 0",
            "LTRIM l -1 -2",
        ],
        // Moves: the destination's push (after `new` when created), then the source's pop.
        &[
            "RPUSH src a b c",
            "LMOVE src dst LEFT RIGHT",
            "LMOVE src dst RIGHT LEFT",
            "RPOPLPUSH src dst",
            "LMOVE src dst LEFT LEFT",
            "RPOPLPUSH nosrc dst",
            "RPUSH one x",
            "LMOVE one one LEFT RIGHT",
            "RPOPLPUSH one one",
            "LMOVE one one RIGHT RIGHT",
            "SET str v",
            "RPOPLPUSH one str",
            "LMOVE str one LEFT LEFT",
            "LMOVE one dst UP LEFT",
            "LRANGE dst 0 -1",
            "LMOVE dst dst2 RIGHT RIGHT",
        ],
        &[
            "RPUSH m 1 2 3",
            "RPUSH n x",
            "LMPOP 2 nol m RIGHT COUNT 2",
            "LMPOP 3 nol n m LEFT",
            "LMPOP 2 m n LEFT COUNT 10",
            "LMPOP 1 nol RIGHT",
            "LMPOP 0 m LEFT",
            "LMPOP 1 m MIDDLE",
            "SET str v",
            "LMPOP 2 nol str LEFT",
            "LPUSH str a",
            "LLEN str",
        ],
        // The blocking pops, served at once.
        &[
            "RPUSH m 1 2 3 4 5",
            "BLPOP nol m 0",
            "BRPOP m nol 0",
            "BLMPOP 0 2 nol m RIGHT COUNT 2",
            "BLMOVE m d LEFT LEFT 0",
            "RPUSH m 6",
            "BRPOPLPUSH m d 0",
            "BRPOPLPUSH d d 0",
            "BLPOP m 0.01",
            "BLPOP m -1",
            "SET str v",
            "BLPOP str 0",
            "BLMOVE str d LEFT LEFT 0",
            "BLMPOP 0 1 str LEFT",
        ],
        // Served later by another client's push: the push's events, then the served pop's.
        &[
            "c:!BLPOP a b 0",
            "sleep 60",
            "RPUSH b x",
            "<c",
            "c:!BRPOP a 0",
            "sleep 60",
            "LPUSH a x y",
            "<c",
            "c:!BLMPOP 0 2 m1 m2 RIGHT COUNT 5",
            "sleep 60",
            "RPUSH m2 1 2 3",
            "<c",
            "c:!BLMPOP 0 1 m3 LEFT COUNT 2",
            "sleep 60",
            "RPUSH m3 1 2 3",
            "<c",
            "c:!BLMOVE src dst RIGHT LEFT 0",
            "sleep 60",
            "RPUSH src 1",
            "<c",
            "c:!BRPOPLPUSH q q 0",
            "sleep 60",
            "RPUSH q 1",
            "<c",
            "c:!BLMOVE e dst LEFT RIGHT 0",
            "sleep 60",
            "LMOVE dst e LEFT LEFT",
            "<c",
            "LRANGE dst 0 -1",
            "LRANGE a 0 -1",
        ],
        // A served BLMOVE whose destination has the wrong type pops nothing.
        &[
            "SET str v",
            "c:!BLMOVE k str LEFT LEFT 0",
            "sleep 60",
            "RPUSH k a",
            "<c",
            "LRANGE k 0 -1",
        ],
        // A client blocked in another database: its pop is published on that database's channels.
        &[
            "c:!SELECT 2",
            "<c",
            "c:!BLMOVE k d LEFT LEFT 0",
            "sleep 60",
            "SELECT 2",
            "RPUSH k x",
            "<c",
            "SELECT 0",
        ],
        // A push of several elements serves the one blocked pop; the rest stays.
        &[
            "c:!BLPOP k 0",
            "sleep 60",
            "RPUSH k 1 2 3",
            "<c",
            "LRANGE k 0 -1",
        ],
        // Reads: `keymiss` for a missing key, nothing for a hit; errors parsed before the lookup
        // publish nothing.
        &[
            "RPUSH l a b",
            "LRANGE l 0 -1",
            "LRANGE nol 0 -1",
            "LRANGE nol x 1",
            "LLEN l",
            "LLEN nol",
            "LINDEX l 0",
            "LINDEX nol 0",
            "LINDEX nol x",
            "LINDEX l x",
            "LPOS l b",
            "LPOS nol b",
            "LPOS nol b COUNT 0",
            "LPOS nol b RANK 0",
            "SET str v",
            "LLEN str",
            "LRANGE str 0 1",
        ],
        // Lazy expiry on the write paths: `expired`, then `new` for a recreated key.
        &[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "RPUSH e 1 2",
            "PEXPIRE e 10",
            "sleep 30",
            "LPUSH e 3",
            "PEXPIRE e 10",
            "sleep 30",
            "LPOP e",
            "RPUSH e 1",
            "PEXPIRE e 10",
            "sleep 30",
            "RPUSH src x",
            "LMOVE src e LEFT LEFT",
            "PEXPIRE e 10",
            "sleep 30",
            "LLEN e",
            "DEBUG SET-ACTIVE-EXPIRE 1",
        ],
    ];
    for flags in ["KEA", "KEAmn", "Kl", "Eg", "Elm", "Kn"] {
        common::compare_events(flags, cases);
    }
}

/// INFO keyspace_hits / keyspace_misses after each list command: the reads count, the writes and
/// the blocking pops do not.
#[test]
fn list_keyspace_hits_and_misses() {
    let commands = [
        "RPUSH l a b c",
        "LPUSH nol2 x",
        "LPUSHX nol x",
        "LLEN l",
        "LLEN nol",
        "LRANGE l 0 -1",
        "LRANGE nol 0 -1",
        "LINDEX l 0",
        "LINDEX nol 0",
        "LPOS l b",
        "LPOS nol b",
        "LSET l 0 z",
        "LINSERT nol BEFORE a b",
        "LREM nol 0 a",
        "LTRIM nol 0 1",
        "LPOP nol",
        "RPOP l",
        "LMOVE nol l LEFT LEFT",
        "LMOVE l nol2 LEFT LEFT",
        "LMPOP 2 nol l LEFT",
        "RPUSH l a b c",
        "BLPOP nol l 0",
        "BLMOVE l nol LEFT LEFT 0",
        "BLMPOP 0.01 1 nol LEFT",
        "SET str v",
        "LLEN str",
    ];
    let mut case = Vec::new();
    for c in commands {
        case.extend([c, "?keyspace_hits", "?keyspace_misses"]);
    }
    common::compare(&[&case]);
}
