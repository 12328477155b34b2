//! Lists (Redis's t_list.c): pushes and pops at both ends, indexed access, ranges, LREM, LINSERT,
//! LPOS, the moves (LMOVE, RPOPLPUSH), LMPOP, and the blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and
//! BLMPOP, which wait through `server::blocking` (`ctx.block_on`) when no key can serve them.

use super::keyspec::{keys_after_numkeys, ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use super::parse::{self, int, is};
use super::{
    err, Args, CmdError, CmdResult, Command, Ctx, BLOCKING, DENYOOM, FAST, MOVABLEKEYS, NOSCRIPT,
    READONLY, WRITE,
};
use crate::resp::reply::{Reply, NO_SUCH_KEY, SYNTAX, WRONGTYPE};
use crate::server::blocking::{TimeoutReply, Wait};
use crate::server::notify::{GENERIC, LIST};
use crate::store::list::End;
use crate::store::{Db, Entry, List, Value, NO_EXPIRE};

const GROUP: &str = "list";

/// BLPOP, BRPOP and BLMPOP wait for a list and give up with a null array.
const POP_WAIT: Wait = Wait {
    type_name: "list",
    on_timeout: TimeoutReply::NullArray,
    denied: TimeoutReply::NullArray,
    gone: None,
};

/// BLMOVE and BRPOPLPUSH wait for a list; they time out with a null array (as every list wait in
/// Redis 7.0) but answer a null bulk when they may not block.
const MOVE_WAIT: Wait = Wait {
    type_name: "list",
    on_timeout: TimeoutReply::NullArray,
    denied: TimeoutReply::Null,
    gone: None,
};

fn as_list_mut(e: &mut Entry) -> Result<&mut List, CmdError> {
    match &mut e.val {
        Value::List(l) => Ok(l),
        _ => Err(WRONGTYPE.into()),
    }
}

/// The list at `key` for writing: `Ok(None)` if absent, WRONGTYPE for another type.
fn list_mut<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut List>, CmdError> {
    match db.lookup_mut(key) {
        None => Ok(None),
        Some(e) => as_list_mut(e).map(Some),
    }
}

/// The list at `key` for reading (counts a keyspace hit or miss).
fn list_read<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut List>, CmdError> {
    match db.lookup(key) {
        None => Ok(None),
        Some(e) => as_list_mut(e).map(Some),
    }
}

/// `LEFT` or `RIGHT`, else a syntax error.
fn end_arg(arg: &[u8]) -> Result<End, CmdError> {
    if is(arg, "left") {
        Ok(End::Head)
    } else if is(arg, "right") {
        Ok(End::Tail)
    } else {
        Err(SYNTAX.into())
    }
}

/// The event of a pop from `end` (`lpop`, `rpop`).
fn pop_event(end: End) -> &'static str {
    match end {
        End::Head => "lpop",
        End::Tail => "rpop",
    }
}

/// The event of a push onto `end` (`lpush`, `rpush`).
fn push_event(end: End) -> &'static str {
    match end {
        End::Head => "lpush",
        End::Tail => "rpush",
    }
}

/// Deletes `key` if its list became empty, with the `del` event Redis fires after the command's own.
fn delete_if_emptied(ctx: &mut Ctx, key: &[u8], emptied: bool) {
    if emptied {
        ctx.db().remove(key);
        ctx.notify(GENERIC, "del", key);
    }
}

/// LMPOP and the blocking pops replay as the LPOP or RPOP of the key they popped from, with the
/// count popped if they took one (Redis's `listPopRangeAndReplyWithKey` and
/// `blockingPopGenericCommand`).
fn replay_pop(ctx: &mut Ctx, key: &[u8], end: End, count: Option<usize>) {
    let verb: &[u8] = match end {
        End::Head => b"LPOP",
        End::Tail => b"RPOP",
    };
    match count {
        Some(n) => ctx.propagate_as(&[verb, key, n.to_string().as_bytes()]),
        None => ctx.propagate_as(&[verb, key]),
    }
}

/// After `n` elements were popped from `end` of `key` (Redis's `listElementsRemoved`): the pop
/// event, then an emptied list is deleted, the key signalled, the changes counted.
fn elements_removed(ctx: &mut Ctx, key: &[u8], end: End, emptied: bool, n: usize) {
    ctx.notify(LIST, pop_event(end), key);
    delete_if_emptied(ctx, key, emptied);
    ctx.signal_modified(key);
    ctx.srv.dirty += n as u64;
}

