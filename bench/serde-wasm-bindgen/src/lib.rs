//! The structs the package hands to JS, made once from a message, then
//! converted to JS values by serde-wasm-bindgen as often as JS asks.

use std::cell::RefCell;

use mcp_provenance::{
    AuditContext, AuditRecord, Report, ValidateOptions, audit_record, sanitize, validate,
};
use serde_json::Value;
use wasm_bindgen::prelude::*;

thread_local! {
    static MADE: RefCell<Option<(Report, AuditRecord, Vec<mcp_provenance::Change>)>> = const { RefCell::new(None) };
}

/// Makes the report, audit record and changes of `message` (JSON text).
#[wasm_bindgen]
pub fn prepare(message: &str) {
    let message: Value = serde_json::from_str(message).expect("JSON");
    let report = validate(&message, &ValidateOptions::default());
    let record = audit_record(&message, &AuditContext::default()).expect("a request");
    let changes = sanitize(message.clone(), &Default::default())
        .expect("a request")
        .changes;
    MADE.set(Some((report, record, changes)));
}

fn with<T: serde::Serialize>(
    pick: impl Fn(&(Report, AuditRecord, Vec<mcp_provenance::Change>)) -> &T,
) -> JsValue {
    MADE.with_borrow(|made| {
        serde_wasm_bindgen::to_value(pick(made.as_ref().expect("prepared"))).expect("serializable")
    })
}

#[wasm_bindgen]
pub fn report() -> JsValue {
    with(|made| &made.0)
}

#[wasm_bindgen]
pub fn record() -> JsValue {
    with(|made| &made.1)
}

#[wasm_bindgen]
pub fn changes() -> JsValue {
    with(|made| &made.2)
}

/// An option object brought in as serde-wasm-bindgen brings one: into a
/// serde_json::Value; how many members it has.
#[wasm_bindgen]
pub fn options(value: JsValue) -> usize {
    serde_wasm_bindgen::from_value::<serde_json::Map<String, Value>>(value)
        .map_or(0, |map| map.len())
}
