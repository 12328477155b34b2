//! Generic keyspace commands (Redis's db.c and expire.c): DEL, EXISTS, TYPE, KEYS, SCAN, RENAME,
//! COPY, MOVE, OBJECT, and the TTL family.

use super::keyspec::{ACCESS, DELETE, INSERT, OW, RM, RO, RW, UPDATE};
use super::parse::{int, is, scan_args, text, ScanArgs};
use super::{
    acl, err, Args, CmdError, CmdResult, Command, Ctx, DENYOOM, FAST, READONLY, TOUCHES_ANYWAY,
    WRITE,
};
use crate::resp::reply::{DB_INDEX, NO_SUCH_KEY, SYNTAX};
use crate::server::evict::{Pick, Policy};
use crate::server::lazyfree;
use crate::server::notify::GENERIC;
use crate::store::{self, glob, Str, Value, NO_EXPIRE};
use crate::util::clock;

const GROUP: &str = "generic";

/// DEL key [key ...]
///
/// # Format
/// `DEL key [key ...]` — the number of keys removed. Values are freed here, or as UNLINK frees
/// them with `lazyfree-lazy-user-del yes`.
fn del(ctx: &mut Ctx, args: Args) -> CmdResult {
    let lazy = ctx.srv.config.lazyfree_lazy_user_del;
    delete_keys(ctx, args, lazy)
}

/// UNLINK key [key ...]
///
/// # Format
/// `UNLINK key [key ...]` — the number of keys removed; a large value (a list of more than 64
/// quicklist nodes, a hash table, set or sorted set of more than 64 elements) is freed by the
/// background thread (`server::lazyfree`), as Redis's UNLINK.
fn unlink(ctx: &mut Ctx, args: Args) -> CmdResult {
    delete_keys(ctx, args, true)
}

fn delete_keys(ctx: &mut Ctx, args: Args, lazy: bool) -> CmdResult {
    let mut n = 0;
    for key in args.tail(1).iter() {
        if let Some((val, _)) = ctx.db().remove_live(key) {
            if lazy {
                lazyfree::free_value(val, ctx.srv.config.list_max_listpack_size);
            }
            ctx.signal_modified(key);
            ctx.notify(GENERIC, "del", key);
            n += 1;
        }
    }
    ctx.srv.dirty += n;
    ctx.out.int(n as i64);
    Ok(())
}

/// EXISTS key [key ...]
///
/// # Format
/// `EXISTS key [key ...]` — how many of the keys exist (a repeated key counts each time).
fn exists(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let n = args
        .tail(1)
        .iter()
        .filter(|k| db.lookup_no_touch(k).is_some())
        .count();
    ctx.out.int(n as i64);
    Ok(())
}

/// TOUCH key [key ...]
///
/// # Format
/// `TOUCH key [key ...]` — how many exist; their access time is refreshed.
fn touch(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    let n = args
        .tail(1)
        .iter()
        .filter(|k| db.lookup(k).is_some())
        .count();
    ctx.out.int(n as i64);
    Ok(())
}

/// TYPE key
///
/// # Format
/// `TYPE key` — `string`, `list`, ..., or `none`.
fn type_(ctx: &mut Ctx, args: Args) -> CmdResult {
    let name = ctx
        .db()
        .lookup_no_touch(&args[1])
        .map_or("none", |e| e.val.type_name());
    ctx.out.simple(name);
    Ok(())
}

