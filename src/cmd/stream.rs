//! Streams (Redis's t_stream.c): XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID and XREAD, on
//! the stream type of `store::stream`. XREAD blocks through `server::blocking`: it blocks with each
//! `$` replaced by the ID it stood for, and when re-executed for a ready key serves that key alone,
//! as Redis's `serveClientsBlockedOnStreamKey`.
//!
//! Stream IDs are parsed as Redis parses them (`streamGenericParseIDOrReply`, whose numbers go
//! through `string2ull`). Approximate trims propagate as the exact trim they made, and an XADD
//! with a generated ID as the ID it got (`streamRewriteTrimArgument`, `rewriteClientCommandArgument`).

use super::keyspec::{BeginSearch, FindKeys, KeySpec, ACCESS, DELETE, RO, RW, UPDATE};
use super::parse::{int, is, strtoul};
use super::{
    err, Args, CmdError, CmdResult, Command, Ctx, BLOCKING, DENYOOM, FAST, MOVABLEKEYS, READONLY,
    WRITE,
};
use crate::resp::reply::{Reply, NO_SUCH_KEY, SYNTAX, WRONGTYPE};
use crate::server::blocking::{TimeoutReply, Wait};
use crate::server::notify::STREAM;
use crate::store::stream::{AddError, Group, Nack, NodeLimits, Stream, StreamId, Trim, TrimBy};
use crate::store::{Db, Value};

const GROUP: &str = "stream";

const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

/// Redis's `string2ull`: a canonical integer that is not negative, else what `strtoull` takes
/// of all of it (leading spaces, a sign, leading zeros; a minus wraps around).
fn string2ull(s: &[u8]) -> Option<u64> {
    if let Some(v) = crate::util::parse_i64(s) {
        return u64::try_from(v).ok();
    }
    let (v, to_end, erange) = strtoul(s);
    (!s.is_empty() && to_end && !erange).then_some(v)
}

/// A parsed ID and, for XADD's `<ms>-*`, whether its sequence was given.
pub(super) struct ParsedId {
    pub(super) id: StreamId,
    seq_given: bool,
}

/// `streamGenericParseIDOrReply`: `-` and `+` (unless `strict`), `<ms>-<seq>`, `<ms>` (with
/// `missing_seq`), and with `seq_star` XADD's `<ms>-*`.
pub(super) fn parse_id(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    seq_star: bool,
) -> Result<ParsedId, CmdError> {
    if arg.len() > 127 {
        return Err(INVALID_ID.into());
    }
    // Redis reads the argument as a C string.
    let s = &arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())];
    let whole = |id| {
        Ok(ParsedId {
            id,
            seq_given: true,
        })
    };
    match s {
        b"-" | b"+" if strict => Err(INVALID_ID.into()),
        b"-" => whole(StreamId::MIN),
        b"+" => whole(StreamId::MAX),
        _ => {
            let (ms, seq) = match s.iter().position(|&c| c == b'-') {
                Some(d) => (&s[..d], Some(&s[d + 1..])),
                None => (s, None),
            };
            let ms = string2ull(ms).ok_or(INVALID_ID)?;
            match seq {
                Some(b"*") if seq_star => Ok(ParsedId {
                    id: StreamId::new(ms, 0),
                    seq_given: false,
                }),
                Some(seq) => whole(StreamId::new(ms, string2ull(seq).ok_or(INVALID_ID)?)),
                None => whole(StreamId::new(ms, missing_seq)),
            }
        }
    }
}

pub(super) fn strict_id(arg: &[u8]) -> Result<StreamId, CmdError> {
    parse_id(arg, 0, true, false).map(|p| p.id)
}

/// A range bound (`streamParseIntervalIDOrReply`): `(` makes it exclusive (and strict).
pub(super) fn interval_id(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), CmdError> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_id(&arg[1..], missing_seq, true, false)?.id, true))
    } else {
        Ok((parse_id(arg, missing_seq, false, false)?.id, false))
    }
}

pub(super) fn as_stream(v: &mut Value) -> Result<&mut Stream, CmdError> {
    match v {
        Value::Stream(s) => Ok(s),
        _ => Err(WRONGTYPE.into()),
    }
}

