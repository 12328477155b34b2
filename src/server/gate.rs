//! The one dispatch gate every command passes (Redis's `processCommand` + `call`): `check` looks the
//! command up and checks arity, authentication, MULTI and subscriber-mode restrictions; then the
//! command is either queued (inside MULTI) or run by `call`, which runs the handler and accounts for
//! it (commandstats, errorstats). EXEC runs its queued commands through `call`, so the checks are
//! made once, at queue time. `execute` applies CLIENT REPLY. Handlers never repeat these checks.

use crate::resp::parser::Args;
use crate::server::acl::{Denied, LogEntry};
use crate::server::client::ReplyMode;
use crate::server::ctx::Ctx;
use crate::server::evict;
use crate::server::latency;
use crate::server::monitor;
use crate::server::multi;
use crate::server::propagate;
use crate::server::script_host::{Flags, ScriptCommand};
use crate::server::table::{
    ALLOW_BUSY, DENYOOM, DISK_ERROR_DENIED, FAST, FUNCTION_CALL, MAY_REPLICATE, MULTI_OOM_OK,
    NOSCRIPT, NO_AUTH, NO_MULTI, NO_QUEUE, READONLY, RUNS_QUEUE, SCRIPT_BODY, SCRIPT_SHA, STALE,
    SUB_OK, TOUCHES_ANYWAY, WRITE,
};
use crate::server::tracking;
use crate::store;
use crate::util::clock;

/// Redis's `%.128s`: at most 128 bytes of an argument, cut at a NUL like C would.
fn c_trunc(arg: &[u8], max: usize) -> String {
    let end = memchr::memchr(0, arg).unwrap_or(arg.len()).min(max);
    String::from_utf8_lossy(&arg[..end]).into_owned()
}

fn unknown_command(args: Args) -> String {
    let mut list = String::new();
    for a in args.tail(1).iter() {
        if list.len() >= 128 {
            break;
        }
        let room = 128 - list.len();
        list.push('\'');
        list.push_str(&c_trunc(a, room));
        list.push_str("' ");
    }
    format!(
        "ERR unknown command '{}', with args beginning with: {}",
        c_trunc(&args[0], 128),
        list
    )
}

/// A write refused on a read-only replica.
pub const READONLY_ERROR: &str = "READONLY You can't write against a read only replica.";

/// Runs one command from the calling client.
pub fn execute(ctx: &mut Ctx, args: Args) {
    let mode = ctx.clients[ctx.id].reply_mode;
    if mode == ReplyMode::SkipNext {
        ctx.clients[ctx.id].reply_mode = ReplyMode::Skipping;
    }
    let mark = ctx.out.buf.len();
    ctx.srv.stats.err_mark = ctx.out.errors.len();
    ctx.out
        .silence(matches!(mode, ReplyMode::Off | ReplyMode::SkipNext));
    dispatch(ctx, args);
    if ctx.srv.tracking.clients > 0 && ctx.clients[ctx.id].tracking.has(tracking::CACHING) {
        caching_spent(ctx, args);
    }
    ctx.out.silence(false);
    ctx.srv.stats.err_mark = 0;
    for code in ctx.out.errors.drain(..) {
        *ctx.srv.stats.errorstats.entry(code).or_insert(0) += 1;
        ctx.srv.stats.total_error_replies += 1;
    }
    let client = &mut ctx.clients[ctx.id];
    match client.reply_mode {
        ReplyMode::Off => ctx.out.drop_silenced(mark),
        ReplyMode::Skipping => {
            ctx.out.drop_silenced(mark);
            client.reply_mode = ReplyMode::On;
        }
        ReplyMode::SkipNext if mode != ReplyMode::SkipNext => ctx.out.drop_silenced(mark),
        _ => {}
    }
}

/// CLIENT CACHING applies to the next command (or the next transaction) only: any other command
/// line, outside MULTI, ends it (Redis's `resetClient`).
fn caching_spent(ctx: &mut Ctx, args: Args) {
    let client_command =
        lookup(ctx, args).is_ok_and(|idx| ctx.srv.table.rows[idx].name.starts_with("client|"));
    let c = &mut ctx.clients[ctx.id];
    if !client_command && !c.tx.in_multi() {
        c.tracking.flags &= !tracking::CACHING;
    }
}

