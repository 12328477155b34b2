//! MODULE, and the cluster commands of a server outside a cluster (CLUSTER, READONLY, READWRITE,
//! ASKING), compared with redis-server byte for byte: client libraries call MODULE LIST to find
//! modules and CLUSTER INFO or READONLY to probe for a cluster, and must learn the same as from
//! Redis.

mod common;
use common::{compare_both, scenarios};

#[test]
fn module_and_cluster_commands_match_redis() {
    compare_both(&[&[
        "MODULE LIST",
        "MODULE HELP",
        "MODULE LOAD /nonexistent/module.so",
        "MODULE LOADEX /nonexistent/module.so CONFIG a b ARGS c",
        "MODULE UNLOAD nosuch",
        "MODULE FOO",
        "MODULE",
        "MODULE LIST x",
        "MODULE UNLOAD",
        "CLUSTER INFO",
        "CLUSTER HELP",
        "CLUSTER SLOTS",
        "CLUSTER SHARDS",
        "CLUSTER NODES",
        "CLUSTER MYID",
        "CLUSTER KEYSLOT foo",
        "CLUSTER SETSLOT 1 NODE x",
        "CLUSTER RESET HARD",
        "CLUSTER",
        "CLUSTER FOO",
        "CLUSTER INFO x",
        "CLUSTER KEYSLOT",
        "READONLY",
        "READWRITE",
        "ASKING",
        "READONLY x",
    ]]);
}

/// With `enable-module-command yes`, loading and unloading fail as Redis's do for a module that
/// cannot be loaded or is not there.
#[test]
fn module_commands_when_allowed_match_redis() {
    scenarios(
        &["--enable-module-command", "yes"],
        &[&[
            "MODULE LOAD /nonexistent/module.so",
            "MODULE LOADEX /nonexistent/module.so CONFIG a b ARGS c d",
            "MODULE UNLOAD nosuch",
            "MODULE LIST",
            "CONFIG GET enable-module-command",
            "CONFIG SET enable-module-command no",
        ]],
    );
}
