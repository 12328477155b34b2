//! The list type (Redis's t_list.c data side): a deque of byte strings, with the end-aware operations
//! the list commands need (push/pop at either end, Redis's index and range normalisation).
//!
//! Redis 7.0 keeps every list in a quicklist, so `encoding` is always `quicklist`; the deque gives the
//! same complexities (O(1) at both ends, O(N) in the middle).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Redis 7.0's `packed_threshold` (quicklist.c): an element of at least this many bytes gets a
/// quicklist node of its own, stored plain rather than in a listpack. 1 GB unless DEBUG
/// QUICKLIST-PACKED-THRESHOLD changes it; process-wide, as in Redis. The deque has no nodes: the RDB
/// writer lays a list out in Redis's nodes by it.
static PACKED_THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_PACKED_THRESHOLD);
const DEFAULT_PACKED_THRESHOLD: usize = 1 << 30;

pub fn packed_threshold() -> usize {
    PACKED_THRESHOLD.load(Ordering::Relaxed)
}

/// Redis's `quicklistisSetPackedThreshold`: 0 restores the default; false (and no change) above
/// 4 GB less 1 MB.
pub fn set_packed_threshold(sz: u64) -> bool {
    if sz > (1 << 32) - (1 << 20) {
        return false;
    }
    let sz = if sz == 0 {
        DEFAULT_PACKED_THRESHOLD
    } else {
        sz as usize
    };
    PACKED_THRESHOLD.store(sz, Ordering::Relaxed);
    true
}

/// Which end of a list (Redis's `LIST_HEAD` / `LIST_TAIL`, the `LEFT` / `RIGHT` of LMOVE).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum End {
    Head,
    Tail,
}

#[derive(Clone, Default)]
pub struct List {
    pub items: VecDeque<Vec<u8>>,
}

impl List {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Redis 7.0 keeps every list in a quicklist.
    pub fn encoding(&self) -> &'static str {
        "quicklist"
    }

    /// Each element's approximate heap footprint (MEMORY USAGE).
    pub fn element_sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.items.iter().map(|i| i.capacity() + 24)
    }

    pub fn push(&mut self, end: End, v: Vec<u8>) {
        match end {
            End::Head => self.items.push_front(v),
            End::Tail => self.items.push_back(v),
        }
    }

    pub fn pop(&mut self, end: End) -> Option<Vec<u8>> {
        match end {
            End::Head => self.items.pop_front(),
            End::Tail => self.items.pop_back(),
        }
    }

    /// A Redis index (negative counts from the tail) as a position, if within the list.
    pub fn index(&self, i: i64) -> Option<usize> {
        let len = self.items.len() as i64;
        let i = if i < 0 { len + i } else { i };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// Redis's range normalisation (LRANGE, LTRIM): `start..=end` as positions, or `None` when empty.
    pub fn range(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let len = self.items.len() as i64;
        let mut start = if start < 0 { len + start } else { start };
        let mut end = if end < 0 { len + end } else { end };
        if start < 0 {
            start = 0;
        }
        if start > end || start >= len {
            return None;
        }
        if end >= len {
            end = len - 1;
        }
        Some((start as usize, end as usize))
    }
}
