//! Goblin Core as a primary (SYNC, PSYNC, the stream, the backlog, WAIT): Debian's redis-server
//! 7.0.15 and Goblin Core as its replicas, checked with DEBUG DIGEST after writes of every type,
//! scripts in all six engines, a Lua function library and GOBLIN.CAD; partial resync after a cut
//! link; WAIT's counts; and the replication fields against a redis-server primary's.

mod common;
use common::repl::{digest, info_text, replicate, wait_synced, write_load, LIBRARY};
use common::{goblin, info_field, redis, show, Raw, Server};
use std::time::{Duration, Instant};

fn primary_with_data() -> Server {
    let g = goblin(&["--enable-debug-command", "yes"]);
    let mut c = g.raw();
    assert_eq!(
        show(&c.cmd(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()])),
        "$3\\r\\nlib\\r\\n"
    );
    write_load(&mut c, 0);
    g
}

/// redis-server and Goblin Core replicas of a Goblin Core primary hold its data, through the
/// full sync, the stream, and a partial resync after the link is cut.
#[test]
fn redis_and_goblin_replicas_of_goblin() {
    let g = primary_with_data();
    let r = redis(&["--enable-debug-command", "yes"]);
    let gr = goblin(&["--enable-debug-command", "yes"]);
    for replica in [&r, &gr] {
        replicate(replica, &g);
        wait_synced(&g, replica);
        assert_eq!(digest(replica), digest(&g), "after the full sync");
    }
    let mut c = g.raw();
    write_load(&mut c, 1);
    for replica in [&r, &gr] {
        wait_synced(&g, replica);
        assert_eq!(digest(replica), digest(&g), "after the stream");
    }
    assert_eq!(show(&c.cmd_str("CLIENT KILL TYPE replica")), ":2\\r\\n");
    write_load(&mut c, 2);
    for replica in [&r, &gr] {
        wait_synced(&g, replica);
        assert_eq!(digest(replica), digest(&g), "after the partial resync");
    }
    assert_eq!(info_field(&mut c, "sync_full"), Some(2));
    assert_eq!(info_field(&mut c, "sync_partial_ok"), Some(2));
    // Keys expired on the primary are deleted on the replicas by its DEL.
    c.cmd_str("SET short v PX 50");
    std::thread::sleep(Duration::from_millis(100));
    c.cmd_str("GET short");
    for replica in [&r, &gr] {
        wait_synced(&g, replica);
        assert_eq!(digest(replica), digest(&g), "after the expiry");
    }
}

/// WAIT counts the replicas that acknowledged the caller's last write, as Redis's.
#[test]
fn wait_counts_acknowledging_replicas() {
    let g = goblin(&[]);
    let r = redis(&[]);
    let mut c = g.raw();
    assert_eq!(show(&c.cmd_str("WAIT 0 0")), ":0\\r\\n");
    replicate(&r, &g);
    wait_synced(&g, &r);
    c.cmd_str("SET k v");
    assert_eq!(show(&c.cmd_str("WAIT 1 5000")), ":1\\r\\n");
    // Two asked, one there: the count when the time is up.
    let started = Instant::now();
    assert_eq!(show(&c.cmd_str("WAIT 2 300")), ":1\\r\\n");
    assert!(started.elapsed() >= Duration::from_millis(280));
    // WAIT on a replica is refused.
    assert!(show(&r.raw().cmd_str("WAIT 1 0"))
        .starts_with("-ERR WAIT cannot be used with replica instances."));
}