fn dispatch(ctx: &mut Ctx, args: Args) {
    let Some(idx) = check(ctx, args) else {
        // Redis's flagTransaction: a command refused inside MULTI makes EXEC abort.
        multi::flag(&mut ctx.clients[ctx.id]);
        return;
    };
    // CLIENT PAUSE holds the command (even one to be queued) until the pause ends; with WRITE,
    // what may write or replicate (Redis's `is_may_replicate_command`).
    if ctx.srv.pause.kind().is_some()
        && ctx
            .srv
            .pause
            .holds(line_flags(ctx, idx, args) & (WRITE | MAY_REPLICATE) != 0)
    {
        crate::server::pause::postpone(ctx, args);
        return;
    }
    let cmd = ctx.srv.table.rows[idx];
    if ctx.clients[ctx.id].tx.queue.is_some() && !cmd.has(NO_QUEUE) {
        multi::queue(ctx, idx, args);
        return;
    }
    call(ctx, idx, args);
}

/// A command line's flags as Redis's `getCommandFlags` sees them: a script's or function's
/// declared flags replace its row's WRITE, DENYOOM and MAY_REPLICATE (`scriptFlagsToCmdFlags`).
fn command_flags(ctx: &Ctx, idx: usize, args: Args) -> u32 {
    let cmd = ctx.srv.table.rows[idx];
    let kind = if cmd.has(SCRIPT_BODY) {
        ScriptCommand::Body
    } else if cmd.has(SCRIPT_SHA) {
        ScriptCommand::Sha
    } else if cmd.has(FUNCTION_CALL) {
        ScriptCommand::Function
    } else {
        return cmd.flags;
    };
    let Some(declared) = ctx.srv.scripting.declared_flags(kind, cmd.name, args) else {
        return cmd.flags;
    };
    let mut flags = cmd.flags & !(WRITE | DENYOOM | MAY_REPLICATE);
    if !declared.has(Flags::ALLOW_OOM | Flags::NO_WRITES) {
        flags |= DENYOOM;
    }
    if !declared.has(Flags::NO_WRITES) {
        flags |= WRITE;
    }
    flags
}

/// `command_flags`, and for EXEC those of every queued command too (Redis's `mstate.cmd_flags`).
fn line_flags(ctx: &Ctx, idx: usize, args: Args) -> u32 {
    let mut flags = command_flags(ctx, idx, args);
    if ctx.srv.table.rows[idx].has(RUNS_QUEUE) {
        if let Some(queue) = ctx.clients[ctx.id].tx.queue.as_deref() {
            for (row, queued) in queue.commands() {
                flags |= command_flags(ctx, row, queued);
            }
        }
    }
    flags
}

/// Rejects a command that `check` refused: counts it in rejected_calls and replies the error. A
/// refused EXEC also ends the transaction, as Redis's `execCommandAbort`.
fn reject(ctx: &mut Ctx, idx: usize, args: Args, msg: &str) -> Option<usize> {
    ctx.srv.table.stats[idx].rejected += 1;
    if ctx.srv.table.rows[idx].has(RUNS_QUEUE) {
        // Monitors see an EXEC refused before running too (Redis's `execCommandAbort`).
        if !ctx.srv.monitors.is_empty() {
            monitor::feed(ctx, args);
        }
        let c = &mut ctx.clients[ctx.id];
        multi::discard_transaction(&mut ctx.srv.key_events, ctx.id, c);
        let why = msg.strip_prefix("ERR ").unwrap_or(msg);
        ctx.out.error(&format!(
            "EXECABORT Transaction discarded because of: {why}"
        ));
    } else {
        ctx.out.error(msg);
    }
    None
}

/// Why a command line names no runnable command.
enum Lookup {
    Unknown,
    UnknownSub,
}

