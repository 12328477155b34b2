//! Sorted-set ranges (Redis's t_zset.c): ZRANGE with BYSCORE, BYLEX, REV and LIMIT, its older
//! forms (ZREVRANGE, Z[REV]RANGEBYSCORE, Z[REV]RANGEBYLEX), ZRANGESTORE, and the removals by range
//! (ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX). `select` finds the nodes a range selects for
//! all of them; `range_generic` is Redis's `zrangeGenericCommand`, `remrange_generic` its
//! `zremrangeGenericCommand`. The other sorted-set commands, and the helpers these share with
//! them, are in `zset.rs`.

use super::keyspec::{ACCESS, DELETE, OW, RO, RW, UPDATE};
use super::parse::{int, is, lex_range, score_range};
use super::zset::{delete_if_emptied, limits, read, reply_nodes, store_result, write};
use super::{Args, CmdResult, Command, Ctx, DENYOOM, READONLY, WRITE};
use crate::resp::reply::SYNTAX;
use crate::server::notify::ZSET;
use crate::store::zset::{NodeId, Range};
use crate::store::ZSet;

const GROUP: &str = "sorted-set";

/// What a range command selects: ranks (`start stop`) or a score/lex range.
enum Select {
    Rank(i64, i64),
    Range(Range),
}

/// The nodes a range selects, in reply order: Redis's `genericZrangebyrankCommand`,
/// `genericZrangebyscoreCommand` and `genericZrangebylexCommand`. `limit` < 0 means no limit; a
/// negative `offset` selects nothing, as in Redis.
fn select(z: &ZSet, sel: &Select, rev: bool, offset: i64, limit: i64) -> Vec<NodeId> {
    let len = z.len() as i64;
    let mut ids = Vec::new();
    match sel {
        Select::Rank(start, end) => {
            let (mut start, mut end) = (*start, *end);
            if start < 0 {
                start += len;
            }
            if end < 0 {
                end += len;
            }
            start = start.max(0);
            if start > end || start >= len {
                return ids;
            }
            end = end.min(len - 1);
            let n = (end - start + 1) as usize;
            ids.reserve(n);
            let first = if rev { len - 1 - start } else { start };
            let mut cur = z.at_rank(first as usize);
            while let Some(id) = cur {
                if ids.len() == n {
                    break;
                }
                ids.push(id);
                cur = if rev { z.prev(id) } else { z.next(id) };
            }
        }
        Select::Range(range) => {
            if offset > 0 && offset >= len {
                return ids;
            }
            let mut cur = if rev {
                z.last_in(range)
            } else {
                z.first_in(range)
            };
            if offset < 0 {
                return ids;
            }
            if offset > 0 {
                // Skipping is by rank, without checking the range (as Redis's skip loop).
                cur = cur.and_then(|id| {
                    let r = z.rank_of_node(id) as i64;
                    let t = if rev { r - offset } else { r + offset };
                    (0..len)
                        .contains(&t)
                        .then(|| z.at_rank(t as usize))
                        .flatten()
                });
            }
            let mut left = limit;
            while let Some(id) = cur {
                if left == 0 {
                    break;
                }
                let (m, s) = z.get(id);
                let inside = if rev {
                    range.above_min(s, m)
                } else {
                    range.below_max(s, m)
                };
                if !inside {
                    break;
                }
                ids.push(id);
                left -= 1;
                cur = if rev { z.prev(id) } else { z.next(id) };
            }
        }
    }
    ids
}

#[derive(Clone, Copy, PartialEq)]
enum RangeKind {
    Auto,
    Rank,
    Score,
    Lex,
}

