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
//!   ([`reserve`], [`crate::handle::provenance`]).
//! - [`run`] answers with the answer's length, or `ERROR` (JS throws what
//!   [`error`] makes of the core's error, before it calls again) or
//!   `MALFORMED`, which is always a fault of the JS side, never of the
//!   input. Options are the handle's, read once: a tape holds the call's
//!   messages and values, read as the handle's plan says, once.
//! - A tape reads at least what its op's rules read (`first_read`).
//! - Every number and name of this format (ops, tags, areas, put kinds,
//!   limits...) is stated once, here or in the modules it uses, and
//!   described to JS by `describe.rs` in `table.json`: JS takes them from there.

use std::cell::{Cell, RefCell};

use crate::answer::Answer;
use crate::handle::{self, Bound};
use crate::tape::{Failure, Tape};
use crate::{thrown, within};
use mcp_provenance::__bindings::json::Slot;
use mcp_provenance::__bindings::view::{Envelope, MessageView};
use mcp_provenance::__bindings::{audit, correlation, edit, initiator, invocation, path};
use mcp_provenance::{Error, Initiator, Policy};
use wasm_bindgen::prelude::*;
// The rest of the object API: the host module's alone.
#[cfg(feature = "host")]
use mcp_provenance::__bindings::options::FromOptions;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::schema::Place;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::{echo, legacy, sanitize, validate};
#[cfg(feature = "host")]
use mcp_provenance::{AuditContext, Report};

/// What a tape asks for, by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Validate,
    Sanitize,
    StampInitiator,
    ClearInitiator,
    AttachInvocation,
    EchoTurnId,
    AuditRecord,
    LiftLegacyArguments,
}

impl Op {
    /// Every op, by its code.
    pub(crate) const ALL: [Op; 8] = [
        Op::Validate,
        Op::Sanitize,
        Op::StampInitiator,
        Op::ClearInitiator,
        Op::AttachInvocation,
        Op::EchoTurnId,
        Op::AuditRecord,
        Op::LiftLegacyArguments,
    ];
}

/// The call failed: JS throws what [`error`] makes of the core's error.
pub(crate) const ERROR: i32 = -1;
/// The tape breaks its form: a fault of the JS side, never of the input.
pub(crate) const MALFORMED: i32 = -3;

/// The areas of a tape, by the number JS asks for room in.
pub(crate) const RECORDS: usize = 0;
pub(crate) const STRINGS: usize = 1;
pub(crate) const VALUES: usize = 2;

