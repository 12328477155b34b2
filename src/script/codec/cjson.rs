//! `cjson` as Redis 7.0 ships it (Lua CJSON 2.1.0 with Redis's patches): `encode`, `decode`, and
//! the configuration functions, over the value graph.
//!
//! Glue contract: `cjson.encode(v)` and `cjson.decode(s)` take exactly one argument, else raise
//! `LuaErr::Arg(1, "expected 1 argument")`; `decode`'s argument goes through `luaL_checklstring`
//! (numbers become `%.14g` strings, other types raise `Arg(1, "string expected, got <type>")`).
//! The configuration functions take the raw Lua arguments and return the values to push.

use std::collections::HashMap;

use super::{
    cast_i32, cast_i64, fmt_g, lua_tonumber, lua_tostring, strtod, type_name, Graph, LuaErr,
    SValue, TableBuilder, NIL,
};

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

// ===== Encoding =====

fn escape(c: u8) -> Option<&'static str> {
    Some(match c {
        0x08 => "\\b",
        b'\t' => "\\t",
        b'\n' => "\\n",
        0x0c => "\\f",
        b'\r' => "\\r",
        b'"' => "\\\"",
        b'\\' => "\\\\",
        b'/' => "\\/",
        _ => return None,
    })
}

fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        if let Some(e) = escape(c) {
            out.extend_from_slice(e.as_bytes());
        } else if c < 0x20 || c == 0x7f {
            out.extend_from_slice(format!("\\u{:04x}", c).as_bytes());
        } else {
            out.push(c);
        }
    }
    out.push(b'"');
}

struct Encoder<'a> {
    cfg: &'a CjsonConfig,
    g: &'a Graph,
    out: Vec<u8>,
}

impl<'a> Encoder<'a> {
    fn number(&mut self, x: f64) -> Result<(), LuaErr> {
        match self.cfg.encode_invalid_numbers {
            0 => {
                if !x.is_finite() {
                    return Err(LuaErr::Error(
                        "Cannot serialise number: must not be NaN or Inf".into(),
                    ));
                }
            }
            1 => {
                if x.is_nan() {
                    self.out.extend_from_slice(b"nan");
                    return Ok(());
                }
            }
            _ => {
                if !x.is_finite() {
                    self.out.extend_from_slice(b"null");
                    return Ok(());
                }
            }
        }
        let s = fmt_g(x, self.cfg.encode_number_precision as usize);
        self.out.extend_from_slice(s.as_bytes());
        Ok(())
    }

    /// `lua_array_length`: the array size, or None for an object.
    fn array_length(&self, t: usize) -> Result<Option<i32>, LuaErr> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        for (k, _) in self.g.pairs(t) {
            match k {
                SValue::Num(k) if *k != 0.0 && k.floor() == *k && *k >= 1.0 => {
                    if *k > max as f64 {
                        max = cast_i32(*k);
                    }
                    items = items.wrapping_add(1);
                }
                _ => return Ok(None),
            }
        }
        let c = self.cfg;
        if c.encode_sparse_ratio > 0
            && max > items.wrapping_mul(c.encode_sparse_ratio)
            && max > c.encode_sparse_safe
        {
            if c.encode_sparse_convert == 0 {
                return Err(LuaErr::Error(
                    "Cannot serialise table: excessively sparse array".into(),
                ));
            }
            return Ok(None);
        }
        Ok(Some(max))
    }

    /// Appends an object key (`"k":`), or fails as cjson does for other key types.
    fn key(&mut self, k: &SValue) -> Result<(), LuaErr> {
        match k {
            SValue::Num(x) => {
                self.out.push(b'"');
                self.number(*x)?;
                self.out.extend_from_slice(b"\":");
            }
            SValue::Str(s) => {
                append_string(&mut self.out, s);
                self.out.push(b':');
            }
            other => {
                return Err(LuaErr::Error(
                    format!(
                        "Cannot serialise {}: table key must be a number or string",
                        type_name(other)
                    )
                    .into(),
                ));
            }
        }
        Ok(())
    }

    /// `json_append_data` for `v`, nested tables walked with an explicit stack. `used` counts the
    /// Lua stack slots the C encoder holds at each point (its `lua_checkstack` bounds nesting).
    fn value(&mut self, v: &'a SValue) -> Result<(), LuaErr> {
        let g = self.g;
        let mut stack: Vec<EncFrame<'a>> = Vec::new();
        let (mut cur, mut depth, mut used) = (v, 0i32, 1usize);
        loop {
            match cur {
                SValue::Str(s) => append_string(&mut self.out, s),
                SValue::Num(x) => self.number(*x)?,
                SValue::Bool(b) => self
                    .out
                    .extend_from_slice(if *b { b"true" } else { b"false" }),
                SValue::Nil | SValue::Null => self.out.extend_from_slice(b"null"),
                SValue::Other(t) => {
                    return Err(LuaErr::Error(
                        format!("Cannot serialise {t}: type not supported").into(),
                    ));
                }
                SValue::Table(t) => {
                    let depth = depth + 1;
                    if depth > self.cfg.encode_max_depth || used + 3 > MAX_C_STACK {
                        return Err(LuaErr::Error(
                            format!("Cannot serialise, excessive nesting ({depth})").into(),
                        ));
                    }
                    let pairs = g.pairs(*t);
                    match self.array_length(*t)? {
                        Some(len) if len > 0 => {
                            let mut by_index: HashMap<i64, &'a SValue> = HashMap::new();
                            for (k, v) in pairs {
                                if let SValue::Num(k) = k {
                                    by_index.insert(*k as i64, v);
                                }
                            }
                            self.out.push(b'[');
                            stack.push(EncFrame {
                                pairs,
                                by_index: Some(by_index),
                                len: len as usize,
                                i: 0,
                                depth,
                                used,
                            });
                        }
                        _ => {
                            self.out.push(b'{');
                            stack.push(EncFrame {
                                pairs,
                                by_index: None,
                                len: pairs.len(),
                                i: 0,
                                depth,
                                used,
                            });
                        }
                    }
                }
            }
            // The next value to append, closing finished tables.
            loop {
                let Some(f) = stack.last_mut() else {
                    return Ok(());
                };
                let array = f.by_index.is_some();
                if f.i == f.len {
                    self.out.push(if array { b']' } else { b'}' });
                    stack.pop();
                    continue;
                }
                if f.i > 0 {
                    self.out.push(b',');
                }
                f.i += 1;
                depth = f.depth;
                if let Some(by_index) = &f.by_index {
                    cur = by_index.get(&(f.i as i64)).copied().unwrap_or(&NIL);
                    used = f.used + 1;
                } else {
                    let (k, v) = &f.pairs[f.i - 1];
                    cur = v;
                    used = f.used + 2;
                    self.key(k)?;
                }
                break;
            }
        }
    }
}

