//! Sorted sets (Redis's t_zset.c): ZADD and ZINCRBY, reads by member, rank and count, ZREM, pops
//! (and the blocking BZPOPMIN, BZPOPMAX and BZMPOP, which wait through `server::blocking`),
//! ZRANDMEMBER and ZSCAN, and the helpers every sorted-set command shares (`read`, `write`,
//! `reply_members`, `store_result`, ...). The range commands (ZRANGE and its kin, ZREMRANGEBY*)
//! are in `zset_range.rs`, the ZUNION/ZINTER/ZDIFF algebra in `zset_setop.rs`.
//!
//! Generic helpers serve the families as in Redis: `zadd_generic` (ZADD, ZINCRBY) and
//! `pop_generic` (ZPOPMIN, ZPOPMAX, ZMPOP, and through `bpop_generic` the blocking pops).

use super::keyspec::{keys_after_numkeys, ACCESS, DELETE, RO, RW, UPDATE};
use std::collections::HashSet;

use super::parse::{
    self, cursor, int, int_or, is, lex_range, positive, scan_args, score, score_range, ScanArgs,
};
use super::{
    Args, CmdError, CmdResult, Command, Ctx, BLOCKING, DENYOOM, FAST, MOVABLEKEYS, NOSCRIPT,
    READONLY, WRITE,
};
use crate::resp::reply::{Reply, NOT_INT, SYNTAX, WRONGTYPE};
use crate::server::blocking::{TimeoutReply, Wait};
use crate::server::notify::{GENERIC, ZSET};
use crate::store::zset::{Limits, NodeId, Range};
use crate::store::{glob, Db, Entry, Value, ZSet};
use crate::util::{fmt_g17, fmt_listpack_score, rand_u64};

const GROUP: &str = "sorted-set";

const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";

/// The encoding thresholds from the configuration.
pub(crate) fn limits(ctx: &Ctx) -> Limits {
    Limits {
        entries: ctx.srv.config.zset_max_listpack_entries.max(0) as usize,
        value: ctx.srv.config.zset_max_listpack_value.max(0) as usize,
    }
}

fn as_zset(e: &mut Entry) -> Result<&mut ZSet, CmdError> {
    match &mut e.val {
        Value::ZSet(z) => Ok(z),
        _ => Err(WRONGTYPE.into()),
    }
}

/// A sorted set for reading: `Ok(None)` if absent, WRONGTYPE for another type.
pub(crate) fn read<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut ZSet>, CmdError> {
    db.lookup(key).map(as_zset).transpose()
}

/// A sorted set for writing (no hit/miss accounting).
pub(super) fn write<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut ZSet>, CmdError> {
    db.lookup_mut(key).map(as_zset).transpose()
}

/// Deletes `key` if its sorted set became empty (Redis deletes empty aggregates), firing `del`
/// after the command's own event.
pub(super) fn delete_if_emptied(ctx: &mut Ctx, key: &[u8], emptied: bool) {
    if emptied {
        ctx.db().remove(key);
        ctx.notify(GENERIC, "del", key);
    }
}

/// Members (and with `withscores` their scores) as Redis replies a range: a flat array in RESP2,
/// `[member, score]` pairs in RESP3.
pub(super) fn reply_members(
    out: &mut Reply,
    items: impl ExactSizeIterator<Item = (Vec<u8>, f64)>,
    withscores: bool,
) {
    let n = items.len();
    out.array(if withscores && !out.resp3 { 2 * n } else { n });
    for (m, s) in items {
        if withscores && out.resp3 {
            out.array(2);
        }
        out.bulk(&m);
        if withscores {
            out.double(s);
        }
    }
}

/// `reply_members` for nodes of `z`.
pub(super) fn reply_nodes(out: &mut Reply, z: &ZSet, ids: &[NodeId], withscores: bool) {
    let n = ids.len();
    out.array(if withscores && !out.resp3 { 2 * n } else { n });
    for &id in ids {
        let (m, s) = z.get(id);
        if withscores && out.resp3 {
            out.array(2);
        }
        out.bulk(m);
        if withscores {
            out.double(s);
        }
    }
}

