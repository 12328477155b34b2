//! Blocking operations (Redis's blocked.c): BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP now, the
//! sorted-set BZPOPMIN, BZPOPMAX, BZMPOP and the stream XREAD through the same entry points.
//!
//! # How a command blocks
//! A blocking handler first tries to serve from its keys. When none can serve, it calls
//! `ctx.block_on(args, keys, timeout_ms, wait)`:
//! - with `deny_blocking` set (inside EXEC or a script) the `wait.denied` null is replied at once,
//!   as if the timeout had passed;
//! - otherwise the client is blocked: its command (the arguments, owned), keys, database and deadline
//!   are kept in `Client::blocked`, it is queued FIFO on each key in `key_events`, and its deadline goes
//!   into the timer set. Its query input is not processed while it is blocked (a pipeline behind the
//!   blocking command waits).
//!
//! # How it is served (Redis 7's design: re-execution)
//! A write to a key calls `Ctx::signal_modified`, which queues the key in `key_events.ready` when
//! clients are blocked on it. After each top-level command the server calls `serve_ready`: for each
//! ready key, the clients blocked on it, longest-waiting first, have their command re-executed through
//! the dispatch gate while the key exists with the type they wait for (`wait.type_name`). During a
//! re-execution `ctx.serving(key)` is true only for the ready key, so the handler serves from that key
//! (as Redis 7.0 serves the key that became ready, not the first of the command's keys). A handler
//! that still cannot serve calls `block_on` again, which keeps the client blocked with its original
//! place and deadline. A served client's pending input is processed later in the same loop turn.
//! Writes made by re-executed commands (BLMOVE's push) queue more ready keys, served in turn (chains).
//!
//! # Timeouts and unblocking
//! `handle_timeouts` (every loop turn; the poll timeout is shortened to `next_timeout`) replies the
//! `wait.on_timeout` null to clients past their deadline. `unblock_by_request` is CLIENT UNBLOCK.
//! `unblock` removes a client from every wait list and the timer set (also on disconnect).
//!
//! # For a sorted-set blocking command
//! Parse the timeout with `parse::timeout`, try each key with `ctx.serving(key)` as a filter (WRONGTYPE
//! for a key of another type, as Redis), and when nothing is served call
//! `ctx.block_on(args, &keys, timeout, wait)` with
//! `Wait { type_name: "zset", on_timeout: TimeoutReply::NullArray, denied: TimeoutReply::NullArray }`.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use slab::Slab;

use crate::resp::parser::Args;
use crate::server::client::Client;
use crate::server::ctx::{CmdResult, Ctx};
use crate::server::{gate, State};
use crate::util::clock;

/// What a blocking command replies when it gives up waiting.
#[derive(Clone, Copy, PartialEq)]
pub enum TimeoutReply {
    /// `$-1` / `_` (BLMOVE and BRPOPLPUSH when they may not block).
    Null,
    /// `*-1` / `_` (every timed-out list or sorted-set wait, as Redis 7.0's
    /// `replyToBlockedClientTimedOut`, BLMOVE included).
    NullArray,
    /// `:0`: WAIT's count of replicas that acknowledged (there are none).
    Zero,
    /// WAIT's count of the replicas that acknowledged the client's last write by then.
    Acks,
}

/// What a blocked command waits for.
#[derive(Clone, Copy)]
pub struct Wait {
    /// The key type that can serve it (`Value::type_name`): "list", "zset"; none for WAIT.
    pub type_name: &'static str,
    /// After the timeout or CLIENT UNBLOCK ... TIMEOUT.
    pub on_timeout: TimeoutReply,
    /// At once, when the client may not block (`deny_blocking`).
    pub denied: TimeoutReply,
    /// The error replied when the key is deleted or replaced by another type while the client
    /// waits (XREADGROUP's, whose group went with the key); `None` keeps waiting.
    pub gone: Option<&'static str>,
}

