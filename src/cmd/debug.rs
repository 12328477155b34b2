//! DEBUG: the subcommands test suites and client libraries use, as Redis 7.0.15's debug.c answers
//! them: DIGEST and DIGEST-VALUE (Redis's digest algorithm, so equal data sets give equal digests
//! on both servers), POPULATE, PROTOCOL, ERROR, LOG, LEAK, SLEEP, OBJECT, LISTPACK, RELOAD,
//! LOADAOF, SET-ACTIVE-EXPIRE, PAUSE-CRON, REPLYBUFFER, QUICKLIST-PACKED-THRESHOLD,
//! STRINGMATCH-TEST, CHANGE-REPL-ID and HELP. Refused unless `enable-debug-command` allows it.
//!
//! Subcommands are matched as Redis's if-chain matches them (name, then argument count), so a wrong
//! count gets the same unknown-subcommand error; arguments are read as C strings where Redis reads
//! them so (up to a NUL byte).

use std::io::Write as _;

use super::parse::is;
use super::{err, Args, CmdError, CmdResult, Command, Ctx, Guard, ADMIN, LOADING, NOSCRIPT, STALE};
use crate::resp::reply::{NOT_INT, NO_SUCH_KEY};
use crate::store::{Str, StreamId, Value, NO_EXPIRE};
use crate::util::{fmt_g17, fmt_listpack_score, rand_u64};
use crate::warning;

const GROUP: &str = "server";

/// The bytes C sees of an argument Redis reads as a C string: up to the first NUL.
fn c_str(arg: &[u8]) -> &[u8] {
    arg.split(|&b| b == 0).next().unwrap_or(arg)
}

/// C's `atoi` (through `strtol`, saturating, then cut to an `int`, as glibc does): Redis reads the
/// 0|1 switches with it, so `1x` is 1 and anything unparsable 0.
fn atoi(arg: &[u8]) -> i32 {
    let s = c_str(arg);
    let mut i = s
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .unwrap_or(s.len());
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut v: i64 = 0;
    for &c in s[i..].iter().take_while(|c| c.is_ascii_digit()) {
        let d = i64::from(c - b'0');
        v = if neg {
            v.saturating_mul(10).saturating_sub(d)
        } else {
            v.saturating_mul(10).saturating_add(d)
        };
    }
    v as i32
}

/// C's `strtod` on the argument (its longest numeric prefix, 0 if none), as DEBUG SLEEP reads it.
fn strtod(arg: &[u8]) -> f64 {
    let Ok(s) = std::ffi::CString::new(c_str(arg)) else {
        return 0.0;
    };
    // SAFETY: `s` is NUL-terminated; a null end pointer is allowed.
    unsafe { libc::strtod(s.as_ptr(), std::ptr::null_mut()) }
}

/// Redis's `memtoull`: digits and an optional unit (b, k, kb, m, mb, g, gb, any case); `None` for
/// anything else.
fn memtoull(arg: &[u8]) -> Option<u64> {
    let s = c_str(arg);
    if s.first() == Some(&b'-') {
        return None;
    }
    let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let mul = crate::config::memory_unit(&s[digits..].to_ascii_lowercase())?;
    if digits >= 128 {
        return None;
    }
    // strtoull saturates on overflow (Redis does not check), and the product wraps as C's does.
    let val = s[..digits].iter().fold(0u64, |v, &c| {
        v.checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
            .unwrap_or(u64::MAX)
    });
    Some(val.wrapping_mul(mul))
}

/// Redis's `addReplySubcommandSyntaxError`: the subcommand as C reads it, at most 128 bytes.
fn unknown_subcommand(args: Args) -> CmdError {
    let name = c_str(&args[1]);
    let name = String::from_utf8_lossy(&name[..name.len().min(128)]).into_owned();
    err(format!(
        "unknown subcommand or wrong number of arguments for '{name}'. Try DEBUG HELP."
    ))
}

