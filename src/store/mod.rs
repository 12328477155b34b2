//! The keyspace: `Db` (one numbered database: a `Dict` of entries plus the set of keys with a TTL) and
//! the values it holds. Expiry is as Redis's: lazy on every lookup, plus `active_expire_cycle`, run
//! from the reactor's timer, which samples keys with a TTL and reclaims the expired ones.
//!
//! Entry points: `Db::lookup` (read, with lazy expiry), `Db::lookup_mut`, `Db::set`, `Db::remove`,
//! `Db::set_expire`, `Db::persist`, `Db::active_expire_cycle`.

pub mod compact;
pub mod dict;
pub mod glob;
pub mod hash;
pub mod list;
pub mod listpack;
pub mod set;
pub mod siphash;
pub mod stream;
pub mod value;
pub mod zset;

pub use dict::Dict;
pub use hash::Hash;
pub use list::List;
pub use set::Set;
pub use stream::{Stream, StreamId};
pub use value::{Str, Value};
pub use zset::ZSet;

use crate::util::{clock, rand_u64};

/// A key's value and stamps. Its expiry time, if it has one, is kept in `Db::expiring` (most
/// keys have none, so they do not pay for one).
pub struct Entry {
    pub val: Value,
    /// Position of this key in `Db::expiring`, or `NO_TTL`.
    exp_pos: u32,
    /// The access stamp (see `fresh_stamp`): the LRU clock of the last access, or under an LFU
    /// `maxmemory-policy` the LFU counter and its decrement time.
    pub lru: u32,
}

impl Entry {
    fn new(val: Value, lru: u32) -> Entry {
        Entry {
            val,
            exp_pos: NO_TTL,
            lru,
        }
    }

    pub fn has_ttl(&self) -> bool {
        self.exp_pos != NO_TTL
    }
}

pub const NO_EXPIRE: i64 = -1;
const NO_TTL: u32 = u32::MAX;

/// A key with a TTL: its slot and absolute expiry in Unix milliseconds.
#[derive(Clone, Copy)]
struct Expiring {
    slot: u32,
    at: i64,
}

#[derive(Default)]
pub struct Db {
    pub dict: Dict<Entry>,
    /// The keys that have a TTL: what the active expiry cycle samples.
    expiring: Vec<Expiring>,
    pub stats: DbStats,
    /// Keys expired (lazily or actively) while `set_log_expired` is on: the AOF logs their deletion.
    pub expired_log: Vec<Vec<u8>>,
    /// Values the store let go of, kept for the server to hand to its lazy-free thread: expired
    /// keys' while `set_lazy_expire` is on, overwritten or replaced keys' while
    /// `set_lazy_server_del` is on.
    pub lazy_values: Vec<Value>,
    /// Keys expired while `set_signal_expired` is on: the server tells their watchers and
    /// tracking clients once the command that expired them has run.
    pub expired_signals: Vec<Box<[u8]>>,
    /// The keyspace events this database raised itself, in order, while recorded
    /// (`set_recorded_events`); the notification layer publishes and empties it.
    pub events: Vec<(StoreEvent, Box<[u8]>)>,
}

/// A keyspace event the store raises (Redis raises these in `dbAdd`, `deleteExpiredKeyAndPropagate`
/// and `lookupKeyRead`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum StoreEvent {
    /// A key was added.
    New,
    /// A key was deleted because its time had passed.
    Expired,
    /// A read found no key.
    Miss,
}

