//! Streams: the stored form against Debian's redis-server. Streams (with deletions, trims, several
//! node sizes, consumer groups, pending entries and consumers) are made by redis-server's own
//! commands; Goblin Core must take them in by RESTORE and from an RDB file, give back DUMP
//! payloads byte-identical to Redis's, the same DEBUG DIGEST-VALUE, and write files redis-server
//! loads and `redis-check-rdb` passes.

mod common;

use std::process::Command;

use common::*;

const DEBUG: [&str; 2] = ["--enable-debug-command", "yes"];

/// Streams of every shape the stored form has, made by redis-server; their keys.
fn make_streams(rc: &mut Raw) -> Vec<&'static str> {
    let lines = [
        "CONFIG SET stream-node-max-entries 3",
        "XADD s1 1-1 a 1 b 2",
        "XADD s1 1-2 a 3 b 4",
        "XADD s1 2-0 other x",
        "XADD s1 3-0 a 5 b 6",
        "XADD s1 4-0 a -7 b 12345678901",
        "XADD s1 5-0 a long-value-that-is-not-a-number b \"\"",
        "XADD s1 6-0 a 1 b 2",
        "XDEL s1 1-2 4-0",
        "XADD s2 100-0 f v",
        "XADD s2 101-0 f v",
        "XDEL s2 100-0 101-0",
        "XADD s3 1-0 f 1",
        "XADD s3 2-0 f 2",
        "XADD s3 3-0 f 3",
        "XADD s3 4-0 f 4",
        "XADD s3 5-0 f 5",
        "XTRIM s3 MAXLEN 3",
        "XSETID s3 9-9 ENTRIESADDED 20 MAXDELETEDID 7-0",
        "CONFIG SET stream-node-max-entries 100",
        "XADD g 1-0 f 1",
        "XADD g 2-0 f 2",
        "XADD g 3-0 f 3",
        "XGROUP CREATE g grp 0",
        "XGROUP CREATE g later $",
        "XREADGROUP GROUP grp alice COUNT 2 STREAMS g >",
        "XREADGROUP GROUP grp bob COUNT 1 STREAMS g >",
        "XGROUP CREATECONSUMER g grp carol",
        "XACK g grp 1-0",
        "CONFIG SET stream-node-max-bytes 64",
        "XADD b 1-0 field-one value-one field-two value-two",
        "XADD b 2-0 field-one value-one field-two value-two",
        "XADD b 3-0 x y",
        "CONFIG SET stream-node-max-bytes 4096",
    ];
    for l in lines {
        let r = rc.cmd_str(l);
        assert!(!r.starts_with(b"-"), "{l}: {}", show(&r));
    }
    vec!["s1", "s2", "s3", "g", "b"]
}

/// A bulk reply's payload.
fn payload(d: &[u8]) -> Vec<u8> {
    let start = d.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    d[start..d.len() - 2].to_vec()
}

fn digest(c: &mut Raw, k: &str) -> Vec<u8> {
    c.cmd(&[b"DEBUG", b"DIGEST-VALUE", k.as_bytes()])
}