/// A table being encoded: an array (`by_index` set, items 1..=len) or an object (its pairs).
struct EncFrame<'a> {
    pairs: &'a [(SValue, SValue)],
    by_index: Option<HashMap<i64, &'a SValue>>,
    len: usize,
    i: usize,
    depth: i32,
    used: usize,
}

/// `cjson.encode(v)`: the JSON text, or the error `luaL_error` would raise (`LuaErr::Error`).
pub fn encode(cfg: &CjsonConfig, g: &Graph, v: &SValue) -> Result<Vec<u8>, LuaErr> {
    let mut e = Encoder {
        cfg,
        g,
        out: Vec::new(),
    };
    e.value(v)?;
    Ok(e.out)
}

// ===== Decoding =====

#[derive(Debug, PartialEq)]
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Tok {
    fn name(&self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(m) => m,
        }
    }
}

struct Parser<'a> {
    cfg: &'a CjsonConfig,
    data: &'a [u8],
    ptr: usize,
    depth: i32,
    g: Graph,
}

fn hex4(d: &[u8], at: usize) -> Option<u32> {
    let mut v = 0;
    for i in 0..4 {
        let c = d.get(at + i).copied().unwrap_or(0);
        v = (v << 4) | (c as char).to_digit(16)?;
    }
    Some(v)
}

