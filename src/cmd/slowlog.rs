//! SLOWLOG GET, LEN, RESET, HELP (Redis's slowlog.c): they read the slow log `server::slowlog`
//! keeps.

use super::parse::int;
use super::{Args, CmdResult, Command, Ctx, ADMIN, LOADING, STALE};

const GROUP: &str = "server";

/// SLOWLOG GET [count]
///
/// # Format
/// `SLOWLOG GET [count]` — the newest `count` entries (10 by default, -1 for all), each
/// `[id, unix time, microseconds, [arguments], client address, client name]`.
fn slowlog_get(ctx: &mut Ctx, args: Args) -> CmdResult {
    // The row's arity (-2) lets more through; the handler refuses them, as Redis's.
    if args.len() > 3 {
        return Err(
            "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP."
                .into(),
        );
    }
    let log = &ctx.srv.slowlog;
    let count = match args.get(2) {
        None => 10,
        Some(a) => match int(a) {
            Ok(-1) => log.entries.len(),
            Ok(n) if n >= 0 => n as usize,
            _ => return Err("ERR count should be greater than or equal to -1".into()),
        },
    };
    let shown = count.min(log.entries.len());
    ctx.out.array(shown);
    for e in log.entries.iter().take(shown) {
        ctx.out.array(6);
        ctx.out.int(e.id as i64);
        ctx.out.int(e.unix_time);
        ctx.out.int(e.micros as i64);
        ctx.out.array(e.args.len());
        for a in &e.args {
            ctx.out.bulk(a);
        }
        ctx.out.bulk(e.peer.as_bytes());
        ctx.out.bulk(&e.client_name);
    }
    Ok(())
}

/// SLOWLOG LEN
///
/// # Format
/// `SLOWLOG LEN` — how many entries the log holds.
fn slowlog_len(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.int(ctx.srv.slowlog.entries.len() as i64);
    Ok(())
}

/// SLOWLOG RESET
///
/// # Format
/// `SLOWLOG RESET` — `OK` after emptying the log (ids keep counting).
fn slowlog_reset(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.srv.slowlog.entries.clear();
    ctx.out.ok();
    Ok(())
}

/// SLOWLOG HELP
///
/// # Format
/// `SLOWLOG HELP` — the subcommands, one status line each.
fn slowlog_help(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.help(
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
    Ok(())
}

const ALL_NODES: &str = "request_policy:all_nodes";

const SLOWLOG_SUBCOMMANDS: &[Command] = &[
    Command::new("slowlog|len", slowlog_len, 2, ADMIN | LOADING | STALE)
        .tips(&[
            ALL_NODES,
            "response_policy:agg_sum",
            "nondeterministic_output",
        ])
        .group(GROUP)
        .doc("Get the slow log's length", "2.2.12", "O(1)", ""),
    Command::new("slowlog|help", slowlog_help, 2, LOADING | STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "6.2.0",
            "O(1)",
            "",
        ),
    Command::new("slowlog|reset", slowlog_reset, 2, ADMIN | LOADING | STALE)
        .tips(&[ALL_NODES, "response_policy:all_succeeded"])
        .group(GROUP)
        .doc(
            "Clear all entries from the slow log",
            "2.2.12",
            "O(N) where N is the number of entries in the slowlog",
            "",
        ),
    Command::new("slowlog|get", slowlog_get, -2, ADMIN | LOADING | STALE)
        .tips(&[ALL_NODES, "nondeterministic_output"])
        .group(GROUP)
        .history(&[(
            "4.0.0",
            "Added client IP address, port and name to the reply.",
        )])
        .doc(
            "Get the slow log's entries",
            "2.2.12",
            "O(N) where N is the number of entries returned",
            "[count:integer]",
        ),
];

pub const COMMANDS: &[Command] = &[Command::container("slowlog", -2, SLOWLOG_SUBCOMMANDS)
    .group(GROUP)
    .doc(
        "A container for slow log commands",
        "2.2.12",
        "Depends on subcommand.",
        "",
    )];
