//! The object API's boundary (feature `outgoing`; all of it with `host`):
//! one call in, one answer out. JS writes what it read of the call's
//! arguments into the tape ([`crate::tape`]), calls [`run`] with the handle
//! of its options ([`crate::handle`]), and reads the answer
//! ([`crate::answer`]). Nothing here decides a rule: the core's view
//! functions do, on views read from the tape.
//!
//! What it keeps true:
//!
//! - JS reads an answer before it calls again, so all a call allocates is
//!   taken back when the next begins (`crate::arena`). What outlives calls
//!   (the tape's areas, the handles) is allocated between calls
//!   ([`crate::memory::reserve`], [`crate::handle::provenance`]).
//! - [`run`] answers with the answer's length, or `ERROR` (JS throws what
//!   [`crate::memory::error`] makes of the core's error, before it calls again) or
//!   `MALFORMED`, which is always a fault of the JS side, never of the
//!   input. Options are the handle's, read once: a tape holds the call's
//!   messages and values, read as the handle's plan says, once.
//! - A tape reads at least what its op's rules read (`first_read`).
//! - Every number and name of this format (ops, tags, areas, put kinds,
//!   limits...) is stated once, here or in the modules it uses, and
//!   described to JS by `describe.rs` in `table.json`: JS takes them from there.

use crate::answer::Answer;
use crate::handle::{self, Bound};
use crate::memory::{Fault, MALFORMED, answered, areas, failed, forget};
use crate::tape::{Op, Tape, first_read};
use crate::within;
use mcp_provenance::__bindings::json::Slot;
use mcp_provenance::__bindings::view::{Envelope, MessageView};
use mcp_provenance::__bindings::{edit, initiator, invocation};
use mcp_provenance::Initiator;
use wasm_bindgen::prelude::*;
// The rest of the object API: the host module's alone.
#[cfg(feature = "host")]
use crate::tape::Failure;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::options::FromOptions;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::schema::Place;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::{audit, echo, legacy, sanitize, validate};
#[cfg(feature = "host")]
use mcp_provenance::{AuditContext, Report};

/// Runs the call described by the first `records`, `strings` and `values`
/// bytes of the tape's areas, under the options of handle `handle`
/// ([`crate::handle`]). Returns the answer's length, or `ERROR` (see
/// [`crate::memory::error`]) or `MALFORMED`.
#[wasm_bindgen]
pub fn run(handle: usize, records: usize, strings: usize, values: usize) -> i32 {
    forget();
    within(|| {
        areas(records, strings, values, |areas| {
            let mut out = Vec::new();
            let status = handle::with(handle, |bound| call(areas, bound, &mut Answer(&mut out)));
            answered(out);
            status.unwrap_or(MALFORMED)
        })
    })
}

/// What a call comes to.
enum Reply {
    Edits(Vec<edit::Edit>),
    #[cfg(feature = "host")]
    Report(Report),
    #[cfg(feature = "host")]
    Sanitized(sanitize::Plan),
    /// An audit record, as JSON text (the form the filter and Python carry).
    #[cfg(feature = "host")]
    Record(String),
}

fn call(
    (records, strings, values): (&[u8], &[u8], &[u8]),
    bound: &Bound,
    answer: &mut Answer,
) -> i32 {
    let Ok(mut tape) = Tape::new(records, strings, values) else {
        return MALFORMED;
    };
    let Some(op) = Op::ALL.get(usize::from(tape.header.op)).copied() else {
        return MALFORMED;
    };
    // JS reads at least what the op's rules read (the plan's flags).
    let needed = first_read(op);
    if tape.header.flags & needed != needed {
        return MALFORMED;
    }
    match reply(op, &mut tape, bound) {
        Ok(Reply::Edits(edits)) => answer.edits(&edits),
        #[cfg(feature = "host")]
        Ok(Reply::Report(report)) => answer.report(&report),
        #[cfg(feature = "host")]
        Ok(Reply::Sanitized(plan)) => {
            answer.changes(&plan.changes);
            answer.edits(&plan.edits);
        }
        #[cfg(feature = "host")]
        Ok(Reply::Record(json)) => answer.str(&json),
        Err(Fault::Error(error)) => return failed(error),
        Err(Fault::Malformed) => return MALFORMED,
    }
    i32::try_from(answer.0.len()).unwrap_or(MALFORMED)
}

/// What each op comes to, its options `bound`'s: the messages and values
/// of the call follow one another on the tape (in the outgoing module, the
/// three ops it holds; any other is a fault of the JS side).
fn reply(op: Op, tape: &mut Tape, bound: &Bound) -> Result<Reply, Fault> {
    let keys = bound.keys();
    Ok(match op {
        #[cfg(feature = "host")]
        // The message, then the request it answers: a report, whatever they are.
        Op::Validate => {
            if let Some(refused) = &bound.refused {
                return Ok(Reply::Report(Report::from(vec![refused.clone()])));
            }
            let (mut message, mut request) = (MessageView::empty(), MessageView::empty());
            let read = tape
                .message(&mut message, keys)
                .and_then(|()| tape.message(&mut request, keys));
            Reply::Report(match read {
                Ok(()) => {
                    let request =
                        Some(&request).filter(|request| request.get(Place::Root).is_present());
                    validate::check(&message, request, keys, &[])
                }
                Err(Failure::Unreadable(place)) => Report::from(vec![place.diagnostic()]),
                Err(Failure::Malformed) => return Err(Fault::Malformed),
            })
        }
        #[cfg(feature = "host")]
        Op::Sanitize => {
            let mut message = MessageView::empty();
            tape.message(&mut message, keys)?;
            Reply::Sanitized(sanitize::plan(&message, &bound.policy)?)
        }
        Op::StampInitiator => {
            let initiator = match tape.whole()? {
                Slot::Absent => Initiator::default(),
                slot => slot.str().unwrap_or_default().parse()?,
            };
            let mut request = MessageView::empty();
            tape.message(&mut request, keys)?;
            Reply::Edits(initiator::stamp(&request, initiator)?)
        }
        Op::ClearInitiator => {
            let mut request = MessageView::empty();
            tape.message(&mut request, keys)?;
            Reply::Edits(initiator::clear(&request)?)
        }
        Op::AttachInvocation => {
            let mut request = MessageView::empty();
            tape.message(&mut request, keys)?;
            let mut invocation = Envelope::default();
            tape.envelope(&mut invocation)?;
            if !invocation.value.is_present() {
                invocation.value = Slot::Null;
            }
            Reply::Edits(invocation::attach(&request, &invocation)?)
        }
        #[cfg(feature = "host")]
        Op::EchoTurnId => {
            let (mut request, mut response) = (MessageView::empty(), MessageView::empty());
            tape.message(&mut request, keys)?;
            tape.message(&mut response, keys)?;
            Reply::Edits(echo::echo(&request, &response)?)
        }
        #[cfg(feature = "host")]
        // The context without its policy (the handle's), then the request.
        Op::AuditRecord => {
            let mut context = AuditContext::from_slot(tape.whole()?)?;
            context.policy = Some(bound.policy.clone());
            let mut request = MessageView::empty();
            tape.message(&mut request, keys)?;
            Reply::Record(audit::json(&audit::record(&request, &context)?))
        }
        #[cfg(feature = "host")]
        Op::LiftLegacyArguments => {
            let mut request = MessageView::empty();
            tape.message(&mut request, keys)?;
            Reply::Edits(legacy::lift(&request, bound.remove)?)
        }
        #[cfg(not(feature = "host"))]
        _ => return Err(Fault::Malformed),
    })
}
