//! HyperLogLog (Redis's hyperloglog.c): PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.
//!
//! An HLL is a plain string in Redis's own format, so GET/SET/DUMP/RESTORE carry it between the two
//! servers: a 16-byte header (`HYLL`, the encoding byte, 3 unused bytes, the cached cardinality as
//! 8 little-endian bytes whose top bit marks it stale), then 16384 six-bit registers, either dense
//! (12288 bytes, packed from each byte's low bits up) or sparse (ZERO / XZERO / VAL run-length
//! opcodes). Every transformation below follows Redis's byte for byte, as the sparse layout depends
//! on the order of updates and GET must show the same bytes.

use super::keyspec::{ACCESS, INSERT, RO, RW};
use super::parse::{is, text};
use super::string::{as_str, as_str_mut};
use super::{
    Args, CmdError, CmdResult, Command, Ctx, ADMIN, DENYOOM, FAST, MAY_REPLICATE, READONLY, WRITE,
};
use crate::server::notify::STRING;
use crate::store::{Db, Str, Value, NO_EXPIRE};

const GROUP: &str = "hyperloglog";

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const CORRUPTED: &str = "INVALIDOBJ Corrupted HLL object detected";

const HDR: usize = 16;
/// Index of the cached cardinality's last byte, whose top bit marks the cache stale.
const CARD_LAST: usize = HDR - 1;
const P: u32 = 14;
const REGISTERS: usize = 1 << P;
/// Hash bits left once the register index is taken.
const Q: usize = 64 - P as usize;
const DENSE_SIZE: usize = HDR + (REGISTERS * 6).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;
/// 0.5 / ln(2).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// A corrupted sparse representation.
struct Corrupted;

impl From<Corrupted> for CmdError {
    fn from(_: Corrupted) -> Self {
        CORRUPTED.into()
    }
}

