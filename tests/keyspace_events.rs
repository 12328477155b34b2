//! Keyspace notifications (`notify-keyspace-events`) against Redis: the setting's syntax, and the
//! messages each command publishes on `__keyspace@<db>__:<key>` and `__keyevent@<db>__:<event>`,
//! compared message for message with Debian's redis-server (`common::compare_events`).

mod common;
use common::{compare, compare_events};

#[test]
fn the_setting_as_redis() {
    compare(&[&[
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events KEA",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events Ex",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events g$lshzxetdnKEm",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events nm",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events KEQ",
        "CONFIG GET notify-keyspace-events",
        "CONFIG SET notify-keyspace-events \"\"",
        "CONFIG GET notify-keyspace-events",
    ]]);
}

/// The events the keyspace itself raises: `new` when a key is added, `expired` when a key's time has
/// passed (found by a read, or by the active expiry cycle), `keymiss` when a read finds nothing.
#[test]
fn new_expired_and_keymiss() {
    let cases: &[&[&str]] = &[
        &["SET a 1", "SET a 2", "GET a", "GET nope", "EXISTS nope"],
        &[
            "DEBUG SET-ACTIVE-EXPIRE 0",
            "SET b 1 PX 20",
            "sleep 40",
            "GET b",
            "GET b",
            "DEBUG SET-ACTIVE-EXPIRE 1",
        ],
        // Reclaimed by the active expiry cycle, with no command touching it.
        &["SET c 1 PX 20", "sleep 400", "DBSIZE"],
        // Another database's channels.
        &["SELECT 3", "SET k v", "GET nope", "SELECT 0"],
    ];
    for flags in ["KEA", "Kn", "En", "Kx", "Ex", "Km", "KEnxm"] {
        compare_events(flags, cases);
    }
}

/// Without K or E nothing is published, whatever the classes.
#[test]
fn classes_without_k_or_e_publish_nothing() {
    compare_events(
        "A",
        &[&["SET a 1", "GET nope", "SET b 1 PX 20", "sleep 40", "GET b"]],
    );
}

/// Every `set` path publishes `set`, followed by `expire` when it carries a time; the counters
/// `incrby`/`incrbyfloat`, `append`, `setrange`; GETDEL and GETEX's past time `del`, GETEX's time
/// `expire` and PERSIST `persist` (only if there was a TTL). Refused writes, errors and no-ops
/// publish nothing; the reads publish only `keymiss`.
const STRING_CASES: &[&[&str]] = &[
    &[
        "SET a 1",
        "SET a 2 EX 100",
        "SET a 3 PX 100000 GET",
        "SET a 4 EXAT 99999999999",
        "SET a 5 PXAT 99999999999999 XX",
        "SET a 6 KEEPTTL",
        "SET a 7 NX",
        "SET a 7 NX GET",
        "SET b 7 XX",
        "SET b 7 XX GET",
        "SET b 8 NX GET",
        "SET a 1 EX 0",
        "SET a 1 EX abc",
        "SET a 1 FOO",
        "LPUSH l x",
        "SET l 1 GET",
        "SET l 1",
    ],
    &[
        "SETNX s 1",
        "SETNX s 2",
        "SETEX s 10 v",
        "PSETEX s 10000 v",
        "SETEX s 0 v",
        "PSETEX s -1 v",
        "SETEX s2 10 v",
        "GETSET s 9",
        "GETSET nx 9",
        "LPUSH l x",
        "GETSET l 9",
    ],
    &[
        "SET s 1",
        "GET nope",
        "GET s",
        "LPUSH l x",
        "GET l",
        "MGET s nope l nope2",
        "STRLEN s",
        "STRLEN nope",
        "GETRANGE s 0 2",
        "GETRANGE nope 0 2",
        "SUBSTR nope 0 1",
        "GETDEL s",
        "GETDEL s",
        "GETDEL l",
    ],
    &[
        "SET g 1",
        "GETEX g",
        "GETEX g EX 100",
        "GETEX g PX 100000",
        "GETEX g EXAT 99999999999",
        "GETEX g PXAT 99999999999999",
        "GETEX g PERSIST",
        "GETEX g PERSIST",
        "GETEX g EX 0",
        "GETEX g EX -5",
        "GETEX g EX 10 PX 10",
        "GETEX nope EX 10",
        "LPUSH l x",
        "GETEX l EX 10",
        "GETEX g EXAT 1",
        "GETEX g",
    ],
    &[
        "MSET m1 1 m2 2 m1 3",
        "MSET m1",
        "MSETNX m1 1 m9 9",
        "MSETNX m8 1 m9 9",
        "MSETNX m8 1",
    ],
    &[
        "INCR i",
        "INCR i",
        "DECR i",
        "INCRBY i 10",
        "DECRBY i 5",
        "DECRBY i -9223372036854775808",
        "INCRBY i x",
        "INCRBY i 9223372036854775807",
        "SET str hello",
        "INCR str",
        "LPUSH l x",
        "INCR l",
        "SET f 1.5",
        "INCRBYFLOAT f 1",
        "INCRBYFLOAT f2 2.5",
        "INCRBYFLOAT f abc",
        "INCRBYFLOAT f inf",
        "INCRBYFLOAT str 1",
        "INCRBYFLOAT l 1",
    ],
    &[
        "APPEND ap hello",
        "APPEND ap world",
        "APPEND ap \"\"",
        "APPEND empty \"\"",
        "LPUSH l x",
        "APPEND l x",
        "SETRANGE sr 0 \"\"",
        "SETRANGE sr 5 x",
        "SETRANGE sr 0 ab",
        "SETRANGE sr 0 \"\"",
        "SETRANGE sr -1 x",
        "SETRANGE l 0 x",
        "SETRANGE sr2 536870912 x",
        "SETRANGE sr 536870912 x",
    ],
    &["SELECT 5", "SET k v EX 10", "INCR n", "SELECT 0"],
];

