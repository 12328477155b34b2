//! The hash type (Redis's t_hash.c data side): field → value in one of Redis 7.0's two encodings.
//!
//! - `Listpack`: a vector of pairs in insertion order, as Redis's listpack keeps small hashes (a new
//!   field appends, an updated one keeps its place, a deleted one simply disappears). HGETALL, HKEYS,
//!   HVALS and HSCAN of a small hash therefore answer in exactly Redis's order.
//! - `Table`: the keyspace's `Dict`, so HSCAN gets the same stable cursor and HRANDFIELD the same
//!   O(1) sampling as the keyspace.
//!
//! A hash converts one way, listpack → table, exactly when Redis's `hashTypeSet` would: a field or
//! value longer than `hash-max-listpack-value`, or more fields than `hash-max-listpack-entries`.
//!
//! Entry points: `Hash::get`, `Hash::set`, `Hash::remove`, `Hash::iter`, `Hash::random`,
//! `Hash::sample_unique`, `Hash::scan`.

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
    Listpack(Vec<(Vec<u8>, Vec<u8>)>),
    Table(Dict<Vec<u8>>),
}

impl Default for Hash {
    fn default() -> Self {
        Hash::Listpack(Vec::new())
    }
}

impl Clone for Hash {
    fn clone(&self) -> Self {
        match self {
            Hash::Listpack(v) => Hash::Listpack(v.clone()),
            Hash::Table(d) => {
                let mut copy = Dict::default();
                for (_, k, v) in d.iter() {
                    copy.insert_new(k, v.clone());
                }
                Hash::Table(copy)
            }
        }
    }
}

impl Hash {
    pub fn len(&self) -> usize {
        match self {
            Hash::Listpack(v) => v.len(),
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
            Hash::Listpack(v) => {
                Box::new(v.iter().map(|(k, val)| k.capacity() + val.capacity() + 48))
            }
            Hash::Table(d) => Box::new(d.iter().map(|(_, k, v)| k.len() + v.capacity() + 32)),
        }
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            Hash::Listpack(v) => v
                .iter()
                .find(|(k, _)| k[..] == *field)
                .map(|(_, val)| &val[..]),
            Hash::Table(d) => d.get(field).map(|v| &v[..]),
        }
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// Converts a listpack to the table encoding (one way, as Redis's `hashTypeConvert`).
    fn convert(&mut self) {
        if let Hash::Listpack(v) = self {
            let mut d = Dict::default();
            for (k, val) in std::mem::take(v) {
                d.insert_new(&k, val);
            }
            *self = Hash::Table(d);
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
            Hash::Listpack(v) => match v.iter_mut().find(|(k, _)| k[..] == *field) {
                Some((_, val)) => {
                    val.clear();
                    val.extend_from_slice(value);
                    false
                }
                None => {
                    v.push((field.to_vec(), value.to_vec()));
                    true
                }
            },
            Hash::Table(d) => match d.get_mut(field) {
                Some(val) => {
                    val.clear();
                    val.extend_from_slice(value);
                    false
                }
                None => {
                    d.insert_new(field, value.to_vec());
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
            Hash::Listpack(v) => match v.iter().position(|(k, _)| k[..] == *field) {
                Some(i) => {
                    v.remove(i);
                    true
                }
                None => false,
            },
            Hash::Table(d) => d.remove(field).is_some(),
        }
    }

    /// Every (field, value), in listpack order or table slot order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = Pair<'_>> + '_> {
        match self {
            Hash::Listpack(v) => Box::new(v.iter().map(|(k, val)| (&k[..], &val[..]))),
            Hash::Table(d) => Box::new(d.iter().map(|(_, k, v)| (k, &v[..]))),
        }
    }

    /// A uniformly chosen (field, value); `None` only when empty.
    pub fn random(&self, mut rand: impl FnMut() -> u64) -> Option<Pair<'_>> {
        match self {
            Hash::Listpack(v) if v.is_empty() => None,
            Hash::Listpack(v) => {
                let (k, val) = &v[(rand() % v.len() as u64) as usize];
                Some((k, val))
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
