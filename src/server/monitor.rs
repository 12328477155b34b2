//! The monitor feed: what clients in MONITOR mode (`cmd/monitor.rs`) see of every command the
//! server runs, as Redis's `replicationFeedMonitors` shows them: `+<unix time with µs> [<db> <client>] "arg" ...`.
//!
//! What is shown follows Redis 7.0: a command is fed once it has run (so EXEC follows the
//! commands it ran), except the scripting commands (the EVAL and FCALL families of every engine,
//! flagged `skip_monitor`), which are fed as they start so that the commands a script calls follow
//! them, with `lua` as their client. Admin commands (CONFIG, DEBUG, ...), commands refused before
//! running, a blocked command when it is served (it was shown when it blocked) and the commands
//! replayed from the AOF at startup are not shown; an EXEC refused before running is. Secrets are
//! `(redacted)` as in the slow log.

use crate::resp::parser::Args;
use crate::server::client::Client;
use crate::server::ctx::Ctx;
use crate::server::table::{Command, ADMIN, SKIP_MONITOR};
use crate::server::{pubsub, State};

/// Takes client `id` out of the monitors (RESET, or its connection closing).
pub fn stop(srv: &mut State, client: &mut Client, id: usize) {
    if std::mem::take(&mut client.monitor) {
        srv.monitors.retain(|&m| m != id);
    }
}

/// Shows the command `args`, run by the calling client (or by its script) on `ctx.db`, to every
/// monitor. The caller decides whether the command is shown (see the module doc).
pub fn feed(ctx: &mut Ctx, args: Args) {
    let client = &ctx.clients[ctx.id];
    // The AOF replay at startup runs as a client with no socket.
    if client.fd < 0 {
        return;
    }
    let now = crate::util::clock::wall_us();
    let mut line = format!("+{}.{:06} [{} ", now / 1_000_000, now % 1_000_000, ctx.db);
    let running = &ctx.srv.script_running;
    if running.active && running.client == ctx.id {
        line.push_str("lua");
    } else if client.is_unix {
        line.push_str("unix:");
        line.push_str(&ctx.srv.config.unixsocket);
    } else {
        line.push_str(&client.addr);
    }
    line.push_str("] ");
    let secret = |i| client.redacted.contains(&i);
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        let shown: &[u8] = if secret(i) { b"(redacted)" } else { a };
        crate::util::cat_repr(&mut line, shown);
    }
    line.push_str("\r\n");
    for &m in &ctx.srv.monitors {
        let out = if m == ctx.id {
            &mut *ctx.out
        } else {
            match ctx.clients.get_mut(m) {
                Some(c) if !c.close_asap => &mut c.out,
                _ => continue,
            }
        };
        out.buf.extend_from_slice(line.as_bytes());
        if m != ctx.id {
            ctx.srv.pubsub.notified.push(m);
            let limits = &ctx.srv.config.obuf_limits;
            pubsub::check_limit(ctx.clients, m, limits, &mut ctx.srv.pubsub.to_close);
        }
    }
}

/// Whether the command of row `cmd` is fed before it runs (the scripting commands) rather than
/// after, or not at all (admin commands).
pub fn fed_before(cmd: &Command) -> bool {
    cmd.has(SKIP_MONITOR) && !cmd.has(ADMIN)
}

pub fn fed_after(cmd: &Command) -> bool {
    !cmd.has(SKIP_MONITOR) && !cmd.has(ADMIN)
}
