//! Goblin Core as a replica of Debian's redis-server 7.0.15 (REPLICAOF, the PSYNC handshake, full
//! sync by disk-based and diskless transfers, the command stream, partial resync), checked against
//! the primary's data with DEBUG DIGEST and, for what a replica answers its own clients, against a
//! redis-server replica of the same primary; and a primary speaking garbage.

mod common;
use common::repl::{
    digest, info_text, replicate, wait_synced, write_load_common as write_load, LIBRARY,
};
use common::{compare_both, goblin, info_field, redis, show, Server};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn primary(extra: &[&str]) -> Server {
    let mut args = vec![
        "--enable-debug-command",
        "yes",
        "--repl-diskless-sync-delay",
        "0",
    ];
    args.extend_from_slice(extra);
    redis(&args)
}

fn full_sync_then_stream(diskless: &str) {
    let p = primary(&["--repl-diskless-sync", diskless]);
    let mut pc = p.raw();
    assert_eq!(
        show(&pc.cmd(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()])),
        "$3\\r\\nlib\\r\\n"
    );
    write_load(&mut pc, 0);
    let g = goblin(&["--enable-debug-command", "yes"]);
    // What the replica held before is replaced by the primary's data set.
    g.raw().cmd_str("SET stale 1");
    replicate(&g, &p);
    wait_synced(&p, &g);
    assert_eq!(digest(&g), digest(&p), "after the full sync");
    assert_eq!(show(&g.raw().cmd_str("EXISTS stale")), ":0\\r\\n");
    write_load(&mut pc, 1);
    wait_synced(&p, &g);
    assert_eq!(digest(&g), digest(&p), "after the stream");
    let mut gc = g.raw();
    assert_eq!(
        show(&gc.cmd_str("ROLE")).split("\\r\\n").nth(7),
        Some("connected")
    );
    assert_eq!(info_field(&mut pc, "sync_full"), Some(1));
    // The primary's WAIT asks the replica with GETACK, and its ACK counts.
    pc.cmd_str("SET acked 1");
    assert_eq!(show(&pc.cmd_str("WAIT 1 5000")), ":1\\r\\n");
}

#[test]
fn diskless_full_sync_then_the_stream() {
    full_sync_then_stream("yes");
}

#[test]
fn disk_based_full_sync_then_the_stream() {
    full_sync_then_stream("no");
}

/// A link cut on either side resumes from the offset applied: `+CONTINUE`, no second full sync.
#[test]
fn partial_resync_after_the_link_is_cut() {
    let p = primary(&[]);
    let g = goblin(&["--enable-debug-command", "yes"]);
    let mut pc = p.raw();
    pc.cmd(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()]);
    write_load(&mut pc, 0);
    replicate(&g, &p);
    wait_synced(&p, &g);
    assert_eq!(show(&pc.cmd_str("CLIENT KILL TYPE replica")), ":1\\r\\n");
    write_load(&mut pc, 1);
    wait_synced(&p, &g);
    assert_eq!(digest(&g), digest(&p));
    // The replica's side: its master client.
    assert_eq!(
        show(&g.raw().cmd_str("CLIENT KILL TYPE master")),
        ":1\\r\\n"
    );
    write_load(&mut pc, 2);
    wait_synced(&p, &g);
    assert_eq!(digest(&g), digest(&p));
    assert_eq!(info_field(&mut pc, "sync_full"), Some(1));
    assert_eq!(info_field(&mut pc, "sync_partial_ok"), Some(2));
}

