//! Lazy freeing (Redis's lazyfree.c): a value that takes many allocations to free, and a whole
//! database flushed with ASYNC, are dropped by a background thread, as Redis's bio lazy-free
//! thread does, so deleting them does not stop the event loop. The thread owns only what it is
//! handed; the two counters are INFO's `lazyfree_pending_objects` and `lazyfreed_objects`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

use crate::store::hash::Hash;
use crate::store::set::Set;
use crate::store::value::Value;
use crate::store::{Db, Dict, Entry};

/// Redis's LAZYFREE_THRESHOLD: a value whose free effort is above it goes to the thread.
const THRESHOLD: usize = 64;

static PENDING: AtomicUsize = AtomicUsize::new(0);
static FREED: AtomicUsize = AtomicUsize::new(0);

enum Garbage {
    Value(Value),
    /// A flushed database's keys, and how many.
    Keys(Dict<Entry>, usize),
}

/// The thread, started on first use; `None` if it could not be started (values are then freed
/// in place).
fn dropper() -> Option<&'static Sender<Garbage>> {
    static TX: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = channel::<Garbage>();
        std::thread::Builder::new()
            .name("lazyfree".into())
            .spawn(move || {
                for garbage in rx {
                    let n = match garbage {
                        Garbage::Value(v) => {
                            drop(v);
                            1
                        }
                        Garbage::Keys(keys, n) => {
                            drop(keys);
                            n
                        }
                    };
                    PENDING.fetch_sub(n, Ordering::Relaxed);
                    FREED.fetch_add(n, Ordering::Relaxed);
                }
            })
            .ok()
            .map(|_| tx)
    })
    .as_ref()
}

fn hand_over(garbage: Garbage, n: usize) {
    PENDING.fetch_add(n, Ordering::Relaxed);
    if let Some(Err(back)) = dropper().map(|tx| tx.send(garbage)) {
        drop(back.0);
        PENDING.fetch_sub(n, Ordering::Relaxed);
    }
}

/// Redis's `lazyfreeGetFreeEffort`, counted up to just past the threshold: the quicklist nodes
/// of a list (laid out under `list-max-listpack-size` `fill`), the elements of a hash table or
/// skiplist, a stream's nodes and consumer groups; 1 for a compact encoding or a string.
fn free_effort(v: &Value, fill: i64) -> usize {
    match v {
        Value::List(l) => {
            let mut nodes = 0;
            crate::persist::rdb::for_each_list_node(l, fill, |_, _| {
                nodes += 1;
                nodes <= THRESHOLD
            });
            nodes
        }
        Value::Set(s) => match &**s {
            Set::Table(d) => d.len(),
            Set::Intset(_) => 1,
        },
        Value::Hash(h) => match h {
            Hash::Table(d) => d.len(),
            Hash::Listpack(_) => 1,
        },
        Value::ZSet(z) if !z.is_listpack() => z.len(),
        Value::Stream(s) => {
            let groups = s.groups.len();
            let first_pel = s.groups.values().next().map_or(0, |g| g.pel.len());
            s.node_count() + groups * (1 + first_pel)
        }
        _ => 1,
    }
}

/// Frees a deleted value: on the thread when its effort is above the threshold (Redis's
/// `freeObjAsync`), here otherwise.
pub fn free_value(v: Value, list_fill: i64) {
    if free_effort(&v, list_fill) > THRESHOLD {
        hand_over(Garbage::Value(v), 1);
    }
}

/// Hands the values the store let go of since last asked to the thread (`lazyfree-lazy-expire`,
/// `lazyfree-lazy-server-del`).
pub fn free_let_go(dbs: &mut [Db], list_fill: i64) {
    for db in dbs {
        for v in db.lazy_values.drain(..) {
            free_value(v, list_fill);
        }
    }
}

/// Empties a database, its keys freed on the thread (Redis's `emptyDbAsync`); how many keys it
/// had.
pub fn flush_db(db: &mut Db) -> usize {
    let n = db.len();
    hand_over(Garbage::Keys(db.take_keys(), n), n);
    n
}

/// INFO's `lazyfree_pending_objects`: handed over, not yet freed.
pub fn pending() -> usize {
    PENDING.load(Ordering::Relaxed)
}

/// INFO's `lazyfreed_objects`: freed by the thread since start or CONFIG RESETSTAT.
pub fn freed() -> usize {
    FREED.load(Ordering::Relaxed)
}

pub fn reset_stats() {
    FREED.store(0, Ordering::Relaxed);
}
