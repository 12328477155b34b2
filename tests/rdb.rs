//! RDB snapshots and DUMP/RESTORE: restart round trips, files exchanged with Debian's redis-server
//! (and checked by `redis-check-rdb`), truncated and corrupted files, DUMP byte for byte.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::persist::*;
use common::*;

fn persistent_dir(tag: &str) -> PathBuf {
    scratch_dir(&format!("rdb-{tag}"))
}

/// Waits until INFO says no BGSAVE child is running.
fn wait_bgsave(c: &mut Raw) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while info_field(c, "rdb_bgsave_in_progress") != Some(0) {
        assert!(Instant::now() < deadline, "BGSAVE did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn restart_round_trip_every_type_and_ttl() {
    let dir = persistent_dir("restart");
    let d = dir.to_str().unwrap();
    // SHUTDOWN saves because a save point is configured.
    let mut g = goblin(&["--dir", d, "--save", "3600 1"]);
    let mut c = g.raw();
    fill(&mut c);
    let before = snapshot(&mut c);
    assert!(info_field(&mut c, "rdb_changes_since_last_save").unwrap() > 0);
    c.send(&encode(&[b"SHUTDOWN"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));
    assert!(dir.join("dump.rdb").exists());

    let mut g = goblin(&["--dir", d, "--save", "3600 1"]);
    let mut c = g.raw();
    assert_same(&before, &snapshot(&mut c));
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), Some(0));
    assert!(info_field(&mut c, "rdb_last_load_keys_loaded").unwrap() > 30);

    // BGSAVE: a child writes the file; the changes made after it are not in it.
    c.cmd_str("SET after:bgsave-start 1");
    assert_eq!(c.cmd_str("BGSAVE"), b"+Background saving started\r\n");
    wait_bgsave(&mut c);
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), Some(0));
    c.cmd_str("SET after:bgsave 1");
    c.cmd_str("DEL s:int");
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), Some(2));
    let lastsave = String::from_utf8_lossy(&c.cmd_str("LASTSAVE")).into_owned();
    assert!(lastsave.starts_with(':'));
    c.send(&encode(&[b"SHUTDOWN", b"NOSAVE"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));

    let g = goblin(&["--dir", d]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("GET after:bgsave-start"), b"$1\r\n1\r\n");
    assert_eq!(c.cmd_str("EXISTS after:bgsave"), b":0\r\n");
    assert_eq!(c.cmd_str("GET s:int"), b"$5\r\n12345\r\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_rules_trigger_a_background_save() {
    let dir = persistent_dir("rules");
    let d = dir.to_str().unwrap();
    let g = goblin(&["--dir", d, "--save", "1 2", "--hz", "50"]);
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    c.cmd_str("SET b 2");
    let deadline = Instant::now() + Duration::from_secs(10);
    while info_field(&mut c, "rdb_saves") != Some(1) {
        assert!(Instant::now() < deadline, "no save from the save rule");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(dir.join("dump.rdb").exists());
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn redis_written_file_loads_into_goblin() {
    let r = redis(&[]);
    let mut rc = r.raw();
    fill(&mut rc);
    assert_eq!(rc.cmd_str("SAVE"), b"+OK\r\n");
    let expected = snapshot(&mut rc);
    let dir = persistent_dir("from-redis");
    std::fs::copy(r.dir.join("dump.rdb"), dir.join("dump.rdb")).unwrap();
    let g = goblin(&["--dir", dir.to_str().unwrap()]);
    let mut gc = g.raw();
    assert_same(&expected, &snapshot(&mut gc));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn goblin_written_file_loads_into_redis_and_passes_check_rdb() {
    let dir = persistent_dir("to-redis");
    let g = goblin(&["--dir", dir.to_str().unwrap()]);
    let mut gc = g.raw();
    fill(&mut gc);
    assert_eq!(gc.cmd_str("SAVE"), b"+OK\r\n");
    let expected = snapshot(&mut gc);
    let check = Command::new("redis-check-rdb")
        .arg(dir.join("dump.rdb"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{text}");
    assert!(text.contains("RDB looks OK"), "{text}");
    // Uncompressed too (rdbcompression no).
    gc.cmd_str("CONFIG SET rdbcompression no");
    gc.cmd_str("SAVE");
    let check = Command::new("redis-check-rdb")
        .arg(dir.join("dump.rdb"))
        .output()
        .unwrap();
    assert!(check.status.success());

    let rdir = persistent_dir("to-redis-r");
    std::fs::copy(dir.join("dump.rdb"), rdir.join("dump.rdb")).unwrap();
    let r = redis(&["--dir", rdir.to_str().unwrap()]);
    let mut rc = r.raw();
    assert_same(&expected, &snapshot(&mut rc));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&rdir);
}

#[test]
fn truncated_and_corrupted_files_stop_start_up_untouched() {
    let dir = persistent_dir("corrupt");
    let g = goblin(&["--dir", dir.to_str().unwrap(), "--rdbcompression", "no"]);
    let mut c = g.raw();
    fill(&mut c);
    c.cmd_str("SAVE");
    drop(g);
    let good = std::fs::read(dir.join("dump.rdb")).unwrap();
    let path = dir.join("dump.rdb");
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..good.len() / 2].to_vec(), "unexpected end of file"),
        (good[..good.len() - 3].to_vec(), "unexpected end of file"),
        (good[..5].to_vec(), "too short"),
        (b"NOTREDIS0010".to_vec(), "Wrong signature"),
        (
            b"REDIS0099\xff".to_vec(),
            "Can't handle RDB format version 99",
        ),
        (
            {
                let mut b = good.clone();
                let n = b.len();
                b[n - 20] ^= 0x55;
                b
            },
            "",
        ),
        (
            {
                let mut b = good.clone();
                let n = b.len();
                b[n - 1] ^= 0x01;
                b
            },
            "Wrong RDB checksum",
        ),
    ];
    for (bytes, msg) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let log = start_fails(&["--dir", dir.to_str().unwrap()]);
        assert!(log.contains("Fatal error loading the DB"), "{log}");
        assert!(log.contains(msg), "expected {msg:?} in {log}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "file was modified");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dump_matches_redis_byte_for_byte_and_restores_across() {
    let r = redis(&[]);
    let g = goblin(&[]);
    let (mut rc, mut gc) = (r.raw(), g.raw());
    fill(&mut rc);
    fill(&mut gc);
    let keys = parse_array(&rc.cmd_str("KEYS *"));
    assert!(keys.len() > 25);
    for k in &keys {
        let enc = rc.cmd(&[b"OBJECT", b"ENCODING", k]);
        let (dr, dg) = (rc.cmd(&[b"DUMP", k]), gc.cmd(&[b"DUMP", k]));
        // A hashtable's order is its hash function's: the same members, in another order.
        if enc != b"$9\r\nhashtable\r\n" {
            assert!(
                dr == dg,
                "DUMP {} ({}) differs:\n redis  {}\n goblin {}",
                String::from_utf8_lossy(k),
                show(&enc),
                show(&dr),
                show(&dg)
            );
        }
        // Each restores the other's payload to the same value.
        let payload = |d: &[u8]| {
            let start = d.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
            d[start..d.len() - 2].to_vec()
        };
        let mut nk = b"copy:".to_vec();
        nk.extend_from_slice(k);
        assert_eq!(gc.cmd(&[b"RESTORE", &nk, b"0", &payload(&dr)]), b"+OK\r\n");
        assert_eq!(rc.cmd(&[b"RESTORE", &nk, b"0", &payload(&dg)]), b"+OK\r\n");
    }
    assert_same(&snapshot(&mut rc), &snapshot(&mut gc));
    compare(&[
        &[
            "SET k v",
            "#DUMP k",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\"",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE",
            "GET k",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xcf\" REPLACE",
            "RESTORE k 0 \"\\x00\\x01v\\x0b\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE",
            "RESTORE k 0 short REPLACE",
            "RESTORE k -1 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE IDLETIME -1",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE FREQ 300",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE BOGUS",
            "RESTORE k 0 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE IDLETIME 1000",
            "OBJECT IDLETIME k",
            "RESTORE k 1 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\" REPLACE ABSTTL",
            "EXISTS k",
            "RESTORE k 100000 \"\\x00\\x01v\\n\\x00\\x91\\x08\\xce\\xb2\\x198\\x8a\\xce\"",
            "TTL k",
            "DUMP nokey",
        ],
        &["RPUSH l a", "BGSAVE SCHEDULE x", "LASTSAVE x"],
    ]);
}

#[test]
fn debug_reload_keeps_every_key() {
    let dir = persistent_dir("reload");
    let g = goblin(&[
        "--dir",
        dir.to_str().unwrap(),
        "--enable-debug-command",
        "yes",
    ]);
    let mut c = g.raw();
    fill(&mut c);
    let before = snapshot(&mut c);
    assert_eq!(c.cmd_str("DEBUG RELOAD"), b"+OK\r\n");
    assert_same(&before, &snapshot(&mut c));
    c.cmd_str("SET only:in-memory 1");
    assert_eq!(c.cmd_str("DEBUG RELOAD NOSAVE"), b"+OK\r\n");
    assert_eq!(c.cmd_str("EXISTS only:in-memory"), b":0\r\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failed_bgsave_stops_writes_until_a_save_succeeds() {
    let dir = persistent_dir("misconf");
    let g = goblin(&["--dir", dir.to_str().unwrap(), "--save", "3600 1"]);
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    // The rename into place fails: the target name is a directory.
    std::fs::create_dir(dir.join("dump.rdb")).unwrap();
    assert_eq!(c.cmd_str("BGSAVE"), b"+Background saving started\r\n");
    wait_bgsave(&mut c);
    let info = String::from_utf8_lossy(&c.cmd_str("INFO persistence")).into_owned();
    assert!(info.contains("rdb_last_bgsave_status:err"), "{info}");
    assert!(c
        .cmd_str("SET a 2")
        .starts_with(b"-MISCONF Redis is configured to save RDB snapshots"));
    assert!(c.cmd_str("PING").starts_with(b"-MISCONF"));
    assert_eq!(c.cmd_str("GET a"), b"$1\r\n1\r\n");
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("temp-"))
        .collect();
    assert!(leftovers.is_empty());
    std::fs::remove_dir(dir.join("dump.rdb")).unwrap();
    assert_eq!(c.cmd_str("SAVE"), b"+OK\r\n");
    assert_eq!(c.cmd_str("SET a 2"), b"+OK\r\n");
    // FLUSHALL with save points writes the empty snapshot at once: no change is left to save
    // (Redis's FLUSHALL counts none of its own).
    c.cmd_str("FLUSHALL");
    assert_eq!(info_field(&mut c, "rdb_changes_since_last_save"), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bgsave_while_one_runs_is_refused() {
    let dir = persistent_dir("busy");
    let g = goblin(&["--dir", dir.to_str().unwrap()]);
    let mut c = g.raw();
    c.cmd_str("EVAL \"for i=1,300000 do redis.call('SET','key:'..i,'value:'..i) end\" 0");
    assert_eq!(c.cmd_str("BGSAVE"), b"+Background saving started\r\n");
    // The child is reaped by the cron only: until then a second BGSAVE is refused.
    assert_eq!(
        c.cmd_str("BGSAVE"),
        b"-ERR Background save already in progress\r\n"
    );
    assert_eq!(
        c.cmd_str("SAVE"),
        b"-ERR Background save already in progress\r\n"
    );
    assert_eq!(
        c.cmd_str("BGSAVE SCHEDULE"),
        b"+Background saving scheduled\r\n"
    );
    assert_eq!(info_field(&mut c, "rdb_bgsave_in_progress"), Some(1));
    wait_bgsave(&mut c);
    // The scheduled one follows.
    let deadline = Instant::now() + Duration::from_secs(20);
    while info_field(&mut c, "rdb_saves") != Some(2) {
        assert!(
            Instant::now() < deadline,
            "the scheduled BGSAVE did not run"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_saves_with_save_points_and_dbfilename_is_a_name() {
    let dir = persistent_dir("sigterm");
    let d = dir.to_str().unwrap();
    // dbfilename is a protected config: CONFIG SET reaches its own check only where allowed.
    let mut g = goblin(&[
        "--dir",
        d,
        "--save",
        "3600 1",
        "--dbfilename",
        "snap.rdb",
        "--enable-protected-configs",
        "yes",
    ]);
    let mut c = g.raw();
    c.cmd_str("SET kept 1");
    assert!(
        String::from_utf8_lossy(&c.cmd_str("CONFIG SET dbfilename a/b.rdb"))
            .contains("dbfilename can't be a path, just a filename")
    );
    // SAFETY: sending SIGTERM to our own child process.
    unsafe { libc::kill(g.pid() as i32, libc::SIGTERM) };
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));
    assert!(dir.join("snap.rdb").exists());
    let g = goblin(&["--dir", d, "--dbfilename", "snap.rdb"]);
    assert_eq!(g.raw().cmd_str("GET kept"), b"$1\r\n1\r\n");
    let _ = std::fs::remove_dir_all(&dir);
}
