//! Scripts as real client libraries send them: redis-py's Lock and Script objects and Redlock's
//! unlock script, unmodified, through redis-py (installed by `.ci/run`).

mod common;
use common::goblin;

#[test]
fn redis_py_lock_and_scripts() {
    let g = goblin(&[]);
    common::run_client_script("redis_py_scripts.py", &[g.port]);
}