/// ZADD's and ZINCRBY's options.
#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]
///
/// # Format
/// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]` — the number of members
/// added (with CH: added or changed); with INCR the member's new score, or nil if not applied.
fn zadd(ctx: &mut Ctx, args: Args) -> CmdResult {
    zadd_generic(ctx, args, false)
}

/// ZADD as run by GEOADD, which is the ZADD it rewrites itself into.
pub(super) fn zadd_for_geoadd(ctx: &mut Ctx, args: Args) -> CmdResult {
    zadd(ctx, args)
}

/// ZINCRBY key increment member
///
/// # Format
/// `ZINCRBY key increment member` — the member's new score (created at `increment` if absent).
fn zincrby(ctx: &mut Ctx, args: Args) -> CmdResult {
    zadd_generic(ctx, args, true)
}

/// Redis's `zaddGenericCommand`: ZADD, and ZINCRBY as ZADD INCR.
fn zadd_generic(ctx: &mut Ctx, args: Args, zincrby: bool) -> CmdResult {
    let mut f = AddFlags {
        incr: zincrby,
        ..AddFlags::default()
    };
    let mut at = 2;
    while !zincrby && at < args.len() {
        let opt = &args[at];
        if is(opt, "nx") {
            f.nx = true;
        } else if is(opt, "xx") {
            f.xx = true;
        } else if is(opt, "ch") {
            f.ch = true;
        } else if is(opt, "incr") {
            f.incr = true;
        } else if is(opt, "gt") {
            f.gt = true;
        } else if is(opt, "lt") {
            f.lt = true;
        } else {
            break;
        }
        at += 1;
    }
    let elements = args.len() - at;
    if !elements.is_multiple_of(2) || elements == 0 {
        return Err(SYNTAX.into());
    }
    let elements = elements / 2;
    if f.nx && f.xx {
        return Err("ERR XX and NX options at the same time are not compatible".into());
    }
    if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
        return Err("ERR GT, LT, and/or NX options at the same time are not compatible".into());
    }
    if f.incr && elements > 1 {
        return Err("ERR INCR option supports a single increment-element pair".into());
    }
    let scores = (0..elements)
        .map(|j| score(&args[at + 2 * j]))
        .collect::<Result<Vec<f64>, _>>()?;
    let lim = limits(ctx);
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    // One lookup when the key exists; XX never creates it.
    let z = if f.xx {
        let Some(z) = write(db, key)? else {
            if f.incr {
                ctx.out.null();
            } else {
                ctx.out.int(0);
            }
            return Ok(());
        };
        z
    } else {
        let listpack = lim.entries != 0 && args[at + 1].len() <= lim.value;
        as_zset(db.lookup_mut_or_insert(key, || Value::ZSet(Box::new(ZSet::new(listpack)))))?
    };
    let (mut added, mut updated, mut processed) = (0i64, 0i64, 0i64);
    let mut last = 0.0;
    let mut nan = false;
    for (j, &sc) in scores.iter().enumerate() {
        let member = &args[at + 2 * j + 1];
        match z.score(member) {
            Some(_) if f.nx => {}
            Some(cur) => {
                let mut s = sc;
                if f.incr {
                    s += cur;
                    if s.is_nan() {
                        nan = true;
                        break;
                    }
                }
                if (f.lt && s >= cur) || (f.gt && s <= cur) {
                    continue;
                }
                last = s;
                processed += 1;
                if s != cur {
                    z.update(member, s);
                    updated += 1;
                }
            }
            None if !f.xx => {
                z.insert(member, sc, lim);
                last = sc;
                added += 1;
                processed += 1;
            }
            None => {}
        }
    }
    ctx.srv.dirty += (added + updated) as u64;
    if added + updated > 0 {
        ctx.signal_modified(key);
        ctx.notify(ZSET, if f.incr { "zincr" } else { "zadd" }, key);
    }
    if nan {
        return Err(NAN_SCORE.into());
    }
    if f.incr {
        if processed > 0 {
            ctx.out.double(last);
        } else {
            ctx.out.null();
        }
    } else {
        ctx.out.int(if f.ch { added + updated } else { added });
    }
    Ok(())
}

