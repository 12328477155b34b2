//! What the replication tests share: INFO fields, waiting for a replica to catch up, DEBUG DIGEST.

use super::{info_field, show, Raw, Server};
use std::time::{Duration, Instant};

/// A Lua function library (a redis-server replica loads it too).
pub const LIBRARY: &str = "#!lua name=lib\nredis.register_function('setter', function(keys, args) return redis.call('set', keys[1], args[1]) end)";

/// INFO's `field`, as text.
pub fn info_text(c: &mut Raw, field: &str) -> Option<String> {
    let info = String::from_utf8_lossy(&c.cmd_str("INFO")).into_owned();
    info.split("\r\n")
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(str::to_string)
}

/// Waits until `replica` has applied everything `primary` streamed so far.
pub fn wait_synced(primary: &Server, replica: &Server) {
    let (mut p, mut r) = (primary.raw(), replica.raw());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let want = info_field(&mut p, "master_repl_offset");
        let up = info_text(&mut r, "master_link_status").as_deref() == Some("up");
        if up && want.is_some() && info_field(&mut r, "slave_repl_offset") == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "replica did not catch up: {} / {}",
            String::from_utf8_lossy(&p.cmd_str("INFO replication")),
            String::from_utf8_lossy(&r.cmd_str("INFO replication"))
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// DEBUG DIGEST: equal on two servers holding the same data.
pub fn digest(s: &Server) -> String {
    show(&s.raw().cmd_str("DEBUG DIGEST"))
}

/// REPLICAOF the primary, on the loopback address.
pub fn replicate(replica: &Server, primary: &Server) {
    let line = format!("REPLICAOF 127.0.0.1 {}", primary.port);
    assert_eq!(show(&replica.raw().cmd_str(&line)), "+OK\\r\\n");
}
