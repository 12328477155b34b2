//! The sorted-set algebra (Redis's `zunionInterDiffGenericCommand` in t_zset.c): ZUNION, ZINTER,
//! ZDIFF, their *STORE forms and ZINTERCARD, all through `setop_generic`; a plain set joins in as
//! members scored 1. The other sorted-set commands, and the helpers these share with them, are in
//! `zset.rs`.

use std::collections::HashMap;

use super::keyspec::{keys_after_numkeys, ACCESS, OW, RO, UPDATE};
use super::parse::{double_or, int, is, positive};
use super::zset::{limits, reply_members, store_result};
use super::{Args, CmdError, CmdResult, Command, Ctx, DENYOOM, MOVABLEKEYS, READONLY, WRITE};
use crate::resp::reply::{SYNTAX, WRONGTYPE};
use crate::store::{Set, Value, ZSet};

const GROUP: &str = "sorted-set";

/// ZUNION/ZINTER/ZDIFF/ZINTERCARD's keys: `numkeys` then the inputs.
fn inputs_keys(args: Args) -> Vec<(usize, u32)> {
    keys_after_numkeys(args, 1, None)
}

/// The *STORE forms' keys: the `numkeys` inputs, then the destination (Redis's order here).
fn store_keys(args: Args) -> Vec<(usize, u32)> {
    keys_after_numkeys(args, 2, Some(1))
}