/// A blocked client's command and what it waits on.
pub struct Blocked {
    pub db: usize,
    /// The distinct keys waited on, in command order.
    pub keys: Vec<Box<[u8]>>,
    deadline_us: Option<u64>,
    wait: Wait,
    /// The command's arguments, owned: `spans` index into `argv`.
    argv: Vec<u8>,
    spans: Vec<(usize, usize)>,
    /// Distinguishes this block's timer entry from any earlier one of the same client.
    seq: u64,
}

impl Blocked {
    /// The length of the command's arguments (CLIENT LIST's `argv-mem`: Redis keeps a blocked
    /// client's arguments).
    pub fn argv_len(&self) -> usize {
        self.argv.len()
    }

    /// A blocked WAIT's `numreplicas`; `None` for any other command.
    pub fn numreplicas(&self) -> Option<i64> {
        if self.wait.on_timeout != TimeoutReply::Acks {
            return None;
        }
        let (s, e) = *self.spans.get(1)?;
        crate::util::parse_i64(&self.argv[s..e])
    }

    /// Whether this is a WAIT for replicas' ACKs.
    pub fn waits_for_acks(&self) -> bool {
        self.wait.on_timeout == TimeoutReply::Acks
    }
}

#[derive(Default)]
pub struct Blocking {
    /// (deadline in monotonic µs, block seq, client): the blocked clients that have a timeout.
    timers: BTreeSet<(u64, u64, usize)>,
    next_seq: u64,
    /// How many clients are blocked (INFO's `blocked_clients`).
    pub blocked_clients: usize,
    /// Clients unblocked this loop turn, whose pending input the server processes next.
    pub unblocked: Vec<usize>,
    /// While a blocked command is re-executed: the (db, key) being served.
    serving: Option<(usize, Box<[u8]>)>,
    /// Set by `block_on` during a re-execution that could not serve.
    keep_blocked: bool,
}

impl Blocking {
    /// Blocked clients with a timeout (INFO's `clients_in_timeout_table`).
    pub fn in_timeout_table(&self) -> usize {
        self.timers.len()
    }

    /// Time until the nearest blocked client's deadline, for the event loop's poll timeout.
    pub fn next_timeout(&self) -> Option<Duration> {
        let &(deadline, _, _) = self.timers.first()?;
        Some(Duration::from_micros(
            deadline.saturating_sub(clock::monotonic_us()),
        ))
    }

    /// True while the command now running was blocked by it (counted once it is served instead).
    pub fn keeps_blocked(&self) -> bool {
        self.keep_blocked
    }

    /// True while a blocked client's command runs again because a key it waits on is ready.
    pub fn reprocessing(&self) -> bool {
        self.serving.is_some()
    }
}

impl Ctx<'_> {
    /// False while a blocked command is re-executed for a different key than `key`: a blocking handler
    /// skips such keys, so it serves from the key that became ready.
    pub fn serving(&self, key: &[u8]) -> bool {
        self.srv
            .blocking
            .serving
            .as_ref()
            .is_none_or(|(_, k)| &k[..] == key)
    }

    /// Blocks the calling client on `keys` until one can serve it or `timeout_ms` passes (0: forever).
    /// The handler calls this, after replying nothing, when none of its keys can serve it now.
    pub fn block_on(
        &mut self,
        args: Args,
        keys: &[&[u8]],
        timeout_ms: u64,
        wait: Wait,
    ) -> CmdResult {
        let b = &mut self.srv.blocking;
        if b.serving.is_some() {
            // A re-execution that still cannot serve: stay blocked, keeping place and deadline.
            b.keep_blocked = true;
            return Ok(());
        }
        if self.clients[self.id].deny_blocking {
            reply_timeout(self.out, wait.denied);
            return Ok(());
        }
        let seq = b.next_seq;
        b.next_seq += 1;
        let deadline_us = (timeout_ms > 0)
            .then(|| clock::monotonic_us().saturating_add(timeout_ms.saturating_mul(1000)));
        if let Some(d) = deadline_us {
            b.timers.insert((d, seq, self.id));
        }
        b.blocked_clients += 1;
        let mut seen = HashSet::with_capacity(keys.len());
        let mut distinct = Vec::with_capacity(keys.len());
        for &k in keys {
            if seen.insert(k) {
                self.srv
                    .key_events
                    .entry(self.db, k)
                    .blocked
                    .push_back(self.id);
                distinct.push(Box::from(k));
            }
        }
        let mut argv = Vec::new();
        let mut spans = Vec::with_capacity(args.len());
        for a in args.iter() {
            let start = argv.len();
            argv.extend_from_slice(a);
            spans.push((start, argv.len()));
        }
        self.clients[self.id].blocked = Some(Box::new(Blocked {
            db: self.db,
            keys: distinct,
            deadline_us,
            wait,
            argv,
            spans,
            seq,
        }));
        Ok(())
    }
}

