//! What the module's calls share with JS beside their arguments: the
//! tape's areas, which JS writes between calls ([`reserve`]); the last
//! answer, which JS reads where it stands ([`answer_at`]); the last error
//! ([`error`]); and the statuses a call answers with. Both the object
//! API's calls ([`crate::run`]) and its handles ([`crate::handle`]) use
//! them.

use std::cell::{Cell, RefCell};

use crate::tape::Failure;
use crate::thrown;
use mcp_provenance::Error;
use wasm_bindgen::prelude::*;

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

/// Keeps `out` as the last answer, until the next call.
pub(crate) fn answered(out: Vec<u8>) {
    ANSWER_AT.set(out.as_ptr() as usize);
    ANSWER.set(out);
}

/// Keeps `error` as the last one, for JS to take ([`error`]); `ERROR`.
pub(crate) fn failed(error: Error) -> i32 {
    FAILED.set(Some(error));
    ERROR
}

/// Drops what the last call left: JS has read it. Before a call in a
/// chunk (`crate::arena`) takes the chunk back.
pub(crate) fn forget() {
    drop((ANSWER.take(), FAILED.take()));
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