pub(super) fn read_stream<'d>(
    db: &'d mut Db,
    key: &[u8],
) -> Result<Option<&'d mut Stream>, CmdError> {
    match db.lookup(key) {
        None => Ok(None),
        Some(e) => as_stream(&mut e.val).map(Some),
    }
}

pub(super) fn write_stream<'d>(
    db: &'d mut Db,
    key: &[u8],
) -> Result<Option<&'d mut Stream>, CmdError> {
    match db.lookup_mut(key) {
        None => Ok(None),
        Some(e) => as_stream(&mut e.val).map(Some),
    }
}

fn node_limits(ctx: &Ctx) -> NodeLimits {
    NodeLimits {
        max_bytes: ctx.srv.config.stream_node_max_bytes.max(0) as usize,
        max_entries: ctx.srv.config.stream_node_max_entries,
    }
}

/// XADD's and XTRIM's options (`streamAddTrimArgs`).
#[derive(Default)]
struct AddTrimArgs {
    trim: Option<TrimBy>,
    approx: bool,
    limit: i64,
    /// The threshold's position (the `~` or `=` is the one before it).
    threshold_at: usize,
    no_mkstream: bool,
    id: Option<ParsedId>,
}

/// `streamParseAddOrTrimArgsOrReply`: the options, and for XADD where the ID is.
fn parse_add_trim(ctx: &Ctx, args: Args, xadd: bool) -> Result<(AddTrimArgs, usize), CmdError> {
    let mut a = AddTrimArgs::default();
    let mut limit_given = false;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = &args[i];
        if xadd && opt == b"*" {
            break;
        } else if (is(opt, "maxlen") || is(opt, "minid")) && more > 0 {
            if a.trim.is_some() {
                return Err(err(
                    "syntax error, MAXLEN and MINID options at the same time are not compatible",
                ));
            }
            a.approx = false;
            if more >= 2 && &args[i + 1] == b"~" {
                a.approx = true;
                i += 1;
            } else if more >= 2 && &args[i + 1] == b"=" {
                i += 1;
            }
            let threshold = &args[i + 1];
            a.trim = Some(if is(opt, "maxlen") {
                let n = int(threshold)?;
                if n < 0 {
                    return Err(err("The MAXLEN argument must be >= 0."));
                }
                TrimBy::MaxLen(n as u64)
            } else {
                TrimBy::MinId(strict_id(threshold)?)
            });
            i += 1;
            a.threshold_at = i;
        } else if is(opt, "limit") && more > 0 {
            a.limit = int(&args[i + 1])?;
            if a.limit < 0 {
                return Err(err("The LIMIT argument must be >= 0."));
            }
            limit_given = true;
            i += 1;
        } else if xadd && is(opt, "nomkstream") {
            a.no_mkstream = true;
        } else if xadd {
            a.id = Some(parse_id(opt, 0, true, true)?);
            break;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if a.limit != 0 && a.trim.is_none() {
        return Err(err(
            "syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && a.trim.is_none() {
        return Err(err(
            "syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    if crate::store::loading() {
        // A replayed trim is exact already (see `rewrite_trim`).
        a.limit = 0;
    } else if limit_given {
        if !a.approx {
            return Err(err(
                "syntax error, LIMIT cannot be used without the special ~ option",
            ));
        }
    } else if a.approx {
        // At most 100 nodes' worth of work, bounded both ways.
        a.limit = ctx.srv.config.stream_node_max_entries.saturating_mul(100);
        if a.limit <= 0 {
            a.limit = 10000;
        }
        a.limit = a.limit.min(1_000_000);
    } else {
        a.limit = 0;
    }
    Ok((a, i))
}

impl AddTrimArgs {
    fn trim_request(&self) -> Option<Trim> {
        self.trim.map(|by| Trim {
            by,
            approx: self.approx,
            limit: self.limit,
        })
    }
}

/// The line an approximate trim propagates as: `=` and the length, or first ID (tombstones
/// included), it left (`streamRewriteApproxSpecifier` + `streamRewriteTrimArgument`).
fn rewrite_trim(line: &mut [Vec<u8>], a: &AddTrimArgs, s: &Stream) {
    line[a.threshold_at - 1] = b"=".to_vec();
    line[a.threshold_at] = match a.trim {
        Some(TrimBy::MaxLen(_)) => s.len().to_string().into_bytes(),
        _ => s.edge_id(true, false).to_string().into_bytes(),
    };
}

fn propagate_line(ctx: &mut Ctx, line: &[Vec<u8>]) {
    let parts: Vec<&[u8]> = line.iter().map(|p| &p[..]).collect();
    ctx.propagate_as(&parts);
}

/// Hands on one op of the running command's effect (`alsoPropagate`).
pub(super) fn propagate_op(ctx: &mut Ctx, line: &[Vec<u8>]) {
    let parts: Vec<&[u8]> = line.iter().map(|p| &p[..]).collect();
    ctx.propagate(&parts);
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [...]
///
/// # Format
/// `XADD key [NOMKSTREAM] [trim] *|id field value [field value ...]` — the new entry's ID, or nil
/// with NOMKSTREAM and no stream.
fn xadd(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (a, idpos) = parse_add_trim(ctx, args, true)?;
    let fields = idpos + 1;
    if args.len() < fields + 2 || (args.len() - fields) % 2 == 1 {
        return Err(err("wrong number of arguments for 'xadd' command"));
    }
    let given = a.id.as_ref().map(|p| (p.id, p.seq_given));
    if given == Some((StreamId::MIN, true)) {
        return Err(err("The ID specified in XADD must be greater than 0-0"));
    }
    let key = &args[1];
    let limits = node_limits(ctx);
    let db = ctx.db();
    if write_stream(db, key)?.is_none() && a.no_mkstream {
        ctx.out.null();
        return Ok(());
    }
    let s = as_stream(
        &mut db
            .lookup_mut_or_insert(key, || Value::Stream(Box::default()))
            .val,
    )?;
    if s.last_id == StreamId::MAX {
        return Err(err(
            "The stream has exhausted the last possible ID, unable to add more items",
        ));
    }
    let fv: Vec<&[u8]> = args.tail(fields).iter().collect();
    let now = (crate::util::clock::wall_us() / 1000) as u64;
    let id = match s.append(&fv, given, now, limits) {
        Ok(id) => id,
        Err(AddError::NotGreater) => {
            return Err(err(
                "The ID specified in XADD is equal or smaller than the target stream top item",
            ))
        }
        Err(AddError::TooLarge) => return Err(err("Elements are too large to be stored")),
    };
    let id_text = id.to_string();
    ctx.out.bulk(id_text.as_bytes());
    ctx.signal_modified(key);
    ctx.notify(STREAM, "xadd", key);
    ctx.srv.dirty += 1;
    let mut line: Option<Vec<Vec<u8>>> = None;
    if let Some(t) = a.trim_request() {
        let s = write_stream(ctx.db(), key)?.expect("just added to");
        let trimmed = s.trim(t);
        if a.approx {
            let l = line.get_or_insert_with(|| args.iter().map(<[u8]>::to_vec).collect());
            rewrite_trim(l, &a, s);
        }
        if trimmed > 0 {
            ctx.notify(STREAM, "xtrim", key);
        }
    }
    if !matches!(given, Some((_, true))) {
        let l = line.get_or_insert_with(|| args.iter().map(<[u8]>::to_vec).collect());
        l[idpos] = id_text.into_bytes();
    }
    if let Some(l) = line {
        propagate_line(ctx, &l);
    }
    Ok(())
}

/// XLEN key
///
/// # Format
/// `XLEN key` — the number of entries (0 for no key).
fn xlen(ctx: &mut Ctx, args: Args) -> CmdResult {
    let n = read_stream(&mut ctx.srv.dbs[ctx.db], &args[1])?.map_or(0, |s| s.len());
    ctx.out.int(n as i64);
    Ok(())
}

/// One entry as XRANGE and XREAD reply it: its ID and its fields and values.
pub(super) fn reply_entry(out: &mut Reply, e: &crate::store::stream::EntryRef) {
    out.array(2);
    out.bulk(e.id.to_string().as_bytes());
    out.array(e.numfields * 2);
    for (f, v) in e.pairs() {
        f.with_bytes(|b| out.bulk(b));
        v.with_bytes(|b| out.bulk(b));
    }
}

/// XRANGE key start end [COUNT count] / XREVRANGE key end start [COUNT count]
///
/// # Format
/// `XRANGE key start end [COUNT count]` — the entries, each `[id, [field, value, ...]]`; a null
/// array for COUNT 0.
fn xrange(ctx: &mut Ctx, args: Args) -> CmdResult {
    let rev = is(&args[0], "xrevrange");
    let (start_arg, end_arg) = if rev {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let (mut start, ex) = interval_id(start_arg, 0)?;
    if ex {
        start = start
            .incr()
            .ok_or_else(|| err("invalid start ID for the interval"))?;
    }
    let (mut end, ex) = interval_id(end_arg, u64::MAX)?;
    if ex {
        end = end
            .decr()
            .ok_or_else(|| err("invalid end ID for the interval"))?;
    }
    let mut count: i64 = -1;
    let mut j = 4;
    while j < args.len() {
        if is(&args[j], "count") && j + 1 < args.len() {
            count = int(&args[j + 1])?.max(0);
            j += 2;
        } else {
            return Err(SYNTAX.into());
        }
    }
    let Some(s) = read_stream(&mut ctx.srv.dbs[ctx.db], &args[1])? else {
        ctx.out.array(0);
        return Ok(());
    };
    if count == 0 {
        ctx.out.null_array();
        return Ok(());
    }
    let limit = if count < 0 {
        usize::MAX
    } else {
        count as usize
    };
    let entries: Vec<_> = if start > end {
        Vec::new()
    } else {
        s.range(start, end, rev).take(limit).collect()
    };
    ctx.out.array(entries.len());
    for e in &entries {
        reply_entry(ctx.out, e);
    }
    Ok(())
}

/// XDEL key id [id ...]
///
/// # Format
/// `XDEL key id [id ...]` — the number of entries deleted.
fn xdel(ctx: &mut Ctx, args: Args) -> CmdResult {
    let key = &args[1];
    let Some(s) = write_stream(ctx.db(), key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let ids = args
        .tail(2)
        .iter()
        .map(strict_id)
        .collect::<Result<Vec<_>, _>>()?;
    let deleted = s.delete_ids(&ids);
    if deleted > 0 {
        ctx.signal_modified(key);
        ctx.notify(STREAM, "xdel", key);
        ctx.srv.dirty += deleted;
    }
    ctx.out.int(deleted as i64);
    Ok(())
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
///
/// # Format
/// `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]` — the number of entries removed.
fn xtrim(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (a, _) = parse_add_trim(ctx, args, false)?;
    let key = &args[1];
    let Some(s) = write_stream(ctx.db(), key)? else {
        ctx.out.int(0);
        return Ok(());
    };
    let deleted = s.trim(a.trim_request().expect("a strategy"));
    if deleted > 0 {
        if a.approx {
            let mut line: Vec<Vec<u8>> = args.iter().map(<[u8]>::to_vec).collect();
            rewrite_trim(&mut line, &a, s);
            propagate_line(ctx, &line);
        }
        ctx.notify(STREAM, "xtrim", key);
        ctx.signal_modified(key);
        ctx.srv.dirty += deleted;
    }
    ctx.out.int(deleted as i64);
    Ok(())
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
///
/// # Format
/// `XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]` — OK.
fn xsetid(ctx: &mut Ctx, args: Args) -> CmdResult {
    let id = strict_id(&args[2])?;
    let (mut entries_added, mut max_deleted) = (-1i64, StreamId::MIN);
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        if is(&args[i], "entriesadded") && more {
            entries_added = int(&args[i + 1])?;
            if entries_added < 0 {
                return Err(err("entries_added must be positive"));
            }
        } else if is(&args[i], "maxdeletedid") && more {
            max_deleted = strict_id(&args[i + 1])?;
            if id < max_deleted {
                return Err(err(
                    "The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
        } else {
            return Err(SYNTAX.into());
        }
        i += 2;
    }
    let key = &args[1];
    let s = write_stream(ctx.db(), key)?.ok_or(NO_SUCH_KEY)?;
    if !s.is_empty() {
        if id < s.last_valid_id() {
            return Err(err(
                "The ID specified in XSETID is smaller than the target stream top item",
            ));
        }
        if entries_added != -1 && s.len() > entries_added as u64 {
            return Err(err(
                "The entries_added specified in XSETID is smaller than the target stream length",
            ));
        }
    }
    s.last_id = id;
    if entries_added != -1 {
        s.entries_added = entries_added as u64;
    }
    if !max_deleted.is_zero() {
        s.max_deleted_entry_id = max_deleted;
    }
    ctx.out.ok();
    // Redis 7.0 signals no modification here (WATCH is not touched), only the event.
    ctx.srv.dirty += 1;
    ctx.notify(STREAM, "xsetid", key);
    Ok(())
}

/// What a blocked XREAD waits for: a stream; a null array on timeout, or at once where it may not
/// block (MULTI).
const XREAD_WAIT: Wait = Wait {
    type_name: "stream",
    on_timeout: TimeoutReply::NullArray,
    denied: TimeoutReply::NullArray,
    gone: None,
};

/// What a blocked XREADGROUP waits for: as XREAD, released with an error when the stream goes.
const XREADGROUP_WAIT: Wait = Wait {
    gone: Some("UNBLOCKED the stream key no longer exists"),
    ..XREAD_WAIT
};

/// How many entries a served blocked XREAD without COUNT replies per stream
/// (`XREAD_BLOCKED_DEFAULT_COUNT`).
const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// The current time in Unix milliseconds (Redis's `mstime()`): delivery and seen times.
pub(super) fn now_ms() -> i64 {
    crate::util::clock::wall_us() / 1000
}

/// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]
/// XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key ... id ...
///
/// # Format
/// `XREAD [COUNT n] [BLOCK ms] STREAMS key ... id ...` — for each stream with entries after its ID,
/// `[key, entries]` (RESP3: a map of key to entries); a null array when none has any and it does
/// not block, or when BLOCK times out.
///
/// `XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...` — with `>`
/// the entries never delivered to the group, which become pending for the consumer (not with
/// NOACK); with an ID, the consumer's pending entries after it (`[id, nil]` for one deleted since).
fn xread(ctx: &mut Ctx, args: Args) -> CmdResult {
    let xreadgroup = args[0].len() == 10;
    let (mut timeout, mut count, mut streams_at) = (None, 0i64, 0);
    let (mut group_at, mut noack) = (None, false);
    let mut i = 1;
    while i < args.len() {
        let more = i + 1 < args.len();
        let o = &args[i];
        if is(o, "block") && more {
            if ctx.srv.script_running.active {
                return Err(err(format!(
                    "{} command is not allowed with BLOCK option from scripts",
                    String::from_utf8_lossy(&args[0])
                )));
            }
            i += 1;
            timeout = Some(super::parse::timeout_ms(&args[i])?);
        } else if is(o, "count") && more {
            i += 1;
            count = int(&args[i])?.max(0);
        } else if is(o, "streams") && more {
            streams_at = i + 1;
            if !(args.len() - streams_at).is_multiple_of(2) {
                return Err(err("Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."));
            }
            break;
        } else if is(o, "group") && i + 2 < args.len() {
            if !xreadgroup {
                return Err(err(
                    "The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            group_at = Some(i + 1);
            i += 2;
        } else if is(o, "noack") {
            if !xreadgroup {
                return Err(err(
                    "The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            noack = true;
        } else {
            return Err(SYNTAX.into());
        }
        i += 1;
    }
    if streams_at == 0 {
        return Err(SYNTAX.into());
    }
    if xreadgroup && group_at.is_none() {
        return Err(err("Missing GROUP option for XREADGROUP"));
    }
    // Its effects propagate as XCLAIM and XGROUP ops, never the read itself.
    ctx.prevent_propagation();
    let reader = group_at.map(|g| Reader {
        group: &args[g],
        consumer: &args[g + 1],
        noack,
    });
    let n = (args.len() - streams_at) / 2;
    // Re-executed for a ready key, the other keys are not looked at (their IDs were checked when
    // it blocked), as Redis serves a blocked reader.
    let served = ctx.srv.blocking.reprocessing();
    let mut ids = Vec::with_capacity(n);
    for k in 0..n {
        let (key, id) = (&args[streams_at + k], &args[streams_at + n + k]);
        if served && !ctx.serving(key) {
            ids.push(StreamId::MAX);
            continue;
        }
        let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)?;
        if let Some(r) = &reader {
            if !s.as_ref().is_some_and(|s| s.groups.contains_key(r.group)) {
                return Err(if served {
                    "NOGROUP the consumer group this client was blocked on no longer exists".into()
                } else {
                    format!(
                        "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                        super::parse::c_text(key),
                        super::parse::c_text(r.group)
                    )
                    .into()
                });
            }
        }
        ids.push(match id {
            b"$" if xreadgroup => {
                return Err(err("The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."))
            }
            b"$" => s.map_or(StreamId::MIN, |s| s.last_id),
            // The maximum ID stands for `>`: the group's last delivered ID, resolved when served.
            b">" if xreadgroup => StreamId::MAX,
            b">" => {
                return Err(err("The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."))
            }
            _ => strict_id(id)?,
        });
    }
    // A re-execution for a ready key serves that key as Redis serves a blocked reader: when the
    // stream's last ID (even of a deleted entry) passed the one waited for.
    let limit = match (count, served) {
        (0, true) => BLOCKED_DEFAULT_COUNT,
        (0, false) => usize::MAX,
        (c, _) => c as usize,
    };
    // (stream, the ID its entries follow, whether it is a consumer's history)
    let mut ready: Vec<(usize, StreamId, bool)> = Vec::new();
    for (k, &gt) in ids.iter().enumerate() {
        let key = &args[streams_at + k];
        if !ctx.serving(key) {
            continue;
        }
        let Some(s) = read_stream(&mut ctx.srv.dbs[ctx.db], key)? else {
            continue;
        };
        let top = if served { s.last_id } else { s.last_valid_id() };
        match &reader {
            Some(_) if gt != StreamId::MAX => ready.push((k, gt, true)),
            Some(r) => {
                let last = s.groups[r.group].last_id;
                if (!s.is_empty() || served) && top > last {
                    ready.push((k, last, false));
                }
            }
            None if (!s.is_empty() || served) && top > gt => ready.push((k, gt, false)),
            None => {}
        }
    }
    if ready.is_empty() {
        if let Some(ms) = timeout {
            let keys: Vec<&[u8]> = (0..n).map(|k| &args[streams_at + k]).collect();
            if reader.is_some() {
                return ctx.block_on(args, &keys, ms, XREADGROUP_WAIT);
            }
            // Block with each `$` as the ID it stood for now.
            let mut owned: Vec<Vec<u8>> = args.iter().map(<[u8]>::to_vec).collect();
            for (k, id) in ids.iter().enumerate() {
                owned[streams_at + n + k] = id.to_string().into_bytes();
            }
            let mut buf = Vec::new();
            let mut spans = Vec::with_capacity(owned.len());
            for a in &owned {
                spans.push((buf.len(), buf.len() + a.len()));
                buf.extend_from_slice(a);
            }
            return ctx.block_on(Args::new(&buf, &spans), &keys, ms, XREAD_WAIT);
        }
        ctx.out.null_array();
        return Ok(());
    }
    let resp3 = ctx.out.resp3;
    if resp3 {
        ctx.out.map(ready.len());
    } else {
        ctx.out.array(ready.len());
    }
    for (k, gt, history) in ready {
        let key = &args[streams_at + k];
        if !resp3 {
            ctx.out.array(2);
        }
        ctx.out.bulk(key);
        let start = gt.incr().unwrap_or(StreamId::MAX);
        match &reader {
            None => {
                let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)?.expect("checked");
                let entries: Vec<_> = s.range(start, StreamId::MAX, false).take(limit).collect();
                ctx.out.array(entries.len());
                for e in &entries {
                    reply_entry(ctx.out, e);
                }
            }
            Some(r) => {
                r.meet_consumer(ctx, key);
                if history {
                    reply_history(ctx, key, r, start, limit);
                } else {
                    deliver(ctx, key, r, start, limit);
                }
                ctx.srv.dirty += 1;
            }
        }
    }
    Ok(())
}

/// XREADGROUP's group, consumer and NOACK.
struct Reader<'a> {
    group: &'a [u8],
    consumer: &'a [u8],
    noack: bool,
}

impl Reader<'_> {
    /// Looks the consumer up (it was seen now), creating it if it is new; a consumer made by a
    /// NOACK read propagates as XGROUP CREATECONSUMER (no XCLAIM will make it on replay).
    fn meet_consumer(&self, ctx: &mut Ctx, key: &[u8]) {
        let now = now_ms();
        let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)
            .ok()
            .flatten()
            .expect("checked");
        let g = s.groups.get_mut(self.group).expect("checked");
        if g.consumer(self.consumer, Some(now)).is_some() {
            return;
        }
        g.create_consumer(self.consumer, now);
        ctx.srv.dirty += 1;
        ctx.notify(STREAM, "xgroup-createconsumer", key);
        if self.noack {
            ctx.propagate(&[b"XGROUP", b"CREATECONSUMER", key, self.group, self.consumer]);
        }
    }
}

/// XREADGROUP with an ID: the consumer's pending entries after `start`, each delivered again.
fn reply_history(ctx: &mut Ctx, key: &[u8], r: &Reader, start: StreamId, limit: usize) {
    let now = now_ms();
    let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)
        .ok()
        .flatten()
        .expect("checked");
    let pending: Vec<StreamId> = s.groups[r.group].consumers[r.consumer]
        .pel
        .range(start..)
        .take(limit)
        .copied()
        .collect();
    ctx.out.array(pending.len());
    for id in pending {
        let found = s.range(id, id, false).next();
        match found {
            Some(e) => {
                reply_entry(ctx.out, &e);
                let nack = s.groups.get_mut(r.group).expect("checked").pel.get_mut(&id);
                let nack = nack.expect("a consumer's pending entry is in its group's PEL");
                nack.delivery_time = now;
                nack.delivery_count += 1;
            }
            None => {
                ctx.out.array(2);
                ctx.out.bulk(id.to_string().as_bytes());
                ctx.out.null_array();
            }
        }
    }
}

/// XREADGROUP with `>`: the entries from `start` on, which the group has now delivered and (unless
/// NOACK) the consumer has pending; each propagates as an XCLAIM that recreates its PEL record,
/// and a NOACK read as the XGROUP SETID of the group's new position (`streamReplyWithRange`).
fn deliver(ctx: &mut Ctx, key: &[u8], r: &Reader, start: StreamId, limit: usize) {
    let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)
        .ok()
        .flatten()
        .expect("checked");
    let mut delivered = Vec::new();
    {
        let entries: Vec<_> = s.range(start, StreamId::MAX, false).take(limit).collect();
        ctx.out.array(entries.len());
        for e in &entries {
            reply_entry(ctx.out, e);
            delivered.push(e.id);
        }
    }
    let now = now_ms();
    let mut moved = false;
    for id in delivered {
        let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)
            .ok()
            .flatten()
            .expect("checked");
        if id > s.groups[r.group].last_id {
            s.advance_group(r.group, id);
            moved = true;
        }
        if r.noack {
            continue;
        }
        let g = s.groups.get_mut(r.group).expect("checked");
        let last_id = g.last_id;
        let nack = g.assign(id, r.consumer, now, |n| {
            n.delivery_time = now;
            n.delivery_count = 1;
        });
        let claim = xclaim_effect(key, r.group, id.to_string().as_bytes(), nack, last_id);
        propagate_op(ctx, &claim);
    }
    if moved && r.noack {
        let s = read_stream(&mut ctx.srv.dbs[ctx.db], key)
            .ok()
            .flatten()
            .expect("checked");
        let setid = setid_effect(key, r.group, &s.groups[r.group]);
        propagate_op(ctx, &setid);
    }
}

/// The XCLAIM that recreates a pending entry on replay, as it is now (`streamPropagateXCLAIM`).
pub(super) fn xclaim_effect(
    key: &[u8],
    group: &[u8],
    id: &[u8],
    nack: &Nack,
    last_id: StreamId,
) -> Vec<Vec<u8>> {
    vec![
        b"XCLAIM".to_vec(),
        key.to_vec(),
        group.to_vec(),
        nack.consumer.to_vec(),
        b"0".to_vec(),
        id.to_vec(),
        b"TIME".to_vec(),
        nack.delivery_time.to_string().into_bytes(),
        b"RETRYCOUNT".to_vec(),
        nack.delivery_count.to_string().into_bytes(),
        b"FORCE".to_vec(),
        b"JUSTID".to_vec(),
        b"LASTID".to_vec(),
        last_id.to_string().into_bytes(),
    ]
}

/// The XGROUP SETID that moves a group to where it is now (`streamPropagateGroupID`).
pub(super) fn setid_effect(key: &[u8], group: &[u8], g: &Group) -> Vec<Vec<u8>> {
    vec![
        b"XGROUP".to_vec(),
        b"SETID".to_vec(),
        key.to_vec(),
        group.to_vec(),
        g.last_id.to_string().into_bytes(),
        b"ENTRIESREAD".to_vec(),
        g.entries_read.to_string().into_bytes(),
    ]
}

/// XREAD's keys: after `STREAMS`, the first half of what follows.
const XREAD_KEYS: KeySpec = KeySpec {
    notes: None,
    flags: RO | ACCESS,
    begin_search: BeginSearch::Keyword {
        keyword: "STREAMS",
        startfrom: 1,
    },
    find_keys: FindKeys::Range {
        lastkey: -1,
        keystep: 1,
        limit: 2,
    },
};

/// XREADGROUP's keys: as XREAD's, its `STREAMS` keyword after `GROUP group consumer`.
const XREADGROUP_KEYS: KeySpec = KeySpec {
    begin_search: BeginSearch::Keyword {
        keyword: "STREAMS",
        startfrom: 4,
    },
    ..XREAD_KEYS
};

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::new("xadd", xadd, -5, WRITE | DENYOOM | FAST).key(1, RW | UPDATE).group(GROUP)
        .key_notes("UPDATE instead of INSERT because of the optional trimming feature")
        .tips(&["nondeterministic_output"])
        .history(&[("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."), ("7.0.0", "Added support for the `<ms>-*` explicit ID form.")])
        .arg_since(&[("nomkstream", "6.2.0"), ("minid", "6.2.0"), ("count", "6.2.0")])
        .doc("Appends a new entry to a stream", "5.0.0", "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
            "key [NOMKSTREAM] [trim:(strategy:(MAXLEN | MINID) [operator:(= | ~)] threshold [LIMIT count:integer])] id_or_auto:(* | id) field value [field value ...]"),
    Command::new("xlen", xlen, 2, READONLY | FAST).key(1, RO).group(GROUP)
        .doc("Return the number of entries in a stream", "5.0.0", "O(1)", "key"),
    Command::new("xrange", xrange, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("6.2.0", "Added exclusive ranges.")])
        .doc("Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0", "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
            "key start end [COUNT count:integer]"),
    Command::new("xrevrange", xrange, -4, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("6.2.0", "Added exclusive ranges.")])
        .doc("Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "5.0.0", "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
            "key end start [COUNT count:integer]"),
    Command::new("xdel", xdel, -3, WRITE | FAST).key(1, RW | DELETE).group(GROUP)
        .doc("Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "5.0.0", "O(1) for each single item to delete in the stream, regardless of the stream size.",
            "key id [id ...]"),
    Command::new("xtrim", xtrim, -4, WRITE).key(1, RW | DELETE).group(GROUP)
        .tips(&["nondeterministic_output"])
        .history(&[("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option.")])
        .arg_since(&[("minid", "6.2.0"), ("count", "6.2.0")])
        .doc("Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
            "key trim:(strategy:(MAXLEN | MINID) [operator:(= | ~)] threshold [LIMIT count:integer])"),
    Command::new("xsetid", xsetid, -3, WRITE | DENYOOM | FAST).key(1, RW | UPDATE).group(GROUP)
        .history(&[("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments.")])
        .arg_since(&[("entries_added", "7.0.0"), ("max_deleted_entry_id", "7.0.0")])
        .doc("An internal command for replicating stream values", "5.0.0", "O(1)",
            "key last-id [ENTRIESADDED entries_added:integer] [MAXDELETEDID max_deleted_entry_id]"),
    Command::new("xread", xread, -4, READONLY | BLOCKING | MOVABLEKEYS).key_spec(XREAD_KEYS).group(GROUP)
        .doc("Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "5.0.0", "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
            "[COUNT count:integer] [BLOCK milliseconds:integer] streams:(STREAMS key [key ...] id [id ...])"),
    Command::new("xreadgroup", xread, -7, WRITE | BLOCKING | MOVABLEKEYS).key_spec(XREADGROUP_KEYS).group(GROUP)
        .doc("Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "5.0.0", "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
            "group_consumer:(GROUP group consumer) [COUNT count:integer] [BLOCK milliseconds:integer] [NOACK] streams:(STREAMS key [key ...] id [id ...])"),
];
