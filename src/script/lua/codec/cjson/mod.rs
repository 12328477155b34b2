//! `cjson` as Redis 7.0 ships it (Lua CJSON 2.1.0 with Redis's patches): `encode`, `decode`, and
//! the configuration functions, over the value graph.
//!
//! Glue contract: `cjson.encode(v)` and `cjson.decode(s)` take exactly one argument, else raise
//! `LuaErr::Arg(1, "expected 1 argument")`; `decode`'s argument goes through `luaL_checklstring`
//! (numbers become `%.14g` strings, other types raise `Arg(1, "string expected, got <type>")`).
//! The configuration functions take the raw Lua arguments and return the values to push.
//!
//! Here: the configuration (`CjsonConfig`) and its functions; the encoder is `encode.rs`, the
//! decoder (tokenizer and parser) `decode.rs`, both walking nested tables with explicit stacks.

use super::{cast_i64, lua_tonumber, lua_tostring, type_name, LuaErr, SValue};

mod decode;
mod encode;
#[cfg(test)]
mod tests;

pub use decode::decode;
pub use encode::encode;

/// Lua 5.1's `LUAI_MAXCSTACK`: the stack slots a C function may use, which bounds nesting when
/// the depth limits are raised.
const MAX_C_STACK: usize = 8000;

/// The per-VM configuration `cjson.encode_*` / `cjson.decode_*` change.
#[derive(Clone, Debug, PartialEq)]
pub struct CjsonConfig {
    pub encode_sparse_convert: i32,
    pub encode_sparse_ratio: i32,
    pub encode_sparse_safe: i32,
    pub encode_max_depth: i32,
    pub decode_max_depth: i32,
    /// 0 off, 1 on, 2 "null".
    pub encode_invalid_numbers: i32,
    pub encode_number_precision: i32,
    pub encode_keep_buffer: i32,
    pub decode_invalid_numbers: i32,
}

impl Default for CjsonConfig {
    fn default() -> Self {
        CjsonConfig {
            encode_sparse_convert: 0,
            encode_sparse_ratio: 2,
            encode_sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            encode_number_precision: 14,
            encode_keep_buffer: 1,
            decode_invalid_numbers: 1,
        }
    }
}

/// `json_arg_init`: at most `n` arguments, the missing ones read as nil.
fn arg_init(args: &[SValue], n: usize) -> Result<Vec<SValue>, LuaErr> {
    if args.len() > n {
        return Err(LuaErr::Arg(n + 1, "found too many arguments".into()));
    }
    let mut v = args.to_vec();
    v.resize(n, SValue::Nil);
    Ok(v)
}

/// `json_integer_option`. Note the C code reports the range error on argument #1 whatever the index.
fn integer_option(
    args: &[SValue],
    idx: usize,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> Result<SValue, LuaErr> {
    let a = &args[idx - 1];
    if *a != SValue::Nil {
        // luaL_checkinteger, then stored in an int.
        let n = lua_tonumber(a).ok_or_else(|| {
            LuaErr::Arg(idx, format!("number expected, got {}", type_name(a)).into())
        })?;
        let value = cast_i64(n) as i32;
        if !(min <= value && value <= max) {
            return Err(LuaErr::Arg(
                1,
                format!("expected integer between {min} and {max}").into(),
            ));
        }
        *setting = value;
    }
    Ok(SValue::Num(*setting as f64))
}

/// `json_enum_option` with `bool_true == 1`; `options` defaults to `off`/`on`.
fn enum_option(
    args: &[SValue],
    idx: usize,
    setting: &mut i32,
    options: &[&str],
) -> Result<SValue, LuaErr> {
    let a = &args[idx - 1];
    match a {
        SValue::Nil => {}
        SValue::Bool(b) => *setting = *b as i32,
        _ => {
            let s = lua_tostring(a).ok_or_else(|| {
                LuaErr::Arg(idx, format!("string expected, got {}", type_name(a)).into())
            })?;
            match options.iter().position(|o| o.as_bytes() == s.as_slice()) {
                Some(p) => *setting = p as i32,
                None => {
                    return Err(LuaErr::Arg(
                        idx,
                        // luaL_checkoption formats the option with %s: a NUL ends it.
                        [
                            &b"invalid option '"[..],
                            s.split(|&c| c == 0).next().unwrap_or(&[]),
                            b"'",
                        ]
                        .concat(),
                    ));
                }
            }
        }
    }
    if *setting == 0 || *setting == 1 {
        Ok(SValue::Bool(*setting == 1))
    } else {
        Ok(SValue::Str(options[*setting as usize].as_bytes().to_vec()))
    }
}

const BOOL_OPTIONS: &[&str] = &["off", "on"];

impl CjsonConfig {
    /// `cjson.encode_sparse_array([convert[, ratio[, safe]]])` → `convert, ratio, safe`.
    pub fn encode_sparse_array(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 3)?;
        let c = enum_option(&a, 1, &mut self.encode_sparse_convert, BOOL_OPTIONS)?;
        let r = integer_option(&a, 2, &mut self.encode_sparse_ratio, 0, i32::MAX)?;
        let s = integer_option(&a, 3, &mut self.encode_sparse_safe, 0, i32::MAX)?;
        Ok(vec![c, r, s])
    }

    /// `cjson.encode_max_depth([n])` → the setting.
    pub fn set_encode_max_depth(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 1)?;
        Ok(vec![integer_option(
            &a,
            1,
            &mut self.encode_max_depth,
            1,
            i32::MAX,
        )?])
    }

    /// `cjson.decode_max_depth([n])` → the setting.
    pub fn set_decode_max_depth(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 1)?;
        Ok(vec![integer_option(
            &a,
            1,
            &mut self.decode_max_depth,
            1,
            i32::MAX,
        )?])
    }

    /// `cjson.encode_number_precision([n])` → the setting.
    pub fn set_encode_number_precision(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 1)?;
        Ok(vec![integer_option(
            &a,
            1,
            &mut self.encode_number_precision,
            1,
            14,
        )?])
    }

    /// `cjson.encode_keep_buffer([bool|"on"|"off"])` → the setting (no effect on output).
    pub fn set_encode_keep_buffer(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 1)?;
        Ok(vec![enum_option(
            &a,
            1,
            &mut self.encode_keep_buffer,
            BOOL_OPTIONS,
        )?])
    }

    /// `cjson.encode_invalid_numbers([bool|"on"|"off"|"null"])` → the setting.
    pub fn set_encode_invalid_numbers(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 1)?;
        Ok(vec![enum_option(
            &a,
            1,
            &mut self.encode_invalid_numbers,
            &["off", "on", "null"],
        )?])
    }

    /// `cjson.decode_invalid_numbers([bool|"on"|"off"])` → the setting.
    pub fn set_decode_invalid_numbers(&mut self, args: &[SValue]) -> Result<Vec<SValue>, LuaErr> {
        let a = arg_init(args, 1)?;
        Ok(vec![enum_option(
            &a,
            1,
            &mut self.decode_invalid_numbers,
            BOOL_OPTIONS,
        )?])
    }
}
