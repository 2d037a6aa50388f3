//! The handles of the object API: options read once, into the module
//! (`createProvenance`, and the options of a call made without one), from
//! which every call after runs. JS writes the options on the tape and calls
//! [`provenance`]; the answer is the handle's number and its plan: what JS
//! reads of a message under these options (the keys in force, the
//! correlation keys, how far to read strings and unknown members), so that
//! nothing is read twice and no call is read again.
//!
//! The same options, as written, are the same handle: the module keeps
//! [`KEPT`] handles no JS value holds, so that a call given the same options
//! each time (a policy object of the caller's) reads them once. A handle JS
//! holds (`pin`) stays until JS lets it go (`release`).

use std::cell::RefCell;

use crate::answer::Answer;
use crate::memory::{Fault, MALFORMED, answered, areas, failed, forget};
#[cfg(feature = "host")]
use crate::tape::{Failure, WHOLE};
use crate::tape::{Op, Tape, first_read};
use mcp_provenance::__bindings::options::FromOptions;
#[cfg(feature = "host")]
use mcp_provenance::__bindings::validate;
use mcp_provenance::__bindings::{audit, correlation, path};
#[cfg(feature = "host")]
use mcp_provenance::{Diagnostic, FieldPolicy, LiftOptions};
use mcp_provenance::{KeyOptions, Policy};
use wasm_bindgen::prelude::*;

/// What options are read as, by what takes them: the byte JS gives
/// [`provenance`] (the table's `reads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reads {
    /// A policy, keys and all: `createProvenance`, `sanitize`, an audit
    /// context's `policy`.
    Policy,
    /// Key options alone: `stampInitiator`, `clearInitiator`,
    /// `attachInvocation`, `echoTurnId`.
    Keys,
    /// Key options and `remove`: `liftLegacyArguments`.
    Lift,
    /// Key options, where what is wrong with them is a report's finding,
    /// never an error: `validate`.
    Validate,
}

impl Reads {
    /// Every kind, by its byte.
    pub(crate) const ALL: [Reads; 4] = [Reads::Policy, Reads::Keys, Reads::Lift, Reads::Validate];
}

/// The options a handle holds, read once.
#[derive(Default)]
pub(crate) struct Bound {
    /// The host module's: a policy, whose keys every op reads.
    #[cfg(feature = "host")]
    pub policy: Policy,
    /// The outgoing module's: the keys alone.
    #[cfg(not(feature = "host"))]
    pub keys: KeyOptions,
    /// `liftLegacyArguments`'s `remove`.
    #[cfg(feature = "host")]
    pub remove: bool,
    /// Options `validate` was given that are wrong: what its report says.
    #[cfg(feature = "host")]
    pub refused: Option<Diagnostic>,
}

impl Bound {
    /// The keys every op reads a message under.
    pub(crate) fn keys(&self) -> &KeyOptions {
        #[cfg(feature = "host")]
        return &self.policy.keys;
        #[cfg(not(feature = "host"))]
        return &self.keys;
    }

    /// Options of the kind `reads` from the tape's one value.
    fn read(reads: Reads, tape: &mut Tape) -> Result<Bound, Fault> {
        #[cfg(feature = "host")]
        if reads == Reads::Validate {
            // Whatever is wrong with them is the report's to say.
            let refused = match tape.whole() {
                Ok(slot) => match validate::keys(slot) {
                    Ok(keys) => return Ok(Bound::of_keys(keys)),
                    Err(error) => validate::option_diagnostic(error),
                },
                Err(Failure::Unreadable(place)) => place.diagnostic(),
                Err(Failure::Malformed) => return Err(Fault::Malformed),
            };
            return Ok(Bound {
                refused: Some(refused),
                ..Bound::default()
            });
        }
        let slot = tape.whole().map_err(Fault::from)?;
        match reads {
            #[cfg(feature = "host")]
            Reads::Policy => Ok(Bound {
                policy: Policy::from_slot(slot)?,
                ..Bound::default()
            }),
            Reads::Keys => Ok(Bound::of_keys(KeyOptions::from_slot(slot)?)),
            #[cfg(feature = "host")]
            Reads::Lift => {
                let lift = LiftOptions::from_slot(slot)?;
                lift.keys.check()?;
                Ok(Bound {
                    remove: lift.remove,
                    ..Bound::of_keys(lift.keys)
                })
            }
            // What the outgoing module's calls never ask for.
            #[cfg(not(feature = "host"))]
            _ => Err(Fault::Malformed),
            #[cfg(feature = "host")]
            Reads::Validate => Err(Fault::Malformed),
        }
    }

    fn of_keys(keys: KeyOptions) -> Bound {
        #[cfg(feature = "host")]
        return Bound {
            policy: Policy {
                keys,
                ..Policy::default()
            },
            ..Bound::default()
        };
        #[cfg(not(feature = "host"))]
        return Bound { keys };
    }

    /// The flags to read a message with for `op`: what its rules read, and
    /// unknown members whole where the policy keeps them.
    fn flags(&self, op: Op) -> u8 {
        #[cfg(feature = "host")]
        if self.policy.unknown_fields == FieldPolicy::Keep
            && matches!(op, Op::Sanitize | Op::AuditRecord)
        {
            return first_read(op) | WHOLE;
        }
        first_read(op)
    }

    /// How many UTF-16 code units of a string to read.
    fn cut(&self) -> u32 {
        #[cfg(feature = "host")]
        return cut(&self.policy);
        #[cfg(not(feature = "host"))]
        return cut(&Default::default());
    }
}

