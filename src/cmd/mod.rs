//! Commands: the families, one file each, every handler beside its `Command` row (`string.rs` has
//! GET, SET, ...; `keys.rs` DEL, EXPIRE, SCAN, ...; `server.rs` INFO, CONFIG, ...; `multi.rs`
//! MULTI and EXEC). The row type, the flags and the key specs are the kernel's
//! (`server::table`, `server::keyspec`); `families()` is every family's rows, from which `main`
//! builds the table.
//!
//! A handler is `fn(&mut Ctx, Args) -> CmdResult` (`server::ctx`): it reads its arguments, works
//! on the store, and answers through `ctx.out` (the reply builder) or by returning an error, which
//! the gate replies. A write that must replay differently from how it was called says so through
//! `Ctx::propagate_as` or `Ctx::propagate` (`server::propagate`).

pub mod bitops;
pub mod cluster;
pub mod command;
pub mod connection;
pub mod debug;
pub mod function;
pub mod geo;
pub mod goblin;
pub mod hash;
pub mod hyperloglog;
pub mod keys;
pub mod latency;
pub mod list;
pub mod memory;
pub mod module;
pub mod monitor;
pub mod multi;
pub mod parse;
pub mod persist;
pub mod pubsub;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod set;
pub mod slowlog;
pub mod sort;
pub mod string;
pub mod zset;

// The kernel's handler interface and table rows, under the names every family uses.
pub use crate::resp::parser::Args;
pub use crate::server::ctx::{err, CmdError, CmdResult, Ctx};
pub use crate::server::keyspec;
pub use crate::server::table::*;

