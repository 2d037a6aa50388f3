//! The npm package's WebAssembly: the core behind the package's exports,
//! through wasm-bindgen. One crate, three modules (`make build`): the host
//! module (feature `host`: the object API, what a host or a browser needs),
//! the outgoing module (feature `outgoing`: of the object API only
//! `stampInitiator`, `clearInitiator` and `attachInvocation`, built for
//! size) and the filter module (feature `filter`: the gateway, http and the
//! command). Nothing here decides a rule; the core does.
//!
//! What crosses, path by path, and why (figures from `make bench`):
//!
//! | JS call | crosses in | crosses out | why |
//! |---|---|---|---|
//! | `validate`, `sanitize`, `stampInitiator`, `clearInitiator`, `attachInvocation`, `echoTurnId`, `auditRecord`, `liftLegacyArguments` | a handle's number and the tape (`run.rs`, its areas in `memory.rs`): the places the rules read, straight from the caller's objects | the compact answer (`answer.rs`); a record as the JSON a filter's line holds | the hot path: the same calls with serde-wasm-bindgen in and out took 6× (`validate`) to 17× (`stampInitiator`) as long on the SEP example, `auditRecord` 3× (bench/serde-wasm-bindgen); the record is the filter's one form, at the cost of `JSON.parse` |
//! | `createProvenance`, a call's own options | its options, on the tape, once: the handle (`handle.rs`) found by them as written | the handle's number and its plan: what to read of a message | options cross once, into a handle every call after runs under; nothing is read twice and no call read again |
//! | `isValidMetaKey`, `isReservedMetaKey` | the JS value | a `bool` | wasm-bindgen's own forms |
//! | `createFilter` (`Filter`, `filter.rs`), a filter's context | the JSON text of a plain copy JS made, read by the core's own parser | the filter, a class | options cross once; JS runs each getter once, as it copies; serde-wasm-bindgen and `serde_json::Value` made the module 37 KB larger gzipped |
//! | `filter(body)`, `filter.echo(answer)` | the body, written by JS straight into the module's memory (`bodyRoom`) | the outcome in the compact form, its accounts apart, made when first read (`answer.rs`), a view of the answer JS reads where it stands (`viewed`) | written by wasm-bindgen's `&str`, or encoded and copied as `&[u8]`, a string body took 1.18× as long; the answer as wasm-bindgen's `Vec<u8>`, a copy in a new `ArrayBuffer` each call, took 1.2–1.3× as long; the records, made when not read, 1.4× |
//! | `createGateway` (`Gateway`, `gateway.rs`), its exchanges | options as `createFilter`'s; headers as a flat `[name, value, ...]`; a body and each piece of an answer written into `bodyRoom` | the outcome as `filter`'s; each step of the way back and each own answer in a compact form of their own, viewed as `filter`'s | one crossing a call, once a piece |
//! | `check` (`Check`) | its words, then each piece as `&[u8]` | each piece's lines and counts, in a compact form | once per 256 KiB piece |
//! | the text shown of the wire | `&str` | `String` | wasm-bindgen's own forms |
//!
//! Errors are the core's, thrown as JS `TypeError` or `RangeError` with
//! their `code` (`thrown`).

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
mod arena;
#[cfg(test)]
mod describe;
#[cfg(feature = "filter")]
mod filter;
#[cfg(feature = "filter")]
mod gateway;
#[cfg(feature = "outgoing")]
mod handle;
#[cfg(feature = "outgoing")]
mod memory;
#[cfg(feature = "outgoing")]
mod run;
#[cfg(feature = "outgoing")]
mod tape;

use mcp_provenance::{Error, ErrorKind};
use wasm_bindgen::prelude::*;

/// The hot paths' calls allocate from a chunk taken back when the next
/// begins; the rest from Rust's own allocator.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: arena::Arena = arena::Arena;

#[cfg(target_arch = "wasm32")]
use arena::within;

/// Natively (the unit tests), a call allocates as any code does.
#[cfg(not(target_arch = "wasm32"))]
fn within<T>(call: impl FnOnce() -> T) -> T {
    call()
}

