//! Sets (Redis's t_set.c): membership, random picks, SMOVE, the set algebra (SINTER, SUNION, SDIFF,
//! their STORE forms and SINTERCARD) and SSCAN.
//!
//! Small all-integer sets keep Redis's intset order (see `store::set`); the algebra builds its
//! results the way Redis does (a fresh set filled member by member), so a result's order and
//! encoding match Redis's whenever Redis's are deterministic.

use super::keyspec::{ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE};
use super::parse::{cursor, int, is, scan_args};
use super::{
    err, Args, CmdError, CmdResult, Command, Ctx, DENYOOM, FAST, MOVABLEKEYS, READONLY, WRITE,
};
use crate::resp::reply::{Reply, SYNTAX, WRONGTYPE};
use crate::server::notify::{GENERIC, SET};
use crate::store::set::Member;
use crate::store::{glob, Db, Entry, Set, Value};
use crate::util::rand_u64;

const GROUP: &str = "set";

fn as_set(e: &mut Entry) -> Result<&mut Set, CmdError> {
    match &mut e.val {
        Value::Set(s) => Ok(s),
        _ => Err(WRONGTYPE.into()),
    }
}

/// Reads a set key: `Ok(None)` if absent, WRONGTYPE for another type.
fn read_set<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut Set>, CmdError> {
    match db.lookup(key) {
        None => Ok(None),
        Some(e) => as_set(e).map(Some),
    }
}

/// Looks a set up for writing: `Ok(None)` if absent, WRONGTYPE for another type.
fn write_set<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut Set>, CmdError> {
    match db.lookup_mut(key) {
        None => Ok(None),
        Some(e) => as_set(e).map(Some),
    }
}

/// The set at `key`, created empty if absent (callers add to it at once).
fn set_or_create<'d>(db: &'d mut Db, key: &[u8]) -> Result<&'d mut Set, CmdError> {
    as_set(db.lookup_mut_or_insert(key, || Value::Set(Box::default())))
}

fn reply_member(out: &mut Reply, m: Member) {
    match m {
        Member::Int(n) => out.bulk_int(n),
        Member::Bytes(b) => out.bulk(b),
    }
}

/// The error of a count that must be ≥ 0 (SPOP's), for a non-integer too, as Redis's
/// `getPositiveLongFromObjectOrReply`.
fn positive(arg: &[u8], msg: &'static str) -> Result<i64, CmdError> {
    match int(arg) {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(msg.into()),
    }
}

/// SADD key member [member ...]
///
/// # Format
/// `SADD key member [member ...]` — the number of members added.
fn sadd(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let max = ctx.srv.config.set_max_intset_entries;
    let set = set_or_create(ctx.db(), key)?;
    let added = args.tail(2).iter().filter(|m| set.add(m, max)).count();
    if added > 0 {
        ctx.signal_modified(key);
        ctx.notify(SET, "sadd", key);
    }
    ctx.srv.dirty += added as u64;
    ctx.out.int(added as i64);
    Ok(())
}

