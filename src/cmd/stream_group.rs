//! Stream consumer groups and introspection (Redis's t_stream.c): XGROUP, XACK, XPENDING, XCLAIM,
//! XAUTOCLAIM and XINFO, on the group state of `store::stream`. XREADGROUP shares XREAD's handler in
//! `cmd::stream`.
//!
//! Claims propagate as Redis propagates them: each claimed (or dropped, when its entry is gone)
//! pending entry as the idempotent `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID
//! LASTID id`, and a group position moved by LASTID alone as `XGROUP SETID ... ENTRIESREAD n`.

use super::keyspec::{DELETE, INSERT, RO, RW, UPDATE};
use super::parse::{c_text, int, is, subcommand_syntax};
use super::stream::{
    interval_id, now_ms, parse_id, propagate_op, read_stream, reply_entry, setid_effect, strict_id,
    write_stream, xclaim_effect,
};
use super::{
    err, Args, CmdError, CmdResult, Command, Ctx, DENYOOM, FAST, LOADING, READONLY, STALE, WRITE,
};
use crate::resp::reply::{NO_SUCH_KEY, SYNTAX};
use crate::server::notify::STREAM;
use crate::store::stream::{Group, Stream, StreamId, ENTRIES_READ_INVALID};
use crate::store::{Db, Value};

const GROUP: &str = "stream";

fn no_group(key: &[u8], group: &[u8]) -> CmdError {
    format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        c_text(key),
        c_text(group)
    )
    .into()
}

fn no_group_for_key(key: &[u8], group: &[u8]) -> CmdError {
    format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        c_text(group),
        c_text(key)
    )
    .into()
}

/// The stream at `key` with the group, or `no_group`'s error.
fn stream_with_group<'d>(
    db: &'d mut Db,
    key: &[u8],
    group: &[u8],
) -> Result<&'d mut Stream, CmdError> {
    match read_stream(db, key)? {
        Some(s) if s.groups.contains_key(group) => Ok(s),
        _ => Err(no_group(key, group)),
    }
}

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

/// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP
///
/// # Format
/// - `XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n]` — OK, or `-BUSYGROUP`.
/// - `XGROUP SETID key group id|$ [ENTRIESREAD n]` — OK.
/// - `XGROUP DESTROY key group` — 1 if the group existed, else 0.
/// - `XGROUP CREATECONSUMER key group consumer` — 1 if it was created, else 0.
/// - `XGROUP DELCONSUMER key group consumer` — how many entries the consumer had pending.
fn xgroup(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = args[1].to_ascii_lowercase();
    if sub == b"help" {
        ctx.out.help("XGROUP", XGROUP_HELP);
        return Ok(());
    }
    let (create, setid) = (sub == b"create", sub == b"setid");
    let (mut mkstream, mut entries_read) = (false, ENTRIES_READ_INVALID);
    let mut i = 5;
    while i < args.len() {
        if create && is(&args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if (create || setid) && is(&args[i], "entriesread") && i + 1 < args.len() {
            entries_read = int(&args[i + 1])?;
            if entries_read < 0 && entries_read != ENTRIES_READ_INVALID {
                return Err(err("value for ENTRIESREAD must be positive or -1"));
            }
            i += 2;
        } else {
            return Err(subcommand_syntax("XGROUP", &args[1]));
        }
    }
    let (key, group) = (&args[2], &args[3]);
    let s = write_stream(ctx.db(), key)?;
    let exists = s.is_some();
    let has_group = s.is_some_and(|s| s.groups.contains_key(group));
    if !mkstream {
        if !exists {
            return Err(err("The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."));
        }
        if !has_group && matches!(&sub[..], b"setid" | b"createconsumer" | b"delconsumer") {
            return Err(no_group_for_key(key, group));
        }
    }
    let n = args.len();
    match &sub[..] {
        b"create" if (5..=8).contains(&n) => {
            let id = match &args[4] {
                b"$" => write_stream(ctx.db(), key)?.map_or(StreamId::MIN, |s| s.last_id),
                id => strict_id(id)?,
            };
            if !exists {
                ctx.db()
                    .lookup_mut_or_insert(key, || Value::Stream(Box::default()));
                ctx.signal_modified(key);
            }
            let s = write_stream(ctx.db(), key)?.expect("exists");
            if !s.create_group(group, id, entries_read) {
                return Err("BUSYGROUP Consumer Group name already exists".into());
            }
            ctx.out.ok();
            ctx.srv.dirty += 1;
            ctx.notify(STREAM, "xgroup-create", key);
        }
        b"setid" if n == 5 || n == 7 => {
            let s = write_stream(ctx.db(), key)?.expect("checked");
            let id = match &args[4] {
                b"$" => s.last_id,
                id => parse_id(id, 0, false, false)?.id,
            };
            let g = s.groups.get_mut(group).expect("checked");
            g.last_id = id;
            g.entries_read = entries_read;
            ctx.out.ok();
            ctx.srv.dirty += 1;
            ctx.notify(STREAM, "xgroup-setid", key);
        }
        b"destroy" if n == 4 => {
            let s = write_stream(ctx.db(), key)?.expect("checked");
            if s.groups.remove(group).is_none() {
                ctx.out.int(0);
                return Ok(());
            }
            ctx.out.int(1);
            ctx.srv.dirty += 1;
            ctx.notify(STREAM, "xgroup-destroy", key);
            // Its blocked readers are released with -NOGROUP.
            ctx.signal_ready(key);
        }
        b"createconsumer" if n == 5 => {
            let s = write_stream(ctx.db(), key)?.expect("checked");
            let g = s.groups.get_mut(group).expect("checked");
            let created = g.create_consumer(&args[4], now_ms());
            if created {
                ctx.srv.dirty += 1;
                ctx.notify(STREAM, "xgroup-createconsumer", key);
            }
            ctx.out.int(created as i64);
        }
        b"delconsumer" if n == 5 => {
            let s = write_stream(ctx.db(), key)?.expect("checked");
            let g = s.groups.get_mut(group).expect("checked");
            let pending = g.delete_consumer(&args[4]);
            if pending.is_some() {
                ctx.srv.dirty += 1;
                ctx.notify(STREAM, "xgroup-delconsumer", key);
            }
            ctx.out.int(pending.unwrap_or(0) as i64);
        }
        _ => return Err(subcommand_syntax("XGROUP", &args[1])),
    }
    Ok(())
}

/// XACK key group id [id ...]
///
/// # Format
/// `XACK key group id [id ...]` — how many of the IDs were pending (0 for no key or group).
fn xack(ctx: &mut Ctx, args: Args) -> CmdResult {
    let Some(s) = read_stream(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        ctx.out.int(0);
        return Ok(());
    };
    let Some(g) = s.groups.get_mut(&args[2]) else {
        ctx.out.int(0);
        return Ok(());
    };
    // All or nothing: every ID parses before any is acknowledged.
    let ids = args
        .tail(3)
        .iter()
        .map(strict_id)
        .collect::<Result<Vec<_>, _>>()?;
    let acked = ids.into_iter().filter(|&id| g.ack(id)).count();
    ctx.srv.dirty += acked as u64;
    ctx.out.int(acked as i64);
    Ok(())
}

/// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
///
/// # Format
/// - `XPENDING key group` — `[count, smallest ID, greatest ID, [[consumer, count], ...]]`, with
///   nils when nothing is pending.
/// - `XPENDING key group [IDLE ms] start end count [consumer]` — the pending entries in the range,
///   each `[id, consumer, idle ms, delivery count]`.
fn xpending(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = args.len();
    if n != 3 && !(6..=9).contains(&n) {
        return Err(SYNTAX.into());
    }
    let (mut start, mut end) = (StreamId::MIN, StreamId::MAX);
    let (mut count, mut min_idle, mut consumer) = (0i64, 0i64, None);
    if n >= 6 {
        let mut at = 3;
        if is(&args[3], "idle") {
            min_idle = int(&args[4])?;
            if n < 8 {
                return Err(SYNTAX.into());
            }
            at += 2;
        }
        count = int(&args[at + 2])?.max(0);
        let (s, ex) = interval_id(&args[at], 0)?;
        start = if ex {
            s.incr()
                .ok_or_else(|| err("invalid start ID for the interval"))?
        } else {
            s
        };
        let (e, ex) = interval_id(&args[at + 1], u64::MAX)?;
        end = if ex {
            e.decr()
                .ok_or_else(|| err("invalid end ID for the interval"))?
        } else {
            e
        };
        consumer = (at + 3 < n).then(|| &args[at + 3]);
    }
    let (key, group) = (&args[1], &args[2]);
    let out = &mut *ctx.out;
    let s = match read_stream(&mut ctx.srv.dbs[ctx.db], key)? {
        Some(s) if s.groups.contains_key(group) => s,
        _ => return Err(no_group(key, group)),
    };
    let g = &s.groups[group];
    if n == 3 {
        out.array(4);
        out.int(g.pel.len() as i64);
        let (Some((first, _)), Some((last, _))) = (g.pel.first_key_value(), g.pel.last_key_value())
        else {
            out.null();
            out.null();
            out.null_array();
            return Ok(());
        };
        out.bulk(first.to_string().as_bytes());
        out.bulk(last.to_string().as_bytes());
        let owners: Vec<_> = g
            .consumers
            .iter()
            .filter(|(_, c)| !c.pel.is_empty())
            .collect();
        out.array(owners.len());
        for (name, c) in owners {
            out.array(2);
            out.bulk(name);
            out.bulk(c.pel.len().to_string().as_bytes());
        }
        return Ok(());
    }
    let ids: Vec<StreamId> = match consumer {
        Some(name) => match g.consumers.get(name) {
            Some(c) if start <= end => c.pel.range(start..=end).copied().collect(),
            Some(_) => Vec::new(),
            None => {
                out.array(0);
                return Ok(());
            }
        },
        None if start <= end => g.pel.range(start..=end).map(|(id, _)| *id).collect(),
        None => Vec::new(),
    };
    let now = now_ms();
    let rows: Vec<_> = ids
        .into_iter()
        .map(|id| (id, &g.pel[&id]))
        .filter(|(_, nack)| min_idle == 0 || now - nack.delivery_time >= min_idle)
        .take(count as usize)
        .collect();
    out.array(rows.len());
    for (id, nack) in rows {
        out.array(4);
        out.bulk(id.to_string().as_bytes());
        out.bulk(&nack.consumer);
        out.int((now - nack.delivery_time).max(0));
        out.int(nack.delivery_count as i64);
    }
    Ok(())
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms] [RETRYCOUNT n]
/// [FORCE] [JUSTID] [LASTID id]
///
/// # Format
/// `XCLAIM key group consumer min-idle-time id [id ...] [options]` — the entries claimed (their IDs
/// with JUSTID), in the order given.
fn xclaim(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (key, group, consumer) = (&args[1], &args[2], &args[3]);
    stream_with_group(&mut ctx.srv.dbs[ctx.db], key, group)?;
    let min_idle = super::parse::int(&args[4])
        .map_err(|_| err("Invalid min-idle-time argument for XCLAIM"))?
        .max(0);
    // The IDs run until the first argument that is not one; options follow.
    let mut ids = Vec::new();
    let mut j = 5;
    while j < args.len() {
        match parse_id(&args[j], 0, true, false) {
            Ok(p) => ids.push((p.id, j)),
            Err(_) => break,
        }
        j += 1;
    }
    let now = now_ms();
    let (mut force, mut justid) = (false, false);
    let (mut delivery_time, mut retry_count) = (None, None);
    let mut last_id = StreamId::MIN;
    while j < args.len() {
        let more = j + 1 < args.len();
        let opt = &args[j];
        let value = |name: &str| {
            int(&args[j + 1]).map_err(|_| err(format!("Invalid {name} option argument for XCLAIM")))
        };
        if is(opt, "force") {
            force = true;
        } else if is(opt, "justid") {
            justid = true;
        } else if is(opt, "idle") && more {
            delivery_time = Some(now.wrapping_sub(value("IDLE")?));
            j += 1;
        } else if is(opt, "time") && more {
            delivery_time = Some(value("TIME")?);
            j += 1;
        } else if is(opt, "retrycount") && more {
            retry_count = Some(value("RETRYCOUNT")?);
            j += 1;
        } else if is(opt, "lastid") && more {
            last_id = strict_id(&args[j + 1])?;
            j += 1;
        } else {
            return Err(err(format!("Unrecognized XCLAIM option '{}'", c_text(opt))));
        }
        j += 1;
    }
    ctx.prevent_propagation();
    // A bogus time (in the future, or negative) means now: clients compute it with their clocks.
    let delivery_time = match delivery_time {
        Some(t) if (0..=now).contains(&t) => t,
        _ => now,
    };
    let s = stream_with_group(&mut ctx.srv.dbs[ctx.db], key, group)?;
    let mut claim = Claim::default();
    let g = s.groups.get_mut(group).expect("checked");
    let mut propagate_last_id = false;
    if last_id > g.last_id {
        g.last_id = last_id;
        propagate_last_id = true;
    }
    for (id, at) in ids {
        let exists = s.contains(id);
        let g = s.groups.get_mut(group).expect("checked");
        let pending = g.pel.get(&id);
        if !exists {
            // The entry is gone: its pending record goes too, and so on replay.
            if let Some(nack) = pending {
                claim
                    .effects
                    .push(xclaim_effect(key, group, &args[at], nack, g.last_id));
                g.ack(id);
                claim.dirty += 1;
                propagate_last_id = false;
            }
            continue;
        }
        match pending {
            None if !force => continue,
            Some(nack) if min_idle > 0 && now - nack.delivery_time < min_idle => continue,
            _ => {}
        }
        claim.meet(g, consumer, now);
        let last_id = g.last_id;
        let nack = g.assign(id, consumer, now, |n| {
            n.delivery_time = delivery_time;
            match retry_count {
                Some(c) if c >= 0 => n.delivery_count = c as u64,
                _ if !justid => n.delivery_count += 1,
                _ => {}
            }
        });
        claim
            .effects
            .push(xclaim_effect(key, group, &args[at], nack, last_id));
        claim.claimed.push(id);
        claim.dirty += 1;
        propagate_last_id = false;
    }
    if propagate_last_id {
        claim
            .effects
            .push(setid_effect(key, group, &s.groups[group]));
        claim.dirty += 1;
    }
    reply_claimed(ctx.out, s, &claim.claimed, justid);
    claim.finish(ctx, key);
    Ok(())
}

/// What XCLAIM and XAUTOCLAIM did, applied to the server once the stream is no longer borrowed.
#[derive(Default)]
struct Claim {
    claimed: Vec<StreamId>,
    effects: Vec<Vec<Vec<u8>>>,
    dirty: u64,
    consumer_met: bool,
    consumer_created: bool,
}

impl Claim {
    /// The claiming consumer, looked up (seen now) or created, at the first entry it claims.
    fn meet(&mut self, g: &mut Group, consumer: &[u8], now: i64) {
        if std::mem::replace(&mut self.consumer_met, true) {
            return;
        }
        if g.consumer(consumer, Some(now)).is_none() {
            g.create_consumer(consumer, now);
            self.consumer_created = true;
            self.dirty += 1;
        }
    }

    fn finish(self, ctx: &mut Ctx, key: &[u8]) {
        if self.consumer_created {
            ctx.notify(STREAM, "xgroup-createconsumer", key);
        }
        ctx.srv.dirty += self.dirty;
        for e in &self.effects {
            propagate_op(ctx, e);
        }
    }
}

/// The claimed entries (or their IDs) as XCLAIM and XAUTOCLAIM reply them.
fn reply_claimed(
    out: &mut crate::resp::reply::Reply,
    s: &Stream,
    claimed: &[StreamId],
    justid: bool,
) {
    out.array(claimed.len());
    for &id in claimed {
        if justid {
            out.bulk(id.to_string().as_bytes());
        } else {
            let e = s
                .range(id, id, false)
                .next()
                .expect("a claimed entry exists");
            reply_entry(out, &e);
        }
    }
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
///
/// # Format
/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID]` — `[cursor, claimed
/// entries (or IDs), IDs dropped from the PEL because their entries are gone]`; the cursor is the
/// next pending ID to look at, `0-0` at the end.
fn xautoclaim(ctx: &mut Ctx, args: Args) -> CmdResult {
    const ATTEMPTS_FACTOR: i64 = 10;
    let (key, group, consumer) = (&args[1], &args[2], &args[3]);
    let min_idle = int(&args[4])
        .map_err(|_| err("Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0);
    let (start, ex) = interval_id(&args[5], 0)?;
    let start = if ex {
        start
            .incr()
            .ok_or_else(|| err("invalid start ID for the interval"))?
    } else {
        start
    };
    let (mut count, mut justid) = (100i64, false);
    let mut j = 6;
    while j < args.len() {
        if is(&args[j], "count") && j + 1 < args.len() {
            let max = i64::MAX / 16;
            count = int(&args[j + 1])
                .ok()
                .filter(|c| (1..=max).contains(c))
                .ok_or("ERR COUNT must be > 0")?;
            j += 1;
        } else if is(&args[j], "justid") {
            justid = true;
        } else {
            return Err(SYNTAX.into());
        }
        j += 1;
    }
    ctx.prevent_propagation();
    let s = stream_with_group(&mut ctx.srv.dbs[ctx.db], key, group)?;
    let now = now_ms();
    let mut attempts = count * ATTEMPTS_FACTOR;
    let mut claim = Claim::default();
    let mut deleted = Vec::new();
    let mut cursor = Some(start);
    // The first pending ID not looked at, once the loop ends.
    let mut next = None;
    while let Some(from) = cursor {
        let Some((&id, _)) = s.groups[group].pel.range(from..).next() else {
            break;
        };
        if attempts == 0 || count == 0 {
            next = Some(id);
            break;
        }
        attempts -= 1;
        cursor = id.incr();
        let exists = s.contains(id);
        let g = s.groups.get_mut(group).expect("checked");
        let nack = &g.pel[&id];
        let id_text = id.to_string();
        if !exists {
            claim.effects.push(xclaim_effect(
                key,
                group,
                id_text.as_bytes(),
                nack,
                g.last_id,
            ));
            g.ack(id);
            deleted.push(id_text);
            claim.dirty += 1;
            count -= 1;
            continue;
        }
        if min_idle > 0 && now - nack.delivery_time < min_idle {
            continue;
        }
        claim.meet(g, consumer, now);
        let last_id = g.last_id;
        let nack = g.assign(id, consumer, now, |n| {
            n.delivery_time = now;
            if !justid {
                n.delivery_count += 1;
            }
        });
        claim
            .effects
            .push(xclaim_effect(key, group, id_text.as_bytes(), nack, last_id));
        claim.claimed.push(id);
        claim.dirty += 1;
        count -= 1;
    }
    let out = &mut *ctx.out;
    out.array(3);
    out.bulk(next.unwrap_or(StreamId::MIN).to_string().as_bytes());
    reply_claimed(out, s, &claim.claimed, justid);
    out.array(deleted.len());
    for id in &deleted {
        out.bulk(id.as_bytes());
    }
    claim.finish(ctx, key);
    Ok(())
}

const XINFO_HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

/// XINFO STREAM|GROUPS|CONSUMERS|HELP
///
/// # Format
/// - `XINFO STREAM key [FULL [COUNT n]]` — a map: length, radix-tree-keys, radix-tree-nodes,
///   last-generated-id, max-deleted-entry-id, entries-added, recorded-first-entry-id, then groups
///   (a count), first-entry and last-entry; with FULL, entries (at most n, default 10, 0 for all)
///   and each group in full (its PEL and consumers).
/// - `XINFO GROUPS key` — each group: name, consumers, pending, last-delivered-id, entries-read, lag.
/// - `XINFO CONSUMERS key group` — each consumer: name, pending, idle.
fn xinfo(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = args[1].to_ascii_lowercase();
    if sub == b"help" {
        ctx.out.help("XINFO", XINFO_HELP);
        return Ok(());
    }
    let key = &args[2];
    let out = &mut *ctx.out;
    let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)?.ok_or(NO_SUCH_KEY)?;
    match &sub[..] {
        b"consumers" if args.len() == 4 => {
            let g = s
                .groups
                .get(&args[3])
                .ok_or_else(|| no_group_for_key(key, &args[3]))?;
            let now = now_ms();
            out.array(g.consumers.len());
            for (name, c) in &g.consumers {
                out.map(3);
                out.bulk(b"name");
                out.bulk(name);
                out.bulk(b"pending");
                out.int(c.pel.len() as i64);
                out.bulk(b"idle");
                out.int((now - c.seen_time).max(0));
            }
        }
        b"groups" if args.len() == 3 => {
            out.array(s.groups.len());
            for (name, g) in &s.groups {
                out.map(6);
                out.bulk(b"name");
                out.bulk(name);
                out.bulk(b"consumers");
                out.int(g.consumers.len() as i64);
                out.bulk(b"pending");
                out.int(g.pel.len() as i64);
                out.bulk(b"last-delivered-id");
                out.bulk(g.last_id.to_string().as_bytes());
                reply_group_counters(out, s, g);
            }
        }
        b"stream" => xinfo_stream(out, s, args)?,
        _ => return Err(subcommand_syntax("XINFO", &args[1])),
    }
    Ok(())
}

/// A group's `entries-read` and `lag` fields (each nil when it cannot be known).
fn reply_group_counters(out: &mut crate::resp::reply::Reply, s: &Stream, g: &Group) {
    out.bulk(b"entries-read");
    if g.entries_read == ENTRIES_READ_INVALID {
        out.null();
    } else {
        out.int(g.entries_read);
    }
    out.bulk(b"lag");
    match s.group_lag(g) {
        Some(lag) => out.int(lag),
        None => out.null(),
    }
}

fn xinfo_stream(out: &mut crate::resp::reply::Reply, s: &Stream, args: Args) -> CmdResult {
    let opts = args.len() - 3;
    let mut count: i64 = 10;
    let full = opts > 0;
    if full {
        if (opts != 1 && opts != 3) || !is(&args[3], "full") {
            return Err(subcommand_syntax("XINFO", &args[1]));
        }
        if opts == 3 {
            if !is(&args[4], "count") {
                return Err(subcommand_syntax("XINFO", &args[1]));
            }
            count = int(&args[5])?;
            if count < 0 {
                count = 10;
            }
        }
    }
    let limit = if count == 0 {
        usize::MAX
    } else {
        count as usize
    };
    out.map(if full { 9 } else { 10 });
    out.bulk(b"length");
    out.int(s.len() as i64);
    out.bulk(b"radix-tree-keys");
    out.int(s.node_count() as i64);
    out.bulk(b"radix-tree-nodes");
    out.int(s.radix_tree_nodes() as i64);
    out.bulk(b"last-generated-id");
    out.bulk(s.last_id.to_string().as_bytes());
    out.bulk(b"max-deleted-entry-id");
    out.bulk(s.max_deleted_entry_id.to_string().as_bytes());
    out.bulk(b"entries-added");
    out.int(s.entries_added as i64);
    out.bulk(b"recorded-first-entry-id");
    out.bulk(s.first_id.to_string().as_bytes());
    if !full {
        out.bulk(b"groups");
        out.int(s.groups.len() as i64);
        for (name, rev) in [(&b"first-entry"[..], false), (b"last-entry", true)] {
            out.bulk(name);
            match s.range(StreamId::MIN, StreamId::MAX, rev).next() {
                Some(e) => reply_entry(out, &e),
                None => out.null(),
            }
        }
        return Ok(());
    }
    out.bulk(b"entries");
    let entries: Vec<_> = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .take(limit)
        .collect();
    out.array(entries.len());
    for e in &entries {
        reply_entry(out, e);
    }
    out.bulk(b"groups");
    out.array(s.groups.len());
    for (name, g) in &s.groups {
        out.map(7);
        out.bulk(b"name");
        out.bulk(name);
        out.bulk(b"last-delivered-id");
        out.bulk(g.last_id.to_string().as_bytes());
        reply_group_counters(out, s, g);
        out.bulk(b"pel-count");
        out.int(g.pel.len() as i64);
        out.bulk(b"pending");
        let pel: Vec<_> = g.pel.iter().take(limit).collect();
        out.array(pel.len());
        for (id, nack) in pel {
            out.array(4);
            out.bulk(id.to_string().as_bytes());
            out.bulk(&nack.consumer);
            out.int(nack.delivery_time);
            out.int(nack.delivery_count as i64);
        }
        out.bulk(b"consumers");
        out.array(g.consumers.len());
        for (cname, c) in &g.consumers {
            out.map(4);
            out.bulk(b"name");
            out.bulk(cname);
            out.bulk(b"seen-time");
            out.int(c.seen_time);
            out.bulk(b"pel-count");
            out.int(c.pel.len() as i64);
            out.bulk(b"pending");
            let pel: Vec<_> = c.pel.iter().take(limit).collect();
            out.array(pel.len());
            for id in pel {
                let nack = &g.pel[id];
                out.array(3);
                out.bulk(id.to_string().as_bytes());
                out.int(nack.delivery_time);
                out.int(nack.delivery_count as i64);
            }
        }
    }
    Ok(())
}

const XGROUP_SUBCOMMANDS: &[Command] = &[
    Command::new("xgroup|create", xgroup, -5, WRITE | DENYOOM)
        .key(2, RW | INSERT)
        .group(GROUP)
        .history(&[("7.0.0", "Added the `entries_read` named argument.")])
        .doc(
            "Create a consumer group.",
            "5.0.0",
            "O(1)",
            "key groupname id:(id | $) [MKSTREAM] [ENTRIESREAD entries_read:integer]",
        ),
    Command::new("xgroup|setid", xgroup, -5, WRITE)
        .key(2, RW | UPDATE)
        .group(GROUP)
        .history(&[("7.0.0", "Added the optional `entries_read` argument.")])
        .doc(
            "Set a consumer group to an arbitrary last delivered ID value.",
            "5.0.0",
            "O(1)",
            "key groupname id:(id | $) [ENTRIESREAD entries_read:integer]",
        ),
    Command::new("xgroup|destroy", xgroup, 4, WRITE)
        .key(2, RW | DELETE)
        .group(GROUP)
        .doc(
            "Destroy a consumer group.",
            "5.0.0",
            "O(N) where N is the number of entries in the group's pending entries list (PEL).",
            "key groupname",
        ),
    Command::new("xgroup|createconsumer", xgroup, 5, WRITE | DENYOOM)
        .key(2, RW | INSERT)
        .group(GROUP)
        .doc(
            "Create a consumer in a consumer group.",
            "6.2.0",
            "O(1)",
            "key groupname consumername",
        ),
    Command::new("xgroup|delconsumer", xgroup, 5, WRITE)
        .key(2, RW | DELETE)
        .group(GROUP)
        .doc(
            "Delete a consumer from a consumer group.",
            "5.0.0",
            "O(1)",
            "key groupname consumername",
        ),
    Command::new("xgroup|help", xgroup, 2, LOADING | STALE)
        .group(GROUP)
        .doc(
            "Show helpful text about the different subcommands",
            "5.0.0",
            "O(1)",
            "",
        ),
];

const XINFO_SUBCOMMANDS: &[Command] = &[
    Command::new("xinfo|stream", xinfo, -3, READONLY).key(2, RO | super::keyspec::ACCESS).group(GROUP)
        .history(&[("6.0.0", "Added the `FULL` modifier."), ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields")])
        .doc("Get information about a stream", "5.0.0", "O(1)", "key [full:(FULL [COUNT count:integer])]"),
    Command::new("xinfo|groups", xinfo, 3, READONLY).key(2, RO | super::keyspec::ACCESS).group(GROUP)
        .history(&[("7.0.0", "Added the `entries-read` and `lag` fields")])
        .doc("List the consumer groups of a stream", "5.0.0", "O(1)", "key"),
    Command::new("xinfo|consumers", xinfo, 4, READONLY).key(2, RO | super::keyspec::ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("List the consumers in a consumer group", "5.0.0", "O(1)", "key groupname"),
    Command::new("xinfo|help", xinfo, 2, LOADING | STALE).group(GROUP)
        .doc("Show helpful text about the different subcommands", "5.0.0", "O(1)", ""),
];

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::container("xgroup", -2, XGROUP_SUBCOMMANDS).group(GROUP)
        .doc("A container for consumer groups commands", "5.0.0", "Depends on subcommand.", ""),
    Command::new("xack", xack, -4, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .doc("Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "5.0.0", "O(1) for each message ID processed.",
            "key group id [id ...]"),
    Command::new("xpending", xpending, -3, READONLY).key(1, RO | super::keyspec::ACCESS).group(GROUP)
        .tips(&["nondeterministic_output"])
        .history(&[("6.2.0", "Added the `IDLE` option and exclusive range intervals.")])
        .arg_since(&[("min-idle-time", "6.2.0")])
        .doc("Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "5.0.0", "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
            "key group [filters:([IDLE min-idle-time:integer] start end count:integer [consumer])]"),
    Command::new("xclaim", xclaim, -6, WRITE | FAST).key(1, RW | UPDATE).group(GROUP)
        .tips(&["nondeterministic_output"])
        .doc("Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "5.0.0", "O(log N) with N being the number of messages in the PEL of the consumer group.",
            "key group consumer min-idle-time id [id ...] [IDLE ms:integer] [TIME unix-time-milliseconds:unix-time] [RETRYCOUNT count:integer] [FORCE] [JUSTID] [LASTID id]"),
    Command::new("xautoclaim", xautoclaim, -6, WRITE | FAST).key(1, RW | DELETE).group(GROUP)
        .tips(&["nondeterministic_output"])
        .history(&[("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL")])
        .doc("Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "6.2.0", "O(1) if COUNT is small.",
            "key group consumer min-idle-time start [COUNT count:integer] [JUSTID]"),
    Command::container("xinfo", -2, XINFO_SUBCOMMANDS).group(GROUP)
        .doc("A container for stream introspection commands", "5.0.0", "Depends on subcommand.", ""),
];
