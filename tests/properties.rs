//! Properties over arbitrary JSON and arbitrary Unicode: sanitize is
//! idempotent, its output within every limit and free of AI-13 characters;
//! stamping changes nothing but `initiator`; no function panics.
// Native only: the wasm build is tested by make test-wasm and js-tests/.
#![cfg(not(target_arch = "wasm32"))]

use mcp_provenance::{
    AI_INVOCATION_KEY, AuditContext, FieldPolicy, Initiator, IntentPolicy, KeyOptions, LiftOptions,
    Policy, UI_KEY, ValidateOptions, attach_invocation, audit_record, clear_initiator,
    echo_turn_id, lift_legacy_arguments, sanitize, stamp_initiator, validate,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Every character AI-13 names, and a few that must survive.
const HOSTILE: &[char] = &[
    '\r', '\n', '\t', '\u{0B}', '\u{0C}', '\u{0}', '\u{1B}', '\u{7F}', '\u{80}', '\u{85}',
    '\u{9F}', '\u{61C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202E}', '\u{2028}', '\u{2029}',
    '\u{2066}', '\u{2069}', 'é', '€', '😀', '\u{301}', '~', '/', '"', '\\',
];

fn is_ai13(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' | '\u{61C}' | '\u{200E}' | '\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

fn text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        any::<char>(),
        prop::sample::select(HOSTILE),
        prop::char::range('a', 'z')
    ];
    prop::collection::vec(c, 0..80).prop_map(|chars| chars.into_iter().collect())
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A field that is mostly of the right shape, sometimes anything at all.
fn field(good: BoxedStrategy<Value>) -> impl Strategy<Value = Option<Value>> {
    prop::option::of(prop_oneof![4 => good, 1 => json()])
}

fn holder(member: &'static str) -> BoxedStrategy<Value> {
    (text(), prop::option::of((text(), json())))
        .prop_map(move |(text, extra)| {
            let mut object = Map::from_iter([(member.to_owned(), Value::from(text))]);
            if let Some((name, value)) = extra {
                object.insert(name, value);
            }
            Value::Object(object)
        })
        .boxed()
}

fn envelope() -> impl Strategy<Value = Value> {
    let intent = (prop::option::of(text()), prop::option::of(any::<bool>()))
        .prop_map(|(text, redacted)| {
            let mut object = Map::new();
            text.map(|t| object.insert("text".into(), t.into()));
            redacted.map(|r| object.insert("redacted".into(), r.into()));
            Value::Object(object)
        })
        .boxed();
    (
        field(holder("text")),
        field(holder("name")),
        field(intent),
        field(text().prop_map(Value::from).boxed()),
        prop::collection::btree_map(text(), json(), 0..3),
    )
        .prop_map(|(reason, model, intent, turn_id, unknown)| {
            let mut object: Map<String, Value> = unknown.into_iter().collect();
            for (name, value) in [
                ("invocationReason", reason),
                ("model", model),
                ("userIntent", intent),
                ("turnId", turn_id),
            ] {
                if let Some(value) = value {
                    object.insert(name.into(), value);
                }
            }
            Value::Object(object)
        })
}

fn request() -> impl Strategy<Value = Value> {
    (
        prop_oneof![4 => envelope(), 1 => json()],
        prop::option::of(json()),
        json(),
    )
        .prop_map(|(envelope, ui, arguments)| {
            let mut meta = Map::from_iter([
                (AI_INVOCATION_KEY.to_owned(), envelope),
                ("progressToken".into(), json!(7)),
            ]);
            if let Some(ui) = ui {
                meta.insert(UI_KEY.into(), ui);
            }
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "t", "arguments": arguments, "_meta": meta}})
        })
}

fn policy() -> impl Strategy<Value = Policy> {
    let keep_drop = || prop_oneof![Just(FieldPolicy::Keep), Just(FieldPolicy::Drop)];
    (
        (16u32..200, 16u32..200, 16u32..200, 16u32..200, 64u32..1500),
        prop_oneof![
            Just(IntentPolicy::Keep),
            Just(IntentPolicy::Redact),
            Just(IntentPolicy::Drop)
        ],
        keep_drop(),
        keep_drop(),
        keep_drop(),
    )
        .prop_map(
            |((reason, intent, model, turn, envelope), user_intent, m, r, unknown)| Policy {
                keys: KeyOptions::default(),
                max_reason_bytes: reason,
                max_intent_bytes: intent,
                max_model_bytes: model,
                max_turn_id_bytes: turn,
                max_envelope_bytes: envelope,
                user_intent,
                model: m,
                invocation_reason: r,
                unknown_fields: unknown,
                ..Policy::default()
            },
        )
}

fn envelope_of(message: &Value) -> Option<&Value> {
    message.pointer("/params/_meta")?.get(AI_INVOCATION_KEY)
}

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k);
            strings(v, out);
        }),
        _ => {}
    }
}