/// MurmurHash64A as Redis has it (little-endian words whatever the platform).
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Redis's `hllPatLen`: the register an element maps to, and the position (from 1) of the first
/// set bit in the hash's remaining 50 bits (51 when they are all zero).
fn pat_len(ele: &[u8]) -> (usize, u8) {
    let hash = murmur64a(ele, 0xadc8_3b19);
    let index = (hash as usize) & (REGISTERS - 1);
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// ---- Dense registers: `regs` is the data after the header. The last register's second byte lies
// past the end (Redis reads the string's terminating NUL there), so it reads as zero.

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let (byte, fb) = (i * 6 / 8, (i * 6) & 7);
    let b0 = u32::from(regs[byte]);
    let b1 = u32::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

fn dense_put(regs: &mut [u8], i: usize, val: u8) {
    let (byte, fb) = (i * 6 / 8, (i * 6) & 7);
    let v = u32::from(val);
    regs[byte] = (u32::from(regs[byte]) & !(63 << fb) | (v << fb)) as u8;
    if let Some(b1) = regs.get_mut(byte + 1) {
        *b1 = (u32::from(*b1) & !(63 >> (8 - fb)) | (v >> (8 - fb))) as u8;
    }
}

/// Raises register `i` to `count`; whether it changed (Redis's `hllDenseSet`).
fn dense_raise(regs: &mut [u8], i: usize, count: u8) -> bool {
    let raise = count > dense_get(regs, i);
    if raise {
        dense_put(regs, i, count);
    }
    raise
}

// ---- Sparse opcodes. Reads past the end see zero, as Redis reads the terminating NUL when a
// string ends in the first byte of an XZERO.

fn byte(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn is_zero(op: u8) -> bool {
    op & 0xc0 == 0
}

fn is_xzero(op: u8) -> bool {
    op & 0xc0 == 0x40
}

fn is_val(op: u8) -> bool {
    op & 0x80 != 0
}

fn val_value(op: u8) -> u8 {
    ((op >> 2) & 0x1f) + 1
}

fn val_len(op: u8) -> usize {
    usize::from(op & 3) + 1
}

fn val_op(value: u8, len: usize) -> u8 {
    0x80 | ((value - 1) << 2) | (len as u8 - 1)
}

/// The opcode at `p`: (registers it covers, its value, its size in bytes).
fn opcode(s: &[u8], p: usize) -> (usize, u8, usize) {
    let op = s[p];
    if is_zero(op) {
        (usize::from(op & 0x3f) + 1, 0, 1)
    } else if is_xzero(op) {
        (
            (usize::from(op & 0x3f) << 8 | usize::from(byte(s, p + 1))) + 1,
            0,
            2,
        )
    } else {
        (val_len(op), val_value(op), 1)
    }
}

/// Writes a ZERO or XZERO run of `len` registers at `n`; the bytes written.
fn put_zeros(seq: &mut [u8], n: usize, len: usize) -> usize {
    if len > ZERO_MAX_LEN {
        let l = len - 1;
        seq[n] = (l >> 8) as u8 | 0x40;
        seq[n + 1] = l as u8;
        2
    } else {
        seq[n] = (len - 1) as u8;
        1
    }
}

/// Calls `f(first register, run length, value)` for each run of the sparse data `ops` (zero runs
/// included), stopping before a VAL run that would pass the last register when `stop_at_overflow`
/// (as Redis's conversion and merge do, while its histogram counts everything); the registers
/// covered (past `REGISTERS` after such a stop).
fn for_each_run(ops: &[u8], stop_at_overflow: bool, mut f: impl FnMut(usize, usize, u8)) -> usize {
    let (mut p, mut idx) = (0, 0);
    while p < ops.len() {
        let (run, val, size) = opcode(ops, p);
        if val > 0 && stop_at_overflow && idx + run > REGISTERS {
            // Corrupted even when the registers before it add up (Redis 7.0.15 says so too).
            return idx + run;
        }
        f(idx, run, val);
        idx += run;
        p += size;
    }
    idx
}

/// An empty HLL: sparse, one XZERO covering every register.
fn new_hll() -> Vec<u8> {
    let mut s = b"HYLL".to_vec();
    s.extend_from_slice(&[SPARSE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(XZERO_MAX_LEN);
        let mut op = [0u8; 2];
        put_zeros(&mut op, 0, run);
        s.extend_from_slice(&op);
        left -= run;
    }
    s
}

/// Redis's `isHLLObjectOrReply` on a string value: its bytes if they look like an HLL.
fn hll_bytes(s: &Str) -> Result<&[u8], CmdError> {
    match s.bytes() {
        Some(data) if looks_like_hll(data) => Ok(data),
        _ => Err(NOT_HLL.into()),
    }
}

fn looks_like_hll(d: &[u8]) -> bool {
    d.len() >= HDR
        && d.starts_with(b"HYLL")
        && d[4] <= SPARSE
        && (d[4] != DENSE || d.len() == DENSE_SIZE)
}

/// The HLL at a looked-up entry for writing: checked, then made `raw` as Redis's
/// `dbUnshareStringValue` does (even when nothing is then written).
fn hll_mut(e: &mut crate::store::Entry) -> Result<&mut Vec<u8>, CmdError> {
    let s = as_str_mut(e)?;
    hll_bytes(s)?;
    Ok(s.make_raw())
}

/// The HLL at `key` for writing (`hll_mut`), created empty if missing; with whether it was.
fn hll_for_write<'d>(db: &'d mut Db, key: &[u8]) -> Result<(&'d mut Vec<u8>, bool), CmdError> {
    let created = db.lookup_mut(key).is_none();
    if created {
        let data = new_hll();
        db.set(
            key,
            Value::Str(Str::Bytes { data, raw: true }),
            Some(NO_EXPIRE),
        );
    }
    Ok((hll_mut(db.lookup_mut(key).expect("present"))?, created))
}

/// Redis's `hllSparseToDense`: no-op on a dense HLL; the header (cached cardinality included) is
/// kept.
fn to_dense(s: &mut Vec<u8>) -> Result<(), Corrupted> {
    if s[4] == DENSE {
        return Ok(());
    }
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR].copy_from_slice(&s[..HDR]);
    dense[4] = DENSE;
    let regs = &mut dense[HDR..];
    let covered = for_each_run(&s[HDR..], true, |first, run, val| {
        if val > 0 {
            (first..first + run).for_each(|i| dense_put(regs, i, val));
        }
    });
    if covered != REGISTERS {
        return Err(Corrupted);
    }
    *s = dense;
    Ok(())
}

/// Redis's `hllSparseSet`: raises register `index` to `count` in a sparse HLL, splitting the opcode
/// that covers it and merging equal neighbouring VALs; promotes the HLL to dense when the value
/// does not fit a VAL or the string would outgrow `max_bytes`. Whether the register changed.
fn sparse_set(s: &mut Vec<u8>, index: usize, count: u8, max_bytes: i64) -> Result<bool, Corrupted> {
    if count > VAL_MAX_VALUE {
        return promote(s, index, count);
    }
    // Room for the worst split (XZERO into XZERO-VAL-XZERO) past the end, which also stands for the
    // NUL terminator Redis may read or overwrite there; cut back to `end` before returning.
    let len = s.len();
    s.resize(len + 4, 0);
    let mut end = len;

    // Step 1: the opcode covering `index`.
    let (mut p, mut first, mut span) = (HDR, 0usize, 0usize);
    let mut prev = None;
    while p < end {
        let (run, _, size) = opcode(s, p);
        span = run;
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += size;
        first += span;
    }
    if span == 0 || p >= end {
        s.truncate(len);
        return Err(Corrupted);
    }
    let op = s[p];
    let oldlen = if is_xzero(op) { 2 } else { 1 };
    let next = Some(p + oldlen).filter(|&n| n < end);

    // Step 2: the trivial cases, updated in place.
    let in_place = if is_val(op) {
        if val_value(op) >= count {
            s.truncate(len);
            return Ok(false);
        }
        span == 1
    } else {
        is_zero(op) && span == 1
    };
    if in_place {
        s[p] = val_op(count, 1);
    } else {
        // The general case: the opcode becomes up to three.
        let mut seq = [0u8; 5];
        let mut n = 0;
        let last = first + span - 1;
        if is_val(op) {
            let cur = val_value(op);
            if index != first {
                seq[n] = val_op(cur, index - first);
                n += 1;
            }
            seq[n] = val_op(count, 1);
            n += 1;
            if index != last {
                seq[n] = val_op(cur, last - index);
                n += 1;
            }
        } else {
            if index != first {
                n += put_zeros(&mut seq, n, index - first);
            }
            seq[n] = val_op(count, 1);
            n += 1;
            if index != last {
                n += put_zeros(&mut seq, n, last - index);
            }
        }
        // Step 3: put the new sequence in the old one's place.
        let new_end = end + n - oldlen;
        if n > oldlen && new_end as i64 > max_bytes {
            s.truncate(len);
            return promote(s, index, count);
        }
        if let Some(next) = next {
            s.copy_within(next..end, next + n - oldlen);
        }
        s[new_end] = 0;
        s[p..p + n].copy_from_slice(&seq[..n]);
        end = new_end;
    }

    // Step 4: merge adjacent VALs of one value, looking at up to 5 opcodes from the previous one.
    let mut p = prev.unwrap_or(HDR);
    let mut scan = 5;
    while p < end && scan > 0 {
        scan -= 1;
        let op = s[p];
        if is_xzero(op) {
            p += 2;
            continue;
        }
        if is_zero(op) {
            p += 1;
            continue;
        }
        if p + 1 < end && is_val(s[p + 1]) && val_value(op) == val_value(s[p + 1]) {
            let run = val_len(op) + val_len(s[p + 1]);
            if run <= VAL_MAX_LEN {
                s[p + 1] = val_op(val_value(op), run);
                s.copy_within(p + 1..end + 1, p);
                end -= 1;
                s[end] = 0;
                continue;
            }
        }
        p += 1;
    }
    s.truncate(end);
    s[CARD_LAST] |= 0x80;
    Ok(true)
}

/// The register does not fit the sparse representation: go dense, then set it.
fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupted> {
    to_dense(s)?;
    dense_raise(&mut s[HDR..], index, count);
    Ok(true)
}

/// Redis's `hllAdd`: whether a register changed.
fn add(s: &mut Vec<u8>, ele: &[u8], max_bytes: i64) -> Result<bool, Corrupted> {
    let (index, count) = pat_len(ele);
    match s[4] {
        DENSE => Ok(dense_raise(&mut s[HDR..], index, count)),
        _ => sparse_set(s, index, count, max_bytes),
    }
}

/// Redis's `hllMerge`: raises each of `max` to the HLL's register.
fn merge(max: &mut [u8; REGISTERS], s: &[u8]) -> Result<(), Corrupted> {
    if s[4] == DENSE {
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(&s[HDR..], i));
        }
        return Ok(());
    }
    // Zero runs change nothing (and may lie past the end in a corrupted HLL).
    let covered = for_each_run(&s[HDR..], true, |first, run, val| {
        if val > 0 {
            for m in &mut max[first..first + run] {
                *m = (*m).max(val);
            }
        }
    });
    if covered == REGISTERS {
        Ok(())
    } else {
        Err(Corrupted)
    }
}

