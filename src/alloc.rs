//! A counting global allocator: the system allocator plus a running total of live bytes, from
//! which INFO's `used_memory` is derived (Redis reads the same figure from zmalloc's counter).
//!
//! Most scripting VMs allocate with malloc directly and are never seen here; Luau's does not:
//! `mlua` allocates its blocks through Rust's global allocator, so they are part of `used`. They
//! are not data, so the scripting layer tells this module how many there are (`set_vm`), and
//! `data_peak` is the highest `used` less those bytes, the peak of `used_memory`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub struct Counting;

static USED: AtomicUsize = AtomicUsize::new(0);
/// The highest `USED - VM` seen while no VM that allocates here was running.
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Live bytes of `USED` held by scripting VMs (as of the last `set_vm`).
static VM: AtomicUsize = AtomicUsize::new(0);
/// Such a VM is running: its growth is not data, and `VM` is stale until the run ends, so the
/// peak waits for `set_vm` at the end of the run.
static VM_RUNNING: AtomicBool = AtomicBool::new(false);

// SAFETY: defers every allocation to `System`; only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        USED.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            USED.fetch_sub(layout.size(), Ordering::Relaxed);
            add(new_size);
        }
        p
    }
}

fn add(n: usize) {
    let now = USED.fetch_add(n, Ordering::Relaxed) + n;
    if VM_RUNNING.load(Ordering::Relaxed) {
        return;
    }
    note_peak(now.saturating_sub(VM.load(Ordering::Relaxed)));
}

fn note_peak(data: usize) {
    if data > PEAK.load(Ordering::Relaxed) {
        PEAK.store(data, Ordering::Relaxed);
    }
}

/// Every live byte allocated through Rust, scripting VMs' included.
pub fn used() -> usize {
    USED.load(Ordering::Relaxed)
}

/// The live bytes that are not a scripting VM's.
pub fn data_used() -> usize {
    used().saturating_sub(VM.load(Ordering::Relaxed))
}

/// The highest `data_used` so far.
pub fn data_peak() -> usize {
    PEAK.load(Ordering::Relaxed).max(data_used())
}

/// The scripting VMs that allocate through Rust hold `bytes` now; `running` while one of them
/// runs (from before it starts to `set_vm(_, false)` after it).
pub fn set_vm(bytes: usize, running: bool) {
    VM.store(bytes, Ordering::Relaxed);
    VM_RUNNING.store(running, Ordering::Relaxed);
    if !running {
        note_peak(data_used());
    }
}

/// Starts the peak over from the data in use now: once the VMs have started, so the bytes Luau's
/// VM allocated while it started, before `set_vm` could tell them apart, are not a peak of data.
pub fn restart_peak() {
    PEAK.store(data_used(), Ordering::Relaxed);
}

/// Resident set size from /proc, for `used_memory_rss`.
pub fn rss() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<usize>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

/// Bytes scripting VMs freed in bulk (a full collection, a VM dropped) since the last `trim`.
static FREED: AtomicUsize = AtomicUsize::new(0);

/// A scripting VM freed `bytes` at once (most VMs allocate with malloc directly: this is how the
/// server learns that malloc holds them now).
pub fn note_freed(bytes: usize) {
    FREED.fetch_add(bytes, Ordering::Relaxed);
}

/// Hands the allocator's free memory back to the system (the top of the heap and whole free pages
/// inside it) once VMs freed `min` bytes or more since the last time. glibc's malloc keeps freed
/// small blocks for reuse, so after a script filled a VM with small objects the process would stay
/// that big; big blocks it gives back by itself.
pub fn trim_if_freed(min: usize) {
    if FREED.load(Ordering::Relaxed) < min {
        return;
    }
    FREED.store(0, Ordering::Relaxed);
    // SAFETY: malloc_trim only returns free pages of the heap to the system.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}
