//! The commands added for Redis users (SORT, bitmaps, LCS, HyperLogLog, geo, SLOWLOG, MEMORY,
//! LATENCY, maxmemory, MONITOR, WAIT, ROLE) called through redis-py, as applications call them, on redis-server and on Goblin
//! Core: the library's parsed results must be equal (`tests/clients/redis_py_commands.py`); and
//! redis-py's client-side cache, which must see other clients' changes (`redis_py_tracking.py`).

mod common;
use common::{goblin, redis};

#[test]
fn redis_py_sees_the_same_results() {
    let (r, g) = (redis(&[]), goblin(&[]));
    common::run_client_script("redis_py_commands.py", &[r.port, g.port]);
}

/// redis-py's client-side cache (`cache_config`, RESP3) sees a value another client changed, on
/// both servers (`tests/clients/redis_py_tracking.py`).
#[test]
fn redis_py_client_side_cache() {
    let (r, g) = (redis(&[]), goblin(&[]));
    common::run_client_script("redis_py_tracking.py", &[r.port, g.port]);
}
