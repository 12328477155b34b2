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
