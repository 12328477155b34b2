//! `Dict`: the keyspace's hash table — a compact, insertion-stable map from byte-string keys to values.
//!
//! Layout (as CPython's compact dict): a `hashbrown::HashTable<u32>` of indices into a dense `Vec` of
//! slots. A key never moves once inserted, which gives what a plain `HashMap` cannot:
//! - `scan(cursor)`: a stateless cursor that is simply a slot position. Every key present for a whole
//!   scan is returned (slots never move, resizing only touches the index), which is Redis's SCAN
//!   guarantee without the reverse-binary trick;
//! - `random_slot()`: O(1) random sampling for RANDOMKEY and the active expiry cycle.
//!
//! Freed slots are reused (last freed first) and trailing free slots are trimmed, so the slot vector
//! stays about as large as the live key count after churn.

use super::compact::CompactBytes;
use super::siphash::SipKey;
use hashbrown::HashTable;

/// A slot: the key and its value, or free.
type Slot<V> = Option<(CompactBytes, V)>;

/// Past this many slots the slot vector grows by a quarter rather than doubling: a table of
/// millions of keys would otherwise leave up to half its slots' memory unused.
const GENTLE_GROWTH_FROM: usize = 1 << 20;

pub struct Dict<V> {
    index: HashTable<u32>,
    slots: Vec<Slot<V>>,
    free: Vec<u32>,
    hasher: SipKey,
}

impl<V> Default for Dict<V> {
    fn default() -> Self {
        Dict {
            index: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
            hasher: SipKey::process(),
        }
    }
}

impl<V> Dict<V> {
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Makes room for `n` more keys at once (the RDB loader, from RESIZEDB), so loading does not
    /// rehash as the table grows.
    pub fn reserve(&mut self, n: usize) {
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index.reserve(n, |&i| hasher.hash(slot_key(slots, i)));
        self.slots.reserve(n);
    }

