//! Strings (Redis's t_string.c): GET, SET and its variants, counters, ranges, APPEND, LCS.

use super::keyspec::{ACCESS, DELETE, INSERT, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use super::parse::{int, is};
use super::{err, Args, CmdError, CmdResult, Command, Ctx, DENYOOM, FAST, READONLY, WRITE};
use crate::resp::reply::{Reply, NOT_INT, OVERFLOW, SYNTAX, WRONGTYPE};
use crate::server::notify::{GENERIC, STRING};
use crate::store::{Db, Entry, Str, Value, NO_EXPIRE};
use crate::util::{clock, incr_long_double, parse_i64, IncrFloatError};

const GROUP: &str = "string";

/// The string held by an entry, or WRONGTYPE.
pub fn as_str(e: &Entry) -> Result<&Str, CmdError> {
    match &e.val {
        Value::Str(s) => Ok(s),
        _ => Err(WRONGTYPE.into()),
    }
}

pub fn as_str_mut(e: &mut Entry) -> Result<&mut Str, CmdError> {
    match &mut e.val {
        Value::Str(s) => Ok(s),
        _ => Err(WRONGTYPE.into()),
    }
}

/// Reads a string key: `Ok(None)` if absent, WRONGTYPE for another type.
pub fn read_str<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d Str>, CmdError> {
    match db.lookup(key) {
        None => Ok(None),
        Some(e) => as_str(e).map(Some),
    }
}

pub fn reply_str(out: &mut Reply, s: &Str) {
    match s {
        Str::Int(n) => out.bulk_int(*n),
        Str::Inline { len, buf } => out.bulk(&buf[..*len as usize]),
        Str::Bytes { data, .. } => out.bulk(data),
    }
}

pub const TOO_BIG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// Checks a string's would-be size against `proto-max-bulk-len`.
fn check_len(ctx: &Ctx, size: i64, append: i64) -> CmdResult {
    let total = size.checked_add(append);
    match total {
        Some(t) if t <= ctx.srv.config.proto_max_bulk_len => Ok(()),
        _ => Err(TOO_BIG.into()),
    }
}

/// The string at `key` for an in-place write (SETRANGE, SETBIT, BITFIELD): created empty if
/// absent, made `raw`, zero-padded to at least `len` bytes; with whether it was created or grown.
/// An allocation failure is an error rather than an abort, as `proto-max-bulk-len` may be raised
/// far beyond the memory there is.
pub fn padded_for_write<'d>(
    db: &'d mut Db,
    key: &[u8],
    len: usize,
) -> Result<(&'d mut Vec<u8>, bool), CmdError> {
    let exists = match db.lookup_mut(key) {
        Some(e) => as_str(e).map(|_| true)?,
        None => false,
    };
    if !exists {
        let empty = Value::Str(Str::Bytes {
            data: Vec::new(),
            raw: true,
        });
        db.set(key, empty, Some(NO_EXPIRE));
    }
    let data = as_str_mut(db.lookup_mut(key).expect("present"))?.make_raw();
    let grown = data.len() < len;
    if grown {
        data.try_reserve_exact(len - data.len())
            .map_err(|_| CmdError::from(TOO_BIG))?;
        data.resize(len, 0);
    }
    Ok((data, grown))
}

/// Which expiry option a SET or GETEX carries.
#[derive(Clone, Copy, PartialEq)]
enum ExpireOpt {
    None,
    Ex,
    Px,
    ExAt,
    PxAt,
    KeepTtl,
    Persist,
}

#[derive(PartialEq)]
enum Cond {
    Always,
    Nx,
    Xx,
}

struct SetOptions<'a> {
    cond: Cond,
    get: bool,
    expire: ExpireOpt,
    when: Option<&'a [u8]>,
}

