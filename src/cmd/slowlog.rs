//! The slow log (Redis's slowlog.c): the commands that ran for at least `slowlog-log-slower-than`
//! microseconds, newest first, at most `slowlog-max-len` of them; and SLOWLOG GET, LEN, RESET, HELP.

use std::collections::VecDeque;

use super::parse::{int, is};
use super::{Args, CmdResult, Command, Ctx, ADMIN, LOADING, SKIP_SLOWLOG, STALE};

const GROUP: &str = "server";

/// Arguments an entry keeps; past them the last one says how many more there were.
const MAX_ARGS: usize = 32;
/// Bytes an argument keeps; past them it says how many more there were.
const MAX_ARG_BYTES: usize = 128;

struct Entry {
    id: u64,
    unix_time: i64,
    micros: u64,
    args: Vec<Vec<u8>>,
    peer: String,
    client_name: Vec<u8>,
}

#[derive(Default)]
pub struct Slowlog {
    entries: VecDeque<Entry>,
    /// Ids keep counting across SLOWLOG RESET, as Redis's.
    next_id: u64,
}

/// Logs the command that just ran `micros` microseconds, if it was slow enough (Redis's
/// `slowlogPushCurrentCommand`). A command a script called shows the script's client, `?:0` with no
/// name, as Redis's; commands replayed from the AOF at startup are not logged.
pub fn record(ctx: &mut Ctx, cmd: &Command, args: Args, micros: u64) {
    let threshold = ctx.srv.config.slowlog_log_slower_than;
    if threshold < 0 || micros < threshold as u64 || cmd.has(SKIP_SLOWLOG) {
        return;
    }
    let client = &ctx.clients[ctx.id];
    if client.fd < 0 {
        return;
    }
    let running = &ctx.srv.scripting.running;
    let (peer, client_name) = if running.active && running.client == ctx.id {
        ("?:0".to_string(), Vec::new())
    } else {
        (client.addr.clone(), client.name.clone())
    };
    let secret = secret_args(cmd.name, args);
    let kept = args.len().min(MAX_ARGS);
    let shown = (0..kept)
        .map(|i| {
            if kept < args.len() && i == kept - 1 {
                format!("... ({} more arguments)", args.len() - kept + 1).into_bytes()
            } else if secret(i) {
                b"(redacted)".to_vec()
            } else if args[i].len() > MAX_ARG_BYTES {
                let mut a = args[i][..MAX_ARG_BYTES].to_vec();
                a.extend_from_slice(
                    format!("... ({} more bytes)", args[i].len() - MAX_ARG_BYTES).as_bytes(),
                );
                a
            } else {
                args[i].to_vec()
            }
        })
        .collect();
    let max_len = ctx.srv.config.slowlog_max_len as usize;
    push(
        &mut ctx.srv.slowlog,
        shown,
        micros,
        peer,
        client_name,
        max_len,
    );
}

/// CLIENT UNBLOCK ends a blocked command: Redis 7.0 logs it then, with no arguments left.
pub fn record_unblocked(srv: &mut crate::server::State, client: &crate::server::client::Client) {
    if srv.config.slowlog_log_slower_than == 0 {
        let max_len = srv.config.slowlog_max_len as usize;
        let (peer, name) = (client.addr.clone(), client.name.clone());
        push(&mut srv.slowlog, Vec::new(), 0, peer, name, max_len);
    }
}

fn push(
    log: &mut Slowlog,
    args: Vec<Vec<u8>>,
    micros: u64,
    peer: String,
    client_name: Vec<u8>,
    max_len: usize,
) {
    log.entries.push_front(Entry {
        id: log.next_id,
        unix_time: crate::util::clock::wall_us() / 1_000_000,
        micros,
        args,
        peer,
        client_name,
    });
    log.next_id += 1;
    // A lowered slowlog-max-len takes effect at the next entry, as in Redis.
    log.entries.truncate(max_len);
}

/// Which arguments hold a secret the log must not keep (Redis's `redactClientCommandArgument`):
/// AUTH's credentials, HELLO's AUTH pair, and the values of sensitive configs in CONFIG SET. Like
/// Redis, only a command line whose command reached the point of reading them is redacted.
pub fn secret_args(name: &str, args: Args) -> impl Fn(usize) -> bool {
    let mut secret = vec![false; args.len()];
    match name {
        "auth" if args.len() <= 3 => secret[1..].fill(true),
        "hello" if args.len() >= 2 => {
            if matches!(int(&args[1]), Ok(2 | 3)) {
                let mut i = 2;
                while i < args.len() {
                    let more = args.len() - 1 - i;
                    if is(&args[i], "auth") && more >= 2 {
                        secret[i + 1] = true;
                        secret[i + 2] = true;
                        i += 3;
                    } else if is(&args[i], "setname") && more >= 1 {
                        i += 2;
                    } else {
                        break;
                    }
                }
            }
        }
        "config|set" if args.len().is_multiple_of(2) => {
            for i in (2..args.len()).step_by(2) {
                if is(&args[i], "requirepass") || is(&args[i], "masterauth") {
                    secret[i + 1] = true;
                }
            }
        }
        _ => {}
    }
    move |i| secret[i]
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(line: &[&str]) -> Vec<usize> {
        let buf: Vec<u8> = line.concat().into_bytes();
        let mut spans = Vec::new();
        let mut at = 0;
        for a in line {
            spans.push((at, at + a.len()));
            at += a.len();
        }
        let args = Args::new(&buf, &spans);
        let name = if line[0] == "config" {
            "config|set"
        } else {
            line[0]
        };
        let secret = secret_args(name, args);
        (0..line.len()).filter(|&i| secret(i)).collect()
    }

    #[test]
    fn secrets_are_redacted_where_redis_redacts_them() {
        assert_eq!(redacted(&["auth", "pw"]), [1]);
        assert_eq!(redacted(&["auth", "user", "pw"]), [1, 2]);
        assert_eq!(redacted(&["auth", "a", "b", "c"]), [] as [usize; 0]);
        assert_eq!(
            redacted(&["hello", "3", "SETNAME", "n", "AUTH", "u", "p"]),
            [5, 6]
        );
        assert_eq!(
            redacted(&["hello", "x", "AUTH", "u", "p"]),
            [] as [usize; 0]
        );
        assert_eq!(
            redacted(&["hello", "2", "BAD", "AUTH", "u", "p"]),
            [] as [usize; 0]
        );
        assert_eq!(
            redacted(&["config", "set", "maxmemory", "0", "REQUIREPASS", "s"]),
            [5]
        );
        assert_eq!(
            redacted(&["config", "set", "requirepass"]),
            [] as [usize; 0]
        );
        assert_eq!(redacted(&["get", "k"]), [] as [usize; 0]);
    }
}
