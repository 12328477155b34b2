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
    let running = &ctx.srv.script_running;
    let (peer, client_name) = if running.active && running.client == ctx.id {
        ("?:0".to_string(), Vec::new())
    } else {
        (client.addr.clone(), client.name.clone())
    };
    let secret = |i| client.redacted.contains(&i);
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
