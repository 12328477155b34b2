//! Where a VM's small blocks come from. Lua 5.1 and Wren make a few small objects for nearly
//! every call a script makes (KEYS and ARGV strings, replies, argument lists) and their collectors
//! free them in batches, so blocks of up to `SMALL_MAX` bytes are sized to a multiple of 16 and,
//! once freed, kept on a spare list for their size (`Spares`: up to `SPARE_MAX` bytes in all,
//! about what one collection of a busy VM frees) to be handed out again before malloc is asked:
//! a few dozen instructions instead of malloc's and free's few hundred.
//!
//! - `Heap`, for an allocator told only the new size (Wren's `reallocate`): a header before each
//!   block holds its capacity. `used` counts the bytes of live blocks (what the memory limit is
//!   checked against); spare blocks are not counted.
//! - `SizedHeap`, for an allocator told the old size too (Lua's `lua_Alloc`): no header, and the
//!   VM counts its own bytes.

use std::ffi::c_void;
use std::ptr;

/// The largest small block a VM asks for.
const SMALL_MAX: usize = 256;
/// Spare-list classes: 16, 32, ... bytes, up to a small block with `Heap`'s header.
const CLASSES: usize = (SMALL_MAX + HEADER) / 16;
const SPARE_MAX: usize = 1024 * 1024;

/// Before every block; 16 bytes, so blocks keep malloc's 16-byte alignment.
#[repr(C, align(16))]
struct Header {
    /// The block's capacity: its size class's for a small block, the size asked for a large one.
    capacity: usize,
}

const HEADER: usize = std::mem::size_of::<Header>();

/// A spare block's first bytes: the next spare block of its class.
struct Link {
    next: *mut Link,
}

/// The spare lists, one per size class, of blocks of `(class + 1) * 16` bytes allocated by malloc.
struct Spares {
    lists: [*mut Link; CLASSES],
    bytes: usize,
}

impl Default for Spares {
    fn default() -> Spares {
        Spares {
            lists: [ptr::null_mut(); CLASSES],
            bytes: 0,
        }
    }
}

impl Spares {
    /// A block of `block` bytes (a small class's): a spare one, else malloc's. `counted` is what
    /// it counted for while spare (its bytes less any header).
    #[inline]
    unsafe fn take(&mut self, block: usize, counted: usize) -> *mut u8 {
        let class = block / 16 - 1;
        let b = self.lists[class];
        if b.is_null() {
            // SAFETY: plain malloc; null is passed on.
            return unsafe { libc::malloc(block) as *mut u8 };
        }
        // SAFETY: a spare block holds its link.
        self.lists[class] = unsafe { (*b).next };
        self.bytes -= counted;
        b.cast()
    }

    /// Gives back block `b` of `block` bytes (a small class's, from `take`): kept as spare while
    /// the spare blocks count less than `SPARE_MAX` with its `counted` bytes, else freed.
    #[inline]
    unsafe fn give(&mut self, b: *mut u8, block: usize, counted: usize) {
        if self.bytes + counted > SPARE_MAX {
            // SAFETY: malloc'd by `take`.
            unsafe { libc::free(b.cast()) };
            return;
        }
        let class = block / 16 - 1;
        let link = b.cast::<Link>();
        // SAFETY: a block of at least 16 bytes, no longer used by the VM.
        unsafe { (*link).next = self.lists[class] };
        self.lists[class] = link;
        self.bytes += counted;
    }
}

impl Drop for Spares {
    fn drop(&mut self) {
        for head in &mut self.lists {
            while !head.is_null() {
                // SAFETY: a spare block, on no other list.
                unsafe {
                    let b = *head;
                    *head = (*b).next;
                    libc::free(b.cast());
                }
            }
        }
    }
}

