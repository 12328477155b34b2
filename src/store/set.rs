//! The set type (Redis's t_set.c data side), in one of Redis 7.0's two encodings.
//!
//! - `Intset`: a sorted vector of integers, as Redis's intset keeps small all-integer sets. Members are
//!   kept (and returned by SMEMBERS, SSCAN, SUNION...) in ascending numeric order, as Redis does.
//! - `Table`: the keyspace's `Dict`, so SSCAN gets the same stable cursor and SRANDMEMBER/SPOP the
//!   same O(1) sampling as the keyspace.
//!
//! A set starts as an intset and converts one way to a table, exactly when Redis's `setTypeAdd` would:
//! when a member is not a canonical integer, or when it grows past `set-max-intset-entries`.
//!
//! Entry points: `Set::add`, `Set::remove`, `Set::contains`, `Set::iter`, `Set::random`,
//! `Set::sample_unique`, `Set::scan`.

use std::collections::HashSet;

use super::hash::{partial_shuffle, scan_slots};
use super::Dict;
use crate::util::{fmt_i64, parse_i64};

pub enum Set {
    Intset(Vec<i64>),
    Table(Dict<()>),
}

/// A member as stored: an intset integer or a table's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Member<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl Member<'_> {
    /// Calls `f` with the member's bytes (an integer is formatted on the stack).
    pub fn with_bytes<R>(self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Member::Int(n) => f(fmt_i64(n, &mut [0u8; 20])),
            Member::Bytes(b) => f(b),
        }
    }

    pub fn to_vec(self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }
}

impl Default for Set {
    fn default() -> Self {
        Set::Intset(Vec::new())
    }
}

impl Clone for Set {
    fn clone(&self) -> Self {
        match self {
            Set::Intset(v) => Set::Intset(v.clone()),
            Set::Table(d) => {
                let mut copy = Dict::default();
                for (_, k, _) in d.iter() {
                    copy.insert_new(k, ());
                }
                Set::Table(copy)
            }
        }
    }
}

impl Set {
    pub fn len(&self) -> usize {
        match self {
            Set::Intset(v) => v.len(),
            Set::Table(d) => d.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            Set::Intset(_) => "intset",
            Set::Table(_) => "hashtable",
        }
    }

    /// Each member's approximate heap footprint (MEMORY USAGE).
    pub fn element_sizes(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match self {
            Set::Intset(v) => Box::new(v.iter().map(|_| 8)),
            Set::Table(d) => Box::new(d.iter().map(|(_, k, _)| k.len() + 24)),
        }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        match self {
            Set::Intset(v) => parse_i64(member).is_some_and(|n| v.binary_search(&n).is_ok()),
            Set::Table(d) => d.find(member).is_some(),
        }
    }

    /// `contains` for a member of another set, without formatting intset integers needlessly.
    pub fn contains_member(&self, m: Member) -> bool {
        match (self, m) {
            (Set::Intset(v), Member::Int(n)) => v.binary_search(&n).is_ok(),
            _ => m.with_bytes(|b| self.contains(b)),
        }
    }

    fn convert(&mut self) {
        if let Set::Intset(v) = self {
            let mut d = Dict::default();
            for n in std::mem::take(v) {
                d.insert_new(fmt_i64(n, &mut [0u8; 20]), ());
            }
            *self = Set::Table(d);
        }
    }

    /// Adds `member`; true if it was new. An intset converts when the member is not an integer or
    /// the set grows past `max_intset` members.
    pub fn add(&mut self, member: &[u8], max_intset: i64) -> bool {
        if let Set::Intset(v) = self {
            match parse_i64(member) {
                Some(n) => {
                    let Err(at) = v.binary_search(&n) else {
                        return false;
                    };
                    v.insert(at, n);
                    if v.len() as i64 > max_intset {
                        self.convert();
                    }
                    return true;
                }
                None => self.convert(),
            }
        }
        match self {
            Set::Table(d) if d.find(member).is_none() => {
                d.insert_new(member, ());
                true
            }
            _ => false,
        }
    }

    /// Removes `member`; true if it was present.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            Set::Intset(v) => match parse_i64(member).map(|n| v.binary_search(&n)) {
                Some(Ok(i)) => {
                    v.remove(i);
                    true
                }
                _ => false,
            },
            Set::Table(d) => d.remove(member).is_some(),
        }
    }

    /// Every member: ascending for an intset, slot order for a table.
    pub fn iter(&self) -> Box<dyn Iterator<Item = Member<'_>> + '_> {
        match self {
            Set::Intset(v) => Box::new(v.iter().map(|&n| Member::Int(n))),
            Set::Table(d) => Box::new(d.iter().map(|(_, k, _)| Member::Bytes(k))),
        }
    }

    /// A uniformly chosen member; `None` only when empty.
    pub fn random(&self, mut rand: impl FnMut() -> u64) -> Option<Member<'_>> {
        match self {
            Set::Intset(v) if v.is_empty() => None,
            Set::Intset(v) => Some(Member::Int(v[(rand() % v.len() as u64) as usize])),
            Set::Table(d) => d.random_slot(rand).map(|s| Member::Bytes(d.key_at(s))),
        }
    }

    /// `count` distinct members chosen uniformly (`count` < `len()`), in no particular order.
    pub fn sample_unique(&self, count: usize, mut rand: impl FnMut() -> u64) -> Vec<Member<'_>> {
        if let Set::Table(d) = self {
            // Few out of many (Redis's CASE 4): draw random slots until enough distinct ones.
            if count * 3 <= d.len() {
                let mut seen = HashSet::with_capacity(count);
                let mut out = Vec::with_capacity(count);
                while out.len() < count {
                    let slot = d.random_slot(&mut rand).expect("not empty");
                    if seen.insert(slot) {
                        out.push(Member::Bytes(d.key_at(slot)));
                    }
                }
                return out;
            }
        }
        let mut all: Vec<Member> = self.iter().collect();
        partial_shuffle(&mut all, count, rand);
        all.truncate(count);
        all
    }

    /// One SSCAN step from `cursor`, visiting about `count` members: (next cursor, members). An
    /// intset is returned whole in one call, as Redis does for its compact encodings.
    pub fn scan(&self, cursor: u64, count: usize) -> (u64, Vec<Member<'_>>) {
        match self {
            Set::Intset(_) => (0, self.iter().collect()),
            Set::Table(d) => {
                let mut out = Vec::new();
                let next = scan_slots(d.slot_span(), cursor, count, |slot| {
                    d.entry_at(slot)
                        .map(|(k, _)| out.push(Member::Bytes(k)))
                        .is_some()
                });
                (next, out)
            }
        }
    }
}
