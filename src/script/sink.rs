//! The one converter from a script's result to the client's reply, for every engine (as
//! Dragonfly's `ObjectExplorer`): an engine walks its value into a `Sink`, one call per element
//! (`int`, `bulk`, `boolean`, `array` then the elements, ...), and the sink owns every conversion
//! rule, so no engine writes one again:
//! - a script's boolean: in RESP2 (the script's protocol, `redis.setresp`) true → 1 and
//!   false → nil, as Redis's Lua; a boolean in RESP3 (`boolean`; Tcl's tagged booleans differ,
//!   a true one staying a boolean in RESP2: `resp3_boolean`);
//! - a script's number replies what C's `(long long)` cast gives (`number`, `cast_i64`);
//! - `{err}` and `{ok}` replies are made one line (`error`, `status`);
//! - the nesting limit (`enter`, `leave`, `MAX_REPLY_DEPTH`);
//! - the client's protocol for the RESP3 types: a double is a bulk string, a map a flat array, a
//!   set an array, a big number or verbatim text a bulk string in RESP2 (the reply builder's
//!   `double`, `map`, `set`, ..., which the sink's methods of the same names call).
//!
//! Entry points: `Sink::new` over the client's `Reply`, then the visitor methods.

use crate::resp::reply::Reply;

/// The one converter from engine values to the client's reply (see the module's docs).
pub struct Sink<'a> {
    out: &'a mut Reply,
    depth: usize,
}

/// How deep a script's reply may nest before it is cut (an error), as Redis's Lua stack limit.
pub const MAX_REPLY_DEPTH: usize = 1000;

/// 2^63.
const TWO63: f64 = (1u64 << 63) as f64;

/// `(int64_t)x` as x86-64 computes it (`cvttsd2si`): out of range and NaN give `i64::MIN`.
pub fn cast_i64(x: f64) -> i64 {
    if x.is_nan() || !(-TWO63..TWO63).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

impl<'a> Sink<'a> {
    pub fn new(out: &'a mut Reply) -> Sink<'a> {
        Sink { out, depth: 0 }
    }

    /// Enters one level of nesting; false (after replying an error) when too deep.
    pub fn enter(&mut self) -> bool {
        if self.depth >= MAX_REPLY_DEPTH {
            self.out.error("ERR reached lua stack limit");
            return false;
        }
        self.depth += 1;
        true
    }

    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    /// An error reply from a script's `{err=...}`: the text as given (`{err="My Error"}` replies
    /// `-My Error`, as Redis does), made one line.
    pub fn error(&mut self, text: &[u8]) {
        self.out.error(&String::from_utf8_lossy(text));
    }

    /// An error reply the engine words itself (`ERR ... script: <sha>`).
    pub fn error_message(&mut self, text: &str) {
        self.out.error(text);
    }

    pub fn status(&mut self, text: &[u8]) {
        self.out.simple_bytes(text);
    }

    pub fn int(&mut self, n: i64) {
        self.out.int(n);
    }

    /// A script's number (a double in the engine): the integer C's `(long long)` cast gives, as
    /// Redis's Lua replies (NaN and out of range: `i64::MIN`).
    pub fn number(&mut self, d: f64) {
        self.out.int(cast_i64(d));
    }

    pub fn bulk(&mut self, b: &[u8]) {
        self.out.bulk(b);
    }

    pub fn null(&mut self) {
        self.out.null();
    }

    /// A script's boolean, by the script's protocol `resp`: in RESP2 true → 1 and false → nil, as
    /// Redis's Lua; in RESP3 a boolean (which a RESP2 client reads as 1 or 0).
    pub fn boolean(&mut self, b: bool, resp: u8) {
        match (resp, b) {
            (3, _) => self.resp3_boolean(b),
            (_, true) => self.out.int(1),
            (_, false) => self.out.null(),
        }
    }

    /// A RESP3 boolean (`#t`, `#f`), which a RESP2 client reads as 1 or 0 (Tcl's `{bool}` value,
    /// whatever the script's protocol, except a false one in RESP2: see `tcl/api.rs`).
    pub fn resp3_boolean(&mut self, b: bool) {
        self.out.bool(b);
    }

    /// A double: RESP3's double, its `%.17g` text as a bulk string in RESP2.
    pub fn double(&mut self, d: f64) {
        self.out.double(d);
    }

    pub fn big_number(&mut self, digits: &[u8]) {
        self.out.big_number(digits);
    }

    pub fn verbatim(&mut self, format: &[u8], text: &[u8]) {
        self.out.verbatim_as(format, text);
    }

    /// An array of `n` elements; the elements follow.
    pub fn array(&mut self, n: usize) {
        self.out.array(n);
    }

    /// A map of `n` pairs (a flat array of 2n in RESP2); key and value of each pair follow.
    pub fn map(&mut self, n: usize) {
        self.out.map(n);
    }

    /// A set of `n` elements (an array in RESP2); the elements follow.
    pub fn set(&mut self, n: usize) {
        self.out.set(n);
    }

    /// Where the reply stands now, for `truncate`.
    pub fn mark(&self) -> usize {
        self.out.buf.len()
    }

    /// Drops what was written after `mark` (a reply that failed half way).
    pub fn truncate(&mut self, mark: usize) {
        self.out.truncate(mark);
    }
}
