//! `CompactBytes`: an immutable byte string in 16 bytes that keeps up to 15 bytes inline, with no
//! allocation — the keys of every hash table in the store and the values of hash tables. Most
//! keys and members are short (`user:1000`, `member:00000001`), so most cost no allocation at
//! all, where a `Box<[u8]>` costs 16 bytes plus an allocation of at least 32 (Dragonfly's
//! CompactObject and Redis's embedded strings save the same).
//!
//! Layout, as two little-endian words: inline, the bytes fill bytes 0..15 and byte 15 (the high
//! byte of the second word) is `INLINE | len`; on the heap, the first word is the pointer of a
//! `Box<[u8]>` and the second its length, whose high byte is 0. The second word is never zero
//! (an inline string has the flag; a heap one is longer than 15 bytes), which gives
//! `Option<CompactBytes>`, and slots holding one, their niche.

use std::num::NonZeroU64;

#[cfg(target_endian = "big")]
compile_error!("CompactBytes assumes a little-endian target");

/// The most bytes kept inline.
pub const INLINE_MAX: usize = 15;
const INLINE: u8 = 0x80;

#[repr(C)]
pub struct CompactBytes {
    lo: u64,
    hi: NonZeroU64,
}

// SAFETY: a CompactBytes owns its heap bytes exclusively, as a Box<[u8]> would.
unsafe impl Send for CompactBytes {}
unsafe impl Sync for CompactBytes {}

impl CompactBytes {
    pub fn new(bytes: &[u8]) -> CompactBytes {
        if bytes.len() <= INLINE_MAX {
            let mut raw = [0u8; 16];
            raw[..bytes.len()].copy_from_slice(bytes);
            raw[15] = INLINE | bytes.len() as u8;
            let lo = u64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
            let hi = u64::from_le_bytes(raw[8..].try_into().expect("8 bytes"));
            CompactBytes {
                lo,
                hi: NonZeroU64::new(hi).expect("the inline flag is set"),
            }
        } else {
            let len = bytes.len() as u64;
            let ptr = Box::into_raw(Box::<[u8]>::from(bytes)) as *mut u8;
            CompactBytes {
                lo: ptr as u64,
                hi: NonZeroU64::new(len).expect("longer than INLINE_MAX"),
            }
        }
    }

    fn is_inline(&self) -> bool {
        self.hi.get() >> 56 & u64::from(INLINE) != 0
    }

    pub fn as_bytes(&self) -> &[u8] {
        if self.is_inline() {
            let len = (self.hi.get() >> 56) as usize & 0x7f;
            // SAFETY: repr(C) of two u64s: 16 contiguous bytes, the first `len` of them the string.
            unsafe { std::slice::from_raw_parts(self as *const Self as *const u8, len) }
        } else {
            // SAFETY: `lo` and `hi` are the pointer and length of the Box<[u8]> made in `new`,
            // owned by self.
            unsafe { std::slice::from_raw_parts(self.lo as *const u8, self.hi.get() as usize) }
        }
    }

    /// The bytes allocated for it apart from its own 16 (MEMORY USAGE, INFO).
    pub fn heap_size(&self) -> usize {
        if self.is_inline() {
            0
        } else {
            self.hi.get() as usize
        }
    }
}

impl Drop for CompactBytes {
    fn drop(&mut self) {
        if !self.is_inline() {
            let len = self.hi.get() as usize;
            // SAFETY: rebuilds the Box<[u8]> leaked in `new`, once.
            unsafe {
                drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    self.lo as *mut u8,
                    len,
                )));
            }
        }
    }
}

impl Default for CompactBytes {
    fn default() -> Self {
        CompactBytes::new(&[])
    }
}

impl Clone for CompactBytes {
    fn clone(&self) -> Self {
        CompactBytes::new(self.as_bytes())
    }
}

impl std::ops::Deref for CompactBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl From<&[u8]> for CompactBytes {
    fn from(bytes: &[u8]) -> Self {
        CompactBytes::new(bytes)
    }
}

impl PartialEq for CompactBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for CompactBytes {}

impl std::fmt::Debug for CompactBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_length_around_the_inline_limit() {
        for len in 0..40 {
            let s: Vec<u8> = (0..len)
                .map(|i| (i as u8).wrapping_mul(37) | 0x80)
                .collect();
            let c = CompactBytes::new(&s);
            assert_eq!(c.as_bytes(), &s[..]);
            assert_eq!(c.clone().as_bytes(), &s[..]);
            assert_eq!(c.heap_size(), if len <= INLINE_MAX { 0 } else { len });
        }
    }

    #[test]
    fn sixteen_bytes_with_a_niche() {
        assert_eq!(std::mem::size_of::<CompactBytes>(), 16);
        assert_eq!(std::mem::size_of::<Option<(CompactBytes, ())>>(), 16);
    }
}
