//! The set type (Redis's t_set.c data side): members on the keyspace's `Dict`, so SSCAN gets the same
//! stable cursor and SRANDMEMBER/SPOP the same O(1) sampling as the keyspace.

use super::Dict;

#[derive(Default)]
pub struct Set {
    pub members: Dict<()>,
}

impl Clone for Set {
    fn clone(&self) -> Self {
        let mut members = Dict::default();
        for (_, k, _) in self.members.iter() {
            members.insert_new(k, ());
        }
        Set { members }
    }
}

impl Set {
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn encoding(&self) -> &'static str {
        "hashtable"
    }

    pub fn heap_size(&self) -> usize {
        self.members.iter().map(|(_, k, _)| k.len() + 24).sum()
    }
}
