//! Conversions between bytes and JS values, and from a script's result to reply nodes.
//!
//! # Strings are Latin-1
//! A byte string becomes a JS string of the same length whose char codes are the bytes (0-255);
//! a JS string whose char codes are all 0-255 becomes those bytes. So every byte survives a round
//! trip, and ASCII is unchanged. A string holding a char above 255 (text the script made, say
//! `'€'`) cannot be Latin-1 and is sent UTF-8 encoded instead.
//!
//! # The result
//! `to_nodes` walks the returned value into `Out`, a flat pre-order list of reply nodes, while the
//! run is still set: reading a returned object can run script code (getters, proxies), which must
//! stay under the budget and must not write the reply half-way. `write` then feeds the nodes to
//! the `Sink`. The rules (the table in docs/commands/QUICKJS.EVAL.md):
//! - string → bulk; `Uint8Array` → bulk of its bytes; null/undefined → nil;
//! - boolean → 1/nil in RESP2 (the script's protocol, `redis.setresp`), a boolean in RESP3;
//! - number → integer when finite and within 64 bits, truncated toward zero (as Redis's Lua);
//!   NaN, ±Infinity and numbers beyond ±2^63 are errors (use `{double: x}` for a double);
//! - BigInt → integer if it fits in 64 bits, else a big number;
//! - Array → array (every index, holes and undefined as nil); `Map` → map; `Set` → set;
//! - `{err}` → error; `{ok}` → status; `{double}`, `{big_number}`, `{map}`, `{set}`,
//!   `{verbatim_string: {format, string}}` as Redis's Lua tables; an `Error` → error reply;
//! - anything else (a function, a symbol, another object) → an error.

use std::ffi::c_int;

use rquickjs_sys as q;

use super::vm::Names;
use crate::script::sink::{Sink, MAX_REPLY_DEPTH};

/// One reply node; aggregates are followed by their elements (maps: key, value, ...).
#[derive(Clone, Copy, Debug)]
pub enum Node {
    Int(i64),
    Bulk(usize, usize),
    Status(usize, usize),
    Error(usize, usize),
    Null,
    Bool(bool),
    Double(f64),
    BigNumber(usize, usize),
    Verbatim(usize, usize, usize),
    Array(usize),
    Map(usize),
    Set(usize),
}

/// The reply of one run, as nodes over one byte buffer.
#[derive(Default)]
pub struct Out {
    pub nodes: Vec<Node>,
    pub bytes: Vec<u8>,
}

impl Out {
    /// Empties the nodes, keeping the buffers for the next result unless a big one left them
    /// large.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.bytes.clear();
        if self.bytes.capacity() > super::vm::SCRATCH_MAX {
            self.bytes = Vec::new();
        }
        if self.nodes.capacity() * std::mem::size_of::<Node>() > super::vm::SCRATCH_MAX {
            self.nodes = Vec::new();
        }
    }

    fn push_bytes(&mut self, b: &[u8]) -> (usize, usize) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(b);
        (start, self.bytes.len())
    }

    pub fn error(&mut self, text: &[u8]) {
        let (s, e) = self.push_bytes(text);
        self.nodes.push(Node::Error(s, e));
    }

    /// Writes the nodes to the reply; `resp` is the script's protocol (for booleans).
    pub fn write(&self, sink: &mut Sink, resp: u8) {
        let mut i = 0;
        while i < self.nodes.len() {
            self.write_one(&mut i, sink, resp);
        }
    }

    fn write_one(&self, i: &mut usize, sink: &mut Sink, resp: u8) {
        let node = self.nodes[*i];
        *i += 1;
        let b = |s: usize, e: usize| &self.bytes[s..e];
        match node {
            Node::Int(n) => sink.int(n),
            Node::Bulk(s, e) => sink.bulk(b(s, e)),
            Node::Status(s, e) => sink.status(b(s, e)),
            Node::Error(s, e) => sink.error(b(s, e)),
            Node::Null => sink.null(),
            Node::Bool(v) => sink.boolean(v, resp),
            Node::Double(d) => sink.double(d),
            Node::BigNumber(s, e) => sink.big_number(b(s, e)),
            Node::Verbatim(s, m, e) => sink.verbatim(b(s, m), b(m, e)),
            Node::Array(n) | Node::Map(n) | Node::Set(n) => {
                // `to_nodes` cut the nesting at MAX_REPLY_DEPTH, so `enter` never refuses here.
                sink.enter();
                let items = match node {
                    Node::Array(_) => {
                        sink.array(n);
                        n
                    }
                    Node::Map(_) => {
                        sink.map(n);
                        2 * n
                    }
                    _ => {
                        sink.set(n);
                        n
                    }
                };
                for _ in 0..items {
                    self.write_one(i, sink, resp);
                }
                sink.leave();
            }
        }
    }
}

