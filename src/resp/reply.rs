//! The reply builder: the only code that writes protocol bytes. Every helper knows the client's
//! protocol version, so a handler says "a map of n" or "null" and gets `%n` / `_` under RESP3 and a
//! doubled `*2n` / `$-1` under RESP2, as Redis's `addReply*` family does.

use crate::util::{fmt_g17_buf, fmt_i64, G17_LEN};

#[derive(Default)]
pub struct Reply {
    pub buf: Vec<u8>,
    pub resp3: bool,
    /// Error codes (`ERR`, `WRONGTYPE`, ...) of the error replies added since last drained, for
    /// INFO errorstats and commandstats' failed_calls.
    pub errors: Vec<String>,
    /// Set while the command writing here has its reply silenced (CLIENT REPLY OFF or SKIP):
    /// pushes written meanwhile are noted in `kept`, as they still go out (Redis's CLIENT_PUSHING).
    silenced: bool,
    kept: Vec<(usize, usize)>,
}

/// Canned errors, worded as Redis's `shared.*` objects.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INT: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const SYNTAX: &str = "ERR syntax error";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const DB_INDEX: &str = "ERR DB index is out of range";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";

impl Reply {
    pub fn new(resp3: bool) -> Reply {
        Reply {
            buf: Vec::with_capacity(512),
            resp3,
            errors: Vec::new(),
            silenced: false,
            kept: Vec::new(),
        }
    }

    /// Starts (or ends) a command whose reply `drop_silenced` will drop.
    pub fn silence(&mut self, on: bool) {
        self.silenced = on;
        if on {
            self.kept.clear();
        }
    }

    /// Writes a pub/sub push (a subscription confirmation or a message) through `write`: it is
    /// delivered even when the command's reply is silenced (`drop_silenced`).
    pub fn pushed(&mut self, write: impl FnOnce(&mut Reply)) {
        let start = self.buf.len();
        write(self);
        if self.silenced {
            self.kept.push((start, self.buf.len()));
        }
    }

    /// Drops what a silenced command wrote since `mark`, but for its pushes.
    pub fn drop_silenced(&mut self, mark: usize) {
        let mut end = mark;
        for (from, to) in self.kept.drain(..) {
            if from >= mark {
                self.buf.copy_within(from..to, end);
                end += to - from;
            }
        }
        self.buf.truncate(end);
    }