/// An input of ZUNION/ZINTER/ZDIFF: a sorted set, or a plain set whose members score 1.
#[derive(Clone)]
enum Src<'a> {
    Missing,
    Z(&'a ZSet),
    /// A plain set (score 1 each), with its members' bytes (an intset's integers as text).
    S(&'a Set, Vec<Vec<u8>>),
}

impl<'a> Src<'a> {
    fn len(&self) -> usize {
        match self {
            Src::Missing => 0,
            Src::Z(z) => z.len(),
            Src::S(s, _) => s.len(),
        }
    }

    fn find(&self, m: &[u8]) -> Option<f64> {
        match self {
            Src::Missing => None,
            Src::Z(z) => z.score(m),
            Src::S(s, _) => s.contains(m).then_some(1.0),
        }
    }

    fn items(&self) -> Box<dyn Iterator<Item = (&[u8], f64)> + '_> {
        match self {
            Src::Missing => Box::new(std::iter::empty()),
            Src::Z(z) => Box::new(z.dict().iter().map(|(_, k, v)| (k, *v))),
            Src::S(_, members) => Box::new(members.iter().map(|m| (m.as_slice(), 1.0))),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

/// Redis's `zunionInterAggregate`: a sum that is NaN (inf + -inf) becomes 0.
fn aggregate(target: &mut f64, val: f64, how: Aggregate) {
    match how {
        Aggregate::Sum => {
            *target += val;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Aggregate::Min => *target = if val < *target { val } else { *target },
        Aggregate::Max => *target = if val > *target { val } else { *target },
    }
}

/// Redis's `zunionInterDiffGenericCommand`: numkeys at `args[at]`, the destination (store
/// variants) and ZINTERCARD's count-only mode.
fn setop_generic(
    ctx: &mut Ctx,
    args: Args,
    at: usize,
    dst: Option<&[u8]>,
    op: SetOp,
    card_only: bool,
) -> CmdResult {
    let setnum = int(&args[at])?;
    if setnum < 1 {
        return Err(CmdError::from(format!(
            "ERR at least 1 input key is needed for '{}' command",
            String::from_utf8_lossy(&args[0].to_ascii_lowercase())
        )));
    }
    if setnum as u64 > (args.len() - at - 1) as u64 {
        return Err(SYNTAX.into());
    }
    let setnum = setnum as usize;
    let keys: Vec<&[u8]> = (at + 1..at + 1 + setnum)
        .map(|i| args.get(i).expect("counted"))
        .collect();
    // Type checks (and lazy expiry, hit/miss counts) come before the options, as in Redis.
    let db = &mut ctx.srv.dbs[ctx.db];
    for k in &keys {
        if let Some(e) = db.lookup(k) {
            if !matches!(e.val, Value::ZSet(_) | Value::Set(_)) {
                return Err(WRONGTYPE.into());
            }
        }
    }
    let mut weights = vec![1.0f64; setnum];
    let mut how = Aggregate::Sum;
    let mut withscores = false;
    let mut limit = 0i64;
    let mut j = at + 1 + setnum;
    while j < args.len() {
        let remaining = args.len() - j;
        let a = &args[j];
        if op != SetOp::Diff && !card_only && remaining > setnum && is(a, "weights") {
            j += 1;
            for w in weights.iter_mut() {
                *w = double_or(&args[j], "ERR weight value is not a float")?;
                j += 1;
            }
        } else if op != SetOp::Diff && !card_only && remaining >= 2 && is(a, "aggregate") {
            let v = &args[j + 1];
            how = if is(v, "sum") {
                Aggregate::Sum
            } else if is(v, "min") {
                Aggregate::Min
            } else if is(v, "max") {
                Aggregate::Max
            } else {
                return Err(SYNTAX.into());
            };
            j += 2;
        } else if dst.is_none() && !card_only && is(a, "withscores") {
            withscores = true;
            j += 1;
        } else if card_only && remaining >= 2 && is(a, "limit") {
            limit = positive(&args[j + 1], "ERR LIMIT can't be negative")?;
            j += 2;
        } else {
            return Err(SYNTAX.into());
        }
    }
    let lim = limits(ctx);
    let db = &ctx.srv.dbs[ctx.db];
    let mut srcs: Vec<(Src, f64)> = keys
        .iter()
        .zip(&weights)
        .map(|(k, &w)| {
            let src = match db.dict.get(k).map(|e| &e.val) {
                Some(Value::ZSet(z)) => Src::Z(z),
                Some(Value::Set(s)) => Src::S(s, s.iter().map(|m| m.to_vec()).collect()),
                _ => Src::Missing,
            };
            (src, w)
        })
        .collect();
    if op != SetOp::Diff {
        // Smallest inputs first, as Redis orders them (this also fixes the order scores add up in).
        srcs.sort_by_key(|(s, _)| s.len());
    }
    let mut result: Vec<(&[u8], f64)> = Vec::new();
    let mut card = 0i64;
    match op {
        SetOp::Inter => {
            let (first, w0) = (&srcs[0].0, srcs[0].1);
            for (m, s0) in first.items() {
                let mut sc = w0 * s0;
                if sc.is_nan() {
                    sc = 0.0;
                }
                let all = srcs[1..].iter().all(|(src, w)| match src.find(m) {
                    Some(v) => {
                        aggregate(&mut sc, v * w, how);
                        true
                    }
                    None => false,
                });
                if !all {
                    continue;
                }
                if card_only {
                    card += 1;
                    if limit > 0 && card >= limit {
                        break;
                    }
                } else {
                    result.push((m, sc));
                }
            }
        }
        SetOp::Union => {
            let mut acc: HashMap<&[u8], f64> = HashMap::new();
            let mut order: Vec<&[u8]> = Vec::new();
            for (src, w) in &srcs {
                for (m, s) in src.items() {
                    let mut sc = w * s;
                    if sc.is_nan() {
                        sc = 0.0;
                    }
                    match acc.get_mut(m) {
                        Some(t) => aggregate(t, sc, how),
                        None => {
                            acc.insert(m, sc);
                            order.push(m);
                        }
                    }
                }
            }
            result = order.into_iter().map(|m| (m, acc[m])).collect();
        }
        SetOp::Diff => {
            let first = &srcs[0].0;
            for (m, s) in first.items() {
                if !srcs[1..].iter().any(|(src, _)| src.find(m).is_some()) {
                    result.push((m, s));
                }
            }
        }
    }
    if card_only {
        ctx.out.int(card);
        return Ok(());
    }
    result.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .expect("scores are never NaN")
            .then_with(|| a.0.cmp(b.0))
    });
    match dst {
        None => reply_members(
            ctx.out,
            result.into_iter().map(|(m, s)| (m.to_vec(), s)),
            withscores,
        ),
        Some(dst) => {
            let max_len = result.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
            let mut z = ZSet::for_result(result.len(), max_len, lim);
            for (m, s) in &result {
                z.insert(m, *s, lim);
            }
            let event = match op {
                SetOp::Union => "zunionstore",
                SetOp::Inter => "zinterstore",
                SetOp::Diff => "zdiffstore",
            };
            store_result(ctx, dst, z, event);
        }
    }
    Ok(())
}

/// ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]
///
/// # Format
/// `ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]` — stores
/// the union and replies its size. Plain sets count as members with score 1.
fn zunionstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 2, args.get(1), SetOp::Union, false)
}

/// ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]
///
/// # Format
/// `ZINTERSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]` — stores
/// the intersection and replies its size.
fn zinterstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 2, args.get(1), SetOp::Inter, false)
}

/// ZDIFFSTORE destination numkeys key [key ...]
///
/// # Format
/// `ZDIFFSTORE destination numkeys key [key ...]` — stores the members of the first set found in
/// none of the others, with their scores, and replies the size.
fn zdiffstore(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 2, args.get(1), SetOp::Diff, false)
}

/// ZUNION numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
///
/// # Format
/// `ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]` — the union.
fn zunion(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 1, None, SetOp::Union, false)
}

/// ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
///
/// # Format
/// `ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]` — the
/// intersection.
fn zinter(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 1, None, SetOp::Inter, false)
}

/// ZDIFF numkeys key [key ...] [WITHSCORES]
///
/// # Format
/// `ZDIFF numkeys key [key ...] [WITHSCORES]` — members of the first set in none of the others.
fn zdiff(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 1, None, SetOp::Diff, false)
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit]
///
/// # Format
/// `ZINTERCARD numkeys key [key ...] [LIMIT limit]` — the intersection's size, counting stops at
/// `limit` (0: no limit).
fn zintercard(ctx: &mut Ctx, args: Args) -> CmdResult {
    setop_generic(ctx, args, 1, None, SetOp::Inter, true)
}

pub const COMMANDS: &[Command] = &[
    Command::new("zunionstore", zunionstore, -4, WRITE | DENYOOM | MOVABLEKEYS).key(1, OW | UPDATE).key_num(2, RO | ACCESS).key_finder(store_keys).group(GROUP)
        .doc("Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
            "destination:key numkeys:integer key [key ...] [WEIGHTS weight:integer [weight:integer ...]] [AGGREGATE aggregate:(SUM | MIN | MAX)]"),
    Command::new("zinterstore", zinterstore, -4, WRITE | DENYOOM | MOVABLEKEYS).key(1, OW | UPDATE).key_num(2, RO | ACCESS).key_finder(store_keys).group(GROUP)
        .doc("Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
            "destination:key numkeys:integer key [key ...] [WEIGHTS weight:integer [weight:integer ...]] [AGGREGATE aggregate:(SUM | MIN | MAX)]"),
    Command::new("zdiffstore", zdiffstore, -4, WRITE | DENYOOM | MOVABLEKEYS).key(1, OW | UPDATE).key_num(2, RO | ACCESS).key_finder(store_keys).group(GROUP)
        .doc("Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
            "destination:key numkeys:integer key [key ...]"),
    Command::new("zunion", zunion, -3, READONLY | MOVABLEKEYS).key_num(1, RO | ACCESS).key_finder(inputs_keys).group(GROUP)
        .doc("Add multiple sorted sets", "6.2.0", "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
            "numkeys:integer key [key ...] [WEIGHTS weight:integer [weight:integer ...]] [AGGREGATE aggregate:(SUM | MIN | MAX)] [WITHSCORES]"),
    Command::new("zinter", zinter, -3, READONLY | MOVABLEKEYS).key_num(1, RO | ACCESS).key_finder(inputs_keys).group(GROUP)
        .doc("Intersect multiple sorted sets", "6.2.0", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
            "numkeys:integer key [key ...] [WEIGHTS weight:integer [weight:integer ...]] [AGGREGATE aggregate:(SUM | MIN | MAX)] [WITHSCORES]"),
    Command::new("zdiff", zdiff, -3, READONLY | MOVABLEKEYS).key_num(1, RO | ACCESS).key_finder(inputs_keys).group(GROUP)
        .doc("Subtract multiple sorted sets", "6.2.0", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
            "numkeys:integer key [key ...] [WITHSCORES]"),
    Command::new("zintercard", zintercard, -3, READONLY | MOVABLEKEYS).key_num(1, RO | ACCESS).key_finder(inputs_keys).group(GROUP)
        .doc("Intersect multiple sorted sets and return the cardinality of the result", "7.0.0", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
            "numkeys:integer key [key ...] [LIMIT limit:integer]"),
];