fn reply_timeout(out: &mut crate::resp::reply::Reply, kind: TimeoutReply) {
    match kind {
        TimeoutReply::Null => out.null(),
        TimeoutReply::NullArray => out.null_array(),
        TimeoutReply::Zero => out.int(0),
        // Counted by the caller, which sees the replicas (`handle_timeouts`, `answer`).
        TimeoutReply::Acks => {}
    }
}

/// Ends a WAIT with its count of replicas (Redis's `processClientsWaitingReplicas`).
pub fn answer(srv: &mut State, clients: &mut Slab<Client>, id: usize, acks: i64) {
    let c = &mut clients[id];
    c.out.int(acks);
    count_call(srv, c, false);
    unblock(srv, clients, id);
}

/// Serves the clients blocked on the keys that became ready, FIFO per key, until no key is ready
/// (a served BLMOVE may make its destination ready). Called after each top-level command.
pub fn serve_ready(srv: &mut State, clients: &mut Slab<Client>) {
    while !srv.key_events.ready.is_empty() {
        for (db, key) in std::mem::take(&mut srv.key_events.ready) {
            let queue: Vec<usize> = match srv.key_events.get(db, &key) {
                Some(w) => w.blocked.iter().copied().collect(),
                None => continue,
            };
            for id in queue {
                let Some(wait) = clients
                    .get(id)
                    .and_then(|c| c.blocked.as_ref())
                    .map(|b| b.wait)
                else {
                    continue;
                };
                let d = &mut srv.dbs[db];
                let type_name = d
                    .find_live(&key)
                    .map(|slot| d.dict.value_at(slot).val.type_name());
                // Redis 7.0 only serves clients waiting for the key's type; others keep waiting,
                // unless what they wait on went with the key (`unblockDeletedStreamReadgroupClients`).
                if type_name == Some(wait.type_name) {
                    reexecute(srv, clients, id, db, &key);
                } else if let Some(error) = wait.gone {
                    let c = &mut clients[id];
                    c.out.error(error);
                    count_call(srv, c, true);
                    unblock(srv, clients, id);
                }
            }
        }
    }
}

/// Runs a blocked client's command again, for the ready `key`; unblocks it unless it blocks again.
fn reexecute(srv: &mut State, clients: &mut Slab<Client>, id: usize, db: usize, key: &[u8]) {
    let Some(b) = clients[id].blocked.take() else {
        return;
    };
    let mut out = std::mem::take(&mut clients[id].out);
    srv.blocking.serving = Some((db, Box::from(key)));
    srv.blocking.keep_blocked = false;
    {
        let args = Args::new(&b.argv, &b.spans);
        let mut ctx = Ctx {
            srv,
            clients,
            id,
            db: b.db,
            out: &mut out,
            reactor: None,
        };
        gate::execute(&mut ctx, args);
    }
    srv.blocking.serving = None;
    let keep = std::mem::take(&mut srv.blocking.keep_blocked);
    clients[id].out = out;
    clients[id].blocked = Some(b);
    if !keep {
        unblock(srv, clients, id);
    }
}

