//! The hash type (Redis's t_hash.c data side): field → value in one of Redis 7.0's two encodings.
//!
//! - `Listpack`: the pairs in insertion order in one packed buffer (`Packed`), as Redis's listpack
//!   keeps small hashes (a new field appends, an updated one keeps its place, a deleted one simply
//!   disappears). HGETALL, HKEYS, HVALS and HSCAN of a small hash therefore answer in exactly
//!   Redis's order, and a small hash costs about what Redis's does.
//! - `Table`: the keyspace's `Dict`, so HSCAN gets the same stable cursor and HRANDFIELD the same
//!   O(1) sampling as the keyspace.
//!
//! A hash converts one way, listpack → table, exactly when Redis's `hashTypeSet` would: a field or
//! value longer than `hash-max-listpack-value`, or more fields than `hash-max-listpack-entries`.
//!
//! Entry points: `Hash::get`, `Hash::set`, `Hash::remove`, `Hash::iter`, `Hash::random`,
//! `Hash::sample_unique`, `Hash::scan`.

use super::compact::CompactBytes;
use super::Dict;

/// A (field, value) pair borrowed from a hash.
pub type Pair<'a> = (&'a [u8], &'a [u8]);

/// The thresholds that decide the encoding (from `Config`).
#[derive(Clone, Copy)]
pub struct HashLimits {
    pub entries: i64,
    pub value: i64,
}

pub enum Hash {
    Listpack(Packed),
    Table(Box<Dict<CompactBytes>>),
}

impl Default for Hash {
    fn default() -> Self {
        Hash::Listpack(Packed::default())
    }
}

impl Clone for Hash {
    fn clone(&self) -> Self {
        match self {
            Hash::Listpack(p) => Hash::Listpack(p.clone()),
            Hash::Table(d) => {
                let mut copy = Dict::default();
                for (_, k, v) in d.iter() {
                    copy.insert_new(k, v.clone());
                }
                Hash::Table(Box::new(copy))
            }
        }
    }
}

/// Fields and values alternating in one buffer, each its length (LEB128) then its bytes; the
/// buffer is kept at its exact size. Lookups walk it, as Redis's listpack lookups do: it only
/// holds up to `hash-max-listpack-entries` short pairs.
#[derive(Clone, Default)]
pub struct Packed {
    buf: Vec<u8>,
}

/// Where a pair lies in a `Packed` buffer: its start, its value's start (after the length) and
/// its end.
struct PairAt {
    start: usize,
    value: usize,
    end: usize,
}

impl Packed {
    /// The element at `pos`: its bytes and where the next one starts.
    fn element(&self, pos: usize) -> (&[u8], usize) {
        let (mut len, mut shift, mut at) = (0usize, 0, pos);
        loop {
            let b = self.buf[at];
            at += 1;
            len |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        (&self.buf[at..at + len], at + len)
    }

    /// An element's length prefix (LEB128) and how many of its bytes are used.
    fn length_prefix(len: usize) -> ([u8; 10], usize) {
        let (mut out, mut n, mut len) = ([0u8; 10], 0, len);
        while len >= 0x80 {
            out[n] = len as u8 | 0x80;
            n += 1;
            len >>= 7;
        }
        out[n] = len as u8;
        (out, n + 1)
    }

    pub fn iter(&self) -> impl Iterator<Item = Pair<'_>> {
        let mut pos = 0;
        std::iter::from_fn(move || {
            if pos >= self.buf.len() {
                return None;
            }
            let (field, at) = self.element(pos);
            let (value, end) = self.element(at);
            pos = end;
            Some((field, value))
        })
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn find(&self, field: &[u8]) -> Option<PairAt> {
        let mut pos = 0;
        while pos < self.buf.len() {
            let (f, value) = self.element(pos);
            let (_, end) = self.element(value);
            if f == field {
                return Some(PairAt {
                    start: pos,
                    value,
                    end,
                });
            }
            pos = end;
        }
        None
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.find(field).map(|at| self.element(at.value).0)
    }

    /// Replaces `range` of the buffer with the elements `with` (each written with its length
    /// prefix), growing the buffer to exactly the new size.
    fn splice<const N: usize>(&mut self, range: std::ops::Range<usize>, with: [&[u8]; N]) {
        let prefixes = with.map(|e| Self::length_prefix(e.len()));
        let added: usize = prefixes
            .iter()
            .zip(&with)
            .map(|((_, n), e)| n + e.len())
            .sum();
        let new_len = self.buf.len() - range.len() + added;
        if new_len > self.buf.capacity() {
            self.buf.reserve_exact(new_len - self.buf.len());
        }
        let bytes = prefixes
            .iter()
            .zip(&with)
            .flat_map(|((p, n), e)| p[..*n].iter().chain(e.iter()))
            .copied();
        self.buf.splice(range, bytes);
        if self.buf.capacity() > self.buf.len() + 64 {
            self.buf.shrink_to_fit();
        }
    }

    /// Sets `field` to `value`; true if the field is new (appended).
    fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        match self.find(field) {
            Some(at) => {
                self.splice(at.value..at.end, [value]);
                false
            }
            None => {
                let end = self.buf.len();
                self.splice(end..end, [field, value]);
                true
            }
        }
    }

