//! Key-change signals (Redis's `signalModifiedKey`, `signalKeyAsReady`, `touchAllWatchedKeysInDb`).
//!
//! Every handler that changes a key calls `Ctx::signal_modified(key)` once per changed key (and
//! `Ctx::signal_flushed(db)` when a whole database changes at once). Two kinds of clients wait on keys
//! and register here: clients that WATCH a key (their next EXEC fails once it changes: the client's
//! `dirty_cas` flag) and clients blocked on a key (BLPOP, BZPOPMIN, ...: the key is queued in `ready`
//! and the blocked clients are retried after the command that changed it).
//!
//! The map is empty unless some client waits, so a write pays one `is_empty` check. Blocked clients
//! are registered and served by `server::blocking` (`Ctx::block_on`, `serve_ready`).

use std::collections::{HashMap, VecDeque};

/// The clients waiting on one key, by slab key.
#[derive(Default)]
pub struct Waiters {
    /// Clients that WATCH the key.
    pub watchers: Vec<usize>,
    /// Clients blocked on the key, longest-waiting first (Redis serves them FIFO).
    pub blocked: VecDeque<usize>,
}

impl Waiters {
    fn is_empty(&self) -> bool {
        self.watchers.is_empty() && self.blocked.is_empty()
    }
}

#[derive(Default)]
pub struct KeyEvents {
    /// (db, key) → its waiters. Entries are removed as soon as nobody waits.
    pub waiting: HashMap<(usize, Box<[u8]>), Waiters>,
    /// Keys with blocked clients that changed during the current command, to serve after it.
    pub ready: Vec<(usize, Box<[u8]>)>,
}

impl KeyEvents {
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The waiters of a key, if any.
    pub fn get(&self, db: usize, key: &[u8]) -> Option<&Waiters> {
        if self.waiting.is_empty() {
            return None;
        }
        self.waiting.get(&(db, Box::from(key)))
    }

    /// The waiters of a key, created on first use.
    pub fn entry(&mut self, db: usize, key: &[u8]) -> &mut Waiters {
        self.waiting.entry((db, Box::from(key))).or_default()
    }

    /// Registers `client` as a WATCHer of `key` (the caller makes sure it is not already).
    pub fn watch(&mut self, db: usize, key: &[u8], client: usize) {
        self.entry(db, key).watchers.push(client);
    }

    /// Drops `client` from a key's WATCHers, forgetting the key once nobody waits.
    pub fn unwatch(&mut self, db: usize, key: &[u8], client: usize) {
        let k = (db, Box::from(key));
        if let Some(w) = self.waiting.get_mut(&k) {
            w.watchers.retain(|&c| c != client);
            if w.is_empty() {
                self.waiting.remove(&k);
            }
        }
    }

    /// Drops `client` from a key's waiters (both kinds), forgetting the key once nobody waits.
    pub fn forget(&mut self, db: usize, key: &[u8], client: usize) {
        let k = (db, Box::from(key));
        if let Some(w) = self.waiting.get_mut(&k) {
            w.watchers.retain(|&c| c != client);
            w.blocked.retain(|&c| c != client);
            if w.is_empty() {
                self.waiting.remove(&k);
            }
        }
    }

    /// Drops a blocked `client` from a key's wait list (WATCHes stay), forgetting the key once
    /// nobody waits.
    pub fn forget_blocked(&mut self, db: usize, key: &[u8], client: usize) {
        let k = (db, Box::from(key));
        if let Some(w) = self.waiting.get_mut(&k) {
            w.blocked.retain(|&c| c != client);
            if w.is_empty() {
                self.waiting.remove(&k);
            }
        }
    }

    /// Records that `key` changed; returns the clients watching it (the caller marks them dirty).
    /// A key with blocked clients is queued in `ready` once per command.
    pub fn modified(&mut self, db: usize, key: &[u8]) -> &[usize] {
        let Some(w) = self.waiting.get(&(db, Box::from(key))) else {
            return &[];
        };
        if !w.blocked.is_empty() && !self.ready.iter().any(|(d, k)| *d == db && &k[..] == key) {
            self.ready.push((db, Box::from(key)));
        }
        &w.watchers
    }
}