/// Finds the table row for `args` (the subcommand's row for a container).
fn lookup(ctx: &Ctx, args: Args) -> Result<usize, Lookup> {
    let table = &ctx.srv.table;
    // The table also names subcommands `container|sub`; sent as a command name, that is unknown.
    // A plain scan: names are a few bytes, shorter than memchr's set-up.
    if args[0].contains(&b'|') {
        return Err(Lookup::Unknown);
    }
    let idx = table.find(&args[0]).ok_or(Lookup::Unknown)?;
    if !table.rows[idx].subcommands.is_empty() && args.len() >= 2 {
        return table.find_sub(idx, &args[1]).ok_or(Lookup::UnknownSub);
    }
    Ok(idx)
}

/// Whether row `idx` has a handler that takes `argc` arguments (Redis's ±N arity).
fn runnable(ctx: &Ctx, idx: usize, argc: usize) -> bool {
    let cmd = ctx.srv.table.rows[idx];
    let argc = argc as i32;
    cmd.handler.is_some()
        && ((cmd.arity > 0 && cmd.arity == argc) || (cmd.arity < 0 && argc >= -cmd.arity))
}

/// The checks a command passes before it runs or is queued (Redis's `processCommand`): lookup,
/// arity, authentication, NO_MULTI inside MULTI, and the RESP2 subscriber-mode restriction. Returns
/// the command's row, or None after replying the error.
fn check(ctx: &mut Ctx, args: Args) -> Option<usize> {
    let idx = match lookup(ctx, args) {
        Ok(idx) => idx,
        Err(Lookup::Unknown) => {
            ctx.out.error(&unknown_command(args));
            return None;
        }
        Err(Lookup::UnknownSub) => {
            ctx.out.error(&format!(
                "ERR unknown subcommand '{}'. Try {} HELP.",
                c_trunc(&args[1], 128),
                String::from_utf8_lossy(&args[0]).to_uppercase()
            ));
            return None;
        }
    };
    let cmd = ctx.srv.table.rows[idx];
    if !runnable(ctx, idx, args.len()) {
        let msg = format!("ERR wrong number of arguments for '{}' command", cmd.name);
        return reject(ctx, idx, args, &msg);
    }
    if let Some(g) = cmd.guard {
        if !ctx.clients[ctx.id].allowed_by((g.setting)(&ctx.srv.config)) {
            let msg = format!("ERR {} command not allowed. If the {} option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.", g.command, g.directive);
            return reject(ctx, idx, args, &msg);
        }
    }
    let client = &mut ctx.clients[ctx.id];
    client.last_cmd = cmd.name;
    if !client.authenticated && !cmd.has(NO_AUTH) {
        if ctx.srv.acl.auth_required() {
            return reject(ctx, idx, args, "NOAUTH Authentication required.");
        }
        client.authenticated = true;
    }
    if cmd.has(NO_MULTI) && client.tx.in_multi() {
        return reject(
            ctx,
            idx,
            args,
            "ERR Command not allowed inside a transaction",
        );
    }
    let context = if client.tx.in_multi() {
        "multi"
    } else {
        "toplevel"
    };
    // A replica obeys its primary's stream unchecked (Redis's master client has no user).
    let obeyed = client.is_master;
    if !obeyed {
        if let Err(why) = acl_check(ctx, idx, args, context) {
            let msg = match why {
            Denied::Command => format!(
                "NOPERM this user has no permissions to run the '{}' command",
                cmd.name
            ),
            Denied::Key => {
                "NOPERM this user has no permissions to access one of the keys used as arguments"
                    .to_string()
            }
            Denied::Channel => "NOPERM this user has no permissions to access one of the channels used as arguments".to_string(),
            Denied::Auth => "ERR no permission".to_string(),
        };
            return reject(ctx, idx, args, &msg);
        }
    }
    // Over `maxmemory`: evict first; refuse what may grow memory if that was not enough. Not while
    // a script runs past its time (its writes must not mix with evictions), nor while the AOF is
    // loaded (what it holds was accepted once), as Redis.
    // A replica's memory is its primary's business (`replica-ignore-maxmemory`).
    let replica_ignores =
        ctx.srv.repl.master.is_some() && ctx.srv.config.inert.replica_ignore_maxmemory;
    if ctx.srv.config.maxmemory > 0
        && !replica_ignores
        && !ctx.srv.script_running.busy
        && !store::loading()
        && ctx.srv.pause.kind().is_none()
    {
        let out_of_memory = evict::perform(ctx) == evict::Outcome::Fail;
        // What eviction invalidated for this client precedes its reply.
        tracking::flush_pending(ctx);
        ctx.srv.eviction.oom_at_start = out_of_memory;
        if out_of_memory && refused_on_oom(ctx, idx, args) {
            return reject(ctx, idx, args, evict::OOM_ERROR);
        }
    }
    if ctx.srv.tracking.clients > 0 {
        // Dropped keys are told to this client before its reply, as in Redis's `processCommand`.
        tracking::limit(ctx);
        tracking::flush_pending(ctx);
    }
    let client = &mut ctx.clients[ctx.id];
    // A monitor is a replica to Redis: it may not touch the keyspace.
    if client.monitor && cmd.has(READONLY | WRITE | MAY_REPLICATE) {
        return reject(
            ctx,
            idx,
            args,
            "ERR Replica can't interact with the keyspace",
        );
    }
    if !ctx.out.resp3 && !cmd.has(SUB_OK) && client.subs.total() > 0 {
        let msg = format!("ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", cmd.name);
        return reject(ctx, idx, args, &msg);
    }
    if ctx.srv.script_running.busy && !cmd.has(ALLOW_BUSY) {
        let busy = ctx.srv.script_running.busy_error();
        return reject(ctx, idx, args, busy);
    }
    // After a failed background save (`stop-writes-on-bgsave-error`) or AOF write, writes (and
    // PING, as Redis) are refused until persistence works again.
    if cmd.has(WRITE | DISK_ERROR_DENIED) {
        if let Some(msg) = crate::persist::writes_denied(&ctx.srv.config, &ctx.srv.persist) {
            return reject(ctx, idx, args, &msg);
        }
    }
    // The cheap test first: without min-replicas-to-write, no command's flags are looked at.
    if ctx.srv.config.min_replicas_to_write > 0
        && !crate::server::primary::enough_good_replicas(ctx.srv, ctx.clients)
        && line_flags(ctx, idx, args) & WRITE != 0
    {
        return reject(ctx, idx, args, crate::server::primary::NOREPLICAS_ERROR);
    }
    if ctx.srv.repl.master.is_some() && !obeyed {
        let flags = line_flags(ctx, idx, args);
        if ctx.srv.config.replica_read_only && flags & WRITE != 0 {
            return reject(ctx, idx, args, READONLY_ERROR);
        }
        // The link down and stale data not served: only what Redis flags STALE runs.
        if !ctx.srv.config.replica_serve_stale_data && !ctx.srv.repl.link_up() && flags & STALE == 0
        {
            return reject(
                ctx,
                idx,
                args,
                "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
            );
        }
    }
    Some(idx)
}

