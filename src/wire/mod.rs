//! The wire filter: from the bytes a gateway receives to the bytes it
//! forwards, in one operation (WIRE-1..WIRE-7), and the middleware's whole
//! exchange around it (WIRE-8).
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
//! (`line.rs`, the message's arguments left out of it in `arguments.rs`);
//! the [`Filter`] (`filter.rs`), with what it does to the
//! answers a request carries (`answers.rs`) and to the `turnId` a response
//! echoes (`turns.rs`, its ids matched as the clients match them in
//! `ids.rs`); `check` over a capture (`check.rs`) and its command line
//! (`args.rs`). Above the filter, the middleware's core: a [`Gateway`]
//! (`gateway.rs`, its options in `options.rs`, the sessions it remembers in
//! `sessions.rs`, a store shared with its peers laid out in `store.rs` and
//! what an exchange asks of it and tells it in `witness.rs`)
//! begins an [`Exchange`] for each request (`exchange.rs`), which says what
//! to do in [`Step`]s (`step.rs`), reads an answer as the
//! clients read it (`reading.rs`, event streams in `events.rs`), streams it
//! (`streams.rs`) or holds it whole (`held.rs`), and answers in the app's
//! stead in one wording (`own.rs`); once the answer is over, what each
//! request got (`tally.rs`) is the exchange's outcome account (`answered.rs`).

mod answered;
mod answers;
mod args;
mod arguments;
mod check;
mod events;
mod exchange;
mod filter;
mod gateway;
mod headers;
mod held;
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
mod step;
mod store;
mod streams;
mod tally;
mod turns;
mod witness;

pub use answered::ExchangeOutcome;
pub use args::{CHECK_USAGE, CheckCommand, SAME_FILE, USAGE};
pub use check::{Capture, Check, Counts, MAX_LINE_BOUND, MAX_LINE_BYTES, NOTHING_CHECKED, Printed};
pub use exchange::Exchange;
pub use filter::Filter;
pub use gateway::Gateway;
pub use line::line_head;
pub use line::record_json;
pub(crate) use options::read_json;
pub use options::{AuditArguments, FilterContext, FilterOptions, GatewayOptions};
pub use outcome::{MessageKind, Outcome, Seen, Verdict};
pub use own::{Answer, Own};
pub use step::{Edit, Head, Piece, Start, Step};
pub use store::{SESSION_KEY_PREFIX, SESSION_TTL_SECONDS, SessionNews, session_key};
pub use tally::{Answered, Got};
