//! `oom-score-adj` (Redis's `setOOMScoreAdj`): the Linux OOM killer's score of the server and of
//! its background save children, from `oom-score-adj-values`: `yes`/`relative` adds them to the
//! score the process started with, `absolute` sets them, `no` restores the score it started with
//! (if the server changed it).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use crate::config::Config;

/// Which of `oom-score-adj-values` applies.
#[derive(Clone, Copy)]
pub enum Class {
    Server = 0,
    /// A BGSAVE or AOF rewrite child.
    Child = 2,
}

static ADJUSTED: AtomicBool = AtomicBool::new(false);
static BASE: AtomicI64 = AtomicI64::new(0);

const PATH: &str = "/proc/self/oom_score_adj";

/// Sets the process's score for `class` from `config` (after start-up, CONFIG SET, and in a
/// forked child). Failures are logged, as Redis does.
pub fn apply(config: &Config, class: Class) {
    let value = if config.oom_score_adj != "no" {
        if !ADJUSTED.swap(true, Ordering::Relaxed) {
            match std::fs::read_to_string(PATH) {
                Ok(s) => BASE.store(s.trim().parse().unwrap_or(0), Ordering::Relaxed),
                Err(e) => {
                    ADJUSTED.store(false, Ordering::Relaxed);
                    crate::warning!("Unable to read oom_score_adj: {e}");
                    return;
                }
            }
        }
        let mut v = config.oom_score_adj_values[class as usize];
        if config.oom_score_adj != "absolute" {
            v += BASE.load(Ordering::Relaxed);
        }
        v.clamp(-1000, 1000)
    } else if ADJUSTED.swap(false, Ordering::Relaxed) {
        BASE.load(Ordering::Relaxed)
    } else {
        return;
    };
    if let Err(e) = std::fs::write(PATH, format!("{value}\n")) {
        crate::warning!("Unable to write oom_score_adj: {e}");
    }
}
