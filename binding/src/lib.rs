//! The npm package's boundary: one call in, one answer out. JS writes what
//! it read of the call's arguments into the tape ([`tape`]), calls [`run`],
//! and reads the answer ([`answer`]). Nothing here decides a rule: the
//! core's view functions do, on views read from the tape.
//!
//! What it keeps true:
//!
//! - JS reads an answer before it calls again, so all a call allocates is
//!   taken back when the next begins (`bump`). What outlives calls (the
//!   tape's areas, the filters and captures made) is allocated in the call
//!   that makes it and then kept, and never grows in a later call: a capture
//!   reserves the room of its longest held line when it is made.
//! - [`run`] answers with the answer's length, or `ERROR` (JS throws what
//!   [`error`] makes of the core's error, before it calls again), `RETRY`
//!   (read again with the flags and cut the answer gives: a policy keeps
//!   more than the first reading held) or `MALFORMED`, which is always a
//!   fault of the JS side, never of the input.
//! - A tape reads at least what its op's rules read (`first_read`).
//! - Every number and name of this format (ops, tags, areas, put kinds,
//!   limits...) is stated once, here or in the modules below, and described
//!   to JS by `describe.rs` in `table.json`: JS takes them from there.

// A panic in WebAssembly is a trap that can poison the instance: outside
// tests, every failure is a value (as in the core).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::string_slice,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod answer;
#[cfg(target_arch = "wasm32")]
mod bump;
#[cfg(test)]
mod describe;
mod tape;

use std::cell::{Cell, RefCell};

use self::answer::{Answer, Shown};
use self::tape::{Failure, Tape, WHOLE};
use mcp_provenance::audit::{self, AuditContext};
use mcp_provenance::diagnostics::Report;
use mcp_provenance::error::{Error, ErrorKind};
use mcp_provenance::initiator::{self, Initiator};
use mcp_provenance::json::Slot;
use mcp_provenance::keys::{self, KeyOptions};
use mcp_provenance::legacy::{self, LiftOptions};
use mcp_provenance::options::FromOptions;
use mcp_provenance::policy::{FieldPolicy, Policy};
use mcp_provenance::schema::Place;
use mcp_provenance::view::{Envelope, MessageView};
use mcp_provenance::wire::{CHECK_USAGE, Capture, CheckCommand, Filter, FilterContext, Printed};
use mcp_provenance::{echo, invocation, sanitize, validate};
use wasm_bindgen::prelude::*;

/// What a tape asks for, by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Validate,
    Sanitize,
    StampInitiator,
    ClearInitiator,
    AttachInvocation,
    EchoTurnId,
    AuditRecord,
    LiftLegacyArguments,
    IsValidMetaKey,
    IsReservedMetaKey,
    CheckPolicy,
    CreateFilter,
    Filter,
    CreateCheck,
    CheckPiece,
    CheckEnd,
    Visible,
    Echo,
}

impl Op {
    /// Every op, by its code.
    const ALL: [Op; 18] = [
        Op::Validate,
        Op::Sanitize,
        Op::StampInitiator,
        Op::ClearInitiator,
        Op::AttachInvocation,
        Op::EchoTurnId,
        Op::AuditRecord,
        Op::LiftLegacyArguments,
        Op::IsValidMetaKey,
        Op::IsReservedMetaKey,
        Op::CheckPolicy,
        Op::CreateFilter,
        Op::Filter,
        Op::CreateCheck,
        Op::CheckPiece,
        Op::CheckEnd,
        Op::Visible,
        Op::Echo,
    ];
}

/// The call failed: JS throws what [`error`] makes of the core's error.
const ERROR: i32 = -1;
/// Read the arguments again, as the answer says.
const RETRY: i32 = -2;
/// The tape breaks its form: a fault of the JS side, never of the input.
const MALFORMED: i32 = -3;

/// The areas of a tape, by the number JS asks for room in; the body a
/// filter reads is a fourth.
const RECORDS: usize = 0;
const STRINGS: usize = 1;
const VALUES: usize = 2;
const BODY: usize = 3;

/// "No field" or "no member" where the boundary names a field of the
/// envelope (by its place in the envelope's order) and a member of it.
const NONE: u8 = u8::MAX;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: bump::Bump = bump::Bump;

