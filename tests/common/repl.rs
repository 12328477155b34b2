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

/// Writes of every type, in two databases, with expiries, a transaction, a Lua script and the
/// function of `LIBRARY` (loaded): what a redis-server primary and Goblin Core both run.
pub fn write_load_common(c: &mut Raw, round: usize) {
    let r = round;
    let lines = [
        format!("SET s{r} v{r}"),
        format!("SET t{r} v EX 6000"),
        format!("INCRBYFLOAT f{r} 1.5"),
        format!("RPUSH l{r} a b c d"),
        format!("LPOP l{r}"),
        format!("HSET h{r} f1 v1 f2 v2"),
        format!("SADD st{r} m1 m2 m3"),
        format!("SPOP st{r}"),
        format!("ZADD z{r} 1 a 2 b 3 c"),
        format!("XADD x{r} * field value"),
        format!("PFADD hll{r} a b c"),
        format!("SETBIT bits{r} 7 1"),
        "MULTI".to_string(),
        format!("INCR counter{r}"),
        format!("EXPIRE s{r} 100000"),
        "EXEC".to_string(),
        format!("EVAL \"redis.call('set', KEYS[1], ARGV[1]) return redis.call('incr', KEYS[2])\" 2 e{r} n{r} val"),
        format!("FCALL setter 1 fk{r} fv"),
        "SELECT 3".to_string(),
        format!("SET other{r} x"),
        format!("ZINCRBY zz{r} 2.5 m"),
        "SELECT 0".to_string(),
        format!("DEL l{r}"),
    ];
    run_all(c, &lines);
}

/// `write_load_common` and what only Goblin Core runs: a script in each other engine and
/// GOBLIN.CAD.
pub fn write_load(c: &mut Raw, round: usize) {
    write_load_common(c, round);
    let r = round;
    let lines = [
        format!("LUAU.EVAL \"return redis.call('SET', KEYS[1], 'luau')\" 1 luau{r}"),
        format!("QUICKJS.EVAL \"return redis.call('SET', KEYS[0], 'js')\" 1 js{r}"),
        format!("TCL.EVAL \"return [redis call SET [lindex $KEYS 0] tcl]\" 1 tcl{r}"),
        format!("UPYTHON.EVAL \"return redis.call('SET', KEYS[0], 'py')\" 1 py{r}"),
        format!("WREN.EVAL \"return Redis.call(\\\"SET\\\", keys[0], \\\"wren\\\")\" 1 wren{r}"),
        format!("SET cad{r} token"),
        format!("GOBLIN.CAD cad{r} token"),
    ];
    run_all(c, &lines);
}

fn run_all(c: &mut Raw, lines: &[String]) {
    for line in lines {
        let reply = c.cmd_str(line);
        assert!(!reply.starts_with(b"-"), "{line}: {}", show(&reply));
    }
}
