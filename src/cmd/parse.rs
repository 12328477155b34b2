//! Argument parsing shared by every command: numbers with Redis's exact rules and error texts, and
//! keyword matching. Handlers parse everything first and only then touch the store, so a syntax
//! error never leaves a half-applied change.

use super::{Args, CmdError};
use crate::resp::reply::{NOT_FLOAT, NOT_INT, SYNTAX};
use crate::store::zset::{LexBound, Range, ScoreBound};
use crate::util::{parse_f64, parse_i64};

/// An integer argument, or `ERR value is not an integer or out of range`.
pub fn int(arg: &[u8]) -> Result<i64, CmdError> {
    parse_i64(arg).ok_or(CmdError::from(NOT_INT))
}

/// An integer argument that must be within `lo..=hi`, with `msg` as the error otherwise.
pub fn int_in(arg: &[u8], lo: i64, hi: i64, msg: &'static str) -> Result<i64, CmdError> {
    match parse_i64(arg) {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        Some(_) => Err(CmdError::from(msg)),
        None => Err(CmdError::from(NOT_INT)),
    }
}

/// A float argument, or `ERR value is not a valid float`.
pub fn float(arg: &[u8]) -> Result<f64, CmdError> {
    parse_f64(arg).ok_or(CmdError::from(NOT_FLOAT))
}

/// Case-insensitive keyword comparison.
pub fn is(arg: &[u8], keyword: &str) -> bool {
    arg.eq_ignore_ascii_case(keyword.as_bytes())
}

/// An argument as UTF-8 text for messages (lossy; Redis prints raw bytes, which are rarely non-UTF-8).
pub fn text(arg: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(arg)
}

/// An argument as Redis prints it with `%s`: as a C string, up to its first NUL byte.
pub fn c_text(arg: &[u8]) -> std::borrow::Cow<'_, str> {
    text(&arg[..arg.iter().position(|&c| c == 0).unwrap_or(arg.len())])
}

/// `addReplySubcommandSyntaxError`: a subcommand called with arguments it does not take.
pub fn subcommand_syntax(container: &str, sub: &[u8]) -> CmdError {
    CmdError::from(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {container} HELP.",
        c_text(&sub[..sub.len().min(128)])
    ))
}

/// A timeout in seconds with a fractional part (as BLPOP's and DEBUG SLEEP's), as milliseconds.
pub fn seconds_f(arg: &[u8], negative_msg: &'static str) -> Result<f64, CmdError> {
    let s = parse_f64(arg).ok_or(CmdError::from("ERR timeout is not a float or out of range"))?;
    if s < 0.0 {
        return Err(CmdError::from(negative_msg));
    }
    Ok(s)
}

/// A SCAN-family cursor, or `ERR invalid cursor`: read by C's `strtoul` as Redis's
/// `parseScanCursorOrReply` does (so `-1` wraps to the largest cursor and `+5` is 5), refusing a
/// leading space, trailing garbage and overflow.
pub fn cursor(arg: &[u8]) -> Result<u64, CmdError> {
    let (v, to_end, erange) = strtoul(arg);
    let space = arg
        .first()
        .is_some_and(|&c| c.is_ascii_whitespace() || c == 0x0b);
    if space || !to_end || erange {
        return Err("ERR invalid cursor".into());
    }
    Ok(v)
}

/// C's `strtoul` in base 10 over `arg` read as a C string: the value, whether it read all of it,
/// and whether it overflowed (`ERANGE`).
pub fn strtoul(arg: &[u8]) -> (u64, bool, bool) {
    let mut buf = Vec::with_capacity(arg.len() + 1);
    buf.extend_from_slice(arg);
    buf.push(0);
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `buf` is NUL-terminated and outlives the call; `end` points into it afterwards.
    unsafe {
        *libc::__errno_location() = 0;
        let v = libc::strtoul(buf.as_ptr() as *const libc::c_char, &mut end, 10);
        (
            v,
            *end as u8 == 0,
            *libc::__errno_location() == libc::ERANGE,
        )
    }
}

