//! `maxmemory` and eviction (Redis's evict.c). Before each command the gate calls `perform`: while
//! the memory in use (`State::used_memory`, which leaves the scripting VMs out as Redis leaves its
//! Lua VM out, less the AOF buffer) is over `maxmemory`, keys are evicted by
//! `maxmemory-policy` until it is not, within a time budget (`maxmemory-eviction-tenacity`); the
//! event loop goes on evicting between turns when the budget runs out. When nothing more may be
//! evicted (`noeviction`, or no candidate left) the result is `Outcome::Fail`, and the gate refuses
//! the commands that may grow memory (DENYOOM, and scripts and functions that may write unless
//! flagged `allow-oom`) with `OOM_ERROR`.
//!
//! The LRU, LFU and volatile-ttl policies pick as Redis does: `maxmemory-samples` random keys of
//! each database feed a pool of the 16 best candidates seen so far (oldest access, lowest LFU
//! counter, nearest expiry), and the best that still exists is evicted. The access stamps these
//! read are kept by the store (`store::touched`).

use crate::server::ctx::Ctx;
use crate::server::latency;
use crate::server::notify::EVICTED;
use crate::server::State;
use crate::store::{self, NO_EXPIRE};
use std::time::{Duration, Instant};

pub const OOM_ERROR: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// What `perform` found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// Within the limit (or no limit).
    Ok,
    /// Over the limit, still evicting from the event loop.
    Running,
    /// Over the limit with nothing to evict.
    Fail,
}

/// What a `maxmemory-policy` evicts, and from which keys.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pick {
    Nothing,
    Lru,
    Lfu,
    Random,
    /// The nearest expiry (volatile-ttl).
    Ttl,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Policy {
    pub pick: Pick,
    /// `allkeys-*`; otherwise only keys with a TTL are candidates.
    pub all_keys: bool,
}

impl Policy {
    /// One of the config's `maxmemory-policy` values.
    pub fn of(name: &str) -> Policy {
        let (all_keys, what) = match name.split_once('-') {
            Some(("allkeys", what)) => (true, what),
            Some((_, what)) => (false, what),
            None => (false, name),
        };
        let pick = match what {
            "lru" => Pick::Lru,
            "lfu" => Pick::Lfu,
            "random" => Pick::Random,
            "ttl" => Pick::Ttl,
            _ => Pick::Nothing,
        };
        Policy { pick, all_keys }
    }
}

/// Candidates kept between picks (Redis's `EVPOOL_SIZE`).
const POOL_SIZE: usize = 16;

struct Candidate {
    /// Higher is a better candidate: idle seconds, 255 less the LFU counter, or the nearness of
    /// the expiry.
    score: u64,
    db: usize,
    key: Box<[u8]>,
}

/// The eviction state of the server.
#[derive(Default)]
pub struct Eviction {
    /// Ascending by score: the best candidate last.
    pool: Vec<Candidate>,
    /// Where the random policies look first next time, so every database gives up keys in turn.
    next_db: usize,
    /// The time budget ran out over the limit: the event loop goes on evicting.
    pub running: bool,
    pub evicted_keys: u64,
    /// Since when memory has been over the limit (INFO's `current_eviction_exceeded_time`).
    exceeded_since: Option<Instant>,
    exceeded_total: Duration,
    /// Whether the running command started out of memory (Redis's `pre_command_oom_state`): a
    /// script's first write command is then refused unless the script allows OOM.
    pub oom_at_start: bool,
}

impl Eviction {
    /// INFO's `total_eviction_exceeded_time` and `current_eviction_exceeded_time`, in ms.
    pub fn exceeded_ms(&self) -> (u64, u64) {
        let current = self.exceeded_since.map_or(Duration::ZERO, |t| t.elapsed());
        (
            (self.exceeded_total + current).as_millis() as u64,
            current.as_millis() as u64,
        )
    }
}

/// Bytes that must be freed to be back within `maxmemory`, or None when within it.
fn to_free(srv: &State) -> Option<usize> {
    let max = usize::try_from(srv.config.maxmemory)
        .ok()
        .filter(|&m| m > 0)?;
    let used = srv.used_memory();
    if used <= max {
        return None;
    }
    let used = used.saturating_sub(crate::persist::aof::buffer_bytes(&srv.config, &srv.persist));
    (used > max).then(|| used - max)
}

/// How long one call of `perform` may evict (Redis's `evictionTimeLimitUs`): 50 µs per point up
/// to 10, then 15 % more per point, unbounded at 100.
fn time_limit(tenacity: i64) -> Option<Duration> {
    match tenacity {
        ..=10 => Some(Duration::from_micros(50 * tenacity.max(0) as u64)),
        11..=99 => Some(Duration::from_micros(
            (500.0 * 1.15f64.powi(tenacity as i32 - 10)) as u64,
        )),
        _ => None,
    }
}