static GUARD: Guard = Guard {
    command: "DEBUG",
    directive: "enable-debug-command",
    setting: |c| c.enable_debug_command,
};

/// DEBUG subcommand [argument ...]
///
/// # Format
/// `DEBUG DIGEST`, `DEBUG DIGEST-VALUE key ...`, `DEBUG POPULATE count [prefix] [size]`, `DEBUG
/// PROTOCOL type`, `DEBUG ERROR message`, `DEBUG LOG message`, `DEBUG SLEEP seconds`, `DEBUG OBJECT
/// key`, `DEBUG LISTPACK key`, `DEBUG RELOAD [NOSAVE] [MERGE]`, `DEBUG LOADAOF`, `DEBUG
/// SET-ACTIVE-EXPIRE 0|1`, `DEBUG PAUSE-CRON 0|1`, `DEBUG REPLYBUFFER PEAK-RESET-TIME|RESIZING
/// value`, `DEBUG QUICKLIST-PACKED-THRESHOLD size`, `DEBUG STRINGMATCH-TEST`, `DEBUG
/// CHANGE-REPL-ID`, `DEBUG LEAK string`, `DEBUG HELP`. Refused by the gate unless
/// `enable-debug-command` allows it, as in Redis 7.
fn debug(ctx: &mut Ctx, args: Args) -> CmdResult {
    let sub = c_str(&args[1]).to_ascii_lowercase();
    match (&sub[..], args.len()) {
        (b"help", 2) => ctx.out.help("DEBUG", HELP),
        (b"log", 3) => {
            // Redis's serverLog cuts a message at 1023 bytes.
            let line = [b"DEBUG LOG: ", c_str(&args[2])].concat();
            warning!("{}", String::from_utf8_lossy(&line[..line.len().min(1023)]));
            ctx.out.ok();
        }
        (b"leak", 3) => {
            std::mem::forget(args[2].to_vec());
            ctx.out.ok();
        }
        (b"reload", _) => reload(ctx, args)?,
        (b"loadaof", _) => loadaof(ctx)?,
        (b"object", 3) => object(ctx, &args[2])?,
        (b"listpack", 3) => listpack(ctx, &args[2])?,
        (b"populate", 3..=5) => populate(ctx, args)?,
        (b"digest", 2) => {
            let d = dataset_digest(ctx.srv);
            ctx.out.simple(&hex(&d));
        }
        (b"digest-value", _) => {
            // The stored value even if logically expired, as Redis (no lookup, no stats).
            ctx.out.array(args.len() - 2);
            for key in args.tail(2).iter() {
                let mut d = [0u8; 20];
                let db = &ctx.srv.dbs[ctx.db];
                if let Some(slot) = db.dict.find(key) {
                    let e = db.dict.value_at(slot);
                    value_digest(&mut d, &e.val, e.has_ttl());
                }
                ctx.out.simple(&hex(&d));
            }
        }
        (b"protocol", 3) => protocol(ctx, c_str(&args[2]))?,
        (b"sleep", 3) => {
            // As Redis: microseconds truncated toward zero; a negative time does not sleep.
            let us = (strtod(&args[2]) * 1_000_000.0) as i64;
            if us > 0 {
                std::thread::sleep(std::time::Duration::from_micros(us as u64));
            }
            ctx.out.ok();
        }
        (b"set-active-expire", 3) => {
            ctx.srv.active_expire_enabled = atoi(&args[2]) != 0;
            ctx.out.ok();
        }
        (b"quicklist-packed-threshold", 3) => {
            let set = memtoull(&args[2]).is_some_and(crate::store::list::set_packed_threshold);
            if !set {
                return Err(
                    "ERR argument must be a memory value bigger than 1 and smaller than 4gb".into(),
                );
            }
            ctx.out.ok();
        }
        (b"error", 3) => {
            // Sent as is, not as an error of ours: no `ERR` code is added, and Redis does not
            // count it in the error stats.
            let out = &mut ctx.out.buf;
            out.push(b'-');
            out.extend(args[2].iter().map(|&c| match c {
                b'\r' | b'\n' => b' ',
                c => c,
            }));
            out.extend_from_slice(b"\r\n");
        }
        (b"change-repl-id", 2) => {
            warning!("Changing replication IDs after receiving DEBUG change-repl-id");
            // The secondary ID stays cleared: INFO shows master_replid2 as zeros, offset -1.
            ctx.srv.replid = crate::util::random_hex40();
            ctx.out.ok();
        }
        (b"stringmatch-test", 2) => {
            stringmatch_fuzz();
            ctx.out
                .simple("Apparently Redis did not crash: test passed");
        }
        (b"pause-cron", 3) => {
            ctx.srv.debug.pause_cron = atoi(&args[2]) != 0;
            ctx.out.ok();
        }
        (b"replybuffer", 4) => {
            let s = &mut ctx.srv.debug;
            if is(&args[2], "peak-reset-time") {
                s.reply_buffer_peak_reset_ms = if is(&args[3], "never") {
                    -1
                } else if is(&args[3], "reset") {
                    crate::server::DebugSettings::default().reply_buffer_peak_reset_ms
                } else {
                    crate::util::parse_i64(&args[3]).ok_or(NOT_INT)?
                };
            } else if is(&args[2], "resizing") {
                s.reply_buffer_resizing = atoi(&args[3]) != 0;
            } else {
                return Err(unknown_subcommand(args));
            }
            ctx.out.ok();
        }
        _ => return Err(unknown_subcommand(args)),
    }
    Ok(())
}