#[derive(Default)]
pub struct Heap {
    spare: Spares,
    used: usize,
    /// The most `used` has been since `take_freed` last asked (Wren's collector frees as a
    /// script runs, so what a run gave back is this less `used`).
    high: usize,
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
            // A small block's class counts its header.
            let h = if capacity <= SMALL_MAX {
                self.spare.take(capacity + HEADER, capacity) as *mut Header
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
            if capacity <= SMALL_MAX {
                self.spare.give(h.cast(), capacity + HEADER, capacity);
            } else {
                libc::free(h.cast());
            }
        }
    }
}

/// Small blocks for an allocator that is told each block's size when it is resized or freed
/// (Lua's `lua_Alloc`), so blocks need no header.
#[derive(Default)]
pub struct SizedHeap {
    spare: Spares,
}

impl SizedHeap {
    /// Lua's `lua_Alloc` without the accounting: `new` 0 frees `p` (and returns null), else `p`
    /// (null, or a block of `old` bytes) is resized to `new` bytes. Null when the system is out
    /// of memory, `p` then being left as it was.
    ///
    /// # Safety
    /// `p` is null or a live block of this heap, allocated or last resized with `old` bytes.
    #[inline]
    pub unsafe fn realloc(&mut self, p: *mut c_void, old: usize, new: usize) -> *mut c_void {
        unsafe {
            if p.is_null() {
                return if new == 0 {
                    ptr::null_mut()
                } else {
                    self.take(new)
                };
            }
            if new == 0 {
                self.release(p, old);
                return ptr::null_mut();
            }
            let (from, to) = (capacity_for(old), capacity_for(new));
            if from == to {
                return p;
            }
            if from > SMALL_MAX && to > SMALL_MAX {
                return libc::realloc(p, new);
            }
            let q = self.take(new);
            if !q.is_null() {
                ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, old.min(new));
                self.release(p, old);
            }
            q
        }
    }

    #[inline]
    unsafe fn take(&mut self, size: usize) -> *mut c_void {
        let capacity = capacity_for(size);
        // SAFETY: a small class's capacity, or plain malloc.
        unsafe {
            if capacity <= SMALL_MAX {
                self.spare.take(capacity, capacity).cast()
            } else {
                libc::malloc(capacity)
            }
        }
    }

    #[inline]
    unsafe fn release(&mut self, p: *mut c_void, size: usize) {
        let capacity = capacity_for(size);
        // SAFETY: `p` was taken for `size` bytes, so for this capacity.
        unsafe {
            if capacity <= SMALL_MAX {
                self.spare.give(p.cast(), capacity, capacity);
            } else {
                libc::free(p);
            }
        }
    }
}

fn header(p: *const c_void) -> *mut Header {
    // SAFETY (of the callers): every block is HEADER bytes after its header.
    unsafe { (p as *mut u8).sub(HEADER).cast() }
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
            assert!(heap.spare.bytes <= SPARE_MAX);
            assert_eq!(heap.used(), 0);
        }
    }

    #[test]
    fn sized_blocks_keep_their_bytes_and_are_reused() {
        let mut heap = SizedHeap::default();
        unsafe {
            let mut p = heap.realloc(ptr::null_mut(), 0, 5);
            std::slice::from_raw_parts_mut(p as *mut u8, 5).copy_from_slice(b"hello");
            let mut size = 5;
            for next in [16, 40, 300, 5000, 100, 5] {
                p = heap.realloc(p, size, next);
                assert_eq!(p as usize % 16, 0);
                assert_eq!(std::slice::from_raw_parts(p as *const u8, 5), b"hello");
                size = next;
            }
            assert!(heap.realloc(p, size, 0).is_null());
            let a = heap.realloc(ptr::null_mut(), 0, 24);
            heap.realloc(a, 24, 0);
            let b = heap.realloc(ptr::null_mut(), 0, 30);
            assert_eq!(a, b, "a freed block of the same class is handed out again");
            heap.realloc(b, 30, 0);
            let many: Vec<_> = (0..10_000)
                .map(|_| heap.realloc(ptr::null_mut(), 0, 200))
                .collect();
            for p in many {
                heap.realloc(p, 200, 0);
            }
            assert!(heap.spare.bytes <= SPARE_MAX);
        }
    }
}