#[test]
fn string_commands_as_redis() {
    for flags in ["KEA", "KEAnm", "E$", "Kg"] {
        compare_events(flags, STRING_CASES);
    }
}

/// DEL and UNLINK publish `del` per deleted key; RENAME `rename_from` then `rename_to` (after the
/// destination's `new`); COPY `copy_to` and MOVE `move_from`, `move_to`, in the databases they
/// touch; the EXPIRE family `expire`, or `del` for a time already past; PERSIST `persist`. EXISTS,
/// TYPE, TOUCH and the TTL family publish `keymiss` for a missing key; OBJECT does not.
const GENERIC_CASES: &[&[&str]] = &[
    &[
        "MSET a 1 b 2 c 3",
        "DEL a nope b a",
        "UNLINK c nope",
        "DEL nope",
        "SET x 1",
        "EXISTS x x nope",
        "EXISTS nope nope2",
        "TOUCH x nope",
        "TYPE x",
        "TYPE nope",
        "KEYS *",
        "RANDOMKEY",
        "OBJECT ENCODING nope",
        "OBJECT ENCODING x",
        "OBJECT FREQ x",
        "OBJECT IDLETIME nope",
    ],
    &[
        "SET x 1",
        "RENAME nope y",
        "RENAMENX nope y",
        "RENAME x x",
        "RENAMENX x x",
        "RENAME x y",
        "SET z 1",
        "RENAMENX y z",
        "RENAME y z",
        "RENAMENX z w",
        "SET e 1 EX 100",
        "RENAME e f",
        "TTL f",
    ],
    &[
        "SET w 1",
        "COPY w w",
        "COPY nope w2",
        "COPY w w2",
        "COPY w w2",
        "COPY w w2 REPLACE",
        "COPY w w2 DB 1",
        "COPY w w2 DB 1",
        "COPY w w2 DB 1 REPLACE",
        "COPY w w2 DB 99",
        "COPY w w2 DB x",
        "COPY w w2 FOO",
        "COPY w w DB 0",
        "SELECT 1",
        "COPY w2 w3 DB 2",
        "SELECT 0",
    ],
    &[
        "SET w 1",
        "SET w2 1",
        "MOVE w 1",
        "MOVE w 0",
        "MOVE nope 1",
        "SELECT 1",
        "SET w2 2",
        "MOVE w2 0",
        "MOVE w 3",
        "SELECT 0",
        "MOVE w2 99",
        "MOVE w2 abc",
    ],
    &[
        "EXPIRE nope 10",
        "SET e 1",
        "EXPIRE e 100",
        "PEXPIRE e 100000",
        "EXPIREAT e 99999999999",
        "PEXPIREAT e 99999999999999",
        "EXPIRE e 100 NX",
        "EXPIRE e 100 XX",
        "EXPIRE e 10 GT",
        "EXPIRE e 1000000 GT",
        "EXPIRE e 100000000 LT",
        "EXPIRE e 10 LT",
        "EXPIRE e 10 NX XX",
        "EXPIRE e 10 GT LT",
        "EXPIRE e 10 FOO",
        "EXPIRE e abc",
        "EXPIRE e 99999999999999999",
        "TTL e",
        "TTL nope",
        "PTTL nope",
        "EXPIRETIME nope",
        "PEXPIRETIME nope",
        "PERSIST e",
        "PERSIST e",
        "PERSIST nope",
        "EXPIRE e -1",
        "EXISTS e",
        "SET e2 1",
        "PEXPIREAT e2 1",
        "SET e3 1",
        "EXPIREAT e3 0 NX",
        "SET e4 1",
        "PEXPIRE e4 0",
    ],
    &[
        "SET k v",
        "SCAN 0",
        "SCAN 0 MATCH k*",
        "SCAN 0 MATCH x*",
        "SCAN 0 TYPE string",
        "SCAN 0 TYPE list",
    ],
];