/// Evicts keys until memory is within `maxmemory`, the time budget runs out (`Running`: the event
/// loop calls again), or nothing is left to evict (`Fail`). Redis's `performEvictions`.
pub fn perform(ctx: &mut Ctx) -> Outcome {
    let outcome = evict(ctx);
    let e = &mut ctx.srv.eviction;
    match outcome {
        Outcome::Ok => {
            if let Some(since) = e.exceeded_since.take() {
                e.exceeded_total += since.elapsed();
            }
        }
        Outcome::Running | Outcome::Fail => {
            e.exceeded_since.get_or_insert_with(Instant::now);
        }
    }
    e.running = outcome == Outcome::Running;
    outcome
}

fn evict(ctx: &mut Ctx) -> Outcome {
    let Some(needed) = to_free(ctx.srv) else {
        return Outcome::Ok;
    };
    let policy = Policy::of(ctx.srv.config.maxmemory_policy);
    if policy.pick == Pick::Nothing {
        return Outcome::Fail;
    }
    let start = Instant::now();
    let outcome = evict_keys(ctx, policy, needed);
    latency::sample(
        ctx.srv,
        "eviction-cycle",
        start.elapsed().as_millis() as u64,
    );
    outcome
}

/// Evicts keys by `policy` until `needed` bytes are freed or the time budget runs out.
fn evict_keys(ctx: &mut Ctx, policy: Policy, needed: usize) -> Outcome {
    let limit = time_limit(ctx.srv.config.maxmemory_eviction_tenacity);
    let start = Instant::now();
    let mut freed: i64 = 0;
    let mut evicted = 0u64;
    let lazy = ctx.srv.config.lazyfree_lazy_eviction;
    while freed < needed as i64 {
        let Some((db, key)) = choose(ctx.srv, policy) else {
            return Outcome::Fail;
        };
        // What deleting the key gave back; the DEL logged for it is not counted (Redis likewise).
        let before = crate::alloc::used() as i64;
        let del_start = Instant::now();
        let removed = ctx.srv.dbs[db].remove(&key);
        if let Some((val, _)) = removed.filter(|_| lazy) {
            crate::server::lazyfree::free_value(val, ctx.srv.config.list_max_listpack_size);
        }
        latency::sample(
            ctx.srv,
            "eviction-del",
            del_start.elapsed().as_millis() as u64,
        );
        freed += before - crate::alloc::used() as i64;
        ctx.srv.eviction.evicted_keys += 1;
        ctx.signal_removed_in(db, &key);
        ctx.notify_in(db, EVICTED, "evicted", &key);
        crate::server::propagate::evicted(ctx.srv, db, &key);
        evicted += 1;
        if evicted.is_multiple_of(16) {
            // What the thread frees is not counted above: under lazy eviction, memory is
            // measured again every 16 keys (Redis's `performEvictions`).
            if lazy && to_free(ctx.srv).is_none() {
                break;
            }
            if limit.is_some_and(|l| start.elapsed() > l) {
                return Outcome::Running;
            }
        }
    }
    Outcome::Ok
}

/// The next key to evict under `policy`, or None when no key is a candidate.
fn choose(srv: &mut State, policy: Policy) -> Option<(usize, Box<[u8]>)> {
    let volatile = !policy.all_keys;
    if policy.pick == Pick::Random {
        let n = srv.dbs.len();
        for i in 0..n {
            let db = (srv.eviction.next_db + 1 + i) % n;
            if let Some(slot) = srv.dbs[db].sample_slot(volatile) {
                srv.eviction.next_db = db;
                return Some((db, srv.dbs[db].dict.key_at(slot).into()));
            }
        }
        return None;
    }
    let samples = srv.config.maxmemory_samples.max(1) as usize;
    loop {
        let mut candidates = 0;
        for (i, db) in srv.dbs.iter().enumerate() {
            let keys = if volatile { db.expires_len() } else { db.len() };
            if keys == 0 {
                continue;
            }
            candidates += keys;
            for _ in 0..samples.min(keys) {
                let Some(slot) = db.sample_slot(volatile) else {
                    break;
                };
                let e = db.dict.value_at(slot);
                let score = match policy.pick {
                    Pick::Lru => store::idle_seconds(e.lru),
                    Pick::Lfu => 255 - u64::from(store::lfu_counter(e.lru)),
                    _ => u64::MAX - db.expire_of(slot).max(0) as u64,
                };
                offer(&mut srv.eviction.pool, score, i, db.dict.key_at(slot));
            }
        }
        if candidates == 0 {
            return None;
        }
        // The best first; a candidate deleted since it was sampled (or no longer holding a TTL,
        // for volatile policies) is passed over.
        while let Some(c) = srv.eviction.pool.pop() {
            let db = &srv.dbs[c.db];
            let present = db
                .dict
                .find(&c.key)
                .is_some_and(|slot| !volatile || db.expire_of(slot) != NO_EXPIRE);
            if present {
                return Some((c.db, c.key));
            }
        }
    }
}

