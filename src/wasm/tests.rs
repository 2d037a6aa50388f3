//! The binding layer's own edge cases, run in Node by wasm-bindgen-test:
//! what the reader reads (and does not), and what the write-back shares.

use js_sys::{JsString, Reflect};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use super::message::{self, Envelope, Plan};
use super::read::Reader;
use super::{js, sanitize, stamp_initiator, validate};
use crate::keys::KeyOptions;

#[wasm_bindgen(inline_js = r#"
const trap = () => { throw new Error("must not be touched"); };
export function untouchable() {
  return new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap });
}
export function request(envelope, args) {
  return { jsonrpc: "2.0", id: 1, method: "tools/call",
    params: { name: "t", arguments: args, _meta: { "io.modelcontextprotocol/aiInvocation": envelope, other: { kept: true } } } };
}
export function cyclic() { const o = { a: 1 }; o.self = o; return o; }
export function deep(levels) { let o = {}; for (let i = 0; i < levels; i++) o = { o }; return o; }
export function sparse() { const a = []; a.length = 4e9; return a; }
export function throwing() { return { get text() { throw new Error("getter"); } }; }
export function loneSurrogate() { return "a\ud800b"; }
export function protoKey() { return JSON.parse('{"__proto__": {"polluted": true}, "turnId": "a\\nb"}'); }
export function json(value) { return JSON.stringify(value); }
export function same(a, b) { return a === b; }
export function prototypeOf(o) { return Object.getPrototypeOf(o); }
"#)]
extern "C" {
    fn untouchable() -> JsValue;
    fn request(envelope: &JsValue, args: &JsValue) -> JsValue;
    fn cyclic() -> JsValue;
    fn deep(levels: u32) -> JsValue;
    fn sparse() -> JsValue;
    fn throwing() -> JsValue;
    #[wasm_bindgen(js_name = loneSurrogate)]
    fn lone_surrogate() -> JsValue;
    #[wasm_bindgen(js_name = protoKey)]
    fn proto_key() -> JsValue;
    fn json(value: &JsValue) -> String;
    fn same(a: &JsValue, b: &JsValue) -> bool;
    #[wasm_bindgen(js_name = prototypeOf)]
    fn prototype_of(o: &JsValue) -> JsValue;
}

fn get(value: &JsValue, path: &[&str]) -> JsValue {
    path.iter().fold(value.clone(), |value, key| {
        Reflect::get(&value, &(*key).into()).unwrap_or(JsValue::UNDEFINED)
    })
}

fn read_whole(value: &JsValue) -> Result<Option<Value>, String> {
    Reader::new(None)
        .whole(value, "/x")
        .map_err(|place| format!("{} {}", place.path, place.what))
}

#[wasm_bindgen_test]
fn cutting_never_splits_a_surrogate_pair() {
    let text = JsString::from("a😀b");
    assert_eq!(String::from(js::cut(&text, 2)), "a");
    assert_eq!(String::from(js::cut(&text, 3)), "a😀");
    assert_eq!(String::from(js::cut(&text, 9)), "a😀b");
}

#[wasm_bindgen_test]
fn a_lone_surrogate_reads_as_replacement_and_is_noted() {
    let mut reader = Reader::new(Some(100));
    let read = reader.whole(&lone_surrogate(), "/x");
    assert_eq!(read.ok().flatten(), Some(json!("a\u{FFFD}b")));
    assert!(reader.lossy);
}

#[wasm_bindgen_test]
fn what_json_cannot_hold_is_unreadable_with_its_place() {
    assert_eq!(read_whole(&cyclic()), Err("/x/self a cycle".to_owned()));
    assert_eq!(
        read_whole(&deep(200)).map_err(|e| e.ends_with("nesting deeper than 128 levels")),
        Err(true)
    );
    assert!(read_whole(&deep(100)).is_ok());
    assert_eq!(
        read_whole(&sparse()),
        Err("/x an array of more than 1048576 items".to_owned())
    );
    assert_eq!(
        read_whole(&throwing()),
        Err("/x/text a getter or Proxy trap threw".to_owned())
    );
    assert_eq!(
        read_whole(&js_sys::BigInt::from(1u8).into()),
        Err("/x a BigInt".to_owned())
    );
    assert_eq!(
        read_whole(&js_sys::Date::new_0().into())
            .map_err(|e| e.starts_with("/x an object that is not plain")),
        Err(true)
    );
    assert_eq!(
        read_whole(&JsValue::from_f64(f64::NAN)),
        Err("/x a number JSON cannot hold".to_owned())
    );
    assert_eq!(read_whole(&JsValue::from_f64(3.0)), Ok(Some(json!(3))));
    assert_eq!(read_whole(&JsValue::UNDEFINED), Ok(None));
}

