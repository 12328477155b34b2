//! `cjson.decode`: JSON text to a value graph, as Lua CJSON's tokenizer and parser (with Redis's
//! depth and invalid-number settings).

use super::super::{strtod, Graph, LuaErr, SValue, TableBuilder};
use super::{CjsonConfig, MAX_C_STACK};

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
