//! What a command handler works with: `Ctx` (the server's state, the clients, the caller and its
//! reply) and `CmdResult`. The kernel's side of a handler call: every family in `cmd/` and the
//! script layer call commands through it.

use std::borrow::Cow;

use slab::Slab;

use crate::resp::reply::Reply;
use crate::server::client::Client;
use crate::server::multi;
use crate::server::State;
use crate::store::Db;

/// An error reply a handler returns; the text starts with its code (`ERR ...`, `WRONGTYPE ...`).
#[derive(Debug)]
pub struct CmdError(pub Cow<'static, str>);

impl From<&'static str> for CmdError {
    fn from(s: &'static str) -> Self {
        CmdError(Cow::Borrowed(s))
    }
}

impl From<String> for CmdError {
    fn from(s: String) -> Self {
        CmdError(Cow::Owned(s))
    }
}

pub type CmdResult = Result<(), CmdError>;

/// An `ERR`-coded error from formatted text.
pub fn err(msg: impl std::fmt::Display) -> CmdError {
    CmdError(Cow::Owned(format!("ERR {msg}")))
}

/// What a command runs with: the server state, every client (the caller's reply buffer is `out`),
/// and the caller's selected database.
pub struct Ctx<'a> {
    pub srv: &'a mut State,
    pub clients: &'a mut Slab<Client>,
    /// The calling client's slab key.
    pub id: usize,
    /// The calling client's selected database.
    pub db: usize,
    pub out: &'a mut Reply,
    /// The event loop, lent to commands run from a client's input so a long script can keep
    /// serving others (`server::Io::busy_turn`); `None` for commands run by the server itself
    /// (served blocked clients, a script's own calls).
    pub reactor: Option<&'a mut crate::server::Reactor>,
}

