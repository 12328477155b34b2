//! Scripts as real client libraries send them: redis-py's Lock and Script objects and Redlock's
//! unlock script, unmodified, through redis-py (installed by `.ci/run`).

mod common;
use common::goblin;

#[test]
fn redis_py_lock_and_scripts() {
    let g = goblin(&[]);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/redis_py_scripts.py"
    );
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(g.port.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "redis-py scripts failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}
