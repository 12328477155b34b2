//! What every engine's `redis` object has in common, whatever its language, written once: the
//! constants it carries (`LOG_*`, `REPL_*`, `REDIS_VERSION_NUM`), the log levels `redis.log`
//! takes, and the line trimming of Redis's error tables. Each engine's `api.rs` builds its own
//! `redis` object from these.

use std::ffi::CStr;

use crate::config::REDIS_VERSION;
use crate::log::Level;

/// `redis.LOG_*`: the levels `redis.log` takes (see `log_level`).
pub const LOG_LEVELS: [(&CStr, i32); 4] = [
    (c"LOG_DEBUG", 0),
    (c"LOG_VERBOSE", 1),
    (c"LOG_NOTICE", 2),
    (c"LOG_WARNING", 3),
];

/// `redis.REPL_*`: the flags `redis.set_repl` takes.
pub const REPL_FLAGS: [(&CStr, i32); 5] = [
    (c"REPL_NONE", 0),
    (c"REPL_AOF", 1),
    (c"REPL_SLAVE", 2),
    (c"REPL_REPLICA", 2),
    (c"REPL_ALL", 3),
];

/// `redis.REDIS_VERSION_NUM`: `0x070000 | patch` style number of the Redis version we report
/// (`7.0.15` → 0x07000f).
pub fn redis_version_num() -> u32 {
    let mut parts = REDIS_VERSION
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next() << 16) | (next() << 8) | next()
}

/// The level a `redis.log` level number names; `None` for any other number (`Invalid debug
/// level.`).
pub fn log_level(n: i64) -> Option<Level> {
    Some(match n {
        0 => Level::Debug,
        1 => Level::Verbose,
        2 => Level::Notice,
        3 => Level::Warning,
        _ => return None,
    })
}

/// `b` without the CR and LF bytes at either end (an error line as Redis's error tables hold it).
pub fn trim_crlf(b: &[u8]) -> &[u8] {
    let end = b
        .iter()
        .rposition(|&c| c != b'\r' && c != b'\n')
        .map_or(0, |i| i + 1);
    let start = b
        .iter()
        .position(|&c| c != b'\r' && c != b'\n')
        .unwrap_or(end);
    &b[start..end]
}