/// ZSCORE key member
///
/// # Format
/// `ZSCORE key member` — the score (a double), or nil.
fn zscore(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    match read(db, &args[1])?.and_then(|z| z.score(&args[2])) {
        Some(s) => ctx.out.double(s),
        None => ctx.out.null(),
    }
    Ok(())
}

/// ZMSCORE key member [member ...]
///
/// # Format
/// `ZMSCORE key member [member ...]` — each member's score, or nil for a missing one.
fn zmscore(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let z = read(db, &args[1])?;
    ctx.out.array(args.len() - 2);
    for m in args.tail(2).iter() {
        match z.as_ref().and_then(|z| z.score(m)) {
            Some(s) => ctx.out.double(s),
            None => ctx.out.null(),
        }
    }
    Ok(())
}

/// ZCARD key
///
/// # Format
/// `ZCARD key` — the number of members (0 if absent).
fn zcard(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let n = read(db, &args[1])?.map_or(0, |z| z.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// ZCOUNT key min max
///
/// # Format
/// `ZCOUNT key min max` — how many members have a score in the range (`(` excludes, `-inf`/`+inf`).
fn zcount(ctx: &mut Ctx, args: Args) -> CmdResult {
    let range = score_range(&args[2], &args[3])?;
    count_generic(ctx, args, range)
}

/// ZLEXCOUNT key min max
///
/// # Format
/// `ZLEXCOUNT key min max` — how many members are in the lex range (`[a`, `(a`, `-`, `+`).
fn zlexcount(ctx: &mut Ctx, args: Args) -> CmdResult {
    let range = lex_range(&args[2], &args[3])?;
    count_generic(ctx, args, range)
}

fn count_generic(ctx: &mut Ctx, args: Args, range: Range) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let n = read(db, &args[1])?.map_or(0, |z| z.count_in(&range));
    ctx.out.int(n);
    Ok(())
}

/// ZRANK key member
///
/// # Format
/// `ZRANK key member` — the 0-based rank in ascending score order, or nil.
fn zrank(ctx: &mut Ctx, args: Args) -> CmdResult {
    rank_generic(ctx, args, false)
}

/// ZREVRANK key member
///
/// # Format
/// `ZREVRANK key member` — the 0-based rank in descending score order, or nil.
fn zrevrank(ctx: &mut Ctx, args: Args) -> CmdResult {
    rank_generic(ctx, args, true)
}

fn rank_generic(ctx: &mut Ctx, args: Args, rev: bool) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let rank = read(db, &args[1])?.and_then(|z| {
        let r = z.rank(&args[2])?;
        Some(if rev { z.len() - 1 - r } else { r })
    });
    match rank {
        Some(r) => ctx.out.int(r as i64),
        None => ctx.out.null(),
    }
    Ok(())
}