    fn remove(&mut self, field: &[u8]) -> bool {
        match self.find(field) {
            Some(at) => {
                self.splice(at.start..at.end, []);
                true
            }
            None => false,
        }
    }

    /// Bytes allocated for the pairs (MEMORY USAGE).
    pub fn heap_size(&self) -> usize {
        self.buf.capacity()
    }
}

impl Hash {
    pub fn len(&self) -> usize {
        match self {
            Hash::Listpack(p) => p.len(),
            Hash::Table(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            Hash::Listpack(_) => "listpack",
            Hash::Table(_) => "hashtable",
        }
    }

    /// Each field's approximate heap footprint, with its value (MEMORY USAGE).
    pub fn element_sizes(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match self {
            Hash::Listpack(p) => {
                // The buffer shared out evenly between the pairs.
                let (n, bytes) = (p.len().max(1), p.heap_size());
                Box::new(p.iter().map(move |_| bytes / n))
            }
            Hash::Table(d) => Box::new(
                d.iter()
                    .map(|(_, k, v)| k.len().max(16) + v.heap_size() + 16),
            ),
        }
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            Hash::Listpack(p) => p.get(field),
            Hash::Table(d) => d.get(field).map(|v| &v[..]),
        }
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// Converts a listpack to the table encoding (one way, as Redis's `hashTypeConvert`).
    fn convert(&mut self) {
        if let Hash::Listpack(p) = self {
            let mut d = Dict::default();
            for (k, val) in p.iter() {
                d.insert_new(k, CompactBytes::new(val));
            }
            *self = Hash::Table(Box::new(d));
        }
    }

    /// Sets `field` to `value`; true if the field is new. Converts as Redis's `hashTypeSet` does: a
    /// field or value over the value limit before the write, too many fields after it.
    pub fn set(&mut self, field: &[u8], value: &[u8], limits: HashLimits) -> bool {
        if matches!(self, Hash::Listpack(_))
            && (field.len() as i64 > limits.value || value.len() as i64 > limits.value)
        {
            self.convert();
        }
        let created = match self {
            Hash::Listpack(p) => p.set(field, value),
            Hash::Table(d) => match d.get_mut(field) {
                Some(val) => {
                    *val = CompactBytes::new(value);
                    false
                }
                None => {
                    d.insert_new(field, CompactBytes::new(value));
                    true
                }
            },
        };
        if matches!(self, Hash::Listpack(_)) && self.len() as i64 > limits.entries {
            self.convert();
        }
        created
    }

    /// Removes `field`; true if it was present.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self {
            Hash::Listpack(p) => p.remove(field),
            Hash::Table(d) => d.remove(field).is_some(),
        }
    }

    /// Every (field, value), in listpack order or table slot order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = Pair<'_>> + '_> {
        match self {
            Hash::Listpack(p) => Box::new(p.iter()),
            Hash::Table(d) => Box::new(d.iter().map(|(_, k, v)| (k, &v[..]))),
        }
    }

    /// A uniformly chosen (field, value); `None` only when empty.
    pub fn random(&self, mut rand: impl FnMut() -> u64) -> Option<Pair<'_>> {
        match self {
            Hash::Listpack(p) => {
                let n = p.len();
                if n == 0 {
                    return None;
                }
                p.iter().nth((rand() % n as u64) as usize)
            }
            Hash::Table(d) => {
                let slot = d.random_slot(rand)?;
                Some((d.key_at(slot), &d.value_at(slot)[..]))
            }
        }
    }

    /// `count` distinct entries chosen uniformly (`count` < `len()`), in no particular order.
    pub fn sample_unique(&self, count: usize, mut rand: impl FnMut() -> u64) -> Vec<Pair<'_>> {
        let mut all: Vec<Pair> = Vec::new();
        if let Hash::Table(d) = self {
            // Few out of many (Redis's CASE 4): draw random slots until enough distinct ones.
            if count * 3 <= d.len() {
                let mut seen = std::collections::HashSet::with_capacity(count);
                while seen.len() < count {
                    let slot = d.random_slot(&mut rand).expect("not empty");
                    if seen.insert(slot) {
                        all.push((d.key_at(slot), &d.value_at(slot)[..]));
                    }
                }
                return all;
            }
        }
        all.extend(self.iter());
        partial_shuffle(&mut all, count, rand);
        all.truncate(count);
        all
    }

    /// One HSCAN step from `cursor`, visiting about `count` entries: (next cursor, entries). A
    /// listpack is returned whole in one call, as Redis does for its compact encodings.
    pub fn scan(&self, cursor: u64, count: usize) -> (u64, Vec<Pair<'_>>) {
        match self {
            Hash::Listpack(_) => (0, self.iter().collect()),
            Hash::Table(d) => {
                let mut out = Vec::new();
                let next = scan_slots(d.slot_span(), cursor, count, |slot| {
                    d.entry_at(slot)
                        .map(|(k, v)| out.push((k, &v[..])))
                        .is_some()
                });
                (next, out)
            }
        }
    }
}

