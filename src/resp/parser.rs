//! The request parser: RESP multibulk (`*N\r\n$len\r\n...`) and telnet-style inline commands, read in
//! place from a client's query buffer. Multibulk arguments are spans into the query buffer (no copy);
//! inline arguments, which may carry quotes and escapes, are unescaped into a side buffer.
//!
//! Limits and error texts follow Redis's `processMultibulkBuffer` / `processInlineBuffer` exactly, so
//! a client sees the same `-ERR Protocol error: ...` (after which the connection is closed).
//!
//! Parsing is incremental: a command split across reads resumes where it stopped, so a 512 MB bulk or
//! a million-argument command is scanned once, not once per read.

use memchr::memchr2;

use crate::util::parse_i64;

/// The longest inline request, or length line, Redis accepts before it finds the line end.
pub const PROTO_INLINE_MAX_SIZE: usize = 64 * 1024;

/// The index of the first `\r` at or after `from`: a byte loop over the few bytes of the length
/// lines every request is made of (cheaper than a vector search's set-up), memchr past them. A NUL
/// byte first means no line end yet, as Redis's `strchr` on its query buffer sees it.
fn line_end(q: &[u8], from: usize) -> Option<usize> {
    const SHORT: usize = 16;
    let short = &q[from..q.len().min(from + SHORT)];
    if let Some(i) = short.iter().position(|&c| c == b'\r' || c == 0) {
        return (short[i] == b'\r').then_some(from + i);
    }
    if short.len() < SHORT {
        return None;
    }
    let i = memchr2(b'\r', 0, &q[from + SHORT..])? + from + SHORT;
    (q[i] == b'\r').then_some(i)
}

/// `<marker><digits>\r` at `pos` with 1 to 9 digits and no leading zero, and the two bytes after
/// the `\r` in the buffer: the number and where the line's data starts. One pass over the few
/// bytes of the common case; anything else (a sign, a zero, a long or unfinished line) is `None`,
/// for the general path to take with its exact errors. Like the general path (and Redis), the byte
/// after `\r` is taken as the `\n` without being checked.
#[inline]
fn short_header(q: &[u8], pos: usize, marker: u8) -> Option<(usize, usize)> {
    let line = q.get(pos..)?;
    if line.first() != Some(&marker) || !matches!(line.get(1), Some(b'1'..=b'9')) {
        return None;
    }
    let (mut n, mut i) = (0usize, 1);
    while i < line.len().min(11) {
        let c = line[i];
        if c.is_ascii_digit() {
            n = n * 10 + usize::from(c - b'0');
            i += 1;
        } else {
            return (c == b'\r' && line.len() >= i + 2).then_some((n, pos + i + 2));
        }
    }
    None
}

pub struct Limits {
    pub proto_max_bulk_len: i64,
    /// Before AUTH, Redis refuses large multibulk and bulk lengths.
    pub unauthenticated: bool,
}

pub enum Parsed {
    /// A whole command: its arguments are `Parser::args`.
    Command,
    /// More bytes are needed.
    Incomplete,
    /// A protocol error: reply `-ERR <msg>` and close.
    Error(String),
}

#[derive(Default)]
pub struct Parser {
    /// Where the next unparsed byte is.
    pos: usize,
    /// Where the command being parsed started (everything before it is consumed).
    cmd_start: usize,
    /// Arguments still expected in the current multibulk; 0 when between commands.
    bulks_left: usize,
    /// Argument spans of the current command, into the query buffer or `inline`.
    spans: Vec<(usize, usize)>,
    inline: Vec<u8>,
    is_inline: bool,
}

/// A command line built argument by argument (a rewritten command), lent out as `Args`.
#[derive(Default)]
pub struct ArgLine {
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl ArgLine {
    pub fn push(&mut self, arg: &[u8]) {
        self.spans
            .push((self.buf.len(), self.buf.len() + arg.len()));
        self.buf.extend_from_slice(arg);
    }

    pub fn args(&self) -> Args<'_> {
        Args::new(&self.buf, &self.spans)
    }
}

