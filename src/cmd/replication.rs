//! The replication commands a stand-alone server answers (Redis's replication.c): WAIT and ROLE.
//! Goblin Core has no replicas (REPLICAOF, SYNC and PSYNC do not exist), so it is always a master
//! at replication offset 0, as a Redis master without replicas reports.

use super::parse::{int, timeout_ms};
use super::{acl, Args, CmdResult, Command, Ctx, FAST, LOADING, NOSCRIPT, STALE};
use crate::server::blocking::{TimeoutReply, Wait};

/// WAIT numreplicas timeout
///
/// # Format
/// `WAIT numreplicas timeout` — how many replicas acknowledged the connection's writes: always 0.
/// Asking for none answers at once; asking for one or more waits `timeout` milliseconds (0:
/// forever, until CLIENT UNBLOCK), as Redis does when no replica answers. Inside MULTI or a script
/// it answers at once.
fn wait(ctx: &mut Ctx, args: Args) -> CmdResult {
    let replicas = int(&args[1])?;
    let timeout = timeout_ms(&args[2])?;
    if replicas <= 0 {
        ctx.out.int(0);
        return Ok(());
    }
    const NO_ACKS: Wait = Wait {
        type_name: "",
        on_timeout: TimeoutReply::Zero,
        denied: TimeoutReply::Zero,
        gone: None,
    };
    ctx.block_on(args, &[], timeout, NO_ACKS)
}

/// ROLE
///
/// # Format
/// `ROLE` — `["master", 0, []]`: a master at replication offset 0 with no replicas.
fn role(ctx: &mut Ctx, _args: Args) -> CmdResult {
    ctx.out.array(3);
    ctx.out.bulk(b"master");
    ctx.out.int(0);
    ctx.out.array(0);
    Ok(())
}

pub const COMMANDS: &[Command] = &[
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