#[test]
fn generic_commands_as_redis() {
    for flags in ["KEA", "KEAnm", "Eg", "Km"] {
        compare_events(flags, GENERIC_CASES);
    }
}

/// Runs `cmd` (pcall'd, so an error comes back as a plain error reply) from a script that has just
/// stored each of `keys` with a time already past: a script runs atomically, so no active expiry
/// cycle can reclaim them before the command finds them expired.
fn after_expiry(keys: &[&str], cmd: &str) -> String {
    format!(
        "EVAL \"for _, k in ipairs(KEYS) do redis.call('SET', k, 'v', 'PXAT', 1) end \
         return redis.pcall(unpack(ARGV))\" {} {} {cmd}",
        keys.len(),
        keys.join(" ")
    )
}

/// Commands that find their key expired: `expired` (from the lookup) comes first, then what the
/// command does with the key now missing (`keymiss` for a read, `new` and the write's event...).
#[test]
fn commands_finding_a_key_expired_as_redis() {
    let lines: Vec<(&[&str], &str)> = vec![
        (&["k"], "DEL k"),
        (&["k", "k2"], "UNLINK k k2"),
        (&["k"], "SET k w"),
        (&["k"], "SET k w GET"),
        (&["k"], "SET k w NX"),
        (&["k"], "SET k w XX"),
        (&["k"], "SETNX k w"),
        (&["k"], "GETSET k w"),
        (&["k"], "MSETNX k 1"),
        (&["k"], "GET k"),
        (&["k", "k2"], "MGET k k2"),
        (&["k"], "GETEX k EX 10"),
        (&["k"], "GETDEL k"),
        (&["k"], "INCR k"),
        (&["k"], "INCRBYFLOAT k 1"),
        (&["k"], "APPEND k x"),
        (&["k"], "SETRANGE k 1 x"),
        (&["k"], "STRLEN k"),
        (&["k"], "GETRANGE k 0 1"),
        (&["k"], "TYPE k"),
        (&["k", "k2"], "EXISTS k k2"),
        (&["k"], "TOUCH k"),
        (&["k"], "OBJECT ENCODING k"),
        (&["k"], "TTL k"),
        (&["k"], "PTTL k"),
        (&["k"], "EXPIRETIME k"),
        (&["k"], "PEXPIRETIME k"),
        (&["k"], "EXPIRE k 10"),
        (&["k"], "PERSIST k"),
        (&["k"], "DUMP k"),
        (&["s"], "RENAME s d"),
        (&["s"], "RENAMENX s d"),
        (&["k"], "COPY k d"),
        (&["k"], "MOVE k 3"),
        (&["k"], "SCAN 0"),
        (&["k"], "SCAN 0 MATCH k*"),
        (&["k"], "SCAN 0 TYPE string"),
        // The type filter's lookup reclaims the key, which is then of type none: listed.
        (&["k"], "SCAN 0 TYPE none"),
        (&["k"], "RANDOMKEY"),
    ];
    let mut cases: Vec<Vec<String>> = lines
        .iter()
        .map(|(keys, cmd)| vec![after_expiry(keys, cmd)])
        .collect();
    // An expired destination is reclaimed before the new key takes its place.
    for cmd in ["RENAME s d", "RENAMENX s d", "COPY s d", "COPY s d REPLACE"] {
        cases.push(vec!["SET s 1".into(), after_expiry(&["d"], cmd)]);
    }
    cases.push(vec![
        "SET k 1".into(),
        "EVAL \"redis.call('SELECT', 2) redis.call('SET', KEYS[1], 'v', 'PXAT', 1) \
         redis.call('SELECT', 0) return redis.call('MOVE', KEYS[1], 2)\" 1 k"
            .into(),
    ]);
    cases.push(vec![
        "SET k 1".into(),
        "EVAL \"redis.call('SELECT', 2) redis.call('SET', 'd', 'v', 'PXAT', 1) \
         redis.call('SELECT', 0) return redis.call('COPY', KEYS[1], 'd', 'DB', 2)\" 1 k"
            .into(),
    ]);
    // SCAN's pattern and KEYS leave an expired key alone: DEL it in the same script.
    for cmd in ["SCAN 0 MATCH x*", "KEYS *"] {
        cases.push(vec![format!(
            "EVAL \"redis.call('SET', KEYS[1], 'v', 'PXAT', 1) local r = redis.call('{}', {}) \
             redis.call('DEL', KEYS[1]) return r\" 1 k",
            cmd.split(' ').next().unwrap(),
            cmd.split(' ')
                .skip(1)
                .map(|a| format!("'{a}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )]);
    }
    let refs: Vec<Vec<&str>> = cases
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    let refs: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
    for flags in ["KEA", "KEAnm"] {
        compare_events(flags, &refs);
    }
}

/// The DUMP of the string `hello` (RDB version 10).
const HELLO_DUMP: &str = "\"\\x00\\x05hello\\x0a\\x00cr\\xdfve4 \\x0a\"";

/// RESTORE publishes `restore` after the key's `new` (also over a key it REPLACEs), and `del` when
/// a time already past makes it delete the key it replaces; nothing otherwise.
#[test]
fn restore_as_redis() {
    let p = HELLO_DUMP;
    let lines = [
        format!("RESTORE r 0 {p}"),
        format!("RESTORE r 0 {p}"),
        format!("RESTORE r 0 {p} REPLACE"),
        format!("RESTORE r 100000 {p} REPLACE"),
        format!("RESTORE r 1 {p} REPLACE ABSTTL"),
        "EXISTS r".into(),
        format!("RESTORE r2 1 {p} ABSTTL"),
        format!("RESTORE r2 100 {p}"),
        "RESTORE r 0 \"\\x00\\x05hello\"".into(),
        format!("RESTORE r -1 {p}"),
        format!("RESTORE r x {p}"),
        format!("RESTORE r 0 {p} IDLETIME 10 REPLACE"),
        format!("RESTORE r 0 {p} FREQ 10 REPLACE"),
        format!("RESTORE r 0 {p} IDLETIME -1 REPLACE"),
        format!("RESTORE r 0 {p} FOO"),
        format!("RESTORE r 99999999999999 {p} REPLACE ABSTTL"),
        "LPUSH l x".into(),
        format!("RESTORE l 0 {p} REPLACE"),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let expired = [after_expiry(&["r"], &format!("RESTORE r 0 {p}"))];
    let expired: Vec<&str> = expired.iter().map(String::as_str).collect();
    for flags in ["KEA", "KEAnm", "Eg"] {
        compare_events(flags, &[&lines, &expired]);
    }
}

/// GOBLIN.CAD publishes what its scripted idiom (`GET`, then `DEL` on a match) publishes on
/// redis-server: `keymiss` for a missing key, `del` when it deletes, `expired` for a lock whose time
/// has passed.
#[test]
fn cad_as_the_scripted_idiom() {
    const CAD: &str = "\"if redis.call('GET', KEYS[1]) == ARGV[1] then \
                       return redis.call('DEL', KEYS[1]) else return 0 end\"";
    const EXPIRED: &str = "\"redis.call('SET', KEYS[1], ARGV[1], 'PXAT', 1) return ";
    let lines = |native: bool| -> Vec<String> {
        let cad = |key: &str, token: &str| {
            if native {
                format!("GOBLIN.CAD {key} {token}")
            } else {
                format!("EVAL {CAD} 1 {key} {token}")
            }
        };
        let expired = if native {
            format!("EVAL {EXPIRED}redis.call('GOBLIN.CAD', KEYS[1], ARGV[1])\" 1 lock tok")
        } else {
            format!(
                "EVAL {EXPIRED}(redis.call('GET', KEYS[1]) == ARGV[1]) and \
                 redis.call('DEL', KEYS[1]) or 0\" 1 lock tok"
            )
        };
        vec![
            cad("lock", "tok"),
            "SET lock tok".into(),
            cad("lock", "other"),
            cad("lock", "tok"),
            cad("lock", "tok"),
            "SET n 12".into(),
            cad("n", "12"),
            "LPUSH l x".into(),
            cad("l", "x"),
            expired,
        ]
    };
    // The servers run different lines: compare replies and messages, not the lines, and errors by
    // their code (a script's error carries the script's name; the command's does not).
    let outcome = |transcript: Vec<String>| -> Vec<String> {
        transcript
            .into_iter()
            .map(|l| match l.split_once(" -> ") {
                Some((_, reply)) if reply.starts_with('-') => {
                    reply.split(' ').next().unwrap_or(reply).to_string()
                }
                Some((_, reply)) => reply.to_string(),
                None => l,
            })
            .collect()
    };
    let debug = ["--enable-debug-command", "yes"];
    let r = common::redis(&debug);
    let g = common::goblin(&debug);
    for flags in ["KEA", "KEAnm", "Eg"] {
        let redis_lines = lines(false);
        let goblin_lines = lines(true);
        let redis_lines: Vec<&str> = redis_lines.iter().map(String::as_str).collect();
        let goblin_lines: Vec<&str> = goblin_lines.iter().map(String::as_str).collect();
        let want = outcome(common::events_transcript(&r, flags, &redis_lines));
        let got = outcome(common::events_transcript(&g, flags, &goblin_lines));
        assert_eq!(want, got, "flags {flags}");
    }
}

/// The reads count INFO's keyspace hits and misses as Redis's lookups do: EXISTS, TYPE and the TTL
/// family (LOOKUP_NOTOUCH), OBJECT (which publishes no `keymiss` but counts), SCAN's TYPE filter,
/// COPY's source; the writes count nothing.
#[test]
fn keyspace_hits_and_misses_as_redis() {
    let mut case: Vec<String> = vec!["SET s 1".into(), "LPUSH l x".into()];
    let reads = [
        "GET s",
        "GET nope",
        "GET l",
        "MGET s nope l",
        "STRLEN nope",
        "GETRANGE s 0 1",
        "SET s 2 GET",
        "SET nope2 1 NX GET",
        "GETSET s 3",
        "GETEX s",
        "GETEX nope",
        "GETDEL nope2",
        "EXISTS s nope l",
        "TYPE s",
        "TYPE nope",
        "TTL s",
        "TTL nope",
        "PTTL l",
        "EXPIRETIME nope",
        "PEXPIRETIME s",
        "TOUCH s nope",
        "OBJECT ENCODING s",
        "OBJECT ENCODING nope",
        "OBJECT REFCOUNT l",
        "DUMP s",
        "DUMP nope",
        "SCAN 0 TYPE list",
        "SCAN 0 TYPE hash MATCH s*",
        "SCAN 0 MATCH s",
        "~KEYS *",
        "#RANDOMKEY",
        "COPY s c",
        "COPY nope c",
        "SET w 1",
        "SET w 2 NX",
        "MSETNX w 1 w2 2",
        "INCR i",
        "INCRBYFLOAT f 1",
        "APPEND a x",
        "SETRANGE r 1 x",
        "DEL nope w",
        "EXPIRE nope 10",
        "EXPIRE s 10",
        "PERSIST s",
        "RENAME s s2",
        "RENAMENX nope x",
        "MOVE s2 1",
        "MOVE nope 1",
    ];
    for line in reads {
        case.push(line.into());
        case.push("?keyspace_hits".into());
        case.push("?keyspace_misses".into());
    }
    let case: Vec<&str> = case.iter().map(String::as_str).collect();
    // GETEX PERSIST on a key without a TTL changes nothing: no write counted.
    let persist: &[&str] = &[
        "SET g 1",
        "?rdb_changes_since_last_save",
        "GETEX g PERSIST",
        "?rdb_changes_since_last_save",
        "GETEX g EX 100",
        "GETEX g PERSIST",
        "?rdb_changes_since_last_save",
    ];
    compare(&[&case, persist]);
}

/// Commands run by a transaction or a script publish as they would alone, in order.
#[test]
fn transactions_and_scripts_as_redis() {
    compare_events(
        "KEAnm",
        &[
            &["MULTI", "SET a 1", "LPUSH l x", "GET nope", "DEL a", "EXEC"],
            &[
                "EVAL \"redis.call('set','b','1'); redis.call('del','b'); return redis.call('get','zz')\" 0",
                "FUNCTION LOAD REPLACE \"#!lua name=t\\nredis.register_function('f', function(k) return redis.call('incr', k[1]) end)\"",
                "FCALL f 1 cnt",
                "FUNCTION FLUSH",
            ],
            &["SET k v", "WATCH k", "SET k w", "MULTI", "DEL k", "EXEC"],
        ],
    );
}