/// DEBUG RELOAD [NOSAVE] [MERGE]: saves the snapshot (unless NOSAVE), empties the data set and
/// loads the file back.
fn reload(ctx: &mut Ctx, args: Args) -> CmdResult {
    let mut save = true;
    for a in args.tail(2).iter() {
        let a = c_str(a);
        if is(a, "nosave") {
            save = false;
        } else if is(a, "merge") {
            // Lets the file's keys replace existing ones: without NOFLUSH there are none.
        } else if is(a, "noflush") {
            // Loading on top of the data set is not built: refused rather than half done.
            return Err("ERR DEBUG RELOAD NOFLUSH is not supported".into());
        } else {
            return Err(
                "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.".into(),
            );
        }
    }
    if save && crate::persist::save(&mut ctx.srv.persistence()).is_err() {
        return Err("ERR".into());
    }
    // As Redis's emptyData: WATCHers of existing keys fail, blocked clients look again.
    ctx.signal_flushed_all();
    match crate::persist::load_file(&mut ctx.srv.persistence()) {
        Ok(Some(_)) => {
            warning!("DB reloaded by DEBUG RELOAD");
            ctx.out.ok();
            Ok(())
        }
        // Redis empties the data set before loading: a missing or bad file leaves it empty.
        Ok(None) | Err(_) => {
            for db in ctx.srv.dbs.iter_mut() {
                db.clear();
            }
            ctx.srv.scripting.flush_libraries();
            Err("ERR Error trying to load the RDB dump".into())
        }
    }
}

/// DEBUG LOADAOF: the AOF on disk replaces the data set (`server::persistence::reload_aof`). As Redis,
/// the server exits if it cannot be loaded (no AOF, a missing or corrupt file): the data set is
/// gone by then.
fn loadaof(ctx: &mut Ctx) -> CmdResult {
    ctx.signal_flushed_all();
    if let Err(e) = crate::server::persistence::reload_aof(ctx.srv) {
        warning!("DEBUG LOADAOF failed: {e}. Exiting.");
        std::process::exit(1);
    }
    // What was loaded is neither a change to save nor to log again.
    ctx.srv.dirty = 0;
    warning!("Append Only File loaded by DEBUG LOADAOF");
    ctx.out.ok();
    Ok(())
}

