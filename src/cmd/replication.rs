//! The replication commands (Redis's replication.c): REPLICAOF (and SLAVEOF), SYNC, PSYNC,
//! REPLCONF, WAIT and ROLE. The work is the kernel's: the replica side in `server::replica`, the
//! primary side in `server::primary`.

use super::parse::{int, is, timeout_ms};
use super::{
    acl, Args, CmdError, CmdResult, Command, Ctx, ADMIN, ALLOW_BUSY, FAST, LOADING, NOSCRIPT,
    NO_ASYNC_LOADING, NO_MULTI, STALE,
};
use crate::notice;
use crate::server::primary::{self, PeerState};
use crate::server::replica;

/// REPLICAOF host port | NO ONE
///
/// # Format
/// `REPLICAOF host port` — `+OK`: this server drops its data set for that primary's (full sync,
/// or the stream from where it is when the primary shares its history) and follows it;
/// `+OK Already connected to specified master` when it already does. `REPLICAOF NO ONE` — `+OK`:
/// a primary again, its data kept. SLAVEOF is the same command.
fn replicaof(ctx: &mut Ctx, args: Args) -> CmdResult {
    if is(&args[1], "no") && is(&args[2], "one") {
        if ctx.srv.repl.master.is_some() {
            replica::replicaof(ctx, None);
            let client = ctx.client().addr.clone();
            notice!("MASTER MODE enabled (user request from 'addr={client}')");
        }
        ctx.out.ok();
        return Ok(());
    }
    let port = crate::util::parse_i64(&args[2])
        .filter(|p| (0..=65535).contains(p))
        .ok_or_else(|| CmdError::from("ERR Invalid master port"))? as u16;
    let host = String::from_utf8_lossy(&args[1]).into_owned();
    if let Some((h, p)) = &ctx.srv.repl.master {
        if h.eq_ignore_ascii_case(&host) && *p == port {
            notice!("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
            ctx.out.simple("OK Already connected to specified master");
            return Ok(());
        }
    }
    replica::replicaof(ctx, Some((host.clone(), port)));
    let client = ctx.client().addr.clone();
    notice!("REPLICAOF {host}:{port} enabled (user request from 'addr={client}')");
    ctx.out.ok();
    Ok(())
}

/// REPLCONF option value [option value ...]
///
/// # Format
/// `REPLCONF option value ...` — what a replica tells its primary (`listening-port`, `ip-address`,
/// `capa`, `rdb-only`, `rdb-filter-only`): `+OK`; `ACK offset` from a replica, and `GETACK *` from
/// this replica's primary (answered by an ACK on the link), no reply at all.
fn replconf(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len().is_multiple_of(2) {
        return Err("ERR syntax error".into());
    }
    for pair in args.tail(1).iter().collect::<Vec<_>>().chunks(2) {
        let (opt, val) = (pair[0], pair[1]);
        if is(opt, "listening-port") {
            let port = int(val)?;
            primary::peer_of(ctx).listening_port = port;
        } else if is(opt, "ip-address") {
            // Redis's NET_HOST_STR_LEN.
            if val.len() >= 256 {
                return Err(format!(
                    "ERR REPLCONF ip-address provided by replica instance is too long: {} bytes",
                    val.len()
                )
                .into());
            }
            primary::peer_of(ctx).ip = Some(String::from_utf8_lossy(val).into_owned());
        } else if is(opt, "capa") {
            // This server sends every RDB disk-based, which any replica reads: capabilities are
            // taken, and not needed.
        } else if is(opt, "ack") {
            // Only a replica's ACK means anything; it is never answered.
            if let Some(offset) = crate::util::parse_i64(val) {
                primary::ack(ctx, offset);
            }
            return Ok(());
        } else if is(opt, "getack") {
            if ctx.srv.repl.master_client.is_some() {
                ctx.srv.repl.ack_asked = true;
            }
            return Ok(());
        } else if is(opt, "rdb-only") {
            let v = int(val)?;
            if !(0..=1).contains(&v) {
                return Err("ERR value is out of range, value must between 0 and 1".into());
            }
        } else if is(opt, "rdb-filter-only") {
            let text = String::from_utf8_lossy(val);
            for f in text.split_ascii_whitespace() {
                if !f.eq_ignore_ascii_case("functions") {
                    return Err(format!("ERR Unsupported rdb-filter-only option: {f}").into());
                }
            }
        } else {
            return Err(format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(opt)
            )
            .into());
        }
    }
    ctx.out.ok();
    Ok(())
}

/// WAIT numreplicas timeout
///
/// # Format
/// `WAIT numreplicas timeout` — how many online replicas acknowledged the stream up to this
/// connection's last write: at once when that many already did (or inside MULTI), else once they
/// do (the replicas are asked with `REPLCONF GETACK *`) or when `timeout` milliseconds passed (0:
/// forever), with the count then. Refused on a replica.
fn wait(ctx: &mut Ctx, args: Args) -> CmdResult {
    if ctx.srv.repl.master.is_some() {
        return Err("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.".into());
    }
    let replicas = int(&args[1])?;
    let timeout = timeout_ms(&args[2])?;
    primary::wait(ctx, args, replicas, timeout)
}