/// Every command family, in the order COMMAND lists them.
pub fn families() -> &'static [&'static [Command]] {
    &[
        string::COMMANDS,
        bitops::COMMANDS,
        hash::COMMANDS,
        set::COMMANDS,
        keys::COMMANDS,
        sort::COMMANDS,
        list::COMMANDS,
        connection::COMMANDS,
        server::COMMANDS,
        debug::COMMANDS,
        memory::COMMANDS,
        latency::COMMANDS,
        module::COMMANDS,
        cluster::COMMANDS,
        slowlog::COMMANDS,
        replication::COMMANDS,
        monitor::COMMANDS,
        persist::COMMANDS,
        command::COMMANDS,
        zset::COMMANDS,
        geo::COMMANDS,
        hyperloglog::COMMANDS,
        multi::COMMANDS,
        function::COMMANDS,
        pubsub::COMMANDS,
        scripting::LUA_COMMANDS,
        scripting::LUAU_COMMANDS,
        scripting::QUICKJS_COMMANDS,
        scripting::WREN_COMMANDS,
        scripting::UPYTHON_COMMANDS,
        scripting::TCL_COMMANDS,
        goblin::COMMANDS,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name in any case finds its row, first from the map and then from `recent`; names
    /// that share a slot or differ in one byte never find each other's row.
    #[test]
    fn find_by_any_case_and_through_recent_names() {
        let t = Table::build(families());
        for _ in 0..2 {
            for (idx, c) in t.rows.iter().enumerate() {
                let lower = c.name.as_bytes().to_vec();
                let upper = lower.to_ascii_uppercase();
                let mut mixed = lower.clone();
                mixed[0] = mixed[0].to_ascii_uppercase();
                for name in [&lower, &upper, &mixed] {
                    assert_eq!(t.find(name), Some(idx), "{}", c.name);
                }
                let mut other = upper.clone();
                *other.last_mut().unwrap() ^= 0x01;
                let found = t.find(&other);
                assert!(found.is_none() || found != Some(idx), "{}", c.name);
            }
        }
        for unknown in [
            &b""[..],
            b"g",
            b"ge",
            b"gett",
            b"getdelx",
            b"goblin.cadd",
            b"x".repeat(40).as_slice(),
        ] {
            assert_eq!(t.find(unknown), None);
            assert_eq!(t.find(unknown), None);
        }
    }

    #[test]
    fn every_row_is_complete() {
        let t = Table::build(families());
        for c in &t.rows {
            assert!(c.arity != 0, "{} has no arity", c.name);
            assert!(!c.group.is_empty(), "{} has no group", c.name);
            assert!(!c.summary.is_empty(), "{} has no summary", c.name);
            assert!(!c.since.is_empty(), "{} has no since", c.name);
            // Every row has a handler, or is a container whose subcommands all have one.
            if c.handler.is_none() {
                assert!(
                    !c.subcommands.is_empty(),
                    "{} has neither handler nor subcommands",
                    c.name
                );
            }
            for s in c.subcommands {
                assert!(s.handler.is_some(), "{} has no handler", s.name);
                assert!(
                    s.name.starts_with(&format!("{}|", c.name)),
                    "{} misnamed",
                    s.name
                );
            }
            if c.first_key > 0 {
                assert!(c.key_step > 0, "{} has keys but no step", c.name);
            }
            // Redis derives `movablekeys` from the key specs; the rows declare it, and agree.
            let movable = c.key_specs.legacy().movable;
            assert_eq!(c.has(MOVABLEKEYS), movable, "{}: movablekeys", c.name);
            assert!(
                c.key_finder.is_none() || movable,
                "{} has a key finder but its key specs find every key",
                c.name
            );
            // Every key spec says how the key is used: one of RO, RW, OW, RM (a shard channel's
            // `not_key` spec none).
            for ks in c.key_specs.as_slice() {
                let access = keyspec::RO | keyspec::RW | keyspec::OW | keyspec::RM;
                assert!(
                    (ks.flags & access).count_ones() == 1 || ks.flags & keyspec::NOT_KEY != 0,
                    "{}: a key spec needs exactly one of RO, RW, OW, RM",
                    c.name
                );
            }
        }
        assert!(t.find(b"GeT").is_some());
        assert!(t.find(b"nosuch").is_none());
        let config = t.find(b"config").unwrap();
        assert!(t.find_sub(config, b"get").is_some());
    }

    /// Every handler function in a family file is named by some table row (a handler without a row
    /// would be unreachable), and every row's handler is a function of its own family file.
    #[test]
    fn every_handler_has_a_row() {
        let families = [
            include_str!("string.rs"),
            include_str!("bitops.rs"),
            include_str!("keys.rs"),
            include_str!("list.rs"),
            include_str!("connection.rs"),
            include_str!("server.rs"),
            include_str!("command.rs"),
            include_str!("scripting.rs"),
            include_str!("hash.rs"),
            include_str!("set.rs"),
            include_str!("zset.rs"),
            include_str!("multi.rs"),
            include_str!("function.rs"),
            include_str!("pubsub.rs"),
            include_str!("goblin.rs"),
            include_str!("sort.rs"),
            include_str!("slowlog.rs"),
            include_str!("memory.rs"),
            include_str!("latency.rs"),
            include_str!("module.rs"),
            include_str!("cluster.rs"),
            include_str!("monitor.rs"),
            include_str!("replication.rs"),
            include_str!("hyperloglog.rs"),
            include_str!("geo.rs"),
        ];
        for src in families {
            let handlers: Vec<&str> = src
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("fn "))
                .filter(|l| l.contains(": &mut Ctx, ") && l.ends_with(": Args) -> CmdResult {"))
                .map(|l| l.split('(').next().unwrap())
                .collect();
            assert!(!handlers.is_empty());
            // Rows may be wrapped over lines by rustfmt: compare with the whitespace removed.
            let flat: String = src.split_whitespace().collect();
            // Rows written by a macro for a name prefix (the scripting engines) read
            // `Command::new(concat!($p,"name"),handler,...`.
            let row_handlers: Vec<&str> = flat
                .split("Command::new(\"")
                .skip(1)
                .map(|row| row.split(',').nth(1).unwrap())
                .chain(
                    flat.split("Command::new(concat!(")
                        .skip(1)
                        .map(|row| row.split(',').nth(2).unwrap()),
                )
                .collect();
            for h in &handlers {
                assert!(row_handlers.contains(h), "handler {h} has no command row");
            }
            for h in &row_handlers {
                assert!(
                    handlers.contains(h),
                    "a row uses {h}, which is not a handler of this family"
                );
            }
        }
    }
}
