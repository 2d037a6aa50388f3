//! The object API's boundary (feature `host`): one call in, one answer out.
//! JS writes what it read of the call's arguments into the tape ([`crate::tape`]),
//! calls [`run`], and reads the answer ([`crate::answer`]). Nothing here decides a
//! rule: the core's view functions do, on views read from the tape.
//!
//! What it keeps true:
//!
//! - JS reads an answer before it calls again, so all a call allocates is
//!   taken back when the next begins (`crate::arena`). What outlives calls
//!   (the tape's areas) is allocated between calls ([`reserve`]).
//! - [`run`] answers with the answer's length, or `ERROR` (JS throws what
//!   [`error`] makes of the core's error, before it calls again), `RETRY`
//!   (read again with the flags and cut the answer gives: a policy keeps
//!   more than the first reading held) or `MALFORMED`, which is always a
//!   fault of the JS side, never of the input.
//! - A tape reads at least what its op's rules read (`first_read`).
//! - Every number and name of this format (ops, tags, areas, put kinds,
//!   limits...) is stated once, here or in the modules it uses, and
//!   described to JS by `describe.rs` in `table.json`: JS takes them from there.

use std::cell::{Cell, RefCell};

use crate::answer::Answer;
use crate::tape::{Failure, Tape};
use crate::{thrown, within};
use mcp_provenance::__bindings::json::Slot;
use mcp_provenance::__bindings::options::FromOptions;
use mcp_provenance::__bindings::view::{Envelope, MessageView};
use mcp_provenance::__bindings::{edit, initiator, invocation};
use mcp_provenance::{Error, Initiator, KeyOptions};
use wasm_bindgen::prelude::*;
// The rest of the object API: the host module's alone.
#[cfg(feature = "host")]
use crate::tape::WHOLE;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::schema::Place;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::{audit, correlation, echo, legacy, path, sanitize, validate};
#[cfg(feature = "host")]
use mcp_provenance::{AuditContext, FieldPolicy, LiftOptions, Policy, Report};

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
    CheckPolicy,
}

impl Op {
    /// Every op, by its code.
    pub(crate) const ALL: [Op; 9] = [
        Op::Validate,
        Op::Sanitize,
        Op::StampInitiator,
        Op::ClearInitiator,
        Op::AttachInvocation,
        Op::EchoTurnId,
        Op::AuditRecord,
        Op::LiftLegacyArguments,
        Op::CheckPolicy,
    ];
}

/// The call failed: JS throws what [`error`] makes of the core's error.
pub(crate) const ERROR: i32 = -1;
/// Read the arguments again, as the answer says (the host module's calls
/// alone ask: a policy may keep more than the first reading held).
#[cfg(feature = "host")]
pub(crate) const RETRY: i32 = -2;
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
    static ANSWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static ANSWER_AT: Cell<usize> = const { Cell::new(0) };
    /// The error the last call failed with, until JS takes it ([`error`])
    /// before it calls again: like the answer, it is in the call's memory.
    static FAILED: RefCell<Option<Error>> = const { RefCell::new(None) };
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

/// Runs the call described by the first `records`, `strings` and `values`
/// bytes of the tape's areas. Returns the answer's length, or `ERROR` (see
/// [`error`]), `RETRY` (the answer says how to read again) or `MALFORMED`.
#[wasm_bindgen]
pub fn run(records: usize, strings: usize, values: usize) -> i32 {
    // What the last call left in the chunk, dropped before this call takes
    // the chunk back (crate::arena): JS has read it.
    drop((ANSWER.take(), FAILED.take()));
    within(|| run_tape(records, strings, values))
}