thread_local! {
    static LOG_EXPIRED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LOG_EXPIRED_FOR_REPLICAS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAZY_EXPIRE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAZY_SERVER_DEL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static SIGNAL_EXPIRED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LOADING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Why keys past their time read as missing but stay (`KEEP_*` bits): one read per lookup.
    static KEEP_EXPIRED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
    static OBEYING_MASTER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Which `StoreEvent`s are recorded, one bit each (`event_bit`).
    static RECORDED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

const fn event_bit(e: StoreEvent) -> u8 {
    match e {
        StoreEvent::New => 1,
        StoreEvent::Expired => 2,
        StoreEvent::Miss => 4,
    }
}

/// Which events the store records in `Db::events` (the ones keyspace notifications publish).
pub fn set_recorded_events(new: bool, expired: bool, miss: bool) {
    let bits = [
        (new, StoreEvent::New),
        (expired, StoreEvent::Expired),
        (miss, StoreEvent::Miss),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |b, (_, e)| b | event_bit(*e));
    RECORDED.with(|c| c.set(bits));
}

/// True if any event is being recorded.
pub fn events_recorded() -> bool {
    RECORDED.with(|c| c.get()) != 0
}

#[inline]
fn record(db: &mut Db, event: StoreEvent, key: &[u8]) {
    if RECORDED.with(|c| c.get()) & event_bit(event) != 0 && !LOADING.with(|c| c.get()) {
        db.events.push((event, Box::from(key)));
    }
}

/// Record expired keys in `Db::expired_log` (while the AOF is on).
pub fn set_log_expired(on: bool) {
    LOG_EXPIRED.with(|c| c.set(on));
}

/// Record expired keys for the replication stream too (while a primary streams to replicas).
pub fn set_log_expired_for_replicas(on: bool) {
    LOG_EXPIRED_FOR_REPLICAS.with(|c| c.set(on));
}

/// Keep expired keys' values in `Db::lazy_values` rather than freeing them
/// (`lazyfree-lazy-expire`).
pub fn set_lazy_expire(on: bool) {
    LAZY_EXPIRE.with(|c| c.set(on));
}

/// Keep the values of overwritten keys, and of keys the server deletes to replace them, in
/// `Db::lazy_values` rather than freeing them (`lazyfree-lazy-server-del`).
pub fn set_lazy_server_del(on: bool) {
    LAZY_SERVER_DEL.with(|c| c.set(on));
}

/// Record expired keys in `Db::expired_signals` (while keys are watched or tracked); the setting
/// it replaces.
pub fn set_signal_expired(on: bool) -> bool {
    SIGNAL_EXPIRED.with(|c| c.replace(on))
}

/// While loading the AOF nothing expires (as Redis's `keyIsExpired` during loading): a later
/// command of the file may still work on a key whose time has passed since it was written.
pub fn set_loading(on: bool) {
    LOADING.with(|c| c.set(on));
}

/// While clients are paused (CLIENT PAUSE) a key past its time reads as missing but is not
/// deleted, as Redis's `expireIfNeeded`: the dataset holds still.
pub fn set_expiry_paused(on: bool) {
    keep_expired(KEEP_PAUSED, on);
}

const KEEP_PAUSED: u8 = 1;
const KEEP_ON_REPLICA: u8 = 2;

fn keep_expired(bit: u8, on: bool) {
    KEEP_EXPIRED.with(|c| c.set(if on { c.get() | bit } else { c.get() & !bit }));
}

/// On a replica, keys expire by the primary's DELs: one past its time reads as missing to clients
/// but is not deleted (Redis's `expireIfNeeded` with `masterhost` set).
pub fn set_replica_expiry(on: bool) {
    keep_expired(KEEP_ON_REPLICA, on);
}

/// While a replica runs its primary's commands, no key reads as expired: the primary decides.
pub fn set_obeying_master(on: bool) {
    OBEYING_MASTER.with(|c| c.set(on));
}

/// True while the AOF is being loaded.
pub fn loading() -> bool {
    LOADING.with(|c| c.get())
}

/// Removes an expired key: its value is kept for the lazy-free thread or freed here.
fn remove_expired(db: &mut Db, key: &[u8]) {
    if let Some((val, _)) = db.remove(key) {
        if LAZY_EXPIRE.with(|c| c.get()) {
            db.lazy_values.push(val);
        }
    }
    note_expired(db, key);
}

/// Lets go of a value the server replaced: kept for the lazy-free thread or freed here.
fn let_go(db: &mut Db, val: Value) {
    if LAZY_SERVER_DEL.with(|c| c.get()) {
        db.lazy_values.push(val);
    }
}

fn note_expired(db: &mut Db, key: &[u8]) {
    db.stats.expired_keys += 1;
    record(db, StoreEvent::Expired, key);
    if LOG_EXPIRED.with(|c| c.get()) || LOG_EXPIRED_FOR_REPLICAS.with(|c| c.get()) {
        db.expired_log.push(key.to_vec());
    }
    if SIGNAL_EXPIRED.with(|c| c.get()) {
        db.expired_signals.push(key.into());
    }
}

// ---------------------------------------------------------------------------------------------
// Access stamps: what `Entry::lru` holds, as Redis's 24-bit `lru` field. Under an LFU
// `maxmemory-policy` it is a logarithmic access counter (low 8 bits) and the minutes clock of its
// last decrement (the 16 bits above); under any other policy, the LRU clock (seconds) of the last
// access. Switching policies leaves the stamps as they are: they take some time to adjust, as in
// Redis.

#[derive(Clone, Copy)]
struct LfuParams {
    on: bool,
    log_factor: u32,
    decay_minutes: u32,
}

thread_local! {
    static LFU: std::cell::Cell<LfuParams> = const {
        std::cell::Cell::new(LfuParams { on: false, log_factor: 10, decay_minutes: 1 })
    };
}

/// Where a new key's LFU counter starts, so it survives a few samplings before it is used.
const LFU_INIT_VAL: u32 = 5;

/// Sets how stamps are kept: LFU (`lfu-log-factor`, `lfu-decay-time`) or LRU.
pub fn configure_stamps(lfu: bool, log_factor: i64, decay_minutes: i64) {
    let p = LfuParams {
        on: lfu,
        log_factor: log_factor.clamp(0, u32::MAX as i64) as u32,
        decay_minutes: decay_minutes.clamp(0, u32::MAX as i64) as u32,
    };
    LFU.with(|c| c.set(p));
}

/// True under an LFU `maxmemory-policy`.
pub fn lfu_policy() -> bool {
    LFU.with(|c| c.get().on)
}

fn lfu_minutes() -> u32 {
    ((clock::now_ms() / 60_000) & 0xFFFF) as u32
}

/// The stamp a new key gets.
pub fn fresh_stamp() -> u32 {
    if lfu_policy() {
        (lfu_minutes() << 8) | LFU_INIT_VAL
    } else {
        clock::lru_now()
    }
}

/// The stamp after an access: the LRU clock now, or the decayed LFU counter incremented with
/// probability 1/((counter - LFU_INIT_VAL) * lfu-log-factor + 1) (Redis's `updateLFU`).
pub fn touched(stamp: u32) -> u32 {
    let p = LFU.with(|c| c.get());
    if !p.on {
        return clock::lru_now();
    }
    let mut counter = decayed(stamp, p);
    if counter < 255 {
        let r = (rand_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
        if r < 1.0 / (base * p.log_factor as f64 + 1.0) {
            counter += 1;
        }
    }
    (lfu_minutes() << 8) | counter
}

/// The LFU counter of a stamp as of now: less one for each `lfu-decay-time` minutes since its
/// last decrement (Redis's `LFUDecrAndReturn`; OBJECT FREQ).
pub fn lfu_counter(stamp: u32) -> u32 {
    decayed(stamp, LFU.with(|c| c.get()))
}

fn decayed(stamp: u32, p: LfuParams) -> u32 {
    let (ldt, counter) = ((stamp >> 8) & 0xFFFF, stamp & 0xFF);
    let now = lfu_minutes();
    // The minutes clock wraps every 45 days: a later stamp wrapped once.
    let elapsed = if now >= ldt {
        now - ldt
    } else {
        0xFFFF - ldt + now
    };
    let periods = elapsed.checked_div(p.decay_minutes).unwrap_or(0);
    counter.saturating_sub(periods)
}

/// Seconds since a key's last access, from its LRU stamp (OBJECT IDLETIME; may predate the start:
/// RESTORE ... IDLETIME).
pub fn idle_seconds(stamp: u32) -> u64 {
    clock::lru_now().wrapping_sub(stamp) as u64
}

/// The stamp RESTORE (IDLETIME, FREQ) or an RDB file (its IDLE and FREQ opcodes) gives a key, as
/// Redis's `objectSetLRUOrLFU`: the frequency under an LFU policy, the idle time otherwise; None
/// when the one that applies was not given.
pub fn restored_stamp(idle_secs: Option<u64>, freq: Option<u8>) -> Option<u32> {
    if lfu_policy() {
        freq.map(|f| (lfu_minutes() << 8) | u32::from(f))
    } else {
        idle_secs.map(|s| clock::lru_now().wrapping_sub(s.min(u32::MAX as u64) as u32))
    }
}

#[derive(Default, Clone, Copy)]
pub struct DbStats {
    pub expired_keys: u64,
    pub hits: u64,
    pub misses: u64,
}

/// Outcome of one database's active expiry pass.
pub struct ExpireRun {
    pub sampled: usize,
    pub expired: usize,
}

impl Db {
    pub fn len(&self) -> usize {
        self.dict.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    pub fn expires_len(&self) -> usize {
        self.expiring.len()
    }

    /// Bytes of the index of keys with a TTL (MEMORY STATS).
    pub fn expires_table_bytes(&self) -> usize {
        self.expiring.capacity() * std::mem::size_of::<Expiring>()
    }

    /// The slot of a live (non-expired) key, expiring it lazily if its time has passed (while
    /// clients are paused, leaving it in place).
    pub fn find_live(&mut self, key: &[u8]) -> Option<u32> {
        self.find_unexpired(key, KEEP_EXPIRED.with(|c| c.get()) != 0)
    }

    /// `find_live` for a write, which will store at the key: an expired key goes even while
    /// clients are paused (a write that runs then, inside the transaction that paused them,
    /// replaces it).
    fn find_for_write(&mut self, key: &[u8]) -> Option<u32> {
        self.find_unexpired(key, false)
    }

    fn find_unexpired(&mut self, key: &[u8], keep_expired: bool) -> Option<u32> {
        let slot = self.dict.find(key)?;
        let at = self.expire_of(slot);
        if at != NO_EXPIRE
            && at <= clock::now_ms()
            && !LOADING.with(|c| c.get())
            && !OBEYING_MASTER.with(|c| c.get())
        {
            if !keep_expired {
                remove_expired(self, key);
            }
            return None;
        }
        Some(slot)
    }

    /// Looks a key up for reading: counts a hit or miss and refreshes its access time.
    pub fn lookup(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.lookup_read(key, !clock::no_touch())
    }

    /// `lookup` that leaves the access time alone (Redis's `LOOKUP_NOTOUCH`: EXISTS, TYPE, the TTL
    /// family), still counted and still raising `keymiss`.
    pub fn lookup_no_touch(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.lookup_read(key, false)
    }

    fn lookup_read(&mut self, key: &[u8], touch: bool) -> Option<&mut Entry> {
        let slot = self.lookup_read_slot(key, touch)?;
        Some(self.dict.value_at_mut(slot))
    }

    /// `lookup` (`touch`) or `lookup_no_touch` giving the key's slot, for callers that also want
    /// its expiry (`expire_of`) without looking it up again.
    pub fn lookup_read_slot(&mut self, key: &[u8], touch: bool) -> Option<u32> {
        match self.find_live(key) {
            Some(slot) => {
                self.stats.hits += 1;
                if touch {
                    let e = self.dict.value_at_mut(slot);
                    e.lru = touched(e.lru);
                }
                Some(slot)
            }
            None => {
                self.stats.misses += 1;
                record(self, StoreEvent::Miss, key);
                None
            }
        }
    }

    /// Looks a key up for writing: no hit/miss accounting (as Redis's `lookupKeyWrite`).
    pub fn lookup_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let slot = self.find_for_write(key)?;
        let e = self.dict.value_at_mut(slot);
        e.lru = touched(e.lru);
        Some(e)
    }

    pub fn exists(&mut self, key: &[u8]) -> bool {
        self.find_live(key).is_some()
    }

    /// The entry at `key` for writing (as `lookup_mut`), first stored with `make()` and no TTL if
    /// absent: one lookup when the key exists (Redis's `*TypeLookupWriteOrCreate`), for the writes
    /// that create their key (SADD, HSET, ZADD).
    pub fn lookup_mut_or_insert(&mut self, key: &[u8], make: impl FnOnce() -> Value) -> &mut Entry {
        let slot = match self.find_for_write(key) {
            Some(slot) => {
                let e = self.dict.value_at_mut(slot);
                e.lru = touched(e.lru);
                slot
            }
            None => {
                record(self, StoreEvent::New, key);
                self.dict.insert_new(key, Entry::new(make(), fresh_stamp()))
            }
        };
        self.dict.value_at_mut(slot)
    }

    /// Stores `val` under `key`. `expire_at`: `Some(t)` sets that TTL, `None` keeps the key's current
    /// TTL (KEEPTTL). Callers wanting SET's default (drop the TTL) pass `Some(NO_EXPIRE)`.
    pub fn set(&mut self, key: &[u8], val: Value, expire_at: Option<i64>) {
        match self.find_for_write(key) {
            Some(slot) => {
                // An overwritten key keeps its LFU counter, as Redis's `dbSetValue`.
                let e = self.dict.value_at_mut(slot);
                let old = std::mem::replace(&mut e.val, val);
                e.lru = touched(e.lru);
                if let Some(at) = expire_at {
                    self.set_expire_slot(slot, at);
                }
                let_go(self, old);
            }
            None => {
                record(self, StoreEvent::New, key);
                let slot = self.dict.insert_new(key, Entry::new(val, fresh_stamp()));
                if let Some(at) = expire_at {
                    self.set_expire_slot(slot, at);
                }
            }
        }
    }

    /// Adds a key that is not in the table, expired or not, without looking it up (the RDB loader,
    /// which has just checked): one hash of the key instead of three. `stamp`: the access stamp the
    /// file gave it (`restored_stamp`), else a fresh one.
    pub fn insert_absent(&mut self, key: &[u8], val: Value, expire_at: i64, stamp: Option<u32>) {
        let entry = Entry::new(val, stamp.unwrap_or_else(fresh_stamp));
        let slot = self.dict.insert_new(key, entry);
        if expire_at != NO_EXPIRE {
            self.set_expire_slot(slot, expire_at);
        }
    }

    /// Adds a key known to be absent with a given TTL (used by RENAME, MOVE, COPY).
    pub fn insert_entry(&mut self, key: &[u8], val: Value, expire_at: i64) {
        self.set(key, val, Some(expire_at));
    }

    /// Deletes a key on the server's behalf (RENAME's or RESTORE's destination, SPOP's whole set):
    /// its value goes the way of an overwritten one (Redis's `dbDelete` under
    /// `lazyfree-lazy-server-del`). Whether it was there.
    pub fn server_delete(&mut self, key: &[u8]) -> bool {
        match self.remove(key) {
            Some((val, _)) => {
                let_go(self, val);
                true
            }
            None => false,
        }
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<(Value, i64)> {
        let (slot, entry) = self.dict.remove(key)?;
        Some(self.detached(slot, entry))
    }

    /// The value and expiry of an entry just taken out of `slot`, its TTL record dropped.
    fn detached(&mut self, slot: u32, entry: Entry) -> (Value, i64) {
        let mut at = NO_EXPIRE;
        if entry.has_ttl() {
            at = self.expiring[entry.exp_pos as usize].at;
            self.unlink_expiring(slot, entry.exp_pos);
        }
        (entry.val, at)
    }

    /// Removes a live key (DEL's, UNLINK's): `find_live` then `remove` in one lookup. An expired
    /// key is left to `find_live`, which expires it, and counts as absent.
    pub fn remove_live(&mut self, key: &[u8]) -> Option<(Value, i64)> {
        let expiring = &self.expiring;
        let expired = |e: &Entry| {
            e.has_ttl()
                && expiring[e.exp_pos as usize].at <= clock::now_ms()
                && !LOADING.with(|c| c.get())
                && !OBEYING_MASTER.with(|c| c.get())
        };
        match self.dict.remove_unless(key, expired)? {
            Ok((slot, entry)) => Some(self.detached(slot, entry)),
            Err(_) => {
                let live = self.find_live(key);
                debug_assert!(live.is_none());
                None
            }
        }
    }

    fn unlink_expiring(&mut self, slot: u32, pos: u32) {
        debug_assert_eq!(self.expiring[pos as usize].slot, slot);
        self.expiring.swap_remove(pos as usize);
        if let Some(moved) = self.expiring.get(pos as usize) {
            self.dict.value_at_mut(moved.slot).exp_pos = pos;
        }
    }

    /// Sets (or with `NO_EXPIRE` clears) the TTL of a live key's slot.
    pub fn set_expire_slot(&mut self, slot: u32, at: i64) {
        let pos = self.dict.value_at(slot).exp_pos;
        match (pos != NO_TTL, at != NO_EXPIRE) {
            (false, true) => {
                self.dict.value_at_mut(slot).exp_pos = self.expiring.len() as u32;
                self.expiring.push(Expiring { slot, at });
            }
            (true, true) => self.expiring[pos as usize].at = at,
            (true, false) => {
                self.unlink_expiring(slot, pos);
                self.dict.value_at_mut(slot).exp_pos = NO_TTL;
            }
            (false, false) => {}
        }
    }

    /// The absolute expiry of a live key's slot, or `NO_EXPIRE`.
    pub fn expire_of(&self, slot: u32) -> i64 {
        self.expire_of_entry(self.dict.value_at(slot))
    }

    /// The absolute expiry of one of this database's entries, or `NO_EXPIRE`.
    pub fn expire_of_entry(&self, e: &Entry) -> i64 {
        if e.has_ttl() {
            self.expiring[e.exp_pos as usize].at
        } else {
            NO_EXPIRE
        }
    }

    /// Empties the database and hands over its keys (FLUSHALL ASYNC frees them elsewhere).
    pub fn take_keys(&mut self) -> Dict<Entry> {
        self.expiring = Vec::new();
        std::mem::take(&mut self.dict)
    }

    pub fn clear(&mut self) -> usize {
        let n = self.dict.len();
        self.dict.clear();
        self.expiring = Vec::new();
        n
    }

    /// A random slot for eviction to consider: any key, or with `volatile` only a key with a TTL.
    /// Expired keys are candidates too, as in Redis's sampling.
    pub fn sample_slot(&self, volatile: bool) -> Option<u32> {
        if !volatile {
            return self.dict.random_slot(rand_u64);
        }
        if self.expiring.is_empty() {
            return None;
        }
        Some(self.expiring[(rand_u64() % self.expiring.len() as u64) as usize].slot)
    }

    pub fn random_key(&mut self) -> Option<Vec<u8>> {
        // Expired keys found by sampling are reclaimed and the draw repeated, as Redis does; if every
        // key has a TTL, give up after a bounded number of tries and return an expired-looking key.
        for _ in 0..100 {
            let slot = self.dict.random_slot(rand_u64)?;
            let key = self.dict.key_at(slot).to_vec();
            if self.find_live(&key).is_some() {
                return Some(key);
            }
        }
        self.dict
            .random_slot(rand_u64)
            .map(|s| self.dict.key_at(s).to_vec())
    }

    /// One pass of active expiry over this database: sample up to `per_round` keys with a TTL, delete
    /// the expired ones (each passed to `on_expired` once gone), and repeat while more than a quarter
    /// of a sample was expired and time remains.
    pub fn active_expire_cycle(
        &mut self,
        per_round: usize,
        deadline_us: u64,
        mut on_expired: impl FnMut(&[u8]),
    ) -> ExpireRun {
        let mut run = ExpireRun {
            sampled: 0,
            expired: 0,
        };
        let now = clock::now_ms();
        loop {
            if self.expiring.is_empty() {
                break;
            }
            let mut expired = 0;
            let n = per_round.min(self.expiring.len());
            for _ in 0..n {
                if self.expiring.is_empty() {
                    break;
                }
                let pos = (rand_u64() % self.expiring.len() as u64) as usize;
                let Expiring { slot, at } = self.expiring[pos];
                run.sampled += 1;
                if at <= now {
                    let key = self.dict.key_at(slot).to_vec();
                    remove_expired(self, &key);
                    on_expired(&key);
                    expired += 1;
                }
            }
            run.expired += expired;
            if expired * 4 <= n || clock::monotonic_us() >= deadline_us {
                break;
            }
        }
        run
    }
}
