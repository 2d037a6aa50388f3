//! The module's allocator. A call of the module is one tape in and one
//! answer out, and JS has read the answer before it calls again; so all a
//! call allocates can be taken back at once when the next call begins.
//! Allocating moves a pointer; freeing takes back only the latest
//! allocation (so that a growing vector grows where it is), and everything
//! else waits for the next call. This is faster than a general allocator
//! and leaves one out of the module (dlmalloc: 8 KB of code).
//!
//! What outlives calls, the tape's areas, is allocated between calls and
//! then kept ([`keep`]); [`reset`] takes back what was allocated since. An
//! area that grows leaves its old room behind, less than it holds now.

use std::alloc::{GlobalAlloc, Layout};
use std::arch::wasm32;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The bytes of a page of wasm memory.
const PAGE: usize = 65_536;

/// The allocator: it holds the memory from the first page it grew up to
/// `END`, in use up to `NEXT`, kept across calls up to `KEPT`. (The module
/// has one thread; the atomics are plain loads and stores there.)
pub(super) struct Bump;

static NEXT: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// Takes back all that was allocated since the last [`keep`].
pub(super) fn reset() {
    NEXT.store(KEPT.load(Relaxed), Relaxed);
}

/// Keeps all that is allocated now for good.
pub(super) fn keep() {
    KEPT.store(NEXT.load(Relaxed), Relaxed);
}

/// Makes the allocator hold memory up to `end`, growing the module's
/// memory; false when it cannot grow. Out of line: it is seldom needed, and
/// the allocator's common path is inlined wherever Rust allocates.
#[cold]
#[inline(never)]
fn hold(end: usize) -> bool {
    let held = END.load(Relaxed);
    if end <= held {
        return true;
    }
    let pages = (end - held).div_ceil(PAGE);
    let Some(new_end) = pages
        .checked_mul(PAGE)
        .and_then(|bytes| held.checked_add(bytes))
    else {
        return false;
    };
    // Only this allocator grows the memory, so what it grows follows what
    // it holds.
    let grown_from = wasm32::memory_grow(0, pages);
    if grown_from == usize::MAX || grown_from.checked_mul(PAGE) != Some(held) {
        return false;
    }
    END.store(new_end, Relaxed);
    true
}

/// Where an allocation of `layout` would start and end if made now.
#[inline]
fn place(layout: Layout) -> Option<(usize, usize)> {
    let at = NEXT
        .load(Relaxed)
        .checked_next_multiple_of(layout.align())?;
    Some((at, at.checked_add(layout.size())?))
}

/// Takes what `place` says, holding memory up to its end; null when the
/// memory cannot grow that far.
#[inline]
fn take(place: Option<(usize, usize)>) -> *mut u8 {
    match place {
        Some((at, end)) if end <= END.load(Relaxed) || hold(end) => {
            NEXT.store(end, Relaxed);
            at as *mut u8
        }
        _ => ptr::null_mut(),
    }
}

/// The first allocation: the allocator starts at the end of the memory the
/// module starts with.
#[cold]
fn first(layout: Layout) -> *mut u8 {
    let end = wasm32::memory_size(0) * PAGE;
    END.store(end, Relaxed);
    NEXT.store(end, Relaxed);
    KEPT.store(end, Relaxed);
    take(place(layout))
}

// SAFETY: `alloc` hands out each byte at most once until `reset` takes it
// back, which happens only between calls, once nothing allocated in a call
// is used any more (the answer JS has read is the last).
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if END.load(Relaxed) == 0 {
            return first(layout);
        }
        take(place(layout))
    }

    unsafe fn dealloc(&self, at: *mut u8, layout: Layout) {
        if at as usize + layout.size() == NEXT.load(Relaxed) {
            NEXT.store(at as usize, Relaxed);
        }
    }

    unsafe fn realloc(&self, at: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let start = at as usize;
        if start + layout.size() == NEXT.load(Relaxed) {
            return take(start.checked_add(size).map(|end| (start, end)));
        }
        // SAFETY: `layout` with `size` is a valid layout (realloc's contract).
        let moved = unsafe { self.alloc(Layout::from_size_align_unchecked(size, layout.align())) };
        if !moved.is_null() {
            // SAFETY: both hold at least the smaller size and do not overlap.
            unsafe { ptr::copy_nonoverlapping(at, moved, layout.size().min(size)) };
        }
        moved
    }
}
