//! A counting global allocator for the zero-allocation tests (STYLE convention 4). Include it in
//! a test binary with `#[path = "support/alloc_counter.rs"] mod alloc_counter;`: a binary has one
//! global allocator, so these tests live in their own binaries.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Allocations of this thread only: the test harness allocates on its own threads (output
    // capture), which must not count.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the slot may be gone while the thread is being torn down
    let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
}

/// Allocations (and reallocations) made by the calling thread so far.
pub fn allocations() -> u64 {
    ALLOCS.with(|a| a.get())
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