/// DEBUG OBJECT key: the stored value, even if logically expired (Redis reads the table directly).
fn object(ctx: &mut Ctx, key: &[u8]) -> CmdResult {
    let db = &ctx.srv.dbs[ctx.db];
    let Some(slot) = db.dict.find(key) else {
        return Err(NO_SUCH_KEY.into());
    };
    let e = db.dict.value_at(slot);
    let line = format!(
        "Value at:{:p} refcount:1 encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        e as *const _,
        e.val.encoding(),
        e.val.heap_size().max(1),
        e.lru & 0xFF_FFFF,
        crate::store::idle_seconds(e.lru)
    );
    ctx.out.simple(&line);
    Ok(())
}

/// DEBUG LISTPACK key: prints the value's listpack to standard output in Redis's `lpRepr` format.
/// Ours are not kept as listpacks: the one Redis would hold is built from the value (as DUMP
/// writes it), so bytes and offsets are Redis's and addresses are that copy's.
fn listpack(ctx: &mut Ctx, key: &[u8]) -> CmdResult {
    // Looked up as OBJECT does: expired keys go, hits and misses count, the access time stays.
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(slot) = db.find_live(key) else {
        db.stats.misses += 1;
        return Err(NO_SUCH_KEY.into());
    };
    db.stats.hits += 1;
    let Some(lp) = crate::persist::rdb::as_listpack(&db.dict.value_at(slot).val) else {
        return Err("ERR Not a listpack encoded object.".into());
    };
    let repr = lp_repr(&lp);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(repr.as_bytes());
    let _ = out.flush();
    ctx.out.simple("Listpack structure printed on stdout");
    Ok(())
}

/// Redis's `lpRepr` of a listpack.
fn lp_repr(lp: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let mut entries = Vec::new();
    let mut p = 6;
    while lp[p] != 0xFF {
        let b = lp[p];
        // (header bytes, header + payload bytes, the value as text)
        let num = |n: usize| {
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(&lp[p + 1..p + 1 + n]);
            // Sign-extend the n little-endian bytes.
            let shift = 64 - 8 * n as u32;
            ((i64::from_le_bytes(v) << shift) >> shift).to_string()
        };
        let (hdr, size, text): (usize, usize, Vec<u8>) = match b {
            _ if b & 0x80 == 0 => (1, 1, (b & 0x7F).to_string().into_bytes()),
            _ if b & 0xC0 == 0x80 => {
                let n = (b & 0x3F) as usize;
                (1, 1 + n, lp[p + 1..p + 1 + n].to_vec())
            }
            _ if b & 0xE0 == 0xC0 => {
                let u = (i64::from(b & 0x1F) << 8) | i64::from(lp[p + 1]);
                let v = if u >= 1 << 12 { u - (1 << 13) } else { u };
                (1, 2, v.to_string().into_bytes())
            }
            _ if b & 0xF0 == 0xE0 => {
                let n = (((b & 0x0F) as usize) << 8) | lp[p + 1] as usize;
                (2, 2 + n, lp[p + 2..p + 2 + n].to_vec())
            }
            0xF1 => (1, 3, num(2).into_bytes()),
            0xF2 => (1, 4, num(3).into_bytes()),
            0xF3 => (1, 5, num(4).into_bytes()),
            0xF4 => (1, 9, num(8).into_bytes()),
            _ => {
                let n = u32::from_le_bytes(lp[p + 1..p + 5].try_into().expect("4 bytes")) as usize;
                (5, 5 + n, lp[p + 5..p + 5 + n].to_vec())
            }
        };
        let back = match size {
            0..=127 => 1,
            128..=16382 => 2,
            16383..=2097150 => 3,
            2097151..=268435454 => 4,
            _ => 5,
        };
        entries.push((p, hdr, size, back, text));
        p += size + back;
    }
    let _ = writeln!(
        o,
        "{{total bytes {}}} {{num entries {}}}",
        lp.len(),
        entries.len()
    );
    for (index, (at, hdr, size, back, text)) in entries.into_iter().enumerate() {
        let _ = write!(
            o,
            "{{\n\taddr: 0x{:08x},\n\tindex: {index:2},\n\toffset: {at},\n\thdr+entrylen+backlen: {:2},\n\thdrlen: {hdr:3},\n\tbacklen: {back:2},\n\tpayload: {}\n\tbytes: ",
            lp[at..].as_ptr() as usize,
            size + back,
            size - hdr
        );
        for byte in &lp[at..at + size + back] {
            let _ = write!(o, "{byte:02x}|");
        }
        o.push_str("\n\t[str]");
        if text.len() > 40 {
            o.push_str(&String::from_utf8_lossy(&text[..40]));
            o.push_str("...");
        } else {
            o.push_str(&String::from_utf8_lossy(&text));
        }
        o.push_str("\n}\n");
    }
    o.push_str("{end}\n\n");
    o
}