/// ZREM key member [member ...]
///
/// # Format
/// `ZREM key member [member ...]` — how many members were removed.
fn zrem(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(z) = write(db, key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let removed = args
        .tail(2)
        .iter()
        .filter(|m| z.remove(m).is_some())
        .count();
    let emptied = z.is_empty();
    if removed > 0 {
        ctx.notify(ZSET, "zrem", key);
        delete_if_emptied(ctx, key, emptied);
        ctx.signal_modified(key);
        ctx.srv.dirty += removed as u64;
    }
    ctx.out.int(removed as i64);
    Ok(())
}

/// Stores a store command's result at `dst` (notified as `event`) and replies its size; an empty
/// result deletes `dst`, notified as `del` (Redis's `zrangeResultFinalizeStore` and the end of
/// `zunionInterDiffGenericCommand`).
pub(super) fn store_result(ctx: &mut Ctx, dst: &[u8], z: ZSet, event: &'static str) {
    let n = z.len();
    let value = (n > 0).then(|| Value::ZSet(Box::new(z)));
    ctx.store_result(dst, value, ZSET, event, 1);
    ctx.out.int(n as i64);
}

/// How `pop_generic` shapes its reply (Redis's `genericZpopCommand` arguments).
#[derive(Clone, Copy)]
pub struct PopShape {
    /// Name the key first (BZPOPMIN/BZPOPMAX, ZMPOP/BZMPOP).
    pub emit_key: bool,
    /// `[member, score]` pairs rather than a flat list.
    pub nested: bool,
    /// When no key holds a sorted set: `Some(true)` null array (ZMPOP), `Some(false)` empty array
    /// (ZPOPMIN), `None` no reply at all (a blocking pop that will wait).
    pub on_empty: Option<bool>,
}

/// Pops up to `count` members (lowest scores unless `max`) from the first of `keys` holding a
/// sorted set, replies as `shape` says, and deletes the key if it empties. `count` = -1 is the
/// single pop of a plain ZPOPMIN. Returns the key popped from, if any. This is Redis's
/// `genericZpopCommand`, shared with the blocking pops.
pub fn pop_generic(
    ctx: &mut Ctx,
    keys: &[&[u8]],
    max: bool,
    count: i64,
    shape: PopShape,
) -> Result<Option<Vec<u8>>, CmdError> {
    let db = &mut ctx.srv.dbs[ctx.db];
    // The first key holding a sorted set (WRONGTYPE for another type before it); the last key is
    // only looked up once, below (so a single-key pop does one lookup).
    let mut at = keys.len().saturating_sub(1);
    for (i, &k) in keys[..at].iter().enumerate() {
        if write(db, k)?.is_some() {
            at = i;
            break;
        }
    }
    let found = match keys.get(at) {
        Some(&key) => write(db, key)?.map(|z| (key, z)),
        None => None,
    };
    let Some((key, z)) = found else {
        match shape.on_empty {
            Some(true) => ctx.out.null_array(),
            Some(false) => ctx.out.array(0),
            None => {}
        }
        return Ok(None);
    };
    if count == 0 {
        ctx.out.array(0);
        return Ok(Some(key.to_vec()));
    }
    let count_given = count != -1;
    let count = if count == -1 { 1 } else { count };
    let n = (count as u64).min(z.len() as u64) as usize;
    let out = &mut *ctx.out;
    match (shape.nested, shape.emit_key) {
        (false, false) => out.array(n * 2),
        (true, false) => out.array(n),
        (false, true) => {
            out.array(n * 2 + 1);
            out.bulk(key);
        }
        (true, true) => {
            out.array(2);
            out.bulk(key);
            out.array(n);
        }
    }
    for _ in 0..n {
        let id = if max { z.last() } else { z.first() }.expect("counted");
        let (m, s) = z.get(id);
        let m = m.to_vec();
        z.remove(&m);
        if shape.nested {
            out.array(2);
        }
        out.bulk(&m);
        out.double(s);
    }
    let emptied = z.is_empty();
    // The forms that name the key (ZMPOP, the blocking pops) replay as the ZPOPMIN or ZPOPMAX of
    // that key, with the count popped if they took one (Redis's `genericZpopCommand`).
    if shape.emit_key {
        let verb: &[u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
        if count_given {
            ctx.propagate_as(&[verb, key, n.to_string().as_bytes()]);
        } else {
            ctx.propagate_as(&[verb, key]);
        }
    }
    ctx.notify(ZSET, if max { "zpopmax" } else { "zpopmin" }, key);
    delete_if_emptied(ctx, key, emptied);
    ctx.signal_modified(key);
    ctx.srv.dirty += n as u64;
    Ok(Some(key.to_vec()))
}

fn zpop(ctx: &mut Ctx, args: Args, max: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(SYNTAX.into());
    }
    let count = match args.get(2) {
        Some(c) => positive(c, "ERR value is out of range, must be positive")?,
        None => -1,
    };
    let shape = PopShape {
        emit_key: false,
        nested: ctx.out.resp3 && count != -1,
        on_empty: Some(false),
    };
    pop_generic(ctx, &[args.get(1).expect("arity")], max, count, shape)?;
    Ok(())
}

/// ZPOPMIN key [count]
///
/// # Format
/// `ZPOPMIN key [count]` — removes and returns the lowest-scored members with their scores.
fn zpopmin(ctx: &mut Ctx, args: Args) -> CmdResult {
    zpop(ctx, args, false)
}

/// ZPOPMAX key [count]
///
/// # Format
/// `ZPOPMAX key [count]` — removes and returns the highest-scored members with their scores.
fn zpopmax(ctx: &mut Ctx, args: Args) -> CmdResult {
    zpop(ctx, args, true)
}

/// ZMPOP's (and BZMPOP's) arguments after the numkeys position: the keys, MIN|MAX, COUNT.
pub struct MpopArgs<'a> {
    pub keys: Vec<&'a [u8]>,
    pub max: bool,
    pub count: i64,
}

