//! Bitmaps (Redis's bitops.c): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.
//!
//! A bitmap is a string; bit 0 is the most significant bit of the first byte. Reads see a missing
//! key, and any byte past the end, as zeros; writes zero-pad the string up to the highest bit they
//! touch, and leave it `raw`, as Redis's `dbUnshareStringValue` does.

use super::keyspec::{ACCESS, OW, RO, RW, UPDATE, VARIABLE_FLAGS};
use super::parse::{int, is};
use super::string::{as_str_mut, padded_for_write, read_str, TOO_BIG};
use super::{Args, CmdError, CmdResult, Command, Ctx, DENYOOM, FAST, READONLY, WRITE};
use crate::resp::reply::SYNTAX;
use crate::server::notify::STRING;
use crate::store::{Str, Value};
use crate::util::parse_i64;

const GROUP: &str = "bitmap";

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";
/// Allocating a string failed: `proto-max-bulk-len` was raised beyond the memory there is.
const BAD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

/// A bit offset, as Redis's `getBitOffsetFromArgument`: with `hash_bits` (BITFIELD's width) a
/// `#N` offset means N fields of that width; the offset's byte must lie below
/// `proto-max-bulk-len`.
fn bit_offset(ctx: &Ctx, arg: &[u8], hash_bits: Option<u32>) -> Result<u64, CmdError> {
    let (digits, scale) = match (arg.first(), hash_bits) {
        (Some(b'#'), Some(bits)) => (&arg[1..], i64::from(bits)),
        _ => (arg, 1),
    };
    // Redis multiplies a `#` offset in C, where an overflow wraps: a wrapped product is checked
    // like any other.
    let off = parse_i64(digits)
        .ok_or(CmdError::from(BAD_OFFSET))?
        .wrapping_mul(scale);
    if off < 0 || off >> 3 >= ctx.srv.config.proto_max_bulk_len {
        return Err(BAD_OFFSET.into());
    }
    Ok(off as u64)
}

/// The bit at `off` (0 or 1); zero past the end.
fn bit_at(b: &[u8], off: u64) -> u8 {
    let byte = b.get((off >> 3) as usize).copied().unwrap_or(0);
    (byte >> (7 - (off & 7))) & 1
}

/// SETBIT key offset value
///
/// # Format
/// `SETBIT key offset value` — sets or clears one bit (zero-padding the string), replies the bit's
/// old value.
fn setbit(ctx: &mut Ctx, args: Args) -> CmdResult {
    let off = bit_offset(ctx, &args[2], None)?;
    let on = match parse_i64(&args[3]) {
        Some(v @ (0 | 1)) => v as u8,
        _ => return Err("ERR bit is not an integer or out of range".into()),
    };
    let key = &args[1];
    let (data, grown) = padded_for_write(&mut ctx.srv.dbs[ctx.db], key, (off >> 3) as usize + 1)?;
    let old = bit_at(data, off);
    let mask = 1u8 << (7 - (off & 7));
    let byte = &mut data[(off >> 3) as usize];
    *byte = (*byte & !mask) | (on * mask);
    if grown || old != on {
        ctx.signal_modified(key);
        ctx.notify(STRING, "setbit", key);
        ctx.srv.dirty += 1;
    }
    ctx.out.int(i64::from(old));
    Ok(())
}

/// GETBIT key offset
///
/// # Format
/// `GETBIT key offset` — the bit at `offset`; 0 past the end or for a missing key.
fn getbit(ctx: &mut Ctx, args: Args) -> CmdResult {
    let off = bit_offset(ctx, &args[2], None)?;
    let db = &mut ctx.srv.dbs[ctx.db];
    let bit = read_str(db, &args[1])?.map_or(0, |s| s.with_bytes(|b| bit_at(b, off)));
    ctx.out.int(i64::from(bit));
    Ok(())
}

