//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH (Redis's multi.c).
//!
//! Inside MULTI the gate checks each command (lookup, arity, auth, NO_MULTI) and, instead of running
//! it, hands it to `queue`: the arguments are copied into the client's `Queue` and `+QUEUED` is
//! replied. A command refused at queue time flags the transaction (`flag`), and EXEC then answers
//! EXECABORT. EXEC runs the queued commands through the gate's `call` (the handler plus accounting,
//! without the checks already made), with `deny_blocking` set so blocking commands answer at once.
//!
//! WATCH registers the client on the key in `key_events`; `Ctx::signal_modified` then sets the
//! client's `dirty_cas` (`touch`), FLUSHDB/FLUSHALL/SWAPDB go through `touch_all_watched` (Redis's
//! `touchAllWatchedKeysInDb`), and EXEC also fails if a watched key expired since WATCH
//! (`isWatchedKeyExpired`). EXEC, DISCARD, RESET and disconnection unwatch everything.

use super::keyspec::RO;
use super::{
    Args, CmdResult, Command, Ctx, ALLOW_BUSY, FAST, LOADING, MULTI_OOM_OK, NOSCRIPT, NO_QUEUE,
    RUNS_QUEUE, STALE,
};
use crate::server::acl::Denied;
use crate::server::gate;
use crate::server::multi::{discard_transaction, unwatch_all, watch_key, watched_key_expired};

const GROUP: &str = "transactions";

/// MULTI
///
/// # Format
/// `MULTI` — `+OK`; later commands are queued until EXEC or DISCARD.
fn multi(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let c = ctx.client();
    if c.tx.in_multi() {
        return Err("ERR MULTI calls can not be nested".into());
    }
    c.tx.queue = Some(Box::default());
    ctx.out.ok();
    Ok(())
}

/// EXEC
///
/// # Format
/// `EXEC` — an array of the queued commands' replies; a null array if a watched key changed;
/// `-EXECABORT` if a command was refused while queueing.
fn exec(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let id = ctx.id;
    let c = &mut ctx.clients[id];
    let Some(queue) = c.tx.queue.take() else {
        return Err("ERR EXEC without MULTI".into());
    };
    if watched_key_expired(&ctx.srv.dbs, &c.tx) {
        c.dirty_cas = true;
    }
    if queue.dirty() || c.dirty_cas {
        discard_transaction(&mut ctx.srv.key_events, id, c);
        if queue.dirty() {
            return Err("EXECABORT Transaction discarded because of previous errors.".into());
        }
        ctx.out.null_array();
        return Ok(());
    }
    unwatch_all(&mut ctx.srv.key_events, id, &mut c.tx);
    let deny_before = c.deny_blocking;
    c.deny_blocking = true;
    c.tx.running = queue.len().max(1);
    ctx.out.array(queue.len());
    for (row, args) in queue.commands() {
        // The ACLs may have changed since the command was queued: checked again (Redis's
        // `execCommand`).
        if let Err(why) = gate::acl_check(ctx, row, args, "multi") {
            let reason = match why {
                Denied::Command => "no permission to execute the command or subcommand",
                Denied::Key => "no permission to touch the specified keys",
                Denied::Channel => "no permission to access one of the channels used as arguments",
                Denied::Auth => "no permission",
            };
            ctx.out.error(&format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}"));
            continue;
        }
        gate::call(ctx, row, args);
    }
    if let Some(c) = ctx.clients.get_mut(id) {
        c.deny_blocking = deny_before;
        c.tx.running = 0;
        discard_transaction(&mut ctx.srv.key_events, id, c);
    }
    Ok(())
}

/// DISCARD
///
/// # Format
/// `DISCARD` — `+OK`; the queued commands are dropped and every key unwatched.
fn discard(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let id = ctx.id;
    let c = &mut ctx.clients[id];
    if c.tx.queue.is_none() {
        return Err("ERR DISCARD without MULTI".into());
    }
    discard_transaction(&mut ctx.srv.key_events, id, c);
    ctx.out.ok();
    Ok(())
}

/// WATCH key [key ...]
///
/// # Format
/// `WATCH key [key ...]` — `+OK`; the next EXEC fails if any of the keys changes meanwhile.
fn watch(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (id, db) = (ctx.id, ctx.db);
    let c = &mut ctx.clients[id];
    if c.tx.in_multi() {
        return Err("ERR WATCH inside MULTI is not allowed".into());
    }
    // No point in watching once the transaction is bound to fail.
    if !c.dirty_cas {
        for key in args.tail(1).iter() {
            watch_key(&mut ctx.srv.key_events, &ctx.srv.dbs[db], db, key, id, c);
        }
    }
    ctx.out.ok();
    Ok(())
}

/// UNWATCH
///
/// # Format
/// `UNWATCH` — `+OK`; every watched key is forgotten.
fn unwatch(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let id = ctx.id;
    let c = &mut ctx.clients[id];
    unwatch_all(&mut ctx.srv.key_events, id, &mut c.tx);
    c.dirty_cas = false;
    ctx.out.ok();
    Ok(())
}

pub const COMMANDS: &[Command] = &[
    Command::new(
        "multi",
        multi,
        1,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | NO_QUEUE,
    )
    .group(GROUP)
    .doc("Mark the start of a transaction block", "1.2.0", "O(1)", ""),
    Command::new(
        "exec",
        exec,
        1,
        NOSCRIPT | LOADING | STALE | super::SKIP_SLOWLOG | NO_QUEUE | RUNS_QUEUE | MULTI_OOM_OK,
    )
    .group(GROUP)
    .doc(
        "Execute all commands issued after MULTI",
        "1.2.0",
        "Depends on commands in the transaction",
        "",
    ),
    Command::new(
        "discard",
        discard,
        1,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | NO_QUEUE | MULTI_OOM_OK,
    )
    .group(GROUP)
    .doc(
        "Discard all commands issued after MULTI",
        "2.0.0",
        "O(N), when N is the number of queued commands",
        "",
    ),
    Command::new(
        "watch",
        watch,
        -2,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | NO_QUEUE,
    )
    .key_range(1, -1, 1, RO)
    .group(GROUP)
    .doc(
        "Watch the given keys to determine execution of the MULTI/EXEC block",
        "2.2.0",
        "O(1) for every key.",
        "key [key ...]",
    ),
    Command::new(
        "unwatch",
        unwatch,
        1,
        NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY,
    )
    .group(GROUP)
    .doc("Forget about all watched keys", "2.2.0", "O(1)", ""),
];
