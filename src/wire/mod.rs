//! The wire filter: from the bytes a gateway receives to the bytes it
//! forwards, in one operation (WIRE-1..WIRE-7).
//!
//! A gateway holds bytes, not objects, and what it promises is about the
//! bytes the server will read. [`Filter::filter`] reads a body once, strictly
//! ([`parse`]), runs the rules on what it read (the same views and rules as
//! the object API), and carries out their edits on the text ([`patch`]):
//! every byte no rule changed goes on as it came. What it decides is an
//! outcome ([`Outcome`]): what to forward or how to refuse, the filter's own
//! answers, and one account of each message.
//!
//! This file only names the parts. From the bottom up: the headers a body
//! came with (`headers.rs`); the strict parser (`parse.rs`, its scanning in
//! `scan.rs`) and the patcher (`patch.rs`); the options (`options.rs`); the
//! outcome and its accounts (`outcome.rs`), each as one JSON line
//! (`line.rs`); the [`Filter`] (`filter.rs`), with what it does to the
//! answers a request carries (`answers.rs`) and to the `turnId` a response
//! echoes (`turns.rs`); `check` over a capture (`check.rs`) and its command
//! line (`args.rs`).

mod answers;
mod args;
mod check;
mod events;
mod exchange;
mod filter;
mod gateway;
mod headers;
mod ids;
mod line;
mod options;
mod outcome;
mod own;
mod parse;
mod patch;
mod reading;
mod scan;
mod sessions;
mod turns;

pub use args::{CHECK_USAGE, CheckCommand, SAME_FILE, USAGE};
pub use check::{Capture, Check, Counts, MAX_LINE_BOUND, MAX_LINE_BYTES, NOTHING_CHECKED, Printed};
pub use exchange::{Edit, Exchange, Head, Piece, Start, Step};
pub use filter::Filter;
pub use gateway::Gateway;
pub use options::{FilterContext, FilterOptions, GatewayOptions};
pub use outcome::{MessageKind, Outcome, Seen, Verdict};
pub use own::{Answer, Own};
pub use sessions::{MAX_NOTE_BYTES, MAX_REMEMBERED};
