//! The transaction state (Redis's multi.c): each client's MULTI queue and WATCHed keys. The gate
//! queues a checked command (`queue`) or flags the transaction when one is refused (`flag`);
//! `Ctx::signal_modified` marks watchers dirty (`touch`), FLUSHDB/FLUSHALL/SWAPDB go through
//! `touch_all_watched` (Redis's `touchAllWatchedKeysInDb`), and a watched key that expired since
//! WATCH fails EXEC too (`watched_key_expired`). The commands (MULTI, EXEC, DISCARD, WATCH,
//! UNWATCH) are in `cmd/multi.rs`.

use crate::resp::parser::Args;
use crate::server::client::Client;
use crate::server::ctx::Ctx;
use crate::server::key_events::KeyEvents;
use crate::store::{Db, NO_EXPIRE};
use crate::util::clock;

/// A client's transaction state: the queue while in MULTI, and its watched keys.
#[derive(Default)]
pub struct Tx {
    /// Some between MULTI and EXEC/DISCARD.
    pub queue: Option<Box<Queue>>,
    /// The number of commands EXEC is running right now (CLIENT LIST still shows the client in
    /// MULTI while they run, as Redis does), else 0.
    pub running: usize,
    pub watched: Vec<Watched>,
    /// How many of `watched` have `expired` set: `touch` looks them up only when non-zero.
    expired_watches: usize,
}

impl Tx {
    pub fn in_multi(&self) -> bool {
        self.queue.is_some() || self.running > 0
    }

    /// CLIENT LIST's `multi=`: queued commands, or -1 outside MULTI.
    pub fn multi_count(&self) -> i64 {
        match &self.queue {
            Some(q) => q.cmds.len() as i64,
            None if self.running > 0 => self.running as i64,
            None => -1,
        }
    }

    /// CLIENT LIST's `multi-mem=` as Redis counts it (`mstate.argv_len_sums`): the queued
    /// arguments' bytes and a pointer per argument.
    pub fn multi_mem(&self) -> usize {
        self.queue.as_ref().map_or(0, |q| {
            q.buf.len() + q.spans.len() * std::mem::size_of::<usize>()
        })
    }
}

/// Queued commands: every argument in one buffer, spans into it, and per command its row and spans.
#[derive(Default)]
pub struct Queue {
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
    /// (command row, first span, end span).
    cmds: Vec<(usize, usize, usize)>,
    /// A command was refused while queueing: EXEC answers EXECABORT (Redis's CLIENT_DIRTY_EXEC).
    dirty_exec: bool,
}

impl Queue {
    pub fn len(&self) -> usize {
        self.cmds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cmds.is_empty()
    }

    /// A command was refused while queueing: EXEC must abort.
    pub fn dirty(&self) -> bool {
        self.dirty_exec
    }

    /// The queued commands: each one's table row and arguments.
    pub fn commands(&self) -> impl Iterator<Item = (usize, Args<'_>)> {
        self.cmds
            .iter()
            .map(|&(row, first, end)| (row, Args::new(&self.buf, &self.spans[first..end])))
    }
}

/// One watched key.
pub struct Watched {
    db: usize,
    key: Box<[u8]>,
    /// The key was already expired (but not yet deleted) at WATCH time: its expiry is no change.
    expired: bool,
}

/// WATCH of `key` in database `db` (the client's `c`, slab key `id`), once per key.
pub fn watch_key(events: &mut KeyEvents, d: &Db, db: usize, key: &[u8], id: usize, c: &mut Client) {
    if c.tx.watched.iter().any(|w| w.db == db && &w.key[..] == key) {
        return;
    }
    let (_, expired) = key_state(d, key);
    events.watch(db, key, id);
    c.tx.watched.push(Watched {
        db,
        key: Box::from(key),
        expired,
    });
    if expired {
        c.tx.expired_watches += 1;
    }
}

/// (present in the table, present but expired).
fn key_state(db: &Db, key: &[u8]) -> (bool, bool) {
    match db.dict.find(key) {
        Some(slot) => {
            let at = db.expire_of(slot);
            (true, at != NO_EXPIRE && at <= clock::now_ms())
        }
        None => (false, false),
    }
}