thread_local! {
    static RECORDS_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static STRINGS_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static VALUES_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static BODY_AREA: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static ANSWER_AT: Cell<usize> = const { Cell::new(0) };
    /// The filters made so far, by handle: kept for the module's life (a
    /// gateway makes a few, once).
    static FILTERS: RefCell<Vec<Filter>> = const { RefCell::new(Vec::new()) };
    /// The captures being checked, by handle.
    static CHECKS: RefCell<Vec<Capture>> = const { RefCell::new(Vec::new()) };
    /// The error the last call failed with, until JS takes it ([`error`])
    /// before it calls again: like the answer, it is in the call's memory.
    static FAILED: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// Runs as the module starts (`__wbindgen_start`): allocates for good the
/// vector in which wasm-bindgen tracks the JS values Rust holds (an error
/// being made), which it would allocate with the first one, in a call whose
/// memory the next takes back.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen(start, private)]
fn start() {
    drop(JsValue::from_f64(0.0));
    bump::keep();
}

/// Allocates, between calls, room for at least `len` bytes in an area of
/// the tape (the table's `areas`: records, strings, values, a filter's
/// body) and says where it is. What the area held is kept; the room stays
/// where it is until more is asked for.
#[wasm_bindgen]
pub fn reserve(area: usize, len: usize) -> *mut u8 {
    #[cfg(target_arch = "wasm32")]
    bump::reset();
    let grow = |bytes: &mut Vec<u8>| {
        if bytes.len() < len {
            bytes.resize(len.next_power_of_two(), 0);
        }
        bytes.as_mut_ptr()
    };
    let at = match area {
        RECORDS => RECORDS_AREA.with_borrow_mut(grow),
        STRINGS => STRINGS_AREA.with_borrow_mut(grow),
        VALUES => VALUES_AREA.with_borrow_mut(grow),
        BODY => BODY_AREA.with_borrow_mut(grow),
        _ => std::ptr::null_mut(),
    };
    #[cfg(target_arch = "wasm32")]
    bump::keep();
    at
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
    #[cfg(target_arch = "wasm32")]
    bump::reset();
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
                // The answer stays where it is until the next call takes its
                // memory back (JS has read it by then).
                ANSWER_AT.set(out.leak().as_ptr() as usize);
                status
            })
        })
    })
}

/// What a call comes to.
enum Reply {
    Report(Report),
    Sanitized(sanitize::Plan),
    Edits(Vec<mcp_provenance::edit::Edit>),
    Record(Box<audit::AuditRecord>),
    Bool(bool),
    /// A filter made: its handle.
    Handle(i32),
    /// A body filtered, in the answer already.
    Filtered,
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

/// The error the last call failed with (`run` answered `ERROR`), to throw:
/// a `TypeError` (an input not of the kind the call needs) or a `RangeError`
/// (an option or bound out of range) with its `code`. Not a `Result` of
/// `run`: that costs every call an array, and V8 captures a stack under
/// `run`'s frame 4 times slower (28 µs a failed call, against 8 here).
#[wasm_bindgen]
pub fn error() -> Option<JsValue> {
    let error = FAILED.take()?;
    let message = error.to_string();
    let thrown: JsValue = match error.kind() {
        ErrorKind::Input => js_sys::TypeError::new(&message).into(),
        ErrorKind::Range => js_sys::RangeError::new(&message).into(),
    };
    // Setting a member of an error just made cannot fail.
    let _ = js_sys::Reflect::set(&thrown, &"code".into(), &error.code().as_str().into());
    Some(thrown)
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
    // The wire ops (the gateway's filter, `check`, the text shown of the
    // wire) only in the module built with them (feature `filter`): without
    // it they are refused here, and what only they reach is left out.
    let wire = matches!(
        op,
        Some(
            Op::CreateFilter
                | Op::Filter
                | Op::Echo
                | Op::CreateCheck
                | Op::CheckPiece
                | Op::CheckEnd
                | Op::Visible
        )
    );
    if wire && !cfg!(feature = "filter") {
        return MALFORMED;
    }
    let reply = match op {
        Some(Op::Validate) => validate_op(&mut tape),
        Some(Op::Filter) => filter(&mut tape, answer),
        Some(Op::CreateCheck) => create_check(&mut tape, answer),
        Some(Op::CheckPiece | Op::CheckEnd) => check(op, &mut tape, answer),
        Some(Op::Visible) => visible(&mut tape, answer),
        Some(Op::Echo) => echo_op(&mut tape, answer),
        Some(op) => object_op(op, &mut tape),
        None => return MALFORMED,
    };
    match reply {
        Ok(Reply::Report(report)) => answer.report(&report),
        Ok(Reply::Sanitized(plan)) => {
            answer.changes(&plan.changes);
            answer.edits(&plan.edits);
        }
        Ok(Reply::Edits(edits)) => answer.edits(&edits),
        Ok(Reply::Record(record)) => answer.record(&record),
        Ok(Reply::Bool(flag)) => return i32::from(flag),
        Ok(Reply::Handle(handle)) => {
            // The filter outlives the call: what the call allocated stays.
            #[cfg(target_arch = "wasm32")]
            bump::keep();
            return handle;
        }
        Ok(Reply::Filtered) => {}
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
        mcp_provenance::path::MAX_SEGMENT_BYTES,
        audit::MAX_RECORDED_NAME_BYTES,
        mcp_provenance::correlation::MAX_ID_BYTES,
    ])
    .max()
    .unwrap_or(audit::MAX_RECORDED_NAME_BYTES);
    u32::try_from(2 * (longest + 1)).unwrap_or(u32::MAX)
}

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

