//! The cluster client commands of a server that is not part of a cluster (Redis with
//! `cluster-enabled no`): READONLY, READWRITE and ASKING exist and refuse, with Redis's error, so
//! that a client probing for cluster mode learns it is off.

use super::{Args, CmdResult, Command, Ctx, FAST, LOADING, STALE};

const GROUP: &str = "cluster";

const DISABLED: &str = "ERR This instance has cluster support disabled";

/// READONLY
///
/// # Format
/// `READONLY` — on a server outside a cluster, the error `ERR This instance has cluster support
/// disabled`.
fn readonly(_ctx: &mut Ctx, _args: Args) -> CmdResult {
    Err(DISABLED.into())
}

/// READWRITE
///
/// # Format
/// `READWRITE` — the same error as READONLY.
fn readwrite(_ctx: &mut Ctx, _args: Args) -> CmdResult {
    Err(DISABLED.into())
}

/// ASKING
///
/// # Format
/// `ASKING` — the same error as READONLY.
fn asking(_ctx: &mut Ctx, _args: Args) -> CmdResult {
    Err(DISABLED.into())
}

pub const COMMANDS: &[Command] = &[
    Command::new("readonly", readonly, 1, FAST | LOADING | STALE)
        .acl(super::acl::CONNECTION)
        .group(GROUP)
        .doc(
            "Enables read queries for a connection to a cluster replica node",
            "3.0.0",
            "O(1)",
            "",
        ),
    Command::new("readwrite", readwrite, 1, FAST | LOADING | STALE)
        .acl(super::acl::CONNECTION)
        .group(GROUP)
        .doc(
            "Disables read queries for a connection to a cluster replica node",
            "3.0.0",
            "O(1)",
            "",
        ),
    Command::new("asking", asking, 1, FAST)
        .acl(super::acl::CONNECTION)
        .group(GROUP)
        .doc(
            "Sent by cluster clients after an -ASK redirect",
            "3.0.0",
            "O(1)",
            "",
        ),
];