/// SREM key member [member ...]
///
/// # Format
/// `SREM key member [member ...]` — the number of members removed; the key goes when emptied.
fn srem(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let db = ctx.db();
    let Some(set) = write_set(db, key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let mut removed = 0;
    for m in args.tail(2).iter() {
        if set.remove(m) {
            removed += 1;
            if set.is_empty() {
                break;
            }
        }
    }
    let emptied = set.is_empty();
    if emptied {
        db.remove(key);
    }
    if removed > 0 {
        ctx.signal_modified(key);
        ctx.notify(SET, "srem", key);
        if emptied {
            ctx.notify(GENERIC, "del", key);
        }
        ctx.srv.dirty += removed;
    }
    ctx.out.int(removed as i64);
    Ok(())
}

/// SMEMBERS key
///
/// # Format
/// `SMEMBERS key` — every member (a set in RESP3); an intset's in ascending order.
fn smembers(ctx: &mut Ctx, args: Args) -> CmdResult {
    let set = read_set(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    ctx.out.set(set.as_ref().map_or(0, |s| s.len()));
    for m in set.iter().flat_map(|s| s.iter()) {
        reply_member(ctx.out, m);
    }
    Ok(())
}

/// SISMEMBER key member
///
/// # Format
/// `SISMEMBER key member` — 1 if a member, else 0.
fn sismember(ctx: &mut Ctx, args: Args) -> CmdResult {
    let found = read_set(ctx.db(), &args[1])?.is_some_and(|s| s.contains(&args[2]));
    ctx.out.int(found as i64);
    Ok(())
}

/// SMISMEMBER key member [member ...]
///
/// # Format
/// `SMISMEMBER key member [member ...]` — 1 or 0 for each member.
fn smismember(ctx: &mut Ctx, args: Args) -> CmdResult {
    let set = read_set(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    ctx.out.array(args.len() - 2);
    for m in args.tail(2).iter() {
        let found = set.as_ref().is_some_and(|s| s.contains(m));
        ctx.out.int(found as i64);
    }
    Ok(())
}

/// SCARD key
///
/// # Format
/// `SCARD key` — the number of members (0 if absent).
fn scard(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = read_set(ctx.db(), &args[1])?.map_or(0, |s| s.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// SPOP key [count]
///
/// # Format
/// `SPOP key` — a random member, removed, or nil. `SPOP key count` — up to `count` distinct random
/// members, removed (a set reply). The key goes when emptied.
fn spop(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 3 {
        return Err(SYNTAX.into());
    }
    let key = &args[1];
    let max = ctx.srv.config.set_max_intset_entries;
    let count = match args.get(2) {
        Some(c) => Some(positive(c, "ERR value is out of range, must be positive")? as u64),
        None => None,
    };
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(set) = write_set(db, key)? else {
        match count {
            Some(_) => ctx.out.set(0),
            None => ctx.out.null(),
        }
        return Ok(());
    };
    let Some(count) = count else {
        let m = set.random(rand_u64).expect("not empty").to_vec();
        set.remove(&m);
        ctx.out.bulk(&m);
        let emptied = set.is_empty();
        if emptied {
            db.remove(key);
        }
        // The member chosen at random is what replays (Redis: SREM).
        ctx.propagate_as(&[b"SREM", key, &m]);
        ctx.notify(SET, "spop", key);
        if emptied {
            ctx.notify(GENERIC, "del", key);
        }
        ctx.signal_modified(key);
        ctx.srv.dirty += 1;
        return Ok(());
    };
    if count == 0 {
        ctx.out.set(0);
        return Ok(());
    }
    ctx.srv.dirty += count.min(set.len() as u64);
    if count >= set.len() as u64 {
        // Redis answers with SUNION of the key, i.e. a copy rebuilt member by member: a table
        // holding only integers comes out as a (sorted) intset.
        let mut all = Set::default();
        for m in set.iter() {
            m.with_bytes(|b| all.add(b, max));
        }
        ctx.out.set(all.len());
        for m in all.iter() {
            reply_member(ctx.out, m);
        }
        // That SUNION reads the key once more, which counts a keyspace hit.
        db.lookup(key);
        db.server_delete(key);
        drop_scratch(ctx, all);
        ctx.propagate_as(&[b"DEL", key]);
        ctx.notify(SET, "spop", key);
        ctx.notify(GENERIC, "del", key);
    } else {
        let picked: Vec<Vec<u8>> = set
            .sample_unique(count as usize, rand_u64)
            .into_iter()
            .map(Member::to_vec)
            .collect();
        ctx.out.set(picked.len());
        for m in &picked {
            set.remove(m);
            ctx.out.bulk(m);
        }
        // When few members stay (Redis's SPOP_MOVE_STRATEGY_MUL), Redis moves them into a new set
        // instead: one of integers only comes out an intset again.
        if set.len() as u64 * 5 <= count && matches!(set, Set::Table(_)) {
            let mut kept = Set::default();
            for m in set.iter() {
                m.with_bytes(|b| kept.add(b, max));
            }
            *set = kept;
        }
        ctx.notify(SET, "spop", key);
        // Each member chosen at random replays as its own SREM, as Redis propagates them.
        for m in &picked {
            ctx.propagate(&[b"SREM", key, m]);
        }
    }
    ctx.signal_modified(key);
    Ok(())
}

/// SRANDMEMBER key [count]
///
/// # Format
/// `SRANDMEMBER key` — a random member, or nil. `SRANDMEMBER key count` — up to `count` distinct
/// members (all of them if `count` ≥ the size), or with a negative count exactly `-count` members
/// that may repeat.
fn srandmember(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 3 {
        return Err(SYNTAX.into());
    }
    if args.len() == 2 {
        match read_set(&mut ctx.srv.dbs[ctx.db], &args[1])?.and_then(|s| s.random(rand_u64)) {
            Some(m) => reply_member(ctx.out, m),
            None => ctx.out.null(),
        }
        return Ok(());
    }
    let l = int(&args[2])?;
    if l == i64::MIN {
        return Err(err(
            "value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        ));
    }
    let out = &mut *ctx.out;
    let Some(set) = read_set(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        out.array(0);
        return Ok(());
    };
    let count = l.unsigned_abs() as usize;
    if count == 0 {
        out.array(0);
    } else if l < 0 || count == 1 {
        // Repetitions allowed: each pick samples the whole set.
        out.array(count);
        for _ in 0..count {
            reply_member(out, set.random(rand_u64).expect("not empty"));
        }
    } else if count >= set.len() {
        out.array(set.len());
        for m in set.iter() {
            reply_member(out, m);
        }
    } else {
        let picked = set.sample_unique(count, rand_u64);
        out.array(picked.len());
        for m in picked {
            reply_member(out, m);
        }
    }
    Ok(())
}

/// SMOVE source destination member
///
/// # Format
/// `SMOVE source destination member` — 1 if moved, 0 if not a member of source.
fn smove(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (src, dst, member) = (&args[1], &args[2], &args[3]);
    let max = ctx.srv.config.set_max_intset_entries;
    let db = ctx.db();
    let is_set = |e: &mut Entry| matches!(e.val, Value::Set(_));
    let src_is_set = db.lookup_mut(src).map(is_set);
    let dst_is_set = db.lookup_mut(dst).map(is_set);
    // As Redis: a missing source answers 0 before any type check of the destination.
    let Some(src_is_set) = src_is_set else {
        ctx.out.int(0);
        return Ok(());
    };
    if !src_is_set || dst_is_set == Some(false) {
        return Err(WRONGTYPE.into());
    }
    let src_set = write_set(db, src)?.expect("looked up");
    if src == dst {
        let found = src_set.contains(member);
        ctx.out.int(found as i64);
        return Ok(());
    }
    if !src_set.remove(member) {
        ctx.out.int(0);
        return Ok(());
    }
    let emptied = src_set.is_empty();
    if emptied {
        db.remove(src);
    }
    // Redis's order: `srem` and `del` on the source, then `new` (if created) and `sadd` on the
    // destination.
    ctx.notify(SET, "srem", src);
    if emptied {
        ctx.notify(GENERIC, "del", src);
    }
    let added = set_or_create(ctx.db(), dst)?.add(member, max);
    ctx.signal_modified(src);
    ctx.srv.dirty += 1;
    if added {
        ctx.srv.dirty += 1;
        ctx.signal_modified(dst);
        ctx.notify(SET, "sadd", dst);
    }
    ctx.out.int(1);
    Ok(())
}

/// Looks every source key up for reading (counting hits and misses), as Redis's set algebra does:
/// WRONGTYPE if any of them holds another type, even after a missing one. Then borrows the sets
/// (`None` for a missing key).
fn sources<'d>(db: &'d mut Db, keys: &[&[u8]]) -> Result<Vec<Option<&'d Set>>, CmdError> {
    for k in keys {
        read_set(db, k)?;
    }
    let db = &*db;
    Ok(keys
        .iter()
        .map(|k| match db.dict.get(k).map(|e| &e.val) {
            Some(Value::Set(s)) => Some(&**s),
            _ => None,
        })
        .collect())
}

/// Stores a STORE form's result in `dst` (replacing it, TTL dropped) and publishes `event`, or
/// deletes `dst` when the result is empty (publishing `del` if it was there); replies the result's
/// size.
fn store_result(ctx: &mut Ctx, dst: &[u8], result: Set, event: &str) {
    let n = result.len();
    let value = (n > 0).then(|| Value::Set(Box::new(result)));
    ctx.store_result(dst, value, SET, event, 1);
    ctx.out.int(n as i64);
}

/// The key arguments from `from` on.
fn keys_from(args: Args<'_>, from: usize) -> Vec<&[u8]> {
    args.tail(from).iter().collect()
}

/// Where a set-algebra result goes.
enum Target<'a> {
    Reply,
    Store(&'a [u8]),
    /// SINTERCARD: only the size, counting stops at the limit (0: no limit).
    Card(usize),
}

/// SINTER, SINTERSTORE, SINTERCARD and SMEMBERS' engine (Redis's `sinterGenericCommand`): walks the
/// smallest set and keeps the members every other set has.
fn sinter_generic(ctx: &mut Ctx, keys: &[&[u8]], target: Target) -> CmdResult {
    let max = ctx.srv.config.set_max_intset_entries;
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(mut sets) = sources(db, keys)?
        .into_iter()
        .collect::<Option<Vec<&Set>>>()
    else {
        // Intersecting with a missing (empty) set is empty.
        match target {
            Target::Store(dst) => store_result(ctx, dst, Set::default(), "sinterstore"),
            Target::Card(_) => ctx.out.int(0),
            Target::Reply => ctx.out.set(0),
        }
        return Ok(());
    };
    // Smallest first (a stable sort, as glibc's qsort is in practice): the result comes out in
    // the smallest set's order.
    sets.sort_by_key(|s| s.len());
    let first = sets[0];
    let limit = match target {
        Target::Card(l) if l > 0 => l,
        _ => usize::MAX,
    };
    let mut found: Vec<Member> = Vec::new();
    for m in first.iter() {
        if sets[1..]
            .iter()
            .all(|s| std::ptr::eq(*s, first) || s.contains_member(m))
        {
            found.push(m);
            if found.len() >= limit {
                break;
            }
        }
    }
    match target {
        Target::Card(_) => ctx.out.int(found.len() as i64),
        Target::Reply => {
            ctx.out.set(found.len());
            for m in found {
                reply_member(ctx.out, m);
            }
        }
        Target::Store(dst) => {
            let mut result = Set::default();
            for m in found {
                m.with_bytes(|b| result.add(b, max));
            }
            store_result(ctx, dst, result, "sinterstore");
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Diff,
}

/// SUNION, SDIFF and their STORE forms (Redis's `sunionDiffGenericCommand`). The result is built
/// member by member into a fresh set exactly as Redis builds it (including its choice of SDIFF
/// algorithm), so its order and encoding follow Redis's.
fn sunion_diff(ctx: &mut Ctx, keys: &[&[u8]], dst: Option<&[u8]>, op: Op) -> CmdResult {
    let max = ctx.srv.config.set_max_intset_entries;
    let db = &mut ctx.srv.dbs[ctx.db];
    let sets = sources(db, keys)?;
    let mut result = Set::default();
    match (op, sets[0]) {
        (Op::Union, _) => {
            for s in sets.iter().flatten() {
                for m in s.iter() {
                    m.with_bytes(|b| result.add(b, max));
                }
            }
        }
        (Op::Diff, None) => {}
        // The first key repeated: nothing is left.
        (Op::Diff, Some(first)) if sets[1..].iter().flatten().any(|s| std::ptr::eq(*s, first)) => {}
        (Op::Diff, Some(first)) => {
            // Redis picks the algorithm by estimated work; the second one can leave the result in
            // the table encoding, so the choice shows in OBJECT ENCODING.
            let present = sets.iter().flatten();
            let one: usize = present.clone().map(|_| first.len()).sum::<usize>() / 2;
            let two: usize = present.map(|s| s.len()).sum();
            if one <= two {
                for m in first.iter() {
                    if !sets[1..].iter().flatten().any(|s| s.contains_member(m)) {
                        m.with_bytes(|b| result.add(b, max));
                    }
                }
            } else {
                for m in first.iter() {
                    m.with_bytes(|b| result.add(b, max));
                }
                for s in sets[1..].iter().flatten() {
                    if result.is_empty() {
                        break;
                    }
                    for m in s.iter() {
                        m.with_bytes(|b| result.remove(b));
                    }
                }
            }
        }
    }
    match dst {
        Some(dst) => {
            let event = match op {
                Op::Union => "sunionstore",
                Op::Diff => "sdiffstore",
            };
            store_result(ctx, dst, result, event)
        }
        None => {
            ctx.out.set(result.len());
            for m in result.iter() {
                reply_member(ctx.out, m);
            }
            drop_scratch(ctx, result);
        }
    }
    Ok(())
}

/// A replied result set is freed as Redis frees it: on the lazy-free thread when large, under
/// `lazyfree-lazy-server-del`.
fn drop_scratch(ctx: &Ctx, set: Set) {
    if ctx.srv.config.lazyfree_lazy_server_del {
        let fill = ctx.srv.config.list_max_listpack_size;
        crate::server::lazyfree::free_value(Value::Set(Box::new(set)), fill);
    }
}

/// SINTER key [key ...]
///
/// # Format
/// `SINTER key [key ...]` — the members common to every set (a missing key is an empty set).
fn sinter(ctx: &mut Ctx, args: Args) -> CmdResult {
    sinter_generic(ctx, &keys_from(args, 1), Target::Reply)
}

/// SINTERSTORE destination key [key ...]
///
/// # Format
/// `SINTERSTORE destination key [key ...]` — stores SINTER's result (deleting destination if
/// empty); replies its size.
fn sinterstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    sinter_generic(ctx, &keys_from(args, 2), Target::Store(&args[1]))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit]
///
/// # Format
/// `SINTERCARD numkeys key [key ...] [LIMIT limit]` — the size of the intersection, counting no
/// further than `limit` (0: no limit).
fn sintercard(ctx: &mut Ctx, args: Args) -> CmdResult {
    const NUMKEYS: &str = "ERR numkeys should be greater than 0";
    let numkeys = match int(&args[1]) {
        Ok(n) if n >= 1 => n as u64,
        _ => return Err(NUMKEYS.into()),
    };
    if numkeys > args.len() as u64 - 2 {
        return Err("ERR Number of keys can't be greater than number of args".into());
    }
    let numkeys = numkeys as usize;
    let mut limit = 0;
    let mut j = 2 + numkeys;
    while j < args.len() {
        if is(&args[j], "limit") && j + 1 < args.len() {
            limit = positive(&args[j + 1], "ERR LIMIT can't be negative")? as usize;
            j += 2;
        } else {
            return Err(SYNTAX.into());
        }
    }
    let keys: Vec<&[u8]> = args.tail(2).iter().take(numkeys).collect();
    sinter_generic(ctx, &keys, Target::Card(limit))
}

/// SUNION key [key ...]
///
/// # Format
/// `SUNION key [key ...]` — the members of any of the sets.
fn sunion(ctx: &mut Ctx, args: Args) -> CmdResult {
    sunion_diff(ctx, &keys_from(args, 1), None, Op::Union)
}

/// SUNIONSTORE destination key [key ...]
///
/// # Format
/// `SUNIONSTORE destination key [key ...]` — stores SUNION's result; replies its size.
fn sunionstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    sunion_diff(ctx, &keys_from(args, 2), Some(&args[1]), Op::Union)
}

/// SDIFF key [key ...]
///
/// # Format
/// `SDIFF key [key ...]` — the members of the first set that are in none of the others.
fn sdiff(ctx: &mut Ctx, args: Args) -> CmdResult {
    sunion_diff(ctx, &keys_from(args, 1), None, Op::Diff)
}

/// SDIFFSTORE destination key [key ...]
///
/// # Format
/// `SDIFFSTORE destination key [key ...]` — stores SDIFF's result; replies its size.
fn sdiffstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    sunion_diff(ctx, &keys_from(args, 2), Some(&args[1]), Op::Diff)
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]
///
/// # Format
/// `SSCAN key cursor [MATCH pattern] [COUNT count]` — `[next-cursor, [member ...]]`. A small
/// (intset) set comes whole in one call, as in Redis.
fn sscan(ctx: &mut Ctx, args: Args) -> CmdResult {
    // Redis parses the cursor, then looks the key up, and only then the options.
    cursor(&args[2])?;
    let Some(set) = read_set(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        // A missing key answers an empty scan without looking at the options, as Redis.
        ctx.out.array(2);
        ctx.out.bulk(b"0");
        ctx.out.array(0);
        return Ok(());
    };
    let s = scan_args(args, 2, false)?;
    let (next, members) = set.scan(s.cursor, s.count as usize);
    let members: Vec<Member> = members
        .into_iter()
        .filter(|m| {
            s.pattern
                .is_none_or(|p| m.with_bytes(|b| glob::matches(p, b, false)))
        })
        .collect();
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(members.len());
    for m in members {
        reply_member(ctx.out, m);
    }
    Ok(())
}

const SCAN_COMPLEXITY: &str = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..";

/// SINTERCARD's keys: `numkeys` then the sets.
fn sintercard_keys(args: Args) -> Vec<(usize, u32)> {
    super::keyspec::keys_after_numkeys(args, 1, None)
}

pub const COMMANDS: &[Command] = &[
    Command::new("sadd", sadd, -3, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .doc("Add one or more members to a set", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "key member [member ...]"),
    Command::new("srem", srem, -3, WRITE | FAST).key(1, RW | DELETE).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .doc("Remove one or more members from a set", "1.0.0", "O(N) where N is the number of members to be removed.", "key member [member ...]"),
    Command::new("smembers", smembers, 2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Get all the members in a set", "1.0.0", "O(N) where N is the set cardinality.", "key"),
    Command::new("sismember", sismember, 3, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Determine if a given value is a member of a set", "1.0.0", "O(1)", "key member"),
    Command::new("smismember", smismember, -3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Returns the membership associated with the given elements for a set", "6.2.0", "O(N) where N is the number of elements being checked for membership", "key member [member ...]"),
    Command::new("scard", scard, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Get the number of members in a set", "1.0.0", "O(1)", "key"),
    Command::new("spop", spop, -2, WRITE | FAST).key(1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("3.2.0", "Added the `count` argument.")])
        .arg_since(&[("count", "3.2.0")])
        .tips(&["nondeterministic_output"])
        .doc("Remove and return one or multiple random members from a set", "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.", "key [count:integer]"),
    Command::new("srandmember", srandmember, -2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("2.6.0", "Added the optional `count` argument.")])
        .arg_since(&[("count", "2.6.0")])
        .tips(&["nondeterministic_output"])
        .doc("Get one or multiple random members from a set", "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.", "key [count:integer]"),
    Command::new("smove", smove, 4, WRITE | FAST).key(1, RW | ACCESS | DELETE).key(2, RW | INSERT).group(GROUP)
        .doc("Move a member from one set to another", "1.0.0", "O(1)", "source:key destination:key member"),
    Command::new("sinter", sinter, -2, READONLY).key_range(1, -1, 1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Intersect multiple sets", "1.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.", "key [key ...]"),
    Command::new("sinterstore", sinterstore, -3, WRITE | DENYOOM).key(1, RW | UPDATE).key_range(2, -1, 1, RO | ACCESS).group(GROUP)
        .doc("Intersect multiple sets and store the resulting set in a key", "1.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.", "destination:key key [key ...]"),
    Command::new("sintercard", sintercard, -3, READONLY | MOVABLEKEYS).key_num(1, RO | ACCESS).key_finder(sintercard_keys).group(GROUP)
        .doc("Intersect multiple sets and return the cardinality of the result", "7.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.", "numkeys:integer key [key ...] [LIMIT limit:integer]"),
    Command::new("sunion", sunion, -2, READONLY).key_range(1, -1, 1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Add multiple sets", "1.0.0", "O(N) where N is the total number of elements in all given sets.", "key [key ...]"),
    Command::new("sunionstore", sunionstore, -3, WRITE | DENYOOM).key(1, OW | UPDATE).key_range(2, -1, 1, RO | ACCESS).group(GROUP)
        .doc("Add multiple sets and store the resulting set in a key", "1.0.0", "O(N) where N is the total number of elements in all given sets.", "destination:key key [key ...]"),
    Command::new("sdiff", sdiff, -2, READONLY).key_range(1, -1, 1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Subtract multiple sets", "1.0.0", "O(N) where N is the total number of elements in all given sets.", "key [key ...]"),
    Command::new("sdiffstore", sdiffstore, -3, WRITE | DENYOOM).key(1, OW | UPDATE).key_range(2, -1, 1, RO | ACCESS).group(GROUP)
        .doc("Subtract multiple sets and store the resulting set in a key", "1.0.0", "O(N) where N is the total number of elements in all given sets.", "destination:key key [key ...]"),
    Command::new("sscan", sscan, -3, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Incrementally iterate Set elements", "2.8.0", SCAN_COMPLEXITY, "key cursor:integer [MATCH pattern] [COUNT count:integer]"),
];