fn push_utf8(out: &mut Vec<u8>, cp: u32) {
    if cp <= 0x7f {
        out.push(cp as u8);
    } else if cp <= 0x7ff {
        out.extend_from_slice(&[(cp >> 6) as u8 | 0xc0, (cp & 0x3f) as u8 | 0x80]);
    } else if cp <= 0xffff {
        out.extend_from_slice(&[
            (cp >> 12) as u8 | 0xe0,
            ((cp >> 6) & 0x3f) as u8 | 0x80,
            (cp & 0x3f) as u8 | 0x80,
        ]);
    } else {
        out.extend_from_slice(&[
            (cp >> 18) as u8 | 0xf0,
            ((cp >> 12) & 0x3f) as u8 | 0x80,
            ((cp >> 6) & 0x3f) as u8 | 0x80,
            (cp & 0x3f) as u8 | 0x80,
        ]);
    }
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    /// `json_is_invalid_number` at the current position.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.ptr;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        // `*p <= '9'` on a signed char: bytes >= 0x80 are negative.
        if c <= b'9' || c >= 0x80 {
            return false;
        }
        let ci = |w: &[u8]| (0..3).all(|k| self.at(p + k).to_ascii_lowercase() == w[k]);
        ci(b"inf") || ci(b"nan")
    }

    fn number_token(&mut self) -> (Tok, usize) {
        let start = self.ptr;
        let (v, n) = strtod(&self.data[start.min(self.data.len())..]);
        if n == 0 {
            return (Tok::Error("invalid number"), start);
        }
        self.ptr += n;
        (Tok::Num(v), start)
    }

    fn string_token(&mut self) -> (Tok, usize) {
        self.ptr += 1;
        let mut s = Vec::new();
        loop {
            let ch = self.at(self.ptr);
            if ch == b'"' {
                break;
            }
            if ch == 0 {
                return (Tok::Error("unexpected end of string"), self.ptr);
            }
            if ch == b'\\' {
                let e = self.at(self.ptr + 1);
                let c = match e {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'u' => {
                        if self.unicode_escape(&mut s) {
                            continue;
                        }
                        return (Tok::Error("invalid unicode escape code"), self.ptr);
                    }
                    _ => return (Tok::Error("invalid escape code"), self.ptr),
                };
                s.push(c);
                self.ptr += 2;
                continue;
            }
            s.push(ch);
            self.ptr += 1;
        }
        self.ptr += 1;
        (Tok::Str(s), 0)
    }

    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let p = self.ptr;
        let Some(mut cp) = hex4(self.data, p + 2) else {
            return false;
        };
        let mut len = 6;
        if cp & 0xf800 == 0xd800 {
            if cp & 0x400 != 0 {
                return false;
            }
            if self.at(p + 6) != b'\\' || self.at(p + 7) != b'u' {
                return false;
            }
            let Some(low) = hex4(self.data, p + 8) else {
                return false;
            };
            if low & 0xfc00 != 0xdc00 {
                return false;
            }
            cp = (((cp & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
            len = 12;
        }
        push_utf8(out, cp);
        self.ptr += len;
        true
    }

    /// The next token and the (0-based) index errors report for it.
    fn next(&mut self) -> (Tok, usize) {
        while matches!(self.at(self.ptr), b' ' | b'\t' | b'\n' | b'\r') {
            self.ptr += 1;
        }
        let i = self.ptr;
        let single = match self.at(i) {
            b'{' => Some(Tok::ObjBegin),
            b'}' => Some(Tok::ObjEnd),
            b'[' => Some(Tok::ArrBegin),
            b']' => Some(Tok::ArrEnd),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            0 => return (Tok::End, i),
            _ => None,
        };
        if let Some(t) = single {
            self.ptr += 1;
            return (t, i);
        }
        let ch = self.at(i);
        let rest = &self.data[i..];
        if ch == b'"' {
            let (t, ei) = self.string_token();
            let at = if matches!(t, Tok::Error(_)) { ei } else { i };
            return (t, at);
        }
        if ch == b'-' || ch.is_ascii_digit() {
            if self.cfg.decode_invalid_numbers == 0 && self.is_invalid_number() {
                return (Tok::Error("invalid number"), i);
            }
            return self.number_token();
        }
        if rest.starts_with(b"true") {
            self.ptr += 4;
            return (Tok::Bool(true), i);
        }
        if rest.starts_with(b"false") {
            self.ptr += 5;
            return (Tok::Bool(false), i);
        }
        if rest.starts_with(b"null") {
            self.ptr += 4;
            return (Tok::Null, i);
        }
        // Only the characters cjson marks T_UNKNOWN reach the invalid-number path.
        if matches!(ch, b'i' | b'I' | b'n' | b'N' | b'+')
            && self.cfg.decode_invalid_numbers != 0
            && self.is_invalid_number()
        {
            return self.number_token();
        }
        (Tok::Error("invalid token"), i)
    }

    fn fail(&self, expected: &str, tok: &Tok, index: usize) -> LuaErr {
        LuaErr::Error(
            format!(
                "Expected {expected} but found {} at character {}",
                tok.name(),
                index + 1
            )
            .into(),
        )
    }

    fn descend(&mut self, used: usize, slots: usize) -> Result<(), LuaErr> {
        self.depth += 1;
        if self.depth <= self.cfg.decode_max_depth && used + slots <= MAX_C_STACK {
            return Ok(());
        }
        Err(LuaErr::Error(
            format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth, self.ptr
            )
            .into(),
        ))
    }

    /// After an object's `{` or `,`: reads `"key" :` and the value's first token, leaving the key
    /// in the frame.
    fn object_entry(&mut self, f: &mut Frame) -> Result<(Tok, usize), LuaErr> {
        let tok = self.next();
        let Tok::Str(key) = tok.0 else {
            return Err(self.fail("object key string", &tok.0, tok.1));
        };
        let colon = self.next();
        if colon.0 != Tok::Colon {
            return Err(self.fail("colon", &colon.0, colon.1));
        }
        f.key = Some(key);
        Ok(self.next())
    }

    /// `json_process_value` for the token `tok`, with the nested arrays and objects parsed on an
    /// explicit stack (in cjson's order, so errors and depth checks come out the same).
    fn value(&mut self, mut tok: (Tok, usize), mut used: usize) -> Result<SValue, LuaErr> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let mut v = match tok.0 {
                Tok::Str(s) => SValue::Str(s),
                Tok::Num(n) => SValue::Num(n),
                Tok::Bool(b) => SValue::Bool(b),
                Tok::Null => SValue::Null,
                Tok::ObjBegin | Tok::ArrBegin => {
                    let obj = tok.0 == Tok::ObjBegin;
                    self.descend(used, if obj { 3 } else { 2 })?;
                    let id = self.g.add(Vec::new());
                    let mut f = Frame {
                        id,
                        obj,
                        used,
                        key: None,
                        t: TableBuilder::default(),
                        n: 0,
                    };
                    // Peek for an empty container: `{}` / `[]`.
                    let save = self.ptr;
                    let first = self.next();
                    let empty = if obj {
                        first.0 == Tok::ObjEnd
                    } else {
                        first.0 == Tok::ArrEnd
                    };
                    if empty {
                        self.depth -= 1;
                        SValue::Table(id)
                    } else {
                        if obj {
                            self.ptr = save;
                            tok = self.object_entry(&mut f)?;
                            used = f.used + 2;
                        } else {
                            tok = first;
                            used = f.used + 1;
                        }
                        stack.push(f);
                        continue;
                    }
                }
                t => return Err(self.fail("value", &t, tok.1)),
            };
            // Store `v` in the enclosing containers, closing the ones that end here.
            loop {
                let Some(f) = stack.last_mut() else {
                    return Ok(v);
                };
                if f.obj {
                    let key = f.key.take().unwrap_or_default();
                    f.t.set(SValue::Str(key), v);
                } else {
                    f.n += 1;
                    f.t.set(SValue::Num(f.n as f64), v);
                }
                let sep = self.next();
                let close = if f.obj { Tok::ObjEnd } else { Tok::ArrEnd };
                if sep.0 == close {
                    let f = stack.pop().expect("frame");
                    self.depth -= 1;
                    self.g.tables[f.id] = f.t.finish();
                    v = SValue::Table(f.id);
                    continue;
                }
                if sep.0 != Tok::Comma {
                    let what = if f.obj {
                        "comma or object end"
                    } else {
                        "comma or array end"
                    };
                    return Err(self.fail(what, &sep.0, sep.1));
                }
                if f.obj {
                    tok = self.object_entry(f)?;
                    used = f.used + 2;
                } else {
                    tok = self.next();
                    used = f.used + 1;
                }
                break;
            }
        }
    }
}

/// An array or object being parsed.
struct Frame {
    id: usize,
    obj: bool,
    /// Lua stack slots in use before the table was pushed.
    used: usize,
    /// The key whose value is being parsed (objects).
    key: Option<Vec<u8>>,
    t: TableBuilder,
    /// Items so far (arrays).
    n: usize,
}

