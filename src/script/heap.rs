//! `Heap`: where a Wren VM's blocks come from (its `reallocate` hook). Wren allocates a few small
//! objects for nearly every call a script makes (strings, argument lists) and its collector frees
//! them in batches, so blocks of up to `SMALL_MAX` bytes are sized to a multiple of 16 and, once
//! freed, kept on a spare list for their size (up to `SPARE_MAX` bytes in all, about what one
//! collection of a busy VM frees) to be handed out again before malloc is asked. A header before each block holds its
//! capacity. `used` counts the bytes of live blocks (what the memory limit is checked against);
//! spare blocks are not counted.

use std::ffi::c_void;
use std::ptr;

const SMALL_MAX: usize = 256;
const CLASSES: usize = SMALL_MAX / 16;
const SPARE_MAX: usize = 1024 * 1024;

/// Before every block; 16 bytes, so blocks keep malloc's 16-byte alignment.
#[repr(C, align(16))]
struct Header {
    /// The block's capacity: its size class's for a small block, the size asked for a large one.
    capacity: usize,
    /// The next spare block of the same class, while this one is spare.
    next: *mut Header,
}

const HEADER: usize = std::mem::size_of::<Header>();

pub struct Heap {
    spare: [*mut Header; CLASSES],
    spare_bytes: usize,
    used: usize,
    /// The most `used` has been since `take_freed` last asked (Wren's collector frees as a
    /// script runs, so what a run gave back is this less `used`).
    high: usize,
}

impl Default for Heap {
    fn default() -> Heap {
        Heap {
            spare: [ptr::null_mut(); CLASSES],
            spare_bytes: 0,
            used: 0,
            high: 0,
        }
    }
}

/// The capacity a block for `size` bytes gets.
fn capacity_for(size: usize) -> usize {
    if size <= SMALL_MAX {
        size.div_ceil(16).max(1) * 16
    } else {
        size
    }
}

impl Heap {
    /// Bytes of the live blocks.
    pub fn used(&self) -> usize {
        self.used
    }

    /// The bytes freed since the last time: the most the heap held since then, less what it
    /// holds now.
    pub fn take_freed(&mut self) -> usize {
        let freed = self.high - self.used;
        self.high = self.used;
        freed
    }

    /// The most the heap held since `take_freed` last asked.
    pub fn high(&self) -> usize {
        self.high
    }

    /// C's `realloc`: `p` null allocates, `size` 0 frees (and returns null). Null when the
    /// system is out of memory, `p` then being left as it was.
    ///
    /// # Safety
    /// `p` is null or a live block of this `Heap`.
    #[inline]
    pub unsafe fn realloc(&mut self, p: *mut c_void, size: usize) -> *mut c_void {
        unsafe {
            if p.is_null() {
                return if size == 0 {
                    ptr::null_mut()
                } else {
                    self.take(size)
                };
            }
            if size == 0 {
                self.release(p);
                return ptr::null_mut();
            }
            let old = Self::capacity(p);
            if size <= old && capacity_for(size) == old {
                return p;
            }
            if old > SMALL_MAX && size > SMALL_MAX {
                // Large to large: libc can often grow or shrink in place.
                let h = libc::realloc(header(p).cast(), HEADER + size) as *mut Header;
                if h.is_null() {
                    return ptr::null_mut();
                }
                (*h).capacity = size;
                self.used = self.used - old + size;
                self.high = self.high.max(self.used);
                return h.cast::<u8>().add(HEADER).cast();
            }
            let q = self.take(size);
            if !q.is_null() {
                ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, old.min(size));
                self.release(p);
            }
            q
        }
    }

    /// The bytes a block can hold.
    ///
    /// # Safety
    /// `p` is a live block of a `Heap`.
    #[inline]
    unsafe fn capacity(p: *const c_void) -> usize {
        unsafe { (*header(p)).capacity }
    }

    #[inline]
    unsafe fn take(&mut self, size: usize) -> *mut c_void {
        unsafe {
            let capacity = capacity_for(size);
            let h = if capacity <= SMALL_MAX {
                let class = capacity / 16 - 1;
                let h = self.spare[class];
                if h.is_null() {
                    libc::malloc(HEADER + capacity) as *mut Header
                } else {
                    self.spare[class] = (*h).next;
                    self.spare_bytes -= capacity;
                    h
                }
            } else {
                libc::malloc(HEADER + capacity) as *mut Header
            };
            if h.is_null() {
                return ptr::null_mut();
            }
            (*h).capacity = capacity;
            self.used += capacity;
            self.high = self.high.max(self.used);
            h.cast::<u8>().add(HEADER).cast()
        }
    }

    #[inline]
    unsafe fn release(&mut self, p: *mut c_void) {
        unsafe {
            let h = header(p);
            let capacity = (*h).capacity;
            self.used -= capacity;
            if capacity <= SMALL_MAX && self.spare_bytes + capacity <= SPARE_MAX {
                let class = capacity / 16 - 1;
                (*h).next = self.spare[class];
                self.spare[class] = h;
                self.spare_bytes += capacity;
            } else {
                libc::free(h.cast());
            }
        }
    }
}

fn header(p: *const c_void) -> *mut Header {
    // SAFETY (of the callers): every block is HEADER bytes after its header.
    unsafe { (p as *mut u8).sub(HEADER).cast() }
}

impl Drop for Heap {
    fn drop(&mut self) {
        for head in &mut self.spare {
            while !head.is_null() {
                // SAFETY: a spare block of this heap, on no other list.
                unsafe {
                    let h = *head;
                    *head = (*h).next;
                    libc::free(h.cast());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_bytes_across_every_kind_of_resize() {
        let mut heap = Heap::default();
        unsafe {
            let mut p = heap.realloc(ptr::null_mut(), 5);
            std::slice::from_raw_parts_mut(p as *mut u8, 5).copy_from_slice(b"hello");
            // Within the class, to another class, to large, larger, and back to small.
            for size in [16, 40, 300, 5000, 100, 5] {
                p = heap.realloc(p, size);
                assert!(Heap::capacity(p) >= size);
                assert_eq!(p as usize % 16, 0);
                assert_eq!(std::slice::from_raw_parts(p as *const u8, 5), b"hello");
                assert_eq!(heap.used(), capacity_for(size));
            }
            assert!(heap.realloc(p, 0).is_null());
            assert_eq!(heap.used(), 0);
        }
    }

    #[test]
    fn freed_small_blocks_are_reused_and_bounded() {
        let mut heap = Heap::default();
        unsafe {
            let a = heap.realloc(ptr::null_mut(), 24);
            heap.realloc(a, 0);
            let b = heap.realloc(ptr::null_mut(), 30);
            assert_eq!(a, b, "a freed block of the same class is handed out again");
            heap.realloc(b, 0);
            let many: Vec<_> = (0..1000)
                .map(|_| heap.realloc(ptr::null_mut(), 256))
                .collect();
            for p in many {
                heap.realloc(p, 0);
            }
            assert!(heap.spare_bytes <= SPARE_MAX);
            assert_eq!(heap.used(), 0);
        }
    }
}