/// `start end` in bytes or bits (negative: from the end) over a string of `len` bytes, clamped as
/// Redis's BITCOUNT and BITPOS do, as an inclusive range of bits; `None` when empty.
fn bit_range(len: usize, start: i64, end: i64, in_bits: bool) -> Option<(u64, u64)> {
    let total = if in_bits { len as i64 * 8 } else { len as i64 };
    let from_end = |i: i64| if i < 0 { (total + i).max(0) } else { i };
    let (start, end) = (from_end(start), from_end(end).min(total - 1));
    if start > end {
        None
    } else if in_bits {
        Some((start as u64, end as u64))
    } else {
        Some((start as u64 * 8, end as u64 * 8 + 7))
    }
}

/// The optional `BYTE | BIT` unit; a syntax error otherwise.
fn unit(arg: Option<&[u8]>) -> Result<bool, CmdError> {
    match arg {
        None => Ok(false),
        Some(a) if is(a, "bit") => Ok(true),
        Some(a) if is(a, "byte") => Ok(false),
        Some(_) => Err(SYNTAX.into()),
    }
}

/// The bits of `b` set within the inclusive bit range `first..=last` (inside `b`).
fn count_bits(b: &[u8], first: u64, last: u64) -> u64 {
    let (fb, lb) = ((first >> 3) as usize, (last >> 3) as usize);
    let all: u64 = b[fb..=lb].iter().map(|x| u64::from(x.count_ones())).sum();
    let before = b[fb] & !(0xffu8 >> (first & 7));
    let after = b[lb] & ((1u16 << (7 - (last & 7))) - 1) as u8;
    all - u64::from(before.count_ones()) - u64::from(after.count_ones())
}

/// BITCOUNT key [start end [BYTE | BIT]]
///
/// # Format
/// `BITCOUNT key [start end [BYTE|BIT]]` — the number of set bits in the range (bytes by default).
fn bitcount(ctx: &mut Ctx, args: Args) -> CmdResult {
    let db = &mut ctx.srv.dbs[ctx.db];
    // Redis 7.0 looks the key up before reading the range: a missing key answers 0 whatever follows.
    let Some(s) = read_str(db, &args[1])? else {
        ctx.out.int(0);
        return Ok(());
    };
    let count = s.with_bytes(|b| -> Result<u64, CmdError> {
        let range = match args.len() {
            2 => bit_range(b.len(), 0, -1, false),
            4 | 5 => {
                let (start, end) = (int(&args[2])?, int(&args[3])?);
                // Redis answers an empty negative range before it reads BYTE|BIT.
                if start < 0 && end < 0 && start > end {
                    return Ok(0);
                }
                let in_bits = unit(args.get(4))?;
                bit_range(b.len(), start, end, in_bits)
            }
            _ => return Err(SYNTAX.into()),
        };
        Ok(range.map_or(0, |(first, last)| count_bits(b, first, last)))
    })?;
    ctx.out.int(count as i64);
    Ok(())
}

/// The first bit equal to `want` within the inclusive bit range `first..=last` (inside `b`).
fn find_bit(b: &[u8], first: u64, last: u64, want: bool) -> Option<u64> {
    let (fb, lb) = ((first >> 3) as usize, (last >> 3) as usize);
    let skip = if want { 0 } else { 0xff };
    (fb..=lb).find_map(|i| {
        if b[i] == skip {
            return None;
        }
        let mut x = if want { b[i] } else { !b[i] };
        if i == fb {
            x &= 0xff >> (first & 7);
        }
        if i == lb {
            x &= 0xff << (7 - (last & 7));
        }
        (x != 0).then(|| i as u64 * 8 + u64::from(x.leading_zeros()))
    })
}