#[wasm_bindgen_test]
fn the_skeleton_never_touches_arguments_nor_other_meta_keys() {
    let envelope = serde_wasm(&json!({"turnId": "t-1", "extra": {"deep": [1, 2]}}));
    let message = request(&envelope, &untouchable());
    let keys = KeyOptions::default();
    let plan = Plan {
        keys: &keys,
        envelope: Envelope::Fields {
            cut: Some(64),
            unknown: false,
        },
        cut: Some(64),
        legacy: false,
    };
    let skeleton = message::read(&message, &plan).map_err(|place| place.path);
    let value = skeleton.map(|skeleton| skeleton.value);
    assert_eq!(
        value,
        Ok(
            json!({"id": 1, "method": "tools/call", "params": {"name": "t", "_meta": {
            "io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "extra": {}}}}})
        )
    );
}

#[wasm_bindgen_test]
fn write_back_shares_everything_it_did_not_change() {
    let arguments = untouchable();
    let message = request(&serde_wasm(&json!({"turnId": "t\r\n1"})), &arguments);
    let stamped = stamp_initiator(&message, &JsValue::UNDEFINED, &JsValue::UNDEFINED)
        .unwrap_or(JsValue::NULL);
    assert!(same(&get(&stamped, &["params", "arguments"]), &arguments));
    assert!(same(
        &get(&stamped, &["params", "_meta", "other"]),
        &get(&message, &["params", "_meta", "other"])
    ));
    let envelope = ["params", "_meta", "io.modelcontextprotocol/aiInvocation"];
    assert!(same(&get(&stamped, &envelope), &get(&message, &envelope)));
    assert!(!same(
        &get(&stamped, &["params"]),
        &get(&message, &["params"])
    ));
    assert_eq!(
        json(&get(
            &stamped,
            &["params", "_meta", "io.modelcontextprotocol/ui"]
        )),
        r#"{"initiator":"app"}"#
    );
    let cleaned = sanitize(&message, &JsValue::UNDEFINED).unwrap_or(JsValue::NULL);
    assert!(same(
        &get(&cleaned, &["message", "params", "arguments"]),
        &arguments
    ));
    assert_eq!(
        json(&get(
            &cleaned,
            &[
                "message",
                "params",
                "_meta",
                "io.modelcontextprotocol/aiInvocation"
            ]
        )),
        r#"{"turnId":"t  1"}"#
    );
    assert!(get(&message, &["params", "_meta", "io.modelcontextprotocol/ui"]).is_undefined());
    assert_eq!(
        get(&message, &[&envelope[..], &["turnId"]].concat())
            .as_string()
            .as_deref(),
        Some("t\r\n1")
    );
}

#[wasm_bindgen_test]
fn a_lone_surrogate_is_written_back_replaced() {
    let message = request(&serde_wasm(&json!({})), &JsValue::NULL);
    let envelope = get(
        &message,
        &["params", "_meta", "io.modelcontextprotocol/aiInvocation"],
    );
    let _ = Reflect::set(&envelope, &"turnId".into(), &lone_surrogate());
    let cleaned = sanitize(&message, &JsValue::UNDEFINED).unwrap_or(JsValue::NULL);
    let turn_id = get(
        &cleaned,
        &[
            "message",
            "params",
            "_meta",
            "io.modelcontextprotocol/aiInvocation",
            "turnId",
        ],
    );
    assert_eq!(turn_id.as_string().as_deref(), Some("a\u{FFFD}b"));
}

#[wasm_bindgen_test]
fn a_proto_key_stays_an_own_member() {
    let message = request(&proto_key(), &JsValue::NULL);
    let policy = serde_wasm(&json!({"unknownFields": "keep"}));
    let cleaned = sanitize(&message, &policy).unwrap_or(JsValue::NULL);
    let envelope = [
        "message",
        "params",
        "_meta",
        "io.modelcontextprotocol/aiInvocation",
    ];
    let kept = get(&cleaned, &envelope);
    assert_eq!(
        json(&kept),
        r#"{"__proto__":{"polluted":true},"turnId":"a b"}"#
    );
    assert!(js_sys::Object::has_own(
        &kept.clone().into(),
        &"__proto__".into()
    ));
    assert!(same(
        &prototype_of(&kept),
        &prototype_of(&js_sys::Object::new().into())
    ));
}

#[wasm_bindgen_test]
fn unreadable_input_is_a_report_for_validate_and_a_type_error_elsewhere() {
    let message = request(&throwing(), &JsValue::NULL);
    let _ = Reflect::set(
        &get(&message, &["params", "_meta"]),
        &"io.modelcontextprotocol/aiInvocation".into(),
        &serde_wasm(&json!({"userIntent": {}})),
    );
    let intent = get(
        &message,
        &["params", "_meta", "io.modelcontextprotocol/aiInvocation"],
    );
    let _ = Reflect::set(&intent, &"userIntent".into(), &throwing());
    assert_eq!(
        json(&validate(&message, &JsValue::UNDEFINED)),
        r#"{"valid":false,"diagnostics":[{"code":"unreadable","severity":"error","rule":"MSG-1","path":"/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text","message":"`/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text` cannot be read as JSON: a getter or Proxy trap threw"}]}"#
    );
    let error = sanitize(&message, &JsValue::UNDEFINED)
        .err()
        .unwrap_or(JsValue::NULL);
    assert!(error.is_instance_of::<js_sys::TypeError>());
    assert_eq!(
        get(&error, &["code"]).as_string().as_deref(),
        Some("unreadable")
    );
}

/// A JS value for JSON written in the test.
fn serde_wasm(value: &Value) -> JsValue {
    message::to_js(value).unwrap_or(JsValue::NULL)
}
