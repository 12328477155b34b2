//! The list type (Redis's t_list.c data side): a deque of byte strings.

use std::collections::VecDeque;

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

    pub fn heap_size(&self) -> usize {
        self.items.iter().map(|i| i.capacity() + 24).sum()
    }
}