/// KEYS pattern
///
/// # Format
/// `KEYS pattern` — every key matching the glob pattern.
fn keys(ctx: &mut Ctx, args: Args) -> CmdResult {
    let pat = &args[1];
    let all = pat == b"*";
    let now = clock::now_ms();
    let db = &ctx.srv.dbs[ctx.db];
    let found: Vec<&[u8]> = db
        .dict
        .iter()
        .filter(|(_, k, e)| {
            let at = db.expire_of_entry(e);
            (at == NO_EXPIRE || at > now) && (all || glob::matches(pat, k, false))
        })
        .map(|(_, k, _)| k)
        .collect();
    ctx.out.array(found.len());
    for k in found {
        ctx.out.bulk(k);
    }
    Ok(())
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
///
/// # Format
/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]` — `[next-cursor, [key ...]]`.
///
/// The cursor is a slot position in the keyspace's dict, where keys never move: every key present
/// for the whole iteration is returned, however the table grows or shrinks meanwhile.
fn scan(ctx: &mut Ctx, args: Args) -> CmdResult {
    let ScanArgs {
        cursor,
        count,
        pattern,
        type_name,
    } = scan_args(args, 1, true)?;
    let now = clock::now_ms();
    let db = ctx.db();
    let span = db.dict.slot_span();
    let mut slot = cursor.min(span as u64) as usize;
    // Keys matching the pattern, each with whether its time has passed.
    let mut candidates: Vec<(Vec<u8>, bool)> = Vec::new();
    // Like Redis, bound the work of one call even when most slots are empty or filtered out.
    let max_visits = (count as usize).saturating_mul(10);
    let mut visited = 0;
    let mut live = 0;
    while slot < span && live < count as usize && visited < max_visits {
        if let Some((k, e)) = db.dict.entry_at(slot) {
            live += 1;
            if pattern.is_none_or(|p| glob::matches(p, k, false)) {
                let at = db.expire_of_entry(e);
                let expired = at != NO_EXPIRE && at <= now;
                candidates.push((k.to_vec(), expired));
            }
        }
        slot += 1;
        visited += 1;
    }
    // Redis 7.0's filters, in its order: the pattern (above), then the type, read with a counted
    // lookup that reclaims an expired key (so such a key is `none`), then expiry. Keys the pattern
    // filtered out are left alone, expired or not.
    let mut found = Vec::with_capacity(candidates.len());
    for (k, expired) in candidates {
        let keep = match type_name {
            Some(t) => {
                let name = db.lookup_no_touch(&k).map_or("none", |e| e.val.type_name());
                t.eq_ignore_ascii_case(name.as_bytes())
            }
            None => !expired || db.find_live(&k).is_some(),
        };
        if keep {
            found.push(k);
        }
    }
    let next = if slot >= span { 0 } else { slot as u64 };
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(found.len());
    for k in &found {
        ctx.out.bulk(k);
    }
    Ok(())
}

/// RANDOMKEY
///
/// # Format
/// `RANDOMKEY` — a random key, or nil when the database is empty.
fn randomkey(ctx: &mut Ctx, _args: Args) -> CmdResult {
    match ctx.db().random_key() {
        Some(k) => ctx.out.bulk(&k),
        None => ctx.out.null(),
    }
    Ok(())
}

/// RENAME key newkey / RENAMENX key newkey
///
/// # Format
/// `RENAME key newkey` (+OK), `RENAMENX key newkey` (1, or 0 if newkey exists). The TTL moves along.
fn rename(ctx: &mut Ctx, args: Args) -> CmdResult {
    let nx = is(&args[0], "renamenx");
    let (src, dst) = (&args[1], &args[2]);
    let db = ctx.db();
    if db.lookup_mut(src).is_none() {
        return Err(NO_SUCH_KEY.into());
    }
    if src == dst {
        if nx {
            ctx.out.int(0);
        } else {
            ctx.out.ok();
        }
        return Ok(());
    }
    // Looked up even without NX: an expired destination is reclaimed (`expired`) before `new`.
    if db.exists(dst) {
        if nx {
            ctx.out.int(0);
            return Ok(());
        }
        db.server_delete(dst);
    }
    let (val, expire) = db.remove(src).expect("looked up");
    db.insert_entry(dst, val, expire);
    ctx.signal_modified(src);
    ctx.signal_modified(dst);
    ctx.srv.dirty += 1;
    ctx.notify(GENERIC, "rename_from", src);
    ctx.notify(GENERIC, "rename_to", dst);
    if nx {
        ctx.out.int(1);
    } else {
        ctx.out.ok();
    }
    Ok(())
}

/// Parses a database index argument; `DB_INDEX` if it is not a valid one.
fn db_index(ctx: &Ctx, arg: &[u8]) -> Result<usize, CmdError> {
    match int(arg)? {
        n if n >= 0 && (n as usize) < ctx.srv.dbs.len() => Ok(n as usize),
        _ => Err(DB_INDEX.into()),
    }
}

/// COPY source destination [DB destination-db] [REPLACE]
///
/// # Format
/// `COPY source destination [DB destination-db] [REPLACE]` — 1 if copied, else 0.
fn copy(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (src, dst) = (&args[1], &args[2]);
    let mut target = ctx.db;
    let mut replace = false;
    let mut j = 3;
    while j < args.len() {
        if is(&args[j], "replace") {
            replace = true;
        } else if is(&args[j], "db") && j + 1 < args.len() {
            target = db_index(ctx, &args[j + 1])?;
            j += 1;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    if target == ctx.db && src == dst {
        return Err("ERR source and destination objects are the same".into());
    }
    let db = ctx.db();
    let Some(slot) = db.lookup_read_slot(src, !clock::no_touch()) else {
        ctx.out.int(0);
        return Ok(());
    };
    let (val, expire) = (db.dict.value_at(slot).val.clone(), db.expire_of(slot));
    let tdb = &mut ctx.srv.dbs[target];
    if tdb.exists(dst) {
        if !replace {
            ctx.out.int(0);
            return Ok(());
        }
        tdb.server_delete(dst);
    }
    tdb.insert_entry(dst, val, expire);
    ctx.signal_modified_in(target, dst);
    ctx.srv.dirty += 1;
    ctx.notify_in(target, GENERIC, "copy_to", dst);
    ctx.out.int(1);
    Ok(())
}

/// MOVE key db
///
/// # Format
/// `MOVE key db` — 1 if moved, 0 if absent here or present there.
fn move_(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = int(&args[2])?;
    if n < i32::MIN as i64 || n > i32::MAX as i64 {
        return Err("ERR value is out of range".into());
    }
    if n < 0 || n as usize >= ctx.srv.dbs.len() {
        return Err(DB_INDEX.into());
    }
    let target = n as usize;
    if target == ctx.db {
        return Err("ERR source and destination objects are the same".into());
    }
    let key = &args[1];
    if ctx.db().lookup_mut(key).is_none() || ctx.srv.dbs[target].exists(key) {
        ctx.out.int(0);
        return Ok(());
    }
    let (val, expire) = ctx.db().remove(key).expect("looked up");
    ctx.srv.dbs[target].insert_entry(key, val, expire);
    ctx.signal_modified(key);
    ctx.signal_modified_in(target, key);
    ctx.srv.dirty += 1;
    ctx.notify(GENERIC, "move_from", key);
    ctx.notify_in(target, GENERIC, "move_to", key);
    ctx.out.int(1);
    Ok(())
}

/// Parses EXPIRE's NX | XX | GT | LT options.
#[derive(Default)]
struct ExpireFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn expire_flags(args: Args) -> Result<ExpireFlags, CmdError> {
    let mut f = ExpireFlags::default();
    for opt in args.tail(3).iter() {
        if is(opt, "nx") {
            f.nx = true;
        } else if is(opt, "xx") {
            f.xx = true;
        } else if is(opt, "gt") {
            f.gt = true;
        } else if is(opt, "lt") {
            f.lt = true;
        } else {
            return Err(err(format!("Unsupported option {}", text(opt))));
        }
    }
    if f.nx && (f.xx || f.gt || f.lt) {
        return Err("ERR NX and XX, GT or LT options at the same time are not compatible".into());
    }
    if f.gt && f.lt {
        return Err("ERR GT and LT options at the same time are not compatible".into());
    }
    Ok(f)
}

/// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX | XX | GT | LT]
///
/// # Format
/// `EXPIRE key seconds [NX|XX|GT|LT]` (and PEXPIRE in ms, EXPIREAT/PEXPIREAT absolute) — 1 if the
/// TTL was set (or the key deleted because the time is past), 0 if not.
fn expire(ctx: &mut Ctx, args: Args) -> CmdResult {
    let name = args[0].to_ascii_lowercase();
    let seconds = name == b"expire" || name == b"expireat";
    let absolute = name.ends_with(b"at");
    let flags = expire_flags(args)?;
    let mut when = int(&args[2])?;
    let bad = || err(format!("invalid expire time in '{}' command", text(&name)));
    if seconds {
        when = when.checked_mul(1000).ok_or_else(bad)?;
    }
    if !absolute {
        when = when.checked_add(clock::now_ms()).ok_or_else(bad)?;
    }
    let key = &args[1];
    let db = ctx.db();
    let Some(slot) = db.find_live(key) else {
        ctx.out.int(0);
        return Ok(());
    };
    let current = db.expire_of(slot);
    let has = current != NO_EXPIRE;
    let refused = (flags.nx && has)
        || (flags.xx && !has)
        || (flags.gt && (!has || when <= current))
        || (flags.lt && has && when >= current);
    if refused {
        ctx.out.int(0);
        return Ok(());
    }
    // A time already past deletes the key, published as a `del` and propagated as one; a TTL
    // propagates as the absolute PEXPIREAT (Redis's `expireGenericCommand`).
    let event = if when <= clock::now_ms() {
        db.remove(key);
        let verb: &[u8] = if ctx.srv.config.lazyfree_lazy_expire {
            b"UNLINK"
        } else {
            b"DEL"
        };
        ctx.propagate_as(&[verb, key]);
        "del"
    } else {
        db.set_expire_slot(slot, when);
        let at = when.to_string();
        let mut line: Vec<&[u8]> = vec![b"PEXPIREAT", key, at.as_bytes()];
        line.extend(args.iter().skip(3));
        ctx.propagate_as(&line);
        "expire"
    };
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.notify(GENERIC, event, key);
    ctx.out.int(1);
    Ok(())
}

/// TTL / PTTL / EXPIRETIME / PEXPIRETIME key
///
/// # Format
/// `TTL key` — seconds left (rounded), -1 without TTL, -2 if absent. PTTL in ms; EXPIRETIME and
/// PEXPIRETIME give the absolute Unix time.
fn ttl(ctx: &mut Ctx, args: Args) -> CmdResult {
    let name = args[0].to_ascii_lowercase();
    let ms = name.starts_with(b"p");
    let absolute = name.ends_with(b"time");
    let db = ctx.db();
    let Some(slot) = db.lookup_read_slot(&args[1], false) else {
        ctx.out.int(-2);
        return Ok(());
    };
    let at = db.expire_of(slot);
    if at == NO_EXPIRE {
        ctx.out.int(-1);
        return Ok(());
    }
    let t = if absolute {
        at
    } else {
        (at - clock::now_ms()).max(0)
    };
    // Rounded to the nearest second without `t + 500`, which overflows at the largest expiry.
    ctx.out.int(if ms {
        t
    } else {
        t / 1000 + i64::from(t % 1000 >= 500)
    });
    Ok(())
}

/// PERSIST key
///
/// # Format
/// `PERSIST key` — 1 if a TTL was removed, else 0.
fn persist(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = ctx.db();
    let removed = match db.find_live(&args[1]) {
        Some(slot) if db.expire_of(slot) != NO_EXPIRE => {
            db.set_expire_slot(slot, NO_EXPIRE);
            true
        }
        _ => false,
    };
    if removed {
        ctx.signal_modified(&args[1]);
        ctx.srv.dirty += 1;
        ctx.notify(GENERIC, "persist", &args[1]);
    }
    ctx.out.int(removed as i64);
    Ok(())
}

const OBJECT_HELP: &[&str] = &[
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
];

/// OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key, OBJECT HELP
///
/// # Format
/// `OBJECT ENCODING key` (`int`, `embstr`, `raw`, ...), `OBJECT REFCOUNT key`, `OBJECT IDLETIME key`
/// (seconds since last access), `OBJECT FREQ key` (only under an LFU policy, which we don't have).
fn object(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = args[1].to_ascii_lowercase();
    if sub == b"help" {
        ctx.out.help("OBJECT", OBJECT_HELP);
        return Ok(());
    }
    // OBJECT looks keys up without touching their access time, and without a `keymiss`, but
    // counts the hit or miss (Redis's LOOKUP_NOTOUCH | LOOKUP_NONOTIFY).
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(slot) = db.find_live(&args[2]) else {
        db.stats.misses += 1;
        ctx.out.null();
        return Ok(());
    };
    db.stats.hits += 1;
    let e = db.dict.value_at(slot);
    match &sub[..] {
        b"encoding" => ctx.out.bulk_str(e.val.encoding()),
        b"refcount" => {
            // Redis shares the integer objects 0..9999, reporting them with OBJ_SHARED_REFCOUNT,
            // but not under a memory limit with an LRU or LFU policy (each key its own stamp).
            let stamped = ctx.srv.config.maxmemory > 0
                && matches!(
                    Policy::of(ctx.srv.config.maxmemory_policy).pick,
                    Pick::Lru | Pick::Lfu
                );
            let shared =
                !stamped && matches!(&e.val, Value::Str(Str::Int(n)) if (0..10_000).contains(n));
            ctx.out.int(if shared { i32::MAX as i64 } else { 1 });
        }
        b"idletime" if store::lfu_policy() => {
            return Err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.".into())
        }
        b"idletime" => ctx.out.int(store::idle_seconds(e.lru) as i64),
        _ if store::lfu_policy() => ctx.out.int(store::lfu_counter(e.lru) as i64),
        _ => {
            return Err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.".into())
        }
    }
    Ok(())
}

const OBJECT_SUBCOMMANDS: &[Command] = &[
    Command::new("object|encoding", object, 3, READONLY)
        .key(2, RO)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc(
            "Inspect the internal encoding of a Redis object",
            "2.2.3",
            "O(1)",
            "key",
        ),
    Command::new("object|refcount", object, 3, READONLY)
        .key(2, RO)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc(
            "Get the number of references to the value of the key",
            "2.2.3",
            "O(1)",
            "key",
        ),
    Command::new("object|idletime", object, 3, READONLY)
        .key(2, RO)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc(
            "Get the time since a Redis object was last accessed",
            "2.2.3",
            "O(1)",
            "key",
        ),
    Command::new("object|freq", object, 3, READONLY)
        .key(2, RO)
        .tips(&["nondeterministic_output"])
        .group(GROUP)
        .doc(
            "Get the logarithmic access frequency counter of a Redis object",
            "4.0.0",
            "O(1)",
            "key",
        ),
    Command::new("object|help", object, 2, super::LOADING | super::STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "6.2.0",
            "O(1)",
            "",
        ),
];

const EXPIRE_SYNTAX: &str = "key seconds:integer [condition:(NX | XX | GT | LT)]";

pub const COMMANDS: &[Command] = &[
    Command::new("del", del, -2, WRITE).key_range(1, -1, 1, RM | DELETE).group(GROUP)
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .doc("Delete a key", "1.0.0", "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).", "key [key ...]"),
    Command::new("unlink", unlink, -2, WRITE | FAST).key_range(1, -1, 1, RM | DELETE).group(GROUP)
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .doc("Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "4.0.0", "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.", "key [key ...]"),
    Command::new("exists", exists, -2, READONLY | FAST).key_range(1, -1, 1, RO).group(GROUP)
        .history(&[("3.0.3", "Accepts multiple `key` arguments.")])
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .doc("Determine if a key exists", "1.0.0", "O(N) where N is the number of keys to check.", "key [key ...]"),
    Command::new("touch", touch, -2, READONLY | FAST | TOUCHES_ANYWAY).key_range(1, -1, 1, RO).group(GROUP)
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .doc("Alters the last access time of a key(s). Returns the number of existing keys specified.", "3.2.1", "O(N) where N is the number of keys that will be touched.", "key [key ...]"),
    Command::new("type", type_, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Determine the type stored at key", "1.0.0", "O(1)", "key"),
    Command::new("keys", keys, 2, READONLY).acl(acl::DANGEROUS).group(GROUP)
        .tips(&["request_policy:all_shards", "nondeterministic_output_order"])
        .doc("Find all keys matching the given pattern", "1.0.0", "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.", "pattern"),
    Command::new("scan", scan, -2, READONLY).group(GROUP)
        .history(&[("6.0.0", "Added the `TYPE` subcommand.")])
        .arg_since(&[("type", "6.0.0")])
        .tips(&["nondeterministic_output", "request_policy:special"])
        .doc("Incrementally iterate the keys space", "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.", "cursor:integer [MATCH pattern] [COUNT count:integer] [TYPE type]"),
    Command::new("randomkey", randomkey, 1, READONLY).group(GROUP)
        .tips(&["request_policy:all_shards", "nondeterministic_output"])
        .doc("Return a random key from the keyspace", "1.0.0", "O(1)", ""),
    Command::new("rename", rename, 3, WRITE).key(1, RW | ACCESS | DELETE).key(2, OW | UPDATE).group(GROUP)
        .doc("Rename a key", "1.0.0", "O(1)", "key newkey:key"),
    Command::new("renamenx", rename, 3, WRITE | FAST).key(1, RW | ACCESS | DELETE).key(2, OW | INSERT).group(GROUP)
        .history(&[("3.2.0", "The command no longer returns an error when source and destination names are the same.")])
        .doc("Rename a key, only if the new key does not exist", "1.0.0", "O(1)", "key newkey:key"),
    Command::new("copy", copy, -3, WRITE | DENYOOM).key(1, RO | ACCESS).key(2, OW | UPDATE).group(GROUP)
        .doc("Copy a key", "6.2.0", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.", "source:key destination:key [DB destination-db:integer] [REPLACE]"),
    Command::new("move", move_, 3, WRITE | FAST).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Move a key to another database", "1.0.0", "O(1)", "key db:integer"),
    Command::new("expire", expire, -3, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .arg_since(&[("condition", "7.0.0")])
        .doc("Set a key's time to live in seconds", "1.0.0", "O(1)", EXPIRE_SYNTAX),
    Command::new("pexpire", expire, -3, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .arg_since(&[("condition", "7.0.0")])
        .doc("Set a key's time to live in milliseconds", "2.6.0", "O(1)", "key milliseconds:integer [condition:(NX | XX | GT | LT)]"),
    Command::new("expireat", expire, -3, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .arg_since(&[("condition", "7.0.0")])
        .doc("Set the expiration for a key as a UNIX timestamp", "1.2.0", "O(1)", "key unix-time-seconds:unix-time [condition:(NX | XX | GT | LT)]"),
    Command::new("pexpireat", expire, -3, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .arg_since(&[("condition", "7.0.0")])
        .doc("Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0", "O(1)", "key unix-time-milliseconds:unix-time [condition:(NX | XX | GT | LT)]"),
    Command::new("ttl", ttl, 2, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .history(&[("2.8.0", "Added the -2 reply.")])
        .tips(&["nondeterministic_output"])
        .doc("Get the time to live for a key in seconds", "1.0.0", "O(1)", "key"),
    Command::new("pttl", ttl, 2, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .history(&[("2.8.0", "Added the -2 reply.")])
        .tips(&["nondeterministic_output"])
        .doc("Get the time to live for a key in milliseconds", "2.6.0", "O(1)", "key"),
    Command::new("expiretime", ttl, 2, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the expiration Unix timestamp for a key", "7.0.0", "O(1)", "key"),
    Command::new("pexpiretime", ttl, 2, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", "O(1)", "key"),
    Command::new("persist", persist, 2, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .doc("Remove the expiration from a key", "2.2.0", "O(1)", "key"),
    Command::container("object", -2, OBJECT_SUBCOMMANDS).group(GROUP)
        .doc("A container for object introspection commands", "2.2.3", "Depends on subcommand.", ""),
];