fn text_len(envelope: &Value, pointer: &str) -> usize {
    envelope
        .pointer(pointer)
        .and_then(Value::as_str)
        .map_or(0, str::len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn sanitize_is_idempotent(message in request(), policy in policy()) {
        let once = sanitize(message, &policy).unwrap();
        let twice = sanitize(once.message.clone(), &policy).unwrap();
        prop_assert_eq!(&twice.message, &once.message);
        prop_assert!(twice.changes.is_empty(), "second pass changed {:?}", twice.changes);
    }

    #[test]
    fn sanitized_envelope_is_within_limits_and_neutral(message in request(), policy in policy()) {
        let out = sanitize(message.clone(), &policy).unwrap();
        if let Some(envelope) = envelope_of(&out.message) {
            prop_assert!(serde_json::to_vec(envelope).unwrap().len() <= policy.max_envelope_bytes as usize);
            prop_assert!(text_len(envelope, "/invocationReason/text") <= policy.max_reason_bytes as usize);
            prop_assert!(text_len(envelope, "/userIntent/text") <= policy.max_intent_bytes as usize);
            prop_assert!(text_len(envelope, "/model/name") <= policy.max_model_bytes as usize);
            prop_assert!(text_len(envelope, "/turnId") <= policy.max_turn_id_bytes as usize);
            let mut found = Vec::new();
            strings(envelope, &mut found);
            for s in found {
                prop_assert!(!s.chars().any(is_ai13), "AI-13 character left in {:?}", s);
            }
        }
        // Nothing outside the envelope changes.
        let strip = |mut m: Value| { m["params"]["_meta"].as_object_mut().unwrap().remove(AI_INVOCATION_KEY); m };
        prop_assert_eq!(strip(out.message), strip(message));
    }

    #[test]
    fn stamping_changes_nothing_but_initiator(message in request(), pick in 0usize..4) {
        let initiator = Initiator::ALL[pick];
        let mut expected = message.clone();
        let meta = expected["params"]["_meta"].as_object_mut().unwrap();
        match meta.get_mut(UI_KEY) {
            Some(Value::Object(entry)) => { entry.insert("initiator".into(), initiator.as_str().into()); }
            _ => { meta.insert(UI_KEY.into(), json!({"initiator": initiator.as_str()})); }
        }
        let stamped = stamp_initiator(message, initiator, &KeyOptions::default()).unwrap();
        prop_assert_eq!(stamped, expected);
    }

    #[test]
    fn clearing_removes_only_initiator(message in request()) {
        let mut expected = message.clone();
        if let Some(Value::Object(entry)) = expected["params"]["_meta"].get_mut(UI_KEY) {
            entry.remove("initiator");
        }
        prop_assert_eq!(clear_initiator(message, &KeyOptions::default()).unwrap(), expected);
    }

    #[test]
    fn validate_warns_exactly_where_default_sanitize_changes_text(message in request()) {
        let report = validate(&message, &ValidateOptions::default());
        let changes = sanitize(message, &Policy::default()).unwrap().changes;
        let text_changes = changes.iter().filter(|c| c.rule.as_str() == "AI-13").count();
        let warnings = report.diagnostics.iter().filter(|d| d.code.as_str() == "control-character").count();
        prop_assert_eq!(text_changes, warnings);
    }

    #[test]
    fn nothing_panics_on_any_json(message in json(), other in json(), options in json()) {
        let keys = KeyOptions::default();
        let _ = validate(&message, &ValidateOptions { keys: keys.clone(), request: Some(&other) });
        let _ = sanitize(message.clone(), &Policy::default());
        let _ = audit_record(&message, &AuditContext::default());
        let _ = echo_turn_id(&other, message.clone(), &keys);
        let _ = attach_invocation(message.clone(), other.clone(), &keys);
        let _ = lift_legacy_arguments(message.clone(), &LiftOptions { remove: true, ..LiftOptions::default() });
        let _ = stamp_initiator(message.clone(), Initiator::App, &keys);
        let _ = clear_initiator(message, &keys);
        let _ = Policy::from_value(&options);
        let _ = AuditContext::from_value(&options);
    }

    #[test]
    fn nothing_panics_on_any_request(message in request(), policy in policy()) {
        let context = AuditContext { policy: Some(policy.clone()), ..AuditContext::default() };
        let record = audit_record(&message, &context).unwrap();
        let mut found = Vec::new();
        let record = serde_json::to_value(record).unwrap();
        strings(&record["clientAsserted"], &mut found);
        strings(&record["hostAttested"], &mut found);
        for s in found {
            prop_assert!(!s.chars().any(is_ai13), "AI-13 character in the record: {:?}", s);
        }
        let lifted = lift_legacy_arguments(message, &LiftOptions::default());
        prop_assert!(lifted.is_ok());
    }
}
