//! The conformance matrix of ext-apps#738 (initiator provenance), in Rust:
//! each cell, the tests that show it. Each asserts what a correct
//! implementation gives, so that a broken one fails it.
//!
//! 1. The Host replaces any inbound `initiator` with "app" on View calls
//!    (UI-1, UI-3, UI-5), whatever the View put there ("model", "app",
//!    "user", "host", an unknown string, a number, a boolean, an object, an
//!    array, null, absent, the ui entry missing or not an object, no `_meta`,
//!    no params), under the standard and a vendor key (KEY-3):
//!    `cell_1_stamp_initiator_replaces_every_view_claim_with_app`
//!    (the ext-apps bridge is JS: js-tests/initiator-matrix.test.mjs).
//! 2. Never "app" for model calls (UI-2):
//!    `cell_2_clear_initiator_leaves_no_initiator_whatever_came`,
//!    `cell_2_attach_invocation_adds_no_initiator_and_the_model_path_never_carries_app`.
//! 3. A gateway preserves the value without raising its trust (UI-6, UI-8):
//!    `cell_3_the_filter_forwards_every_initiator_byte_for_byte_recorded_host_attested_only`,
//!    `tower_layer::cell_3_the_layer_passes_every_initiator_on_byte_for_byte`
//!    (and conformance/filter.json `filter-initiators-that-disagree-are-not-recorded`,
//!    in every runtime: a View's claim under a key its Host does not stamp is
//!    never recorded as the Host's).
//! 4. A missing value is recorded as unknown (UI-4): `hostAttested` without
//!    `initiator`: `cell_4_audit_record_records_an_absent_initiator_as_unknown`,
//!    `cell_4_the_filter_records_an_absent_initiator_as_unknown`, and the
//!    absent case of `tower_layer::cell_3_...`.
//! 5. The marker alone changes no decision (AI-10, UI-6): the same forward
//!    or refusal, replies, changes and diagnostics with and without it, apart
//!    from the initiator itself, over bodies with refused ones:
//!    `decisions::cell_5_the_filter_decides_the_same_with_any_marker_or_none`,
//!    `tower_layer::cell_5_the_layer_decides_the_same_with_any_marker_or_none`,
//!    `decisions::cell_5_a_duplicated_initiator_is_refused_as_any_duplicated_member_whatever_its_values`
//!    (a duplicated member is refused where a rule reads, WIRE-3: ambiguity,
//!    not the marker's value, decides it).
//!
//! The tower layer's tests need `--features tower`, as `make test` runs them.
#![cfg(not(target_arch = "wasm32"))]

mod decisions;
#[cfg(feature = "tower")]
mod tower_layer;

use mcp_provenance::{
    AuditContext, Filter, FilterContext, Initiator, KeyOptions, UI_KEY as UI, VIEW_REQUESTS,
    Verdict, attach_invocation, audit_record, clear_initiator, stamp_initiator,
};
use serde_json::{Map, Value, json};

const VENDOR: &str = "com.example/ui";

/// The keys a Host is configured with: the standard one, or `key`.
fn keys(key: &str) -> KeyOptions {
    KeyOptions {
        ui_key: (key != UI).then(|| key.to_owned()),
        ..KeyOptions::default()
    }
}

/// What a View may send under `key`: a label and its `_meta` (`None`: none).
fn claims(key: &str) -> Vec<(String, Option<Value>)> {
    let values = [
        json!("model"),
        json!("app"),
        json!("user"),
        json!("host"),
        json!("admin"),
        json!("APP"),
        json!(""),
        json!(42),
        json!(0),
        json!(true),
        json!(null),
        json!({"value": "app", "trusted": true}),
        json!(["app"]),
    ];
    let entries = [
        json!("app"),
        json!(null),
        json!(["model"]),
        json!(7),
        json!(false),
    ];
    let mut all: Vec<(String, Option<Value>)> = values
        .into_iter()
        .map(|value| {
            let meta = json!({key: {"initiator": value, "theme": "dark"}, "other": 1});
            (format!("initiator {value}"), Some(meta))
        })
        .collect();
    all.push((
        "initiator absent".into(),
        Some(json!({key: {"theme": "dark"}, "other": 1})),
    ));
    all.push((
        "an empty ui entry".into(),
        Some(json!({key: {}, "other": 1})),
    ));
    for entry in entries {
        let meta = json!({key: entry, "other": 1});
        all.push((format!("the ui entry {entry}"), Some(meta)));
    }
    all.push(("no ui entry".into(), Some(json!({"other": 1}))));
    all.push(("no _meta".into(), None));
    all
}