/// BITPOS key bit [start [end [BYTE | BIT]]]
///
/// # Format
/// `BITPOS key bit [start [end [BYTE|BIT]]]` — the position of the first bit equal to `bit` in the
/// range, or -1. Looking for a clear bit without an `end`, the string counts as followed by zeros.
fn bitpos(ctx: &mut Ctx, args: Args) -> CmdResult {
    let bit = int(&args[2])?;
    if bit != 0 && bit != 1 {
        return Err("ERR The bit argument must be 1 or 0.".into());
    }
    let want = bit == 1;
    let db = &mut ctx.srv.dbs[ctx.db];
    // A missing key is an endless run of zeros, whatever the range.
    let Some(s) = read_str(db, &args[1])? else {
        ctx.out.int(if want { -1 } else { 0 });
        return Ok(());
    };
    let pos = s.with_bytes(|b| -> Result<i64, CmdError> {
        let (range, end_given) = match args.len() {
            3 => (bit_range(b.len(), 0, -1, false), false),
            4..=6 => {
                let start = int(&args[3])?;
                let in_bits = unit(args.get(5))?;
                match args.get(4) {
                    Some(end) => (bit_range(b.len(), start, int(end)?, in_bits), true),
                    None => (bit_range(b.len(), start, -1, false), false),
                }
            }
            _ => return Err(SYNTAX.into()),
        };
        let Some((first, last)) = range else {
            return Ok(-1);
        };
        Ok(match find_bit(b, first, last, want) {
            Some(p) => p as i64,
            // Without an end, the zeros after the string count: the first is just past it.
            None if !want && !end_given => last as i64 + 1,
            None => -1,
        })
    })?;
    ctx.out.int(pos);
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// BITOP <AND | OR | XOR | NOT> destkey key [key ...]
///
/// # Format
/// `BITOP AND|OR|XOR|NOT destkey key [key ...]` — stores the bitwise result (shorter strings padded
/// with zeros) at `destkey`, or deletes it when the result is empty; replies its length.
fn bitop(ctx: &mut Ctx, args: Args) -> CmdResult {
    let op = [
        ("and", BitOp::And),
        ("or", BitOp::Or),
        ("xor", BitOp::Xor),
        ("not", BitOp::Not),
    ]
    .iter()
    .find(|(name, _)| is(&args[1], name))
    .map(|&(_, op)| op)
    .ok_or(CmdError::from(SYNTAX))?;
    if op == BitOp::Not && args.len() != 4 {
        return Err("ERR BITOP NOT must be called with a single source key.".into());
    }
    let (dest, sources) = (&args[2], args.tail(3));
    let db = &mut ctx.srv.dbs[ctx.db];
    // First every source is read once (counted, type-checked) for the result's length; then the
    // result is folded from them without copying any.
    let mut max_len = 0;
    for key in sources.iter() {
        if let Some(s) = read_str(db, key)? {
            max_len = max_len.max(s.len());
        }
    }
    let mut res = Vec::new();
    if max_len > 0 {
        res.try_reserve_exact(max_len)
            .map_err(|_| CmdError::from(TOO_BIG))?;
        res.resize(max_len, 0);
    }
    for (i, key) in sources.iter().enumerate() {
        let mut fold = |b: &[u8]| match (op, i) {
            (BitOp::Not, _) => {
                for (r, x) in res.iter_mut().zip(b) {
                    *r = !x;
                }
            }
            (_, 0) => res[..b.len()].copy_from_slice(b),
            (BitOp::And, _) => {
                for (r, x) in res.iter_mut().zip(b) {
                    *r &= x;
                }
                res[b.len()..].fill(0);
            }
            (BitOp::Or, _) => res.iter_mut().zip(b).for_each(|(r, x)| *r |= x),
            (BitOp::Xor, _) => res.iter_mut().zip(b).for_each(|(r, x)| *r ^= x),
        };
        match db.lookup_mut(key) {
            Some(e) => as_str_mut(e)?.with_bytes(fold),
            None => fold(&[]),
        }
    }
    let value = (max_len > 0).then(|| {
        Value::Str(Str::Bytes {
            data: res,
            raw: true,
        })
    });
    ctx.store_result(dest, value, STRING, "set", 1);
    ctx.out.int(max_len as i64);
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, PartialEq)]
enum FieldOp {
    Get,
    Set,
    IncrBy,
}

/// One BITFIELD operation, parsed.
struct Field {
    op: FieldOp,
    signed: bool,
    bits: u32,
    offset: u64,
    /// SET's value or INCRBY's increment.
    value: i64,
    overflow: Overflow,
}