/// `cjson.decode(text)`: the graph of created tables and the decoded value (JSON `null` is
/// [`SValue::Null`]), or the error `luaL_error` would raise (`LuaErr::Error`). The text is read as
/// a C string: a NUL byte ends it.
pub fn decode(cfg: &CjsonConfig, text: &[u8]) -> Result<(Graph, SValue), LuaErr> {
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(LuaErr::Error(
            "JSON parser does not support UTF-16 or UTF-32".into(),
        ));
    }
    let data = match text.iter().position(|&c| c == 0) {
        Some(n) => &text[..n],
        None => text,
    };
    let mut p = Parser {
        cfg,
        data,
        ptr: 0,
        depth: 0,
        g: Graph::default(),
    };
    let first = p.next();
    let v = p.value(first, 1)?;
    let end = p.next();
    if end.0 != Tok::End {
        return Err(p.fail("the end", &end.0, end.1));
    }
    Ok((p.g, v))
}

#[cfg(test)]
mod tests {
    //! Every expected output and error text below was recorded from Redis 7.0.15
    //! (`redis-cli eval "return cjson.encode(...)" 0` and friends).
    use super::*;

    fn num(x: f64) -> SValue {
        SValue::Num(x)
    }

    fn s(x: &str) -> SValue {
        SValue::Str(x.as_bytes().to_vec())
    }

    fn enc(g: &Graph, v: &SValue) -> Result<String, LuaErr> {
        encode(&CjsonConfig::default(), g, v).map(|b| String::from_utf8(b).unwrap())
    }

    fn err(m: &str) -> Result<String, LuaErr> {
        Err(LuaErr::Error(m.as_bytes().to_vec()))
    }

    /// A graph holding one table with `pairs`.
    fn table(pairs: Vec<(SValue, SValue)>) -> (Graph, SValue) {
        let mut g = Graph::default();
        let t = g.add(pairs);
        (g, SValue::Table(t))
    }

    fn int_keys(keys: &[f64]) -> (Graph, SValue) {
        table(keys.iter().map(|k| (num(*k), num(*k))).collect())
    }

