//! Every error a call can fail with: its code, its JS class and its exact
//! message, which names the place and the expected type, never a value.
// Native only: the wasm build is tested by make test-wasm and js-tests/.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::js_class;

use mcp_provenance::{
    AuditContext, Error, Initiator, KeyOptions, LiftOptions, Policy, Report, Sanitized,
    attach_invocation, audit_record, echo_turn_id, lift_legacy_arguments, sanitize,
    stamp_initiator,
};
use serde_json::{Value, json};

#[track_caller]
fn assert_error<T: std::fmt::Debug>(
    result: Result<T, Error>,
    code: &str,
    class: &str,
    message: &str,
) {
    let error = result.expect_err("the call must fail");
    assert_eq!((error.code().as_str(), js_class(&error)), (code, class));
    assert_eq!(error.to_string(), message);
}

fn keys(invocation: Option<&str>, ui: Option<&str>) -> KeyOptions {
    KeyOptions {
        invocation_key: invocation.map(str::to_owned),
        ui_key: ui.map(str::to_owned),
    }
}

fn call() -> Value {
    json!({"method": "tools/call", "params": {"name": "t"}})
}

#[test]
fn input_of_the_wrong_kind_is_a_type_error() {
    let keys = KeyOptions::default();
    assert_error(
        stamp_initiator(json!({"id": 1}), Initiator::App, &keys),
        "not-a-request",
        "TypeError",
        "expected a JSON-RPC request: an object with a string `method`, not an object without one",
    );
    assert_error(
        sanitize(json!("secret text"), &Policy::default()),
        "not-a-message",
        "TypeError",
        "expected a JSON-RPC message: an object with a string `method`, or with `result` or `error`; found a string",
    );
    assert_error(
        echo_turn_id(&call(), json!({"id": 1}), &keys),
        "not-a-response",
        "TypeError",
        "expected a JSON-RPC response: an object with `result` or `error`, not an object without either",
    );
    assert_error(
        echo_turn_id(&call(), json!({"result": "secret text"}), &keys),
        "invalid-type",
        "TypeError",
        "`/result` must be an object, not a string",
    );
    assert_error(
        stamp_initiator(
            json!({"method": "tools/call", "params": {"_meta": ["secret text"]}}),
            Initiator::App,
            &keys,
        ),
        "invalid-type",
        "TypeError",
        "`/params/_meta` must be an object, not an array",
    );
    assert_error(
        attach_invocation(call(), json!({"userIntent": {"text": 7}}), &keys),
        "invalid-invocation",
        "TypeError",
        "invalid invocation at `/userIntent/text`: `userIntent.text` must be a string, not a number",
    );
    assert_error(
        attach_invocation(call(), json!("secret text"), &keys),
        "invalid-invocation",
        "TypeError",
        "invalid invocation: the invocation envelope must be an object, not a string",
    );
}

/// Options built in Rust: messages name their fields.
#[test]
fn bad_options_are_range_errors() {
    assert_error(
        stamp_initiator(
            call(),
            Initiator::App,
            &keys(Some("com.example/ bad"), None),
        ),
        "invalid-key",
        "RangeError",
        "option `invocation_key` is not a valid _meta key name: expected [prefix/]name",
    );
    assert_error(
        lift_legacy_arguments(
            call(),
            &LiftOptions {
                keys: keys(None, Some("dev.mcp/ui")),
                remove: false,
            },
        ),
        "reserved-key",
        "RangeError",
        "option `ui_key` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/",
    );
    assert_error(
        sanitize(
            call(),
            &Policy {
                keys: keys(Some("com.example/x"), Some("com.example/x")),
                ..Policy::default()
            },
        ),
        "conflicting-keys",
        "RangeError",
        "options `invocation_key` and `ui_key` name the same key; the two entries need keys of their own",
    );
    assert_error(
        Policy::from_value(&json!({"maxReasonBytes": 2.5})),
        "invalid-limit",
        "RangeError",
        "policy `maxReasonBytes` must be an integer from 16 to 1048576",
    );
    assert_error(
        Policy::from_value(&json!({"unknownFields": "shred"})),
        "invalid-option",
        "RangeError",
        "policy `unknownFields` must be one of \"keep\", \"drop\"",
    );
    assert_error(
        AuditContext::from_value(&json!([])),
        "invalid-option",
        "RangeError",
        "audit context must be an object, not an array",
    );
    assert_error(
        "admin".parse::<Initiator>(),
        "invalid-initiator",
        "RangeError",
        "initiator must be one of \"app\", \"model\", \"user\", \"host\"",
    );
    let context = AuditContext {
        policy: Some(Policy {
            max_envelope_bytes: 0,
            ..Policy::default()
        }),
        ..AuditContext::default()
    };
    assert_error(
        audit_record(&call(), &context),
        "invalid-limit",
        "RangeError",
        "policy `max_envelope_bytes` must be an integer from 64 to 1048576",
    );
}

/// Options from JS or Python (`from_value`): messages name them as JS does.
#[test]
fn bad_options_from_js_name_them_as_js_does() {
    assert_error(
        KeyOptions::from_value(&json!({"invocationKey": "com.example/ bad"})),
        "invalid-key",
        "RangeError",
        "option `invocationKey` is not a valid _meta key name: expected [prefix/]name",
    );
    assert_error(
        LiftOptions::from_value(&json!({"uiKey": "dev.mcp/ui"})),
        "reserved-key",
        "RangeError",
        "option `uiKey` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/",
    );
    assert_error(
        Policy::from_value(&json!({"invocationKey": "com.example/x", "uiKey": "com.example/x"})),
        "conflicting-keys",
        "RangeError",
        "options `invocationKey` and `uiKey` name the same key; the two entries need keys of their own",
    );
    assert_error(
        AuditContext::from_value(&json!({"policy": {"maxEnvelopeBytes": 0}})),
        "invalid-limit",
        "RangeError",
        "policy `maxEnvelopeBytes` must be an integer from 64 to 1048576",
    );
}

#[test]
fn public_types_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Error>();
    send_sync::<Report>();
    send_sync::<Sanitized>();
    send_sync::<Policy>();
    send_sync::<AuditContext>();
    send_sync::<mcp_provenance::AuditRecord>();
}