/// A field type, `i1`..`i64` or `u1`..`u63`. Redis reads the width with C's `strlen`, so it ends
/// at a NUL byte.
fn field_type(arg: &[u8]) -> Result<(bool, u32), CmdError> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(BAD_TYPE.into()),
    };
    let width = &arg[1..];
    let width = &width[..width.iter().position(|&c| c == 0).unwrap_or(width.len())];
    match parse_i64(width) {
        Some(n) if n >= 1 && n <= if signed { 64 } else { 63 } => Ok((signed, n as u32)),
        _ => Err(BAD_TYPE.into()),
    }
}

/// The unsigned field of `bits` bits at bit `off`; zeros past the end of `b`.
fn get_field(b: &[u8], off: u64, bits: u32) -> u64 {
    (0..u64::from(bits)).fold(0, |v, i| v << 1 | u64::from(bit_at(b, off + i)))
}

/// Writes the low `bits` bits of `v` at bit `off` (inside `b`).
fn set_field(b: &mut [u8], off: u64, bits: u32, v: u64) {
    for i in 0..u64::from(bits) {
        let bit = (v >> (u64::from(bits) - 1 - i)) & 1;
        let at = off + i;
        let mask = 1u8 << (7 - (at & 7));
        let byte = &mut b[(at >> 3) as usize];
        *byte = (*byte & !mask) | if bit == 1 { mask } else { 0 };
    }
}

/// The low `bits` bits of `v` as a signed number: the top one repeated above them.
fn sign_extend(v: u64, bits: u32) -> i64 {
    if bits == 64 {
        return v as i64;
    }
    let high = u64::MAX << bits;
    (if v >> (bits - 1) & 1 == 1 {
        v | high
    } else {
        v & !high
    }) as i64
}

/// `value + incr` in an unsigned field of `bits`: `None` when it fits, else whether it overflowed
/// upwards and the value WRAP or SAT gives (Redis's `checkUnsignedBitfieldOverflow`, whose C
/// arithmetic wraps where noted).
fn unsigned_overflow(value: u64, incr: i64, bits: u32, ow: Overflow) -> Option<u64> {
    let max = (1u64 << bits) - 1;
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let up = if value > max || (incr > 0 && incr > max_incr) {
        true
    } else if incr < 0 && incr < min_incr {
        false
    } else {
        return None;
    };
    Some(match ow {
        Overflow::Sat if up => max,
        Overflow::Sat => 0,
        _ => value.wrapping_add(incr as u64) & max,
    })
}

/// `unsigned_overflow` for a signed field (Redis's `checkSignedBitfieldOverflow`).
fn signed_overflow(value: i64, incr: i64, bits: u32, ow: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let narrow = bits != 64;
    let up = if value > max
        || (narrow && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr)
    {
        true
    } else if value < min
        || (narrow && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        false
    } else {
        return None;
    };
    Some(match ow {
        Overflow::Sat if up => max,
        Overflow::Sat => min,
        _ => sign_extend((value as u64).wrapping_add(incr as u64), bits),
    })
}

/// Parses BITFIELD's operations (from `args[2]`) as Redis's `bitfieldGeneric` does, first to last,
/// stopping at the first error.
fn parse_fields(ctx: &Ctx, args: Args) -> Result<Vec<Field>, CmdError> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let rest = args.len() - j - 1;
        let sub = &args[j];
        let op = if is(sub, "get") && rest >= 2 {
            FieldOp::Get
        } else if is(sub, "set") && rest >= 3 {
            FieldOp::Set
        } else if is(sub, "incrby") && rest >= 3 {
            FieldOp::IncrBy
        } else if is(sub, "overflow") && rest >= 1 {
            overflow = [
                ("wrap", Overflow::Wrap),
                ("sat", Overflow::Sat),
                ("fail", Overflow::Fail),
            ]
            .iter()
            .find(|(name, _)| is(&args[j + 1], name))
            .map(|&(_, ow)| ow)
            .ok_or(CmdError::from("ERR Invalid OVERFLOW type specified"))?;
            j += 2;
            continue;
        } else {
            return Err(SYNTAX.into());
        };
        let (signed, bits) = field_type(&args[j + 1])?;
        let offset = bit_offset(ctx, &args[j + 2], Some(bits))?;
        let value = if op == FieldOp::Get {
            0
        } else {
            int(&args[j + 3])?
        };
        fields.push(Field {
            op,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if op == FieldOp::Get { 3 } else { 4 };
    }
    Ok(fields)
}