/// Parses `numkeys key [key ...] MIN|MAX [COUNT count]` with numkeys at `args[at]`, as Redis's
/// `zmpopGenericCommand`.
pub fn mpop_args(args: Args<'_>, at: usize) -> Result<MpopArgs<'_>, CmdError> {
    let numkeys = int_or(
        &args[at],
        1,
        i64::MAX,
        "ERR numkeys should be greater than 0",
    )?;
    let where_idx = (at as u64 + 1).saturating_add(numkeys as u64);
    if where_idx >= args.len() as u64 {
        return Err(SYNTAX.into());
    }
    let where_idx = where_idx as usize;
    let max = if is(&args[where_idx], "min") {
        false
    } else if is(&args[where_idx], "max") {
        true
    } else {
        return Err(SYNTAX.into());
    };
    let mut count = -1;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count == -1 && is(&args[j], "count") && j + 1 < args.len() {
            j += 1;
            count = int_or(&args[j], 1, i64::MAX, "ERR count should be greater than 0")?;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    Ok(MpopArgs {
        keys: (at + 1..where_idx).filter_map(|i| args.get(i)).collect(),
        max,
        count: count.max(1),
    })
}

/// ZMPOP numkeys key [key ...] MIN | MAX [COUNT count]
///
/// # Format
/// `ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]` — `[key, [[member, score] ...]]` from the
/// first non-empty key, or nil.
fn zmpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    let a = mpop_args(args, 1)?;
    let shape = PopShape {
        emit_key: true,
        nested: true,
        on_empty: Some(true),
    };
    pop_generic(ctx, &a.keys, a.max, a.count, shape)?;
    Ok(())
}

/// The blocking pops wait for a sorted set and give up with a null array (also when they may not
/// block: inside MULTI or a script).
const POP_WAIT: Wait = Wait {
    type_name: "zset",
    on_timeout: TimeoutReply::NullArray,
    denied: TimeoutReply::NullArray,
    gone: None,
};

/// BZPOPMIN key [key ...] timeout
///
/// # Format
/// `BZPOPMIN key [key ...] timeout` — `[key, member, score]` popped from the first non-empty sorted
/// set, else blocks until one is added or timeout seconds (fractional, 0 = forever) pass (then a null
/// array).
fn bzpopmin(ctx: &mut Ctx, args: Args) -> CmdResult {
    bzpop(ctx, args, false)
}

/// BZPOPMAX key [key ...] timeout
///
/// # Format
/// `BZPOPMAX key [key ...] timeout` — as BZPOPMIN, the highest-scored member.
fn bzpopmax(ctx: &mut Ctx, args: Args) -> CmdResult {
    bzpop(ctx, args, true)
}

fn bzpop(ctx: &mut Ctx, args: Args, max: bool) -> CmdResult {
    let timeout = parse::timeout(&args[args.len() - 1])?;
    let keys: Vec<&[u8]> = (1..args.len() - 1).map(|i| &args[i]).collect();
    bpop_generic(ctx, args, &keys, max, -1, timeout)
}

/// BZMPOP timeout numkeys key [key ...] MIN | MAX [COUNT count]
///
/// # Format
/// `BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]` — as ZMPOP, blocking while every
/// key is empty (a null array on timeout).
fn bzmpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    // Redis checks numkeys, MIN|MAX and COUNT before the timeout.
    let a = mpop_args(args, 2)?;
    let timeout = parse::timeout(&args[1])?;
    bpop_generic(ctx, args, &a.keys, a.max, a.count, timeout)
}

