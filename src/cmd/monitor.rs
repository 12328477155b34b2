//! MONITOR: the client asks to see every command the server runs; `server::monitor` feeds it.

use super::{Args, CmdResult, Command, Ctx, ADMIN, LOADING, NOSCRIPT, STALE};

const GROUP: &str = "server";

/// MONITOR
///
/// # Format
/// `MONITOR` — `OK`, then a status line for every command the server runs, until the connection
/// closes or sends RESET. No reply when the client is already monitoring.
fn monitor(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let c = ctx.client();
    // A client that expects one reply per command (inside EXEC) cannot take the stream.
    if c.deny_blocking {
        return Err("ERR MONITOR isn't allowed for DENY BLOCKING client".into());
    }
    if c.monitor {
        return Ok(());
    }
    c.monitor = true;
    ctx.srv.monitors.push(ctx.id);
    ctx.out.ok();
    Ok(())
}

pub const COMMANDS: &[Command] =
    &[
        Command::new("monitor", monitor, 1, ADMIN | NOSCRIPT | LOADING | STALE)
            .group(GROUP)
            .doc(
                "Listen for all requests received by the server in real time",
                "1.0.0",
                "",
                "",
            ),
    ];