fn run_tape(records: usize, strings: usize, values: usize) -> i32 {
    RECORDS_AREA.with_borrow(|bytes| {
        STRINGS_AREA.with_borrow(|text| {
            VALUES_AREA.with_borrow(|whole| {
                let areas = (
                    bytes.get(..records).unwrap_or_default(),
                    text.get(..strings).unwrap_or_default(),
                    whole.get(..values).unwrap_or_default(),
                );
                let mut out = Vec::new();
                let status = call(areas, &mut Answer(&mut out));
                ANSWER_AT.set(out.as_ptr() as usize);
                ANSWER.set(out);
                status
            })
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
    #[cfg(feature = "host")]
    Record(Box<mcp_provenance::AuditRecord>),
    #[cfg(feature = "host")]
    Bool(bool),
    #[cfg(feature = "host")]
    Retry {
        flags: u8,
        cut: u32,
    },
}

/// Why a call did not run.
enum Fault {
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

fn call((records, strings, values): (&[u8], &[u8], &[u8]), answer: &mut Answer) -> i32 {
    let Ok(mut tape) = Tape::new(records, strings, values) else {
        return MALFORMED;
    };
    let op = Op::ALL.get(usize::from(tape.header.op)).copied();
    // JS reads at least what the op's rules read (the table's `firstRead`).
    if let Some(op) = op {
        let needed = first_read(op);
        if tape.header.flags & needed != needed {
            return MALFORMED;
        }
    }
    let reply = match op {
        #[cfg(feature = "host")]
        Some(Op::Validate) => validate_op(&mut tape),
        Some(op) => object_op(op, &mut tape),
        None => return MALFORMED,
    };
    match reply {
        Ok(Reply::Edits(edits)) => answer.edits(&edits),
        #[cfg(feature = "host")]
        Ok(Reply::Report(report)) => answer.report(&report),
        #[cfg(feature = "host")]
        Ok(Reply::Sanitized(plan)) => {
            answer.changes(&plan.changes);
            answer.edits(&plan.edits);
        }
        #[cfg(feature = "host")]
        Ok(Reply::Record(record)) => answer.record(&record),
        #[cfg(feature = "host")]
        Ok(Reply::Bool(flag)) => return i32::from(flag),
        #[cfg(feature = "host")]
        Ok(Reply::Retry { flags, cut }) => {
            answer.retry(flags, cut);
            return RETRY;
        }
        Err(Fault::Error(error)) => {
            FAILED.set(Some(error));
            return ERROR;
        }
        Err(Fault::Malformed) => return MALFORMED,
    }
    length(answer)
}

fn length(answer: &Answer) -> i32 {
    i32::try_from(answer.0.len()).unwrap_or(MALFORMED)
}

#[cfg(feature = "host")]
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

#[cfg(feature = "host")]
/// The `RETRY` to ask for when the tape read less than `policy` needs:
/// strings cut shorter than it keeps, or unknown members by their type
/// where it keeps them; `None` when what was read is enough.
fn retry_for(tape: &Tape, policy: &Policy) -> Option<Reply> {
    let header = tape.header;
    let needed = cut(policy);
    let short = tape.cut_any && header.cut != 0 && header.cut < needed;
    let typed = tape.typed_unknown && policy.unknown_fields == FieldPolicy::Keep;
    (short || typed).then_some(Reply::Retry {
        flags: header.flags | if typed { WHOLE } else { 0 },
        cut: if short { needed } else { header.cut },
    })
}

/// The key options of a call (`undefined` for none), checked (KEY-3) as
/// they are read.
fn keys(tape: &mut Tape) -> Result<KeyOptions, Fault> {
    Ok(KeyOptions::from_slot(tape.whole()?)?)
}

#[cfg(feature = "host")]
/// `validate(message, options?)`: a report, whatever it is given. The tape
/// holds the options without `request`, the message, then the request.
fn validate_op(tape: &mut Tape) -> Result<Reply, Fault> {
    let read = |tape: &mut Tape<'_>| -> Result<Reply, Failure> {
        let options = tape.whole()?;
        let keys = match validate::keys(options) {
            Ok(keys) => keys,
            Err(error) => {
                return Ok(Reply::Report(Report::from(vec![
                    validate::option_diagnostic(error),
                ])));
            }
        };
        let mut message = MessageView::empty();
        tape.message(&mut message, &keys)?;
        let mut request = MessageView::empty();
        tape.message(&mut request, &keys)?;
        let request = Some(&request).filter(|request| request.get(Place::Root).is_present());
        Ok(Reply::Report(validate::check(
            &message,
            request,
            &keys,
            &[],
        )))
    };
    match read(tape) {
        Ok(reply) => Ok(reply),
        Err(Failure::Unreadable(place)) => {
            Ok(Reply::Report(Report::from(vec![place.diagnostic()])))
        }
        Err(Failure::Malformed) => Err(Fault::Malformed),
    }
}

/// The other ops of the object API: what each comes to (in the outgoing
/// module, the three it holds; any other is a fault of the JS side).
fn object_op(op: Op, tape: &mut Tape) -> Result<Reply, Fault> {
    Ok(match op {
        #[cfg(feature = "host")]
        Op::Sanitize => {
            let policy = Policy::from_slot(tape.whole()?)?;
            let mut message = MessageView::empty();
            tape.message(&mut message, &policy.keys)?;
            if let Some(retry) = retry_for(tape, &policy) {
                return Ok(retry);
            }
            Reply::Sanitized(sanitize::plan(&message, &policy)?)
        }
        Op::StampInitiator => {
            let keys = keys(tape)?;
            let initiator = match tape.whole()? {
                Slot::Absent => Initiator::default(),
                slot => slot.str().unwrap_or_default().parse()?,
            };
            let mut request = MessageView::empty();
            tape.message(&mut request, &keys)?;
            Reply::Edits(initiator::stamp(&request, initiator)?)
        }
        Op::ClearInitiator => {
            let keys = keys(tape)?;
            let mut request = MessageView::empty();
            tape.message(&mut request, &keys)?;
            Reply::Edits(initiator::clear(&request)?)
        }
        Op::AttachInvocation => {
            let keys = keys(tape)?;
            let mut request = MessageView::empty();
            tape.message(&mut request, &keys)?;
            let mut invocation = Envelope::default();
            tape.envelope(&mut invocation)?;
            if !invocation.value.is_present() {
                invocation.value = Slot::Null;
            }
            Reply::Edits(invocation::attach(&request, &invocation)?)
        }
        #[cfg(feature = "host")]
        Op::EchoTurnId => {
            let keys = keys(tape)?;
            let (mut request, mut response) = (MessageView::empty(), MessageView::empty());
            tape.message(&mut request, &keys)?;
            tape.message(&mut response, &keys)?;
            Reply::Edits(echo::echo(&request, &response)?)
        }
        #[cfg(feature = "host")]
        Op::AuditRecord => {
            let context = AuditContext::from_slot(tape.whole()?)?;
            let policy = context.policy.clone().unwrap_or_default();
            policy.check()?;
            let mut request = MessageView::empty();
            tape.message(&mut request, &policy.keys)?;
            if let Some(retry) = retry_for(tape, &policy) {
                return Ok(retry);
            }
            Reply::Record(Box::new(audit::record(&request, &context)?))
        }
        #[cfg(feature = "host")]
        Op::LiftLegacyArguments => {
            let options = LiftOptions::from_slot(tape.whole()?)?;
            options.keys.check()?;
            let mut request = MessageView::empty();
            tape.message(&mut request, &options.keys)?;
            Reply::Edits(legacy::lift(&request, options.remove)?)
        }
        #[cfg(feature = "host")]
        // `createProvenance(options)`: the options are a policy, keys and all.
        Op::CheckPolicy => {
            Policy::from_slot(tape.whole()?)?;
            Reply::Bool(true)
        }
        #[cfg(feature = "host")]
        Op::Validate => return Err(Fault::Malformed),
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
        Op::CheckPolicy => 0,
    }
}