/// Pops up to `count` elements from `end`, replying them as an array in pop order. Returns how many.
fn pop_range(out: &mut Reply, l: &mut List, end: End, count: i64) -> usize {
    let n = (count.max(0) as u64).min(l.len() as u64) as usize;
    out.array(n);
    for _ in 0..n {
        if let Some(v) = l.pop(end) {
            out.bulk(&v);
        }
    }
    n
}

/// `[key, [elements...]]`, as LMPOP and BLMPOP reply (Redis's `listPopRangeAndReplyWithKey`).
fn pop_range_with_key(out: &mut Reply, l: &mut List, key: &[u8], end: End, count: i64) -> usize {
    out.array(2);
    out.bulk(key);
    pop_range(out, l, end, count)
}

/// LPUSH key element [element ...]
///
/// # Format
/// `LPUSH key element [element ...]` — the list's length after the pushes.
fn lpush(ctx: &mut Ctx, args: Args) -> CmdResult {
    push_generic(ctx, args, End::Head, false)
}

/// RPUSH key element [element ...]
///
/// # Format
/// `RPUSH key element [element ...]` — the list's length after the pushes.
fn rpush(ctx: &mut Ctx, args: Args) -> CmdResult {
    push_generic(ctx, args, End::Tail, false)
}

/// LPUSHX key element [element ...]
///
/// # Format
/// `LPUSHX key element [element ...]` — as LPUSH, only if the list exists (else 0).
fn lpushx(ctx: &mut Ctx, args: Args) -> CmdResult {
    push_generic(ctx, args, End::Head, true)
}

/// RPUSHX key element [element ...]
///
/// # Format
/// `RPUSHX key element [element ...]` — as RPUSH, only if the list exists (else 0).
fn rpushx(ctx: &mut Ctx, args: Args) -> CmdResult {
    push_generic(ctx, args, End::Tail, true)
}

/// Shared by the four pushes (Redis's `pushGenericCommand`); `xx`: only onto an existing list.
fn push_generic(ctx: &mut Ctx, args: Args, end: End, xx: bool) -> CmdResult {
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let len = match list_mut(db, key)? {
        Some(l) => {
            for v in args.tail(2).iter() {
                l.push(end, v.to_vec());
            }
            l.len()
        }
        None if xx => {
            ctx.out.int(0);
            return Ok(());
        }
        None => {
            let mut l = List::default();
            for v in args.tail(2).iter() {
                l.push(end, v.to_vec());
            }
            let len = l.len();
            db.set(key, Value::List(Box::new(l)), Some(NO_EXPIRE));
            len
        }
    };
    ctx.srv.dirty += (args.len() - 2) as u64;
    ctx.signal_modified(key);
    ctx.notify(LIST, push_event(end), key);
    ctx.out.int(len as i64);
    Ok(())
}

/// LPOP key [count]
///
/// # Format
/// `LPOP key [count]` — the first element (null if none), or with a count an array of up to count
/// (a null array if the key is missing).
fn lpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    pop_generic(ctx, args, End::Head)
}

/// RPOP key [count]
///
/// # Format
/// `RPOP key [count]` — as LPOP, from the tail.
fn rpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    pop_generic(ctx, args, End::Tail)
}

fn pop_generic(ctx: &mut Ctx, args: Args, end: End) -> CmdResult {
    if args.len() > 3 {
        return Err(err(format!(
            "wrong number of arguments for '{}' command",
            parse::text(&args[0]).to_ascii_lowercase()
        )));
    }
    let count = match args.get(2) {
        Some(c) => Some(parse::positive(
            c,
            "ERR value is out of range, must be positive",
        )?),
        None => None,
    };
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_mut(db, key)? else {
        match count {
            Some(_) => ctx.out.null_array(),
            None => ctx.out.null(),
        }
        return Ok(());
    };
    let n = match count {
        Some(0) => {
            ctx.out.array(0);
            return Ok(());
        }
        Some(c) => pop_range(ctx.out, l, end, c),
        None => match l.pop(end) {
            Some(v) => {
                ctx.out.bulk(&v);
                1
            }
            None => {
                // An empty list is never stored; nothing changed, so no event.
                ctx.out.null();
                return Ok(());
            }
        },
    };
    let emptied = l.is_empty();
    elements_removed(ctx, key, end, emptied, n);
    Ok(())
}