/// Appends the bytes of JS string `v` (Latin-1, or UTF-8 if it holds a char above 255) to `out`.
/// False (with an exception pending) if QuickJS could not read it.
///
/// # Safety
/// `v` is a value of `ctx`.
pub unsafe fn string_bytes(ctx: *mut q::JSContext, v: q::JSValue, out: &mut Vec<u8>) -> bool {
    let mut len: usize = 0;
    let p = q::JS_ToCStringLen(ctx, &mut len, v);
    if p.is_null() {
        return false;
    }
    let utf8 = std::slice::from_raw_parts(p as *const u8, len);
    utf8_to_latin1(utf8, out);
    q::JS_FreeCString(ctx, p);
    true
}

/// QuickJS hands strings out as UTF-8: char codes 0-255 come back as bytes when every char fits.
pub fn utf8_to_latin1(utf8: &[u8], out: &mut Vec<u8>) {
    if utf8.is_ascii() {
        out.extend_from_slice(utf8);
        return;
    }
    let start = out.len();
    let mut i = 0;
    while i < utf8.len() {
        let c = utf8[i];
        if c < 0x80 {
            out.push(c);
            i += 1;
        } else if (c == 0xC2 || c == 0xC3) && i + 1 < utf8.len() {
            out.push(((c & 0x03) << 6) | (utf8[i + 1] & 0x3F));
            i += 2;
        } else {
            // A char above 255: the whole string goes as UTF-8.
            out.truncate(start);
            out.extend_from_slice(utf8);
            return;
        }
    }
}

/// A new JS string whose char codes are `bytes` (QuickJS stores it as an 8-bit string).
///
/// # Safety
/// `ctx` is a live context; the result is owned by the caller (JS_EXCEPTION on failure).
pub unsafe fn new_string(
    ctx: *mut q::JSContext,
    bytes: &[u8],
    scratch: &mut Vec<u8>,
) -> q::JSValue {
    if bytes.is_ascii() {
        return q::JS_NewStringLen(ctx, bytes.as_ptr() as *const _, bytes.len() as q::size_t);
    }
    scratch.clear();
    for &b in bytes {
        if b < 0x80 {
            scratch.push(b);
        } else {
            scratch.push(0xC0 | (b >> 6));
            scratch.push(0x80 | (b & 0x3F));
        }
    }
    q::JS_NewStringLen(
        ctx,
        scratch.as_ptr() as *const _,
        scratch.len() as q::size_t,
    )
}

/// A JS number (an int when it fits 32 bits) for an integer reply; a BigInt when it is beyond
/// 2^53 (where doubles lose integers), so every integer arrives exact.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn new_integer(ctx: *mut q::JSContext, n: i64) -> q::JSValue {
    const SAFE: i64 = (1 << 53) - 1;
    if let Ok(i) = i32::try_from(n) {
        q::JS_MKVAL(q::JS_TAG_INT, i)
    } else if (-SAFE..=SAFE).contains(&n) {
        q::JS_NewFloat64(n as f64)
    } else {
        q::JS_NewBigInt64(ctx, n)
    }
}

/// The integer reply for a JS number: truncated toward zero; `None` if it has no 64-bit integer
/// value (NaN, ±Infinity, beyond ±2^63).
pub fn number_to_int(d: f64) -> Option<i64> {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if d.is_finite() && (-TWO63..TWO63).contains(&d) {
        // `as` truncates toward zero; -0 becomes 0.
        Some(d as i64)
    } else {
        None
    }
}

/// Reads property `atom` of `obj` (running getters: script code, under the budget).
unsafe fn get(ctx: *mut q::JSContext, obj: q::JSValue, atom: q::JSAtom) -> Result<q::JSValue, ()> {
    let v = q::JS_GetProperty(ctx, obj, atom);
    if q::JS_IsException(v) {
        Err(())
    } else {
        Ok(v)
    }
}