thread_local! {
    static RECORDS_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static STRINGS_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static VALUES_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last answer, until the next call (JS reads it where it stands).
    pub(crate) static ANSWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    pub(crate) static ANSWER_AT: Cell<usize> = const { Cell::new(0) };
    /// The error the last call failed with, until JS takes it ([`error`])
    /// before it calls again: like the answer, it is in the call's memory.
    pub(crate) static FAILED: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Allocates, between calls, room for at least `len` bytes in an area of
/// the tape (the table's `areas`: records, strings, values) and says where
/// it is. What the area held is kept; the room stays where it is until more
/// is asked for.
#[wasm_bindgen]
pub fn reserve(area: usize, len: usize) -> *mut u8 {
    let grow = |bytes: &mut Vec<u8>| {
        if bytes.len() < len {
            bytes.resize(len.next_power_of_two(), 0);
        }
        bytes.as_mut_ptr()
    };
    match area {
        RECORDS => RECORDS_AREA.with_borrow_mut(grow),
        STRINGS => STRINGS_AREA.with_borrow_mut(grow),
        VALUES => VALUES_AREA.with_borrow_mut(grow),
        _ => std::ptr::null_mut(),
    }
}

/// Where the address of the last answer is kept.
#[wasm_bindgen]
pub fn answer_at() -> *const usize {
    ANSWER_AT.with(Cell::as_ptr)
}

/// `work` on the first `records`, `strings` and `values` bytes of the
/// tape's areas.
pub(crate) fn areas<T>(
    records: usize,
    strings: usize,
    values: usize,
    work: impl FnOnce((&[u8], &[u8], &[u8])) -> T,
) -> T {
    RECORDS_AREA.with_borrow(|bytes| {
        STRINGS_AREA.with_borrow(|text| {
            VALUES_AREA.with_borrow(|whole| {
                work((
                    bytes.get(..records).unwrap_or_default(),
                    text.get(..strings).unwrap_or_default(),
                    whole.get(..values).unwrap_or_default(),
                ))
            })
        })
    })
}

/// Runs the call described by the first `records`, `strings` and `values`
/// bytes of the tape's areas, under the options of handle `handle`
/// ([`crate::handle`]). Returns the answer's length, or `ERROR` (see
/// [`error`]) or `MALFORMED`.
#[wasm_bindgen]
pub fn run(handle: usize, records: usize, strings: usize, values: usize) -> i32 {
    // What the last call left in the chunk, dropped before this call takes
    // the chunk back (crate::arena): JS has read it.
    drop((ANSWER.take(), FAILED.take()));
    within(|| {
        areas(records, strings, values, |areas| {
            let mut out = Vec::new();
            let status = handle::with(handle, |bound| call(areas, bound, &mut Answer(&mut out)));
            ANSWER_AT.set(out.as_ptr() as usize);
            ANSWER.set(out);
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

/// Why a call did not run, or a handle was not made.
pub(crate) enum Fault {
    Error(Error),
    Malformed,
}

impl From<Error> for Fault {
    fn from(error: Error) -> Self {
        Fault::Error(error)
    }
}

impl From<Failure> for Fault {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Malformed => Fault::Malformed,
            Failure::Unreadable(place) => Fault::Error(place.error()),
        }
    }
}

/// The error the last call failed with (`run` answered `ERROR`), thrown as
/// [`thrown`] makes it. Not a `Result` of `run`: that costs every call an
/// array, and V8 captures a stack under `run`'s frame 4 times slower (28 µs
/// a failed call, against 8 here).
#[wasm_bindgen]
pub fn error() -> Option<JsValue> {
    FAILED.take().map(|error| thrown(&error))
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
        Err(Fault::Error(error)) => {
            FAILED.set(Some(error));
            return ERROR;
        }
        Err(Fault::Malformed) => return MALFORMED,
    }
    i32::try_from(answer.0.len()).unwrap_or(MALFORMED)
}

/// How many UTF-16 code units of a string to read under `policy`: twice
/// (for surrogate pairs) one more character than any output keeps of one
/// string, so that a longer string reads as it would whole (`text::clean`).
pub(crate) fn cut(policy: &Policy) -> u32 {
    let longest = [
        policy.max_reason_bytes,
        policy.max_intent_bytes,
        policy.max_model_bytes,
        policy.max_turn_id_bytes,
    ]
    .into_iter()
    .map(|limit| limit as usize)
    // A correlation id past its limit must stay past it when cut, and be
    // refused, never kept short.
    .chain([
        path::MAX_SEGMENT_BYTES,
        audit::MAX_RECORDED_NAME_BYTES,
        correlation::MAX_ID_BYTES,
    ])
    .max()
    .unwrap_or(audit::MAX_RECORDED_NAME_BYTES);
    u32::try_from(2 * (longest + 1)).unwrap_or(u32::MAX)
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

/// The flags every op reads with first: the groups of places its rules
/// read, and whether it reads the envelope's fields.
pub(crate) fn first_read(op: Op) -> u8 {
    match op {
        Op::Validate => mcp_provenance::__bindings::validate::READS,
        Op::Sanitize => mcp_provenance::__bindings::sanitize::READS,
        Op::StampInitiator | Op::ClearInitiator => initiator::READS,
        Op::EchoTurnId => mcp_provenance::__bindings::echo::READS,
        Op::AuditRecord => mcp_provenance::__bindings::audit::READS,
        Op::LiftLegacyArguments => mcp_provenance::__bindings::legacy::READS,
        Op::AttachInvocation => invocation::READS,
    }
}
