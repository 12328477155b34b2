//! The commands added for Redis users (SORT, bitmaps, LCS, HyperLogLog, geo, SLOWLOG, MEMORY,
//! LATENCY, maxmemory, MONITOR, WAIT, ROLE) called through redis-py, as applications call them, on redis-server and on Goblin
//! Core: the library's parsed results must be equal (`tests/clients/redis_py_commands.py`).

mod common;
use common::{goblin, redis};

#[test]
fn redis_py_sees_the_same_results() {
    let (r, g) = (redis(&[]), goblin(&[]));
    common::run_client_script("redis_py_commands.py", &[r.port, g.port]);
}