/// What a replica answers its own clients, compared with a redis-server replica of the same
/// primary.
#[test]
fn a_replica_answers_as_a_redis_replica() {
    let p = primary(&[]);
    let r = redis(&["--enable-debug-command", "yes"]);
    let g = goblin(&["--enable-debug-command", "yes"]);
    let mut pc = p.raw();
    pc.cmd(&[b"FUNCTION", b"LOAD", LIBRARY.as_bytes()]);
    pc.cmd_str("SET k v");
    pc.cmd_str("DEBUG SET-ACTIVE-EXPIRE 0");
    pc.cmd_str("SET gone v PX 100");
    for replica in [&r, &g] {
        replicate(replica, &p);
        wait_synced(&p, replica);
    }
    std::thread::sleep(Duration::from_millis(200));
    let lines = [
        "GET k",
        "SET k v2",
        "DEL k",
        "INCR n",
        "GET gone",
        "EXISTS gone",
        "TTL gone",
        "DBSIZE",
        "EVAL \"return redis.call('get', 'k')\" 0",
        "EVAL \"return redis.call('set', 'k', 'x')\" 0",
        "EVAL \"return redis.pcall('set', 'k', 'x')\" 0",
        "EVAL \"#!lua\nreturn 1\" 0",
        "EVAL \"#!lua flags=no-writes\nreturn redis.call('get', 'k')\" 0",
        "MULTI",
        "SET k v3",
        "EXEC",
        "PUBLISH ch msg",
        "CONFIG GET replica-read-only",
        "CONFIG GET replicaof",
        "CONFIG SET replicaof \"no one\"",
        "CLIENT LIST TYPE master",
        "FCALL_RO setter 1 k v",
        "FCALL setter 1 k v",
        "FUNCTION LIST",
    ];
    let (mut rc, mut gc) = (r.raw(), g.raw());
    for line in lines {
        let mask = |b: Vec<u8>| {
            // CLIENT LIST's line differs in ids, ports and ages: its flags are compared.
            let s = String::from_utf8_lossy(&b).into_owned();
            if line.starts_with("CLIENT LIST") {
                s.split(' ')
                    .filter(|w| w.starts_with("flags="))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                s
            }
        };
        let (want, got) = (mask(rc.cmd_str(line)), mask(gc.cmd_str(line)));
        assert_eq!(got, want, "{line}");
    }
    // INFO's replication section names the same fields.
    let fields = |s: &Server| -> Vec<String> {
        let info = String::from_utf8_lossy(&s.raw().cmd_str("INFO replication")).into_owned();
        info.split("\r\n")
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
            .collect()
    };
    assert_eq!(fields(&g), fields(&r));
    // The primary expiring the key reaches both.
    pc.cmd_str("GET gone");
    wait_synced(&p, &g);
    assert_eq!(show(&gc.cmd_str("DBSIZE")), ":1\\r\\n");
    // Promoted: writes are taken again, the data kept.
    assert_eq!(show(&gc.cmd_str("REPLICAOF NO ONE")), "+OK\\r\\n");
    assert_eq!(show(&gc.cmd_str("SET k mine")), "+OK\\r\\n");
    assert_eq!(show(&gc.cmd_str("ROLE")).split("\\r\\n").next(), Some("*3"));
    let mut info = String::from_utf8_lossy(&gc.cmd_str("INFO replication")).into_owned();
    info.retain(|c| c != '\r');
    assert!(
        info.contains("role:master\n") && info.contains("second_repl_offset:"),
        "{info}"
    );
}

/// REPLICAOF's and REPLCONF's argument errors as Redis's.
#[test]
fn replicaof_and_replconf_errors_match_redis() {
    compare_both(&[&[
        "REPLICAOF",
        "REPLICAOF a",
        "REPLICAOF no one",
        "SLAVEOF NO ONE",
        "REPLICAOF 127.0.0.1 notaport",
        "REPLICAOF 127.0.0.1 70000",
        "REPLICAOF 127.0.0.1 -1",
        "REPLCONF",
        "REPLCONF listening-port",
        "REPLCONF listening-port x",
        "REPLCONF listening-port 10",
        "REPLCONF capa eof capa psync2",
        "REPLCONF capa unknown",
        "REPLCONF ip-address 10.0.0.1",
        "REPLCONF rdb-only 2",
        "REPLCONF rdb-only 1",
        "REPLCONF rdb-filter-only functions",
        "REPLCONF rdb-filter-only \"functions bad\"",
        "REPLCONF bogus 1",
        "ROLE",
    ]]);
    // ACK and GETACK are never answered.
    for s in [redis(&[]), goblin(&[])] {
        let mut c = s.raw();
        c.send(b"REPLCONF ACK 10\r\nREPLCONF GETACK *\r\nPING\r\n");
        assert_eq!(show(&c.reply()), "+PONG\\r\\n");
    }
}

