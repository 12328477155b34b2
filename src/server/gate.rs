//! The one dispatch gate every command passes (Redis's `processCommand` + `call`): look the command
//! up, check arity, check authentication, run the handler, then account for it (commandstats,
//! errorstats) and apply CLIENT REPLY. Handlers never repeat these checks.

use std::time::Instant;

use crate::cmd::{Args, Ctx, Handler, NOSCRIPT, NO_AUTH, WRITE};
use crate::server::client::ReplyMode;
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

/// Runs one command from the calling client.
pub fn execute(ctx: &mut Ctx, args: Args) {
    clock::update();
    let mode = ctx.clients[ctx.id].reply_mode;
    if mode == ReplyMode::SkipNext {
        ctx.clients[ctx.id].reply_mode = ReplyMode::Skipping;
    }
    let mark = ctx.out.buf.len();
    dispatch(ctx, args);
    for code in ctx.out.errors.drain(..) {
        *ctx.srv.stats.errorstats.entry(code).or_insert(0) += 1;
        ctx.srv.stats.total_error_replies += 1;
    }
    let client = &mut ctx.clients[ctx.id];
    match client.reply_mode {
        ReplyMode::Off => ctx.out.truncate(mark),
        ReplyMode::Skipping => {
            ctx.out.truncate(mark);
            client.reply_mode = ReplyMode::On;
        }
        ReplyMode::SkipNext if mode != ReplyMode::SkipNext => ctx.out.truncate(mark),
        _ => {}
    }
}

/// Why a command line names no runnable command.
enum Lookup {
    Unknown,
    UnknownSub,
}

/// Finds the table row for `args` (the subcommand's row for a container).
fn lookup(ctx: &Ctx, args: Args) -> Result<usize, Lookup> {
    let table = &ctx.srv.table;
    let idx = table.find(&args[0]).ok_or(Lookup::Unknown)?;
    if !table.rows[idx].subcommands.is_empty() && args.len() >= 2 {
        return table.find_sub(idx, &args[1]).ok_or(Lookup::UnknownSub);
    }
    Ok(idx)
}

/// The handler of row `idx` if `argc` arguments satisfy its arity.
fn handler_for(ctx: &Ctx, idx: usize, argc: usize) -> Option<Handler> {
    let cmd = ctx.srv.table.rows[idx];
    let argc = argc as i32;
    cmd.handler
        .filter(|_| (cmd.arity > 0 && cmd.arity == argc) || (cmd.arity < 0 && argc >= -cmd.arity))
}

/// Runs a handler and accounts for it in commandstats.
fn run_handler(ctx: &mut Ctx, idx: usize, handler: Handler, args: Args) {
    let errors_before = ctx.out.errors.len();
    let start = Instant::now();
    if let Err(e) = handler(ctx, args) {
        ctx.out.error(&e.0);
    }
    // A command that blocked is counted once it is served, times out or is unblocked.
    let blocked = ctx.clients[ctx.id].blocked.is_some() || ctx.srv.blocking.keeps_blocked();
    let stats = &mut ctx.srv.table.stats[idx];
    stats.calls += u64::from(!blocked);
    stats.usec += start.elapsed().as_micros() as u64;
    if ctx.out.errors.len() > errors_before {
        stats.failed += 1;
    }
    ctx.srv.stats.total_commands_processed += 1;
}

fn dispatch(ctx: &mut Ctx, args: Args) {
    let idx = match lookup(ctx, args) {
        Ok(idx) => idx,
        Err(Lookup::Unknown) => {
            ctx.out.error(&unknown_command(args));
            return;
        }
        Err(Lookup::UnknownSub) => {
            ctx.out.error(&format!(
                "ERR unknown subcommand '{}'. Try {} HELP.",
                c_trunc(&args[1], 128),
                String::from_utf8_lossy(&args[0]).to_uppercase()
            ));
            return;
        }
    };
    let cmd = ctx.srv.table.rows[idx];
    let Some(handler) = handler_for(ctx, idx, args.len()) else {
        ctx.srv.table.stats[idx].rejected += 1;
        ctx.out.err(format!(
            "wrong number of arguments for '{}' command",
            cmd.name
        ));
        return;
    };
    let client = &mut ctx.clients[ctx.id];
    if !client.authenticated && !cmd.has(NO_AUTH) {
        if ctx.srv.config.requirepass.is_empty() {
            client.authenticated = true;
        } else {
            ctx.srv.table.stats[idx].rejected += 1;
            ctx.out.error("NOAUTH Authentication required.");
            return;
        }
    }
    client.last_cmd = cmd.name;
    clock::set_no_touch(client.no_touch && cmd.name != "touch");
    run_handler(ctx, idx, handler, args);
}

/// What a running script may do, checked for every command it calls.
pub struct ScriptRules {
    /// EVAL_RO/EVALSHA_RO, or a `no-writes` script: write commands are refused.
    pub read_only: bool,
}

/// Runs a command called by a script (`redis.call` in every engine): the same table and handlers
/// as a client's command, with Redis's script checks and error texts instead of a client's.
pub fn call_from_script(ctx: &mut Ctx, args: Args, rules: &ScriptRules) {
    let Ok(idx) = lookup(ctx, args) else {
        ctx.out
            .error("ERR Unknown Redis command called from script");
        return;
    };
    let cmd = ctx.srv.table.rows[idx];
    let Some(handler) = handler_for(ctx, idx, args.len()) else {
        ctx.out
            .error("ERR Wrong number of args calling Redis command from script");
        return;
    };
    if cmd.has(NOSCRIPT) {
        ctx.out
            .error("ERR This Redis command is not allowed from script");
        return;
    }
    if cmd.has(WRITE) {
        if rules.read_only {
            ctx.out
                .error("ERR Write commands are not allowed from read-only scripts.");
            return;
        }
        ctx.srv.scripting.running.wrote = true;
    }
    run_handler(ctx, idx, handler, args);
}