/// Shared by the blocking pops (Redis's `blockingGenericZpopCommand`): pops from the first of `keys`
/// holding a sorted set (WRONGTYPE for a key of another type before it), else blocks on them all.
/// `count` -1 is BZPOPMIN's flat `[key, member, score]`; otherwise BZMPOP's nested reply. While a
/// blocked command is re-executed only the key that became ready is looked at.
fn bpop_generic(
    ctx: &mut Ctx,
    args: Args,
    keys: &[&[u8]],
    max: bool,
    count: i64,
    timeout: u64,
) -> CmdResult {
    let shape = PopShape {
        emit_key: true,
        nested: count != -1,
        on_empty: None,
    };
    let ready: Vec<&[u8]> = keys.iter().copied().filter(|k| ctx.serving(k)).collect();
    if pop_generic(ctx, &ready, max, count, shape)?.is_some() {
        return Ok(());
    }
    ctx.block_on(args, keys, timeout, POP_WAIT)
}

/// ZMPOP's keys: `numkeys` is its first argument.
fn zmpop_keys(args: Args) -> Vec<(usize, u32)> {
    keys_after_numkeys(args, 1, None)
}

/// BZMPOP's keys: `numkeys` follows the timeout.
fn bzmpop_keys(args: Args) -> Vec<(usize, u32)> {
    keys_after_numkeys(args, 2, None)
}