/// A fake primary: answers the handshake with `replies` (one per request line it reads), then
/// writes `payload` and closes.
fn fake_primary(
    replies: Vec<&'static str>,
    payload: Vec<u8>,
) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 4096];
        for reply in replies {
            if s.read(&mut buf).unwrap_or(0) == 0 {
                return;
            }
            // The replica sends AUTH/REPLCONFs back to back: one reply per request it sent.
            let requests = buf.iter().filter(|&&b| b == b'*').count().max(1);
            for _ in 0..requests {
                if s.write_all(reply.as_bytes()).is_err() {
                    return;
                }
            }
        }
        let _ = s.write_all(&payload);
        std::thread::sleep(Duration::from_millis(300));
    });
    (port, handle)
}

/// A primary that speaks garbage, refuses, or dies mid-transfer: the replica logs it, keeps the
/// data set it had, keeps serving, and tries again.
#[test]
fn a_primary_speaking_garbage_leaves_the_data_set_alone() {
    let g = goblin(&[]);
    let mut c = g.raw();
    c.cmd_str("SET mine 1");
    let full = "+FULLRESYNC 0123456789012345678901234567890123456789 0\r\n";
    let cases: Vec<(Vec<&'static str>, Vec<u8>)> = vec![
        (vec!["-ERR go away\r\n"], vec![]),
        (vec!["garbage\r\n"], vec![]),
        (
            vec!["+PONG\r\n", "+OK\r\n", "+FULLRESYNC short 0\r\n"],
            vec![],
        ),
        (vec!["+PONG\r\n", "+OK\r\n", "-ERR no psync\r\n"], vec![]),
        (
            vec!["+PONG\r\n", "+OK\r\n", full],
            b"$10\r\nnotanrdb!!".to_vec(),
        ),
        (vec!["+PONG\r\n", "+OK\r\n", full], b"@what\r\n".to_vec()),
        (
            vec!["+PONG\r\n", "+OK\r\n", full],
            b"$100000\r\nREDIS0010".to_vec(),
        ),
        (
            vec!["+PONG\r\n", "+OK\r\n", full],
            b"$EOF:short\r\n".to_vec(),
        ),
        (
            vec!["+PONG\r\n", "+OK\r\n", full],
            b"-ERR aborted\r\n".to_vec(),
        ),
    ];
    for (replies, payload) in cases {
        let what = format!("{replies:?} {}", String::from_utf8_lossy(&payload));
        let (port, handle) = fake_primary(replies, payload);
        assert_eq!(
            show(&c.cmd_str(&format!("REPLICAOF 127.0.0.1 {port}"))),
            "+OK\\r\\n"
        );
        handle.join().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(show(&c.cmd_str("GET mine")), "$1\\r\\n1\\r\\n", "{what}");
        assert_eq!(
            info_text(&mut c, "master_link_status").as_deref(),
            Some("down"),
            "{what}"
        );
        assert_eq!(show(&c.cmd_str("REPLICAOF NO ONE")), "+OK\\r\\n");
    }
    assert_eq!(show(&c.cmd_str("PING")), "+PONG\\r\\n");
}