/// Runs one SET or INCRBY on `b` (long enough for it): the reply and whether the field changed,
/// `None` when OVERFLOW FAIL refused it (nothing written).
fn write_field(b: &mut [u8], f: &Field) -> Option<(i64, bool)> {
    let old = get_field(b, f.offset, f.bits);
    let (new, reply, changed) = if f.signed {
        let old = sign_extend(old, f.bits);
        let (base, incr) = match f.op {
            FieldOp::IncrBy => (old, f.value),
            _ => (f.value, 0),
        };
        let new = match signed_overflow(base, incr, f.bits, f.overflow) {
            None => base.wrapping_add(incr),
            Some(_) if f.overflow == Overflow::Fail => return None,
            Some(limit) => limit,
        };
        let reply = if f.op == FieldOp::IncrBy { new } else { old };
        (new as u64, reply, new != old)
    } else {
        let (base, incr) = match f.op {
            FieldOp::IncrBy => (old, f.value),
            _ => (f.value as u64, 0),
        };
        let new = match unsigned_overflow(base, incr, f.bits, f.overflow) {
            None => base.wrapping_add(incr as u64),
            Some(_) if f.overflow == Overflow::Fail => return None,
            Some(limit) => limit,
        };
        let reply = if f.op == FieldOp::IncrBy { new } else { old };
        (new, reply as i64, new != old)
    };
    set_field(b, f.offset, f.bits, new);
    Some((reply, changed))
}

/// GET of a field: its value, zeros past the end of `b`.
fn read_field(b: &[u8], f: &Field) -> i64 {
    let v = get_field(b, f.offset, f.bits);
    if f.signed {
        sign_extend(v, f.bits)
    } else {
        v as i64
    }
}

/// Shared by BITFIELD and BITFIELD_RO (`read_only`): every operation is parsed before the key is
/// touched; a line of GETs only reads it.
fn bitfield_generic(ctx: &mut Ctx, args: Args, read_only: bool) -> CmdResult {
    let fields = parse_fields(ctx, args)?;
    let key = &args[1];
    let db = &mut ctx.srv.dbs[ctx.db];
    let Some(max_bit) = fields
        .iter()
        .filter(|f| f.op != FieldOp::Get)
        .map(|f| f.offset + u64::from(f.bits) - 1)
        .max()
    else {
        let s = read_str(db, key)?;
        ctx.out.array(fields.len());
        for f in &fields {
            let v = s.map_or(0, |s| s.with_bytes(|b| read_field(b, f)));
            ctx.out.int(v);
        }
        return Ok(());
    };
    if read_only {
        return Err("ERR BITFIELD_RO only supports the GET subcommand".into());
    }
    let (data, grown) = padded_for_write(db, key, (max_bit >> 3) as usize + 1)?;
    ctx.out.array(fields.len());
    let mut changes = 0;
    for f in &fields {
        if f.op == FieldOp::Get {
            ctx.out.int(read_field(data, f));
            continue;
        }
        match write_field(data, f) {
            Some((v, changed)) => {
                // Growing the string counts as a change for every write, as in Redis.
                changes += u64::from(grown || changed);
                ctx.out.int(v);
            }
            None => ctx.out.null(),
        }
    }
    if changes > 0 {
        ctx.signal_modified(key);
        ctx.notify(STRING, "setbit", key);
        ctx.srv.dirty += changes;
    }
    Ok(())
}