/// Moves `count` uniformly chosen elements of `v` to its front (a partial Fisher–Yates shuffle).
pub fn partial_shuffle<T>(v: &mut [T], count: usize, mut rand: impl FnMut() -> u64) {
    let n = v.len();
    for i in 0..count.min(n) {
        let j = i + (rand() % (n - i) as u64) as usize;
        v.swap(i, j);
    }
}

/// Walks the slots of a `Dict` from `cursor` as SCAN does (see `keys::scan`): stops after `count`
/// live slots or `10 * count` visited ones; `visit` says whether a slot was live. Returns the next
/// cursor, 0 when the walk reached the end.
pub fn scan_slots(
    span: usize,
    cursor: u64,
    count: usize,
    mut visit: impl FnMut(usize) -> bool,
) -> u64 {
    let mut slot = cursor.min(span as u64) as usize;
    let max_visits = count.saturating_mul(10);
    let (mut visited, mut live) = (0, 0);
    while slot < span && live < count && visited < max_visits {
        if visit(slot) {
            live += 1;
        }
        slot += 1;
        visited += 1;
    }
    if slot >= span {
        0
    } else {
        slot as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_pairs_keep_order_across_replace_and_remove() {
        let mut p = Packed::default();
        // Lengths on both sides of the one-byte length prefix (127, 128) and well past it.
        let long = |n: usize| vec![b'x'; n];
        assert!(p.set(b"a", b"1"));
        assert!(p.set(b"b", &long(127)));
        assert!(p.set(b"c", &long(300)));
        assert!(!p.set(b"b", &long(128)));
        assert!(!p.set(b"a", b""));
        assert_eq!(p.len(), 3);
        let pairs: Vec<(Vec<u8>, usize)> = p.iter().map(|(f, v)| (f.to_vec(), v.len())).collect();
        assert_eq!(
            pairs,
            [
                (b"a".to_vec(), 0),
                (b"b".to_vec(), 128),
                (b"c".to_vec(), 300)
            ]
        );
        assert!(p.remove(b"b"));
        assert!(!p.remove(b"b"));
        assert_eq!(p.get(b"c").map(<[u8]>::len), Some(300));
        assert_eq!(p.get(b"b"), None);
        assert!(p.remove(b"a") && p.remove(b"c"));
        assert!(p.is_empty());
        assert_eq!(p.heap_size(), 0);
    }
}
