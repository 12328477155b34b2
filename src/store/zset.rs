//! The sorted-set type (Redis's t_zset.c data side): member → score, ordered by (score, member).

use std::collections::HashMap;

#[derive(Clone, Default)]
pub struct ZSet {
    pub scores: HashMap<Vec<u8>, f64>,
}

impl ZSet {
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub fn encoding(&self) -> &'static str {
        "skiplist"
    }

    pub fn heap_size(&self) -> usize {
        self.scores.keys().map(|k| k.capacity() + 40).sum()
    }
}