/// Runs as the module starts (`__wbindgen_start`): makes the first chunk
/// the calls allocate from, and, with Rust's own allocator, the vector in
/// which wasm-bindgen tracks the JS values Rust holds (an error being made),
/// which it would otherwise make with the first one, inside a call whose
/// chunk the next takes back.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen(start, private)]
fn start() {
    arena::start();
    drop(JsValue::from_f64(0.0));
}

/// The core's error as JS throws it: a `TypeError` (an input not of the
/// kind the call needs) or a `RangeError` (an option or bound out of range),
/// with its `code`.
pub(crate) fn thrown(error: &Error) -> JsValue {
    let message = error.to_string();
    let thrown: JsValue = match error.kind() {
        ErrorKind::Input => js_sys::TypeError::new(&message).into(),
        ErrorKind::Range => js_sys::RangeError::new(&message).into(),
        // A kind this build does not know of: a plain `Error`, its code set.
        _ => js_sys::Error::new(&message).into(),
    };
    // Setting a member of an error just made cannot fail.
    let _ = js_sys::Reflect::set(&thrown, &"code".into(), &error.code().as_str().into());
    thrown
}

/// "No field" or "no member" where the boundary names a field of the
/// envelope (by its place in the envelope's order) and a member of it.
#[cfg(feature = "outgoing")]
pub(crate) const NONE: u8 = u8::MAX;

/// Why JS could not read a value as JSON: the name JS knows it by (the
/// tape's byte after `UNREADABLE` is its index; the filter module's
/// `unreadable` takes the name), and what a message says.
pub(crate) const WHAT: [(&str, &str); 13] = [
    ("threw", "a getter or Proxy trap threw"),
    ("bigint", "a BigInt"),
    ("symbol", "a symbol"),
    ("function", "a function"),
    (
        "notPlain",
        "an object that is not plain JSON (a class instance, a Date, a Map…)",
    ),
    ("notFinite", "a number JSON cannot hold"),
    ("cycle", "a cycle"),
    ("tooDeep", "nesting deeper than 128 levels"),
    ("tooLong", "an array of more than 1048576 items"),
    ("tooMany", "more than 1048576 values in one argument"),
    ("tooLarge", "more than 64 MiB of values in one argument"),
    (
        "longOption",
        "an option string of more than 65536 characters",
    ),
    ("longName", "a member name of more than 65536 characters"),
];

/// The longest member name JS reads, in UTF-16 code units (the tape's
/// `nameChars`, `longName`), and the longest key judged valid: a name is
/// compared and edited by its whole value, never by a cut, so one longer is
/// refused.
#[cfg(any(feature = "host", feature = "filter"))]
pub(crate) const MAX_NAME_CHARS: u32 = 65_536;

/// Whether `key` is a valid `_meta` key (KEY-1): a string, of at most
/// `MAX_NAME_CHARS`, with a UTF-8 form (no lone surrogate), that the core
/// judges valid.
///
/// In the host and filter modules: the outgoing module's entry has it not.
#[cfg(any(feature = "host", feature = "filter"))]
#[wasm_bindgen(js_name = isValidMetaKey)]
pub fn is_valid_meta_key(key: &JsValue) -> bool {
    key.dyn_ref::<js_sys::JsString>()
        .filter(|key| key.length() <= MAX_NAME_CHARS && key.is_well_formed())
        .is_some_and(|key| mcp_provenance::is_valid_meta_key(&String::from(key)))
}

/// Whether `key` is reserved for the MCP specification (KEY-2): a string
/// the core judges reserved (a lone surrogate read as U+FFFD, which is in
/// no label the judgement reads).
///
/// In the host and filter modules: the outgoing module's entry has it not.
#[cfg(any(feature = "host", feature = "filter"))]
#[wasm_bindgen(js_name = isReservedMetaKey)]
pub fn is_reserved_meta_key(key: &JsValue) -> bool {
    key.dyn_ref::<js_sys::JsString>()
        .is_some_and(|key| mcp_provenance::is_reserved_meta_key(&String::from(key)))
}