/// Replies the timeout null to every blocked client whose deadline has passed, and unblocks it.
pub fn handle_timeouts(srv: &mut State, clients: &mut Slab<Client>) {
    if srv.blocking.timers.is_empty() {
        return;
    }
    let now = clock::monotonic_us();
    while let Some(&(deadline, seq, id)) = srv.blocking.timers.first() {
        if deadline > now {
            break;
        }
        srv.blocking.timers.remove(&(deadline, seq, id));
        let acks = clients
            .get(id)
            .map(|c| crate::server::primary::count_acks(srv, clients, c.woff));
        if let Some(c) = clients.get_mut(id) {
            if let Some(b) = &c.blocked {
                if b.wait.on_timeout == TimeoutReply::Acks {
                    c.out.int(acks.unwrap_or(0));
                } else {
                    reply_timeout(&mut c.out, b.wait.on_timeout);
                }
                count_call(srv, c, false);
                unblock(srv, clients, id);
            }
        }
    }
}

/// CLIENT UNBLOCK: unblocks `id` if it is blocked, replying the timeout null, or with `error` the
/// `-UNBLOCKED` error. False if the client is not blocked.
pub fn unblock_by_request(
    srv: &mut State,
    clients: &mut Slab<Client>,
    id: usize,
    error: bool,
) -> bool {
    let acks = clients
        .get(id)
        .map(|c| crate::server::primary::count_acks(srv, clients, c.woff));
    let Some(c) = clients.get_mut(id) else {
        return false;
    };
    let Some(b) = &c.blocked else {
        return false;
    };
    if error {
        c.out.error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
    } else if b.wait.on_timeout == TimeoutReply::Acks {
        c.out.int(acks.unwrap_or(0));
    } else {
        reply_timeout(&mut c.out, b.wait.on_timeout);
    }
    end_unserved(srv, clients, id, error);
    true
}

/// Ends every block with `error`, and the clients' connections after it (Redis's
/// `disconnectAllBlockedClients`, when a primary becomes a replica): what they waited for can no
/// longer come from their writes.
pub fn unblock_all_with_error(srv: &mut State, clients: &mut Slab<Client>, error: &str) {
    let blocked: Vec<usize> = clients
        .iter()
        .filter(|(_, c)| c.blocked.is_some())
        .map(|(k, _)| k)
        .collect();
    for id in blocked {
        let c = &mut clients[id];
        c.out.error(error);
        c.close_after_reply = true;
        end_unserved(srv, clients, id, true);
    }
}

/// The accounting of a block that ended without being served, and its end.
fn end_unserved(srv: &mut State, clients: &mut Slab<Client>, id: usize, failed: bool) {
    let c = &clients[id];
    count_call(srv, c, failed);
    crate::server::slowlog::record_unblocked(srv, c);
    unblock(srv, clients, id);
}

/// A command that blocked counts in commandstats when it ends unserved (timeout, CLIENT UNBLOCK), as
/// Redis's `updateStatsOnUnblock` (failed when it ended with an error); a served one is counted by
/// the gate when re-executed.
fn count_call(srv: &mut State, c: &Client, failed: bool) {
    let Some(b) = &c.blocked else { return };
    let (s, e) = b.spans[0];
    if let Some(idx) = srv.table.find(&b.argv[s..e]) {
        srv.table.stats[idx].calls += 1;
        srv.table.stats[idx].failed += failed as u64;
    }
}

/// Ends a client's block: off every key's wait list and the timer set; its pending input is
/// processed next. Also called when a blocked client disconnects.
pub fn unblock(srv: &mut State, clients: &mut Slab<Client>, id: usize) {
    let Some(b) = clients.get_mut(id).and_then(|c| c.blocked.take()) else {
        return;
    };
    for k in &b.keys {
        srv.key_events.forget_blocked(b.db, k, id);
    }
    if let Some(d) = b.deadline_us {
        srv.blocking.timers.remove(&(d, b.seq, id));
    }
    srv.blocking.blocked_clients -= 1;
    srv.blocking.unblocked.push(id);
}