/// Whether out of memory refuses this command (Redis's `reject_cmd_on_oom`): what may grow memory
/// (DENYOOM by `line_flags`: EXEC of a queue holding such a command included; a script without a
/// shebang is judged by its own calls), and inside MULTI anything but EXEC, DISCARD, QUIT, RESET.
fn refused_on_oom(ctx: &Ctx, idx: usize, args: Args) -> bool {
    let in_multi = ctx.clients[ctx.id].tx.queue.is_some();
    if in_multi && !ctx.srv.table.rows[idx].has(MULTI_OOM_OK) {
        return true;
    }
    line_flags(ctx, idx, args) & DENYOOM != 0
}

/// Runs the handler of the command at row `idx`, which passed `check` (now, or when it was queued
/// by MULTI: EXEC calls this for each queued command), and accounts for it in commandstats.
pub fn call(ctx: &mut Ctx, idx: usize, args: Args) {
    let cmd = ctx.srv.table.rows[idx];
    let Some(handler) = cmd.handler else {
        return;
    };
    let start = clock::start_call();
    let client = &ctx.clients[ctx.id];
    clock::set_no_touch(client.no_touch && !cmd.has(TOUCHES_ANYWAY));
    // Keys this command expires lazily, wherever it finds them (its arguments, SCAN, KEYS,
    // RANDOMKEY, SORT's patterns), are a change for their watchers and tracking clients, as
    // Redis's `deleteExpiredKeyAndPropagate`.
    let signal_expired = !ctx.srv.key_events.is_empty() || ctx.srv.tracking.watching();
    let outer_signal_expired = crate::store::set_signal_expired(signal_expired);
    // What the command did is propagated once it has run.
    let frame = propagate::enter(ctx.srv);
    // The handler marks its secret arguments anew (a line fed to monitors before it runs has none).
    ctx.clients[ctx.id].redacted.clear();
    // A served blocked command was shown to monitors when it blocked.
    let monitored = !ctx.srv.monitors.is_empty() && !ctx.srv.blocking.reprocessing();
    if monitored && monitor::fed_before(cmd) {
        monitor::feed(ctx, args);
    }
    if let Err(e) = handler(ctx, args) {
        ctx.out.error(&e.0);
    }
    if monitored && monitor::fed_after(cmd) {
        monitor::feed(ctx, args);
    }
    crate::server::notify::flush_store_events(ctx);
    let elapsed = clock::ticks_to_ns(clock::ticks().wrapping_sub(start));
    clock::end_call();
    if let Some(frame) = frame {
        let before = ctx.srv.repl.offset;
        propagate::leave(ctx.srv, ctx.db, args, frame);
        // WAIT waits for the replicas to take what this client's last write fed the stream.
        if ctx.srv.repl.offset != before {
            if let Some(c) = ctx.clients.get_mut(ctx.id) {
                c.woff = ctx.srv.repl.offset;
            }
        }
    }
    // A command that blocked is counted once it is served, times out or is unblocked.
    let blocked = ctx.clients[ctx.id].blocked.is_some() || ctx.srv.blocking.keeps_blocked();
    if signal_expired {
        for db in 0..ctx.srv.dbs.len() {
            for key in std::mem::take(&mut ctx.srv.dbs[db].expired_signals) {
                ctx.signal_removed_in(db, &key);
            }
        }
    }
    crate::store::set_signal_expired(outer_signal_expired);
    if ctx.srv.tracking.engaged() {
        tracking::after_call(ctx, cmd, args);
    }
    // Only errors not yet accounted to a (nested) command count as this command's failure.
    let errors = ctx.out.errors.len();
    let failed = errors > ctx.srv.stats.err_mark;
    ctx.srv.stats.err_mark = errors;
    if !blocked {
        crate::server::slowlog::record(ctx, cmd, args, elapsed / 1000);
        latency::track(ctx.srv, idx, elapsed);
    }
    let event = if cmd.has(FAST) {
        "fast-command"
    } else {
        "command"
    };
    latency::sample(ctx.srv, event, elapsed / 1_000_000);
    let stats = &mut ctx.srv.table.stats[idx];
    stats.calls += u64::from(!blocked);
    stats.nsec += elapsed;
    if failed {
        stats.failed += 1;
    }
    ctx.srv.stats.total_commands_processed += 1;
}