/// A command's arguments: `args[0]` is the command name. Indexing yields byte slices.
#[derive(Clone, Copy)]
pub struct Args<'a> {
    buf: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl<'a> Args<'a> {
    pub fn new(buf: &'a [u8], spans: &'a [(usize, usize)]) -> Args<'a> {
        Args { buf, spans }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        self.spans.get(i).map(|&(s, e)| &self.buf[s..e])
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let buf = self.buf;
        self.spans.iter().map(move |&(s, e)| &buf[s..e])
    }

    /// The first `n` arguments.
    pub fn head(&self, n: usize) -> Args<'a> {
        Args {
            buf: self.buf,
            spans: &self.spans[..n.min(self.spans.len())],
        }
    }

    /// Arguments from `from` on.
    pub fn tail(&self, from: usize) -> Args<'a> {
        Args {
            buf: self.buf,
            spans: &self.spans[from.min(self.spans.len())..],
        }
    }
}

impl std::ops::Index<usize> for Args<'_> {
    type Output = [u8];
    fn index(&self, i: usize) -> &[u8] {
        let (s, e) = self.spans[i];
        &self.buf[s..e]
    }
}

impl Parser {
    /// Arguments of the command last returned by `next`.
    pub fn args<'a>(&'a self, query: &'a [u8]) -> Args<'a> {
        let buf = if self.is_inline { &self.inline } else { query };
        Args::new(buf, &self.spans)
    }

    /// Bytes of `query` not yet consumed by a complete command.
    pub fn pending_from(&self) -> usize {
        self.cmd_start
    }

    /// Where the next command starts, between commands: for a reader of a whole buffer (the AOF
    /// loader) that looks at what comes next itself.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Moves to `pos`, between commands, past what the reader handled itself.
    pub fn skip_to(&mut self, pos: usize) {
        debug_assert_eq!(self.bulks_left, 0);
        self.pos = pos;
    }

    /// The caller dropped `n` consumed bytes from the front of the query buffer.
    pub fn shift(&mut self, n: usize) {
        self.pos -= n;
        self.cmd_start -= n;
        if !self.is_inline {
            for s in &mut self.spans {
                s.0 -= n;
                s.1 -= n;
            }
        }
    }

    pub fn next(&mut self, q: &[u8], lim: &Limits) -> Parsed {
        loop {
            if self.bulks_left == 0 {
                self.cmd_start = self.pos;
                self.spans.clear();
                self.is_inline = false;
                if self.pos >= q.len() {
                    return Parsed::Incomplete;
                }
                if q[self.pos] != b'*' {
                    match self.inline_command(q) {
                        Some(parsed) => return parsed,
                        None => continue, // an empty line is ignored, as in Redis
                    }
                }
                // The usual case first: a short count line, in one pass.
                let short = short_header(q, self.pos, b'*')
                    .filter(|&(n, _)| n <= 10 || !lim.unauthenticated);
                if let Some((n, after)) = short {
                    self.pos = after;
                    self.bulks_left = n;
                    self.spans.reserve(n.min(1024));
                    continue;
                }
                let Some(nl) = line_end(q, self.pos) else {
                    if q.len() - self.pos > PROTO_INLINE_MAX_SIZE {
                        return err("too big mbulk count string");
                    }
                    return Parsed::Incomplete;
                };
                if nl + 2 > q.len() {
                    return Parsed::Incomplete;
                }
                let n = match parse_i64(&q[self.pos + 1..nl]) {
                    Some(n) if n <= i32::MAX as i64 => n,
                    _ => return err("invalid multibulk length"),
                };
                if n > 10 && lim.unauthenticated {
                    return err("unauthenticated multibulk length");
                }
                self.pos = nl + 2;
                if n <= 0 {
                    // `*0` and `*-1` are empty requests: skipped without a reply.
                    continue;
                }
                self.bulks_left = n as usize;
                self.spans.reserve(self.bulks_left.min(1024));
            }
            while self.bulks_left > 0 {
                // The usual case: the length line and the whole argument are in the buffer.
                if let Some((len, start)) = short_header(q, self.pos, b'$') {
                    let allowed = len <= 16384 && len as i64 <= lim.proto_max_bulk_len;
                    if allowed && q.len() >= start + len + 2 {
                        self.spans.push((start, start + len));
                        self.pos = start + len + 2;
                        self.bulks_left -= 1;
                        continue;
                    }
                }
                let Some(nl) = line_end(q, self.pos) else {
                    if q.len() - self.pos > PROTO_INLINE_MAX_SIZE {
                        return err("too big bulk count string");
                    }
                    return Parsed::Incomplete;
                };
                if nl + 2 > q.len() {
                    return Parsed::Incomplete;
                }
                if q[self.pos] != b'$' {
                    return err(&format!("expected '$', got '{}'", q[self.pos] as char));
                }
                let len = match parse_i64(&q[self.pos + 1..nl]) {
                    Some(n) if n >= 0 && n <= lim.proto_max_bulk_len => n as usize,
                    _ => return err("invalid bulk length"),
                };
                if len > 16384 && lim.unauthenticated {
                    return err("unauthenticated bulk length");
                }
                let start = nl + 2;
                // The two bytes after the data are taken as CRLF without being checked, as Redis does.
                if q.len() < start + len + 2 {
                    return Parsed::Incomplete;
                }
                self.spans.push((start, start + len));
                self.pos = start + len + 2;
                self.bulks_left -= 1;
            }
            return Parsed::Command;
        }
    }

