//! WAIT and ROLE on a server without replicas, and the timeouts of blocking commands at the edges
//! of their range, compared with Debian's redis-server: a master at offset 0 that answers WAIT
//! with 0, at once when no replica is asked for, else when the timeout passes.

mod common;
use common::{client_id, compare_both, encode_line, goblin, redis, Server};
use std::time::{Duration, Instant};

#[test]
fn replies_and_errors_match_redis() {
    compare_both(&[
        &[
            "ROLE",
            "ROLE x",
            "WAIT 0 0",
            "WAIT -1 10",
            "WAIT 0 -1",
            "WAIT x 1",
            "WAIT 1 x",
            "WAIT 1 1.5",
            "WAIT 1 99999999999999999999",
            "WAIT 1 20",
            "WAIT",
            "WAIT 1",
            "MULTI",
            "WAIT 5 0",
            "EXEC",
            "EVAL \"return redis.call('wait', 1, 0)\" 0",
            "EVAL \"return redis.pcall('role')\" 0",
        ],
        &[
            // A timeout the C cast cannot represent is "negative"; whole seconds are exact.
            "BLPOP nokey 9223372036854776",
            "BLPOP nokey 9223372036854775808",
            "BLPOP nokey 1e30",
            "BLPOP nokey inf",
            "BZPOPMIN nokey 9223372036854776",
        ],
    ]);
}

/// Sends `line` on a fresh connection, then ends its wait with CLIENT UNBLOCK from another:
/// the blocked command's reply, and whether it was still waiting after `after`.
fn unblocked(server: &Server, line: &str, after: Duration, how: &str) -> (Vec<u8>, bool) {
    let mut waiting = server.raw();
    let id = client_id(&mut waiting);
    waiting.send(&encode_line(line));
    std::thread::sleep(after);
    let mut other = server.raw();
    let was_blocked = other.cmd_str(&format!("CLIENT UNBLOCK {id} {how}")) == b":1\r\n";
    (waiting.reply(), was_blocked)
}

#[test]
fn wait_blocks_until_its_timeout_or_an_unblock() {
    for server in [redis(&[]), goblin(&[])] {
        let mut c = server.raw();
        let start = Instant::now();
        assert_eq!(c.cmd_str("WAIT 1 150"), b":0\r\n");
        assert!(
            start.elapsed() >= Duration::from_millis(140),
            "{:?}",
            start.elapsed()
        );
        let ms = Duration::from_millis(100);
        assert_eq!(
            unblocked(&server, "WAIT 1 0", ms, "TIMEOUT"),
            (b":0\r\n".to_vec(), true)
        );
        let (reply, blocked) = unblocked(&server, "WAIT 2 0", ms, "ERROR");
        assert!(blocked);
        assert_eq!(reply, b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
        // Timeouts past the clock's range wait forever, as in Redis 7.0 (its deadline wraps).
        for line in ["WAIT 1 9223372036854775807", "BLPOP nokey 9223372036854775"] {
            let (_, blocked) = unblocked(&server, line, ms, "TIMEOUT");
            assert!(blocked, "{line} did not wait");
        }
    }
}