/// Ertl's sigma (arXiv:1702.01284), as Redis computes it.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if prev == z {
            return z;
        }
    }
}

/// Ertl's tau, as Redis computes it.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if prev == z {
            return z / 3.0;
        }
    }
}

/// The cardinality estimate from the register histogram (Redis's `hllCount`). Redis rounds with
/// `llroundl`, which gives i64::MIN when the estimate is out of range (all registers past 50).
fn estimate(histo: &[i64; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - histo[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += histo[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histo[0] as f64 / m);
    let e = (ALPHA_INF * m * m / z).round();
    if (i64::MIN as f64..i64::MAX as f64).contains(&e) {
        e as i64 as u64
    } else {
        i64::MIN as u64
    }
}

/// The estimate of one HLL string; `Err` for a sparse one not covering exactly every register.
fn count(s: &[u8]) -> Result<u64, Corrupted> {
    let mut histo = [0i64; 64];
    if s[4] == DENSE {
        for i in 0..REGISTERS {
            histo[usize::from(dense_get(&s[HDR..], i))] += 1;
        }
    } else {
        let covered = for_each_run(&s[HDR..], false, |_, run, val| {
            histo[usize::from(val)] += run as i64;
        });
        if covered != REGISTERS {
            return Err(Corrupted);
        }
    }
    Ok(estimate(&histo))
}

/// The estimate of registers held one per byte (the union PFCOUNT of several keys computes).
fn count_raw(regs: &[u8; REGISTERS]) -> u64 {
    let mut histo = [0i64; 64];
    for &r in regs {
        histo[usize::from(r)] += 1;
    }
    estimate(&histo)
}

/// PFADD key [element [element ...]]
///
/// # Format
/// `PFADD key [element ...]` — adds the elements to the HLL (created sparse if missing); replies 1
/// if a register changed or the key was created, else 0.
fn pfadd(ctx: &mut Ctx, args: Args) -> CmdResult {
    let max_bytes = ctx.srv.config.hll_sparse_max_bytes;
    let key = &args[1];
    let (s, created) = hll_for_write(&mut ctx.srv.dbs[ctx.db], key)?;
    let mut updated = u64::from(created);
    for ele in args.iter().skip(2) {
        // Registers raised before a corruption is found stay raised, as in Redis.
        if add(s, ele, max_bytes)? {
            updated += 1;
        }
    }
    if updated > 0 {
        s[CARD_LAST] |= 0x80;
        ctx.signal_modified(key);
        ctx.notify(STRING, "pfadd", key);
        ctx.srv.dirty += updated;
    }
    ctx.out.int(i64::from(updated > 0));
    Ok(())
}

/// PFCOUNT key [key ...]
///
/// # Format
/// `PFCOUNT key [key ...]` — the estimated cardinality of one HLL (refreshing its cached value), or
/// of the union of several (none of them changed).
fn pfcount(ctx: &mut Ctx, args: Args) -> CmdResult {
    if args.len() > 2 {
        let db = &mut ctx.srv.dbs[ctx.db];
        let mut max = [0u8; REGISTERS];
        for key in args.iter().skip(1) {
            if let Some(e) = db.lookup(key) {
                merge(&mut max, hll_bytes(as_str(e)?)?)?;
            }
        }
        ctx.out.int(count_raw(&max) as i64);
        return Ok(());
    }
    let key = &args[1];
    let Some(e) = ctx.srv.dbs[ctx.db].lookup(key) else {
        ctx.out.int(0);
        return Ok(());
    };
    let s = hll_mut(e)?;
    if s[CARD_LAST] & 0x80 == 0 {
        let cached = u64::from_le_bytes(s[HDR - 8..HDR].try_into().expect("8 bytes"));
        ctx.out.int(cached as i64);
        return Ok(());
    }
    let card = count(s)?;
    s[HDR - 8..HDR].copy_from_slice(&card.to_le_bytes());
    // Refreshing the cache writes the string: a change for WATCH and persistence, but no event.
    ctx.signal_modified(key);
    ctx.srv.dirty += 1;
    ctx.out.int(card as i64);
    Ok(())
}

/// PFMERGE destkey sourcekey [sourcekey ...]
///
/// # Format
/// `PFMERGE destkey [sourcekey ...]` — raises the destination's registers (created if missing) to
/// the maximum over it and the sources; replies OK.
fn pfmerge(ctx: &mut Ctx, args: Args) -> CmdResult {
    let max_bytes = ctx.srv.config.hll_sparse_max_bytes;
    let db = &mut ctx.srv.dbs[ctx.db];
    let mut max = [0u8; REGISTERS];
    let mut use_dense = false;
    // The destination is read as a source too (Redis starts at argument 1).
    for key in args.iter().skip(1) {
        if let Some(e) = db.lookup(key) {
            let s = hll_bytes(as_str(e)?)?;
            use_dense |= s[4] == DENSE;
            merge(&mut max, s)?;
        }
    }
    let key = &args[1];
    let (s, _) = hll_for_write(db, key)?;
    if use_dense {
        to_dense(s)?;
    }
    for (i, &m) in max.iter().enumerate().filter(|(_, &m)| m > 0) {
        if s[4] == DENSE {
            dense_raise(&mut s[HDR..], i, m);
        } else {
            // The destination was checked whole above: Redis ignores the result too.
            let _ = sparse_set(s, i, m, max_bytes);
        }
    }
    s[CARD_LAST] |= 0x80;
    ctx.signal_modified(key);
    // Redis reports a merge as a mass PFADD.
    ctx.notify(STRING, "pfadd", key);
    ctx.srv.dirty += 1;
    ctx.out.ok();
    Ok(())
}

/// PFDEBUG subcommand key
///
/// # Format
/// `PFDEBUG GETREG|DECODE|ENCODING|TODENSE key` — the registers (converting to dense), the sparse
/// opcodes as text, the encoding, or a conversion to dense (1 if converted).
fn pfdebug(ctx: &mut Ctx, args: Args) -> CmdResult {
    let (sub, key) = (&args[1], &args[2]);
    let Some(e) = ctx.srv.dbs[ctx.db].lookup_mut(key) else {
        return Err("ERR The specified key does not exist".into());
    };
    let s = hll_mut(e)?;
    if is(sub, "getreg") || is(sub, "todense") {
        let converted = s[4] == SPARSE;
        to_dense(s)?;
        if is(sub, "getreg") {
            ctx.out.array(REGISTERS);
            for i in 0..REGISTERS {
                ctx.out.int(i64::from(dense_get(&s[HDR..], i)));
            }
        } else {
            ctx.out.int(i64::from(converted));
        }
        // A conversion is propagated (Redis's "force propagation"), but it is no change for WATCH.
        if converted {
            ctx.srv.dirty += 1;
        }
    } else if is(sub, "decode") {
        if s[4] != SPARSE {
            return Err("ERR HLL encoding is not sparse".into());
        }
        let (ops, mut p) = (&s[HDR..], 0);
        let mut out = Vec::new();
        while p < ops.len() {
            let (run, val, size) = opcode(ops, p);
            let text = match (val, size) {
                (0, 1) => format!("z:{run} "),
                (0, _) => format!("Z:{run} "),
                _ => format!("v:{val},{run} "),
            };
            out.extend_from_slice(text.as_bytes());
            p += size;
        }
        out.pop();
        ctx.out.bulk(&out);
    } else if is(sub, "encoding") {
        ctx.out
            .simple(if s[4] == DENSE { "dense" } else { "sparse" });
    } else {
        // Redis formats the name as a C string: it ends at a NUL byte.
        let name = sub.split(|&b| b == 0).next().unwrap_or_default();
        return Err(format!("ERR Unknown PFDEBUG subcommand '{}'", text(name)).into());
    }
    Ok(())
}

/// PFSELFTEST
///
/// # Format
/// `PFSELFTEST` — checks the register packing and the estimator (dense and sparse agree, the
/// error stays within bounds up to 10 million elements); replies OK or a `TESTFAILED` error.
fn pfselftest(ctx: &mut Ctx, _args: Args) -> CmdResult {
    let max_bytes = ctx.srv.config.hll_sparse_max_bytes;
    let rand = || crate::util::rand_u64() >> 32;
    let mut dense = vec![0u8; DENSE_SIZE];
    let mut bytes = [0u8; REGISTERS];
    for _ in 0..1000 {
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (rand() & 63) as u8;
            dense_put(&mut dense[HDR..], i, *b);
        }
        for (i, &b) in bytes.iter().enumerate() {
            let got = dense_get(&dense[HDR..], i);
            if got != b {
                return Err(format!("TESTFAILED Register {i} should be {b} but is {got}").into());
            }
        }
    }
    dense[HDR..].fill(0);
    let mut sparse = new_hll();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let salt = rand() | rand() << 32;
    let mut checkpoint = 1u64;
    for j in 1..=10_000_000u64 {
        let ele = (j ^ salt).to_le_bytes();
        add(&mut dense, &ele, max_bytes).ok();
        if add(&mut sparse, &ele, max_bytes).is_err() {
            return Err("TESTFAILED sparse representation corrupted".into());
        }
        if j != checkpoint {
            continue;
        }
        if (j as i64) < max_bytes / 2 && sparse[4] != SPARSE {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let card = count(&dense).unwrap_or(0);
        if count(&sparse).ok() != Some(card) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint as i64 - card as i64).unsigned_abs();
        let maxerr = if j == 10 {
            1
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil() as u64
        };
        if abserr > maxerr {
            return Err(
                format!("TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}").into(),
            );
        }
        checkpoint *= 10;
    }
    ctx.out.ok();
    Ok(())
}

#[rustfmt::skip]
pub const COMMANDS: &[Command] = &[
    Command::new("pfadd", pfadd, -2, WRITE | DENYOOM | FAST).key(1, RW | INSERT).group(GROUP)
        .doc("Adds the specified elements to the specified HyperLogLog.", "2.8.9", "O(1) to add every element.",
            "key [element [element ...]]"),
    Command::new("pfcount", pfcount, -2, READONLY | MAY_REPLICATE).key_range(1, -1, 1, RW | ACCESS).group(GROUP)
        .key_notes("RW because it may change the internal representation of the key, and propagate to replicas")
        .doc("Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "2.8.9",
            "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
            "key [key ...]"),
    Command::new("pfmerge", pfmerge, -2, WRITE | DENYOOM).key(1, RW | ACCESS | INSERT).key_range(2, -1, 1, RO | ACCESS)
        .group(GROUP)
        .doc("Merge N different HyperLogLogs into a single one.", "2.8.9",
            "O(N) to merge N HyperLogLogs, but with high constant times.", "destkey:key sourcekey:key [sourcekey:key ...]"),
    Command::new("pfdebug", pfdebug, 3, WRITE | DENYOOM | ADMIN).key(2, RW | ACCESS).syscmd().group(GROUP)
        .doc("Internal commands for debugging HyperLogLog values", "2.8.9", "N/A", "subcommand key"),
    Command::new("pfselftest", pfselftest, 1, ADMIN).syscmd().group(GROUP)
        .doc("An internal command for testing HyperLogLog values", "2.8.9", "N/A", ""),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_round_trip_without_touching_neighbours() {
        let mut regs = vec![0u8; DENSE_SIZE - HDR];
        for i in 0..REGISTERS {
            dense_put(&mut regs, i, (i % 64) as u8);
        }
        for i in 0..REGISTERS {
            assert_eq!(dense_get(&regs, i), (i % 64) as u8, "register {i}");
        }
    }

    #[test]
    fn a_value_past_32_promotes_to_dense() {
        let mut s = new_hll();
        assert_eq!(sparse_set(&mut s, 5, 32, 3000).ok(), Some(true));
        assert_eq!(s[4], SPARSE);
        assert_eq!(sparse_set(&mut s, 5, 32, 3000).ok(), Some(false));
        assert_eq!(sparse_set(&mut s, 5, 33, 3000).ok(), Some(true));
        assert_eq!((s[4], s.len()), (DENSE, DENSE_SIZE));
        assert_eq!(dense_get(&s[HDR..], 5), 33);
        assert_eq!(count(&s).ok(), Some(1));
    }

    #[test]
    fn a_sparse_string_ending_mid_opcode_is_never_read_past() {
        // The last byte opens an XZERO whose second byte is missing: Redis reads its NUL.
        let mut s = new_hll();
        s.truncate(HDR + 1);
        s[HDR] = 0x7f;
        // It covers 16129 registers.
        for i in [0, 16000, 16128] {
            let mut t = s.clone();
            assert_eq!(sparse_set(&mut t, i, 3, 3000).ok(), Some(true));
            assert!(t.len() <= HDR + 5);
        }
        assert!(sparse_set(&mut s.clone(), 16129, 3, 3000).is_err());
        assert!(to_dense(&mut s.clone()).is_err());
        assert!(count(&s).is_err());
    }

    #[test]
    fn sparse_and_dense_agree() {
        let (mut sparse, mut dense) = (new_hll(), new_hll());
        to_dense(&mut dense).ok().expect("valid");
        for n in 0..500u32 {
            let ele = n.to_string();
            add(&mut sparse, ele.as_bytes(), 3000).ok().expect("valid");
            add(&mut dense, ele.as_bytes(), 3000).ok().expect("valid");
        }
        assert_eq!(sparse[4], SPARSE);
        assert_eq!(count(&sparse).ok(), count(&dense).ok());
        to_dense(&mut sparse).ok().expect("valid");
        assert_eq!(sparse[HDR..], dense[HDR..]);
    }
}
