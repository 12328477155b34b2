//! Walks the RESP bytes of a command's reply (what `Run::call` returns) into an engine's values,
//! through the `ReplyBuilder` the engine implements. Every engine converts server replies this one
//! way, so RESP2 and RESP3 shapes are read in one place.

use crate::util::{parse_f64, parse_i64};

/// An engine's constructor of values from a reply, called in reply order. Aggregates: `begin_*`
/// with the element count, then each element followed by `item` (for maps: key, value, `item`),
/// then `end`.
pub trait ReplyBuilder {
    fn int(&mut self, n: i64);
    fn bulk(&mut self, b: &[u8]);
    fn status(&mut self, s: &[u8]);
    fn error(&mut self, e: &[u8]);
    /// RESP2's nil bulk or nil array, RESP3's null.
    fn null(&mut self);
    fn double(&mut self, d: f64);
    fn boolean(&mut self, b: bool);
    fn big_number(&mut self, digits: &[u8]);
    fn verbatim(&mut self, format: &[u8], text: &[u8]);
    fn begin(&mut self, kind: Aggregate, len: usize);
    fn item(&mut self, kind: Aggregate, index: usize);
    fn end(&mut self, kind: Aggregate);
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Aggregate {
    Array,
    Map,
    Set,
}

/// Walks one complete reply starting at `buf[0]`; returns the bytes it spanned. The buffer comes
/// from our own reply builder, so it is well formed.
pub fn walk(buf: &[u8], b: &mut impl ReplyBuilder) -> usize {
    if let head @ (b'$' | b'=' | b'*' | b'%' | b'~' | b'>') = buf[0] {
        return walk_counted(head, buf, b);
    }
    let line_end = memchr::memchr(b'\r', buf).expect("a RESP line");
    let line = &buf[1..line_end];
    match buf[0] {
        b':' => b.int(parse_i64(line).unwrap_or(0)),
        b'+' => b.status(line),
        b'-' => b.error(line),
        b'_' => b.null(),
        b',' => b.double(parse_f64(line).unwrap_or(f64::NAN)),
        b'#' => b.boolean(line == b"t"),
        b'(' => b.big_number(line),
        other => unreachable!("our reply builder never writes {:?}", other as char),
    }
    line_end + 2
}

/// A bulk string or an aggregate: the count on its header line (read here digit by digit, as
/// there is one per element of a reply such as ZRANGE's), then its body or elements.
fn walk_counted(head: u8, buf: &[u8], b: &mut impl ReplyBuilder) -> usize {
    let (n, line_end) = header_count(buf);
    let after = line_end + 2;
    if n < 0 {
        b.null();
        return after;
    }
    let n = n as usize;
    match head {
        b'$' | b'=' => {
            let body = &buf[after..after + n];
            if head == b'=' && body.len() >= 4 {
                b.verbatim(&body[..3], &body[4..]);
            } else {
                b.bulk(body);
            }
            after + n + 2
        }
        _ => {
            let kind = match head {
                b'%' => Aggregate::Map,
                b'~' => Aggregate::Set,
                _ => Aggregate::Array,
            };
            b.begin(kind, n);
            let mut pos = after;
            for i in 0..n {
                pos += walk(&buf[pos..], b);
                if kind == Aggregate::Map {
                    pos += walk(&buf[pos..], b);
                }
                b.item(kind, i);
            }
            b.end(kind);
            pos
        }
    }
}

/// The count on a header line (`$12`, `*-1`) our reply builder wrote, and where its `\r` is.
fn header_count(buf: &[u8]) -> (i64, usize) {
    let negative = buf[1] == b'-';
    let mut i = 1 + negative as usize;
    let mut n: i64 = 0;
    while buf[i] != b'\r' {
        n = n * 10 + (buf[i] - b'0') as i64;
        i += 1;
    }
    (if negative { -n } else { n }, i)
}