/// Converts `v` (borrowed) into nodes. `Err` when script code threw while it was read (the
/// exception is pending).
///
/// # Safety
/// `v` is a value of `ctx`; `names` belong to its VM.
pub unsafe fn to_nodes(
    ctx: *mut q::JSContext,
    names: &Names,
    v: q::JSValue,
    out: &mut Out,
    depth: usize,
) -> Result<(), ()> {
    let tag = q::JS_VALUE_GET_NORM_TAG(v);
    match tag {
        q::JS_TAG_STRING | q::JS_TAG_STRING_ROPE => {
            let start = out.bytes.len();
            if !string_bytes(ctx, v, &mut out.bytes) {
                return Err(());
            }
            out.nodes.push(Node::Bulk(start, out.bytes.len()));
        }
        q::JS_TAG_INT => out.nodes.push(Node::Int(q::JS_VALUE_GET_INT(v) as i64)),
        q::JS_TAG_FLOAT64 => {
            let d = q::JS_VALUE_GET_FLOAT64(v);
            match number_to_int(d) {
                Some(n) => out.nodes.push(Node::Int(n)),
                None => out.error(
                    format!(
                        "ERR QuickJS script returned {} which is not an integer (use {{double: x}} for a double reply)",
                        fmt_number(d)
                    )
                    .as_bytes(),
                ),
            }
        }
        q::JS_TAG_BOOL => out.nodes.push(Node::Bool(q::JS_VALUE_GET_BOOL(v))),
        q::JS_TAG_NULL | q::JS_TAG_UNDEFINED => out.nodes.push(Node::Null),
        q::JS_TAG_BIG_INT | q::JS_TAG_SHORT_BIG_INT => {
            let mut n: i64 = 0;
            let mut digits = Vec::new();
            if !string_bytes(ctx, v, &mut digits) {
                return Err(());
            }
            if q::JS_ToBigInt64(ctx, &mut n, v) == 0 && n.to_string().as_bytes() == &digits[..] {
                out.nodes.push(Node::Int(n));
            } else {
                let (s, e) = out.push_bytes(&digits);
                out.nodes.push(Node::BigNumber(s, e));
            }
        }
        q::JS_TAG_OBJECT => return object_nodes(ctx, names, v, out, depth),
        _ => out.error(b"ERR QuickJS script returned a value with no reply form (a symbol)"),
    }
    Ok(())
}

