//! The cluster commands of a server that is not part of a cluster (Redis with `cluster-enabled
//! no`): CLUSTER and its subcommands, READONLY, READWRITE and ASKING exist and refuse with Redis's
//! error, so that a client probing for cluster mode learns it is off.

use super::{
    Args, CmdResult, Command, Ctx, ADMIN, FAST, LOADING, NOSCRIPT, NO_ASYNC_LOADING, STALE,
};

const GROUP: &str = "cluster";

const DISABLED: &str = "ERR This instance has cluster support disabled";

/// CLUSTER subcommand [argument ...]
///
/// # Format
/// `CLUSTER <subcommand> ...` — every subcommand, HELP included, replies `ERR This instance has
/// cluster support disabled`, as a Redis outside a cluster.
fn cluster(_ctx: &mut Ctx, _args: Args) -> CmdResult {
    Err(DISABLED.into())
}

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

const CLUSTER_SUBCOMMANDS: &[Command] = &[
    Command::new("cluster|keyslot", cluster, 3, STALE)
        .group(GROUP)
        .doc("Returns the hash slot of the specified key", "3.0.0", "O(N) where N is the number of bytes in the key", "key:string"),
    Command::new("cluster|reset", cluster, -2, ADMIN | NOSCRIPT | STALE)
        .group(GROUP)
        .doc("Reset a Redis Cluster node", "3.0.0", "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.", "[HARD | SOFT]"),
    Command::new("cluster|saveconfig", cluster, 2, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Forces the node to save cluster state on disk", "3.0.0", "O(1)", ""),
    Command::new("cluster|delslots", cluster, -3, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Set hash slots as unbound in receiving node", "3.0.0", "O(N) where N is the total number of hash slot arguments", "slot:integer [slot:integer ...]"),
    Command::new("cluster|shards", cluster, 2, STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Get array of cluster slots to node mappings", "7.0.0", "O(N) where N is the total number of cluster nodes", ""),
    Command::new("cluster|replicas", cluster, 3, ADMIN | STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("List replica nodes of the specified master node", "5.0.0", "O(1)", "node-id"),
    Command::new("cluster|info", cluster, 2, STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Provides info about Redis Cluster node state", "3.0.0", "O(1)", ""),
    Command::new("cluster|addslotsrange", cluster, -4, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Assign new hash slots to receiving node", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments.", "start-slot:integer end-slot:integer [start-slot:integer end-slot:integer ...]"),
    Command::new("cluster|countkeysinslot", cluster, 3, STALE)
        .group(GROUP)
        .doc("Return the number of local keys in the specified hash slot", "3.0.0", "O(1)", "slot:integer"),
    Command::new("cluster|setslot", cluster, -4, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Bind a hash slot to a specific node", "3.0.0", "O(1)", "slot:integer subcommand:(IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE)"),
    Command::new("cluster|replicate", cluster, 3, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Reconfigure a node as a replica of the specified master node", "3.0.0", "O(1)", "node-id"),
    Command::new("cluster|set-config-epoch", cluster, 3, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Set the configuration epoch in a new node", "3.0.0", "O(1)", "config-epoch:integer"),
    Command::new("cluster|help", cluster, 2, LOADING | STALE)
        .group(GROUP)
        .doc("Show helpful text about the different subcommands", "5.0.0", "O(1)", ""),
    Command::new("cluster|myid", cluster, 2, STALE)
        .group(GROUP)
        .doc("Return the node id", "3.0.0", "O(1)", ""),
    Command::new("cluster|getkeysinslot", cluster, 4, STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Return local key names in the specified hash slot", "3.0.0", "O(log(N)) where N is the number of requested keys", "slot:integer count:integer"),
    Command::new("cluster|addslots", cluster, -3, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Assign new hash slots to receiving node", "3.0.0", "O(N) where N is the total number of hash slot arguments", "slot:integer [slot:integer ...]"),
    Command::new("cluster|slaves", cluster, 3, ADMIN | STALE)
        .tips(&["nondeterministic_output"])
        .deprecated("5.0.0", "`CLUSTER REPLICAS`")
        .group(GROUP)
        .doc("List replica nodes of the specified master node", "3.0.0", "O(1)", "node-id"),
    Command::new("cluster|bumpepoch", cluster, 2, ADMIN | STALE | NO_ASYNC_LOADING)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Advance the cluster config epoch", "3.0.0", "O(1)", ""),
    Command::new("cluster|count-failure-reports", cluster, 3, ADMIN | STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Return the number of failure reports active for a given node", "3.0.0", "O(N) where N is the number of failure reports", "node-id"),
    Command::new("cluster|delslotsrange", cluster, -4, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Set hash slots as unbound in receiving node", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments.", "start-slot:integer end-slot:integer [start-slot:integer end-slot:integer ...]"),
    Command::new("cluster|meet", cluster, -4, ADMIN | STALE | NO_ASYNC_LOADING)
        .history(&[("4.0.0", "Added the optional `cluster_bus_port` argument.")])
        .arg_since(&[("cluster_bus_port", "4.0.0")])
        .group(GROUP)
        .doc("Force a node cluster to handshake with another node", "3.0.0", "O(1)", "ip port:integer [cluster_bus_port:integer]"),
    Command::new("cluster|nodes", cluster, 2, STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Get Cluster config for the node", "3.0.0", "O(N) where N is the total number of Cluster nodes", ""),
    Command::new("cluster|slots", cluster, 2, STALE)
        .tips(&["nondeterministic_output"])
        .deprecated("7.0.0", "`CLUSTER SHARDS`")
        .history(&[("4.0.0", "Added node IDs."), ("7.0.0", "Added additional networking metadata field.")])
        .group(GROUP)
        .doc("Get array of Cluster slot to node mappings", "3.0.0", "O(N) where N is the total number of Cluster nodes", ""),
    Command::new("cluster|flushslots", cluster, 2, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Delete a node's own slots information", "3.0.0", "O(1)", ""),
    Command::new("cluster|failover", cluster, -2, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Forces a replica to perform a manual failover of its master.", "3.0.0", "O(1)", "[options:(FORCE | TAKEOVER)]"),
    Command::new("cluster|links", cluster, 2, STALE)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc("Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0", "O(N) where N is the total number of Cluster nodes", ""),
    Command::new("cluster|forget", cluster, 3, ADMIN | STALE | NO_ASYNC_LOADING)
        .group(GROUP)
        .doc("Remove a node from the nodes table", "3.0.0", "O(1)", "node-id"),
];

/// CLUSTER: a container whose every subcommand refuses (see `cluster`).
const CLUSTER_CONTAINER: Command = Command::container("cluster", -2, CLUSTER_SUBCOMMANDS)
    .group(GROUP)
    .doc(
        "A container for cluster commands",
        "3.0.0",
        "Depends on subcommand.",
        "",
    );

pub const COMMANDS: &[Command] = &[
    CLUSTER_CONTAINER,
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