#[test]
fn dump_restore_both_ways_byte_for_byte() {
    let r = redis(&DEBUG);
    let g = goblin(&DEBUG);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for k in make_streams(&mut rc) {
        let dr = rc.cmd(&[b"DUMP", k.as_bytes()]);
        let restore = gc.cmd(&[b"RESTORE", k.as_bytes(), b"0", &payload(&dr)]);
        assert_eq!(restore, b"+OK\r\n", "{k}");
        assert_eq!(gc.cmd(&[b"DUMP", k.as_bytes()]), dr, "DUMP {k}");
        assert_eq!(gc.cmd(&[b"TYPE", k.as_bytes()]), b"+stream\r\n");
        assert_eq!(
            gc.cmd(&[b"OBJECT", b"ENCODING", k.as_bytes()]),
            b"$6\r\nstream\r\n"
        );
        let d = digest(&mut gc, k);
        assert!(d.starts_with(b"*1\r\n+"), "{}", show(&d));
        assert_eq!(d, digest(&mut rc, k), "digest {k}");
        // Copies and renames carry the whole stream, groups included.
        let copy = format!("{k}-copy");
        assert_eq!(gc.cmd_str(&format!("COPY {k} {copy}")), b":1\r\n");
        assert_eq!(gc.cmd(&[b"DUMP", copy.as_bytes()]), dr, "COPY {k}");
        let moved = format!("{k}-renamed");
        assert_eq!(gc.cmd_str(&format!("RENAME {copy} {moved}")), b"+OK\r\n");
        assert_eq!(gc.cmd(&[b"DUMP", moved.as_bytes()]), dr, "RENAME {k}");
        // And Redis takes ours back.
        let back = rc.cmd(&[b"RESTORE", moved.as_bytes(), b"0", &payload(&dr)]);
        assert_eq!(back, b"+OK\r\n");
    }
    assert_eq!(gc.cmd_str("DEBUG DIGEST"), rc.cmd_str("DEBUG DIGEST"));
    let scan = gc.cmd_str("SCAN 0 TYPE stream COUNT 100");
    assert!(show(&scan).contains("s1-renamed"), "{}", show(&scan));
    let scan = gc.cmd_str("SCAN 0 TYPE string COUNT 100");
    assert!(!show(&scan).contains("s1"), "{}", show(&scan));
    let bad = gc.cmd_str("RESTORE bad 0 \"\\x13\\x01\\x10\"");
    assert!(bad.starts_with(b"-"), "{}", show(&bad));
    assert_eq!(gc.cmd_str("LPUSH s1 x"), rc.cmd_str("LPUSH s1 x"));
}