/// The arguments shared by SCAN, HSCAN, SSCAN and ZSCAN.
pub struct ScanArgs<'a> {
    pub cursor: u64,
    pub count: i64,
    /// `None` when absent or `*` (matches everything).
    pub pattern: Option<&'a [u8]>,
    /// SCAN's TYPE filter.
    pub type_name: Option<&'a [u8]>,
}

/// Parses `cursor [MATCH pattern] [COUNT count] [TYPE type]` starting at `args[at]`; TYPE only when
/// `allow_type` (SCAN), as Redis's `scanGenericCommand`.
pub fn scan_args(args: Args<'_>, at: usize, allow_type: bool) -> Result<ScanArgs<'_>, CmdError> {
    let mut s = ScanArgs {
        cursor: cursor(&args[at])?,
        count: 10,
        pattern: None,
        type_name: None,
    };
    let mut i = at + 1;
    while i < args.len() {
        let more = args.len() - i >= 2;
        if is(&args[i], "count") && more {
            s.count = int(&args[i + 1])?;
            if s.count < 1 {
                return Err(SYNTAX.into());
            }
        } else if is(&args[i], "match") && more {
            s.pattern = args.get(i + 1).filter(|p| *p != b"*");
        } else if allow_type && is(&args[i], "type") && more {
            s.type_name = args.get(i + 1);
        } else {
            return Err(SYNTAX.into());
        }
        i += 2;
    }
    Ok(s)
}

/// An integer within `lo..=hi` where `msg` answers both a non-integer and an out-of-range value
/// (Redis's `getRangeLongFromObjectOrReply` with a message, e.g. LMPOP's numkeys and COUNT).
pub fn int_or(arg: &[u8], lo: i64, hi: i64, msg: &'static str) -> Result<i64, CmdError> {
    parse_i64(arg)
        .filter(|n| (lo..=hi).contains(n))
        .ok_or(CmdError::from(msg))
}

/// A non-negative integer, `msg` otherwise (Redis's `getPositiveLongFromObjectOrReply`).
pub fn positive(arg: &[u8], msg: &'static str) -> Result<i64, CmdError> {
    int_or(arg, 0, i64::MAX, msg)
}

/// A blocking command's timeout in seconds, fractional (Redis 7.0's `getTimeoutFromObjectOrReply`
/// with `UNIT_SECONDS`), in milliseconds; 0 waits forever. Like Redis, the seconds are multiplied by
/// 1000 and truncated, so `-0.0001` is 0, and a value the C cast cannot represent (`inf`, `1e30`,
/// anything from 2^63 ms) is "negative".
pub fn timeout(arg: &[u8]) -> Result<u64, CmdError> {
    // Whole seconds are exact in Redis's long double, past where a double rounds them.
    if let Some(secs) = parse_i64(arg) {
        let ms = i128::from(secs) * 1000;
        return not_negative(i64::try_from(ms).unwrap_or(i64::MIN));
    }
    let s = parse_f64(arg)
        .or_else(|| parse_hex_float(arg))
        .ok_or(CmdError::from("ERR timeout is not a float or out of range"))?;
    let ms = s * 1000.0;
    // x86's out-of-range double-to-integer conversion yields LLONG_MIN.
    let tval = if ms.is_finite() && ms.abs() < 9_223_372_036_854_775_808.0 {
        ms.trunc() as i64
    } else {
        i64::MIN
    };
    not_negative(tval)
}

/// A timeout in whole milliseconds (`getTimeoutFromObjectOrReply` with `UNIT_MILLISECONDS`: WAIT);
/// 0 waits forever.
pub fn timeout_ms(arg: &[u8]) -> Result<u64, CmdError> {
    let tval = parse_i64(arg).ok_or(CmdError::from(
        "ERR timeout is not an integer or out of range",
    ))?;
    not_negative(tval)
}

/// Redis 7.0 refuses a negative timeout only: one so large that adding it to the clock overflows
/// waits forever there (its deadline wraps past every timer), as it does here (the deadline
/// saturates).
fn not_negative(tval: i64) -> Result<u64, CmdError> {
    if tval < 0 {
        return Err("ERR timeout is negative".into());
    }
    Ok(tval as u64)
}

/// C's `strtold` hexadecimal form (`0x10`, `-0x1.8p3`), which Redis's long-double parse accepts.
fn parse_hex_float(arg: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(arg).ok()?;
    let (neg, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))?;
    let (mantissa, exp) = match rest.find(['p', 'P']) {
        Some(i) => (&rest[..i], rest[i + 1..].parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exp);
    Some(if neg { -v } else { v })
}

/// C's `strtod` on `arg` (NUL-terminated copy): the value and how many bytes it consumed, with
/// whether it over- or underflowed (`ERANGE`). Redis parses scores this way, so hex floats, `inf`,
/// `infinity` and denormals behave exactly as in redis-server.
pub(crate) fn strtod(arg: &[u8]) -> (f64, usize, bool) {
    let mut buf = Vec::with_capacity(arg.len() + 1);
    buf.extend_from_slice(arg);
    buf.push(0);
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `buf` is NUL-terminated and outlives the call; `end` points into it afterwards.
    unsafe {
        *libc::__errno_location() = 0;
        let v = libc::strtod(buf.as_ptr() as *const libc::c_char, &mut end);
        let erange = *libc::__errno_location() == libc::ERANGE;
        let used = end.offset_from(buf.as_ptr() as *const libc::c_char) as usize;
        (v, used, erange)
    }
}

/// A double as Redis's `getDoubleFromObject` reads it (ZADD scores, ZINCRBY increments, WEIGHTS):
/// the whole argument, no leading space, no overflow or underflow to zero, never NaN. `msg` is the
/// error otherwise.
pub fn double_or(arg: &[u8], msg: &'static str) -> Result<f64, CmdError> {
    let (v, used, erange) = strtod(arg);
    let bad = arg.is_empty()
        || arg[0].is_ascii_whitespace()
        || arg[0] == 0x0b
        || used != arg.len()
        || (erange && (v.is_infinite() || v == 0.0))
        || v.is_nan();
    if bad {
        Err(msg.into())
    } else {
        Ok(v)
    }
}

/// A score argument: `double_or` with `ERR value is not a valid float`.
pub fn score(arg: &[u8]) -> Result<f64, CmdError> {
    double_or(arg, NOT_FLOAT)
}

/// One end of a score range, as Redis's `zslParseRange`: `(` makes it exclusive; the rest is read
/// by `strtod` up to the end or an embedded NUL (so an empty string is 0), and NaN is refused.
fn score_bound(arg: &[u8]) -> Option<ScoreBound> {
    let (exclusive, num) = match arg.first() {
        Some(b'(') => (true, &arg[1..]),
        _ => (false, arg),
    };
    let (value, used, _) = strtod(num);
    let stop = num.get(used).copied().unwrap_or(0);
    (stop == 0 && !value.is_nan()).then_some(ScoreBound { value, exclusive })
}

/// `min max` of ZRANGEBYSCORE, ZCOUNT, ...; `ERR min or max is not a float` otherwise.
pub fn score_range(min: &[u8], max: &[u8]) -> Result<Range, CmdError> {
    match (score_bound(min), score_bound(max)) {
        (Some(a), Some(b)) => Ok(Range::Score(a, b)),
        _ => Err("ERR min or max is not a float".into()),
    }
}

/// One end of a lex range, as Redis's `zslParseLexRangeItem`: `-`, `+`, `[member`, `(member`.
fn lex_bound(arg: &[u8]) -> Option<LexBound> {
    let alone = arg.get(1).is_none_or(|&c| c == 0);
    match arg.first()? {
        b'+' if alone => Some(LexBound::Max),
        b'-' if alone => Some(LexBound::Min),
        b'(' => Some(LexBound::Excl(arg[1..].to_vec())),
        b'[' => Some(LexBound::Incl(arg[1..].to_vec())),
        _ => None,
    }
}

/// `min max` of ZRANGEBYLEX, ZLEXCOUNT, ...; `ERR min or max not valid string range item` otherwise.
pub fn lex_range(min: &[u8], max: &[u8]) -> Result<Range, CmdError> {
    match (lex_bound(min), lex_bound(max)) {
        (Some(a), Some(b)) => Ok(Range::Lex(a, b)),
        _ => Err("ERR min or max not valid string range item".into()),
    }
}
