//! Redis Sentinel (Debian's redis-server in sentinel mode, three of them) monitoring a Goblin Core
//! primary with two Goblin Core replicas: it discovers the replicas and the other sentinels, and
//! when the primary is killed it promotes a replica and re-points the other, while a redis-py
//! client following the sentinels keeps writing and loses no write a replica acknowledged.

mod common;
use common::{goblin, redis, scratch_dir, show, Raw, Server};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A Goblin Core started from a configuration file (so CONFIG REWRITE, which Sentinel sends,
/// has one to write).
fn goblin_with_file(tag: &str, text: &str) -> (Server, String) {
    let dir = scratch_dir(tag);
    let conf = write(&dir.join("goblin.conf"), text);
    (goblin(&[&conf]), conf)
}

fn field(reply: &str, name: &str) -> Option<String> {
    let parts: Vec<&str> = reply.split("\\r\\n").collect();
    let at = parts.iter().position(|p| *p == name)?;
    parts.get(at + 2).map(|s| s.to_string())
}

fn until(what: &str, within: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sentinel_fails_over_goblin_core() {
    let (primary, _) = goblin_with_file("sent-p", "save \"\"\n");
    let replica_conf = format!("save \"\"\nreplicaof 127.0.0.1 {}\n", primary.port);
    let (r1, r1_conf) = goblin_with_file("sent-r1", &replica_conf);
    let (r2, r2_conf) = goblin_with_file("sent-r2", &replica_conf);
    let replicas = [r1, r2];
    primary.raw().cmd_str("SET before failover");
    for r in &replicas {
        until("a replica's sync", Duration::from_secs(20), || {
            show(&r.raw().cmd_str("GET before")) == "$8\\r\\nfailover\\r\\n"
        });
    }
    let sentinels: Vec<Server> = (0..3)
        .map(|i| {
            let dir = scratch_dir(&format!("sentinel{i}"));
            let conf = write(
                &dir.join("sentinel.conf"),
                &format!(
                    "sentinel monitor mymaster 127.0.0.1 {} 2\nsentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 5000\nsentinel parallel-syncs mymaster 1\n",
                    primary.port
                ),
            );
            redis(&[&conf, "--sentinel"])
        })
        .collect();
    for s in &sentinels {
        let mut c = s.raw();
        until(
            "the sentinels to see the replicas and each other",
            Duration::from_secs(30),
            || {
                let m = show(&c.cmd_str("SENTINEL MASTER mymaster"));
                field(&m, "num-slaves").as_deref() == Some("2")
                    && field(&m, "num-other-sentinels").as_deref() == Some("2")
            },
        );
    }
    let ports: Vec<String> = sentinels.iter().map(|s| s.port.to_string()).collect();
    let script = format!(
        "{}/tests/clients/redis_py_sentinel.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let client = Command::new("python3")
        .arg(&script)
        .arg("12")
        .args(&ports)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    std::thread::sleep(Duration::from_secs(3));
    // SIGKILL: no goodbye to anyone.
    unsafe { libc::kill(primary.pid() as i32, libc::SIGKILL) };
    let old = primary.port.to_string();
    let mut promoted = String::new();
    until("a failover", Duration::from_secs(30), || {
        let addr = show(
            &sentinels[0]
                .raw()
                .cmd_str("SENTINEL GET-MASTER-ADDR-BY-NAME mymaster"),
        );
        promoted = addr.split("\\r\\n").nth(4).unwrap_or_default().to_string();
        !promoted.is_empty() && promoted != old
    });
    let new_port: u16 = promoted.parse().unwrap();
    let (new_primary, other, new_conf) = if replicas[0].port == new_port {
        (&replicas[0], &replicas[1], &r1_conf)
    } else {
        (&replicas[1], &replicas[0], &r2_conf)
    };
    assert!(show(&new_primary.raw().cmd_str("ROLE")).starts_with("*3\\r\\n$6\\r\\nmaster"));
    // Sentinel's reconfiguration kills normal clients (CLIENT KILL TYPE normal): a connection per
    // look.
    until(
        "the other replica to follow the new primary",
        Duration::from_secs(30),
        || {
            let role = show(&other.raw().cmd_str("ROLE"));
            role.contains(&format!(":{new_port}\\r\\n")) && role.contains("connected")
        },
    );
    let out = client.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ok\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        show(&Raw::connect(new_port).cmd_str("GET before")),
        "$8\\r\\nfailover\\r\\n"
    );
    // Sentinel's promotion rewrote the new primary's file: no replicaof line is left.
    let conf = std::fs::read_to_string(new_conf).unwrap_or_default();
    assert!(!conf.contains("replicaof"), "{conf}");
}
