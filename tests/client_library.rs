//! The commands added for Redis users (SORT, bitmaps, LCS, HyperLogLog, geo, SLOWLOG, MONITOR,
//! WAIT, ROLE) called through redis-py, as applications call them, on redis-server and on Goblin
//! Core: the library's parsed results must be equal (`tests/clients/redis_py_commands.py`).

mod common;
use common::{goblin, redis};

#[test]
fn redis_py_sees_the_same_results() {
    let (r, g) = (redis(&[]), goblin(&[]));
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/redis_py_commands.py"
    );
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(r.port.to_string())
        .arg(g.port.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "redis-py comparison failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}
