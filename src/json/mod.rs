//! JSON values as the rules read them, borrowed: from a `serde_json::Value`
//! natively, from the flat form a binding lays them out in (the wasm
//! build, from what JS handed over), or from JSON text as it came over the
//! wire (a [`doc::Doc`], which the wire filter's parser reads). Nothing here
//! is copied.
//!
//! From the bottom up: the type and the scalars (`scalar.rs`); the document
//! read from JSON text (`doc.rs`); what stands at a place and what a
//! container holds (`slot.rs`); the compact form (`compact.rs`); the
//! members and items of a container in each form (`members.rs`); JSON text
//! written (`write.rs`); members sorted by name (`sort.rs`); and the
//! buffers a thread keeps from one reading to the next (`spare.rs`).

pub mod compact;
pub(crate) mod doc;
mod members;
mod scalar;
mod slot;
mod sort;
pub(crate) mod spare;
mod write;

pub(crate) use scalar::Kind;
pub use scalar::{Number, Text};
pub use slot::{Slot, Tree};
pub(crate) use sort::{any_twice, sort_by, sort_by_name};
pub(crate) use write::{one_line, string_len, write_scalar, write_string};
// Only the npm package's boundary asks whether JSON text is one line already.
pub use write::{is_one_line, write_exact};