unsafe fn object_nodes(
    ctx: *mut q::JSContext,
    names: &Names,
    v: q::JSValue,
    out: &mut Out,
    depth: usize,
) -> Result<(), ()> {
    if depth >= MAX_REPLY_DEPTH {
        out.error(format!("ERR reply nested deeper than {MAX_REPLY_DEPTH} levels").as_bytes());
        return Ok(());
    }
    if q::JS_IsArray(v) {
        let mut len: i64 = 0;
        if q::JS_GetLength(ctx, v, &mut len) < 0 {
            return Err(());
        }
        return array_nodes(
            ctx,
            names,
            v,
            len as usize,
            Node::Array(len as usize),
            out,
            depth,
        );
    }
    if q::JS_GetTypedArrayType(v) == q::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8 as c_int {
        let mut len: q::size_t = 0;
        let p = q::JS_GetUint8Array(ctx, &mut len, v);
        if p.is_null() {
            return Err(());
        }
        let (s, e) = out.push_bytes(std::slice::from_raw_parts(p, len as usize));
        out.nodes.push(Node::Bulk(s, e));
        return Ok(());
    }
    if q::JS_IsMap(v) {
        return via_helper(ctx, names, names.map_entries, v, true, out, depth);
    }
    if q::JS_IsSet(v) {
        return via_helper(ctx, names, names.set_values, v, false, out, depth);
    }
    if q::JS_IsError(v) {
        let (text, _) = error_text(ctx, names, v);
        out.error(&with_code(text.as_bytes()));
        return Ok(());
    }
    if q::JS_IsFunction(ctx, v) {
        out.error(b"ERR QuickJS script returned a value with no reply form (a function)");
        return Ok(());
    }
    // The Redis Lua table forms, in Redis's order.
    let f = get(ctx, v, names.err)?;
    if q::JS_IsString(f) {
        return text_node(ctx, f, out, Node::Error);
    }
    q::JS_FreeValue(ctx, f);
    let f = get(ctx, v, names.ok)?;
    if q::JS_IsString(f) {
        return text_node(ctx, f, out, Node::Status);
    }
    q::JS_FreeValue(ctx, f);
    let f = get(ctx, v, names.double)?;
    if q::JS_IsNumber(f) {
        let mut d = 0.0;
        q::JS_ToFloat64(ctx, &mut d, f);
        out.nodes.push(Node::Double(d));
        return Ok(());
    }
    q::JS_FreeValue(ctx, f);
    let f = get(ctx, v, names.big_number)?;
    if q::JS_IsString(f) || q::JS_IsBigInt(f) {
        return text_node(ctx, f, out, Node::BigNumber);
    }
    q::JS_FreeValue(ctx, f);
    for (atom, is_map) in [(names.map, true), (names.set, false)] {
        let f = get(ctx, v, atom)?;
        if q::JS_IsObject(f) {
            let r = table_nodes(ctx, names, f, is_map, out, depth);
            q::JS_FreeValue(ctx, f);
            return r;
        }
        q::JS_FreeValue(ctx, f);
    }
    let f = get(ctx, v, names.verbatim_string)?;
    if q::JS_IsObject(f) {
        let format = get(ctx, f, names.format);
        let text = get(ctx, f, names.string);
        q::JS_FreeValue(ctx, f);
        let (format, text) = match (format, text) {
            (Ok(a), Ok(b)) => (a, b),
            (a, b) => {
                for x in [a, b].into_iter().flatten() {
                    q::JS_FreeValue(ctx, x);
                }
                return Err(());
            }
        };
        let s = out.bytes.len();
        let ok = q::JS_IsString(format)
            && q::JS_IsString(text)
            && string_bytes(ctx, format, &mut out.bytes)
            && {
                let m = out.bytes.len();
                let ok = string_bytes(ctx, text, &mut out.bytes);
                if ok {
                    out.nodes.push(Node::Verbatim(s, m, out.bytes.len()));
                }
                ok
            };
        q::JS_FreeValue(ctx, format);
        q::JS_FreeValue(ctx, text);
        if !ok {
            if q::JS_HasException(ctx) {
                return Err(());
            }
            out.error(b"ERR verbatim_string needs a format and a string");
        }
        return Ok(());
    }
    q::JS_FreeValue(ctx, f);
    out.error(b"ERR QuickJS script returned an object with no reply form (use an array, a Map, a Set, or {ok}, {err}, {double} ...)");
    Ok(())
}

/// The text of `f` (a string or a BigInt, freed here) as the node `node` makes of its bytes.
unsafe fn text_node(
    ctx: *mut q::JSContext,
    f: q::JSValue,
    out: &mut Out,
    node: fn(usize, usize) -> Node,
) -> Result<(), ()> {
    let start = out.bytes.len();
    let ok = string_bytes(ctx, f, &mut out.bytes);
    q::JS_FreeValue(ctx, f);
    if !ok {
        return Err(());
    }
    out.nodes.push(node(start, out.bytes.len()));
    Ok(())
}

/// The elements `0..len` of array-like `v` after the aggregate node `head`.
unsafe fn array_nodes(
    ctx: *mut q::JSContext,
    names: &Names,
    v: q::JSValue,
    len: usize,
    head: Node,
    out: &mut Out,
    depth: usize,
) -> Result<(), ()> {
    out.nodes.push(head);
    for i in 0..len {
        let e = q::JS_GetPropertyUint32(ctx, v, i as u32);
        if q::JS_IsException(e) {
            return Err(());
        }
        let r = to_nodes(ctx, names, e, out, depth + 1);
        q::JS_FreeValue(ctx, e);
        r?;
    }
    Ok(())
}