fn request(method: &str, meta: Option<&Value>) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"name": "q", "arguments": {"a": 1}}});
    if let Some(meta) = meta {
        request["params"]["_meta"] = meta.clone();
    }
    request
}

/// The `_meta` a stamp must give: only `initiator` set, over an object entry's members.
fn stamped(meta: Option<&Value>, key: &str) -> Value {
    let mut meta = meta.cloned().unwrap_or_else(|| json!({}));
    let mut entry = match &meta[key] {
        Value::Object(entry) => entry.clone(),
        _ => Map::new(),
    };
    entry.insert("initiator".into(), json!("app"));
    meta[key] = Value::Object(entry);
    meta
}

#[test]
fn cell_1_stamp_initiator_replaces_every_view_claim_with_app() {
    for key in [UI, VENDOR] {
        for method in VIEW_REQUESTS {
            for (label, meta) in claims(key) {
                let given = request(method, meta.as_ref());
                let out = stamp_initiator(given.clone(), Initiator::App, &keys(key)).unwrap();
                let mut expected = given;
                expected["params"]["_meta"] = stamped(meta.as_ref(), key);
                assert_eq!(out, expected, "{key} {method}: {label}");
            }
        }
        let out = stamp_initiator(
            json!({"method": "prompts/list"}),
            Initiator::App,
            &keys(key),
        );
        assert_eq!(
            out.unwrap(),
            json!({"method": "prompts/list", "params": {"_meta": {key: {"initiator": "app"}}}})
        );
    }
}