/// BITFIELD key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value |
/// INCRBY encoding offset increment> ...]
///
/// # Format
/// `BITFIELD key [GET type offset] [OVERFLOW WRAP|SAT|FAIL] [SET type offset value]
/// [INCRBY type offset increment] ...` — one reply per GET, SET (the old value) and INCRBY (the new
/// value; nil when OVERFLOW FAIL refused it). Types are `i1`..`i64` and `u1`..`u63`; an offset
/// `#N` means N fields of the type's width.
fn bitfield(ctx: &mut Ctx, args: Args) -> CmdResult {
    bitfield_generic(ctx, args, false)
}

/// BITFIELD_RO key [GET encoding offset [GET encoding offset ...]]
///
/// # Format
/// `BITFIELD_RO key [GET type offset ...]` — BITFIELD limited to GET.
fn bitfield_ro(ctx: &mut Ctx, args: Args) -> CmdResult {
    bitfield_generic(ctx, args, true)
}

#[rustfmt::skip]
/// COMMAND GETKEYS of BITFIELD, as Redis's `bitfieldGetKeys`: the key, only read when the line
/// has GETs and OVERFLOWs only (an unknown word counting as a write).
fn bitfield_keys(args: Args) -> Vec<(usize, u32)> {
    let mut reads_only = true;
    let mut i = 2;
    while i < args.len() {
        let left = args.len() - i - 1;
        if is(&args[i], "get") && left >= 2 {
            i += 3;
        } else if is(&args[i], "overflow") && left >= 1 {
            i += 2;
        } else {
            reads_only = false;
            break;
        }
    }
    let flags = if reads_only {
        RO | ACCESS
    } else {
        RW | ACCESS | UPDATE
    };
    vec![(1, flags)]
}

pub const COMMANDS: &[Command] = &[
    Command::new("setbit", setbit, 4, WRITE | DENYOOM).key(1, RW | ACCESS | UPDATE).group(GROUP)
        .doc("Sets or clears the bit at offset in the string value stored at key", "2.2.0", "O(1)", "key offset:integer value:integer"),
    Command::new("getbit", getbit, 3, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Returns the bit value at offset in the string value stored at key", "2.2.0", "O(1)", "key offset:integer"),
    Command::new("bitcount", bitcount, -2, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .arg_since(&[("index_unit", "7.0.0")])
        .doc("Count set bits in a string", "2.6.0", "O(N)",
            "key [index:(start:integer end:integer [index_unit:(BYTE | BIT)])]"),
    Command::new("bitpos", bitpos, -3, READONLY).key(1, RO | ACCESS).group(GROUP)
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .arg_since(&[("index_unit", "7.0.0")])
        .doc("Find first bit set or clear in a string", "2.8.7", "O(N)",
            "key bit:integer [index:(start:integer [end_index:(end:integer [index_unit:(BYTE | BIT)])])]"),
    Command::new("bitop", bitop, -4, WRITE | DENYOOM).key(2, OW | UPDATE).key_range(3, -1, 1, RO | ACCESS).group(GROUP)
        .doc("Perform bitwise operations between strings", "2.6.0", "O(N)", "operation destkey:key key [key ...]"),
    Command::new("bitfield", bitfield, -2, WRITE | DENYOOM).key(1, RW | ACCESS | UPDATE | VARIABLE_FLAGS).group(GROUP)
        .key_notes("This command allows both access and modification of the key").key_finder(bitfield_keys)
        .doc("Perform arbitrary bitfield integer operations on strings", "3.2.0", "O(1) for each subcommand specified",
            "key [operation:(GET encoding offset:integer | write:([OVERFLOW (WRAP | SAT | FAIL)] write_operation:(SET encoding offset:integer value:integer | INCRBY encoding offset:integer increment:integer))) [operation:(GET encoding offset:integer | write:([OVERFLOW (WRAP | SAT | FAIL)] write_operation:(SET encoding offset:integer value:integer | INCRBY encoding offset:integer increment:integer))) ...]]"),
    Command::new("bitfield_ro", bitfield_ro, -2, READONLY | FAST).key(1, RO | ACCESS).group(GROUP)
        .doc("Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0", "O(1) for each subcommand specified",
            "key [GET encoding offset:integer [GET encoding offset:integer ...]]"),
];