/// SYNC
///
/// # Format
/// `SYNC` — makes the connection a replica without PSYNC: the RDB as `$<size>\r\n<bytes>`, then
/// the stream (what `redis-cli --rdb` reads).
fn sync(ctx: &mut Ctx, _args: Args) -> CmdResult {
    primary::sync(ctx, None).map_err(CmdError::from)
}

/// PSYNC replicationid offset
///
/// # Format
/// `PSYNC replid offset` — `+CONTINUE <replid>` and the stream from `offset` when this server's
/// backlog still holds it in that history; else `+FULLRESYNC <replid> <offset>`, the RDB, then
/// the stream. `PSYNC ? -1` always asks for a full sync.
fn psync(ctx: &mut Ctx, args: Args) -> CmdResult {
    primary::sync(ctx, Some((&args[1], &args[2]))).map_err(CmdError::from)
}

/// ROLE
///
/// # Format
/// `ROLE` — a primary: `["master", offset, []]` (no replicas). A replica: `["slave", host, port,
/// state, offset]`, state one of `connect`, `connecting`, `handshake`, `sync`, `connected`, the
/// offset applied (-1 while the link is down).
fn role(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let repl = &ctx.srv.repl;
    match &repl.master {
        None => {
            let offset = repl.offset;
            let replicas: Vec<(String, i64, i64)> = ctx
                .srv
                .primary
                .replicas
                .iter()
                .filter_map(|&k| ctx.clients.get(k))
                .filter_map(|c| {
                    let p = c.peer.as_deref()?;
                    let ip = p.ip.clone().unwrap_or_else(|| peer_ip(&c.addr));
                    (p.state == PeerState::Online).then_some((ip, p.listening_port, p.ack_offset))
                })
                .collect();
            ctx.out.array(3);
            ctx.out.bulk(b"master");
            ctx.out.int(offset);
            ctx.out.array(replicas.len());
            for (ip, port, ack) in replicas {
                ctx.out.array(3);
                ctx.out.bulk(ip.as_bytes());
                ctx.out.bulk_int(port);
                ctx.out.bulk_int(ack);
            }
        }
        Some((host, port)) => {
            let (host, port, state, offset) =
                (host.clone(), *port, repl.role_state(), repl.master_offset());
            ctx.out.array(5);
            ctx.out.bulk(b"slave");
            ctx.out.bulk(host.as_bytes());
            ctx.out.int(i64::from(port));
            ctx.out.bulk(state.as_bytes());
            ctx.out.int(offset);
        }
    }
    Ok(())
}

/// The IP part of a client's `ip:port` address.
pub fn peer_ip(addr: &str) -> String {
    addr.rsplit_once(':').map_or(addr, |(ip, _)| ip).to_string()
}

const REPLICAOF_SYNTAX: &str = "args:(host-port:(host port:integer) | no-one:(NO ONE))";

pub const COMMANDS: &[Command] = &[
    Command::new("replicaof", replicaof, 3, NO_ASYNC_LOADING | ADMIN | NOSCRIPT | STALE)
        .acl(acl::ADMIN | acl::DANGEROUS)
        .group("server")
        .doc(
            "Make the server a replica of another instance, or promote it as master.",
            "5.0.0",
            "O(1)",
            REPLICAOF_SYNTAX,
        ),
    Command::new("slaveof", replicaof, 3, NO_ASYNC_LOADING | ADMIN | NOSCRIPT | STALE)
        .acl(acl::ADMIN | acl::DANGEROUS)
        .group("server")
        .deprecated("5.0.0", "`REPLICAOF`")
        .doc(
            "Make the server a replica of another instance, or promote it as master.",
            "1.0.0",
            "O(1)",
            REPLICAOF_SYNTAX,
        ),
    Command::new("sync", sync, 1, NO_ASYNC_LOADING | ADMIN | NO_MULTI | NOSCRIPT)
        .acl(acl::ADMIN | acl::DANGEROUS)
        .group("server")
        .doc("Internal command used for replication", "1.0.0", "", ""),
    Command::new("psync", psync, -3, NO_ASYNC_LOADING | ADMIN | NO_MULTI | NOSCRIPT)
        .acl(acl::ADMIN | acl::DANGEROUS)
        .group("server")
        .doc(
            "Internal command used for replication",
            "2.8.0",
            "",
            "replicationid offset:integer",
        ),
    Command::new("replconf", replconf, -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY)
        .acl(acl::ADMIN | acl::DANGEROUS)
        .group("server")
        .syscmd()
        .doc(
            "An internal command for configuring the replication stream",
            "3.0.0",
            "O(1)",
            "",
        ),
    Command::new("wait", wait, 3, NOSCRIPT)
        .acl(acl::CONNECTION)
        .group("generic")
        .tips(&["request_policy:all_shards", "response_policy:agg_min"])
        .doc(
            "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
            "3.0.0",
            "O(1)",
            "numreplicas:integer timeout:integer",
        ),
    Command::new("role", role, 1, NOSCRIPT | LOADING | STALE | FAST)
        .acl(acl::ADMIN | acl::DANGEROUS)
        .group("server")
        .doc(
            "Return the role of the instance in the context of replication",
            "2.8.12",
            "O(1)",
            "",
        ),
];
