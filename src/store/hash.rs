//! The hash type (Redis's t_hash.c data side): field → value, on the keyspace's `Dict` so HSCAN gets
//! the same stable cursor and HRANDFIELD the same O(1) sampling as the keyspace.

use super::Dict;

#[derive(Default)]
pub struct Hash {
    pub fields: Dict<Vec<u8>>,
}

impl Clone for Hash {
    fn clone(&self) -> Self {
        let mut fields = Dict::default();
        for (_, k, v) in self.fields.iter() {
            fields.insert_new(k, v.clone());
        }
        Hash { fields }
    }
}

impl Hash {
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn encoding(&self) -> &'static str {
        "hashtable"
    }

    pub fn heap_size(&self) -> usize {
        self.fields
            .iter()
            .map(|(_, k, v)| k.len() + v.capacity() + 32)
            .sum()
    }
}