    #[inline]
    fn line(&mut self, prefix: u8, n: i64) {
        let mut tmp = [0u8; 20];
        self.buf.push(prefix);
        self.buf.extend_from_slice(fmt_i64(n, &mut tmp));
        self.buf.extend_from_slice(b"\r\n");
    }

    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }

    /// A status reply (`+text`).
    pub fn simple(&mut self, s: &str) {
        self.simple_bytes(s.as_bytes());
    }

    pub fn simple_bytes(&mut self, s: &[u8]) {
        self.buf.push(b'+');
        self.buf.extend(
            s.iter()
                .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
        self.buf.extend_from_slice(b"\r\n");
    }

    /// An error reply. `msg` starts with its code (`ERR ...`, `WRONGTYPE ...`); newlines become spaces,
    /// as Redis makes sure an error is one protocol line.
    pub fn error(&mut self, msg: &str) {
        let code = msg.split(' ').next().unwrap_or("ERR");
        self.errors.push(code.to_string());
        self.buf.push(b'-');
        self.buf.extend(
            msg.bytes()
                .map(|c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
        self.buf.extend_from_slice(b"\r\n");
    }

    /// An `ERR`-coded error from a formatted message.
    pub fn err(&mut self, msg: impl AsRef<str>) {
        self.error(&format!("ERR {}", msg.as_ref()));
    }

    pub fn int(&mut self, n: i64) {
        self.line(b':', n);
    }

    pub fn bulk(&mut self, s: &[u8]) {
        self.line(b'$', s.len() as i64);
        self.buf.extend_from_slice(s);
        self.buf.extend_from_slice(b"\r\n");
    }

    pub fn bulk_str(&mut self, s: &str) {
        self.bulk(s.as_bytes());
    }

    pub fn bulk_int(&mut self, n: i64) {
        let mut tmp = [0u8; 20];
        let digits = fmt_i64(n, &mut tmp);
        self.line(b'$', digits.len() as i64);
        self.buf.extend_from_slice(digits);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// A missing value: `$-1` (RESP2) or `_` (RESP3).
    pub fn null(&mut self) {
        self.buf
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }

    /// A missing aggregate: `*-1` (RESP2) or `_` (RESP3).
    pub fn null_array(&mut self) {
        self.buf
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"*-1\r\n" });
    }

    pub fn array(&mut self, n: usize) {
        self.line(b'*', n as i64);
    }

    /// A map of `n` pairs: `%n` (RESP3) or a flat array of 2n (RESP2).
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.line(b'%', n as i64);
        } else {
            self.line(b'*', 2 * n as i64);
        }
    }

    pub fn set(&mut self, n: usize) {
        self.line(if self.resp3 { b'~' } else { b'*' }, n as i64);
    }

    pub fn push(&mut self, n: usize) {
        self.line(if self.resp3 { b'>' } else { b'*' }, n as i64);
    }

    /// A double: `,d` (RESP3) or its `%.17g` text as a bulk string (RESP2).
    pub fn double(&mut self, d: f64) {
        let mut buf = [0u8; G17_LEN];
        self.double_bytes(fmt_g17_buf(d, &mut buf));
    }

    /// A double already formatted (GEOPOS's coordinates use Redis's `%.17f`-and-trim form): the
    /// RESP3 double `,text`, a bulk string in RESP2.
    pub fn double_text(&mut self, text: &str) {
        self.double_bytes(text.as_bytes());
    }

    fn double_bytes(&mut self, text: &[u8]) {
        if self.resp3 {
            self.buf.push(b',');
            self.buf.extend_from_slice(text);
            self.buf.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text);
        }
    }

    pub fn bool(&mut self, b: bool) {
        if self.resp3 {
            self.buf
                .extend_from_slice(if b { b"#t\r\n" } else { b"#f\r\n" });
        } else {
            self.int(b as i64);
        }
    }

    /// Verbatim text (`=len\r\ntxt:...`, RESP3) or a plain bulk string (RESP2), as INFO and CLIENT
    /// LIST reply.
    pub fn verbatim(&mut self, text: &[u8]) {
        self.verbatim_as(b"txt", text);
    }

    /// Verbatim text of a given three-letter format (`txt`, `mkd`).
    pub fn verbatim_as(&mut self, format: &[u8], text: &[u8]) {
        if self.resp3 {
            self.line(b'=', text.len() as i64 + 4);
            self.buf.extend_from_slice(format);
            self.buf.push(b':');
            self.buf.extend_from_slice(text);
            self.buf.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text);
        }
    }

    /// A big number: `(digits` (RESP3) or the digits as a bulk string (RESP2).
    pub fn big_number(&mut self, digits: &[u8]) {
        if self.resp3 {
            self.buf.push(b'(');
            self.buf.extend_from_slice(digits);
            self.buf.extend_from_slice(b"\r\n");
        } else {
            self.bulk(digits);
        }
    }

    /// A list of bulk strings.
    pub fn bulks<'a>(&mut self, items: impl ExactSizeIterator<Item = &'a [u8]>) {
        self.array(items.len());
        for it in items {
            self.bulk(it);
        }
    }

    /// A help reply: a list of status lines, as Redis's `addReplyHelp`.
    pub fn help(&mut self, container: &str, lines: &[&str]) {
        self.array(lines.len() + 3);
        self.simple(&format!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            container
        ));
        for l in lines {
            self.simple(l);
        }
        self.simple("HELP");
        self.simple("    Prints this help.");
    }

    /// Replaces everything after `mark` (used to discard a partial reply).
    pub fn truncate(&mut self, mark: usize) {
        self.buf.truncate(mark);
    }
}
