//! The append-only file: restart round trips (AOF, AOF + RDB), what is logged for each kind of
//! write compared with what redis-server logs, scripts and transactions by their effects,
//! BGREWRITEAOF under writes, SIGKILL crash tests for `appendfsync always` and `everysec`,
//! truncated and corrupted files, and appendonlydirs exchanged with Debian's redis-server.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::persist::*;
use common::*;

fn persistent_dir(tag: &str) -> PathBuf {
    scratch_dir(&format!("aof-{tag}"))
}

fn aof_args(d: &str) -> Vec<&str> {
    vec!["--dir", d, "--appendonly", "yes"]
}

fn manifest(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("appendonlydir/appendonly.aof.manifest")).unwrap()
}

/// The incr files' bytes, in manifest order.
fn incr_bytes(dir: &Path) -> Vec<u8> {
    let m = manifest(dir);
    let mut out = Vec::new();
    for l in m.lines().filter(|l| l.ends_with("type i")) {
        let name = l.split(' ').nth(1).unwrap();
        out.extend(std::fs::read(dir.join("appendonlydir").join(name)).unwrap());
    }
    out
}

/// Writes that Redis logs in a rewritten (effect) form, on top of `fill`.
fn effect_writes(c: &mut Raw) {
    for l in [
        "SET e:ex v EX 1000",
        "SETEX e:setex 1000 v",
        "PSETEX e:psetex 1000000 v",
        "SET e:exp v",
        "EXPIRE e:exp 1000",
        "SET e:gone v",
        "EXPIRE e:gone -1",
        "SET e:getex v",
        "GETEX e:getex EX 1000",
        "INCRBYFLOAT e:float 1.25",
        "INCRBYFLOAT e:float 0.1",
        "HINCRBYFLOAT e:hf f 2.5",
        "SADD e:set a b c d e f g",
        "SPOP e:set",
        "SPOP e:set 2",
        "RPUSH e:list a b c d",
        "BLPOP e:list 0",
        "BRPOPLPUSH e:list e:list2 0",
        "BLMPOP 0 1 e:list RIGHT COUNT 1",
        "ZADD e:z 1 a 2 b 3 c",
        "BZPOPMIN e:z 0",
        "ZMPOP 1 e:z MAX",
        "SET e:short v PX 1",
        "SET e:del v",
        "GETDEL e:del",
    ] {
        let r = c.cmd_str(l);
        assert!(!r.starts_with(b"-"), "{l}: {}", show(&r));
    }
    std::thread::sleep(Duration::from_millis(5));
    // Lazily expired: logged as DEL, as Redis.
    assert_eq!(c.cmd_str("GET e:short"), b"$-1\r\n");
}

/// SIGKILLs `g`, starts Goblin Core again with AOF on in `d` and checks it holds `before`.
fn crash_and_compare(g: Server, d: &str, before: &Snapshot) -> (Server, Raw) {
    drop(g);
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    assert_same(before, &snapshot(&mut c));
    (g, c)
}