/// What a running script may do, checked for every command it calls.
pub struct ScriptRules {
    /// EVAL_RO/EVALSHA_RO, or a `no-writes` script: write commands are refused.
    pub read_only: bool,
    /// A script flagged `allow-oom`: its writes run over `maxmemory`.
    pub allow_oom: bool,
}

/// Runs a command called by a script (`redis.call` in every engine): the same table, handlers and
/// accounting as a client's command, with Redis's script checks and error texts instead of a
/// client's (no MULTI queueing: the script itself is atomic).
pub fn call_from_script(ctx: &mut Ctx, args: Args, rules: &ScriptRules) {
    let Ok(idx) = lookup(ctx, args) else {
        ctx.out
            .error("ERR Unknown Redis command called from script");
        return;
    };
    if !runnable(ctx, idx, args.len()) {
        ctx.out
            .error("ERR Wrong number of args calling Redis command from script");
        return;
    }
    let cmd = ctx.srv.table.rows[idx];
    if cmd.has(NOSCRIPT) {
        ctx.out
            .error("ERR This Redis command is not allowed from script");
        return;
    }
    // A script runs with its caller's user, in every engine and from FCALL alike.
    if let Err(why) = acl_check(ctx, idx, args, "lua") {
        ctx.out.error(&format!(
            "ERR The user executing the script {}",
            why.message()
        ));
        return;
    }
    if cmd.has(WRITE)
        && ctx.srv.config.min_replicas_to_write > 0
        && !crate::server::primary::enough_good_replicas(ctx.srv, ctx.clients)
    {
        ctx.out.error(crate::server::primary::NOREPLICAS_ERROR);
        return;
    }
    // A read-only replica's scripts may not write (Redis's `scriptVerifyWriteCommandAllow`).
    if cmd.has(WRITE)
        && ctx.srv.repl.master.is_some()
        && ctx.srv.config.replica_read_only
        && !ctx.clients[ctx.id].is_master
    {
        ctx.out.error(READONLY_ERROR);
        return;
    }
    // A read-only script may not run what may replicate either (PUBLISH, PFCOUNT), as in Redis.
    if rules.read_only && cmd.has(WRITE | MAY_REPLICATE) {
        ctx.out
            .error("ERR Write commands are not allowed from read-only scripts.");
        return;
    }
    // Out of memory when the script began: its first write that may grow memory is refused
    // (later ones are not: a script is not stopped half way).
    if cmd.has(DENYOOM)
        && !rules.allow_oom
        && ctx.srv.config.maxmemory > 0
        && ctx.srv.eviction.oom_at_start
        && !ctx.srv.script_running.wrote
    {
        ctx.out.error(evict::OOM_ERROR);
        return;
    }
    if cmd.has(WRITE) {
        ctx.srv.script_running.wrote = true;
    }
    // The script's reply buffer counts its errors from zero; the caller's mark is restored after.
    let mark = std::mem::replace(&mut ctx.srv.stats.err_mark, ctx.out.errors.len());
    // The caller has `deny_blocking` set for the whole run (`script::Run`): BLMPOP, BZMPOP and the
    // like answer as if their timeout had passed.
    call(ctx, idx, args);
    ctx.srv.stats.err_mark = mark;
}