/// DEBUG POPULATE count [prefix] [size]: string keys `prefix:N` (default `key:N`) holding
/// `value:N` (cut or padded with zero bytes to `size` when given), N from 0; existing keys are
/// left alone. Not counted as changes (Redis does not propagate them).
fn populate(ctx: &mut Ctx, args: Args) -> CmdResult {
    const NOT_POSITIVE: &str = "ERR value is out of range, must be positive";
    let positive = |a: &[u8]| match crate::util::parse_i64(a) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err(CmdError::from(NOT_POSITIVE)),
    };
    let count = positive(&args[2])?;
    let size = if args.len() == 5 {
        positive(&args[4])? as usize
    } else {
        0
    };
    let prefix: &[u8] = if args.len() == 3 {
        b"key"
    } else {
        c_str(&args[3])
    };
    let mut key = Vec::new();
    for j in 0..count {
        // Redis formats the name into 128 bytes: a longer one is cut at 127.
        key.clear();
        key.extend_from_slice(prefix);
        key.push(b':');
        key.extend_from_slice(j.to_string().as_bytes());
        key.truncate(127);
        if ctx.db().lookup_mut(&key).is_some() {
            continue;
        }
        let text = format!("value:{j}").into_bytes();
        let data = if size == 0 {
            text
        } else {
            let mut d = vec![0u8; size];
            let n = size.min(text.len());
            d[..n].copy_from_slice(&text[..n]);
            d
        };
        let v = Value::Str(Str::plain(&data));
        ctx.db().set(&key, v, Some(NO_EXPIRE));
        ctx.signal_modified(&key);
    }
    ctx.out.ok();
    Ok(())
}

/// DEBUG PROTOCOL type: a fixed value of each reply type, as Redis's.
fn protocol(ctx: &mut Ctx, name: &[u8]) -> CmdResult {
    let out = &mut *ctx.out;
    match &name.to_ascii_lowercase()[..] {
        b"string" => out.bulk(b"Hello World"),
        b"integer" => out.int(12345),
        // Redis's test value, which only looks like pi.
        #[allow(clippy::approx_constant)]
        b"double" => out.double(3.141),
        b"bignum" => out.big_number(b"1234567999999999999999999999999999999"),
        b"null" => out.null(),
        b"array" => {
            out.array(3);
            (0..3).for_each(|j| out.int(j));
        }
        b"set" => {
            out.set(3);
            (0..3).for_each(|j| out.int(j));
        }
        b"map" => {
            out.map(3);
            for j in 0..3 {
                out.int(j);
                out.bool(j == 1);
            }
        }
        b"attrib" => {
            // An attribute (RESP3 only) precedes a real reply.
            if out.resp3 {
                out.buf.extend_from_slice(b"|1\r\n");
                out.bulk(b"key-popularity");
                out.array(2);
                out.bulk(b"key:123");
                out.int(90);
            }
            out.bulk(b"Some real reply following the attribute");
        }
        b"push" => {
            if !out.resp3 {
                return Err("ERR RESP2 is not supported by this command".into());
            }
            // A push is out of band (delivered even under CLIENT REPLY OFF): a real reply
            // follows for the client waiting on one.
            out.pushed(|o| {
                o.push(2);
                o.bulk(b"server-cpu-usage");
                o.int(42);
            });
            out.bulk(b"Some real reply following the push reply");
        }
        b"true" => out.bool(true),
        b"false" => out.bool(false),
        b"verbatim" => out.verbatim(b"This is a verbatim\nstring"),
        _ => return Err("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false".into()),
    }
    Ok(())
}