/// Redis's `flagTransaction`: a command was refused while queueing, so EXEC must abort.
pub fn flag(c: &mut Client) {
    if let Some(q) = c.tx.queue.as_mut() {
        q.dirty_exec = true;
    }
}

/// Queues a command that passed the gate's checks, and replies `+QUEUED`.
pub fn queue(ctx: &mut Ctx, row: usize, args: Args) {
    let c = &mut ctx.clients[ctx.id];
    let dirty_cas = c.dirty_cas;
    if let Some(q) = c.tx.queue.as_mut() {
        // An aborted transaction keeps nothing (Redis's queueMultiCommand does the same).
        if !q.dirty_exec && !dirty_cas {
            let first = q.spans.len();
            for a in args.iter() {
                let start = q.buf.len();
                q.buf.extend_from_slice(a);
                q.spans.push((start, q.buf.len()));
            }
            q.cmds.push((row, first, q.spans.len()));
        }
    }
    ctx.out.simple("QUEUED");
}

/// Redis's `touchWatchedKey` for one watching client: marks it dirty, unless it watched the key
/// while already expired and the key is now gone (its lazy deletion is no logical change).
pub fn touch(c: &mut Client, db: usize, key: &[u8], present: bool) {
    if c.tx.expired_watches > 0 && !present {
        if let Some(w) =
            c.tx.watched
                .iter_mut()
                .find(|w| w.expired && w.db == db && &w.key[..] == key)
        {
            w.expired = false;
            c.tx.expired_watches -= 1;
            return;
        }
    }
    c.dirty_cas = true;
}

/// Redis's `touchAllWatchedKeysInDb`: database `emptied` is about to be flushed (`replaced_with`
/// None) or swapped with `replaced_with`. Only watched keys that exist in either database count.
pub fn touch_all_watched(ctx: &mut Ctx, emptied: usize, replaced_with: Option<usize>) {
    let keys: Vec<(Box<[u8]>, Vec<usize>)> = ctx
        .srv
        .key_events
        .waiting
        .iter()
        .filter(|((d, _), w)| *d == emptied && !w.watchers.is_empty())
        .map(|((_, k), w)| (k.clone(), w.watchers.clone()))
        .collect();
    for (key, watchers) in keys {
        let (in_emptied, _) = key_state(&ctx.srv.dbs[emptied], &key);
        let (in_replaced, replaced_expired) = match replaced_with {
            Some(r) => key_state(&ctx.srv.dbs[r], &key),
            None => (false, false),
        };
        if !in_emptied && !in_replaced {
            continue;
        }
        for c in watchers {
            let Some(client) = ctx.clients.get_mut(c) else {
                continue;
            };
            let tx = &mut client.tx;
            let Some(w) = tx
                .watched
                .iter_mut()
                .find(|w| w.db == emptied && w.key == key)
            else {
                continue;
            };
            if w.expired {
                if !in_replaced {
                    // The expired key is deleted: no logical change.
                    w.expired = false;
                    tx.expired_watches -= 1;
                    continue;
                } else if replaced_expired {
                    // Replaced by another expired key.
                    continue;
                }
            } else if !in_emptied && replaced_expired {
                // A missing key is replaced by an expired one.
                w.expired = true;
                tx.expired_watches += 1;
                continue;
            }
            client.dirty_cas = true;
        }
    }
}

/// Forgets every watched key of client `id` (Redis's `unwatchAllKeys`).
pub fn unwatch_all(events: &mut KeyEvents, id: usize, tx: &mut Tx) {
    for w in tx.watched.drain(..) {
        events.unwatch(w.db, &w.key, id);
    }
    tx.expired_watches = 0;
}

/// Leaves MULTI and unwatches (Redis's `discardTransaction`); also used by RESET and disconnection.
pub fn discard_transaction(events: &mut KeyEvents, id: usize, c: &mut Client) {
    c.tx.queue = None;
    c.dirty_cas = false;
    unwatch_all(events, id, &mut c.tx);
}

/// Redis's `isWatchedKeyExpired`: a key not expired at WATCH time is now expired (but not yet
/// reclaimed: as in Redis 7.0, deleting an expired key is no change for its watchers).
pub fn watched_key_expired(dbs: &[Db], tx: &Tx) -> bool {
    tx.watched
        .iter()
        .any(|w| !w.expired && key_state(&dbs[w.db], &w.key).1)
}