impl Ctx<'_> {
    pub fn db(&mut self) -> &mut Db {
        &mut self.srv.dbs[self.db]
    }

    pub fn client(&mut self) -> &mut Client {
        &mut self.clients[self.id]
    }

    /// Marks argument `i` of the running command as a secret (a password) that the slow log and
    /// monitors must not show (Redis's `redactClientCommandArgument`). Handlers call it as they
    /// read the argument, so a line refused before that point is shown as it came.
    pub fn redact(&mut self, i: usize) {
        self.clients[self.id].redacted.push(i);
    }

    /// The running command, if it changes the dataset, propagates (to the AOF) as `args` instead
    /// of itself: an equivalent that replays the same (SET EX as SET PXAT, INCRBYFLOAT as SET;
    /// Redis's `rewriteClientCommandVector`). See `server::propagate`.
    pub fn propagate_as(&mut self, args: &[&[u8]]) {
        crate::server::propagate::rewrite(self.srv, args);
    }

    /// The running command propagates `args`, run in the selected database, and not itself; call
    /// it once for each op (SPOP's SREMs; Redis's `alsoPropagate` with
    /// `preventCommandPropagation`).
    pub fn propagate(&mut self, args: &[&[u8]]) {
        crate::server::propagate::op(self.srv, self.db, args);
    }

    /// The running command does not propagate its own line, whatever it changed: its handler
    /// propagated what it did with `propagate`, or what it changed needs no replay (XREADGROUP's
    /// delivery counts; Redis's `preventCommandPropagation`).
    pub fn prevent_propagation(&mut self) {
        crate::server::propagate::prevent(self.srv);
    }

    /// The running command propagates even if it changed nothing (FLUSHALL; Redis's
    /// `forceCommandPropagation`).
    pub fn force_propagation(&mut self) {
        crate::server::propagate::force(self.srv);
    }

    /// Redis's `signalModifiedKey`: every handler calls this once for each key of the selected
    /// database it changed (written, deleted, expiry set or cleared). It fails the WATCHers' next EXEC,
    /// wakes clients blocked on the key and invalidates it for tracking clients.
    pub fn signal_modified(&mut self, key: &[u8]) {
        self.signal_modified_in(self.db, key);
    }

    /// What a store command (SINTERSTORE, ZRANGESTORE, BITOP, SORT ... STORE) does with its result:
    /// `Some(value)` replaces `dst` (without a TTL), notified as `event` of `class`, counting
    /// `changes` in `dirty`; `None` (an empty result) deletes `dst` if it is stored, even expired
    /// (Redis's `dbDelete`), notified as `del`.
    pub fn store_result(
        &mut self,
        dst: &[u8],
        value: Option<crate::store::Value>,
        class: u32,
        event: &str,
        changes: u64,
    ) {
        let db = &mut self.srv.dbs[self.db];
        match value {
            Some(v) => {
                db.set(dst, v, Some(crate::store::NO_EXPIRE));
                self.signal_modified(dst);
                self.notify(class, event, dst);
                self.srv.dirty += changes;
            }
            None => {
                if db.server_delete(dst) {
                    self.signal_modified(dst);
                    self.notify(crate::server::notify::GENERIC, "del", dst);
                    self.srv.dirty += 1;
                }
            }
        }
    }

    /// Wakes the clients blocked on `key` without touching its WATCHers (Redis's
    /// `signalKeyAsReady` alone: XGROUP DESTROY releases the group's blocked readers).
    pub fn signal_ready(&mut self, key: &[u8]) {
        if !self.srv.key_events.is_empty() {
            self.srv.key_events.modified(self.db, key);
        }
    }

    /// `signal_modified` for a key of another database (MOVE, COPY ... DB, SWAPDB).
    pub fn signal_modified_in(&mut self, db: usize, key: &[u8]) {
        self.signal_changed(db, key, true);
    }

    /// `signal_modified_in` for a key the server itself removed (expiry, eviction: Redis's
    /// `signalModifiedKey(NULL, ...)`), which a NOLOOP BCAST client is told about even when its
    /// own command expired the key.
    pub fn signal_removed_in(&mut self, db: usize, key: &[u8]) {
        self.signal_changed(db, key, false);
    }

    fn signal_changed(&mut self, db: usize, key: &[u8], by_client: bool) {
        if self.srv.tracking.watching() {
            crate::server::tracking::invalidate(self, key, by_client, true);
        }
        if self.srv.key_events.is_empty() {
            return;
        }
        let present = self.srv.dbs[db].dict.find(key).is_some();
        for &c in self.srv.key_events.modified(db, key) {
            if let Some(client) = self.clients.get_mut(c) {
                multi::touch(client, db, key, present);
            }
        }
    }

    /// Database `db` is about to be emptied (FLUSHDB: call before clearing it). Watchers of keys
    /// that exist in it fail their EXEC, as Redis's `touchAllWatchedKeysInDb`; keys with blocked
    /// clients are queued to be served; tracking clients are told every key changed.
    pub fn signal_flushed(&mut self, db: usize) {
        self.signal_flushed_db(db);
        crate::server::tracking::invalidate_all(self);
    }

    /// `signal_flushed` for every database at once (FLUSHALL, DEBUG RELOAD: tracking clients are
    /// told once, as Redis's `signalFlushedDb(-1)`).
    pub fn signal_flushed_all(&mut self) {
        for db in 0..self.srv.dbs.len() {
            self.signal_flushed_db(db);
        }
        crate::server::tracking::invalidate_all(self);
    }

    fn signal_flushed_db(&mut self, db: usize) {
        if self.srv.key_events.is_empty() {
            return;
        }
        multi::touch_all_watched(self, db, None);
        self.signal_blocked_in(db);
    }

    /// Databases `a` and `b` traded contents (SWAPDB; before or after the swap, it is symmetric): a
    /// watched key of either fails its watchers' EXEC if it exists in either database.
    pub fn signal_swapped(&mut self, a: usize, b: usize) {
        if self.srv.key_events.is_empty() {
            return;
        }
        multi::touch_all_watched(self, a, Some(b));
        multi::touch_all_watched(self, b, Some(a));
        self.signal_blocked_in(a);
        self.signal_blocked_in(b);
    }

    /// Queues every key of `db` that blocked clients wait on.
    fn signal_blocked_in(&mut self, db: usize) {
        let keys: Vec<Box<[u8]>> = self
            .srv
            .key_events
            .waiting
            .iter()
            .filter(|((d, _), w)| *d == db && !w.blocked.is_empty())
            .map(|((_, k), _)| k.clone())
            .collect();
        for k in keys {
            self.srv.key_events.modified(db, &k);
        }
    }
}