/// Redis's `stringmatchlen_fuzz_test`: ten million random patterns against random strings (up to
/// 31 bytes of 7-bit characters each), which must not crash the matcher.
fn stringmatch_fuzz() {
    let mut matches = 0u64;
    let (mut pat, mut s) = ([0u8; 32], [0u8; 32]);
    for _ in 0..10_000_000 {
        let r = rand_u64();
        let (slen, plen) = ((r % 32) as usize, ((r >> 8) % 32) as usize);
        let mut bits = rand_u64();
        for (i, c) in s[..slen]
            .iter_mut()
            .chain(pat[..plen].iter_mut())
            .enumerate()
        {
            if i % 9 == 8 {
                bits = rand_u64();
            }
            *c = (bits & 0x7F) as u8;
            bits >>= 7;
        }
        matches += u64::from(crate::store::glob::matches(&pat[..plen], &s[..slen], false));
    }
    // Redis returns the count to no one; it only keeps the calls from being optimized away.
    std::hint::black_box(matches);
}

// ---------------------------------------------------------------------------------------------
// DEBUG DIGEST: Redis's debug.c digest, byte for byte. Unordered collections (the keys of a
// database, set members, hash fields, sorted set members) are XORed together so their order does
// not matter; ordered content (a list, and the parts of one element) is chained through SHA1 so it
// does.

fn sha1(data: &[u8]) -> [u8; 20] {
    sha1_smol::Sha1::from(data).digest().bytes()
}

/// Redis's `xorDigest`: `digest ^= SHA1(data)`.
fn xor_digest(digest: &mut [u8; 20], data: &[u8]) {
    for (d, h) in digest.iter_mut().zip(sha1(data)) {
        *d ^= h;
    }
}

/// Redis's `mixDigest`: `digest = SHA1(digest ^ SHA1(data))`.
fn mix_digest(digest: &mut [u8; 20], data: &[u8]) {
    xor_digest(digest, data);
    *digest = sha1(digest);
}

