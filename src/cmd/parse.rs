//! Argument parsing shared by every command: numbers with Redis's exact rules and error texts, and
//! keyword matching. Handlers parse everything first and only then touch the store, so a syntax
//! error never leaves a half-applied change.

use super::CmdError;
use crate::resp::reply::{NOT_FLOAT, NOT_INT};
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

/// A timeout in seconds with a fractional part (as BLPOP's and DEBUG SLEEP's), as milliseconds.
pub fn seconds_f(arg: &[u8], negative_msg: &'static str) -> Result<f64, CmdError> {
    let s = parse_f64(arg).ok_or(CmdError::from("ERR timeout is not a float or out of range"))?;
    if s < 0.0 {
        return Err(CmdError::from(negative_msg));
    }
    Ok(s)
}