/// The replication fields of a primary with one replica, and ROLE, as a redis-server primary's.
#[test]
fn primary_fields_match_redis() {
    let (gp, rp) = (goblin(&[]), redis(&[]));
    let (gr, rr) = (redis(&[]), redis(&[]));
    replicate(&gr, &gp);
    replicate(&rr, &rp);
    wait_synced(&gp, &gr);
    wait_synced(&rp, &rr);
    let fields = |s: &Server| -> Vec<String> {
        let info = String::from_utf8_lossy(&s.raw().cmd_str("INFO replication")).into_owned();
        info.split("\r\n")
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
            .collect()
    };
    assert_eq!(fields(&gp), fields(&rp));
    let shape = |s: &Server| -> String {
        // Offsets and ports differ: the reply's shape and texts are compared.
        let role = show(&s.raw().cmd_str("ROLE"));
        role.split("\\r\\n")
            .map(|p| {
                if p.starts_with(':') || p.starts_with('$') || p.chars().all(|c| c.is_ascii_digit())
                {
                    "#"
                } else {
                    p
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(shape(&gp), shape(&rp));
    let line = |s: &Server| info_text(&mut s.raw(), "slave0").unwrap_or_default();
    let (gl, rl) = (line(&gp), line(&rp));
    let keys = |l: &str| {
        l.split(',')
            .map(|kv| kv.split('=').next().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&gl), keys(&rl));
    assert!(gl.contains("state=online"), "{gl}");
    let flags = |s: &Server| {
        let list =
            String::from_utf8_lossy(&s.raw().cmd_str("CLIENT LIST TYPE replica")).into_owned();
        list.split(' ')
            .filter(|w| w.starts_with("flags="))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(flags(&gp), flags(&rp));
}

/// `redis-cli --rdb` (SYNC) takes a snapshot from Goblin Core that redis-server loads.
#[test]
fn redis_cli_rdb_snapshot() {
    let g = primary_with_data();
    let file = g.dir.join("snapshot.rdb");
    let done = std::process::Command::new("redis-cli")
        .args(["-p", &g.port.to_string(), "--rdb"])
        .arg(&file)
        .output()
        .expect("redis-cli runs");
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let dir = common::scratch_dir("rdbload");
    std::fs::copy(&file, dir.join("dump.rdb")).unwrap();
    let dir_s = dir.to_string_lossy().into_owned();
    let r = redis(&[
        "--dir",
        &dir_s,
        "--dbfilename",
        "dump.rdb",
        "--enable-debug-command",
        "yes",
    ]);
    assert_eq!(digest(&r), digest(&g));
}

/// Writes that keep coming while a replica syncs are in its snapshot or in the stream after it,
/// never both: the BGSAVE starts in the same turn as `+FULLRESYNC`.
#[test]
fn writes_during_a_full_sync_are_applied_once() {
    let g = goblin(&["--enable-debug-command", "yes"]);
    let r = redis(&["--enable-debug-command", "yes"]);
    let port = g.port;
    let writer = std::thread::spawn(move || {
        let mut c = Raw::connect(port);
        for _ in 0..400 {
            let batch: Vec<u8> = (0..10)
                .flat_map(|_| common::encode_line("INCR counter"))
                .collect();
            c.send(&batch);
            for _ in 0..10 {
                c.reply();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    std::thread::sleep(Duration::from_millis(100));
    replicate(&r, &g);
    writer.join().unwrap();
    wait_synced(&g, &r);
    assert_eq!(show(&r.raw().cmd_str("GET counter")), "$4\\r\\n4000\\r\\n");
    assert_eq!(digest(&r), digest(&g));
}

/// A replica whose offset the backlog no longer holds gets a full resync, not a partial one.
#[test]
fn a_backlog_overrun_means_a_full_resync() {
    let g = goblin(&[
        "--repl-backlog-size",
        "16384",
        "--enable-debug-command",
        "yes",
    ]);
    let r = redis(&["--enable-debug-command", "yes"]);
    replicate(&r, &g);
    wait_synced(&g, &r);
    let mut c = g.raw();
    // The link is cut and 64 KB go by in the same pipeline, so in one turn of the primary's loop:
    // the replica cannot be back before they passed the backlog.
    let big = "x".repeat(1000);
    let mut batch = common::encode_line("CLIENT KILL TYPE replica");
    for i in 0..64 {
        batch.extend(common::encode_line(&format!("SET big{i} {big}")));
    }
    c.send(&batch);
    assert_eq!(show(&c.reply()), ":1\\r\\n");
    for _ in 0..64 {
        assert_eq!(show(&c.reply()), "+OK\\r\\n");
    }
    wait_synced(&g, &r);
    assert_eq!(
        info_field(&mut c, "sync_full"),
        Some(2),
        "{}",
        show(&c.cmd_str("INFO stats"))
    );
    assert_eq!(info_field(&mut c, "repl_backlog_histlen"), Some(16384));
    assert_eq!(digest(&r), digest(&g));
}

/// `min-replicas-to-write`: writes are refused without that many replicas acknowledging within
/// `min-replicas-max-lag`, as Redis's.
#[test]
fn min_replicas_to_write() {
    common::compare_both(&[&[
        "CONFIG SET min-replicas-to-write 1",
        "SET k v",
        "GET k",
        "EVAL \"return redis.call('set', 'k', 'v')\" 0",
        "EVAL \"return redis.pcall('set', 'k', 'v')\" 0",
        "EVAL \"return redis.call('get', 'k')\" 0",
        "MULTI",
        "SET k v",
        "EXEC",
        "CONFIG SET min-replicas-max-lag 0",
        "SET k v",
        "CONFIG SET min-replicas-max-lag 10",
        "CONFIG SET min-replicas-to-write 0",
        "SET k v",
    ]]);
    let g = goblin(&["--min-replicas-to-write", "1"]);
    let r = redis(&[]);
    let mut c = g.raw();
    assert_eq!(
        show(&c.cmd_str("SET k v")),
        "-NOREPLICAS Not enough good replicas to write.\\r\\n"
    );
    replicate(&r, &g);
    wait_synced(&g, &r);
    // The replica's first ACK makes it good.
    let deadline = Instant::now() + Duration::from_secs(5);
    while show(&c.cmd_str("SET k v")) != "+OK\\r\\n" {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(info_field(&mut c, "min_slaves_good_slaves"), Some(1));
}

/// Goblin Core → Goblin Core → (Goblin Core and redis-server): the middle replica relays its
/// primary's stream byte for byte, so everyone's offset is the top primary's and partial resyncs
/// work at either link.
#[test]
fn chained_replicas() {
    let top = primary_with_data();
    let middle = goblin(&["--enable-debug-command", "yes"]);
    replicate(&middle, &top);
    wait_synced(&top, &middle);
    let (leaf_g, leaf_r) = (
        goblin(&["--enable-debug-command", "yes"]),
        redis(&["--enable-debug-command", "yes"]),
    );
    for leaf in [&leaf_g, &leaf_r] {
        replicate(leaf, &middle);
    }
    let mut c = top.raw();
    write_load(&mut c, 1);
    for leaf in [&leaf_g, &leaf_r] {
        wait_synced(&top, leaf);
        assert_eq!(digest(leaf), digest(&top), "through the chain");
    }
    // Cut the top link, then the lower ones: each side resumes partially.
    assert_eq!(show(&c.cmd_str("CLIENT KILL TYPE replica")), ":1\\r\\n");
    write_load(&mut c, 2);
    assert_eq!(
        show(&middle.raw().cmd_str("CLIENT KILL TYPE replica")),
        ":2\\r\\n"
    );
    write_load(&mut c, 3);
    for leaf in [&leaf_g, &leaf_r] {
        wait_synced(&top, leaf);
        assert_eq!(digest(leaf), digest(&top), "after the cuts");
    }
    assert_eq!(info_field(&mut c, "sync_partial_ok"), Some(1));
    assert_eq!(info_field(&mut middle.raw(), "sync_partial_ok"), Some(2));
}
