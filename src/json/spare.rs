//! Buffers a thread keeps between the messages it reads, natively: a
//! filter's calls and `check`'s lines read each message into the memory the
//! last one had, with no allocation of their own. What grew past what a
//! usual message needs is let go of, so that one large message holds
//! nothing for the thread's life.
//!
//! In wasm, where every call of the binding allocates from an arena that
//! the next call takes back whole (binding/src/arena.rs), nothing may
//! outlive a call: buffers are made for each reading (a bump of the arena's
//! pointer), and those who hold them implement no `Drop` there.

use std::cell::Cell;
use std::thread::LocalKey;

/// The most room kept, in the unit each kind of buffers gives its room in:
/// a message of a thousand members. A thread keeps at most about 230 KiB:
/// a document's (`json/doc.rs`) and a reader's (`wire/parse.rs`).
#[cfg_attr(
    target_arch = "wasm32",
    expect(dead_code, reason = "nothing is kept in wasm")
)]
pub(crate) const KEPT: usize = 1024;

/// A kind of buffers a thread keeps one set of.
#[cfg_attr(
    target_arch = "wasm32",
    expect(dead_code, reason = "nothing is kept in wasm")
)]
pub(crate) trait Buffers: Default + 'static {
    /// The thread's set.
    fn kept() -> &'static LocalKey<Cell<Self>>;
    /// Their room, in entries (the largest buffer's, each in its own unit).
    fn room(&self) -> usize;
    /// Empties them, their room kept.
    fn clear(&mut self);
}

/// The set the thread keeps, or new empty buffers.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn take<B: Buffers>() -> B {
    B::kept().try_with(Cell::take).unwrap_or_default()
}

/// New empty buffers.
#[cfg(target_arch = "wasm32")]
pub(crate) fn take<B: Buffers>() -> B {
    B::default()
}

/// Keeps `buffers`, emptied, for the next reading, unless the set kept has
/// more room, or they are past [`KEPT`].
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn give<B: Buffers>(mut buffers: B) {
    let room = buffers.room();
    if room == 0 || room > KEPT {
        return;
    }
    buffers.clear();
    let _ = B::kept().try_with(|kept| {
        let held = kept.take();
        kept.set(if held.room() >= room { held } else { buffers });
    });
}
