//! Hashes (Redis's t_hash.c): HSET and friends, counters, whole-hash reads, HSCAN and HRANDFIELD.
//!
//! Small hashes keep Redis's listpack order (see `store::hash`), so every reply that walks a small
//! hash lists its fields in the same order as Redis.

use super::keyspec::{ACCESS, DELETE, INSERT, RO, RW, UPDATE};
use super::parse::{cursor, int, is, scan_args};
use super::{err, Args, CmdError, CmdResult, Command, Ctx, DENYOOM, FAST, READONLY, WRITE};
use crate::resp::reply::{Reply, NOT_FLOAT, OVERFLOW, SYNTAX, WRONGTYPE};
use crate::server::notify::{GENERIC, HASH};
use crate::store::glob;
use crate::store::hash::{HashLimits, Pair};
use crate::store::{Db, Entry, Hash, Value};
use crate::util::{incr_long_double, parse_i64, rand_u64, IncrFloatError};

const GROUP: &str = "hash";

fn as_hash(e: &mut Entry) -> Result<&mut Hash, CmdError> {
    match &mut e.val {
        Value::Hash(h) => Ok(h),
        _ => Err(WRONGTYPE.into()),
    }
}

/// Reads a hash key: `Ok(None)` if absent, WRONGTYPE for another type.
fn read_hash<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut Hash>, CmdError> {
    match db.lookup(key) {
        None => Ok(None),
        Some(e) => as_hash(e).map(Some),
    }
}

/// Looks a hash up for writing: `Ok(None)` if absent, WRONGTYPE for another type.
fn write_hash<'d>(db: &'d mut Db, key: &[u8]) -> Result<Option<&'d mut Hash>, CmdError> {
    match db.lookup_mut(key) {
        None => Ok(None),
        Some(e) => as_hash(e).map(Some),
    }
}

/// Redis's `hashTypeLookupWriteOrCreate`: the hash at `key`, created empty if absent. Callers always
/// write at least one field into it, so no empty hash is left behind.
fn hash_or_create<'d>(db: &'d mut Db, key: &[u8]) -> Result<&'d mut Hash, CmdError> {
    as_hash(db.lookup_mut_or_insert(key, || Value::Hash(Hash::default())))
}

fn limits(ctx: &Ctx) -> HashLimits {
    HashLimits {
        entries: ctx.srv.config.hash_max_listpack_entries,
        value: ctx.srv.config.hash_max_listpack_value,
    }
}

/// HSET key field value [field value ...] / HMSET key field value [field value ...]
///
/// # Format
/// `HSET key field value [field value ...]` — the number of fields created. HMSET replies +OK.
fn hset(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() % 2 == 1 {
        return Err(err(format!(
            "wrong number of arguments for '{}' command",
            String::from_utf8_lossy(&args[0]).to_lowercase()
        )));
    }
    let key = &args[1];
    let limits = limits(ctx);
    let h = hash_or_create(ctx.db(), key)?;
    let mut created = 0;
    for i in (2..args.len()).step_by(2) {
        created += h.set(&args[i], &args[i + 1], limits) as i64;
    }
    if is(&args[0], "hmset") {
        ctx.out.ok();
    } else {
        ctx.out.int(created);
    }
    ctx.signal_modified(key);
    // HMSET too publishes `hset`, as Redis.
    ctx.notify(HASH, "hset", key);
    ctx.srv.dirty += (args.len() as u64 - 2) / 2;
    Ok(())
}

/// HSETNX key field value
///
/// # Format
/// `HSETNX key field value` — 1 if the field was set, 0 if it already existed.
fn hsetnx(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let limits = limits(ctx);
    let db = ctx.db();
    if let Some(h) = write_hash(db, key)? {
        if h.contains(&args[2]) {
            ctx.out.int(0);
            return Ok(());
        }
    }
    hash_or_create(db, key)?.set(&args[2], &args[3], limits);
    ctx.out.int(1);
    ctx.signal_modified(key);
    ctx.notify(HASH, "hset", key);
    ctx.srv.dirty += 1;
    Ok(())
}