/// Redis's `xorObjectDigest`: the value's type (as Redis numbers them), its content as its
/// decoded strings (integers in decimal, scores as `%.17g`), and a mark if the key has a TTL (not
/// the TTL itself).
fn value_digest(digest: &mut [u8; 20], v: &Value, expires: bool) {
    let type_id: u32 = match v {
        Value::Str(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    };
    mix_digest(digest, &type_id.to_be_bytes());
    match v {
        Value::Str(s) => s.with_bytes(|b| mix_digest(digest, b)),
        Value::List(l) => l.items.iter().for_each(|i| mix_digest(digest, i)),
        Value::Set(s) => s
            .iter()
            .for_each(|m| m.with_bytes(|b| xor_digest(digest, b))),
        Value::ZSet(z) => {
            for (_, member, &score) in z.dict().iter() {
                // A listpack holds the score as its text, which Redis reads back.
                let score = if z.is_listpack() {
                    fmt_listpack_score(score).parse().unwrap_or(score)
                } else {
                    score
                };
                let mut ele = [0u8; 20];
                mix_digest(&mut ele, member);
                mix_digest(&mut ele, fmt_g17(score).as_bytes());
                xor_digest(digest, &ele);
            }
        }
        Value::Hash(h) => {
            for (field, value) in h.iter() {
                let mut ele = [0u8; 20];
                mix_digest(&mut ele, field);
                mix_digest(&mut ele, value);
                xor_digest(digest, &ele);
            }
        }
        Value::Stream(s) => {
            for e in s.range(StreamId::MIN, StreamId::MAX, false) {
                mix_digest(digest, format!("{}.{}", e.id.ms, e.id.seq).as_bytes());
                for (f, v) in e.pairs() {
                    f.with_bytes(|b| mix_digest(digest, b));
                    v.with_bytes(|b| mix_digest(digest, b));
                }
            }
        }
    }
    if expires {
        xor_digest(digest, b"!!expire!!");
    }
}

/// Redis's `computeDatasetDigest`: every stored key (logically expired ones too) of every
/// non-empty database, each database marked by its number; all zeros when there are no keys.
fn dataset_digest(srv: &crate::server::State) -> [u8; 20] {
    let mut fin = [0u8; 20];
    for (j, db) in srv.dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        mix_digest(&mut fin, &(j as u32).to_be_bytes());
        for (_, key, e) in db.dict.iter() {
            let mut d = [0u8; 20];
            mix_digest(&mut d, key);
            value_digest(&mut d, &e.val, e.has_ttl());
            xor_digest(&mut fin, &d);
        }
    }
    fin
}

fn hex(d: &[u8; 20]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Redis 7.0.15's DEBUG HELP, as Debian's jemalloc build lists it (MALLCTL included). Every
/// subcommand is listed; those our server has no equivalent for answer the unknown-subcommand
/// error (see docs/commands/DEBUG.md).
const HELP: &[&str] = &[
    "AOF-FLUSH-SLEEP <microsec>",
    "    Server will sleep before flushing the AOF, this is used for testing.",
    "ASSERT",
    "    Crash by assertion failed.",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "CRASH-AND-RECOVER [<milliseconds>]",
    "    Hard crash and restart after a <milliseconds> delay (default 0).",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LEAK <string>",
    "    Create a memory leak of the input string.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "HTSTATS <dbid>",
    "    Return hash table statistics of the specified Redis database.",
    "HTSTATS-KEY <key>",
    "    Like HTSTATS but for the hash table stored at <key>'s value.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "REPLICATE <string>",
    "    Replicates the provided string to replicas, allowing data divergence.",
    "MALLCTL <key> [<val>]",
    "    Get or set a malloc tuning integer.",
    "MALLCTL-STR <key> [<val>]",
    "    Get or set a malloc tuning string.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "DROP-CLUSTER-PACKET-FILTER <packet-type>",
    "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
    "OOM",
    "    Crash the server simulating an out-of-memory error.",
    "PANIC",
    "    Crash the server simulating a panic.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "RESTART [<milliseconds>]",
    "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
    "SDSLEN <key>",
    "    Show low level SDS string info representing `key` and value.",
    "SEGFAULT",
    "    Crash the server with sigsegv.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "STRUCTSIZE",
    "    Return the size of different Redis core C structures.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]",
    "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "CLIENT-EVICTION",
    "    Show low level client eviction pools info (maxmemory-clients).",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "CLUSTERLINK KILL <to|from|all> <node-id>",
    "    Kills the link based on the direction to/from (both) with the provided node.",
];

pub const COMMANDS: &[Command] =
    &[
        Command::new("debug", debug, -2, ADMIN | NOSCRIPT | LOADING | STALE)
            .syscmd()
            .guarded(&GUARD)
            .group(GROUP)
            .doc(
                "A container for debugging commands",
                "1.0.0",
                "Depends on subcommand.",
                "subcommand [argument ...]",
            ),
    ];
