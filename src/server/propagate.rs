//! Propagation: the one path by which a change to the dataset reaches the AOF (and, once
//! replication lands, the replicas), as Redis's `call` / `alsoPropagate` /
//! `propagatePendingCommands`.
//!
//! The gate opens a frame around every command (`enter`, `leave`). A command that changed the
//! dataset (`State::dirty` moved, or it forced it: FLUSHALL) propagates its own line, unless its
//! handler said otherwise: `Ctx::propagate_as` replaces the line by an equivalent one (SET EX →
//! SET PXAT, INCRBYFLOAT → SET, GEOADD → ZADD: Redis's `rewriteClientCommandVector`), and
//! `Ctx::propagate` hands on ops of its own instead (SPOP's SREMs, a served BLPOP's LPOP: Redis's
//! `alsoPropagate` with `preventCommandPropagation`). A command that ran commands (EVAL, EXEC,
//! FCALL) propagates their effects, not itself. Keys expired or evicted on the way propagate as
//! DEL (UNLINK with lazy freeing), before the op that found them.
//!
//! When the outermost command ends, its ops go to the sink together, wrapped in MULTI/EXEC when
//! there are several (`commit`). Nothing is collected while no sink wants it.

use crate::persist::aof;
use crate::resp::{self, parser::Args};
use crate::server::State;

#[derive(Default)]
pub struct Propagation {
    /// The ops of the command tree running now, with their databases.
    pending: Vec<(usize, Vec<u8>)>,
    /// Commands running now (nested: EXEC and scripts call commands).
    depth: u32,
    /// Commands called so far, to tell whether a command ran others.
    calls: u64,
    /// What the running command's handler decided (see `Frame`).
    current: Decision,
}

/// How the running command propagates, as its handler decided.
#[derive(Default)]
struct Decision {
    /// `Ctx::propagate_as`: this line instead of its own.
    rewritten: Option<Vec<u8>>,
    /// `Ctx::propagate` was called: its ops are pending already, its own line is not wanted.
    own_ops: bool,
    /// `Ctx::force_propagation`: propagated even though `dirty` did not move.
    forced: bool,
}

/// What `enter` saw, for `leave`: the outer command's decision is kept here meanwhile.
pub struct Frame {
    dirty: u64,
    calls: u64,
    outer: Decision,
}

/// Whether a sink takes propagated commands now: the AOF is recording.
pub fn wanted(srv: &State) -> bool {
    srv.persist.aof.recording() || crate::server::primary::streaming(srv)
}

/// Called by the gate before a handler runs: `None` when nothing is collected.
pub fn enter(srv: &mut State) -> Option<Frame> {
    if !wanted(srv) {
        return None;
    }
    let p = &mut srv.propagation;
    p.depth += 1;
    p.calls += 1;
    Some(Frame {
        dirty: srv.dirty,
        calls: p.calls,
        outer: std::mem::take(&mut p.current),
    })
}

/// Called by the gate after the handler of `args` ran in database `db`: adds the keys it expired
/// and its effect; when the outermost command ends, commits the ops.
pub fn leave(srv: &mut State, db: usize, args: Args, frame: Frame) {
    let ran_others = srv.propagation.calls > frame.calls;
    let decision = std::mem::replace(&mut srv.propagation.current, frame.outer);
    srv.propagation.depth -= 1;
    log_expired(srv);
    let changed = srv.dirty > frame.dirty || decision.forced;
    if changed && !ran_others && !decision.own_ops {
        let op = decision
            .rewritten
            .unwrap_or_else(|| resp::command_from(args.len(), args.iter()));
        srv.propagation.pending.push((db, op));
    }
    if srv.propagation.depth == 0 {
        commit(srv);
    }
}

/// `Ctx::propagate_as`: if the running command changes the dataset, it propagates as `args`.
pub fn rewrite(srv: &mut State, args: &[&[u8]]) {
    if wanted(srv) {
        srv.propagation.current.rewritten = Some(resp::command(args));
    }
}

/// `Ctx::propagate`: the running command hands on `args` (run in `db`), and not its own line.
pub fn op(srv: &mut State, db: usize, args: &[&[u8]]) {
    if !wanted(srv) {
        return;
    }
    // Keys its lookups expired first: their deletion came before this op.
    log_expired(srv);
    let p = &mut srv.propagation;
    p.current.own_ops = true;
    p.pending.push((db, resp::command(args)));
}

/// `Ctx::prevent_propagation`: the running command's own line is not propagated.
pub fn prevent(srv: &mut State) {
    if wanted(srv) {
        srv.propagation.current.own_ops = true;
    }
}

/// `Ctx::force_propagation`: the running command propagates even if `dirty` did not move.
pub fn force(srv: &mut State) {
    if wanted(srv) {
        srv.propagation.current.forced = true;
    }
}

/// A key evicted for `maxmemory`: DEL (UNLINK with `lazyfree-lazy-eviction`), committed at once
/// when no command runs (Redis's `propagateDeletion`).
pub fn evicted(srv: &mut State, db: usize, key: &[u8]) {
    if !wanted(srv) {
        return;
    }
    let verb: &[u8] = if srv.config.lazyfree_lazy_eviction {
        b"UNLINK"
    } else {
        b"DEL"
    };
    srv.propagation
        .pending
        .push((db, resp::command(&[verb, key])));
    if srv.propagation.depth == 0 {
        commit(srv);
    }
}

/// Keys expired outside any command (active expiry, between turns): each DEL on its own.
pub fn expired_between_commands(srv: &mut State) {
    if srv.propagation.depth > 0 || !wanted(srv) {
        return;
    }
    log_expired(srv);
    for op in std::mem::take(&mut srv.propagation.pending) {
        aof::append(&mut srv.persist.aof, std::slice::from_ref(&op));
        if srv.repl.master.is_none() {
            crate::server::primary::feed(srv, std::slice::from_ref(&op));
        }
    }
}

/// Moves the keys expired since last asked to the pending ops as DEL (UNLINK with
/// `lazyfree-lazy-expire`).
fn log_expired(srv: &mut State) {
    let verb: &[u8] = if srv.config.lazyfree_lazy_expire {
        b"UNLINK"
    } else {
        b"DEL"
    };
    for (i, db) in srv.dbs.iter_mut().enumerate() {
        for key in db.expired_log.drain(..) {
            srv.propagation
                .pending
                .push((i, resp::command(&[verb, &key])));
        }
    }
}

/// Hands the pending ops to the sink: MULTI/EXEC around more than one (Redis 7.0's
/// `propagatePendingCommands`).
fn commit(srv: &mut State) {
    if srv.propagation.pending.is_empty() {
        return;
    }
    let mut ops = std::mem::take(&mut srv.propagation.pending);
    aof::append(&mut srv.persist.aof, &ops);
    // A replica's own replicas get its primary's stream as it came (`primary::relay`).
    if srv.repl.master.is_none() {
        crate::server::primary::feed(srv, &ops);
    }
    ops.clear();
    srv.propagation.pending = ops;
}