/// LLEN key
///
/// # Format
/// `LLEN key` — the length (0 if missing).
fn llen(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = list_read(ctx.db(), &args[1])?.map_or(0, |l| l.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// LRANGE key start stop
///
/// # Format
/// `LRANGE key start stop` — the elements from start to stop inclusive (negative from the tail).
fn lrange(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (start, stop) = (int(&args[2])?, int(&args[3])?);
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_read(db, &args[1])? else {
        ctx.out.array(0);
        return Ok(());
    };
    match l.range(start, stop) {
        None => ctx.out.array(0),
        Some((s, e)) => ctx.out.bulks(l.items.range(s..=e).map(|v| v.as_slice())),
    }
    Ok(())
}

/// LINDEX key index
///
/// # Format
/// `LINDEX key index` — the element at index (negative from the tail), null if out of range.
fn lindex(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_read(db, &args[1])? else {
        ctx.out.null();
        return Ok(());
    };
    let i = int(&args[2])?;
    match l.index(i) {
        Some(p) => ctx.out.bulk(&l.items[p]),
        None => ctx.out.null(),
    }
    Ok(())
}

/// LSET key index element
///
/// # Format
/// `LSET key index element` — `+OK`; errors for a missing key or an index out of range.
fn lset(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_mut(db, &args[1])? else {
        return Err(NO_SUCH_KEY.into());
    };
    let i = int(&args[2])?;
    let p = l.index(i).ok_or("ERR index out of range")?;
    l.items[p] = args[3].to_vec();
    ctx.signal_modified(&args[1]);
    ctx.notify(LIST, "lset", &args[1]);
    ctx.srv.dirty += 1;
    ctx.out.ok();
    Ok(())
}

/// LREM key count element
///
/// # Format
/// `LREM key count element` — removes up to count occurrences (from the head; negative: from the
/// tail; 0: all); the number removed.
fn lrem(ctx: &mut Ctx, args: Args) -> CmdResult {
    let count = int(&args[2])?;
    let key = &args[1];
    let elem = &args[3];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_mut(db, key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let limit = if count == 0 {
        u64::MAX
    } else {
        count.unsigned_abs()
    };
    let mut removed = 0u64;
    let mut keep = |v: &Vec<u8>| {
        if removed < limit && v[..] == *elem {
            removed += 1;
            false
        } else {
            true
        }
    };
    if count < 0 {
        l.items.make_contiguous().reverse();
        l.items.retain(&mut keep);
        l.items.make_contiguous().reverse();
    } else {
        l.items.retain(&mut keep);
    }
    let emptied = l.is_empty();
    if removed > 0 {
        ctx.signal_modified(key);
        ctx.notify(LIST, "lrem", key);
    }
    delete_if_emptied(ctx, key, emptied);
    ctx.srv.dirty += removed;
    ctx.out.int(removed as i64);
    Ok(())
}

/// LTRIM key start stop
///
/// # Format
/// `LTRIM key start stop` — keeps only start..=stop; `+OK`.
fn ltrim(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (start, stop) = (int(&args[2])?, int(&args[3])?);
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_mut(db, key)? else {
        ctx.out.ok();
        return Ok(());
    };
    let len = l.len();
    let (ltrim, rtrim) = match l.range(start, stop) {
        None => (0, len),
        Some((s, e)) => (s, len - e - 1),
    };
    l.items.truncate(len - rtrim);
    l.items.drain(..ltrim.min(l.items.len()));
    let emptied = l.is_empty();
    // Redis fires `ltrim` for any existing list, even when nothing was trimmed.
    ctx.notify(LIST, "ltrim", key);
    delete_if_emptied(ctx, key, emptied);
    ctx.signal_modified(key);
    ctx.srv.dirty += (ltrim + rtrim) as u64;
    ctx.out.ok();
    Ok(())
}

/// LINSERT key BEFORE | AFTER pivot element
///
/// # Format
/// `LINSERT key BEFORE|AFTER pivot element` — the new length, -1 if the pivot is not found, 0 if
/// the key is missing.
fn linsert(ctx: &mut Ctx, args: Args) -> CmdResult {
    let after = if is(&args[2], "after") {
        true
    } else if is(&args[2], "before") {
        false
    } else {
        return Err(SYNTAX.into());
    };
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_mut(db, key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let Some(p) = l.items.iter().position(|v| v[..] == args[3]) else {
        ctx.out.int(-1);
        return Ok(());
    };
    l.items.insert(p + usize::from(after), args[4].to_vec());
    let len = l.len();
    ctx.signal_modified(key);
    ctx.notify(LIST, "linsert", key);
    ctx.srv.dirty += 1;
    ctx.out.int(len as i64);
    Ok(())
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
///
/// # Format
/// `LPOS key element [RANK rank] [COUNT n] [MAXLEN len]` — the index of the rank-th match (negative
/// rank: searching from the tail), or with COUNT an array of up to n indexes (0: all); MAXLEN caps
/// the elements compared.
fn lpos(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0i64);
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        if is(&args[j], "rank") && more {
            j += 1;
            rank = int(&args[j])?;
            if rank == 0 {
                return Err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list".into());
            }
        } else if is(&args[j], "count") && more {
            j += 1;
            count = Some(parse::positive(&args[j], "ERR COUNT can't be negative")?);
        } else if is(&args[j], "maxlen") && more {
            j += 1;
            maxlen = parse::positive(&args[j], "ERR MAXLEN can't be negative")?;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    // A negative rank searches from the tail. Redis 7.0 negates a long: i64::MIN stays negative.
    let from_tail = rank < 0;
    if from_tail {
        rank = rank.wrapping_neg();
    }
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(l) = list_read(db, &args[1])? else {
        match count {
            Some(_) => ctx.out.array(0),
            None => ctx.out.null(),
        }
        return Ok(());
    };
    let len = l.len();
    let elem = &args[2];
    let scan: Box<dyn Iterator<Item = usize>> = if from_tail {
        Box::new((0..len).rev())
    } else {
        Box::new(0..len)
    };
    let limit = if maxlen == 0 {
        usize::MAX
    } else {
        maxlen as usize
    };
    let mut matches = 0i64;
    let mut found = Vec::new();
    for idx in scan.take(limit) {
        if l.items[idx][..] != *elem {
            continue;
        }
        matches += 1;
        if matches >= rank {
            found.push(idx as i64);
            match count {
                None => break,
                Some(c) if c != 0 && matches - rank + 1 >= c => break,
                _ => {}
            }
        }
    }
    match count {
        Some(_) => {
            ctx.out.array(found.len());
            for i in found {
                ctx.out.int(i);
            }
        }
        None => match found.first() {
            Some(&i) => ctx.out.int(i),
            None => ctx.out.null(),
        },
    }
    Ok(())
}

/// LMOVE source destination wherefrom:(LEFT | RIGHT) whereto:(LEFT | RIGHT)
///
/// # Format
/// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT` — pops from source's first end, pushes onto
/// destination's second end; the element, or null if source is missing.
fn lmove(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (from, to) = (end_arg(&args[3])?, end_arg(&args[4])?);
    lmove_generic(ctx, &args[1], &args[2], from, to)
}

/// RPOPLPUSH source destination
///
/// # Format
/// `RPOPLPUSH source destination` — `LMOVE source destination RIGHT LEFT`.
fn rpoplpush(ctx: &mut Ctx, args: Args) -> CmdResult {
    lmove_generic(ctx, &args[1], &args[2], End::Tail, End::Head)
}

/// Shared by LMOVE, RPOPLPUSH and the blocking moves (Redis's `lmoveGenericCommand`).
fn lmove_generic(ctx: &mut Ctx, src: &[u8], dst: &[u8], from: End, to: End) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    match list_mut(db, src)? {
        Some(l) if !l.is_empty() => {}
        _ => {
            ctx.out.null();
            return Ok(());
        }
    }
    if let Some(e) = db.lookup_mut(dst) {
        as_list_mut(e)?;
    }
    let l = list_mut(db, src)?.expect("checked above");
    let v = l.pop(from).expect("checked non-empty");
    let mut emptied = false;
    if src == dst {
        l.push(to, v.clone());
    } else {
        emptied = l.is_empty();
        match list_mut(db, dst)? {
            Some(d) => d.push(to, v.clone()),
            None => {
                let mut d = List::default();
                d.push(to, v.clone());
                db.set(dst, Value::List(Box::new(d)), Some(NO_EXPIRE));
            }
        }
    }
    // As Redis's `lmoveHandlePush` and `lmoveGenericCommand`: the push on the destination is
    // notified first, then the pop from the source and its deletion if emptied.
    ctx.notify(LIST, push_event(to), dst);
    ctx.notify(LIST, pop_event(from), src);
    delete_if_emptied(ctx, src, emptied);
    ctx.signal_modified(dst);
    if src != dst {
        ctx.signal_modified(src);
    }
    ctx.srv.dirty += 1;
    ctx.out.bulk(&v);
    Ok(())
}

/// The parsed tail of LMPOP / BLMPOP: key positions, end and count.
struct MpopArgs {
    first_key: usize,
    numkeys: usize,
    end: End,
    count: i64,
}

/// Parses `numkeys key [key ...] LEFT|RIGHT [COUNT count]` from `args[at]` (Redis's
/// `lmpopGenericCommand`).
fn mpop_args(args: Args, at: usize) -> Result<MpopArgs, CmdError> {
    let numkeys = parse::int_or(
        &args[at],
        1,
        i64::MAX,
        "ERR numkeys should be greater than 0",
    )?;
    let where_idx = (at as i64).saturating_add(numkeys).saturating_add(1);
    if where_idx >= args.len() as i64 {
        return Err(SYNTAX.into());
    }
    let where_idx = where_idx as usize;
    let end = end_arg(&args[where_idx])?;
    let mut count = None;
    let mut j = where_idx + 1;
    while j < args.len() {
        if count.is_none() && is(&args[j], "count") && j + 1 < args.len() {
            j += 1;
            count = Some(parse::int_or(
                &args[j],
                1,
                i64::MAX,
                "ERR count should be greater than 0",
            )?);
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    Ok(MpopArgs {
        first_key: at + 1,
        numkeys: numkeys as usize,
        end,
        count: count.unwrap_or(1),
    })
}

/// LMPOP numkeys key [key ...] LEFT | RIGHT [COUNT count]
///
/// # Format
/// `LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]` — from the first non-empty list,
/// `[key, [elements]]`; a null array if every list is empty.
fn lmpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    let m = mpop_args(args, 1)?;
    for i in m.first_key..m.first_key + m.numkeys {
        let key = &args[i];
        let db = &mut ctx.srv.dbs[ctx.db];
        let Some(l) = list_mut(db, key)? else {
            continue;
        };
        if l.is_empty() {
            continue;
        }
        let n = pop_range_with_key(ctx.out, l, key, m.end, m.count);
        let emptied = l.is_empty();
        replay_pop(ctx, key, m.end, Some(n));
        elements_removed(ctx, key, m.end, emptied, n);
        return Ok(());
    }
    ctx.out.null_array();
    Ok(())
}

/// BLPOP key [key ...] timeout
///
/// # Format
/// `BLPOP key [key ...] timeout` — `[key, element]` from the first non-empty list, else blocks until
/// one is pushed or timeout seconds (fractional, 0 = forever) pass (then a null array).
fn blpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    let timeout = parse::timeout(&args[args.len() - 1])?;
    bpop_generic(ctx, args, 1, args.len() - 2, End::Head, None, timeout)
}

/// BRPOP key [key ...] timeout
///
/// # Format
/// `BRPOP key [key ...] timeout` — as BLPOP, from the tail.
fn brpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    let timeout = parse::timeout(&args[args.len() - 1])?;
    bpop_generic(ctx, args, 1, args.len() - 2, End::Tail, None, timeout)
}

/// BLMPOP timeout numkeys key [key ...] LEFT | RIGHT [COUNT count]
///
/// # Format
/// `BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]` — as LMPOP, blocking while every
/// list is empty (a null array on timeout).
fn blmpop(ctx: &mut Ctx, args: Args) -> CmdResult {
    // Redis checks numkeys, LEFT|RIGHT and COUNT before the timeout.
    let m = mpop_args(args, 2)?;
    let timeout = parse::timeout(&args[1])?;
    bpop_generic(
        ctx,
        args,
        m.first_key,
        m.numkeys,
        m.end,
        Some(m.count),
        timeout,
    )
}

/// Shared by BLPOP, BRPOP and BLMPOP (Redis's `blockingPopGenericCommand`): serves from the first
/// non-empty list of `args[first..first + n]`, else blocks. `count` is BLMPOP's (nested reply).
fn bpop_generic(
    ctx: &mut Ctx,
    args: Args,
    first: usize,
    n: usize,
    end: End,
    count: Option<i64>,
    timeout: u64,
) -> CmdResult {
    for i in first..first + n {
        let key = &args[i];
        if !ctx.serving(key) {
            continue;
        }
        let db = &mut ctx.srv.dbs[ctx.db];
        let Some(l) = list_mut(db, key)? else {
            continue;
        };
        if l.is_empty() {
            continue;
        }
        let popped = match count {
            Some(c) => pop_range_with_key(ctx.out, l, key, end, c),
            None => {
                let v = l.pop(end).expect("checked non-empty");
                ctx.out.array(2);
                ctx.out.bulk(key);
                ctx.out.bulk(&v);
                1
            }
        };
        let emptied = l.is_empty();
        replay_pop(ctx, key, end, count.map(|_| popped));
        elements_removed(ctx, key, end, emptied, popped);
        return Ok(());
    }
    let keys: Vec<&[u8]> = (first..first + n).map(|i| &args[i]).collect();
    ctx.block_on(args, &keys, timeout, POP_WAIT)
}

/// BLMOVE source destination wherefrom:(LEFT | RIGHT) whereto:(LEFT | RIGHT) timeout
///
/// # Format
/// `BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout` — as LMOVE, blocking while source is
/// missing (a null on timeout).
fn blmove(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (from, to) = (end_arg(&args[3])?, end_arg(&args[4])?);
    let timeout = parse::timeout(&args[5])?;
    // Served, it replays as the LMOVE it did (Redis's `blmoveGenericCommand`).
    ctx.propagate_as(&[b"LMOVE", &args[1], &args[2], &args[3], &args[4]]);
    blmove_generic(ctx, args, from, to, timeout)
}

/// BRPOPLPUSH source destination timeout
///
/// # Format
/// `BRPOPLPUSH source destination timeout` — `BLMOVE source destination RIGHT LEFT timeout`.
fn brpoplpush(ctx: &mut Ctx, args: Args) -> CmdResult {
    let timeout = parse::timeout(&args[3])?;
    ctx.propagate_as(&[b"RPOPLPUSH", &args[1], &args[2]]);
    blmove_generic(ctx, args, End::Tail, End::Head, timeout)
}

fn blmove_generic(ctx: &mut Ctx, args: Args, from: End, to: End, timeout: u64) -> CmdResult {
    let src = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    if list_mut(db, src)?.is_some() {
        return lmove_generic(ctx, src, &args[2], from, to);
    }
    ctx.block_on(args, &[src], timeout, MOVE_WAIT)
}

/// LMPOP's keys: `numkeys` is its first argument.
fn lmpop_keys(args: Args) -> Vec<(usize, u32)> {
    keys_after_numkeys(args, 1, None)
}

/// BLMPOP's keys: `numkeys` follows the timeout.
fn blmpop_keys(args: Args) -> Vec<(usize, u32)> {
    keys_after_numkeys(args, 2, None)
}

const BLOCKING_POP_SYNTAX: &str = "key [key ...] timeout:double";
const MPOP_SYNTAX: &str =
    "numkeys:integer key [key ...] where:(LEFT | RIGHT) [COUNT count:integer]";

pub const COMMANDS: &[Command] = &[
    Command::new("lpush", lpush, -3, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .doc("Prepend one or multiple elements to a list", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "key element [element ...]"),
    Command::new("rpush", rpush, -3, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .doc("Append one or multiple elements to a list", "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "key element [element ...]"),
    Command::new("lpushx", lpushx, -3, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .doc("Prepend an element to a list, only if the list exists", "2.2.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "key element [element ...]"),
    Command::new("rpushx", rpushx, -3, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .doc("Append an element to a list, only if the list exists", "2.2.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.", "key element [element ...]"),
    Command::new("lpop", lpop, -2, WRITE | FAST).key(1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("6.2.0", "Added the `count` argument.")])
        .arg_since(&[("count", "6.2.0")])
        .doc("Remove and get the first elements in a list", "1.0.0", "O(N) where N is the number of elements returned", "key [count:integer]"),
    Command::new("rpop", rpop, -2, WRITE | FAST).key(1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("6.2.0", "Added the `count` argument.")])
        .arg_since(&[("count", "6.2.0")])
        .doc("Remove and get the last elements in a list", "1.0.0", "O(N) where N is the number of elements returned", "key [count:integer]"),
    Command::new("llen", llen, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Get the length of a list", "1.0.0", "O(1)", "key"),
    Command::new("lrange", lrange, 4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Get a range of elements from a list", "1.0.0", "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.", "key start:integer stop:integer"),
    Command::new("lindex", lindex, 3, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Get an element from a list by its index", "1.0.0", "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).", "key index:integer"),
    Command::new("lset", lset, 4, WRITE | DENYOOM).key(1, RW | UPDATE).group(GROUP)
        .doc("Set the value of an element in a list by its index", "1.0.0", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).", "key index:integer element"),
    Command::new("lrem", lrem, 4, WRITE).key(1, RW | DELETE).group(GROUP)
        .doc("Remove elements from a list", "1.0.0", "O(N+M) where N is the length of the list and M is the number of elements removed.", "key count:integer element"),
    Command::new("ltrim", ltrim, 4, WRITE).key(1, RW | DELETE).group(GROUP)
        .doc("Trim a list to the specified range", "1.0.0", "O(N) where N is the number of elements to be removed by the operation.", "key start:integer stop:integer"),
    Command::new("linsert", linsert, 5, WRITE | DENYOOM).key(1, RW | INSERT).group(GROUP)
        .doc("Insert an element before or after another element in a list", "2.2.0", "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).", "key where:(BEFORE | AFTER) pivot element"),
    Command::new("lpos", lpos, -3, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Return the index of matching elements on a list", "6.0.6", "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.", "key element [RANK rank:integer] [COUNT num-matches:integer] [MAXLEN len:integer]"),
    Command::new("lmove", lmove, 5, WRITE | DENYOOM).key(1, RW | ACCESS | DELETE).key(2, RW | INSERT).group(GROUP)
        .doc("Pop an element from a list, push it to another list and return it", "6.2.0", "O(1)", "source:key destination:key wherefrom:(LEFT | RIGHT) whereto:(LEFT | RIGHT)"),
    Command::new("rpoplpush", rpoplpush, 3, WRITE | DENYOOM).key(1, RW | ACCESS | DELETE).key(2, RW | INSERT).group(GROUP)
        .deprecated("6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments")
        .doc("Remove the last element in a list, prepend it to another list and return it", "1.2.0", "O(1)", "source:key destination:key"),
    Command::new("lmpop", lmpop, -4, WRITE | MOVABLEKEYS).key_num(1, RW | ACCESS | DELETE).key_finder(lmpop_keys).group(GROUP)
        .doc("Pop elements from a list", "7.0.0", "O(N+M) where N is the number of provided keys and M is the number of elements returned.", MPOP_SYNTAX),
    Command::new("blpop", blpop, -3, WRITE | NOSCRIPT | BLOCKING).key_range(1, -2, 1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .doc("Remove and get the first element in a list, or block until one is available", "2.0.0", "O(N) where N is the number of provided keys.", BLOCKING_POP_SYNTAX),
    Command::new("brpop", brpop, -3, WRITE | NOSCRIPT | BLOCKING).key_range(1, -2, 1, RW | ACCESS | DELETE).group(GROUP)
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .doc("Remove and get the last element in a list, or block until one is available", "2.0.0", "O(N) where N is the number of provided keys.", BLOCKING_POP_SYNTAX),
    Command::new("blmove", blmove, 6, WRITE | DENYOOM | NOSCRIPT | BLOCKING).key(1, RW | ACCESS | DELETE).key(2, RW | INSERT).group(GROUP)
        .doc("Pop an element from a list, push it to another list and return it; or block until one is available", "6.2.0", "O(1)", "source:key destination:key wherefrom:(LEFT | RIGHT) whereto:(LEFT | RIGHT) timeout:double"),
    Command::new("brpoplpush", brpoplpush, 4, WRITE | DENYOOM | NOSCRIPT | BLOCKING).key(1, RW | ACCESS | DELETE).key(2, RW | INSERT).group(GROUP)
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .deprecated("6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments")
        .doc("Pop an element from a list, push it to another list and return it; or block until one is available", "2.2.0", "O(1)", "source:key destination:key timeout:double"),
    Command::new("blmpop", blmpop, -5, WRITE | BLOCKING | MOVABLEKEYS).key_num(2, RW | ACCESS | DELETE).key_finder(blmpop_keys).group(GROUP)
        .doc("Pop elements from a list, or block until one is available", "7.0.0", "O(N+M) where N is the number of provided keys and M is the number of elements returned.", "timeout:double numkeys:integer key [key ...] where:(LEFT | RIGHT) [COUNT count:integer]"),
];

/// The kernel's blocking machinery (server/blocking.rs) driven through the list family's blocking
/// commands, in process: what a client waits for, in what order it is served, and its timeout.
#[cfg(test)]
mod blocking_tests {
    use std::time::Duration;

    use slab::Slab;

    use crate::config::Config;
    use crate::resp::parser::Args;
    use crate::resp::reply::Reply;
    use crate::server::blocking::{handle_timeouts, serve_ready, unblock_by_request};
    use crate::server::client::Client;
    use crate::server::client::Conn;
    use crate::server::ctx::Ctx;
    use crate::server::{gate, State};

    /// A client on a real (loopback) socket nobody reads: enough for handlers and reply buffers.
    fn client(clients: &mut Slab<Client>, keep: &mut Vec<std::net::TcpStream>) -> usize {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        keep.push(peer);
        let conn = Conn::Tcp(mio::net::TcpStream::from_std(s));
        let id = clients.len() as u64 + 1;
        let mut c = Client::new(id, conn, 0, String::new(), String::new(), false);
        c.authenticated = true;
        clients.insert(c)
    }

    /// Runs one command line as client `id`, as the server does (serving ready keys after it).
    fn run(srv: &mut State, clients: &mut Slab<Client>, id: usize, line: &str) -> Vec<u8> {
        let words: Vec<&str> = line.split(' ').collect();
        let mut buf = Vec::new();
        let mut spans = Vec::new();
        for w in &words {
            let s = buf.len();
            buf.extend_from_slice(w.as_bytes());
            spans.push((s, buf.len()));
        }
        let mut out = std::mem::take(&mut clients[id].out);
        let mark = out.buf.len();
        {
            let db = clients[id].db;
            let mut ctx = Ctx {
                srv,
                clients,
                id,
                db,
                out: &mut out,
                reactor: None,
            };
            gate::execute(&mut ctx, Args::new(&buf, &spans));
        }
        let reply = out.buf[mark..].to_vec();
        clients[id].out = out;
        serve_ready(srv, clients);
        reply
    }

    /// A server with every command family and engine, as `main` builds it.
    fn server() -> State {
        let config = Config::default();
        let scripting = Box::new(crate::script::Scripting::new(&config));
        let table = crate::server::table::Table::build(crate::cmd::families());
        State::new(config, None, table, scripting)
    }

    fn taken(clients: &mut Slab<Client>, id: usize) -> Vec<u8> {
        std::mem::replace(&mut clients[id].out, Reply::new(false)).buf
    }

    #[test]
    fn deny_blocking_answers_at_once() {
        let mut srv = server();
        let mut clients = Slab::new();
        let mut keep = Vec::new();
        let c = client(&mut clients, &mut keep);
        clients[c].deny_blocking = true;
        assert_eq!(run(&mut srv, &mut clients, c, "BLPOP k 0"), b"*-1\r\n");
        assert_eq!(run(&mut srv, &mut clients, c, "BRPOP k j 1"), b"*-1\r\n");
        assert_eq!(
            run(&mut srv, &mut clients, c, "BLMPOP 0 1 k LEFT"),
            b"*-1\r\n"
        );
        assert_eq!(
            run(&mut srv, &mut clients, c, "BLMOVE k d LEFT LEFT 0"),
            b"$-1\r\n"
        );
        assert_eq!(
            run(&mut srv, &mut clients, c, "BRPOPLPUSH k d 0"),
            b"$-1\r\n"
        );
        assert!(clients[c].blocked.is_none());
        assert_eq!(srv.blocking.blocked_clients, 0);
        assert!(srv.key_events.is_empty());
        // Errors and data still answer as usual.
        assert_eq!(
            run(&mut srv, &mut clients, c, "BLPOP k -1"),
            b"-ERR timeout is negative\r\n"
        );
        run(&mut srv, &mut clients, c, "RPUSH k a");
        assert_eq!(
            run(&mut srv, &mut clients, c, "BLPOP k 0"),
            b"*2\r\n$1\r\nk\r\n$1\r\na\r\n"
        );
    }

    #[test]
    fn blocks_then_served_fifo_by_reexecution() {
        let mut srv = server();
        let mut clients = Slab::new();
        let mut keep = Vec::new();
        let (a, b, p) = (
            client(&mut clients, &mut keep),
            client(&mut clients, &mut keep),
            client(&mut clients, &mut keep),
        );
        assert_eq!(run(&mut srv, &mut clients, a, "BLPOP k 0"), b"");
        assert_eq!(run(&mut srv, &mut clients, b, "BLPOP x k 5"), b"");
        assert_eq!(srv.blocking.blocked_clients, 2);
        assert_eq!(srv.blocking.in_timeout_table(), 1);
        assert!(clients[a].blocked.is_some());
        run(&mut srv, &mut clients, p, "RPUSH k 1");
        assert_eq!(taken(&mut clients, a), b"*2\r\n$1\r\nk\r\n$1\r\n1\r\n");
        assert_eq!(taken(&mut clients, b), b"");
        assert_eq!(srv.blocking.blocked_clients, 1);
        run(&mut srv, &mut clients, p, "RPUSH k 2 3");
        assert_eq!(taken(&mut clients, b), b"*2\r\n$1\r\nk\r\n$1\r\n2\r\n");
        assert_eq!(srv.blocking.blocked_clients, 0);
        assert_eq!(srv.blocking.in_timeout_table(), 0);
        assert!(srv.key_events.is_empty());
        assert_eq!(srv.blocking.unblocked, vec![a, b]);
        // Unblocking by request, and a timeout already passed.
        run(&mut srv, &mut clients, a, "BLPOP q 0");
        assert!(unblock_by_request(&mut srv, &mut clients, a, true));
        assert_eq!(
            taken(&mut clients, a),
            b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
        );
        assert!(!unblock_by_request(&mut srv, &mut clients, a, true));
        run(&mut srv, &mut clients, a, "BLMOVE q d LEFT LEFT 0.001");
        std::thread::sleep(Duration::from_millis(5));
        handle_timeouts(&mut srv, &mut clients);
        assert_eq!(taken(&mut clients, a), b"*-1\r\n");
        assert_eq!(srv.blocking.blocked_clients, 0);
    }
}