fn carries_app(message: &Value) -> bool {
    message.to_string().contains(r#""initiator":"app""#)
}

#[test]
fn cell_2_clear_initiator_leaves_no_initiator_whatever_came() {
    for key in [UI, VENDOR] {
        for (label, meta) in claims(key) {
            let out = clear_initiator(request("tools/call", meta.as_ref()), &keys(key)).unwrap();
            // An object entry loses `initiator` alone; anything else has none to lose and stays.
            let mut expected = meta.clone();
            if let Some(Value::Object(entry)) = expected.as_mut().and_then(|m| m.get_mut(key)) {
                entry.remove("initiator");
            }
            assert_eq!(
                out["params"].get("_meta"),
                expected.as_ref(),
                "{key}: {label}"
            );
            assert!(!carries_app(&out), "{label}");
        }
    }
    // A Host that attests model calls says so: "model" over whatever came.
    let call = request("tools/call", Some(&json!({UI: {"initiator": "app"}})));
    let out = stamp_initiator(call, Initiator::Model, &KeyOptions::default()).unwrap();
    assert_eq!(out["params"]["_meta"][UI], json!({"initiator": "model"}));
}

#[test]
fn cell_2_attach_invocation_adds_no_initiator_and_the_model_path_never_carries_app() {
    let envelopes = [
        json!({"turnId": "t-1"}),
        json!({"invocationReason": {"text": "why"}, "model": {"name": "m"}, "userIntent": {"text": "hi", "redacted": false}, "turnId": "t-2"}),
    ];
    for key in [UI, VENDOR] {
        for envelope in &envelopes {
            for (label, meta) in claims(key) {
                let call = request("tools/call", meta.as_ref());
                let attached = attach_invocation(call, envelope.clone(), &keys(key)).unwrap();
                // It writes the envelope and nothing else: the ui entry as it came, or absent.
                let had = meta.as_ref().and_then(|meta| meta.get(key));
                assert_eq!(attached["params"]["_meta"].get(key), had, "{key}: {label}");
                let sent = clear_initiator(attached, &keys(key)).unwrap();
                assert!(!carries_app(&sent), "{key}: {label}");
            }
        }
    }
}

/// Initiator values as a body spells them: a label and the JSON text.
const SPELLINGS: [(&str, &str); 16] = [
    ("app", r#""app""#),
    ("model", r#""model""#),
    ("user", r#""user""#),
    ("host", r#""host""#),
    ("admin", r#""admin""#),
    ("an escaped app", r#""\u0061pp""#),
    ("a line break", r#""app\r\nforged""#),
    ("a bidi override", r#""a\u202eb""#),
    (
        "a long string",
        r#""xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx""#,
    ),
    ("42", "42"),
    ("1e400", "1e400"),
    ("-0.0", "-0.0"),
    ("true", "true"),
    ("null", "null"),
    ("an object", r#"{ "value" : "app", "trusted": true }"#),
    ("an array", r#"["app"]"#),
];
const KNOWN: [&str; 4] = ["app", "model", "user", "host"];

fn call_with(meta: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"q","arguments":{{"n":1e400}},"_meta":{{{meta}"progressToken":1}}}}}}"#
    )
}

/// What the record (as JSON) of a call carrying `text` as its initiator must
/// say: host-attested, a string as sent (neutralized, at most 64 bytes),
/// flagged when unknown (UI-7); anything else not recorded, an error;
/// absent, unknown and unflagged.
fn check_record(record: &Value, text: Option<&str>, label: &str) {
    // `1e400` is past f64; any number will do to tell its kind.
    let value: Option<Value> =
        text.map(|text| serde_json::from_str(text).unwrap_or_else(|_| json!(0)));
    let names: Vec<&String> = record.as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        [
            "clientAsserted",
            "diagnostics",
            "hostAttested",
            "method",
            "requestId",
            "tool",
            "valid",
            "witnessed"
        ],
        "{label}"
    );
    let attested = &record["hostAttested"];
    let ui: Vec<(String, String, String)> = (record["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["rule"].as_str().unwrap().starts_with("UI-"))
        .map(|d| {
            (
                d["rule"].to_string(),
                d["code"].to_string(),
                d["severity"].to_string(),
            )
        })
        .collect();
    let flag = |code: &str, severity: &str| {
        vec![(
            r#""UI-7""#.to_owned(),
            format!("\"{code}\""),
            format!("\"{severity}\""),
        )]
    };
    match value {
        None => assert_eq!((attested, ui), (&json!({}), vec![]), "{label}"),
        Some(Value::String(value)) if KNOWN.contains(&value.as_str()) => {
            assert_eq!(
                (attested, ui),
                (&json!({"initiator": value}), vec![]),
                "{label}"
            );
        }
        Some(Value::String(_)) => {
            assert_eq!(ui, flag("unknown-initiator", "warning"), "{label}");
            let recorded = attested["initiator"].as_str().unwrap();
            assert!(!recorded.contains(['\r', '\n', '\u{202e}']), "{label}");
            assert!(recorded.len() <= 64, "{label}");
            assert_eq!(attested.as_object().unwrap().len(), 1, "{label}");
        }
        Some(_) => assert_eq!(
            (attested, ui),
            (&json!({}), flag("invalid-type", "error")),
            "{label}"
        ),
    }
    // Never a witnessed fact, never the client's.
    assert_eq!(record["clientAsserted"], json!({}), "{label}");
    let witnessed = record["witnessed"].as_object().unwrap();
    assert!(
        (witnessed.keys())
            .all(|name| ["receivedAt", "principal", "sessionId"].contains(&name.as_str())),
        "{label}"
    );
}

fn accounts(outcome: &mcp_provenance::Outcome<'_>) -> Vec<Value> {
    (outcome.messages.iter())
        .map(|seen| serde_json::to_value(seen).unwrap())
        .collect()
}

#[test]
fn cell_3_the_filter_forwards_every_initiator_byte_for_byte_recorded_host_attested_only() {
    let tight =
        json!({"policy": {"userIntent": "drop", "unknownFields": "keep", "maxEnvelopeBytes": 64}});
    for (options, key) in [
        (json!({}), UI),
        (json!({"uiKeys": [VENDOR]}), VENDOR),
        (tight, UI),
    ] {
        let filter = Filter::from_value(&options).unwrap();
        for (label, text) in SPELLINGS {
            let body = call_with(&format!(
                r#""{key}" : {{"initiator" :  {text} , "theme":"dark"}},"#
            ));
            let context = FilterContext {
                received_at: Some("2026-01-01T00:00:00Z".into()),
                principal: Some("alice".into()),
                session_id: Some("s-1".into()),
                headers: None,
            };
            let outcome = filter.filter(body.as_bytes(), &context);
            let Verdict::Forward {
                body: forwarded, ..
            } = &outcome.verdict
            else {
                panic!("{key}: {label} was refused")
            };
            assert_eq!(forwarded, &body, "{key}: {label}");
            let [account] = &accounts(&outcome)[..] else {
                panic!("one account")
            };
            check_record(&account["record"], Some(text), &format!("{key}: {label}"));
            let witnessed = json!({"receivedAt": "2026-01-01T00:00:00Z", "principal": "alice", "sessionId": "s-1"});
            assert_eq!(account["record"]["witnessed"], witnessed);
            assert_eq!(account.get("changes"), Some(&json!([])));
        }
    }
}

#[test]
fn cell_4_audit_record_records_an_absent_initiator_as_unknown() {
    let absent = [
        "initiator absent",
        "an empty ui entry",
        "no ui entry",
        "no _meta",
    ];
    for key in [UI, VENDOR] {
        let context = AuditContext::from_value(
            &json!({"receivedAt": "2026-01-01T00:00:00Z", "policy": {"uiKey": key}}),
        )
        .unwrap();
        let mut messages: Vec<(String, Value)> = (claims(key).into_iter())
            .filter(|(label, _)| absent.contains(&label.as_str()))
            .map(|(label, meta)| (label, request("tools/call", meta.as_ref())))
            .collect();
        messages.push(("no params".into(), json!({"method": "tools/call"})));
        for (label, message) in messages {
            let record = serde_json::to_value(audit_record(&message, &context).unwrap()).unwrap();
            assert_eq!(
                (
                    &record["hostAttested"],
                    &record["diagnostics"],
                    &record["valid"]
                ),
                (&json!({}), &json!([]), &json!(true)),
                "{key}: {label}"
            );
            assert!(
                !record.to_string().contains("model"),
                "absence is never read as model"
            );
        }
    }
    // A value that is not a string is not recorded either: unknown, with its error.
    let call = request("tools/call", Some(&json!({UI: {"initiator": 42}})));
    let record =
        serde_json::to_value(audit_record(&call, &AuditContext::default()).unwrap()).unwrap();
    assert_eq!(record["hostAttested"], json!({}));
    assert_eq!(record["diagnostics"][0]["rule"], json!("UI-7"));
}

#[test]
fn cell_4_the_filter_records_an_absent_initiator_as_unknown() {
    let filter = Filter::from_value(&json!({"uiKeys": [VENDOR]})).unwrap();
    let metas = [
        String::new(),
        format!(r#""{UI}":{{}},"#),
        format!(r#""{UI}":{{"theme":"dark"}},"#),
        format!(r#""{VENDOR}":{{}},"#),
    ];
    for meta in metas {
        let body = call_with(&meta);
        let outcome = filter.filter(body.as_bytes(), &FilterContext::default());
        check_record(&accounts(&outcome)[0]["record"], None, &meta);
    }
}