    /// The table's own bytes, keys and values aside: its slots and index (MEMORY STATS).
    pub fn table_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot<V>>()
            + self.index.capacity() * (std::mem::size_of::<u32>() + 1)
            + self.free.capacity() * std::mem::size_of::<u32>()
    }

    /// One past the highest slot position; scan cursors range over `0..slot_span()`.
    pub fn slot_span(&self) -> usize {
        self.slots.len()
    }

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash(key)
    }

    /// Slot position of `key`, if present.
    pub fn find(&self, key: &[u8]) -> Option<u32> {
        let slots = &self.slots;
        self.index
            .find(self.hash(key), |&i| slot_key(slots, i) == key)
            .copied()
    }

    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.find(key).map(|i| self.value_at(i))
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        let i = self.find(key)?;
        Some(self.value_at_mut(i))
    }

    pub fn value_at(&self, slot: u32) -> &V {
        &self.slots[slot as usize].as_ref().expect("live slot").1
    }

    pub fn value_at_mut(&mut self, slot: u32) -> &mut V {
        &mut self.slots[slot as usize].as_mut().expect("live slot").1
    }

    pub fn entry_at(&self, slot: usize) -> Option<(&[u8], &V)> {
        self.slots
            .get(slot)
            .and_then(|s| s.as_ref())
            .map(|(k, v)| (&k[..], v))
    }

    pub fn key_at(&self, slot: u32) -> &[u8] {
        slot_key(&self.slots, slot)
    }

    /// Inserts a key that the caller has just checked is absent; returns its slot.
    pub fn insert_new(&mut self, key: &[u8], val: V) -> u32 {
        let hash = self.hash(key);
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some((key.into(), val));
                i
            }
            None => {
                if self.slots.len() == self.slots.capacity()
                    && self.slots.len() >= GENTLE_GROWTH_FROM
                {
                    self.slots.reserve_exact(self.slots.len() / 4);
                }
                self.slots.push(Some((key.into(), val)));
                (self.slots.len() - 1) as u32
            }
        };
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index
            .insert_unique(hash, slot, |&i| hasher.hash(slot_key(slots, i)));
        slot
    }

    /// Removes `key`, returning its slot position and value.
    pub fn remove(&mut self, key: &[u8]) -> Option<(u32, V)> {
        self.remove_unless(key, |_| false).and_then(Result::ok)
    }

    /// `remove`, unless `keep` says otherwise of the entry found: one lookup where a check then
    /// `remove` would make two. `Err(slot)` when the entry was kept.
    #[inline]
    pub fn remove_unless(
        &mut self,
        key: &[u8],
        keep: impl FnOnce(&V) -> bool,
    ) -> Option<Result<(u32, V), u32>> {
        let hash = self.hash(key);
        let slots = &self.slots;
        let entry = self
            .index
            .find_entry(hash, |&i| slot_key(slots, i) == key)
            .ok()?;
        let slot = *entry.get();
        if keep(&slots[slot as usize].as_ref().expect("live slot").1) {
            return Some(Err(slot));
        }
        entry.remove();
        let (_, val) = self.slots[slot as usize].take().expect("live slot");
        self.release(slot);
        Some(Ok((slot, val)))
    }

    fn release(&mut self, slot: u32) {
        if slot as usize + 1 == self.slots.len() {
            self.slots.pop();
            // Trim every free slot now at the end, so the span shrinks after mass deletion.
            if matches!(self.slots.last(), Some(None)) {
                while matches!(self.slots.last(), Some(None)) {
                    self.slots.pop();
                }
                let span = self.slots.len() as u32;
                self.free.retain(|&i| i < span);
            }
        } else {
            self.free.push(slot);
        }
        if self.index.is_empty() {
            self.clear();
        }
    }

    pub fn clear(&mut self) {
        self.index = HashTable::new();
        self.slots = Vec::new();
        self.free = Vec::new();
    }

    /// Iterates live entries in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8], &V)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|(k, v)| (i as u32, &k[..], v)))
    }

    /// A uniformly chosen live slot (by rejection sampling over the slot vector, which stays dense).
    pub fn random_slot(&self, mut rand: impl FnMut() -> u64) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        for _ in 0..64 {
            let i = (rand() % self.slots.len() as u64) as usize;
            if self.slots[i].is_some() {
                return Some(i as u32);
            }
        }
        // Very sparse (only after heavy deletion in the middle): walk from a random point.
        let start = (rand() % self.slots.len() as u64) as usize;
        (0..self.slots.len())
            .map(|o| (start + o) % self.slots.len())
            .find(|&i| self.slots[i].is_some())
            .map(|i| i as u32)
    }
}

fn slot_key<V>(slots: &[Slot<V>], i: u32) -> &[u8] {
    &slots[i as usize].as_ref().expect("indexed slot is live").0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_find_remove_reuse() {
        let mut d: Dict<u32> = Dict::default();
        for i in 0..1000u32 {
            d.insert_new(format!("k{i}").as_bytes(), i);
        }
        assert_eq!(d.len(), 1000);
        assert_eq!(d.get(b"k500"), Some(&500));
        let (slot, v) = d.remove(b"k10").unwrap();
        assert_eq!(v, 10);
        assert_eq!(d.get(b"k10"), None);
        assert_eq!(d.insert_new(b"again", 7), slot);
        for i in 0..1000u32 {
            d.remove(format!("k{i}").as_bytes());
        }
        assert_eq!(d.len(), 1);
        d.remove(b"again");
        assert_eq!(d.slot_span(), 0);
    }

    #[test]
    fn slots_are_stable_across_growth() {
        let mut d: Dict<u32> = Dict::default();
        let first = d.insert_new(b"first", 1);
        for i in 0..100_000u32 {
            d.insert_new(format!("k{i}").as_bytes(), i);
        }
        assert_eq!(d.find(b"first"), Some(first));
    }
}
