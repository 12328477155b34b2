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

/// A consumer-group workflow through redis-py's stream API (`tests/clients/redis_py_streams.py`):
/// produce, read in a group by two consumers (COUNT, BLOCK woken by a producer thread), ack, let
/// one consumer's entries go stale and claim them (XAUTOCLAIM, XCLAIM), XPENDING empty, trim, a
/// transaction with XADD + XREADGROUP, XINFO, a blocked reader released by XGROUP DESTROY; over
/// RESP2 and RESP3, the parsed results equal on redis-server and on Goblin Core.
#[test]
fn redis_py_stream_consumer_group_workflow() {
    let (r, g) = (redis(&[]), goblin(&[]));
    common::run_client_script("redis_py_streams.py", &[r.port, g.port]);
}

/// redis-py's client-side cache (`cache_config`, RESP3) sees a value another client changed, on
/// both servers (`tests/clients/redis_py_tracking.py`).
#[test]
fn redis_py_client_side_cache() {
    let (r, g) = (redis(&[]), goblin(&[]));
    common::run_client_script("redis_py_tracking.py", &[r.port, g.port]);
}
