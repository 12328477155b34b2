//! Redis's listpack, byte for byte: the builder RDB uses for small hashes, sorted sets and list
//! nodes (`Listpack`, as `lpNew` + `lpAppend`), and the in-place cursor operations a stream node
//! lives on (`first`, `next`, `prev`, `last`, `get`, `append`, `replace_int`), which assume a
//! well-formed blob (the RDB reader validates what it loads).
//!
//! Layout: a 6-byte header (total bytes, element count saturating at 65535), the elements (each
//! its encoding, its data and a back-length of the two), and the 0xFF terminator.

use crate::util::{fmt_i64, parse_i64};

const HEADER: usize = 6;
const END: u8 = 0xFF;
/// The element count of a listpack with 65535 or more elements (`LP_HDR_NUMELE_UNKNOWN`).
const COUNT_UNKNOWN: u16 = u16::MAX;

/// One element of a ziplist or listpack.
pub enum Elem<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl Elem<'_> {
    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }

    /// Calls `f` with the element's bytes (an integer formatted on the stack).
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Elem::Int(n) => f(fmt_i64(*n, &mut [0u8; 20])),
            Elem::Bytes(b) => f(b),
        }
    }

    /// The element as an integer (a string element is parsed, as `lpGetInteger`).
    pub fn int(&self) -> i64 {
        match self {
            Elem::Int(n) => *n,
            Elem::Bytes(b) => parse_i64(b).unwrap_or(0),
        }
    }

    pub fn eq_bytes(&self, s: &[u8]) -> bool {
        self.with_bytes(|b| b == s)
    }
}