/// ZRANDMEMBER key [count [WITHSCORES]]
///
/// # Format
/// `ZRANDMEMBER key [count [WITHSCORES]]` — one random member (nil if absent); with a count, up to
/// `count` distinct members, or with a negative count exactly `-count` members, repeats allowed.
fn zrandmember(ctx: &mut Ctx, args: Args) -> CmdResult {
    let Some(count_arg) = args.get(2) else {
        let db = &mut ctx.srv.dbs[ctx.db];
        match read(db, &args[1])?.and_then(|z| z.random()) {
            Some((m, _)) => ctx.out.bulk(m),
            None => ctx.out.null(),
        }
        return Ok(());
    };
    let l = match int(count_arg) {
        Ok(n) if n == i64::MIN => {
            return Err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807".into())
        }
        Ok(n) => n,
        Err(_) => return Err(NOT_INT.into()),
    };
    let withscores = match args.get(3) {
        None => false,
        Some(w) if args.len() == 4 && is(w, "withscores") => true,
        _ => return Err(SYNTAX.into()),
    };
    if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
        return Err("ERR value is out of range".into());
    }
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(z) = read(db, &args[1])? else {
        ctx.out.array(0);
        return Ok(());
    };
    let out = &mut *ctx.out;
    let count = l.unsigned_abs();
    if count == 0 {
        out.array(0);
        return Ok(());
    }
    let size = z.len() as u64;
    let pair = |out: &mut Reply, m: &[u8], s: f64| {
        if withscores && out.resp3 {
            out.array(2);
        }
        out.bulk(m);
        if withscores {
            out.double(s);
        }
    };
    if l < 0 || count == 1 {
        // Repeats allowed: each draw samples the whole set.
        out.array(if withscores && !out.resp3 {
            count as usize * 2
        } else {
            count as usize
        });
        for _ in 0..count {
            let (m, s) = z.random().expect("non-empty");
            pair(out, m, s);
        }
        return Ok(());
    }
    let n = count.min(size) as usize;
    out.array(if withscores && !out.resp3 { n * 2 } else { n });
    if count >= size {
        // The whole set, walked from the highest score down as Redis's zset iterator does.
        let mut cur = z.last();
        while let Some(id) = cur {
            let (m, s) = z.get(id);
            pair(out, m, s);
            cur = z.prev(id);
        }
        return Ok(());
    }
    if count * 3 > size {
        // Most of the set: drop random members from a full copy until `count` remain.
        let mut all: Vec<(&[u8], f64)> = z.dict().iter().map(|(_, k, v)| (k, *v)).collect();
        while all.len() > n {
            let i = (rand_u64() % all.len() as u64) as usize;
            all.swap_remove(i);
        }
        for (m, s) in all {
            pair(out, m, s);
        }
    } else {
        let mut seen: HashSet<&[u8]> = HashSet::with_capacity(n);
        let mut picked = Vec::with_capacity(n);
        while picked.len() < n {
            let (m, s) = z.random().expect("non-empty");
            if seen.insert(m) {
                picked.push((m, s));
            }
        }
        for (m, s) in picked {
            pair(out, m, s);
        }
    }
    Ok(())
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]
///
/// # Format
/// `ZSCAN key cursor [MATCH pattern] [COUNT count]` — `[next-cursor, [member, score, ...]]`. A
/// listpack-encoded set comes whole in one call, as in Redis.
fn zscan(ctx: &mut Ctx, args: Args) -> CmdResult {
    cursor(&args[2])?;
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(z) = read(db, &args[1])? else {
        ctx.out.array(2);
        ctx.out.bulk(b"0");
        ctx.out.array(0);
        return Ok(());
    };
    let ScanArgs {
        cursor,
        count,
        pattern,
        ..
    } = scan_args(args, 2, false)?;
    let keep = |m: &[u8]| pattern.is_none_or(|p| glob::matches(p, m, false));
    let mut found: Vec<(&[u8], String)> = Vec::new();
    let next = if z.is_listpack() {
        let mut cur = z.first();
        while let Some(id) = cur {
            let (m, s) = z.get(id);
            if keep(m) {
                found.push((m, fmt_listpack_score(s)));
            }
            cur = z.next(id);
        }
        0
    } else {
        let dict = z.dict();
        let span = dict.slot_span();
        let mut slot = cursor.min(span as u64) as usize;
        let max_visits = (count as usize).saturating_mul(10);
        let (mut visited, mut live) = (0, 0);
        while slot < span && live < count as usize && visited < max_visits {
            if let Some((m, s)) = dict.entry_at(slot) {
                live += 1;
                if keep(m) {
                    found.push((m, fmt_g17(*s)));
                }
            }
            slot += 1;
            visited += 1;
        }
        if slot >= span {
            0
        } else {
            slot as u64
        }
    };
    let out = &mut *ctx.out;
    out.array(2);
    out.bulk(next.to_string().as_bytes());
    out.array(found.len() * 2);
    for (m, s) in found {
        out.bulk(m);
        out.bulk(s.as_bytes());
    }
    Ok(())
}