/// Redis's `zrangeGenericCommand`: the key is `args[at]`, then `min max` and options. `store`
/// holds ZRANGESTORE's destination.
fn range_generic(
    ctx: &mut Ctx,
    args: Args,
    at: usize,
    store: Option<&[u8]>,
    mut kind: RangeKind,
    rev: Option<bool>,
) -> CmdResult {
    let key = &args[at];
    let (mut minidx, mut maxidx) = (at + 1, at + 2);
    let mut withscores = false;
    let (mut offset, mut limit) = (0i64, -1i64);
    let mut direction = rev;
    let mut j = at + 3;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = &args[j];
        if store.is_none() && is(a, "withscores") {
            withscores = true;
        } else if is(a, "limit") && left >= 2 {
            offset = int(&args[j + 1])?;
            limit = int(&args[j + 2])?;
            j += 2;
        } else if direction.is_none() && is(a, "rev") {
            direction = Some(true);
        } else if kind == RangeKind::Auto && is(a, "bylex") {
            kind = RangeKind::Lex;
        } else if kind == RangeKind::Auto && is(a, "byscore") {
            kind = RangeKind::Score;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    let rev = direction.unwrap_or(false);
    if kind == RangeKind::Auto {
        kind = RangeKind::Rank;
    }
    if limit != -1 && kind == RangeKind::Rank {
        return Err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
                .into(),
        );
    }
    if withscores && kind == RangeKind::Lex {
        return Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX".into());
    }
    if rev && kind != RangeKind::Rank {
        std::mem::swap(&mut minidx, &mut maxidx);
    }
    let sel = match kind {
        RangeKind::Score => Select::Range(score_range(&args[minidx], &args[maxidx])?),
        RangeKind::Lex => Select::Range(lex_range(&args[minidx], &args[maxidx])?),
        _ => Select::Rank(int(&args[minidx])?, int(&args[maxidx])?),
    };
    let lim = limits(ctx);
    let db = &mut ctx.srv.dbs[ctx.db];
    let z = read(db, key)?;
    let Some(dst) = store else {
        match z {
            None => ctx.out.array(0),
            Some(z) => {
                let ids = select(z, &sel, rev, offset, limit);
                reply_nodes(ctx.out, z, &ids, withscores);
            }
        }
        return Ok(());
    };
    let result = z.map(|z| {
        let ids = select(z, &sel, rev, offset, limit);
        let max_len = ids.iter().map(|&id| z.get(id).0.len()).max().unwrap_or(0);
        let mut out = ZSet::for_result(ids.len(), max_len, lim);
        for &id in &ids {
            let (m, s) = z.get(id);
            out.insert(m, s, lim);
        }
        out
    });
    store_result(ctx, dst, result.unwrap_or_default(), "zrangestore");
    Ok(())
}

/// ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
///
/// # Format
/// `ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]` — the members
/// in the range (by rank unless BYSCORE/BYLEX); WITHSCORES adds scores (pairs in RESP3).
fn zrange(ctx: &mut Ctx, args: Args) -> CmdResult {
    range_generic(ctx, args, 1, None, RangeKind::Auto, None)
}

/// ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]
///
/// # Format
/// `ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]` — stores the range at
/// `dst` and replies its size (an empty range deletes `dst`).
fn zrangestore(ctx: &mut Ctx, args: Args) -> CmdResult {
    let dst = args.get(1).expect("arity");
    range_generic(ctx, args, 2, Some(dst), RangeKind::Auto, None)
}

/// ZREVRANGE key start stop [WITHSCORES]
///
/// # Format
/// `ZREVRANGE key start stop [WITHSCORES]` — members by rank, highest score first.
fn zrevrange(ctx: &mut Ctx, args: Args) -> CmdResult {
    range_generic(ctx, args, 1, None, RangeKind::Rank, Some(true))
}

/// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
///
/// # Format
/// `ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]` — members with scores in range.
fn zrangebyscore(ctx: &mut Ctx, args: Args) -> CmdResult {
    range_generic(ctx, args, 1, None, RangeKind::Score, Some(false))
}

/// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
///
/// # Format
/// `ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]` — as ZRANGEBYSCORE, highest
/// first.
fn zrevrangebyscore(ctx: &mut Ctx, args: Args) -> CmdResult {
    range_generic(ctx, args, 1, None, RangeKind::Score, Some(true))
}

/// ZRANGEBYLEX key min max [LIMIT offset count]
///
/// # Format
/// `ZRANGEBYLEX key min max [LIMIT offset count]` — members in the lex range.
fn zrangebylex(ctx: &mut Ctx, args: Args) -> CmdResult {
    range_generic(ctx, args, 1, None, RangeKind::Lex, Some(false))
}

/// ZREVRANGEBYLEX key max min [LIMIT offset count]
///
/// # Format
/// `ZREVRANGEBYLEX key max min [LIMIT offset count]` — as ZRANGEBYLEX, in reverse order.
fn zrevrangebylex(ctx: &mut Ctx, args: Args) -> CmdResult {
    range_generic(ctx, args, 1, None, RangeKind::Lex, Some(true))
}