/// Parses SET's (`for_set`) or GETEX's options with Redis's exact acceptance rules: NX/XX exclusive,
/// at most one kind of expiry (repeating the same one is allowed, the last wins), KEEPTTL only
/// without an expiry, PERSIST only in GETEX.
fn parse_set_options<'a>(
    args: Args<'a>,
    from: usize,
    for_set: bool,
) -> Result<SetOptions<'a>, CmdError> {
    let mut o = SetOptions {
        cond: Cond::Always,
        get: false,
        expire: ExpireOpt::None,
        when: None,
    };
    let mut j = from;
    while j < args.len() {
        let opt = &args[j];
        let next = args.get(j + 1);
        let free_or = |same: ExpireOpt| o.expire == ExpireOpt::None || o.expire == same;
        if for_set && is(opt, "nx") && o.cond != Cond::Xx {
            o.cond = Cond::Nx;
        } else if for_set && is(opt, "xx") && o.cond != Cond::Nx {
            o.cond = Cond::Xx;
        } else if for_set && is(opt, "get") {
            o.get = true;
        } else if for_set && is(opt, "keepttl") && free_or(ExpireOpt::KeepTtl) {
            o.expire = ExpireOpt::KeepTtl;
        } else if !for_set && is(opt, "persist") && free_or(ExpireOpt::Persist) {
            o.expire = ExpireOpt::Persist;
        } else if let Some(kind) = [
            ("ex", ExpireOpt::Ex),
            ("px", ExpireOpt::Px),
            ("exat", ExpireOpt::ExAt),
            ("pxat", ExpireOpt::PxAt),
        ]
        .iter()
        .find(|(name, kind)| is(opt, name) && free_or(*kind) && next.is_some())
        .map(|&(_, kind)| kind)
        {
            o.expire = kind;
            o.when = next;
            j += 1;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    Ok(o)
}

/// The absolute expiry in milliseconds for an EX/PX/EXAT/PXAT argument, with Redis's checks.
fn expire_ms(cmd: &str, kind: ExpireOpt, when: &[u8]) -> Result<i64, CmdError> {
    let n = int(when)?;
    let seconds = matches!(kind, ExpireOpt::Ex | ExpireOpt::ExAt);
    let bad = || err(format!("invalid expire time in '{cmd}' command"));
    if n <= 0 || (seconds && n > i64::MAX / 1000) {
        return Err(bad());
    }
    let mut ms = if seconds { n * 1000 } else { n };
    if matches!(kind, ExpireOpt::Ex | ExpireOpt::Px) {
        ms = ms.checked_add(clock::now_ms()).ok_or_else(bad)?;
    }
    Ok(ms)
}

/// SET key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT
/// unix-time-milliseconds | KEEPTTL]
///
/// # Format
/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL]`
fn set(ctx: &mut Ctx, args: Args) -> CmdResult {
    let o = parse_set_options(args, 3, true)?;
    if o.get && o.when.is_none() {
        // GET is about the reply: the effect is the SET without it.
        let line: Vec<&[u8]> = args
            .iter()
            .enumerate()
            .filter(|&(i, a)| i < 3 || !is(a, "get"))
            .map(|(_, a)| a)
            .collect();
        ctx.propagate_as(&line);
    }
    set_generic(ctx, "set", &args[1], &args[2], o)
}

/// Shared by SET, SETEX, PSETEX and GETSET (Redis's `setGenericCommand`).
fn set_generic(ctx: &mut Ctx, cmd: &str, key: &[u8], val: &[u8], o: SetOptions) -> CmdResult {
    let expire_at = match (o.expire, o.when) {
        (ExpireOpt::KeepTtl, _) => None,
        (kind, Some(when)) => Some(expire_ms(cmd, kind, when)?),
        _ => Some(NO_EXPIRE),
    };
    let db = &mut ctx.srv.dbs[ctx.db];
    if o.get {
        match read_str(db, key)? {
            Some(old) => reply_str(ctx.out, old),
            None => ctx.out.null(),
        }
    }
    let db = ctx.db();
    let found = db.exists(key);
    if (o.cond == Cond::Nx && found) || (o.cond == Cond::Xx && !found) {
        if !o.get {
            ctx.out.null();
        }
        return Ok(());
    }
    db.set(key, Value::string(val), expire_at);
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(STRING, "set", key);
    if o.when.is_some() {
        ctx.notify(GENERIC, "expire", key);
    }
    // A relative or absolute TTL propagates as the absolute PXAT it came to (and GETSET as the
    // SET it is), as Redis's `setGenericCommand` and `getsetCommand`.
    match expire_at {
        Some(at) if o.when.is_some() => {
            ctx.propagate_as(&[b"SET", key, val, b"PXAT", at.to_string().as_bytes()])
        }
        _ if cmd == "getset" => ctx.propagate_as(&[b"SET", key, val]),
        _ => {}
    }
    if !o.get {
        ctx.out.ok();
    }
    Ok(())
}

/// SETNX key value
///
/// # Format
/// `SETNX key value` — sets only if absent; replies 1 if set, 0 if not.
fn setnx(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = ctx.db();
    if db.exists(&args[1]) {
        ctx.out.int(0);
    } else {
        db.set(&args[1], Value::string(&args[2]), Some(NO_EXPIRE));
        ctx.signal_modified(&args[1]);
        ctx.srv.dirty += 1;
        ctx.notify(STRING, "set", &args[1]);
        ctx.out.int(1);
    }
    Ok(())
}

/// SETEX key seconds value / PSETEX key milliseconds value
///
/// # Format
/// `SETEX key seconds value`, `PSETEX key milliseconds value`
fn setex(ctx: &mut Ctx, args: Args) -> CmdResult {
    let ms = is(&args[0], "psetex");
    let o = SetOptions {
        cond: Cond::Always,
        get: false,
        expire: if ms { ExpireOpt::Px } else { ExpireOpt::Ex },
        when: Some(&args[2]),
    };
    set_generic(
        ctx,
        if ms { "psetex" } else { "setex" },
        &args[1],
        &args[3],
        o,
    )
}

/// GET key
///
/// # Format
/// `GET key` — the value, or nil.
fn get(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    match read_str(db, &args[1])? {
        Some(s) => reply_str(ctx.out, s),
        None => ctx.out.null(),
    }
    Ok(())
}

/// GETSET key value
///
/// # Format
/// `GETSET key value` — sets the value, replies the old one (or nil).
fn getset(ctx: &mut Ctx, args: Args) -> CmdResult {
    let o = SetOptions {
        cond: Cond::Always,
        get: true,
        expire: ExpireOpt::None,
        when: None,
    };
    set_generic(ctx, "getset", &args[1], &args[2], o)
}

/// GETDEL key
///
/// # Format
/// `GETDEL key` — the value (or nil), and the key is deleted.
fn getdel(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    match read_str(db, &args[1])? {
        Some(s) => {
            reply_str(ctx.out, s);
            db.remove(&args[1]);
            ctx.signal_modified(&args[1]);
            ctx.srv.dirty += 1;
            ctx.notify(GENERIC, "del", &args[1]);
            let verb: &[u8] = if ctx.srv.config.lazyfree_lazy_user_del {
                b"UNLINK"
            } else {
                b"DEL"
            };
            ctx.propagate_as(&[verb, &args[1]]);
        }
        None => ctx.out.null(),
    }
    Ok(())
}

/// GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds |
/// PERSIST]
///
/// # Format
/// `GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]` — the value, and its TTL changed.
fn getex(ctx: &mut Ctx, args: Args) -> CmdResult {
    let o = parse_set_options(args, 2, false)?;
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(s) = read_str(db, key)? else {
        ctx.out.null();
        return Ok(());
    };
    let at = match o.when {
        Some(when) => Some(expire_ms("getex", o.expire, when)?),
        None => None,
    };
    reply_str(ctx.out, s);
    let slot = db.dict.find(key).expect("key just read");
    // Each change propagates as the command Redis's `getexCommand` rewrites it into.
    let event = match (o.expire, at) {
        (ExpireOpt::ExAt | ExpireOpt::PxAt, Some(at)) if at <= clock::now_ms() => {
            db.remove(key);
            let verb: &[u8] = if ctx.srv.config.lazyfree_lazy_expire {
                b"UNLINK"
            } else {
                b"DEL"
            };
            ctx.propagate_as(&[verb, key]);
            "del"
        }
        (_, Some(at)) => {
            db.set_expire_slot(slot, at);
            ctx.propagate_as(&[b"PEXPIREAT", key, at.to_string().as_bytes()]);
            "expire"
        }
        // PERSIST on a key without a TTL changes nothing (Redis's `removeExpire` fails).
        (ExpireOpt::Persist, _) if db.expire_of(slot) != NO_EXPIRE => {
            db.set_expire_slot(slot, NO_EXPIRE);
            ctx.propagate_as(&[b"PERSIST", key]);
            "persist"
        }
        _ => return Ok(()),
    };
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(GENERIC, event, key);
    Ok(())
}

/// MGET key [key ...]
///
/// # Format
/// `MGET key [key ...]` — an array of values, nil for missing keys and non-strings.
fn mget(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    ctx.out.array(args.len() - 1);
    for key in args.tail(1).iter() {
        match db.lookup(key).map(|e| as_str(e)) {
            Some(Ok(s)) => reply_str(ctx.out, s),
            _ => ctx.out.null(),
        }
    }
    Ok(())
}

/// MSET key value [key value ...] / MSETNX key value [key value ...]
///
/// # Format
/// `MSET key value [key value ...]`, `MSETNX key value [key value ...]` (all or nothing: 1 or 0)
fn mset(ctx: &mut Ctx, args: Args) -> CmdResult {
    let nx = is(&args[0], "msetnx");
    if args.len().is_multiple_of(2) {
        let name = if nx { "msetnx" } else { "mset" };
        return Err(err(format!(
            "wrong number of arguments for '{name}' command"
        )));
    }
    let db = &mut ctx.srv.dbs[ctx.db];
    if nx && (1..args.len()).step_by(2).any(|i| db.exists(&args[i])) {
        ctx.out.int(0);
        return Ok(());
    }
    // Each key's `set` follows its own `new`, as Redis notifies key by key.
    for i in (1..args.len()).step_by(2) {
        ctx.db()
            .set(&args[i], Value::string(&args[i + 1]), Some(NO_EXPIRE));
        ctx.notify(STRING, "set", &args[i]);
    }
    for i in (1..args.len()).step_by(2) {
        ctx.signal_modified(&args[i]);
    }
    ctx.srv.dirty += (args.len() / 2) as u64;
    if nx {
        ctx.out.int(1);
    } else {
        ctx.out.ok();
    }
    Ok(())
}

/// The integer a string holds, for the counters.
fn str_int(s: &Str) -> Result<i64, CmdError> {
    match s {
        Str::Int(n) => Ok(*n),
        _ => s.with_bytes(parse_i64).ok_or(CmdError::from(NOT_INT)),
    }
}

/// Adds `by` to the integer at `key` (created as 0), keeping its TTL (Redis's `incrDecrCommand`).
fn incr_by(ctx: &mut Ctx, key: &[u8], by: i64) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let new = match db.lookup_mut(key) {
        Some(e) => {
            let s = as_str_mut(e)?;
            let n = str_int(s)?
                .checked_add(by)
                .ok_or(CmdError::from(OVERFLOW))?;
            *s = Str::Int(n);
            n
        }
        None => {
            db.set(key, Value::Str(Str::Int(by)), Some(NO_EXPIRE));
            by
        }
    };
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(STRING, "incrby", key);
    ctx.out.int(new);
    Ok(())
}

/// INCR key / DECR key
///
/// # Format
/// `INCR key`, `DECR key` — the new value.
fn incr(ctx: &mut Ctx, args: Args) -> CmdResult {
    let by = if is(&args[0], "decr") { -1 } else { 1 };
    incr_by(ctx, &args[1], by)
}

/// INCRBY key increment / DECRBY key decrement
///
/// # Format
/// `INCRBY key increment`, `DECRBY key decrement` — the new value.
fn incrby(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = int(&args[2])?;
    let by = if is(&args[0], "decrby") {
        if n == i64::MIN {
            return Err("ERR decrement would overflow".into());
        }
        -n
    } else {
        n
    };
    incr_by(ctx, &args[1], by)
}

/// INCRBYFLOAT key increment
///
/// # Format
/// `INCRBYFLOAT key increment` — the new value as a bulk string (long-double arithmetic, as Redis).
fn incrbyfloat(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let result = match db.lookup_mut(key) {
        Some(e) => as_str(e)?.with_bytes(|cur| incr_long_double(Some(cur), &args[2])),
        None => incr_long_double(None, &args[2]),
    };
    let text = match result {
        Ok(t) => t,
        Err(IncrFloatError::NotFloat) => return Err(crate::resp::reply::NOT_FLOAT.into()),
        Err(IncrFloatError::NanOrInfinity) => {
            return Err("ERR increment would produce NaN or Infinity".into())
        }
    };
    ctx.out.bulk(&text);
    // Replayed as the value it came to: float arithmetic need not agree elsewhere.
    ctx.propagate_as(&[b"SET", key, &text, b"KEEPTTL"]);
    let val = Value::Str(Str::plain(&text));
    let db = &mut ctx.srv.dbs[ctx.db];
    db.set(key, val, None);
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(STRING, "incrbyfloat", key);
    Ok(())
}

/// APPEND key value
///
/// # Format
/// `APPEND key value` — the length after appending.
fn append(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (key, tail) = (&args[1], &args[2]);
    let max = ctx.srv.config.proto_max_bulk_len;
    let db = &mut ctx.srv.dbs[ctx.db];
    let len = match db.lookup_mut(key) {
        Some(e) => {
            let s = as_str_mut(e)?;
            if s.len() as i64 + tail.len() as i64 > max {
                return Err(TOO_BIG.into());
            }
            let data = s.make_raw();
            data.extend_from_slice(tail);
            data.len()
        }
        None => {
            db.set(key, Value::string(tail), Some(NO_EXPIRE));
            tail.len()
        }
    };
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(STRING, "append", key);
    ctx.out.int(len as i64);
    Ok(())
}

/// STRLEN key
///
/// # Format
/// `STRLEN key` — the length, 0 if absent.
fn strlen(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let n = read_str(db, &args[1])?.map_or(0, |s| s.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// GETRANGE key start end / SUBSTR key start end
///
/// # Format
/// `GETRANGE key start end` — the substring between two inclusive, possibly negative, offsets.
fn getrange(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut start = int(&args[2])?;
    let mut end = int(&args[3])?;
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(s) = read_str(db, &args[1])? else {
        ctx.out.bulk(b"");
        return Ok(());
    };
    s.with_bytes(|b| {
        let len = b.len() as i64;
        if start < 0 && end < 0 && start > end {
            ctx.out.bulk(b"");
            return;
        }
        if start < 0 {
            start += len;
        }
        if end < 0 {
            end += len;
        }
        start = start.max(0);
        end = end.max(0);
        if end >= len {
            end = len - 1;
        }
        if start > end || len == 0 {
            ctx.out.bulk(b"");
        } else {
            ctx.out.bulk(&b[start as usize..=end as usize]);
        }
    });
    Ok(())
}

/// SETRANGE key offset value
///
/// # Format
/// `SETRANGE key offset value` — overwrites from `offset` (zero-padding), replies the new length.
fn setrange(ctx: &mut Ctx, args: Args) -> CmdResult {
    let offset = int(&args[2])?;
    if offset < 0 {
        return Err("ERR offset is out of range".into());
    }
    let (key, val) = (&args[1], &args[2 + 1]);
    let exists = {
        let db = &mut ctx.srv.dbs[ctx.db];
        match db.lookup_mut(key) {
            Some(e) => Some(as_str(e)?.len()),
            None => None,
        }
    };
    match exists {
        None if val.is_empty() => {
            ctx.out.int(0);
            return Ok(());
        }
        Some(len) if val.is_empty() => {
            ctx.out.int(len as i64);
            return Ok(());
        }
        _ => check_len(ctx, offset, val.len() as i64)?,
    }
    let end = offset as usize + val.len();
    let (data, _) = padded_for_write(&mut ctx.srv.dbs[ctx.db], key, end)?;
    data[offset as usize..end].copy_from_slice(val);
    let len = data.len();
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(STRING, "setrange", key);
    ctx.out.int(len as i64);
    Ok(())
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]
///
/// # Format
/// `LCS key1 key2` — the longest common subsequence of the two strings (a missing key is the empty
/// string). `LEN`: its length. `IDX`: a map of `matches` (the matching ranges in both strings,
/// last first, each `[[a_start, a_end], [b_start, b_end]]`, plus its length with `WITHMATCHLEN`;
/// only those at least `MINMATCHLEN` long) and `len`.
fn lcs(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    // Both keys are looked up (a hit or a miss each) before either's type is checked, as Redis.
    let a = lcs_operand(db, &args[1]);
    let b = lcs_operand(db, &args[2]);
    let (Some(a), Some(b)) = (a, b) else {
        return Err("ERR The specified keys must contain string values".into());
    };
    let (mut want_len, mut want_idx, mut with_match_len, mut min_match_len) =
        (false, false, false, 0);
    let mut i = 3;
    while i < args.len() {
        let opt = &args[i];
        if is(opt, "idx") {
            want_idx = true;
        } else if is(opt, "len") {
            want_len = true;
        } else if is(opt, "withmatchlen") {
            with_match_len = true;
        } else if is(opt, "minmatchlen") && i + 1 < args.len() {
            min_match_len = int(&args[i + 1])?.max(0) as u64;
            i += 1;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if want_idx && want_len {
        return Err("ERR If you want both the length and indexes, please just use IDX.".into());
    }
    let table = lcs_table(&a, &b, ctx.srv.config.proto_max_bulk_len)?;
    let width = b.len() + 1;
    let at = |i: usize, j: usize| table[j + i * width];
    let total = at(a.len(), b.len()) as usize;
    if want_len {
        ctx.out.int(total as i64);
        return Ok(());
    }
    // Walk back from the end: the common bytes (written last first), and the contiguous ranges
    // they form, emitted when one ends.
    let mut common = vec![0u8; total];
    let mut ranges: Vec<[u64; 5]> = Vec::new();
    let (mut i, mut j, mut left) = (a.len(), b.len(), total);
    // (a_start, a_end, b_start, b_end) of the range being grown backwards.
    let mut range: Option<[usize; 4]> = None;
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            common[left - 1] = a[i - 1];
            match &mut range {
                None => range = Some([i - 1, i - 1, j - 1, j - 1]),
                Some(r) if r[0] == i && r[2] == j => {
                    r[0] -= 1;
                    r[2] -= 1;
                }
                Some(_) => emit = true,
            }
            // A range that reached the start of either string ends here.
            if range.is_some_and(|r| r[0] == 0 || r[2] == 0) {
                emit = true;
            }
            left -= 1;
            i -= 1;
            j -= 1;
        } else {
            if at(i - 1, j) > at(i, j - 1) {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = range.is_some();
        }
        if emit {
            if let Some(r) = range.take() {
                let len = (r[1] - r[0] + 1) as u64;
                if len >= min_match_len {
                    ranges.push([r[0] as u64, r[1] as u64, r[2] as u64, r[3] as u64, len]);
                }
            }
        }
    }
    if !want_idx {
        ctx.out.bulk(&common);
        return Ok(());
    }
    ctx.out.map(2);
    ctx.out.bulk(b"matches");
    ctx.out.array(ranges.len());
    for r in &ranges {
        ctx.out.array(2 + usize::from(with_match_len));
        for pair in [[r[0], r[1]], [r[2], r[3]]] {
            ctx.out.array(2);
            ctx.out.int(pair[0] as i64);
            ctx.out.int(pair[1] as i64);
        }
        if with_match_len {
            ctx.out.int(r[4] as i64);
        }
    }
    ctx.out.bulk(b"len");
    ctx.out.int(total as i64);
    Ok(())
}

/// An LCS operand: the string's bytes (empty when the key is missing), `None` for another type.
fn lcs_operand(db: &mut Db, key: &[u8]) -> Option<Vec<u8>> {
    match db.lookup(key) {
        None => Some(Vec::new()),
        Some(e) => match &e.val {
            Value::Str(s) => Some(s.with_bytes(|b| b.to_vec())),
            _ => None,
        },
    }
}

/// The dynamic-programming table: entry `j + i * (b.len() + 1)` is the LCS length of `a[..i]` and
/// `b[..j]`. Its size is bounded by `proto-max-bulk-len`, as Redis bounds it, and an allocation
/// failure is an error reply rather than an abort.
fn lcs_table(a: &[u8], b: &[u8], max_bytes: i64) -> Result<Vec<u32>, CmdError> {
    if a.len() >= u32::MAX as usize - 1 || b.len() >= u32::MAX as usize - 1 {
        return Err("ERR String too long for LCS".into());
    }
    let cells = (a.len() as u64 + 1) * (b.len() as u64 + 1);
    let bytes = cells.checked_mul(4).filter(|&n| n < isize::MAX as u64);
    match bytes {
        Some(n) if n > max_bytes as u64 => {
            return Err(
                "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
                    .into(),
            )
        }
        Some(_) => {}
        None => {
            return Err(
                "ERR Insufficient memory, failed allocating transient memory for LCS".into(),
            )
        }
    }
    let mut table = Vec::new();
    if table.try_reserve_exact(cells as usize).is_err() {
        return Err("ERR Insufficient memory, failed allocating transient memory for LCS".into());
    }
    table.resize(cells as usize, 0u32);
    let width = b.len() + 1;
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            table[j + i * width] = if a[i - 1] == b[j - 1] {
                table[(j - 1) + (i - 1) * width] + 1
            } else {
                table[j + (i - 1) * width].max(table[(j - 1) + i * width])
            };
        }
    }
    Ok(table)
}

/// COMMAND GETKEYS of SET, as Redis's `setGetKeys`: the key, read and updated with GET, else
/// overwritten.
fn set_keys(args: Args) -> Vec<(usize, u32)> {
    let get = args.iter().skip(3).any(|a| is(a, "get"));
    let flags = if get {
        RW | ACCESS | UPDATE
    } else {
        OW | UPDATE
    };
    vec![(1, flags)]
}

pub const COMMANDS: &[Command] = &[
    Command::new("get", get, 2, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the value of a key", "1.0.0", "O(1)", "key"),
    Command::new("set", set, -3, WRITE | DENYOOM).key(1, RW | ACCESS | UPDATE | VARIABLE_FLAGS).group(GROUP)
        .history(&[("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."), ("6.0.0", "Added the `KEEPTTL` option."), ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."), ("7.0.0", "Allowed the `NX` and `GET` options to be used together.")])
        .arg_since(&[("condition", "2.6.12"), ("get", "6.2.0"), ("seconds", "2.6.12"), ("milliseconds", "2.6.12"), ("unix-time-seconds", "6.2.0"), ("unix-time-milliseconds", "6.2.0"), ("keepttl", "6.0.0")])
        .key_notes("RW and ACCESS due to the optional `GET` argument").key_finder(set_keys)
        .doc("Set the string value of a key", "1.0.0", "O(1)",
            "key value [condition:(NX | XX)] [GET] [expiration:(EX seconds:integer | PX milliseconds:integer | EXAT unix-time-seconds:unix-time | PXAT unix-time-milliseconds:unix-time | KEEPTTL)]"),
    Command::new("setnx", setnx, 3, WRITE | DENYOOM | FAST).key(1, OW | INSERT).group(GROUP)
        .doc("Set the value of a key, only if the key does not exist", "1.0.0", "O(1)", "key value"),
    Command::new("setex", setex, 4, WRITE | DENYOOM).key(1, OW | UPDATE).group(GROUP)
        .doc("Set the value and expiration of a key", "2.0.0", "O(1)", "key seconds:integer value"),
    Command::new("psetex", setex, 4, WRITE | DENYOOM).key(1, OW | UPDATE).group(GROUP)
        .doc("Set the value and expiration in milliseconds of a key", "2.6.0", "O(1)", "key milliseconds:integer value"),
    Command::new("getset", getset, 3, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .deprecated("6.2.0", "`SET` with the `!GET` argument")
        .doc("Set the string value of a key and return its old value", "1.0.0", "O(1)", "key value"),
    Command::new("getdel", getdel, 2, WRITE | FAST).key(1, RW | ACCESS | DELETE).group(GROUP)
        .doc("Get the value of a key and delete the key", "6.2.0", "O(1)", "key"),
    Command::new("getex", getex, -2, WRITE | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .key_notes("RW and UPDATE because it changes the TTL")
        .doc("Get the value of a key and optionally set its expiration", "6.2.0", "O(1)",
            "key [expiration:(EX seconds:integer | PX milliseconds:integer | EXAT unix-time-seconds:unix-time | PXAT unix-time-milliseconds:unix-time | PERSIST)]"),
    Command::new("mget", mget, -2, READONLY | FAST).key_range(1, -1, 1, RO | ACCESS).group(GROUP)
        .tips(&["request_policy:multi_shard"])
        .doc("Get the values of all the given keys", "1.0.0", "O(N) where N is the number of keys to retrieve.", "key [key ...]"),
    Command::new("mset", mset, -3, WRITE | DENYOOM).key_range(1, -1, 2, OW | UPDATE).group(GROUP)
        .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"])
        .doc("Set multiple keys to multiple values", "1.0.1", "O(N) where N is the number of keys to set.", "key value [key value ...]"),
    Command::new("msetnx", mset, -3, WRITE | DENYOOM).key_range(1, -1, 2, OW | INSERT).group(GROUP)
        .tips(&["request_policy:multi_shard", "response_policy:agg_min"])
        .doc("Set multiple keys to multiple values, only if none of the keys exist", "1.0.1", "O(N) where N is the number of keys to set.", "key value [key value ...]"),
    Command::new("incr", incr, 2, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Increment the integer value of a key by one", "1.0.0", "O(1)", "key"),
    Command::new("decr", incr, 2, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Decrement the integer value of a key by one", "1.0.0", "O(1)", "key"),
    Command::new("incrby", incrby, 3, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Increment the integer value of a key by the given amount", "1.0.0", "O(1)", "key increment:integer"),
    Command::new("decrby", incrby, 3, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Decrement the integer value of a key by the given number", "1.0.0", "O(1)", "key decrement:integer"),
    Command::new("incrbyfloat", incrbyfloat, 3, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Increment the float value of a key by the given amount", "2.6.0", "O(1)", "key increment:double"),
    Command::new("append", append, 3, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .doc("Append a value to a key", "2.0.0", "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.", "key value"),
    Command::new("strlen", strlen, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Get the length of the value stored in a key", "2.2.0", "O(1)", "key"),
    Command::new("getrange", getrange, 4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .doc("Get a substring of the string stored at a key", "2.4.0", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.", "key start:integer end:integer"),
    Command::new("substr", getrange, 4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .deprecated("2.0.0", "`GETRANGE`")
        .doc("Get a substring of the string stored at a key", "1.0.0", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.", "key start:integer end:integer"),
    Command::new("setrange", setrange, 4, WRITE | DENYOOM).key(1, RW | UPDATE).group(GROUP)
        .doc("Overwrite part of a string at key starting at the specified offset", "2.2.0", "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.", "key offset:integer value"),
    Command::new("lcs", lcs, -3, READONLY).key_range(1, 1, 1, RO | ACCESS).group(GROUP)
        .doc("Find longest common substring", "7.0.0", "O(N*M) where N and M are the lengths of s1 and s2, respectively", "key1:key key2:key [LEN] [IDX] [MINMATCHLEN len:integer] [WITHMATCHLEN]"),
];