#[test]
fn restart_round_trip_every_type_and_ttl() {
    let dir = persistent_dir("restart");
    let d = dir.to_str().unwrap();
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    fill(&mut c);
    effect_writes(&mut c);
    let before = snapshot(&mut c);
    assert_eq!(info_field(&mut c, "aof_enabled"), Some(1));
    assert_eq!(
        manifest(&dir),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    // A crash: SIGKILL, no shutdown. The next start reads the AOF, not an RDB file.
    drop(g);
    assert!(!dir.join("dump.rdb").exists());
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    assert_same(&before, &snapshot(&mut c));

    // After a rewrite the data is in the new base and the new incr file.
    assert_eq!(
        c.cmd_str("BGREWRITEAOF"),
        b"+Background append only file rewriting started\r\n"
    );
    c.cmd_str("SET after:rewrite 1");
    wait_rewrites(&mut c, 1);
    c.cmd_str("SET after:rewrite2 2");
    let before = snapshot(&mut c);
    assert_eq!(
        manifest(&dir),
        "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
    );
    let files: Vec<String> = std::fs::read_dir(dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 3, "history files must be deleted: {files:?}");
    let (g, mut c) = crash_and_compare(g, d, &before);

    // A plain-command base (aof-use-rdb-preamble no) round-trips too.
    c.cmd_str("CONFIG SET aof-use-rdb-preamble no");
    c.cmd_str("BGREWRITEAOF");
    wait_rewrites(&mut c, 1);
    assert!(manifest(&dir).starts_with("file appendonly.aof.3.base.aof seq 3 type b\n"));
    let _ = crash_and_compare(g, d, &before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rdb_and_aof_both_on() {
    let dir = persistent_dir("both");
    let d = dir.to_str().unwrap();
    let mut args = aof_args(d);
    args.extend(["--save", "3600 1"]);
    let mut g = goblin(&args);
    let mut c = g.raw();
    fill(&mut c);
    let before = snapshot(&mut c);
    c.send(&encode(&[b"SHUTDOWN"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));
    assert!(dir.join("dump.rdb").exists());
    // Both on: the AOF is loaded (the RDB file is not read, as Redis).
    std::fs::write(dir.join("dump.rdb"), b"not an rdb file").unwrap();
    let mut g = goblin(&args);
    let mut c = g.raw();
    assert_same(&before, &snapshot(&mut c));
    c.cmd_str("SET after 1");
    c.send(&encode(&[b"SHUTDOWN"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));
    // And the snapshot SHUTDOWN wrote holds the same data.
    let g = goblin(&["--dir", d]);
    let mut c = g.raw();
    assert_eq!(c.cmd_str("GET after"), b"$1\r\n1\r\n");
    c.cmd_str("DEL after");
    assert_same(&before, &snapshot(&mut c));
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replaces the absolute times (13+ digit numbers) of an AOF with a marker, so two servers' files
/// written moments apart compare equal.
fn mask_times(b: &[u8]) -> String {
    let text = String::from_utf8_lossy(b);
    let mut out = String::new();
    for line in text.split("\r\n") {
        if line.len() >= 13 && line.bytes().all(|c| c.is_ascii_digit()) {
            out.push_str("<ms>");
        } else if line.starts_with('$') {
            continue; // the masked numbers' lengths
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[test]
fn incr_file_matches_what_redis_writes() {
    let lines = [
        "SET a 1",
        "SET b 2 EX 100",
        "SET b2 2 NX GET EXAT 99999999999",
        "SETEX c 100 x",
        "PSETEX c2 100000 x",
        "EXPIRE a 50",
        "EXPIRE a 100 GT",
        "PEXPIRE b 5000",
        "EXPIREAT a 99999999999",
        "EXPIRE nokey 10",
        "INCRBYFLOAT f 1.5",
        "HINCRBYFLOAT h f 1.1",
        "SADD s 1",
        "SPOP s",
        "SADD s 1 2",
        "SPOP s 5",
        "RPUSH l a b c",
        "BLPOP l 0",
        "BRPOP l 0",
        "RPUSH l a b c",
        "BRPOPLPUSH l l2 0",
        "BLMOVE l2 l LEFT RIGHT 0",
        "LMPOP 1 l LEFT COUNT 5",
        "RPUSH l a b c",
        "BLMPOP 0 1 l RIGHT COUNT 2",
        "ZADD z 1 a 2 b 3 c",
        "BZPOPMIN z 0",
        "BZPOPMAX z 0",
        "ZMPOP 1 z MIN",
        "GET nokey",
        "DEL nokey",
        "SELECT 3",
        "SET y 1",
        "SELECT 0",
        "EVAL \"redis.call('set','r','1') redis.call('set','t','2')\" 0",
        "EVAL \"redis.call('set','r1','1')\" 0",
        "EVAL \"return redis.call('get','r1')\" 0",
        "EVAL \"redis.call('select','4') redis.call('set','q','1') redis.call('incr','q')\" 0",
        "GETEX a EX 100",
        "GETEX a PERSIST",
        "GETEX a",
        "SET k v KEEPTTL GET",
        "EXPIRE a -1",
        "GETDEL k",
        "INCR n",
        "RENAME n n2",
        "SINTERSTORE none x y",
        "GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
        "GEOADD g XX CH 13.361389 38.115556 Palermo",
        "GEOSEARCHSTORE gd g FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST",
        "GEORADIUS g 15 37 200 km STORE gr",
        "SORT l BY nosort STORE sl",
        "SETBIT bits 7 1",
        "BITFIELD bits SET u8 8 255 INCRBY i5 100 1",
        "BITOP NOT nbits bits",
        "PFADD hll a b c",
        "PFCOUNT hll",
        "PFMERGE hll2 hll",
        "SET p 1 PX 1",
        "FLUSHDB",
        "MULTI",
        "SET m1 1",
        "SET m2 2",
        "EXEC",
        "MULTI",
        "SET m3 1",
        "GET m3",
        "EXEC",
        "MULTI",
        "GET m3",
        "EXEC",
        "SET w 1 PX 1",
        "CONFIG SET lazyfree-lazy-expire yes",
        "SET w2 1 PX 1",
        "CONFIG SET lazyfree-lazy-server-del yes",
        "SET w3 1",
        "EXPIRE w3 0",
        // Each deletion by its own lazyfree setting (expire-lazy: EXPIRE, PEXPIREAT in the past;
        // user-del: GETDEL), and GETSET as the SET it is.
        "CONFIG SET lazyfree-lazy-server-del no",
        "SET w4 1",
        "EXPIRE w4 0",
        "SET w5 1",
        "PEXPIREAT w5 1",
        "GETEX w4",
        "SET w6 1",
        "GETEX w6 PXAT 1",
        "SET gs 1",
        "GETSET gs 2",
        "CONFIG SET lazyfree-lazy-user-del yes",
        "GETDEL gs",
        "FLUSHALL",
    ];
    let run = |s: &Server| {
        let mut c = s.raw();
        c.cmd_str("CONFIG SET hz 1");
        for l in lines {
            c.cmd_str(l);
            if l.ends_with("PX 1") {
                std::thread::sleep(Duration::from_millis(5));
                c.cmd_str(&format!("GET {}", l.split(' ').nth(1).unwrap()));
            }
        }
        c.cmd_str("PING");
    };
    let rdir = persistent_dir("diff-r");
    let gdir = persistent_dir("diff-g");
    let r = redis(&aof_args(rdir.to_str().unwrap()));
    let g = goblin(&aof_args(gdir.to_str().unwrap()));
    run(&r);
    run(&g);
    let (rb, gb) = (incr_bytes(&rdir), incr_bytes(&gdir));
    assert!(!gb.windows(4).any(|w| w.eq_ignore_ascii_case(b"eval")));
    assert_eq!(mask_times(&gb), mask_times(&rb));
    drop((r, g));
    let _ = std::fs::remove_dir_all(&rdir);
    let _ = std::fs::remove_dir_all(&gdir);
}

#[test]
fn scripts_and_transactions_replay_their_effects() {
    let dir = persistent_dir("scripts");
    let d = dir.to_str().unwrap();
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    // Non-deterministic writes: replaying the script would give other values.
    let script = "local t = redis.call('TIME') redis.call('SET', 'time', t[1] .. '.' .. t[2]) \
                  redis.call('SET', 'rand', tostring(math.random())) \
                  redis.call('SADD', 'pool', 'a', 'b', 'c', 'd', 'e') \
                  return redis.call('SPOP', 'pool')";
    c.cmd(&[b"EVAL", script.as_bytes(), b"0"]);
    // The other engines: their commands are logged, the scripts never are.
    for (cmd, script) in [
        (
            "LUAU.EVAL",
            "redis.call('SET', 'luau', tostring(math.random())) redis.call('INCR', 'n')",
        ),
        (
            "QUICKJS.EVAL",
            "redis.call('SET', 'js', String(Math.random())); redis.call('INCR', 'n')",
        ),
    ] {
        let r = c.cmd(&[cmd.as_bytes(), script.as_bytes(), b"0"]);
        assert!(!r.starts_with(b"-"), "{cmd}: {}", show(&r));
    }
    c.cmd_str("MULTI");
    c.cmd_str("SET m:a 1");
    c.cmd_str("INCRBYFLOAT m:f 0.3");
    c.cmd_str("SPOP pool 2");
    c.cmd_str("EXEC");
    let before = (
        (
            c.cmd_str("GET luau"),
            c.cmd_str("GET js"),
            c.cmd_str("GET n"),
        ),
        c.cmd_str("GET time"),
        c.cmd_str("GET rand"),
        sorted_reply(&c.cmd_str("SMEMBERS pool")),
        c.cmd_str("GET m:f"),
    );
    let incr = incr_bytes(&dir);
    let text = String::from_utf8_lossy(&incr);
    for name in ["eval", "redis.call", "math.random"] {
        assert!(!text.to_lowercase().contains(name), "{text}");
    }
    assert!(text.contains("MULTI") && text.contains("SREM"), "{text}");
    drop(g);
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    let after = (
        (
            c.cmd_str("GET luau"),
            c.cmd_str("GET js"),
            c.cmd_str("GET n"),
        ),
        c.cmd_str("GET time"),
        c.cmd_str("GET rand"),
        sorted_reply(&c.cmd_str("SMEMBERS pool")),
        c.cmd_str("GET m:f"),
    );
    assert_eq!(before, after);
    assert_eq!(c.cmd_str("GET m:a"), b"$1\r\n1\r\n");
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A writer on its own connection: `SET <prefix>:<i> <i>` one at a time; `acked` is the last
/// acknowledged `i` (0: none). Stops when the connection dies or `stop` is set.
fn writer(port: u16, prefix: String, acked: Arc<AtomicU64>, stop: Arc<AtomicBool>) {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut i = 0u64;
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let (k, v) = (format!("{prefix}:{i}"), i.to_string());
        if s.write_all(&encode(&[b"SET", k.as_bytes(), v.as_bytes()]))
            .is_err()
        {
            return;
        }
        let mut got = 0;
        while got < 5 {
            match s.read(&mut buf[got..5]) {
                Ok(0) | Err(_) => return,
                Ok(n) => got += n,
            }
        }
        assert_eq!(&buf[..5], b"+OK\r\n");
        acked.store(i, Ordering::SeqCst);
    }
}

/// Runs `rounds` crash rounds: writers write while the server is SIGKILLed at a random moment;
/// after restart, counts the acknowledged writes that are missing. Returns (acked, lost).
fn crash_rounds(fsync: &str, rounds: u32) -> (u64, u64) {
    let dir = persistent_dir(&format!("crash-{fsync}"));
    let d = dir.to_str().unwrap();
    let mut args = aof_args(d);
    args.extend(["--appendfsync", fsync]);
    let (mut total_acked, mut total_lost) = (0, 0);
    for round in 0..rounds {
        let g = goblin(&args);
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let acked = Arc::new(AtomicU64::new(0));
                let (a, s, port) = (acked.clone(), stop.clone(), g.port);
                let prefix = format!("r{round}w{w}");
                let h = std::thread::spawn(move || writer(port, prefix, a, s));
                (acked, h)
            })
            .collect();
        let ms = 100 + goblin_core::util::rand_u64() % 400;
        std::thread::sleep(Duration::from_millis(ms));
        drop(g); // SIGKILL
        let acked: Vec<u64> = writers
            .into_iter()
            .map(|(a, h)| {
                let _ = h.join();
                a.load(Ordering::SeqCst)
            })
            .collect();
        stop.store(true, Ordering::Relaxed);
        let g = goblin(&args);
        let mut c = g.raw();
        for (w, &n) in acked.iter().enumerate() {
            total_acked += n;
            for i in (1..=n).rev() {
                let r = c.cmd_str(&format!("EXISTS r{round}w{w}:{i}"));
                if r == b":1\r\n" {
                    break;
                }
                total_lost += 1;
            }
        }
        drop(g);
    }
    let _ = std::fs::remove_dir_all(&dir);
    (total_acked, total_lost)
}

/// Crash rounds with `fsync`; prints and checks the count of acknowledged writes lost. A SIGKILL
/// leaves written pages to the kernel, so even `everysec` loses none here: the window it leaves
/// open (at most about a second of writes) shows only on a power loss or kernel crash. What this
/// proves for both is that a reply never leaves before its write reached the file.
fn crash_test(fsync: &str, rounds: u32) {
    let (acked, lost) = crash_rounds(fsync, rounds);
    println!(
        "appendfsync {fsync}: {acked} acknowledged writes over {rounds} SIGKILLs, {lost} lost"
    );
    assert!(acked > 0);
    assert_eq!(lost, 0, "acknowledged writes lost with appendfsync {fsync}");
}

#[test]
fn crash_with_appendfsync_always_loses_no_acknowledged_write() {
    crash_test("always", 5);
}

#[test]
fn crash_with_appendfsync_everysec_measures_the_loss_window() {
    crash_test("everysec", 3);
}

#[test]
fn bgrewriteaof_while_writing_loses_nothing() {
    let dir = persistent_dir("rewrite-writes");
    let d = dir.to_str().unwrap();
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    fill(&mut c);
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let h = {
        let (a, s, port) = (acked.clone(), stop.clone(), g.port);
        std::thread::spawn(move || writer(port, "w".into(), a, s))
    };
    for n in 1..=5 {
        let r = c.cmd_str("BGREWRITEAOF");
        assert!(
            r.starts_with(b"+Background append only file rewriting"),
            "{}",
            show(&r)
        );
        wait_rewrites(&mut c, n);
        std::thread::sleep(Duration::from_millis(30));
    }
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
    let n = acked.load(Ordering::SeqCst);
    assert!(n > 0);
    let before = snapshot(&mut c);
    drop(g);
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    for i in 1..=n {
        assert_eq!(
            c.cmd_str(&format!("GET w:{i}")),
            format!("${}\r\n{i}\r\n", i.to_string().len()).into_bytes()
        );
    }
    assert_same(&before, &snapshot(&mut c));
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_set_appendonly_starts_with_a_rewrite() {
    let dir = persistent_dir("config-set");
    let d = dir.to_str().unwrap();
    let g = goblin(&["--dir", d]);
    let mut c = g.raw();
    fill(&mut c);
    assert_eq!(info_field(&mut c, "aof_enabled"), Some(0));
    assert_eq!(c.cmd_str("CONFIG SET appendonly yes"), b"+OK\r\n");
    c.cmd_str("SET during 1");
    wait_rewrites(&mut c, 1);
    assert_eq!(info_field(&mut c, "aof_enabled"), Some(1));
    c.cmd_str("SET after 1");
    let before = snapshot(&mut c);
    assert_eq!(
        manifest(&dir),
        "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    // Off again: later writes are not logged.
    assert_eq!(c.cmd_str("CONFIG SET appendonly no"), b"+OK\r\n");
    c.cmd_str("SET not:logged 1");
    let (g, mut c) = crash_and_compare(g, d, &before);
    // BGSAVE and BGREWRITEAOF: one child at a time.
    c.cmd_str("BGREWRITEAOF");
    let r = c.cmd_str("BGSAVE");
    assert!(
        r == b"+Background saving started\r\n"
            || r.starts_with(b"-ERR Another child process is active (AOF?)"),
        "{}",
        show(&r)
    );
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn truncated_and_corrupted_aof() {
    let dir = persistent_dir("corrupt");
    let d = dir.to_str().unwrap();
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    c.cmd_str("SET a 1");
    c.cmd_str("RPUSH l x y");
    drop(g);
    let incr = dir.join("appendonlydir/appendonly.aof.1.incr.aof");
    let good = std::fs::read(&incr).unwrap();

    // A crash in the middle of a write: the last command is cut short.
    let mut cut = good.clone();
    cut.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$5\r\nhel");
    std::fs::write(&incr, &cut).unwrap();
    let mut args = aof_args(d);
    args.extend(["--aof-load-truncated", "no"]);
    let log = start_fails(&args);
    assert!(
        log.contains(
            "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof"
        ),
        "{log}"
    );
    assert_eq!(std::fs::read(&incr).unwrap(), cut, "file was modified");
    // aof-load-truncated yes (the default): logged, truncated, loaded.
    let mut g = goblin(&aof_args(d));
    let mut c = g.raw();
    assert_eq!(c.cmd_str("GET a"), b"$1\r\n1\r\n");
    assert_eq!(c.cmd_str("EXISTS b"), b":0\r\n");
    assert_eq!(std::fs::read(&incr).unwrap(), good);
    c.send(&encode(&[b"SHUTDOWN", b"NOSAVE"]));
    assert!(c.is_closed());
    assert_eq!(g.wait_exit(Duration::from_secs(10)), Some(true));

    // An unfinished MULTI at the end is dropped with it.
    let mut tx = good.clone();
    tx.extend_from_slice(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nm\r\n$1\r\n1\r\n");
    std::fs::write(&incr, &tx).unwrap();
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    assert_eq!(c.cmd_str("EXISTS m"), b":0\r\n");
    drop(g);
    assert_eq!(std::fs::read(&incr).unwrap(), good);

    // Corruption stops start-up, naming the file and offset; nothing is overwritten.
    for (bytes, msg) in [
        (
            [&good[..20], b"garbage", &good[20..]].concat(),
            "Bad file format reading the append only file appendonly.aof.1.incr.aof at offset",
        ),
        (
            [&good[..], b"*2\r\n$3\r\nFOO\r\n$1\r\nx\r\n"].concat(),
            "Unknown command 'FOO' reading the append only file",
        ),
    ] {
        std::fs::write(&incr, &bytes).unwrap();
        let log = start_fails(&aof_args(d));
        assert!(log.contains(msg), "expected {msg:?} in {log}");
        assert_eq!(std::fs::read(&incr).unwrap(), bytes, "file was modified");
    }
    // A file the manifest names is missing.
    std::fs::remove_file(&incr).unwrap();
    let log = start_fails(&aof_args(d));
    assert!(
        log.contains("appendonly.aof.1.incr.aof doesn't exist"),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn redis_appendonlydir_loads_into_goblin() {
    let rdir = persistent_dir("from-redis-r");
    // With `everysec`, Redis postpones writing its AOF buffer while a background fsync runs, so
    // the files could lag the replies when they are copied: `always` writes before replying.
    let mut args = aof_args(rdir.to_str().unwrap());
    args.extend(["--appendfsync", "always"]);
    let r = redis(&args);
    let mut rc = r.raw();
    fill(&mut rc);
    rc.cmd_str("BGREWRITEAOF");
    std::thread::sleep(Duration::from_millis(300));
    while info_field(&mut rc, "aof_rewrite_in_progress") != Some(0) {
        std::thread::sleep(Duration::from_millis(20));
    }
    effect_writes(&mut rc);
    let expected = snapshot(&mut rc);
    loads_elsewhere(&rdir, &expected, goblin);
    drop(r);
    let _ = std::fs::remove_dir_all(&rdir);
}

/// Copies the appendonlydir in `from` to a fresh directory, starts `server` on it with AOF on and
/// checks it holds `expected`.
fn loads_elsewhere(from: &Path, expected: &Snapshot, server: fn(&[&str]) -> Server) {
    let dir = persistent_dir("copy");
    copy_dir(&from.join("appendonlydir"), &dir.join("appendonlydir"));
    let s = server(&aof_args(dir.to_str().unwrap()));
    let mut c = s.raw();
    // redis-server listens while it loads (replying -LOADING): wait for the load to end.
    while info_field(&mut c, "loading") != Some(0) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_same(expected, &snapshot(&mut c));
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn goblin_appendonlydir_loads_into_redis() {
    for preamble in ["yes", "no"] {
        let dir = persistent_dir("to-redis");
        let d = dir.to_str().unwrap();
        let mut args = aof_args(d);
        args.extend(["--aof-use-rdb-preamble", preamble]);
        let g = goblin(&args);
        let mut gc = g.raw();
        fill(&mut gc);
        gc.cmd_str("BGREWRITEAOF");
        wait_rewrites(&mut gc, 1);
        effect_writes(&mut gc);
        let expected = snapshot(&mut gc);
        loads_elsewhere(&dir, &expected, redis);
        drop(g);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn old_single_file_aof_is_upgraded() {
    let dir = persistent_dir("upgrade");
    let d = dir.to_str().unwrap();
    let mut old = Vec::new();
    for l in ["SELECT 0", "SET a 1", "RPUSH l x y", "SELECT 2", "SET b 2"] {
        let args = split(l);
        let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        old.extend(encode(&refs));
    }
    std::fs::write(dir.join("appendonly.aof"), &old).unwrap();
    let g = goblin(&aof_args(d));
    let mut c = g.raw();
    assert_eq!(c.cmd_str("GET a"), b"$1\r\n1\r\n");
    assert_eq!(c.cmd_str("LRANGE l 0 -1"), b"*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
    c.cmd_str("SELECT 2");
    assert_eq!(c.cmd_str("GET b"), b"$1\r\n2\r\n");
    assert!(!dir.join("appendonly.aof").exists());
    assert_eq!(
        manifest(&dir),
        "file appendonly.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
    );
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn automatic_rewrite_on_growth() {
    let dir = persistent_dir("auto");
    let d = dir.to_str().unwrap();
    let mut args = aof_args(d);
    args.extend(["--auto-aof-rewrite-min-size", "4kb", "--hz", "50"]);
    let g = goblin(&args);
    let mut c = g.raw();
    let big = "x".repeat(200);
    for i in 0..100 {
        c.cmd(&[b"SET", format!("k{i}").as_bytes(), big.as_bytes()]);
    }
    wait_rewrites(&mut c, 1);
    let base = info_field(&mut c, "aof_base_size").unwrap();
    assert!(base > 0, "aof_base_size {base}");
    assert!(info_field(&mut c, "aof_current_size").unwrap() >= base);
    let before = snapshot(&mut c);
    let _ = crash_and_compare(g, d, &before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Function libraries of every engine that has them come back from the incr file (FUNCTION LOAD
/// replayed), from an RDB base and from a plain-command base (FUNCTION LOAD lines).
#[test]
fn function_libraries_survive_restarts_and_rewrites() {
    let dir = persistent_dir("functions");
    let d = dir.to_str().unwrap();
    let libraries: [(&str, &str, &str); 6] = [
        (
            "#!lua name=libl\nredis.register_function('fl', function(keys, args) return 'lua:' .. args[1] end)",
            "fl",
            "$5\r\nlua:x\r\n",
        ),
        (
            "#!luau name=libu\nredis.register_function('fu', function(keys, args) return 'luau:' .. args[1] end)",
            "fu",
            "$6\r\nluau:x\r\n",
        ),
        (
            "#!js name=libj\nredis.register_function('fj', (keys, args) => 'js:' + args[0])",
            "fj",
            "$4\r\njs:x\r\n",
        ),
        (
            "#!wren name=libw\nRedis.registerFunction(\"fw\", Fn.new { |keys, args| \"wren:\" + args[0] })",
            "fw",
            "$6\r\nwren:x\r\n",
        ),
        (
            "#!tcl name=libt\nproc ft {KEYS ARGV} {return tcl:[lindex $ARGV 0]}\nredis register_function ft ft",
            "ft",
            "$5\r\ntcl:x\r\n",
        ),
        (
            "#!python name=libp\nredis.register_function('fp', lambda keys, args: b'python:' + args[0])",
            "fp",
            "$8\r\npython:x\r\n",
        ),
    ];
    let check = |c: &mut Raw| {
        for (_, name, reply) in &libraries {
            let got = c.cmd(&[b"FCALL", name.as_bytes(), b"0", b"x"]);
            assert_eq!(show(&got), show(reply.as_bytes()), "FCALL {name}");
        }
    };
    let mut g = Some(goblin(&aof_args(d)));
    let mut c = g.as_ref().unwrap().raw();
    for (code, _, _) in &libraries {
        let got = c.cmd(&[b"FUNCTION", b"LOAD", code.as_bytes()]);
        assert!(got.starts_with(b"$"), "{}", show(&got));
    }
    check(&mut c);
    let list = c.cmd_str("FUNCTION LIST WITHCODE");
    // A crash (SIGKILL) and a restart, after the incr file alone, then after each kind of rewrite.
    for preamble in [None, Some("yes"), Some("no")] {
        if let Some(p) = preamble {
            c.cmd(&[b"CONFIG", b"SET", b"aof-use-rdb-preamble", p.as_bytes()]);
            let done = info_field(&mut c, "aof_rewrites").unwrap_or(0);
            c.cmd_str("BGREWRITEAOF");
            wait_rewrites(&mut c, done + 1);
        }
        drop(g.take());
        g = Some(goblin(&aof_args(d)));
        c = g.as_ref().unwrap().raw();
        check(&mut c);
        assert_eq!(c.cmd_str("FUNCTION LIST WITHCODE"), list, "{preamble:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