/// Puts a sampled key in the pool if it beats the worst there or the pool has room (Redis's
/// `evictionPoolPopulate`).
fn offer(pool: &mut Vec<Candidate>, score: u64, db: usize, key: &[u8]) {
    let at = pool.partition_point(|c| c.score < score);
    if pool.len() == POOL_SIZE {
        if at == 0 {
            return;
        }
        // Full: the worst goes and the rest shift left.
        pool.remove(0);
        pool.insert(
            at - 1,
            Candidate {
                score,
                db,
                key: key.into(),
            },
        );
    } else {
        pool.insert(
            at,
            Candidate {
                score,
                db,
                key: key.into(),
            },
        );
    }
}

/// Used memory is past a new, lower `maxmemory` (CONFIG SET): warn as Redis's `updateMaxmemory`
/// does, and let the event loop start evicting.
pub fn limit_changed(srv: &mut State) {
    if srv.config.maxmemory <= 0 {
        srv.eviction.running = false;
        return;
    }
    let used = srv
        .used_memory()
        .saturating_sub(crate::persist::aof::buffer_bytes(&srv.config, &srv.persist));
    if (srv.config.maxmemory as u64) < used as u64 {
        crate::warning!("WARNING: the new maxmemory value set via CONFIG SET ({}) is smaller than the current memory usage ({used}). This will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy.", srv.config.maxmemory);
    }
    srv.eviction.running = true;
}

/// The access-stamp settings the store keeps keys under (after start-up and CONFIG SET).
pub fn configure_stamps(srv: &mut State) {
    use crate::persist::rdb::Stamps;
    let config = &srv.config;
    let pick = Policy::of(config.maxmemory_policy).pick;
    store::configure_stamps(
        pick == Pick::Lfu,
        config.lfu_log_factor,
        config.lfu_decay_time,
    );
    // What an RDB file keeps of each key's stamp under this policy (Redis saves the idle time
    // under an LRU policy, the LFU counter under an LFU one).
    srv.persist.stamps = match pick {
        Pick::Lru => Stamps::Idle,
        Pick::Lfu => Stamps::Freq,
        _ => Stamps::None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse() {
        let p = Policy::of;
        assert_eq!(
            p("allkeys-lru"),
            Policy {
                pick: Pick::Lru,
                all_keys: true
            }
        );
        assert_eq!(
            p("volatile-lfu"),
            Policy {
                pick: Pick::Lfu,
                all_keys: false
            }
        );
        assert_eq!(
            p("allkeys-random"),
            Policy {
                pick: Pick::Random,
                all_keys: true
            }
        );
        assert_eq!(
            p("volatile-ttl"),
            Policy {
                pick: Pick::Ttl,
                all_keys: false
            }
        );
        assert_eq!(p("noeviction").pick, Pick::Nothing);
    }

    #[test]
    fn time_limits_follow_tenacity() {
        assert_eq!(time_limit(0), Some(Duration::ZERO));
        assert_eq!(time_limit(10), Some(Duration::from_micros(500)));
        assert_eq!(time_limit(11), Some(Duration::from_micros(575)));
        assert_eq!(time_limit(100), None);
    }

    /// The pool keeps the 16 best scores, ascending, dropping the worst when full.
    #[test]
    fn pool_keeps_the_best() {
        let mut pool = Vec::new();
        for score in [5u64, 1, 9, 3] {
            offer(&mut pool, score, 0, b"k");
        }
        let scores: Vec<u64> = pool.iter().map(|c| c.score).collect();
        assert_eq!(scores, [1, 3, 5, 9]);
        for score in 10..30u64 {
            offer(&mut pool, score, 0, b"k");
        }
        assert_eq!(pool.len(), POOL_SIZE);
        assert_eq!(pool[0].score, 14);
        assert_eq!(pool[POOL_SIZE - 1].score, 29);
        offer(&mut pool, 2, 0, b"k");
        assert_eq!(
            pool[0].score, 14,
            "a worse candidate than all in a full pool is not kept"
        );
    }
}
