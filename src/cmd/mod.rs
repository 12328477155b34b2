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

pub mod acl;
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
pub mod lolwut;
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
pub mod stream;
pub mod stream_group;
pub mod string;
pub mod zset;
pub mod zset_range;
pub mod zset_setop;

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
        acl::COMMANDS,
        server::COMMANDS,
        debug::COMMANDS,
        memory::COMMANDS,
        latency::COMMANDS,
        lolwut::COMMANDS,
        module::COMMANDS,
        cluster::COMMANDS,
        slowlog::COMMANDS,
        replication::COMMANDS,
        monitor::COMMANDS,
        persist::COMMANDS,
        command::COMMANDS,
        zset::COMMANDS,
        zset_range::COMMANDS,
        zset_setop::COMMANDS,
        stream::COMMANDS,
        stream_group::COMMANDS,
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
            // A finder is for what the specs cannot say: where some key is, or how this line
            // uses it; and a row whose specs say the flags vary needs one to tell them.
            let variable = c.key_specs.all_flags() & keyspec::VARIABLE_FLAGS != 0;
            assert!(
                c.key_finder.is_none() || movable || variable,
                "{} has a key finder but its key specs find every key, with fixed flags",
                c.name
            );
            assert!(
                !variable || c.key_finder.is_some(),
                "{}: its key flags vary with the line, but it has no key finder to give them",
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

    /// Every family gives rows, and every name (subcommands' included) is lowercase and belongs to
    /// one row of one family; a top-level name has no `|` (a subcommand's starts with its
    /// container's, `every_row_is_complete`).
    ///
    /// The other half of "every handler has a row" is the compiler's: handlers are private
    /// functions of their family's file, so one that no row names is dead code, which the
    /// `dead_code` lint reports and clippy's `-D warnings` refuses.
    #[test]
    fn families_hold_distinct_rows() {
        let mut names = std::collections::HashSet::new();
        for (i, family) in families().iter().enumerate() {
            assert!(!family.is_empty(), "family {i} of families() has no rows");
            for c in family.iter() {
                assert!(
                    !c.name.contains('|'),
                    "{} is a subcommand at the top",
                    c.name
                );
                for row in std::iter::once(c).chain(c.subcommands) {
                    assert_eq!(row.name, row.name.to_ascii_lowercase(), "{}", row.name);
                    assert!(names.insert(row.name), "{} is defined twice", row.name);
                }
            }
        }
    }

    /// The fewest words a syntax argument takes: nothing when optional, one occurrence when
    /// repeated, the cheapest choice of a `oneof`.
    fn fewest_words(a: &command::DocArg) -> usize {
        if a.optional {
            return 0;
        }
        let own = match a.kind {
            "pure-token" => return 1,
            "block" => a.args.iter().map(fewest_words).sum(),
            "oneof" => a.args.iter().map(fewest_words).min().unwrap_or(0),
            _ => 1,
        };
        own + a.token.is_some() as usize
    }

    fn may_take_more(a: &command::DocArg) -> bool {
        a.optional || a.multiple || a.args.iter().any(may_take_more)
    }

    fn names_a_key(a: &command::DocArg) -> bool {
        a.kind == "key" || a.args.iter().any(names_a_key)
    }

    /// A row's syntax line, its arity and its keys tell one story: the arity is the shortest line
    /// the syntax allows (negative when the syntax allows longer ones), and the syntax names a
    /// key exactly when the key specs or the key finder find one.
    #[test]
    fn syntax_agrees_with_arity_and_keys() {
        // Redis's own arities that its documented syntax does not give (COMMAND INFO shows them,
        // and the differential tests hold us to them).
        const REDIS_ARITIES: &[&str] = &[
            "quit",
            "client|kill",
            "cluster|setslot",
            "command",
            "command|getkeys",
            "command|getkeysandflags",
            "geopos",
            "geohash",
            "pfmerge",
            "replconf",
            "psync",
        ];
        let t = Table::build(families());
        for c in &t.rows {
            if c.handler.is_none() {
                continue;
            }
            let args = command::doc_args(c.syntax);
            let words = if c.name.contains('|') { 2 } else { 1 };
            let shortest = (words + args.iter().map(fewest_words).sum::<usize>()) as i32;
            let arity = if args.iter().any(may_take_more) {
                -shortest
            } else {
                shortest
            };
            assert_eq!(
                arity == c.arity,
                !REDIS_ARITIES.contains(&c.name),
                "{}: arity {} but its syntax says {arity}",
                c.name,
                c.arity
            );
            assert_eq!(
                args.iter().any(names_a_key),
                c.key_specs.has_keys() || c.key_finder.is_some(),
                "{}: its syntax and its key specs disagree on whether it has keys",
                c.name
            );
        }
    }
}