/// Redis's `zremrangeGenericCommand`; `event` names the command's keyspace event.
fn remrange_generic(ctx: &mut Ctx, args: Args, sel: Select, event: &'static str) -> CmdResult {
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(z) = write(db, key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let members: Vec<Vec<u8>> = select(z, &sel, false, 0, -1)
        .into_iter()
        .map(|id| z.get(id).0.to_vec())
        .collect();
    for m in &members {
        z.remove(m);
    }
    let emptied = z.is_empty();
    if !members.is_empty() {
        ctx.signal_modified(key);
        ctx.notify(ZSET, event, key);
        delete_if_emptied(ctx, key, emptied);
    }
    ctx.srv.dirty += members.len() as u64;
    ctx.out.int(members.len() as i64);
    Ok(())
}

/// ZREMRANGEBYRANK key start stop
///
/// # Format
/// `ZREMRANGEBYRANK key start stop` — how many members were removed (ranks may be negative).
fn zremrangebyrank(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sel = Select::Rank(int(&args[2])?, int(&args[3])?);
    remrange_generic(ctx, args, sel, "zremrangebyrank")
}

/// ZREMRANGEBYSCORE key min max
///
/// # Format
/// `ZREMRANGEBYSCORE key min max` — how many members were removed.
fn zremrangebyscore(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sel = Select::Range(score_range(&args[2], &args[3])?);
    remrange_generic(ctx, args, sel, "zremrangebyscore")
}

/// ZREMRANGEBYLEX key min max
///
/// # Format
/// `ZREMRANGEBYLEX key min max` — how many members were removed.
fn zremrangebylex(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sel = Select::Range(lex_range(&args[2], &args[3])?);
    remrange_generic(ctx, args, sel, "zremrangebylex")
}

pub const COMMANDS: &[Command] = &[
    Command::new("zrange", zrange, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options.")])
        .arg_since(&[("sortby", "6.2.0"), ("rev", "6.2.0"), ("offset_count", "6.2.0")])
        .doc("Return a range of members in a sorted set", "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
            "key start stop [sortby:(BYSCORE | BYLEX)] [REV] [LIMIT offset:integer count:integer] [WITHSCORES]"),
    Command::new("zrangestore", zrangestore, -5, WRITE | DENYOOM).key(1, OW | UPDATE).key(2, RO | ACCESS).group(GROUP)
        .doc("Store a range of members from sorted set into another key", "6.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
            "dst:key src:key min max [sortby:(BYSCORE | BYLEX)] [REV] [LIMIT offset:integer count:integer]"),
    Command::new("zrevrange", zrevrange, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .deprecated("6.2.0", "`ZRANGE` with the `REV` argument")
        .doc("Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.", "key start:integer stop:integer [WITHSCORES]"),
    Command::new("zrangebyscore", zrangebyscore, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("2.0.0", "Added the `WITHSCORES` modifier.")])
        .deprecated("6.2.0", "`ZRANGE` with the `BYSCORE` argument")
        .arg_since(&[("withscores", "2.0.0")])
        .doc("Return a range of members in a sorted set, by score", "1.0.5", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            "key min:double max:double [WITHSCORES] [LIMIT offset:integer count:integer]"),
    Command::new("zrevrangebyscore", zrevrangebyscore, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("2.1.6", "`min` and `max` can be exclusive.")])
        .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments")
        .doc("Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            "key max:double min:double [WITHSCORES] [LIMIT offset:integer count:integer]"),
    Command::new("zrangebylex", zrangebylex, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .deprecated("6.2.0", "`ZRANGE` with the `BYLEX` argument")
        .doc("Return a range of members in a sorted set, by lexicographical range", "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            "key min max [LIMIT offset:integer count:integer]"),
    Command::new("zrevrangebylex", zrevrangebylex, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments")
        .doc("Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            "key max min [LIMIT offset:integer count:integer]"),
    Command::new("zremrangebyrank", zremrangebyrank, 4, WRITE).key(1, RW | DELETE).group(GROUP)
        .doc("Remove all members in a sorted set within the given indexes", "2.0.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.", "key start:integer stop:integer"),
    Command::new("zremrangebyscore", zremrangebyscore, 4, WRITE).key(1, RW | DELETE).group(GROUP)
        .doc("Remove all members in a sorted set within the given scores", "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.", "key min:double max:double"),
    Command::new("zremrangebylex", zremrangebylex, 4, WRITE).key(1, RW | DELETE).group(GROUP)
        .doc("Remove all members in a sorted set between the given lexicographical range", "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.", "key min max"),
];
