//! The modules' allocator. A call of a hot path ([`within`]: the object
//! API's `run`, a filter's `filter` and `echo`) allocates by moving a
//! pointer through a chunk of memory, and all it allocated is taken back at
//! once when the next such call begins: JS has read its answer by then.
//! Freeing in a call takes back only the latest allocation (so that a
//! growing vector grows where it is); everything else waits for the next
//! call. Out of those calls (a filter made, the tape's areas, wasm-bindgen's
//! own tables), and where the chunk has no room, Rust's own allocator
//! serves, and frees and grows its blocks wherever they are: what outlives
//! a call is never in the chunk, unless made in a call. On the SEP example,
//! the filter took 1.10× as long with Rust's allocator alone (`make bench`).
//!
//! A call that found the chunk too small leaves it for one of at least
//! twice the size and all that call asked for. Chunks are never freed (an
//! old one may still be named by a pointer being dropped), so they hold at
//! most about twice the largest call's need.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// The first chunk's bytes.
const FIRST: usize = 1 << 16;
/// The most chunks made: each at least twice the last, up to 4 GiB.
const CHUNKS: usize = 16;

/// The allocator. (A module has one thread; the atomics are plain loads
/// and stores there.)
pub(crate) struct Arena;

/// Where each chunk made so far starts and ends, the last the one in use.
static STARTS: [AtomicUsize; CHUNKS] = [const { AtomicUsize::new(0) }; CHUNKS];
static ENDS: [AtomicUsize; CHUNKS] = [const { AtomicUsize::new(0) }; CHUNKS];
/// How many chunks have been made.
static MADE: AtomicUsize = AtomicUsize::new(0);
/// The chunk in use: its start and end, and the next free byte.
static START: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Whether a call is at work.
static IN_CALL: AtomicBool = AtomicBool::new(false);
/// What the last call asked for beyond the chunk's room, in bytes.
static OUTGROWN: AtomicUsize = AtomicUsize::new(0);

/// Runs `call`, its allocations in the chunk, after taking back all the
/// last call allocated there.
pub(crate) fn within<T>(call: impl FnOnce() -> T) -> T {
    let outgrown = OUTGROWN.swap(0, Relaxed);
    if outgrown > 0 {
        grow(outgrown);
    }
    NEXT.store(START.load(Relaxed), Relaxed);
    IN_CALL.store(true, Relaxed);
    let result = call();
    IN_CALL.store(false, Relaxed);
    result
}

/// Makes the first chunk, as the module starts: its memory is the module's
/// from the start.
pub(crate) fn start() {
    grow(0);
}

/// Makes the next chunk the one in use: twice the last and `outgrown`
/// bytes more than it, rounded up to a power of two (unless none can be
/// made: then calls allocate as the rest do).
#[cold]
fn grow(outgrown: usize) {
    let made = MADE.load(Relaxed);
    let last = END.load(Relaxed) - START.load(Relaxed);
    let size = (2 * last + outgrown).max(FIRST).checked_next_power_of_two();
    let (Some(start_slot), Some(end_slot), Some(Ok(layout))) = (
        STARTS.get(made),
        ENDS.get(made),
        size.map(|size| Layout::from_size_align(size, 16)),
    ) else {
        return;
    };
    // SAFETY: the layout has a non-zero size.
    let start = unsafe { System.alloc(layout) } as usize;
    if start == 0 {
        return;
    }
    start_slot.store(start, Relaxed);
    end_slot.store(start + layout.size(), Relaxed);
    MADE.store(made + 1, Relaxed);
    START.store(start, Relaxed);
    END.store(start + layout.size(), Relaxed);
}

/// Whether `at` is in a chunk: in the one in use, or an older one.
fn in_chunk(at: usize) -> bool {
    let made = MADE.load(Relaxed);
    (START.load(Relaxed)..END.load(Relaxed)).contains(&at)
        || STARTS
            .iter()
            .zip(&ENDS)
            .take(made)
            .any(|(start, end)| (start.load(Relaxed)..end.load(Relaxed)).contains(&at))
}

// SAFETY: a call hands out each byte of the chunk at most once until the
// next call begins, once nothing allocated in the last is in use (JS has
// read its answer); every other block is the system allocator's, freed and
// grown only by it.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if IN_CALL.load(Relaxed) {
            let at = NEXT.load(Relaxed).next_multiple_of(layout.align());
            if let Some(end) = at
                .checked_add(layout.size())
                .filter(|end| *end <= END.load(Relaxed))
            {
                NEXT.store(end, Relaxed);
                return at as *mut u8;
            }
            OUTGROWN.fetch_add(layout.size(), Relaxed);
        }
        // SAFETY: as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, at: *mut u8, layout: Layout) {
        let start = at as usize;
        if (START.load(Relaxed)..END.load(Relaxed)).contains(&start) {
            if IN_CALL.load(Relaxed) && start + layout.size() == NEXT.load(Relaxed) {
                NEXT.store(start, Relaxed);
            }
        } else if !in_chunk(start) {
            // SAFETY: not in a chunk, so the system allocator's.
            unsafe { System.dealloc(at, layout) }
        }
    }

    unsafe fn realloc(&self, at: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let start = at as usize;
        if !in_chunk(start) {
            if IN_CALL.load(Relaxed) {
                OUTGROWN.fetch_add(size, Relaxed);
            }
            // SAFETY: the system allocator's block, as the caller's.
            return unsafe { System.realloc(at, layout, size) };
        }
        let end = start
            .checked_add(size)
            .filter(|end| *end <= END.load(Relaxed));
        if let Some(end) =
            end.filter(|_| IN_CALL.load(Relaxed) && start + layout.size() == NEXT.load(Relaxed))
        {
            NEXT.store(end, Relaxed);
            return at;
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