/// Appends the back-length of an element whose encoding and data take `l` bytes.
pub fn backlen(b: &mut Vec<u8>, l: usize) {
    let l = l as u64;
    if l <= 127 {
        b.push(l as u8);
    } else if l < 16383 {
        b.extend_from_slice(&[(l >> 7) as u8, (l & 127) as u8 | 128]);
    } else if l < 2097151 {
        b.extend_from_slice(&[
            (l >> 14) as u8,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    } else if l < 268435455 {
        b.extend_from_slice(&[
            (l >> 21) as u8,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    } else {
        b.extend_from_slice(&[
            (l >> 28) as u8,
            ((l >> 21) & 127) as u8 | 128,
            ((l >> 14) & 127) as u8 | 128,
            ((l >> 7) & 127) as u8 | 128,
            (l & 127) as u8 | 128,
        ]);
    }
}

/// Appends one element: integer-encoded when `s` is a canonical integer (as `lpAppend`).
fn encode_str(buf: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 20 {
        if let Some(v) = parse_i64(s) {
            return encode_int(buf, v);
        }
    }
    let start = buf.len();
    let n = s.len();
    if n < 64 {
        buf.push(0x80 | n as u8);
    } else if n < 4096 {
        buf.push(0xE0 | (n >> 8) as u8);
        buf.push(n as u8);
    } else {
        buf.push(0xF0);
        buf.extend_from_slice(&(n as u32).to_le_bytes());
    }
    buf.extend_from_slice(s);
    let l = buf.len() - start;
    backlen(buf, l);
}

/// Appends one integer element in the narrowest encoding that holds it.
fn encode_int(buf: &mut Vec<u8>, v: i64) {
    let start = buf.len();
    if (0..=127).contains(&v) {
        buf.push(v as u8);
    } else if (-4096..=4095).contains(&v) {
        let u = if v < 0 { (1 << 13) + v } else { v } as u64;
        buf.extend_from_slice(&[(u >> 8) as u8 | 0xC0, u as u8]);
    } else if (-32768..=32767).contains(&v) {
        buf.push(0xF1);
        buf.extend_from_slice(&(v as i16).to_le_bytes());
    } else if (-8388608..=8388607).contains(&v) {
        buf.push(0xF2);
        buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
    } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        buf.push(0xF3);
        buf.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        buf.push(0xF4);
        buf.extend_from_slice(&v.to_le_bytes());
    }
    let l = buf.len() - start;
    backlen(buf, l);
}

/// A listpack being built (Redis's `lpNew` + `lpAppend`).
pub struct Listpack {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Listpack {
    fn default() -> Self {
        Listpack {
            buf: vec![0; HEADER],
            count: 0,
        }
    }
}

impl Listpack {
    /// Bytes the finished listpack will take (header, entries, terminator).
    pub fn bytes(&self) -> usize {
        self.buf.len() + 1
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends an element, integer-encoded when it is a canonical integer (as `lpAppend`).
    pub fn push(&mut self, s: &[u8]) {
        encode_str(&mut self.buf, s);
        self.count += 1;
    }

    pub fn push_int(&mut self, v: i64) {
        encode_int(&mut self.buf, v);
        self.count += 1;
    }

    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(END);
        let total = self.buf.len() as u32;
        let n = self.count.min(COUNT_UNKNOWN as usize) as u16;
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        self.buf[4..6].copy_from_slice(&n.to_le_bytes());
        self.buf
    }
}

// ---------------------------------------------------------------------------------------------
// Cursor operations on a finished listpack. A cursor is the byte offset of an element.

fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |a, &x| (a << 8) | x as u64)
}

/// The bytes of the encoding and data of the element at `p`.
fn encoded_len(lp: &[u8], p: usize) -> usize {
    let b = lp[p];
    if b & 0x80 == 0 {
        1
    } else if b & 0xC0 == 0x80 {
        1 + (b & 0x3F) as usize
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        2 + ((((b & 0x0F) as usize) << 8) | lp[p + 1] as usize)
    } else {
        match b {
            0xF0 => 5 + le(&lp[p + 1..p + 5]) as usize,
            0xF1 => 3,
            0xF2 => 4,
            0xF3 => 5,
            _ => 9,
        }
    }
}

fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// The element at `p`.
pub fn get(lp: &[u8], p: usize) -> Elem<'_> {
    let b = lp[p];
    if b & 0x80 == 0 {
        Elem::Int((b & 0x7F) as i64)
    } else if b & 0xC0 == 0x80 {
        Elem::Bytes(&lp[p + 1..p + 1 + (b & 0x3F) as usize])
    } else if b & 0xE0 == 0xC0 {
        let u = (((b & 0x1F) as i64) << 8) | lp[p + 1] as i64;
        Elem::Int(if u >= 1 << 12 { u - (1 << 13) } else { u })
    } else if b & 0xF0 == 0xE0 {
        let n = (((b & 0x0F) as usize) << 8) | lp[p + 1] as usize;
        Elem::Bytes(&lp[p + 2..p + 2 + n])
    } else {
        match b {
            0xF0 => {
                let n = le(&lp[p + 1..p + 5]) as usize;
                Elem::Bytes(&lp[p + 5..p + 5 + n])
            }
            0xF1 => Elem::Int(i16::from_le_bytes([lp[p + 1], lp[p + 2]]) as i64),
            0xF2 => {
                let u = le(&lp[p + 1..p + 4]) as i64;
                Elem::Int(if u >= 1 << 23 { u - (1 << 24) } else { u })
            }
            0xF3 => Elem::Int(i32::from_le_bytes(lp[p + 1..p + 5].try_into().unwrap()) as i64),
            _ => Elem::Int(i64::from_le_bytes(lp[p + 1..p + 9].try_into().unwrap())),
        }
    }
}

/// The integer at `p` (`lpGetInteger`).
pub fn get_int(lp: &[u8], p: usize) -> i64 {
    get(lp, p).int()
}

/// The first element, if any.
pub fn first(lp: &[u8]) -> Option<usize> {
    (lp[HEADER] != END).then_some(HEADER)
}

/// The element after `p`, if any.
pub fn next(lp: &[u8], p: usize) -> Option<usize> {
    let l = encoded_len(lp, p);
    let n = p + l + backlen_size(l);
    (lp[n] != END).then_some(n)
}

/// The element before `p` (`p` may be the terminator's offset), if any.
pub fn prev(lp: &[u8], p: usize) -> Option<usize> {
    if p <= HEADER {
        return None;
    }
    let (mut l, mut shift, mut q) = (0usize, 0, p - 1);
    loop {
        l |= ((lp[q] & 127) as usize) << shift;
        if lp[q] & 128 == 0 {
            break;
        }
        shift += 7;
        q -= 1;
    }
    Some(q - l)
}

/// The last element, if any.
pub fn last(lp: &[u8]) -> Option<usize> {
    prev(lp, lp.len() - 1)
}

fn set_header(lp: &mut [u8], added: isize) {
    let total = lp.len() as u32;
    lp[0..4].copy_from_slice(&total.to_le_bytes());
    if added != 0 {
        let n = le(&lp[4..6]) as u16;
        if n != COUNT_UNKNOWN {
            let n = (n as isize + added).min(COUNT_UNKNOWN as isize) as u16;
            lp[4..6].copy_from_slice(&n.to_le_bytes());
        }
    }
}

/// Appends a string element (integer-encoded when canonical).
pub fn append(lp: &mut Vec<u8>, s: &[u8]) {
    lp.pop();
    encode_str(lp, s);
    lp.push(END);
    set_header(lp, 1);
}

pub fn append_int(lp: &mut Vec<u8>, v: i64) {
    lp.pop();
    encode_int(lp, v);
    lp.push(END);
    set_header(lp, 1);
}

/// Replaces the element at `p` with the integer `v` (`lpReplaceInteger`); `p` still points at it.
pub fn replace_int(lp: &mut Vec<u8>, p: usize, v: i64) {
    let l = encoded_len(lp, p);
    let old = l + backlen_size(l);
    let mut enc = Vec::with_capacity(11);
    encode_int(&mut enc, v);
    lp.splice(p..p + old, enc);
    set_header(lp, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_walks_both_ways_and_replaces() {
        let mut lp = Listpack::default().finish();
        // Every encoding: small and 13-bit integers, 6- and 12-bit strings, 32-bit long ones.
        let small = ["a", "127", "-4096", "9000000000000"].map(|t| t.as_bytes().to_vec());
        let items: Vec<Vec<u8>> = small
            .into_iter()
            .chain([vec![b'x'; 100], vec![b'y'; 5000]])
            .collect();
        for i in &items {
            append(&mut lp, i);
        }
        let mut built = Listpack::default();
        items.iter().for_each(|i| built.push(i));
        assert_eq!(lp, built.finish());
        let mut fwd = vec![];
        let mut p = first(&lp);
        while let Some(at) = p {
            fwd.push(get(&lp, at).to_vec());
            p = next(&lp, at);
        }
        assert_eq!(fwd, items);
        let mut back = vec![];
        let mut p = last(&lp);
        while let Some(at) = p {
            back.push(get(&lp, at).to_vec());
            p = prev(&lp, at);
        }
        back.reverse();
        assert_eq!(back, items);
        let second = next(&lp, first(&lp).unwrap()).unwrap();
        replace_int(&mut lp, second, 100_000);
        assert_eq!(get_int(&lp, second), 100_000);
        assert_eq!(le(&lp[0..4]) as usize, lp.len());
        assert_eq!(get(&lp, last(&lp).unwrap()).to_vec(), vec![b'y'; 5000]);
    }
}