    #[test]
    fn encode_scalars() {
        let g = Graph::default();
        assert_eq!(enc(&g, &SValue::Nil), Ok("null".into()));
        assert_eq!(enc(&g, &SValue::Null), Ok("null".into()));
        assert_eq!(enc(&g, &SValue::Bool(true)), Ok("true".into()));
        assert_eq!(enc(&g, &s("")), Ok("\"\"".into()));
        assert_eq!(enc(&g, &num(-1e-300)), Ok("-1e-300".into()));
        assert_eq!(enc(&g, &num(2147483648.0)), Ok("2147483648".into()));
        assert_eq!(
            enc(&g, &SValue::Other("function")),
            err("Cannot serialise function: type not supported")
        );
        assert_eq!(
            enc(&g, &SValue::Other("thread")),
            err("Cannot serialise thread: type not supported")
        );
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                enc(&g, &num(bad)),
                err("Cannot serialise number: must not be NaN or Inf")
            );
        }
    }

    #[test]
    fn encode_numbers() {
        let xs = [
            1e20,
            1.5,
            -0.0,
            -0.0,
            -1.0,
            123456789012345.0,
            12345678901234.0,
            0.1,
            1.0 / 3.0,
            1e-5,
            1e-4,
            123.456e-10,
            9007199254740992.0,
            -9223372036854775808.0,
            1e308,
            5e-324,
            1e14,
            1e15,
            0.00001234,
        ];
        let (g, t) = table(
            xs.iter()
                .enumerate()
                .map(|(i, x)| (num(i as f64 + 1.0), num(*x)))
                .collect(),
        );
        assert_eq!(
            enc(&g, &t),
            Ok("[1e+20,1.5,-0,-0,-1,1.2345678901234e+14,12345678901234,0.1,0.33333333333333,1e-05,0.0001,\
                1.23456e-08,9.007199254741e+15,-9.2233720368548e+18,1e+308,4.9406564584125e-324,1e+14,1e+15,\
                1.234e-05]"
                .into())
        );
    }

    #[test]
    fn encode_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let out = encode(
            &CjsonConfig::default(),
            &Graph::default(),
            &SValue::Str(all.clone()),
        )
        .unwrap();
        let mut want = b"\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\
\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f \
!\\\"#$%&'()*+,-.\\/0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\\u007f"
            .to_vec();
        want.extend(0x80..=0xffu8);
        want.push(b'"');
        assert_eq!(out, want);
        // Round trip.
        let (_, v) = decode(&CjsonConfig::default(), &out).unwrap();
        assert_eq!(v, SValue::Str(all));
    }

    #[test]
    fn encode_tables() {
        let mut g = Graph::default();
        let inner = g.add(vec![(s("a"), num(1.0))]);
        let outer = g.add(vec![
            (num(1.0), num(1.0)),
            (num(2.0), num(2.0)),
            (num(3.0), SValue::Table(inner)),
        ]);
        assert_eq!(enc(&g, &SValue::Table(outer)), Ok("[1,2,{\"a\":1}]".into()));
        let (g, t) = table(vec![]);
        assert_eq!(enc(&g, &t), Ok("{}".into()));
        let (g, t) = int_keys(&[1.0, 2.0, 4.0]);
        assert_eq!(enc(&g, &t), Ok("[1,2,null,4]".into()));
        let (g, t) = table(vec![(num(1.0), num(1.0)), (num(10.0), num(2.0))]);
        assert_eq!(
            enc(&g, &t),
            Ok("[1,null,null,null,null,null,null,null,null,2]".into())
        );
        let (g, t) = table(vec![(num(3.0), num(3.0))]);
        assert_eq!(enc(&g, &t), Ok("[null,null,3]".into()));
        let (g, t) = int_keys(&[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
        assert_eq!(
            enc(&g, &t),
            Ok("[1,null,3,null,5,null,7,null,9,null,11]".into())
        );
        let (g, t) = int_keys(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 20.0]);
        assert_eq!(
            enc(&g, &t),
            Ok("[1,2,3,4,5,6,7,8,9,10,null,null,null,null,null,null,null,null,null,20]".into())
        );
        // Non-array keys.
        for (k, want) in [
            (0.0, "{\"0\":1}"),
            (1.5, "{\"1.5\":1}"),
            (-1.0, "{\"-1\":1}"),
            (1e10, "{\"10000000000\":1}"),
        ] {
            let (g, t) = table(vec![(num(k), num(1.0))]);
            assert_eq!(enc(&g, &t), Ok(want.into()));
        }
        // {[1e10]=1,[1]=2}: lua_next visits 1e10 first; (int)1e10 is INT_MIN, so the 1 wins.
        let (g, t) = table(vec![(num(1e10), num(1.0)), (num(1.0), num(2.0))]);
        assert_eq!(enc(&g, &t), Ok("[2]".into()));
        let (g, t) = table(vec![(num(1.0), num(1.0)), (s("a"), num(2.0))]);
        assert_eq!(enc(&g, &t), Ok("{\"1\":1,\"a\":2}".into()));
        let (g, t) = table(vec![
            (num(1.0), num(1.0)),
            (num(2.0), num(2.0)),
            (num(2.5), num(3.0)),
        ]);
        assert_eq!(enc(&g, &t), Ok("{\"1\":1,\"2\":2,\"2.5\":3}".into()));
        let mut g = Graph::default();
        let x = g.add(vec![(s("x"), SValue::Bool(true))]);
        let e = g.add(vec![]);
        let t = g.add(vec![
            (num(1.0), num(1.0)),
            (num(2.0), s("a")),
            (num(3.0), SValue::Table(x)),
            (num(4.0), SValue::Table(e)),
            (num(5.0), SValue::Null),
        ]);
        assert_eq!(
            enc(&g, &SValue::Table(t)),
            Ok("[1,\"a\",{\"x\":true},{},null]".into())
        );
    }

    #[test]
    fn encode_errors() {
        let sparse = err("Cannot serialise table: excessively sparse array");
        for keys in [&[1.0, 11.0][..], &[2.0, 3.0, 4.0, 5.0, 12.0], &[1.0, 30.0]] {
            let (g, t) = int_keys(keys);
            assert_eq!(enc(&g, &t), sparse);
        }
        let (g, t) = table(vec![(SValue::Bool(true), num(1.0))]);
        assert_eq!(
            enc(&g, &t),
            err("Cannot serialise boolean: table key must be a number or string")
        );
        let (g, t) = table(vec![(num(f64::INFINITY), num(1.0))]);
        assert_eq!(
            enc(&g, &t),
            err("Cannot serialise number: must not be NaN or Inf")
        );
        let (g, t) = table(vec![(s("a"), SValue::Other("function"))]);
        assert_eq!(
            enc(&g, &t),
            err("Cannot serialise function: type not supported")
        );
    }

    #[test]
    fn encode_nesting() {
        // t[1] = t and t.a = t.
        let mut g = Graph::default();
        g.add(vec![(num(1.0), SValue::Table(0))]);
        g.add(vec![(s("a"), SValue::Table(1))]);
        assert_eq!(
            enc(&g, &SValue::Table(0)),
            err("Cannot serialise, excessive nesting (1001)")
        );
        assert_eq!(
            enc(&g, &SValue::Table(1)),
            err("Cannot serialise, excessive nesting (1001)")
        );
        // 1000 nested tables encode, 1001 do not.
        for (levels, ok) in [(1000, true), (1001, false)] {
            let mut g = Graph::default();
            for i in 0..levels {
                let pairs = if i + 1 < levels {
                    vec![(num(1.0), SValue::Table(i + 1))]
                } else {
                    vec![]
                };
                g.add(pairs);
            }
            let r = enc(&g, &SValue::Table(0));
            if ok {
                assert_eq!(
                    r.unwrap(),
                    format!("{}{{}}{}", "[".repeat(999), "]".repeat(999))
                );
            } else {
                assert_eq!(r, err("Cannot serialise, excessive nesting (1001)"));
            }
        }
    }

    #[test]
    fn encode_raised_limits_hit_the_lua_stack() {
        // encode_max_depth(100000): the C stack limit stops cycles at 7998 (arrays) / 4000 (objects).
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(|| {
                let cfg = CjsonConfig {
                    encode_max_depth: 100000,
                    ..CjsonConfig::default()
                };
                let mut g = Graph::default();
                g.add(vec![(num(1.0), SValue::Table(0))]);
                g.add(vec![(s("a"), SValue::Table(1))]);
                fn e<T>(m: &str) -> Result<T, LuaErr> {
                    Err(LuaErr::Error(m.into()))
                }
                assert_eq!(
                    encode(&cfg, &g, &SValue::Table(0)),
                    e("Cannot serialise, excessive nesting (7998)")
                );
                assert_eq!(
                    encode(&cfg, &g, &SValue::Table(1)),
                    e("Cannot serialise, excessive nesting (4000)")
                );
                let cfg = CjsonConfig {
                    decode_max_depth: 100000,
                    ..CjsonConfig::default()
                };
                let r = decode(&cfg, "[".repeat(9000).as_bytes()).map(|_| ());
                assert_eq!(
                    r,
                    e("Found too many nested data structures (7999) at character 7999")
                );
                let r = decode(&cfg, "{\"a\":".repeat(9000).as_bytes()).map(|_| ());
                assert_eq!(
                    r,
                    e("Found too many nested data structures (4000) at character 19996")
                );
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn encode_settings() {
        let mut g = Graph::default();
        let t = g.add(vec![
            (num(1.0), num(f64::NAN)),
            (num(2.0), num(f64::INFINITY)),
            (num(3.0), num(f64::NEG_INFINITY)),
            (num(4.0), num(1.5)),
        ]);
        let t = SValue::Table(t);
        let mut cfg = CjsonConfig::default();
        cfg.set_encode_invalid_numbers(&[SValue::Bool(true)])
            .unwrap();
        assert_eq!(encode(&cfg, &g, &t).unwrap(), b"[nan,inf,-inf,1.5]");
        cfg.set_encode_invalid_numbers(&[s("null")]).unwrap();
        assert_eq!(encode(&cfg, &g, &t).unwrap(), b"[null,null,null,1.5]");

        let mut cfg = CjsonConfig::default();
        let (g, t) = table(
            [std::f64::consts::PI, 1234.5, 0.0001234, 100.0]
                .iter()
                .enumerate()
                .map(|(i, x)| (num(i as f64 + 1.0), num(*x)))
                .collect(),
        );
        cfg.set_encode_number_precision(&[num(3.0)]).unwrap();
        assert_eq!(
            encode(&cfg, &g, &t).unwrap(),
            b"[3.14,1.23e+03,0.000123,100]"
        );
        let (g, t) = table(vec![
            (num(1.0), num(std::f64::consts::PI)),
            (num(2.0), num(15.0)),
            (num(3.0), num(0.05)),
        ]);
        cfg.set_encode_number_precision(&[num(1.0)]).unwrap();
        assert_eq!(encode(&cfg, &g, &t).unwrap(), b"[3,2e+01,0.05]");

        let (g, t) = table(vec![(num(1.0), num(1.0)), (num(11.0), num(2.0))]);
        let mut cfg = CjsonConfig::default();
        cfg.encode_sparse_array(&[SValue::Bool(true)]).unwrap();
        assert_eq!(encode(&cfg, &g, &t).unwrap(), b"{\"1\":1,\"11\":2}");
        let (g, t) = table(vec![(num(1.0), num(1.0)), (num(13.0), num(2.0))]);
        let want = b"[1,null,null,null,null,null,null,null,null,null,null,null,2]";
        let mut cfg = CjsonConfig::default();
        cfg.encode_sparse_array(&[SValue::Bool(false), num(0.0)])
            .unwrap();
        assert_eq!(encode(&cfg, &g, &t).unwrap(), want);
        let mut cfg = CjsonConfig::default();
        cfg.encode_sparse_array(&[SValue::Bool(false), num(2.0), num(20.0)])
            .unwrap();
        assert_eq!(encode(&cfg, &g, &t).unwrap(), want);

        let mut cfg = CjsonConfig::default();
        cfg.set_encode_max_depth(&[num(2.0)]).unwrap();
        let mut g = Graph::default();
        let a = g.add(vec![(num(1.0), num(1.0))]);
        let b = g.add(vec![(num(1.0), SValue::Table(a))]);
        let c = g.add(vec![(num(1.0), SValue::Table(b))]);
        assert_eq!(encode(&cfg, &g, &SValue::Table(b)).unwrap(), b"[[1]]");
        assert_eq!(
            encode(&cfg, &g, &SValue::Table(c)),
            Err(LuaErr::Error(
                "Cannot serialise, excessive nesting (3)".into()
            ))
        );
    }

    fn dec(text: &str) -> Result<(Graph, SValue), LuaErr> {
        decode(&CjsonConfig::default(), text.as_bytes())
    }

    fn dec_err(text: &[u8]) -> String {
        match decode(&CjsonConfig::default(), text) {
            Err(LuaErr::Error(m)) => String::from_utf8(m).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn decode_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "{",
                "Expected object key string but found T_END at character 2",
            ),
            ("", "Expected value but found T_END at character 1"),
            (" ", "Expected value but found T_END at character 2"),
            (
                "[1,2",
                "Expected comma or array end but found T_END at character 5",
            ),
            (
                "[1 2]",
                "Expected comma or array end but found T_NUMBER at character 4",
            ),
            (
                "{\"a\" 1}",
                "Expected colon but found T_NUMBER at character 6",
            ),
            (
                "{\"a\":1 \"b\"}",
                "Expected comma or object end but found T_STRING at character 8",
            ),
            (
                "{1:2}",
                "Expected object key string but found T_NUMBER at character 2",
            ),
            ("[1,]", "Expected value but found T_ARR_END at character 4"),
            ("[,]", "Expected value but found T_COMMA at character 2"),
            ("}", "Expected value but found T_OBJ_END at character 1"),
            (
                "tru",
                "Expected value but found invalid token at character 1",
            ),
            (
                "nul",
                "Expected value but found invalid token at character 1",
            ),
            ("x", "Expected value but found invalid token at character 1"),
            ("1 2", "Expected the end but found T_NUMBER at character 3"),
            (
                "\"abc",
                "Expected value but found unexpected end of string at character 5",
            ),
            (
                "\"\\x\"",
                "Expected value but found invalid escape code at character 2",
            ),
            (
                "\"\\u12\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"\\uD800\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"\\uDC00\\uD800\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"\\uD800\\u0041\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"\\u00\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"\\uZZZZ\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"\\",
                "Expected value but found invalid escape code at character 2",
            ),
            (
                "[1,\"x\\q\"]",
                "Expected value but found invalid escape code at character 6",
            ),
            (
                ".5",
                "Expected value but found invalid token at character 1",
            ),
            (
                "-",
                "Expected value but found invalid number at character 1",
            ),
            (
                "-x",
                "Expected value but found invalid number at character 1",
            ),
            (
                "+",
                "Expected value but found invalid number at character 1",
            ),
            (
                "+x",
                "Expected value but found invalid number at character 1",
            ),
            (
                "+-1",
                "Expected value but found invalid number at character 1",
            ),
            (
                "1e",
                "Expected the end but found invalid token at character 2",
            ),
            (
                "0x",
                "Expected the end but found invalid token at character 2",
            ),
            (
                "nan(",
                "Expected the end but found invalid token at character 4",
            ),
            (
                "infinit",
                "Expected the end but found invalid token at character 4",
            ),
            (
                "5\x0b",
                "Expected the end but found invalid token at character 2",
            ),
            (
                "[true",
                "Expected comma or array end but found T_END at character 6",
            ),
            (
                "[1}",
                "Expected comma or array end but found T_OBJ_END at character 3",
            ),
            (
                "{\"a\":1]",
                "Expected comma or object end but found T_ARR_END at character 7",
            ),
            (
                "{\"a\":}",
                "Expected value but found T_OBJ_END at character 6",
            ),
            ("{\"a\"", "Expected colon but found T_END at character 5"),
        ];
        for (text, want) in cases {
            assert_eq!(dec_err(text.as_bytes()), *want, "{text:?}");
        }
        assert_eq!(
            dec_err(b"\"a\0b\""),
            "Expected value but found unexpected end of string at character 3"
        );
        assert_eq!(
            dec_err(b"\0a"),
            "JSON parser does not support UTF-16 or UTF-32"
        );
        assert_eq!(
            dec_err(b"a\0"),
            "JSON parser does not support UTF-16 or UTF-32"
        );
        let nest = |open: &str, n: usize| dec_err(open.repeat(n).as_bytes());
        assert_eq!(
            nest("[", 1001),
            "Found too many nested data structures (1001) at character 1001"
        );
        assert_eq!(
            nest("{\"a\":", 1001),
            "Found too many nested data structures (1001) at character 5001"
        );
        assert_eq!(
            nest(" [", 1001),
            "Found too many nested data structures (1001) at character 2002"
        );
    }

    #[test]
    fn decode_values() {
        assert_eq!(dec("null").unwrap().1, SValue::Null);
        assert_eq!(dec("true").unwrap().1, SValue::Bool(true));
        assert_eq!(dec("\t\r\n 5").unwrap().1, num(5.0));
        assert_eq!(dec("\"\\u0000\"").unwrap().1, SValue::Str(vec![0]));
        assert_eq!(dec("\"\x01\x1f\"").unwrap().1, SValue::Str(vec![1, 31]));
        assert_eq!(
            dec("\"\\u00e9\\uD83D\\uDE00\\u0041\\/\\b\\f\\n\\r\\t\\\"\\\\\"")
                .unwrap()
                .1,
            s("é😀A/\x08\x0c\n\r\t\"\\")
        );
        assert_eq!(
            decode(&CjsonConfig::default(), b"[1]\0junk")
                .unwrap()
                .0
                .tables[0],
            vec![(num(1.0), num(1.0))]
        );
        let (g, v) = dec("  [ true , false ]  ").unwrap();
        assert_eq!(v, SValue::Table(0));
        assert_eq!(
            g.tables[0],
            vec![
                (num(1.0), SValue::Bool(true)),
                (num(2.0), SValue::Bool(false))
            ]
        );
        let (g, v) = dec("{\"a\":[1,{\"b\":null}],\"c\":\"\\u20ac\"}").unwrap();
        assert_eq!(
            String::from_utf8(encode(&CjsonConfig::default(), &g, &v).unwrap()).unwrap(),
            "{\"a\":[1,{\"b\":null}],\"c\":\"€\"}"
        );
        let (g, _) = dec("{\"a\":1,\"a\":2}").unwrap();
        assert_eq!(g.tables[0], vec![(s("a"), num(2.0))]);
        let ok = dec(&format!("[{}{}", "[".repeat(999), "]".repeat(1000))).unwrap();
        assert_eq!(ok.0.tables.len(), 1000);
    }

    #[test]
    fn decode_numbers() {
        // Values Redis printed with %.17g after cjson.decode.
        let cases: &[(&str, f64)] = &[
            ("1.5e3", 1500.0),
            ("-0", -0.0),
            ("1e400", f64::INFINITY),
            ("-1e400", f64::NEG_INFINITY),
            ("0x10", 16.0),
            ("+5", 5.0),
            ("inf", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("INF", f64::INFINITY),
            ("007", 7.0),
            ("-007", -7.0),
            ("1.", 1.0),
            ("-0x1F", -31.0),
            ("1E2", 100.0),
            ("1e-400", 0.0),
            ("0x1P-2", 0.25),
            ("0x1.8p1", 3.0),
            ("0X1f", 31.0),
            ("0x.8", 0.5),
            ("-.5", -0.5),
            ("+.5", 0.5),
            ("123456789012345678901234567890", 1.2345678901234568e29),
            ("5e-324", 5e-324),
            ("1.7976931348623157e308", f64::MAX),
            ("1.7976931348623159e308", f64::INFINITY),
            ("0x1fffffffffffff1", 144115188075855856.0),
        ];
        for (text, want) in cases {
            let v = dec(text).unwrap().1;
            assert_eq!(v, num(*want), "{text}");
            if *want == 0.0 {
                assert_eq!(v, num(*want));
                let SValue::Num(x) = v else { unreachable!() };
                assert_eq!(x.is_sign_negative(), want.is_sign_negative(), "{text}");
            }
        }
        for text in ["nan", "NAN", "nAn(123)", "-nan"] {
            let SValue::Num(x) = dec(text).unwrap().1 else {
                panic!()
            };
            assert!(x.is_nan());
            assert_eq!(x.is_sign_negative(), text.starts_with('-'));
        }
        // decode_invalid_numbers(false)
        let cfg = CjsonConfig {
            decode_invalid_numbers: 0,
            ..CjsonConfig::default()
        };
        let cases: &[(&str, &str)] = &[
            (
                "0x10",
                "Expected value but found invalid number at character 1",
            ),
            (
                "+5",
                "Expected value but found invalid token at character 1",
            ),
            (
                "inf",
                "Expected value but found invalid token at character 1",
            ),
            (
                "nan",
                "Expected value but found invalid token at character 1",
            ),
            (
                "-inf",
                "Expected value but found invalid number at character 1",
            ),
            (
                "007",
                "Expected value but found invalid number at character 1",
            ),
            (
                "-007",
                "Expected value but found invalid number at character 1",
            ),
            (
                "Infinity",
                "Expected value but found invalid token at character 1",
            ),
            (
                "-",
                "Expected value but found invalid number at character 1",
            ),
            (
                "-x",
                "Expected value but found invalid number at character 1",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                decode(&cfg, text.as_bytes()).map(|_| ()),
                Err(LuaErr::Error(want.as_bytes().to_vec())),
                "{text}"
            );
        }
        assert_eq!(decode(&cfg, b"1.5").unwrap().1, num(1.5));
        assert_eq!(decode(&cfg, b"0").unwrap().1, num(0.0));
        // decode_max_depth(2)
        let cfg = CjsonConfig {
            decode_max_depth: 2,
            ..CjsonConfig::default()
        };
        let e = |t: &str| decode(&cfg, t.as_bytes()).map(|_| ());
        assert_eq!(
            e("[[[1]]]"),
            Err(LuaErr::Error(
                "Found too many nested data structures (3) at character 3".into()
            ))
        );
        assert_eq!(
            e("{\"a\":{\"b\":{}}}"),
            Err(LuaErr::Error(
                "Found too many nested data structures (3) at character 11".into()
            ))
        );
    }

    #[test]
    fn config_functions() {
        let mut c = CjsonConfig::default();
        let arg = |n: usize, m: &str| Err(LuaErr::Arg(n, m.as_bytes().to_vec()));
        assert_eq!(c.set_encode_max_depth(&[]), Ok(vec![num(1000.0)]));
        assert_eq!(c.set_encode_max_depth(&[num(5.0)]), Ok(vec![num(5.0)]));
        assert_eq!(
            c.set_encode_max_depth(&[num(0.0)]),
            arg(1, "expected integer between 1 and 2147483647")
        );
        assert_eq!(
            c.set_encode_max_depth(&[s("x")]),
            arg(1, "number expected, got string")
        );
        assert_eq!(
            c.set_encode_max_depth(&[num(1.0), num(2.0)]),
            arg(2, "found too many arguments")
        );
        assert_eq!(c.set_encode_max_depth(&[num(2.7)]), Ok(vec![num(2.0)]));
        assert_eq!(c.set_decode_max_depth(&[]), Ok(vec![num(1000.0)]));
        assert_eq!(c.set_encode_number_precision(&[]), Ok(vec![num(14.0)]));
        assert_eq!(
            c.set_encode_number_precision(&[num(15.0)]),
            arg(1, "expected integer between 1 and 14")
        );
        assert_eq!(
            c.set_encode_number_precision(&[num(3.0)]),
            Ok(vec![num(3.0)])
        );

        let mut c = CjsonConfig::default();
        assert_eq!(
            c.encode_sparse_array(&[]),
            Ok(vec![SValue::Bool(false), num(2.0), num(10.0)])
        );
        assert_eq!(
            c.encode_sparse_array(&[SValue::Bool(true)]),
            Ok(vec![SValue::Bool(true), num(2.0), num(10.0)])
        );
        assert_eq!(
            c.encode_sparse_array(&[num(1.0)]),
            arg(1, "invalid option '1'")
        );
        assert_eq!(
            c.encode_sparse_array(&[s("on")]),
            Ok(vec![SValue::Bool(true), num(2.0), num(10.0)])
        );
        assert_eq!(
            c.encode_sparse_array(&[s("x")]),
            arg(1, "invalid option 'x'")
        );
        assert_eq!(
            c.encode_sparse_array(&[SValue::Nil, num(-1.0)]),
            arg(1, "expected integer between 0 and 2147483647")
        );
        assert_eq!(
            c.encode_sparse_array(&[SValue::Nil, num(3.0), num(4.0), num(5.0)]),
            arg(4, "found too many arguments")
        );

        let mut c = CjsonConfig::default();
        assert_eq!(c.set_encode_keep_buffer(&[]), Ok(vec![SValue::Bool(true)]));
        assert_eq!(
            c.set_encode_keep_buffer(&[SValue::Bool(false)]),
            Ok(vec![SValue::Bool(false)])
        );
        assert_eq!(
            c.set_encode_keep_buffer(&[s("on")]),
            Ok(vec![SValue::Bool(true)])
        );
        assert_eq!(
            c.set_encode_keep_buffer(&[s("off")]),
            Ok(vec![SValue::Bool(false)])
        );
        assert_eq!(
            c.set_encode_invalid_numbers(&[]),
            Ok(vec![SValue::Bool(false)])
        );
        assert_eq!(
            c.set_encode_invalid_numbers(&[s("null")]),
            Ok(vec![s("null")])
        );
        assert_eq!(
            c.set_encode_invalid_numbers(&[SValue::Bool(true)]),
            Ok(vec![SValue::Bool(true)])
        );
        assert_eq!(
            c.set_encode_invalid_numbers(&[s("maybe")]),
            arg(1, "invalid option 'maybe'")
        );
        assert_eq!(
            c.set_encode_invalid_numbers(&[num(5.0)]),
            arg(1, "invalid option '5'")
        );
        assert_eq!(
            c.set_decode_invalid_numbers(&[]),
            Ok(vec![SValue::Bool(true)])
        );
        assert_eq!(
            c.set_decode_invalid_numbers(&[s("on")]),
            Ok(vec![SValue::Bool(true)])
        );
    }
}