/// HGET key field
///
/// # Format
/// `HGET key field` — the value, or nil.
fn hget(ctx: &mut Ctx, args: Args) -> CmdResult {
    match read_hash(&mut ctx.srv.dbs[ctx.db], &args[1])?.and_then(|h| h.get(&args[2])) {
        Some(v) => ctx.out.bulk(v),
        None => ctx.out.null(),
    }
    Ok(())
}

/// HMGET key field [field ...]
///
/// # Format
/// `HMGET key field [field ...]` — each field's value, or nil.
fn hmget(ctx: &mut Ctx, args: Args) -> CmdResult {
    let h = read_hash(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    let h = h.as_deref();
    ctx.out.array(args.len() - 2);
    for field in args.tail(2).iter() {
        match h.and_then(|h| h.get(field)) {
            Some(v) => ctx.out.bulk(v),
            None => ctx.out.null(),
        }
    }
    Ok(())
}

/// HDEL key field [field ...]
///
/// # Format
/// `HDEL key field [field ...]` — the number of fields removed; the key goes when emptied.
fn hdel(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let db = ctx.db();
    let Some(h) = write_hash(db, key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let mut deleted = 0;
    for field in args.tail(2).iter() {
        if h.remove(field) {
            deleted += 1;
            if h.is_empty() {
                break;
            }
        }
    }
    let removed = h.is_empty();
    if removed {
        db.remove(key);
    }
    if deleted > 0 {
        ctx.signal_modified(key);
        ctx.notify(HASH, "hdel", key);
        if removed {
            ctx.notify(GENERIC, "del", key);
        }
        ctx.srv.dirty += deleted;
    }
    ctx.out.int(deleted as i64);
    Ok(())
}

/// HLEN key
///
/// # Format
/// `HLEN key` — the number of fields (0 if absent).
fn hlen(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = read_hash(ctx.db(), &args[1])?.map_or(0, |h| h.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// HSTRLEN key field
///
/// # Format
/// `HSTRLEN key field` — the length of the field's value (0 if absent).
fn hstrlen(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = read_hash(ctx.db(), &args[1])?
        .and_then(|h| h.get(&args[2]))
        .map_or(0, |v| v.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// HEXISTS key field
///
/// # Format
/// `HEXISTS key field` — 1 if the field exists, else 0.
fn hexists(ctx: &mut Ctx, args: Args) -> CmdResult {
    let found = read_hash(ctx.db(), &args[1])?.is_some_and(|h| h.contains(&args[2]));
    ctx.out.int(found as i64);
    Ok(())
}

/// HGETALL key / HKEYS key / HVALS key (Redis's `genericHgetallCommand`)
///
/// # Format
/// `HGETALL key` — a map of field → value (a flat array in RESP2). `HKEYS key` / `HVALS key` — the
/// fields / the values.
fn hgetall(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (keys, vals) = match &args[0].to_ascii_lowercase()[..] {
        b"hkeys" => (true, false),
        b"hvals" => (false, true),
        _ => (true, true),
    };
    let h = read_hash(&mut ctx.srv.dbs[ctx.db], &args[1])?;
    let n = h.as_ref().map_or(0, |h| h.len());
    if keys && vals {
        ctx.out.map(n);
    } else {
        ctx.out.array(n);
    }
    for (k, v) in h.iter().flat_map(|h| h.iter()) {
        if keys {
            ctx.out.bulk(k);
        }
        if vals {
            ctx.out.bulk(v);
        }
    }
    Ok(())
}

/// HINCRBY key field increment
///
/// # Format
/// `HINCRBY key field increment` — the new value; a missing field counts as 0.
fn hincrby(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (key, field) = (&args[1], &args[2]);
    let incr = int(&args[3])?;
    let limits = limits(ctx);
    let h = hash_or_create(ctx.db(), key)?;
    let old = match h.get(field) {
        Some(v) => parse_i64(v).ok_or_else(|| err("hash value is not an integer"))?,
        None => 0,
    };
    let new = old.checked_add(incr).ok_or(CmdError::from(OVERFLOW))?;
    h.set(field, new.to_string().as_bytes(), limits);
    ctx.out.int(new);
    ctx.signal_modified(key);
    ctx.notify(HASH, "hincrby", key);
    ctx.srv.dirty += 1;
    Ok(())
}

/// HINCRBYFLOAT key field increment
///
/// # Format
/// `HINCRBYFLOAT key field increment` — the new value as a string, computed in long double as
/// INCRBYFLOAT does.
fn hincrbyfloat(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (key, field, by) = (&args[1], &args[2], &args[3]);
    // Validate the increment alone first (0 + by): Redis rejects a bad or infinite increment before
    // looking at the key.
    match incr_long_double(None, by) {
        Ok(_) => {}
        Err(IncrFloatError::NotFloat) => return Err(NOT_FLOAT.into()),
        Err(IncrFloatError::NanOrInfinity) => return Err(err("value is NaN or Infinity")),
    }
    let limits = limits(ctx);
    let h = hash_or_create(ctx.db(), key)?;
    let text = match incr_long_double(h.get(field), by) {
        Ok(t) => t,
        // The increment is known good, so the stored value is the bad one.
        Err(IncrFloatError::NotFloat) => return Err(err("hash value is not a float")),
        Err(IncrFloatError::NanOrInfinity) => {
            return Err(err("increment would produce NaN or Infinity"))
        }
    };
    h.set(field, &text, limits);
    ctx.out.bulk(&text);
    // Replayed as the value it came to: float arithmetic need not agree elsewhere.
    ctx.propagate_as(&[b"HSET", key, field, &text]);
    ctx.signal_modified(key);
    ctx.notify(HASH, "hincrbyfloat", key);
    ctx.srv.dirty += 1;
    Ok(())
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]
///
/// # Format
/// `HSCAN key cursor [MATCH pattern] [COUNT count]` — `[next-cursor, [field, value, ...]]`. A small
/// (listpack) hash comes whole in one call, as in Redis.
fn hscan(ctx: &mut Ctx, args: Args) -> CmdResult {
    // Redis parses the cursor, then looks the key up, and only then the options.
    cursor(&args[2])?;
    let Some(h) = read_hash(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        // A missing key answers an empty scan without looking at the options, as Redis.
        ctx.out.array(2);
        ctx.out.bulk(b"0");
        ctx.out.array(0);
        return Ok(());
    };
    let s = scan_args(args, 2, false)?;
    let (next, entries) = h.scan(s.cursor, s.count as usize);
    let entries: Vec<_> = entries
        .into_iter()
        .filter(|(k, _)| s.pattern.is_none_or(|p| glob::matches(p, k, false)))
        .collect();
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(entries.len() * 2);
    for (k, v) in entries {
        ctx.out.bulk(k);
        ctx.out.bulk(v);
    }
    Ok(())
}

/// HRANDFIELD key [count [WITHVALUES]]
///
/// # Format
/// `HRANDFIELD key` — a random field, or nil. `HRANDFIELD key count [WITHVALUES]` — up to `count`
/// distinct fields (all of them if `count` ≥ the size), or with a negative count exactly `-count`
/// fields that may repeat. With WITHVALUES each field is followed by its value (RESP3: a [field,
/// value] pair each).
fn hrandfield(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() == 2 {
        match read_hash(&mut ctx.srv.dbs[ctx.db], &args[1])?.and_then(|h| h.random(rand_u64)) {
            Some((k, _)) => ctx.out.bulk(k),
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
    if args.len() > 4 || (args.len() == 4 && !is(&args[3], "withvalues")) {
        return Err(SYNTAX.into());
    }
    let withvalues = args.len() == 4;
    if withvalues && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
        return Err(err("value is out of range"));
    }
    let resp3 = ctx.out.resp3;
    let out = &mut *ctx.out;
    let Some(h) = read_hash(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        out.array(0);
        return Ok(());
    };
    let count = l.unsigned_abs() as usize;
    let header =
        |out: &mut Reply, n: usize| out.array(if withvalues && !resp3 { n * 2 } else { n });
    let pair = |out: &mut Reply, (k, v): Pair| {
        if withvalues && resp3 {
            out.array(2);
        }
        out.bulk(k);
        if withvalues {
            out.bulk(v);
        }
    };
    if count == 0 {
        out.array(0);
    } else if l < 0 || count == 1 {
        // Repetitions allowed: each pick samples the whole hash. Streamed, as the count may be huge.
        header(out, count);
        for _ in 0..count {
            pair(out, h.random(rand_u64).expect("not empty"));
        }
    } else if count >= h.len() {
        header(out, h.len());
        for p in h.iter() {
            pair(out, p);
        }
    } else {
        let picked = h.sample_unique(count, rand_u64);
        header(out, picked.len());
        for p in picked {
            pair(out, p);
        }
    }
    Ok(())
}

pub const COMMANDS: &[Command] = &[
    Command::new("hset", hset, -4, WRITE | DENYOOM | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("4.0.0", "Accepts multiple `field` and `value` arguments.")])
        .doc("Set the string value of a hash field", "2.0.0", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.", "key field value [field value ...]"),
    Command::new("hsetnx", hsetnx, 4, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .doc("Set the value of a hash field, only if the field does not exist", "2.0.0", "O(1)", "key field value"),
    Command::new("hget", hget, 3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the value of a hash field", "2.0.0", "O(1)", "key field"),
    Command::new("hmget", hmget, -3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the values of all the given hash fields", "2.0.0", "O(N) where N is the number of fields being requested.", "key field [field ...]"),
    Command::new("hmset", hset, -4, WRITE | DENYOOM | FAST).key(1, RW | UPDATE).group(GROUP)
        .deprecated("4.0.0", "`HSET` with multiple field-value pairs")
        .doc("Set multiple hash fields to multiple values", "2.0.0", "O(N) where N is the number of fields being set.", "key field value [field value ...]"),
    Command::new("hdel", hdel, -3, WRITE | FAST).key(1, RW | DELETE).group(GROUP)
        .history(&[("2.4.0", "Accepts multiple `field` arguments.")])
        .doc("Delete one or more hash fields", "2.0.0", "O(N) where N is the number of fields to be removed.", "key field [field ...]"),
    Command::new("hlen", hlen, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Get the number of fields in a hash", "2.0.0", "O(1)", "key"),
    Command::new("hexists", hexists, 3, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Determine if a hash field exists", "2.0.0", "O(1)", "key field"),
    Command::new("hgetall", hgetall, 2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Get all the fields and values in a hash", "2.0.0", "O(N) where N is the size of the hash.", "key"),
    Command::new("hkeys", hgetall, 2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Get all the fields in a hash", "2.0.0", "O(N) where N is the size of the hash.", "key"),
    Command::new("hvals", hgetall, 2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output_order"])
        .doc("Get all the values in a hash", "2.0.0", "O(N) where N is the size of the hash.", "key"),
    Command::new("hincrby", hincrby, 4, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Increment the integer value of a hash field by the given number", "2.0.0", "O(1)", "key field increment:integer"),
    Command::new("hincrbyfloat", hincrbyfloat, 4, WRITE | DENYOOM | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Increment the float value of a hash field by the given amount", "2.6.0", "O(1)", "key field increment:double"),
    Command::new("hstrlen", hstrlen, 3, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Get the length of the value of a hash field", "3.2.0", "O(1)", "key field"),
    Command::new("hscan", hscan, -3, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Incrementally iterate hash fields and associated values", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..", "key cursor:integer [MATCH pattern] [COUNT count:integer]"),
    Command::new("hrandfield", hrandfield, -2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Get one or multiple random fields from a hash", "6.2.0", "O(N) where N is the number of fields returned", "key [options:(count:integer [WITHVALUES])]"),
];
