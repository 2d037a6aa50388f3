//! The options speak Rust in Rust and JS in JS: each options struct
//! deserializes by its field names (every one optional, none unknown) and
//! is checked as it is read, with messages naming its fields; the same
//! mistake made in JS (`from_value`) reads the same but for the names.
// Native only: the wasm build reads options by their JS names alone.
#![cfg(not(target_arch = "wasm32"))]

use mcp_provenance::{
    AuditArguments, AuditContext, Code, CorrelationKind, FieldPolicy, FilterContext, FilterOptions,
    GatewayOptions, IntentPolicy, KeyOptions, LiftOptions, Policy, ValidateOptions,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// What `json` deserializes to, or the message it is refused with.
fn read<T: DeserializeOwned>(json: Value) -> Result<T, String> {
    serde_json::from_value(json).map_err(|error| error.to_string())
}

#[track_caller]
fn refused<T: DeserializeOwned + std::fmt::Debug>(json: Value, message: &str) {
    assert_eq!(read::<T>(json).unwrap_err(), message);
}

#[test]
fn each_options_struct_deserializes_by_its_field_names() {
    let keys = KeyOptions {
        invocation_key: Some("com.example/ai".into()),
        ui_key: Some("com.example/ui".into()),
    };
    let rust_keys = json!({"invocation_key": "com.example/ai", "ui_key": "com.example/ui"});
    assert_eq!(read::<KeyOptions>(rust_keys.clone()), Ok(keys.clone()));

    let policy = Policy {
        keys: keys.clone(),
        max_reason_bytes: 100,
        max_intent_bytes: 200,
        max_model_bytes: 64,
        max_turn_id_bytes: 32,
        max_envelope_bytes: 1000,
        user_intent: IntentPolicy::Redact,
        model: FieldPolicy::Drop,
        invocation_reason: FieldPolicy::Drop,
        unknown_fields: FieldPolicy::Keep,
        correlation_keys: vec![(
            "com.example/conversation".into(),
            CorrelationKind::Conversation,
        )],
    };
    let rust_policy = json!({
        "keys": rust_keys, "max_reason_bytes": 100, "max_intent_bytes": 200,
        "max_model_bytes": 64, "max_turn_id_bytes": 32, "max_envelope_bytes": 1000,
        "user_intent": "redact", "model": "drop", "invocation_reason": "drop",
        "unknown_fields": "keep", "correlation_keys": {"com.example/conversation": "conversation"},
    });
    assert_eq!(read::<Policy>(rust_policy.clone()), Ok(policy.clone()));

    let lift = LiftOptions {
        keys: keys.clone(),
        remove: true,
    };
    assert_eq!(read(json!({"keys": rust_keys, "remove": true})), Ok(lift));

    let validate: ValidateOptions = read(json!({"keys": rust_keys})).unwrap();
    assert_eq!((validate.keys, validate.request), (keys, None));

    let context = AuditContext {
        received_at: Some("2026-11-29T20:00:00Z".into()),
        principal: Some("alice".into()),
        session_id: Some("s-1".into()),
        policy: Some(policy.clone()),
    };
    let rust_context = json!({
        "received_at": "2026-11-29T20:00:00Z", "principal": "alice", "session_id": "s-1",
        "policy": rust_policy,
    });
    assert_eq!(read(rust_context), Ok(context));

    let filter_context = FilterContext {
        received_at: Some("2026-11-29T20:00:00Z".into()),
        principal: None,
        session_id: Some("s-1".into()),
        headers: Some(vec![("content-type".into(), "application/json".into())]),
    };
    let rust_filter_context = json!({
        "received_at": "2026-11-29T20:00:00Z", "session_id": "s-1",
        "headers": {"content-type": "application/json"},
    });
    assert_eq!(read(rust_filter_context), Ok(filter_context));

    let filter_policy = Policy {
        user_intent: IntentPolicy::Drop,
        ..Policy::default()
    };
    let filter = FilterOptions {
        policy: Some(filter_policy),
        lift_legacy: true,
        invocation_keys: vec!["com.example/ai".into()],
        ui_keys: vec!["com.example/ui".into()],
        max_batch: 10,
        max_depth: 16,
        audit_arguments: AuditArguments::Digest,
    };
    let rust_filter = json!({
        "policy": {"user_intent": "drop"}, "lift_legacy": true,
        "invocation_keys": ["com.example/ai"], "ui_keys": ["com.example/ui"],
        "max_batch": 10, "max_depth": 16, "audit_arguments": "digest",
    });
    assert_eq!(read(rust_filter.clone()), Ok(filter.clone()));

    let gateway = GatewayOptions {
        filter,
        echo: false,
        max_body_bytes: 1000,
        max_answer_bytes: 2000,
        max_sessions: 3,
        paths: Some(vec!["/mcp".into()]),
    };
    let rust_gateway = json!({
        "filter": rust_filter, "echo": false, "max_body_bytes": 1000,
        "max_answer_bytes": 2000, "max_sessions": 3, "paths": ["/mcp"],
    });
    assert_eq!(read(rust_gateway), Ok(gateway));
}

#[test]
fn missing_members_are_the_defaults() {
    assert_eq!(read(json!({})), Ok(KeyOptions::default()));
    assert_eq!(read(json!({})), Ok(Policy::default()));
    assert_eq!(read(Value::Null), Ok(Policy::default()));
    assert_eq!(read(json!({})), Ok(LiftOptions::default()));
    assert_eq!(read(json!({})), Ok(AuditContext::default()));
    assert_eq!(read(json!({})), Ok(FilterContext::default()));
    assert_eq!(read(json!({})), Ok(FilterOptions::default()));
    assert_eq!(read(json!({})), Ok(GatewayOptions::default()));
    let max = Policy {
        max_reason_bytes: 512,
        ..Policy::default()
    };
    assert_eq!(read(json!({"max_reason_bytes": 512})), Ok(max));
}

/// A JS name in Rust, a misspelt field, a member of the wrong type: each
/// refused, by the field names.
#[test]
fn unknown_members_are_refused_by_the_field_names() {
    refused::<Policy>(
        json!({"maxEnvelopeBytes": 100}),
        "policy has no option `maxEnvelopeBytes`",
    );
    refused::<Policy>(
        json!({"max_envelope_byte": 100}),
        "policy has no option `max_envelope_byte`; did you mean `max_envelope_bytes`?",
    );
    refused::<Policy>(
        json!({"invocation_key": "com.example/ai"}),
        "policy has no option `invocation_key`",
    );
    refused::<KeyOptions>(
        json!({"uiKey": "com.example/ui"}),
        "key options has no option `uiKey`; did you mean `ui_key`?",
    );
    refused::<ValidateOptions>(
        json!({"request": {}}),
        "validate options has no option `request`",
    );
    refused::<FilterOptions>(
        json!({"user_intent": "drop"}),
        "filter options have no option `user_intent`: policy options go in `policy`",
    );
    refused::<FilterOptions>(
        json!({"policy": {"keys": {}}}),
        "filter policy has no option `keys`",
    );
    refused::<GatewayOptions>(
        json!({"max_batch": 10}),
        "middleware options has no option `max_batch`",
    );
    refused::<AuditContext>(
        json!({"policy": {"max_model_bytes": "256"}}),
        "policy `max_model_bytes` must be a number, not a string",
    );
    refused::<FilterContext>(
        json!({"session_id": 7}),
        "filter context `session_id` must be a string, not a number",
    );
}

/// The same mistake, deserialized in Rust and read from JS: the same
/// message but for the names, and the Rust one quotes the field.
#[test]
fn a_mistake_reads_the_same_in_rust_and_js_but_for_the_names() {
    type Js<T> = fn(&Value) -> Result<T, mcp_provenance::Error>;
    #[track_caller]
    fn both<T: DeserializeOwned + std::fmt::Debug>(
        rust: Value,
        js: Value,
        from_js: Js<T>,
        message: [&str; 2],
    ) {
        assert_eq!(read::<T>(rust).unwrap_err(), message[0]);
        assert_eq!(from_js(&js).unwrap_err().to_string(), message[1]);
    }
    both(
        json!({"max_envelope_bytes": 10}),
        json!({"maxEnvelopeBytes": 10}),
        Policy::from_value,
        [
            "policy `max_envelope_bytes` must be an integer from 64 to 1048576",
            "policy `maxEnvelopeBytes` must be an integer from 64 to 1048576",
        ],
    );
    both(
        json!({"user_intent": "shred"}),
        json!({"userIntent": "shred"}),
        Policy::from_value,
        [
            "policy `user_intent` must be one of \"keep\", \"redact\", \"drop\"",
            "policy `userIntent` must be one of \"keep\", \"redact\", \"drop\"",
        ],
    );
    both(
        json!({"correlation_keys": {"com.example/c": "trace"}}),
        json!({"correlationKeys": {"com.example/c": "trace"}}),
        Policy::from_value,
        [
            "policy `correlation_keys` gives a kind only `traceparent` holds; a key's kind is conversation, turn, request, user or organization",
            "policy `correlationKeys` gives a kind only `traceparent` holds; a key's kind is conversation, turn, request, user or organization",
        ],
    );
    both(
        json!({"keys": {"invocation_key": "io.mcp/ai"}}),
        json!({"invocationKey": "io.mcp/ai"}),
        LiftOptions::from_value,
        [
            "option `invocation_key` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/",
            "option `invocationKey` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/",
        ],
    );
    both(
        json!({"invocation_keys": ["com.example/x"], "ui_keys": ["com.example/x"]}),
        json!({"invocationKeys": ["com.example/x"], "uiKeys": ["com.example/x"]}),
        |js| mcp_provenance::Filter::from_value(js).map(|filter| filter.options().clone()),
        [
            "options `invocation_keys` and `ui_keys` name the same key; the two entries need keys of their own",
            "options `invocationKeys` and `uiKeys` name the same key; the two entries need keys of their own",
        ],
    );
    both(
        json!({"max_sessions": 0}),
        json!({"maxSessions": 0}),
        |js| mcp_provenance::Gateway::from_value(js).map(|gateway| gateway.options().clone()),
        [
            "option `max_sessions` must be a positive integer",
            "option `maxSessions` must be a positive integer",
        ],
    );
    both(
        json!({"paths": ["mcp"]}),
        json!({"paths": ["mcp"]}),
        |js| mcp_provenance::Gateway::from_value(js).map(|gateway| gateway.options().clone()),
        [
            "option `paths[0]` must begin with \"/\"",
            "option `paths[0]` must begin with \"/\"",
        ],
    );
    both(
        json!({"filter": {"max_depth": 4}}),
        json!({"maxDepth": 4}),
        |js| mcp_provenance::Gateway::from_value(js).map(|gateway| gateway.options().clone()),
        [
            "filter option `max_depth` must be an integer from 8 to 4096",
            "filter option `maxDepth` must be an integer from 8 to 4096",
        ],
    );
}

/// Options built in Rust are checked where they are used, by the same
/// rules, and the messages name the fields (the filter's: tests/wire.rs).
#[test]
fn a_gateway_built_in_rust_is_checked_by_its_field_names() {
    let gateway = GatewayOptions {
        paths: Some(vec!["mcp".into()]),
        ..GatewayOptions::default()
    };
    let err = mcp_provenance::Gateway::new(gateway).unwrap_err();
    assert_eq!(err.to_string(), "option `paths[0]` must begin with \"/\"");
    let gateway = GatewayOptions {
        max_answer_bytes: 0,
        ..GatewayOptions::default()
    };
    let err = mcp_provenance::Gateway::new(gateway).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option `max_answer_bytes` must be a positive integer"
    );
}

/// A vendor key a filter reads envelopes under, named by its policy as a
/// correlation key too, was accepted and never read as one: the policy's
/// check knew only the policy's own keys (in a filter, the defaults). The
/// filter's check gives the policy its keys: refused, as a policy's own.
#[test]
fn a_filter_refuses_a_vendor_key_its_policy_names_a_correlation_key() {
    let vendor = "com.example/aiInvocation";
    let policy = Policy {
        correlation_keys: vec![(vendor.into(), CorrelationKind::Conversation)],
        ..Policy::default()
    };
    let options = FilterOptions {
        invocation_keys: vec![vendor.into()],
        policy: Some(policy),
        ..FilterOptions::default()
    };
    let error = mcp_provenance::Filter::new(options).unwrap_err();
    assert_eq!(error.code(), Code::InvalidOption);
    let said = "names a key another rule reads already (a known correlation key, an entry's key or a bare envelope field)";
    assert_eq!(
        error.to_string(),
        format!("policy `correlation_keys` {said}")
    );
    let js = json!({"uiKeys": ["com.example/ui"], "policy": {"correlationKeys": {"com.example/ui": "turn"}}});
    let error = mcp_provenance::Filter::from_value(&js).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("policy `correlationKeys` {said}")
    );
}