/// A JS Map or Set, flattened by a prelude helper into an array first.
unsafe fn via_helper(
    ctx: *mut q::JSContext,
    names: &Names,
    helper: q::JSValue,
    v: q::JSValue,
    is_map: bool,
    out: &mut Out,
    depth: usize,
) -> Result<(), ()> {
    let mut args = [v];
    let flat = q::JS_Call(ctx, helper, q::JS_UNDEFINED, 1, args.as_mut_ptr());
    if q::JS_IsException(flat) {
        return Err(());
    }
    let mut len: i64 = 0;
    if q::JS_GetLength(ctx, flat, &mut len) < 0 {
        q::JS_FreeValue(ctx, flat);
        return Err(());
    }
    let len = len as usize;
    let head = if is_map {
        Node::Map(len / 2)
    } else {
        Node::Set(len)
    };
    let r = array_nodes(ctx, names, flat, len, head, out, depth);
    q::JS_FreeValue(ctx, flat);
    r
}

/// `{map: ...}` and `{set: ...}`: a Map, Set or array as themselves; a plain object by its own
/// enumerable string keys (`{map: {a: 1}}`, and `{set: {a: true}}` as Redis's Lua writes sets).
unsafe fn table_nodes(
    ctx: *mut q::JSContext,
    names: &Names,
    t: q::JSValue,
    is_map: bool,
    out: &mut Out,
    depth: usize,
) -> Result<(), ()> {
    if q::JS_IsMap(t) && is_map {
        return via_helper(ctx, names, names.map_entries, t, true, out, depth + 1);
    }
    if !is_map && q::JS_IsSet(t) {
        return via_helper(ctx, names, names.set_values, t, false, out, depth + 1);
    }
    if !is_map && q::JS_IsArray(t) {
        let mut len: i64 = 0;
        if q::JS_GetLength(ctx, t, &mut len) < 0 {
            return Err(());
        }
        let len = len as usize;
        return array_nodes(ctx, names, t, len, Node::Set(len), out, depth + 1);
    }
    let mut tab: *mut q::JSPropertyEnum = std::ptr::null_mut();
    let mut count: u32 = 0;
    if q::JS_GetOwnPropertyNames(
        ctx,
        &mut tab,
        &mut count,
        t,
        (q::JS_GPN_STRING_MASK | q::JS_GPN_ENUM_ONLY) as c_int,
    ) < 0
    {
        return Err(());
    }
    let props = std::slice::from_raw_parts(tab, count as usize);
    out.nodes.push(if is_map {
        Node::Map(props.len())
    } else {
        Node::Set(props.len())
    });
    let mut result = Ok(());
    for p in props {
        let key = q::JS_AtomToString(ctx, p.atom);
        if q::JS_IsException(key) {
            result = Err(());
            break;
        }
        let start = out.bytes.len();
        let ok = string_bytes(ctx, key, &mut out.bytes);
        q::JS_FreeValue(ctx, key);
        if !ok {
            result = Err(());
            break;
        }
        out.nodes.push(Node::Bulk(start, out.bytes.len()));
        if is_map {
            let val = q::JS_GetProperty(ctx, t, p.atom);
            if q::JS_IsException(val) {
                result = Err(());
                break;
            }
            let r = to_nodes(ctx, names, val, out, depth + 2);
            q::JS_FreeValue(ctx, val);
            if r.is_err() {
                result = r;
                break;
            }
        }
    }
    q::JS_FreePropertyEnum(ctx, tab, count);
    result
}

fn fmt_number(d: f64) -> String {
    if d.is_nan() {
        "NaN".into()
    } else if d.is_infinite() {
        if d > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{d}")
    }
}

/// Whether `text` starts with an error code: an upper-case word (`ERR`, `WRONGTYPE`, `MY_CODE`)
/// followed by a space.
pub fn has_code(text: &[u8]) -> bool {
    let word = text.iter().take_while(|&&c| c != b' ').count();
    word > 0
        && word < text.len()
        && text[0].is_ascii_uppercase()
        && text[..word]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
}

/// `text` with the `ERR ` code in front unless it carries its own.
pub fn with_code(text: &[u8]) -> Vec<u8> {
    if has_code(text) {
        text.to_vec()
    } else {
        [b"ERR ", text].concat()
    }
}