/// A primary that wants a password gets `masterauth` (with `masteruser`, an ACL user's).
#[test]
fn masterauth_and_masteruser() {
    let p = primary(&["--requirepass", "secret"]);
    let mut pc = p.raw();
    pc.cmd_str("AUTH secret");
    pc.cmd_str("ACL SETUSER repl on >replpw +@all ~*");
    pc.cmd_str("SET k v");
    for args in [
        vec!["--masterauth", "secret"],
        vec!["--masteruser", "repl", "--masterauth", "replpw"],
    ] {
        let g = goblin(&args);
        replicate(&g, &p);
        let mut c = g.raw();
        let deadline = Instant::now() + Duration::from_secs(20);
        while show(&c.cmd_str("GET k")) != "$1\\r\\nv\\r\\n" {
            assert!(Instant::now() < deadline, "{args:?}: no sync");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // A wrong password: the link stays down, the replica keeps serving.
    let g = goblin(&["--masterauth", "wrong"]);
    replicate(&g, &p);
    std::thread::sleep(Duration::from_millis(1500));
    let mut c = g.raw();
    assert_eq!(
        info_text(&mut c, "master_link_status").as_deref(),
        Some("down")
    );
    assert_eq!(show(&c.cmd_str("GET k")), "$-1\\r\\n");
}

/// `replicaof` in the configuration: a replica from start-up, as CONFIG GET shows.
#[test]
fn replicaof_directive_at_start_up() {
    let p = primary(&[]);
    p.raw().cmd_str("SET from primary");
    let port = p.port.to_string();
    let g = goblin(&["--replicaof", "127.0.0.1", &port]);
    wait_synced(&p, &g);
    let mut c = g.raw();
    assert_eq!(show(&c.cmd_str("GET from")), "$7\\r\\nprimary\\r\\n");
    assert_eq!(
        show(&c.cmd_str("CONFIG GET replicaof")),
        format!(
            "*2\\r\\n$9\\r\\nreplicaof\\r\\n${}\\r\\n127.0.0.1 {port}\\r\\n",
            10 + port.len()
        )
    );
    assert_eq!(
        show(&c.cmd_str(&format!("REPLICAOF 127.0.0.1 {port}"))),
        "+OK Already connected to specified master\\r\\n"
    );
}

/// Clients blocked when the server becomes a replica are told so and disconnected, as Redis's
/// `disconnectAllBlockedClients`: their writes can no longer serve them.
#[test]
fn becoming_a_replica_ends_blocked_clients() {
    let p = primary(&[]);
    for s in [redis(&[]), goblin(&[])] {
        let mut blocked = s.raw();
        blocked.send(&common::encode_line("BLPOP q 0"));
        std::thread::sleep(Duration::from_millis(100));
        replicate(&s, &p);
        assert_eq!(
            show(&blocked.reply()),
            "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\\r\\n"
        );
        assert!(blocked.is_closed());
    }
}

#[test]
fn replication_commands_info_and_docs_match_redis() {
    let names = ["replicaof", "slaveof", "replconf", "role", "wait"];
    common::command_info_and_docs_match_redis(&names, &names);
}

/// CONFIG REWRITE writes the primary followed as `replicaof host port`, and drops the line once
/// the server is a primary again (Sentinel relies on both).
#[test]
fn config_rewrite_keeps_replicaof_current() {
    let p = primary(&[]);
    let dir = common::scratch_dir("rewrite-replicaof");
    let conf = dir.join("goblin.conf");
    std::fs::write(&conf, "save \"\"\n").unwrap();
    let g = goblin(&[&conf.to_string_lossy()]);
    let mut c = g.raw();
    replicate(&g, &p);
    assert_eq!(show(&c.cmd_str("CONFIG REWRITE")), "+OK\\r\\n");
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(
        text.contains(&format!("\nreplicaof 127.0.0.1 {}\n", p.port)),
        "{text}"
    );
    assert_eq!(show(&c.cmd_str("REPLICAOF NO ONE")), "+OK\\r\\n");
    assert_eq!(show(&c.cmd_str("CONFIG REWRITE")), "+OK\\r\\n");
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(!text.contains("replicaof"), "{text}");
}

/// A partial resync goes on in the database the primary's stream had selected: the primary does
/// not select it again.
#[test]
fn partial_resync_keeps_the_streams_database() {
    let p = primary(&[]);
    let g = goblin(&["--enable-debug-command", "yes"]);
    replicate(&g, &p);
    wait_synced(&p, &g);
    let mut c = p.raw();
    c.cmd_str("SELECT 3");
    c.cmd_str("SET before 1");
    wait_synced(&p, &g);
    assert_eq!(show(&c.cmd_str("CLIENT KILL TYPE replica")), ":1\\r\\n");
    c.cmd_str("SET after 1");
    wait_synced(&p, &g);
    assert_eq!(info_field(&mut c, "sync_partial_ok"), Some(1));
    let mut gc = g.raw();
    gc.cmd_str("SELECT 3");
    assert_eq!(
        show(&gc.cmd_str("MGET before after")),
        "*2\\r\\n$1\\r\\n1\\r\\n$1\\r\\n1\\r\\n"
    );
    assert_eq!(digest(&g), digest(&p));
}
