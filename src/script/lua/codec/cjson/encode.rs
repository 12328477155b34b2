//! `cjson.encode`: a value graph to JSON text, as Lua CJSON's encoder (numbers by the configured
//! precision, sparse arrays and depth by the configuration).

use std::collections::HashMap;

use super::super::{cast_i32, fmt_g, type_name, Graph, LuaErr, SValue, NIL};
use super::{CjsonConfig, MAX_C_STACK};

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