#[test]
fn rdb_files_cross_load_and_pass_check_rdb() {
    let r = redis(&[]);
    let mut rc = r.raw();
    let keys = make_streams(&mut rc);
    assert_eq!(rc.cmd_str("SAVE"), b"+OK\r\n");
    let dumps: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| rc.cmd(&[b"DUMP", k.as_bytes()]))
        .collect();

    // Redis's file into Goblin Core.
    let dir = scratch_dir("streams-rdb-in");
    std::fs::copy(r.dir.join("dump.rdb"), dir.join("dump.rdb")).unwrap();
    let g = goblin(&["--dir", dir.to_str().unwrap(), DEBUG[0], DEBUG[1]]);
    let mut gc = g.raw();
    for (k, d) in keys.iter().zip(&dumps) {
        assert_eq!(&gc.cmd(&[b"DUMP", k.as_bytes()]), d, "loaded {k}");
    }

    // Goblin Core's file: checked, then into Redis.
    for compression in ["yes", "no"] {
        gc.cmd_str(&format!("CONFIG SET rdbcompression {compression}"));
        assert_eq!(gc.cmd_str("SAVE"), b"+OK\r\n");
        let check = Command::new("redis-check-rdb")
            .arg(dir.join("dump.rdb"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&check.stdout);
        assert!(
            check.status.success() && text.contains("RDB looks OK"),
            "{text}"
        );
    }
    let rdir = scratch_dir("streams-rdb-out");
    std::fs::copy(dir.join("dump.rdb"), rdir.join("dump.rdb")).unwrap();
    let r2 = redis(&["--dir", rdir.to_str().unwrap()]);
    let mut r2c = r2.raw();
    for (k, d) in keys.iter().zip(&dumps) {
        assert_eq!(&r2c.cmd(&[b"DUMP", k.as_bytes()]), d, "written {k}");
    }
    // And through a restart of Goblin Core itself (DEBUG RELOAD saves and loads).
    gc.cmd_str("CONFIG SET rdbcompression yes");
    assert_eq!(gc.cmd_str("DEBUG RELOAD"), b"+OK\r\n");
    for (k, d) in keys.iter().zip(&dumps) {
        assert_eq!(&gc.cmd(&[b"DUMP", k.as_bytes()]), d, "reloaded {k}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&rdir);
}

/// Every command, option and error of XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM and XSETID,
/// byte for byte in RESP2 and RESP3 (IDs explicit where Redis's would be the clock's).
#[test]
fn commands_match_redis() {
    compare_both(&[
        &[
            "XADD s 1-1 a 1 b 2",
            "XADD s 1-2 a 3 b 4",
            "XADD s 1-* c 5",
            "XADD s 2-* c 6",
            "XADD s 2-5 a x",
            "XADD s 2-5 a x",
            "XADD s 1-9 a x",
            "XADD s 0-0 a x",
            "XADD s 0 a x",
            "XADD s 3 a x",
            "XADD s 3-0 a x",
            "XADD s 4-1 a",
            "XADD s 4-1 a b c",
            "XADD s - a b",
            "XADD s + a b",
            "XADD s abc a b",
            "XADD s 4-x a b",
            "XADD s 4-1-1 a b",
            "XADD s 18446744073709551616-0 a b",
            "XADD s 0004-7 a b",
            "XADD s +5-1 a b",
            "XADD s \" 6-1\" a b",
            "XADD s 10--0 a b",
            "XADD s 11--00005 a b",
            "XADD s 12-\t7 a b",
            "XADD s 13- a b",
            "XRANGE s - 18446744073709551616",
            "XRANGE s 10 11-18446744073709551615",
            "XLEN s",
            "XLEN nokey",
            "XRANGE s - +",
            "XREVRANGE s + -",
            "XRANGE s 1 1",
            "XRANGE s (1-1 +",
            "XRANGE s - (2-5",
            "XREVRANGE s (2-5 (1-1",
            "XRANGE s - + COUNT 2",
            "XREVRANGE s + - COUNT 2",
            "XRANGE s - + COUNT 0",
            "XRANGE s - + COUNT -5",
            "XRANGE s - + COUNT",
            "XRANGE s - + COUNT x",
            "XRANGE s - + LIMIT 1",
            "XRANGE s ( +",
            "XRANGE s (- +",
            "XRANGE s - (+",
            "XRANGE s (18446744073709551615-18446744073709551615 +",
            "XRANGE s - (0-0",
            "XRANGE s 5 1",
            "XRANGE s x +",
            "XRANGE nokey - +",
            "XRANGE nokey - + COUNT 0",
            "XREVRANGE nokey + -",
            "XRANGE s -",
            "XDEL s 1-2 2-5 9-9",
            "XDEL s 1-2",
            "XDEL s x",
            "XDEL nokey x",
            "XRANGE s - +",
            "XLEN s",
            "SET str v",
            "XADD str * a b",
            "XLEN str",
            "XRANGE str - +",
            "XDEL str 1-1",
            "XTRIM str MAXLEN 1",
            "XSETID str 1-1",
            "TYPE s",
            "OBJECT ENCODING s",
        ],
        &[
            "XADD s NOMKSTREAM 1-1 a b",
            "EXISTS s",
            "XADD s NOMKSTREAM",
            "XADD s MAXLEN",
            "XADD s MAXLEN 5",
            "XADD s MAXLEN x 1-1 a b",
            "XADD s MAXLEN -1 1-1 a b",
            "XADD s MAXLEN 1 MINID 0 1-1 a b",
            "XADD s MINID 1 MAXLEN 0 1-1 a b",
            "XADD s LIMIT 10 1-1 a b",
            "XADD s MAXLEN 5 LIMIT 10 1-1 a b",
            "XADD s MAXLEN = 5 LIMIT 10 1-1 a b",
            "XADD s MAXLEN ~ 5 LIMIT -1 1-1 a b",
            "XADD s MAXLEN ~ 5 LIMIT x 1-1 a b",
            "XADD s MINID x 1-1 a b",
            "XADD s MINID - 1-1 a b",
            "EXISTS s",
            "XADD s MAXLEN 2 1-1 a 1",
            "XADD s MAXLEN 2 2-1 a 2",
            "XADD s MAXLEN 2 3-1 a 3",
            "XADD s MAXLEN = 2 4-1 a 4",
            "XADD s MINID 4 5-1 a 5",
            "XADD s MINID = 5-1 6-1 a 6",
            "XADD s maxlen ~ 1 limit 0 7-1 a 7",
            "XRANGE s - +",
            "XADD s MINID 3 NOMKSTREAM 8-1 a 8",
            "XLEN s",
            "XADD s MAXLEN 0 9-1 a 9",
            "XLEN s",
            "XRANGE s - +",
            "XADD s 9-1 a b",
            "XADD s 9-* a b",
        ],
        &[
            "CONFIG SET stream-node-max-entries 3",
            "XADD s 1 f v",
            "XADD s 2 f v",
            "XADD s 3 f v",
            "XADD s 4 f v",
            "XADD s 5 f v",
            "XADD s 6 f v",
            "XADD s 7 f v",
            "XADD s 8 f v",
            "XADD s 9 f v",
            "XADD s 10 f v",
            "XTRIM s MAXLEN ~ 8",
            "XLEN s",
            "XTRIM s MAXLEN ~ 5",
            "XLEN s",
            "XTRIM s MINID ~ 9",
            "XLEN s",
            "XTRIM s MINID ~ 10 LIMIT 1",
            "XTRIM s MAXLEN 3",
            "XRANGE s - +",
            "XTRIM s MINID 10",
            "XRANGE s - +",
            "XTRIM s MINID 10",
            "XTRIM nokey MAXLEN 0",
            "XTRIM s",
            "XTRIM s LIMIT 3",
            "XTRIM s MAXLEN 1 LIMIT 3",
            "XTRIM s MAXLEN ~ 1 LIMIT 3 extra",
            "XTRIM s MAXLEN -1",
            "XTRIM s MINID +",
            "XTRIM s MAXLEN 1 MINID 1",
            "XTRIM s BOGUS 1",
            "XTRIM s MAXLEN ~",
            "XTRIM s MAXLEN 0",
            "XLEN s",
            "EXISTS s",
            "XADD s 11 f v",
            "DEBUG DIGEST-VALUE s",
            "CONFIG SET stream-node-max-entries 100",
        ],
        &[
            "XSETID nokey 1-1",
            "XADD s 5-5 a b",
            "XADD s 6-6 a b",
            "XSETID s 6-5",
            "XSETID s 6-6",
            "XSETID s 7",
            "XADD s 7-* a b",
            "XSETID s 100-0 ENTRIESADDED 1",
            "XSETID s 100-0 ENTRIESADDED -1",
            "XSETID s 100-0 ENTRIESADDED x",
            "XSETID s 100-0 MAXDELETEDID 200-0",
            "XSETID s 100-0 MAXDELETEDID x",
            "XSETID s 100-0 ENTRIESADDED",
            "XSETID s 100-0 BOGUS 1",
            "XSETID s - ",
            "XSETID s 100-0 ENTRIESADDED 10 MAXDELETEDID 50-0",
            "XADD s 100-0 a b",
            "XADD s 100-* a b",
            "XDEL s 5-5 6-6 100-1",
            "XLEN s",
            "XSETID s 1-0",
            "XSETID s 18446744073709551615-18446744073709551615",
            "XADD s * a b",
            "XADD s 5 a b",
            "XADD e MAXLEN 0 1-1 a b",
            "XSETID e 0-1",
            "XLEN e",
        ],
    ]);
}

/// The incr files of an AOF directory, in manifest order, with every clock-made ID (13 digits of
/// milliseconds) masked.
fn incr_log(dir: &std::path::Path) -> String {
    aof_incr_lines(dir)
        .iter()
        .map(|l| match l.split_once('-') {
            Some((ms, _)) if ms.len() == 13 && ms.bytes().all(|c| c.is_ascii_digit()) => "<id>",
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const WRITES: &[&str] = &[
    "CONFIG SET stream-node-max-entries 2",
    "XADD s 1-1 a b",
    "XADD s * c d",
    "XADD s 99999999999999-* e f",
    "XADD s 99999999999999-* e f",
    "XADD s MAXLEN ~ 2 * g h",
    "XADD s MAXLEN = 4 LIMIT 0 * i j",
    "XADD s2 MINID ~ 0 1-1 a b",
    "XADD s2 2-1 a b",
    "XADD s2 3-1 a b",
    "XADD s2 4-1 a b",
    "XADD s2 5-1 a b",
    "XTRIM s2 MINID ~ 4-1",
    "XTRIM s2 MINID ~ 5",
    "XTRIM s2 MAXLEN ~ 0",
    "XADD s2 6-1 a b",
    "XADD s2 7-1 a b",
    "XTRIM s2 MAXLEN 1",
    "XTRIM s2 MAXLEN 1",
    "XDEL s2 7-1 8-1",
    "XDEL s2 7-1",
    "XSETID s2 9-9 ENTRIESADDED 50 MAXDELETEDID 8-0",
    "XADD gone NOMKSTREAM 1-1 a b",
    "XADD s3 1-1 a b",
    "XDEL s3 1-1",
    "MULTI",
    "XADD s4 1-1 a b",
    "XADD s4 * c d",
    "EXEC",
    "EVAL \"return redis.call('xadd', KEYS[1], '*', 'x', 'y')\" 1 s5",
];

#[test]
fn aof_logs_what_redis_logs_and_replays() {
    let rdir = scratch_dir("streams-aof-r");
    let gdir = scratch_dir("streams-aof-g");
    let aof = |d: &std::path::Path| -> Vec<String> {
        [
            "--dir",
            d.to_str().unwrap(),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            DEBUG[0],
            DEBUG[1],
        ]
        .map(String::from)
        .to_vec()
    };
    let (ra, ga) = (aof(&rdir), aof(&gdir));
    let r = redis(&ra.iter().map(String::as_str).collect::<Vec<_>>());
    let g = goblin(&ga.iter().map(String::as_str).collect::<Vec<_>>());
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for l in WRITES {
        let (want, got) = (rc.cmd_str(l), gc.cmd_str(l));
        // A generated ID (EXEC's reply holds the one its `XADD *` made) depends on the clock.
        if !l.contains('*') {
            assert_eq!(
                mask_clock_ids(&show(&got)),
                mask_clock_ids(&show(&want)),
                "{l}"
            );
        }
    }
    let log = incr_log(&gdir);
    assert!(log.contains("XSETID") && log.contains("<id>"), "{log}");
    assert_eq!(log, incr_log(&rdir));
    let keys = ["s", "s2", "s3", "s4", "s5"];
    let dumps: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| gc.cmd(&[b"DUMP", k.as_bytes()]))
        .collect();
    // The log replays to the same streams, and so does a rewrite into commands.
    for rewrite in [None, Some("no"), Some("yes")] {
        if let Some(preamble) = rewrite {
            gc.cmd_str(&format!("CONFIG SET aof-use-rdb-preamble {preamble}"));
            rewrite_aof(&mut gc);
        }
        assert_eq!(gc.cmd_str("DEBUG LOADAOF"), b"+OK\r\n");
        for (k, d) in keys.iter().zip(&dumps) {
            assert_eq!(
                &gc.cmd(&[b"DUMP", k.as_bytes()]),
                d,
                "{k} after {rewrite:?}"
            );
        }
    }
    drop((r, g));
    let _ = std::fs::remove_dir_all(&rdir);
    let _ = std::fs::remove_dir_all(&gdir);
}

/// Keyspace events, as Redis raises them.
#[test]
fn keyspace_events_match_redis() {
    compare_events(
        "KEA",
        &[&[
            "XADD s 1-1 a b",
            "XADD s MAXLEN 1 2-1 a b",
            "XADD s MAXLEN 5 3-1 a b",
            "XTRIM s MAXLEN 0",
            "XTRIM s MAXLEN 0",
            "XADD s 4-1 a b",
            "XDEL s 4-1",
            "XDEL s 4-1",
            "XSETID s 9-9",
            "XADD n NOMKSTREAM 1-1 a b",
            "XADD s 1-1 a b",
        ]],
    );
}

/// WATCH (XSETID, as in Redis 7.0, touches nothing), the OOM refusal of XADD, MULTI, scripts,
/// and COMMAND's view of the rows.
#[test]
fn watch_oom_transactions_and_scripts_match_redis() {
    let watch = |w: &'static str| -> Vec<&'static str> {
        vec![
            "a:FLUSHALL",
            "a:XADD s 1-1 f v",
            "a:WATCH s",
            w,
            "a:MULTI",
            "a:PING",
            "a:EXEC",
        ]
    };
    let cases: Vec<Vec<&str>> = vec![
        watch("b:XADD s 2-1 f v"),
        watch("b:XADD s NOMKSTREAM 2-1 f v"),
        watch("b:XADD s 1-1 f v"),
        watch("b:XDEL s 1-1"),
        watch("b:XDEL s 9-9"),
        watch("b:XTRIM s MAXLEN 0"),
        watch("b:XTRIM s MAXLEN 5"),
        watch("b:XSETID s 5-5"),
        watch("b:XLEN s"),
        vec![
            "a:FLUSHALL",
            "a:XADD s 1-1 f v",
            "a:CONFIG SET maxmemory 1",
            "a:XADD s 2-1 f v",
            "a:XSETID s 3-3",
            "a:XDEL s 1-1",
            "a:XTRIM s MAXLEN 0",
            "a:XLEN s",
            "a:CONFIG SET maxmemory 0",
        ],
        vec![
            "a:FLUSHALL",
            "a:MULTI",
            "a:XADD s 1-1 f v",
            "a:XADD s 1-1 f v",
            "a:XRANGE s - +",
            "a:EXEC",
            "a:EVAL \"return redis.call('xrange', KEYS[1], '-', '+')\" 1 s",
            "a:EVAL \"return redis.call('xadd', KEYS[1], '1-1', 'f', 'v')\" 1 s",
            "a:EVAL \"return redis.pcall('xadd', KEYS[1], '2-1', 'f')\" 1 s",
            "a:EVAL \"return redis.call('xadd', KEYS[1], '2-1', 'f', 'v')\" 1 s",
            "a:EVAL_RO \"return redis.call('xlen', KEYS[1])\" 1 s",
            "a:EVAL_RO \"return redis.call('xadd', KEYS[1], '3-1', 'f', 'v')\" 1 s",
            "a:COMMAND GETKEYS XADD s * f v",
            "a:COMMAND GETKEYS XRANGE s - +",
        ],
    ];
    let refs: Vec<&[&str]> = cases.iter().map(|c| c.as_slice()).collect();
    let logs = scenarios(&[], &refs);
    assert!(logs[0].iter().any(|l| l.contains("*-1")), "{:?}", logs[0]);
}

/// Generated IDs: the clock's milliseconds, then the next sequence; never backwards.
#[test]
fn generated_ids_rise() {
    let g = goblin(&[]);
    let mut c = g.raw();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut last = (0u64, 0u64);
    for _ in 0..200 {
        let r = c.cmd_str("XADD s * f v");
        let text = String::from_utf8_lossy(&r);
        let id = text.lines().nth(1).unwrap().to_string();
        let (ms, seq) = id.split_once('-').unwrap();
        let id = (ms.parse::<u64>().unwrap(), seq.parse::<u64>().unwrap());
        assert!(id > last && id.0 >= before, "{id:?} after {last:?}");
        last = id;
    }
    let future = c.cmd_str("XADD s 99999999999999-5 f v");
    assert_eq!(future, b"$16\r\n99999999999999-5\r\n");
    assert_eq!(c.cmd_str("XADD s * f v"), b"$16\r\n99999999999999-6\r\n");
    assert_eq!(c.cmd_str("XLEN s"), b":202\r\n");
}

/// XREAD without blocking, every option and error, RESP2 and RESP3.
#[test]
fn xread_matches_redis() {
    compare_both(&[&[
        "XADD s1 1-1 a 1",
        "XADD s1 2-1 b 2",
        "XADD s2 5-1 c 3",
        "XREAD STREAMS s1 0",
        "XREAD STREAMS s1 s2 0 0",
        "XREAD COUNT 1 STREAMS s1 s2 1-1 0-0",
        "XREAD COUNT 0 STREAMS s1 0",
        "XREAD COUNT -3 STREAMS s1 0",
        "XREAD STREAMS s1 s2 $ $",
        "XREAD STREAMS s1 nokey 1 0",
        "XREAD STREAMS nokey $",
        "XREAD BLOCK 10 STREAMS s1 2-1",
        "XREAD BLOCK -1 STREAMS s1 0",
        "XREAD BLOCK x STREAMS s1 0",
        "XREAD COUNT x STREAMS s1 0",
        "XREAD STREAMS s1",
        "XREAD STREAMS s1 s2 0",
        "XREAD COUNT 1",
        "XREAD BOGUS STREAMS s1 0",
        "XREAD GROUP g c STREAMS s1 0",
        "XREAD NOACK STREAMS s1 0",
        "XREAD STREAMS s1 >",
        "XREAD STREAMS s1 -",
        "XREAD STREAMS s1 x",
        "SET str v",
        "XREAD STREAMS s1 str 0 0",
        "XREAD STREAMS s1 str x 0",
        "XDEL s1 2-1",
        "XREAD STREAMS s1 1-1",
        "XREAD streams s1 0-0",
        "MULTI",
        "XREAD BLOCK 0 STREAMS s1 $",
        "XREAD STREAMS s1 0",
        "EXEC",
        "EVAL \"return redis.call('xread', 'BLOCK', '0', 'STREAMS', KEYS[1], '$')\" 1 s1",
        "EVAL \"return redis.call('xread', 'STREAMS', KEYS[1], '0')\" 1 s1",
    ]]);
}

/// Blocked XREAD: woken by XADD from another client, EXEC and a script; several streams; several
/// clients; COUNT; timeouts; `$` fixed when blocking.
#[test]
fn xread_blocking_matches_redis() {
    let cases: &[&[&str]] = &[
        &[
            "b:!XREAD BLOCK 0 STREAMS s $",
            "sleep 50",
            "a:XADD s 1-1 f v",
            "b:<",
        ],
        &[
            "a:XADD s 1-1 f v",
            "b:!XREAD BLOCK 0 STREAMS s $",
            "c:!XREAD BLOCK 0 STREAMS s 0-0",
            "c:<",
            "sleep 50",
            "a:XADD s 2-1 g w",
            "b:<",
        ],
        &[
            "b:!XREAD BLOCK 0 STREAMS s1 s2 $ $",
            "c:!XREAD COUNT 1 BLOCK 0 STREAMS s2 $",
            "sleep 50",
            "a:MULTI",
            "a:XADD s2 1-1 a 1",
            "a:XADD s2 2-1 b 2",
            "a:XADD s1 1-1 c 3",
            "a:EXEC",
            "b:<",
            "c:<",
        ],
        &[
            "b:!XREAD BLOCK 0 STREAMS s $",
            "sleep 50",
            "a:EVAL \"return redis.call('xadd', KEYS[1], '7-7', 'f', 'v')\" 1 s",
            "b:<",
        ],
        &[
            "b:!XREAD BLOCK 100 STREAMS s $",
            "sleep 250",
            "b:<",
            "b:PING",
        ],
        &[
            "a:HELLO 3",
            "a:!XREAD BLOCK 100 STREAMS s $",
            "sleep 250",
            "a:<",
        ],
        &[
            "a:XADD s 5-5 f v",
            "b:!XREAD BLOCK 0 STREAMS s $",
            "sleep 50",
            "a:XADD s 5-6 f v",
            "b:<",
            "b:!XREAD BLOCK 0 STREAMS s $",
            "sleep 50",
            "a:DEL s",
            "a:RPUSH s x",
            "a:DEL s",
            "a:XADD s 1-1 f v",
            "b:quiet",
            "a:XADD s 9-9 f v",
            "b:<",
        ],
        &[
            "a:XADD s 1-1 f v",
            "b:!XREAD BLOCK 0 STREAMS s $",
            "sleep 50",
            "a:MULTI",
            "a:XADD s 2-1 f v",
            "a:XDEL s 2-1",
            "a:EXEC",
            "b:<",
        ],
        &[
            "b:HELLO 3",
            "b:!XREAD BLOCK 0 STREAMS s1 s2 $ $",
            "sleep 50",
            "a:XADD s2 3-3 f v",
            "b:<",
            "b:!XREAD BLOCK 0 STREAMS s1 nokey 0 0",
            "sleep 50",
            "a:SET nokey v",
            "b:quiet",
            "a:XADD s1 1-1 f v",
            "b:<",
            "a:info:blocked_clients",
        ],
    ];
    scenarios(&[], cases);
}

/// `text` with every ID made from the clock (a millisecond time of 13 digits, a dash, a sequence)
/// written `<ms>-<seq>`.
fn mask_clock_ids(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let boundary = i == 0 || !b[i - 1].is_ascii_digit();
        if boundary && digits == 13 && b.get(i + 13) == Some(&b'-') {
            let seq = b[i + 14..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if seq > 0 {
                out.push_str("<ms>-<seq>");
                i += 14 + seq;
                continue;
            }
        }
        // Byte by byte: both sides are shown the same way, whatever the bytes are.
        let n = digits.max(1);
        out.extend(b[i..i + n].iter().map(|&c| c as char));
        i += n;
    }
    out
}

/// Reads an RDB length (`rdbLoadLen`) at `*at`, moving past it.
fn rdb_len(b: &[u8], at: &mut usize) -> u64 {
    let first = b[*at];
    let (v, n) = match first >> 6 {
        0 => ((first & 0x3f) as u64, 1),
        1 => ((((first & 0x3f) as u64) << 8) | b[*at + 1] as u64, 2),
        _ if first == 0x80 => (
            u32::from_be_bytes(b[*at + 1..*at + 5].try_into().unwrap()) as u64,
            5,
        ),
        _ if first == 0x81 => (
            u64::from_be_bytes(b[*at + 1..*at + 9].try_into().unwrap()),
            9,
        ),
        _ => panic!("an encoded string where a length was expected (rdbcompression is off)"),
    };
    *at += n;
    v
}

/// Moves past an RDB string written raw (no LZF, no integer encoding).
fn rdb_skip_string(b: &[u8], at: &mut usize) {
    let n = rdb_len(b, at) as usize;
    *at += n;
}

/// A stream DUMP payload made by Redis 7.0 (`RDB_TYPE_STREAM_LISTPACKS_2`) rewritten as Redis 5/6
/// wrote it (`RDB_TYPE_STREAM_LISTPACKS`, RDB version 9): without the first ID, the greatest
/// deleted ID, the entries-added counter and each group's entries-read.
fn as_redis6_payload(p: &[u8]) -> Vec<u8> {
    assert_eq!(p[0], 19, "a STREAM_LISTPACKS_2 payload");
    let body = &p[..p.len() - 10];
    let mut out = vec![15u8];
    let mut at = 1;
    let keep = |out: &mut Vec<u8>, from: usize, to: usize| out.extend_from_slice(&body[from..to]);
    let start = at;
    let nodes = rdb_len(body, &mut at);
    for _ in 0..nodes {
        rdb_skip_string(body, &mut at);
        rdb_skip_string(body, &mut at);
    }
    rdb_len(body, &mut at); // length
    rdb_len(body, &mut at); // last ID
    rdb_len(body, &mut at);
    keep(&mut out, start, at);
    for _ in 0..5 {
        rdb_len(body, &mut at); // first ID, max deleted ID, entries added
    }
    let from = at;
    let groups = rdb_len(body, &mut at);
    keep(&mut out, from, at);
    for _ in 0..groups {
        let from = at;
        rdb_skip_string(body, &mut at);
        rdb_len(body, &mut at);
        rdb_len(body, &mut at);
        keep(&mut out, from, at);
        rdb_len(body, &mut at); // entries read
        let from = at;
        let pel = rdb_len(body, &mut at);
        for _ in 0..pel {
            at += 16 + 8;
            rdb_len(body, &mut at);
        }
        let consumers = rdb_len(body, &mut at);
        for _ in 0..consumers {
            rdb_skip_string(body, &mut at);
            at += 8;
            let n = rdb_len(body, &mut at);
            at += 16 * n as usize;
        }
        keep(&mut out, from, at);
    }
    assert_eq!(at, body.len(), "the whole stream was read");
    out.extend_from_slice(&9u16.to_le_bytes());
    let crc = goblin_core::persist::lzf::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Streams in the older RDB type of Redis 5/6 load into Goblin Core as into redis-server 7.0:
/// the counters that type lacks (first ID, entries-added, each group's entries-read) are derived
/// the same way, and both then dump the same 7.0 payload.
#[test]
fn redis6_stream_type_loads_as_redis_loads_it() {
    let r = redis(&DEBUG);
    let g = goblin(&DEBUG);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    let keys = make_streams(&mut rc);
    rc.cmd_str("CONFIG SET rdbcompression no");
    for k in keys {
        let old = as_redis6_payload(&payload(&rc.cmd(&[b"DUMP", k.as_bytes()])));
        let copy = format!("{k}-v6");
        for c in [&mut rc, &mut gc] {
            let restored = c.cmd(&[b"RESTORE", copy.as_bytes(), b"0", &old]);
            assert_eq!(restored, b"+OK\r\n", "{k}: {}", show(&restored));
        }
        let info = format!("XINFO STREAM {copy} FULL");
        assert_eq!(show(&gc.cmd_str(&info)), show(&rc.cmd_str(&info)), "{k}");
        let groups = format!("XINFO GROUPS {copy}");
        assert_eq!(
            show(&gc.cmd_str(&groups)),
            show(&rc.cmd_str(&groups)),
            "{k}"
        );
        // Redis dumps with its compression off; ours is compared by what it restores to.
        let dump = gc.cmd(&[b"DUMP", copy.as_bytes()]);
        let back = format!("{k}-back");
        assert_eq!(
            rc.cmd(&[b"RESTORE", back.as_bytes(), b"0", &payload(&dump)]),
            b"+OK\r\n"
        );
        let info_back = format!("XINFO STREAM {back} FULL");
        assert_eq!(
            show(&rc.cmd_str(&info_back)),
            show(&rc.cmd_str(&info)),
            "{k} back"
        );
    }
}