/// The ACL check of a command line about to run or be queued (Redis's `ACLCheckAllPerm`): a
/// refusal is logged (ACL LOG) in `context` ("toplevel", "multi", "lua").
pub fn acl_check(
    ctx: &mut Ctx,
    idx: usize,
    args: Args,
    context: &'static str,
) -> Result<(), Denied> {
    let user = ctx.clients[ctx.id].user;
    let u = ctx.srv.acl.user(user);
    if u.unrestricted() {
        return Ok(());
    }
    let Err((why, pos)) = u.check(&ctx.srv.table, idx, args) else {
        return Ok(());
    };
    let object = match why {
        Denied::Command => ctx.srv.table.rows[idx].name.as_bytes().to_vec(),
        Denied::Key | Denied::Channel => args[pos].to_vec(),
        Denied::Auth => args[0].to_vec(),
    };
    log_denied(ctx, why, context, object, None);
    Err(why)
}

/// Adds an ACL LOG entry for the calling client (`addACLLogEntry`); `username` overrides the
/// client's user (a failed AUTH logs the name it tried).
pub fn log_denied(
    ctx: &mut Ctx,
    reason: Denied,
    context: &'static str,
    object: Vec<u8>,
    username: Option<&[u8]>,
) {
    ctx.srv.acl.denied[reason as usize] += 1;
    let c = &ctx.clients[ctx.id];
    let username = username.map_or_else(|| c.user_name.to_vec(), <[u8]>::to_vec);
    let resp = if ctx.out.resp3 { 3 } else { 2 };
    let entry = LogEntry {
        count: 1,
        reason,
        context,
        object,
        username,
        ctime: crate::util::clock::wall_us() / 1000,
        client_info: c.info_line(resp, ctx.out, 0),
    };
    let max = ctx.srv.config.acllog_max_len.max(0) as usize;
    ctx.srv.acl.add_log(entry, max);
}
