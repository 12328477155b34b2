//! The slow log (Redis's slowlog.c): the commands that ran for at least `slowlog-log-slower-than`
//! microseconds, newest first, at most `slowlog-max-len` of them, which the gate records after
//! each command. SLOWLOG, which reads it, is in `cmd/slowlog.rs`.

use std::collections::VecDeque;

use crate::resp::parser::Args;
use crate::server::ctx::Ctx;
use crate::server::table::{Command, SKIP_SLOWLOG};

/// Arguments an entry keeps; past them the last one says how many more there were.
const MAX_ARGS: usize = 32;
/// Bytes an argument keeps; past them it says how many more there were.
const MAX_ARG_BYTES: usize = 128;

pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) unix_time: i64,
    pub(crate) micros: u64,
    pub(crate) args: Vec<Vec<u8>>,
    pub(crate) peer: String,
    pub(crate) client_name: Vec<u8>,
}

#[derive(Default)]
pub struct Slowlog {
    pub(crate) entries: VecDeque<Entry>,
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
            if matches!(crate::util::parse_i64(&args[1]), Some(2 | 3)) {
                let mut i = 2;
                while i < args.len() {
                    let more = args.len() - 1 - i;
                    if args[i].eq_ignore_ascii_case(b"auth") && more >= 2 {
                        secret[i + 1] = true;
                        secret[i + 2] = true;
                        i += 3;
                    } else if args[i].eq_ignore_ascii_case(b"setname") && more >= 1 {
                        i += 2;
                    } else {
                        break;
                    }
                }
            }
        }
        "config|set" if args.len().is_multiple_of(2) => {
            for i in (2..args.len()).step_by(2) {
                if args[i].eq_ignore_ascii_case(b"requirepass")
                    || args[i].eq_ignore_ascii_case(b"masterauth")
                {
                    secret[i + 1] = true;
                }
            }
        }
        _ => {}
    }
    move |i| secret[i]
}

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