/// Property `atom` of `obj` when it is a string (read without running into an error: a getter
/// that throws counts as absent).
///
/// # Safety
/// `obj` is a value of `ctx` (borrowed).
pub unsafe fn string_property(
    ctx: *mut q::JSContext,
    obj: q::JSValue,
    atom: q::JSAtom,
) -> Option<Vec<u8>> {
    let v = match get(ctx, obj, atom) {
        Ok(v) => v,
        Err(()) => {
            let x = q::JS_GetException(ctx);
            q::JS_FreeValue(ctx, x);
            return None;
        }
    };
    let mut out = Vec::new();
    let ok = q::JS_IsString(v) && string_bytes(ctx, v, &mut out);
    q::JS_FreeValue(ctx, v);
    if !ok && q::JS_HasException(ctx) {
        let x = q::JS_GetException(ctx);
        q::JS_FreeValue(ctx, x);
    }
    ok.then_some(out)
}

/// What a thrown value says: for an `Error`, `message` (or `Name: message` for the other error
/// types, `TypeError: x is not a function`), with the script line from its stack when there is
/// one; for anything else its string form. Never fails (reading may run script code; an error
/// there gives a generic text).
///
/// # Safety
/// `e` is a value of `ctx` (borrowed).
pub unsafe fn error_text(
    ctx: *mut q::JSContext,
    names: &Names,
    e: q::JSValue,
) -> (String, Option<u32>) {
    if !q::JS_IsObject(e) {
        return (debug_string(ctx, e), None);
    }
    if !q::JS_IsError(e) {
        // A thrown plain object: its `message` if it has one.
        let text = match string_property(ctx, e, names.message) {
            Some(m) => String::from_utf8_lossy(&m).into_owned(),
            None => debug_string(ctx, e),
        };
        return (text, None);
    }
    let prop = |atom| -> String {
        match get(ctx, e, atom) {
            Ok(v) => {
                let s = if q::JS_IsUndefined(v) {
                    String::new()
                } else {
                    debug_string(ctx, v)
                };
                q::JS_FreeValue(ctx, v);
                s
            }
            Err(()) => {
                let x = q::JS_GetException(ctx);
                q::JS_FreeValue(ctx, x);
                String::new()
            }
        }
    };
    let name = prop(names.name);
    let message = prop(names.message);
    let stack = prop(names.stack);
    // A script's file is `user_script`, a function library's `user_function`.
    let at = ["user_script:", "user_function:"]
        .iter()
        .find_map(|file| stack.split(file).nth(1));
    let line = at.and_then(|rest| {
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    });
    let text = if name.is_empty() || name == "Error" {
        message
    } else {
        format!("{name}: {message}")
    };
    (text, line)
}

/// The string form of any value (Latin-1 bytes shown as text), for messages; the empty string if
/// it cannot be had.
///
/// # Safety
/// `v` is a value of `ctx` (borrowed).
pub unsafe fn debug_string(ctx: *mut q::JSContext, v: q::JSValue) -> String {
    let mut bytes = Vec::new();
    if !string_bytes(ctx, v, &mut bytes) {
        let x = q::JS_GetException(ctx);
        q::JS_FreeValue(ctx, x);
        return String::new();
    }
    String::from_utf8(bytes).unwrap_or_else(|e| e.into_bytes().iter().map(|&b| b as char).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_round_trip_and_utf8_fallback() {
        let mut out = Vec::new();
        utf8_to_latin1("a\u{e9}\u{ff}\u{0}".as_bytes(), &mut out);
        assert_eq!(out, b"a\xe9\xff\x00");
        out.clear();
        utf8_to_latin1("\u{e9}\u{20ac}".as_bytes(), &mut out);
        assert_eq!(out, "\u{e9}\u{20ac}".as_bytes());
    }

    #[test]
    fn numbers_to_integers() {
        assert_eq!(number_to_int(-3.7), Some(-3));
        assert_eq!(number_to_int(-0.0), Some(0));
        assert_eq!(number_to_int(9007199254740992.0), Some(1 << 53));
        assert_eq!(number_to_int(f64::NAN), None);
        assert_eq!(number_to_int(f64::INFINITY), None);
        assert_eq!(number_to_int(9.3e18), None);
        assert_eq!(number_to_int(-9223372036854775808.0), Some(i64::MIN));
    }

    #[test]
    fn error_codes() {
        assert!(has_code(b"WRONGTYPE Operation"));
        assert!(has_code(b"MY_CODE x"));
        assert!(!has_code(b"TypeError: x"));
        assert!(!has_code(b"oops"));
        assert!(!has_code(b"ERR"));
        assert_eq!(with_code(b"oops"), b"ERR oops");
    }
}