pub const COMMANDS: &[Command] = &[
    Command::new("zadd", zadd, -4, WRITE | DENYOOM | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple elements."), ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."), ("6.2.0", "Added the `GT` and `LT` options.")])
        .arg_since(&[("condition", "3.0.2"), ("comparison", "6.2.0"), ("change", "3.0.2"), ("increment", "3.0.2")])
        .doc("Add one or more members to a sorted set, or update its score if it already exists", "1.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
            "key [condition:(NX | XX)] [comparison:(GT | LT)] [change:CH] [increment:INCR] score:double member [score:double member ...]"),
    Command::new("zincrby", zincrby, 4, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Increment the score of a member in a sorted set", "1.2.0", "O(log(N)) where N is the number of elements in the sorted set.", "key increment:integer member"),
    Command::new("zscore", zscore, 3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the score associated with the given member in a sorted set", "1.2.0", "O(1)", "key member"),
    Command::new("zmscore", zmscore, -3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the score associated with the given members in a sorted set", "6.2.0", "O(N) where N is the number of members being requested.", "key member [member ...]"),
    Command::new("zcard", zcard, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Get the number of members in a sorted set", "1.2.0", "O(1)", "key"),
    Command::new("zcount", zcount, 4, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Count the members in a sorted set with scores within the given values", "2.0.0", "O(log(N)) with N being the number of elements in the sorted set.", "key min:double max:double"),
    Command::new("zlexcount", zlexcount, 4, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Count the number of members in a sorted set between a given lexicographical range", "2.8.9", "O(log(N)) with N being the number of elements in the sorted set.", "key min max"),
    Command::new("zrank", zrank, 3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Determine the index of a member in a sorted set", "2.0.0", "O(log(N))", "key member"),
    Command::new("zrevrank", zrevrank, 3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0", "O(log(N))", "key member"),
    Command::new("zrem", zrem, -3, WRITE | FAST).key(1, RW | DELETE).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple elements.")])
        .doc("Remove one or more members from a sorted set", "1.2.0", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.", "key member [member ...]"),
    Command::new("zpopmin", zpopmin, -2, WRITE | FAST).key(1, RW | ACCESS | DELETE).group(GROUP)
        .doc("Remove and return members with the lowest scores in a sorted set", "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.", "key [count:integer]"),
    Command::new("zpopmax", zpopmax, -2, WRITE | FAST).key(1, RW | ACCESS | DELETE).group(GROUP)
        .doc("Remove and return members with the highest scores in a sorted set", "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.", "key [count:integer]"),
    Command::new("zmpop", zmpop, -4, WRITE | MOVABLEKEYS).key_num(1, RW | ACCESS | DELETE).key_finder(zmpop_keys).group(GROUP)
        .doc("Remove and return members with scores in a sorted set", "7.0.0", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
            "numkeys:integer key [key ...] where:(MIN | MAX) [COUNT count:integer]"),
    Command::new("bzpopmin", bzpopmin, -3, WRITE | NOSCRIPT | BLOCKING | FAST).key_range(1, -2, 1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .doc("Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "5.0.0", "O(log(N)) with N being the number of elements in the sorted set.", "key [key ...] timeout:double"),
    Command::new("bzpopmax", bzpopmax, -3, WRITE | NOSCRIPT | BLOCKING | FAST).key_range(1, -2, 1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .doc("Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "5.0.0", "O(log(N)) with N being the number of elements in the sorted set.", "key [key ...] timeout:double"),
    Command::new("bzmpop", bzmpop, -5, WRITE | BLOCKING | MOVABLEKEYS).key_num(2, RW | ACCESS | DELETE).key_finder(bzmpop_keys).group(GROUP)
        .doc("Remove and return members with scores in a sorted set or block until one is available", "7.0.0", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
            "timeout:double numkeys:integer key [key ...] where:(MIN | MAX) [COUNT count:integer]"),
    Command::new("zrandmember", zrandmember, -2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Get one or multiple random elements from a sorted set", "6.2.0", "O(N) where N is the number of elements returned", "key [options:(count:integer [WITHSCORES])]"),
    Command::new("zscan", zscan, -3, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Incrementally iterate sorted sets elements and associated scores", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
            "key cursor:integer [MATCH pattern] [COUNT count:integer]"),
];