    /// `None` for an empty line.
    fn inline_command(&mut self, q: &[u8]) -> Option<Parsed> {
        // As Redis's `strchr`, a NUL byte before the newline hides it: the line is not complete.
        let nl = memchr2(b'\n', 0, &q[self.pos..])
            .map(|i| i + self.pos)
            .filter(|&i| q[i] == b'\n');
        // Redis finds a line longer than the limit too big once it has read that much of it.
        let Some(nl) = nl.filter(|nl| nl - self.pos <= PROTO_INLINE_MAX_SIZE) else {
            if q.len() - self.pos > PROTO_INLINE_MAX_SIZE {
                return Some(err("too big inline request"));
            }
            return Some(Parsed::Incomplete);
        };
        let mut line = &q[self.pos..nl];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        self.pos = nl + 1;
        self.inline.clear();
        self.is_inline = true;
        if split_args(line, &mut self.inline, &mut self.spans).is_err() {
            return Some(err("unbalanced quotes in request"));
        }
        (!self.spans.is_empty()).then_some(Parsed::Command)
    }
}

fn err(msg: &str) -> Parsed {
    Parsed::Error(format!("Protocol error: {msg}"))
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// A line whose quotes don't close (or a closing quote followed by something other than a space).
#[derive(Debug)]
pub struct UnbalancedQuotes;

/// Redis's `sdssplitargs`: splits a line into arguments, honouring "double quotes" (with `\n \r \t \b
/// \a \\ \" \xHH` escapes) and 'single quotes' (only `\'`). A closing quote must be followed by a space
/// or the end. Appends unescaped bytes to `out` and their spans to `spans`; `Err` on unbalanced quotes.
/// Shared by inline commands and the config file reader.
pub fn split_args(
    line: &[u8],
    out: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize)>,
) -> Result<(), UnbalancedQuotes> {
    let mut p = 0;
    let n = line.len();
    loop {
        while p < n && is_space(line[p]) {
            p += 1;
        }
        if p >= n {
            return Ok(());
        }
        let start = out.len();
        let (mut in_dq, mut in_sq, mut done) = (false, false, false);
        while !done {
            let c = line.get(p).copied();
            if in_dq {
                match c {
                    None => return Err(UnbalancedQuotes),
                    Some(b'\\')
                        if p + 3 < n
                            && line[p + 1] == b'x'
                            && line[p + 2].is_ascii_hexdigit()
                            && line[p + 3].is_ascii_hexdigit() =>
                    {
                        out.push(hex_val(line[p + 2]) * 16 + hex_val(line[p + 3]));
                        p += 3;
                    }
                    Some(b'\\') if p + 1 < n => {
                        p += 1;
                        out.push(match line[p] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 8,
                            b'a' => 7,
                            other => other,
                        });
                    }
                    Some(b'"') => {
                        if p + 1 < n && !is_space(line[p + 1]) {
                            return Err(UnbalancedQuotes);
                        }
                        done = true;
                    }
                    Some(c) => out.push(c),
                }
            } else if in_sq {
                match c {
                    None => return Err(UnbalancedQuotes),
                    Some(b'\\') if p + 1 < n && line[p + 1] == b'\'' => {
                        p += 1;
                        out.push(b'\'');
                    }
                    Some(b'\'') => {
                        if p + 1 < n && !is_space(line[p + 1]) {
                            return Err(UnbalancedQuotes);
                        }
                        done = true;
                    }
                    Some(c) => out.push(c),
                }
            } else {
                match c {
                    None => done = true,
                    Some(c) if is_space(c) => done = true,
                    Some(b'"') => in_dq = true,
                    Some(b'\'') => in_sq = true,
                    Some(c) => out.push(c),
                }
            }
            if p < n {
                p += 1;
            }
        }
        spans.push((start, out.len()));
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim() -> Limits {
        Limits {
            proto_max_bulk_len: 512 * 1024 * 1024,
            unauthenticated: false,
        }
    }

    fn parse_all(input: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let mut p = Parser::default();
        let mut cmds = Vec::new();
        while let Parsed::Command = p.next(input, &lim()) {
            cmds.push(p.args(input).iter().map(|a| a.to_vec()).collect());
        }
        cmds
    }

    #[test]
    fn multibulk_and_inline() {
        let cmds = parse_all(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\nset \"a b\" 'c\\'d'\r\n");
        assert_eq!(cmds.len(), 3);
        assert_eq!(cmds[0], vec![b"GET".to_vec(), b"k".to_vec()]);
        assert_eq!(cmds[1], vec![b"PING".to_vec()]);
        assert_eq!(
            cmds[2],
            vec![b"set".to_vec(), b"a b".to_vec(), b"c'd".to_vec()]
        );
    }

    #[test]
    fn resumes_across_reads() {
        let full = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
        let mut p = Parser::default();
        for cut in 1..full.len() {
            assert!(matches!(p.next(&full[..cut], &lim()), Parsed::Incomplete));
        }
        assert!(matches!(p.next(full, &lim()), Parsed::Command));
        assert_eq!(&p.args(full)[2], b"hello");
    }

    /// Arguments of every length class (the one-pass path takes 1..=16384 bytes, the general path
    /// the rest), whole and cut at every byte, parse the same.
    #[test]
    fn every_argument_length_parses_whole_and_cut() {
        let args: Vec<Vec<u8>> = [0, 1, 9, 10, 99, 100, 16384, 16385, 100_000]
            .iter()
            .map(|&n| (0..n).map(|i| (i % 251) as u8).collect())
            .collect();
        let mut wire = format!("*{}\r\n", args.len()).into_bytes();
        for a in &args {
            wire.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            wire.extend_from_slice(a);
            wire.extend_from_slice(b"\r\n");
        }
        assert_eq!(parse_all(&wire), vec![args.clone()]);
        let mut p = Parser::default();
        for cut in (1..wire.len())
            .step_by(97)
            .chain(wire.len() - 8..wire.len())
        {
            assert!(matches!(p.next(&wire[..cut], &lim()), Parsed::Incomplete));
        }
        assert!(matches!(p.next(&wire, &lim()), Parsed::Command));
        let got: Vec<Vec<u8>> = p.args(&wire).iter().map(|a| a.to_vec()).collect();
        assert_eq!(got, args);
        // A leading zero or a sign is the general path's error, as Redis's.
        for bad in [&b"*1\r\n$01\r\nx\r\n"[..], b"*1\r\n$+1\r\nx\r\n"] {
            let mut p = Parser::default();
            let Parsed::Error(e) = p.next(bad, &lim()) else {
                panic!()
            };
            assert_eq!(e, "Protocol error: invalid bulk length");
        }
    }

    #[test]
    fn protocol_errors() {
        let mut p = Parser::default();
        let Parsed::Error(e) = p.next(b"*1\r\n$-5\r\n", &lim()) else {
            panic!()
        };
        assert_eq!(e, "Protocol error: invalid bulk length");
        let mut p = Parser::default();
        let Parsed::Error(e) = p.next(b"*x\r\n", &lim()) else {
            panic!()
        };
        assert_eq!(e, "Protocol error: invalid multibulk length");
        let mut p = Parser::default();
        let Parsed::Error(e) = p.next(b"*1\r\n+3\r\n", &lim()) else {
            panic!()
        };
        assert_eq!(e, "Protocol error: expected '$', got '+'");
    }
}
