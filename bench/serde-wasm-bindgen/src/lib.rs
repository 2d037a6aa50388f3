//! The structs the package hands to JS, made once from a message, then
//! converted to JS values by serde-wasm-bindgen as often as JS asks.

use std::cell::RefCell;

use mcp_provenance::{
    AuditContext, AuditRecord, Initiator, KeyOptions, Report, ValidateOptions, attach_invocation,
    audit_record, sanitize, stamp_initiator, validate,
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

// The object API's calls made whole the wasm-bindgen way: each argument
// brought in by serde-wasm-bindgen, the core's serde_json::Value API, and
// the result made a JS value by serde-wasm-bindgen (as JSON would hold it:
// objects, not Maps). run.mjs times each against the package's own call.

fn value(from: JsValue) -> Value {
    serde_wasm_bindgen::from_value(from).expect("JSON")
}

fn js<T: serde::Serialize>(made: &T) -> JsValue {
    made.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .expect("serializable")
}

/// `validate(message)`: its report.
#[wasm_bindgen(js_name = validateCall)]
pub fn validate_call(message: JsValue) -> JsValue {
    js(&validate(&value(message), &ValidateOptions::default()))
}

/// `sanitize(message)`: `{message, changes}`.
#[wasm_bindgen(js_name = sanitizeCall)]
pub fn sanitize_call(message: JsValue) -> JsValue {
    let sanitized = sanitize(value(message), &Default::default()).expect("a request");
    js(&serde_json::json!({ "message": sanitized.message, "changes": sanitized.changes }))
}

/// `stampInitiator(request)`: the request stamped.
#[wasm_bindgen(js_name = stampInitiatorCall)]
pub fn stamp_initiator_call(request: JsValue) -> JsValue {
    let keys = KeyOptions::default();
    js(&stamp_initiator(value(request), Initiator::default(), &keys).expect("a request"))
}

/// `attachInvocation(request, invocation)`: the request with the envelope.
#[wasm_bindgen(js_name = attachInvocationCall)]
pub fn attach_invocation_call(request: JsValue, invocation: JsValue) -> JsValue {
    let keys = KeyOptions::default();
    js(&attach_invocation(value(request), value(invocation), &keys).expect("a request"))
}

/// `auditRecord(request)`: its record.
#[wasm_bindgen(js_name = auditRecordCall)]
pub fn audit_record_call(request: JsValue) -> JsValue {
    js(&audit_record(&value(request), &AuditContext::default()).expect("a request"))
}