/// How many UTF-16 code units of a string to read under `policy`: twice
/// (for surrogate pairs) one more character than any output keeps of one
/// string, so that a longer string reads as it would whole (`text::clean`).
fn cut(policy: &Policy) -> u32 {
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

/// A handle: its options as written (what it is found by), what they came
/// to, and how many JS values hold it.
struct Held {
    written: Vec<u8>,
    bound: Bound,
    pins: u32,
}

/// How many handles no JS value holds are kept.
const KEPT: usize = 16;

/// The most bytes of options a handle is found again by: options written
/// longer (a correlation key list of megabytes, or what `validate` refused)
/// make a handle found by nothing, so that the module never holds more than
/// `KEPT` times this of what callers wrote.
const FOUND_BY: usize = 1 << 16;

thread_local! {
    /// The handles, by number; a number whose handle was let go is free.
    static HELD: RefCell<Vec<Option<Held>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work` with handle `handle`'s options; `None` for a number no
/// handle has.
pub(crate) fn with<T>(handle: usize, work: impl FnOnce(&Bound) -> T) -> Option<T> {
    HELD.with_borrow(|held| Some(work(&held.get(handle)?.as_ref()?.bound)))
}

/// What a handle made anew answers beside its number, so that JS knows to
/// read its plan: the number plus `NEW`.
pub(crate) const NEW: usize = 1 << 24;

/// The handle of the options the tape holds (its one value, read as the
/// kind `reads`), made unless the same were made before; held by JS with
/// `pin`. Returns its number (a handle found, whose plan JS has read), or
/// `NEW` plus its number and its plan in the answer (`plan` in answer.rs),
/// or `ERROR` (the options are wrong: [`crate::memory::error`]) or
/// `MALFORMED`.
///
/// Not within a call's chunk (`crate::arena`): what it makes outlives the
/// call.
#[wasm_bindgen]
pub fn provenance(reads: u8, pin: bool, records: usize, strings: usize, values: usize) -> i32 {
    forget();
    let Some(reads) = Reads::ALL.get(usize::from(reads)).copied() else {
        return MALFORMED;
    };
    areas(records, strings, values, |(records, strings, values)| {
        // Found by the kind and what was written after the header: the
        // options' one record (of a fixed size), and the values it points at.
        let after = records.get(crate::tape::RECORD..).unwrap_or_default();
        let written = [&[reads as u8], after, strings, values].concat();
        if let Some(handle) = find(&written, pin) {
            return i32::try_from(handle).unwrap_or(MALFORMED);
        }
        let Ok(mut tape) = Tape::new(records, strings, values) else {
            return MALFORMED;
        };
        let bound = match Bound::read(reads, &mut tape) {
            Ok(bound) => bound,
            Err(Fault::Error(error)) => return failed(error),
            Err(Fault::Malformed) => return MALFORMED,
        };
        let mut out = Vec::new();
        let (cut, wanted) = plan_of(&bound);
        let flags = Op::ALL.map(|op| bound.flags(op));
        Answer(&mut out).plan(&flags, cut, bound.keys(), &wanted);
        answered(out);
        // Longer options are found by nothing, and let go of as any other.
        let found_by = if written.len() <= FOUND_BY {
            written
        } else {
            Vec::new()
        };
        // A handle made anew: its number, past the numbers a handle found has.
        i32::try_from(keep(found_by, bound, pin) + NEW).unwrap_or(MALFORMED)
    })
}

/// The plan's cut and the members of `_meta` that may hold correlation
/// ids: the known ones and a policy's own.
fn plan_of(bound: &Bound) -> (u32, Vec<&str>) {
    // The outgoing module's ops read no correlation id.
    #[cfg(not(feature = "host"))]
    let known = Vec::new();
    #[cfg(feature = "host")]
    let known = {
        let own = bound.policy.correlation_keys.iter();
        let own = own.map(|(key, _)| key.as_str());
        correlation::known_keys().into_iter().chain(own).collect()
    };
    (bound.cut(), known)
}

/// The number of a handle made of `written`, now held (once more) with `pin`.
fn find(written: &[u8], pin: bool) -> Option<usize> {
    HELD.with_borrow_mut(|held| {
        let number = held
            .iter()
            .position(|slot| slot.as_ref().is_some_and(|h| h.written == written))?;
        if let Some(Some(found)) = held.get_mut(number) {
            found.pins += u32::from(pin);
        }
        Some(number)
    })
}

/// Keeps a new handle, letting go of the first no JS value holds when
/// [`KEPT`] are kept; its number.
fn keep(written: Vec<u8>, bound: Bound, pin: bool) -> usize {
    let pins = u32::from(pin);
    HELD.with_borrow_mut(|all| {
        let loose = |slot: &Option<Held>| slot.as_ref().is_some_and(|held| held.pins == 0);
        if all.iter().filter(|slot| loose(slot)).count() >= KEPT {
            if let Some(slot) = all.iter_mut().find(|slot| loose(slot)) {
                *slot = None;
            }
        }
        let held = Some(Held {
            written,
            bound,
            pins,
        });
        match all.iter_mut().enumerate().find(|(_, slot)| slot.is_none()) {
            Some((free, slot)) => {
                *slot = held;
                free
            }
            None => {
                all.push(held);
                all.len() - 1
            }
        }
    })
}

/// JS lets go of handle `handle` (a `createProvenance` no longer reachable):
/// kept as any other, until more are made. The host module's: the outgoing
/// module's entry holds no handle.
#[cfg(feature = "host")]
#[wasm_bindgen]
pub fn release(handle: usize) {
    HELD.with_borrow_mut(|held| {
        if let Some(Some(held)) = held.get_mut(handle) {
            held.pins = held.pins.saturating_sub(1);
        }
    });
}