/// The key options of a call (`undefined` for none), checked (KEY-3).
fn keys(tape: &mut Tape) -> Result<KeyOptions, Fault> {
    let keys = KeyOptions::from_slot(tape.whole()?)?;
    keys.check()?;
    Ok(keys)
}

/// `validate(message, options?)`: a report, whatever it is given. The tape
/// holds the options without `request`, the message, then the request.
fn validate_op(tape: &mut Tape) -> Result<Reply, Fault> {
    let read = |tape: &mut Tape<'_>| -> Result<Reply, Failure> {
        let options = tape.whole()?;
        let keys = match KeyOptions::from_slot(options) {
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

/// The other ops of the object API: what each comes to.
fn object_op(op: Op, tape: &mut Tape) -> Result<Reply, Fault> {
    Ok(match op {
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
        Op::EchoTurnId => {
            let keys = keys(tape)?;
            let (mut request, mut response) = (MessageView::empty(), MessageView::empty());
            tape.message(&mut request, &keys)?;
            tape.message(&mut response, &keys)?;
            Reply::Edits(echo::echo(&request, &response)?)
        }
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
        Op::LiftLegacyArguments => {
            let options = LiftOptions::from_slot(tape.whole()?)?;
            options.keys.check()?;
            let mut request = MessageView::empty();
            tape.message(&mut request, &options.keys)?;
            Reply::Edits(legacy::lift(&request, options.remove)?)
        }
        // A key cut on its way (past 65,536 characters) is judged no key: what was cut is unknown.
        Op::IsValidMetaKey => {
            let key = tape.whole()?;
            Reply::Bool(!tape.cut_any && key.str().is_some_and(keys::is_valid_meta_key))
        }
        Op::IsReservedMetaKey => {
            Reply::Bool(tape.whole()?.str().is_some_and(keys::is_reserved_meta_key))
        }
        // `createProvenance(options)`: the options are a policy, keys and all.
        Op::CheckPolicy => {
            Policy::from_slot(tape.whole()?)?;
            Reply::Bool(true)
        }
        Op::CreateFilter => {
            let filter = Filter::from_slot(tape.whole()?)?;
            let handle = FILTERS.with_borrow_mut(|filters| {
                filters.push(filter);
                i32::try_from(filters.len() - 1)
            });
            Reply::Handle(handle.map_err(|_| Fault::Malformed)?)
        }
        Op::Validate
        | Op::Filter
        | Op::CreateCheck
        | Op::CheckPiece
        | Op::CheckEnd
        | Op::Visible
        | Op::Echo => {
            return Err(Fault::Malformed);
        }
    })
}

/// A number the JS side wrote whole: a handle, a length, a line number.
fn number(tape: &mut Tape) -> Result<f64, Fault> {
    match tape.whole() {
        Ok(Slot::Number(number)) => number.value().ok_or(Fault::Malformed),
        _ => Err(Fault::Malformed),
    }
}

/// `mcp-provenance check` with the words the tape holds: what to print
/// (the help, or a usage error), or the capture made, by its handle, with
/// the file to read and where to write.
fn create_check(tape: &mut Tape, answer: &mut Answer) -> Result<Reply, Fault> {
    // `{words}`, written as options are: no string cut.
    let words: Option<Vec<&str>> = match tape.whole()?.tree().get("words") {
        Slot::Array(items) => items.items().map(|word| word.str()).collect(),
        _ => None,
    };
    let parsed = CheckCommand::parse(&words.ok_or(Fault::Malformed)?);
    match parsed {
        Ok(CheckCommand::Help) => answer.command_help(CHECK_USAGE),
        Err(why) => answer.command_error(&why),
        Ok(CheckCommand::Run {
            file,
            sanitize,
            check,
        }) => {
            let handle = CHECKS.with_borrow_mut(|checks| {
                checks.push(Capture::new(*check));
                checks.len() - 1
            });
            answer.command_run(handle, &file, sanitize.as_deref());
            // The capture outlives the call: what the call allocated stays.
            #[cfg(target_arch = "wasm32")]
            bump::keep();
        }
    }
    Ok(Reply::Filtered)
}

/// A piece of a capture (in the body's area) through the capture whose
/// handle the tape holds, or its end: what to print and write, the counts.
fn check(op: Option<Op>, tape: &mut Tape, answer: &mut Answer) -> Result<Reply, Fault> {
    let handle = number(tape)? as usize;
    CHECKS.with_borrow_mut(|checks| {
        let capture = checks.get_mut(handle).ok_or(Fault::Malformed)?;
        let mut printed = Printed::default();
        if op == Some(Op::CheckEnd) {
            capture.end(&mut printed);
            printed.out.push_str(&capture.summary());
        } else {
            let length = number(tape)? as usize;
            BODY_AREA.with_borrow(|body| {
                let piece = body.get(..length).ok_or(Fault::Malformed)?;
                capture.read(piece, &mut printed);
                Ok::<(), Fault>(())
            })?;
        }
        answer.line(&printed.out, &printed.sanitized, capture);
        Ok(Reply::Filtered)
    })
}

/// Text (in the body's area) shown as the tape says (`Shown`): text from
/// the wire as a person may be shown it (`text::visible`), for a terminal
/// or inside JSON text; or JSON text put on one line, a log line's message
/// (`json::one_line`).
fn visible(tape: &mut Tape, answer: &mut Answer) -> Result<Reply, Fault> {
    let shown = number(tape)?;
    let length = number(tape)? as usize;
    let is = |kind: Shown| shown == f64::from(kind as u8);
    BODY_AREA.with_borrow(|body| {
        let text = body.get(..length).ok_or(Fault::Malformed)?;
        let text = std::str::from_utf8(text).map_err(|_| Fault::Malformed)?;
        if is(Shown::Line) {
            answer.text(&mcp_provenance::json::one_line(text));
        } else if is(Shown::Json) || is(Shown::Terminal) {
            answer.text(&mcp_provenance::text::visible(text, is(Shown::Json)));
        } else {
            return Err(Fault::Malformed);
        }
        Ok(Reply::Filtered)
    })
}

/// `filter.echo(answer, forwarded)` of the filter whose handle the tape
/// holds, on the answer in the body's area, the turns of the outcome it
/// answers following: the answer as
/// it came, rewritten, or unreadable (`Rejected`), written to `answer`.
fn echo_op(tape: &mut Tape, answer: &mut Answer) -> Result<Reply, Fault> {
    let (handle, length) = (number(tape)?, number(tape)?);
    let turns = tape.whole()?;
    FILTERS.with_borrow(|filters| {
        BODY_AREA.with_borrow(|body| {
            let filter = filters.get(handle as usize).ok_or(Fault::Malformed)?;
            let body = body.get(..length as usize).ok_or(Fault::Malformed)?;
            let notes = turns.tree().items().filter_map(|turn| turn.str());
            answer.echoed(filter.echo(body, notes).as_ref());
            Ok(Reply::Filtered)
        })
    })
}

/// `filter(body, context)` of the filter whose handle the tape holds, on
/// the body in its area (and whether it came as a JS string): the
/// outcome, written to `answer`.
fn filter(tape: &mut Tape, answer: &mut Answer) -> Result<Reply, Fault> {
    let (handle, length) = (number(tape)?, number(tape)?);
    let utf16 = matches!(tape.whole()?, Slot::Bool(true));
    let context = FilterContext::from_slot(tape.whole()?)?;
    FILTERS.with_borrow(|filters| {
        BODY_AREA.with_borrow(|body| {
            let filter = filters.get(handle as usize).ok_or(Fault::Malformed)?;
            let body = body.get(..length as usize).ok_or(Fault::Malformed)?;
            answer.outcome(&filter.filter(body, &context), utf16);
            Ok(Reply::Filtered)
        })
    })
}

/// The flags every op reads with first: the groups of places its rules
/// read, and whether it reads the envelope's fields.
fn first_read(op: Op) -> u8 {
    match op {
        Op::Validate => validate::READS,
        Op::Sanitize => sanitize::READS,
        Op::StampInitiator | Op::ClearInitiator => initiator::READS,
        Op::EchoTurnId => echo::READS,
        Op::AuditRecord => audit::READS,
        Op::LiftLegacyArguments => legacy::READS,
        Op::AttachInvocation => invocation::READS,
        Op::IsValidMetaKey
        | Op::IsReservedMetaKey
        | Op::CheckPolicy
        | Op::CreateFilter
        | Op::Filter
        | Op::CreateCheck
        | Op::CheckPiece
        | Op::CheckEnd
        | Op::Visible
        | Op::Echo => 0,
    }
}
