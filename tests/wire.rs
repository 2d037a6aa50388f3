//! The wire filter against the object API, on every request of the
//! conformance vectors, and against arbitrary bytes: what it forwards is the
//! input byte for byte unless a rule changed it, what it changed is what
//! `sanitize` changes, what it records is what `audit_record` records, and
//! nothing makes it panic or forward what is not JSON.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::Path;

use mcp_provenance::{
    AuditContext, Capture, Check, Counts, Filter, FilterContext, FilterOptions, MessageKind,
    Policy, Printed, Severity, Verdict, audit_record, sanitize, validate,
};
use proptest::prelude::*;
use serde_json::Value;

/// Every message a vector gives as input (the requests and responses the
/// object API is tested on), but for those holding a lone surrogate.
fn inputs() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).expect("conformance/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|ext| ext != "json") || path.ends_with("utf16.json") {
            continue;
        }
        let vectors: Vec<Value> =
            serde_json::from_str(&fs::read_to_string(&path).expect("readable")).expect("JSON");
        found.extend(
            vectors
                .into_iter()
                .filter(|vector| vector["op"] != "filter")
                .map(|vector| vector["input"].clone())
                .filter(|input| input.get("method").is_some_and(Value::is_string)),
        );
    }
    assert!(found.len() > 150, "{} requests", found.len());
    found
}

fn forwarded<'a>(outcome: &'a mcp_provenance::Outcome) -> &'a str {
    match &outcome.verdict {
        Verdict::Forward { body, .. } => body,
        other => panic!("refused: {other:?}"),
    }
}

/// A request's text, compact and spread out with spacing of its own.
fn texts(request: &Value) -> [String; 2] {
    let compact = serde_json::to_string(request).expect("serializes");
    let spread = serde_json::to_string_pretty(request)
        .expect("serializes")
        .replace(": ", " :  ");
    [compact, spread]
}

#[test]
fn every_request_goes_on_as_it_came_or_as_sanitize_repairs_it() {
    let filter = Filter::new(FilterOptions::default()).expect("defaults");
    let (mut same, mut repaired) = (0, 0);
    for request in inputs() {
        let report = validate(&request, &Default::default());
        let envelope_error = report.diagnostics.iter().any(|d| {
            d.severity == Severity::Error
                && d.path
                    .starts_with("/params/_meta/io.modelcontextprotocol~1aiInvocation")
        });
        for text in texts(&request) {
            let outcome = filter.filter(text.as_bytes(), &FilterContext::default());
            let seen = &outcome.messages[0];
            if seen.refused.is_some() {
                // Only what the wire refuses and the object API takes: ids it cannot answer.
                assert!(
                    matches!(
                        request.get("id"),
                        Some(Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_))
                    ),
                    "{text}: {seen:?}"
                );
                continue;
            }
            let body = forwarded(&outcome);
            if envelope_error {
                let expected = sanitize(request.clone(), &Policy::default()).expect("a request");
                let got: Value = serde_json::from_str(body).expect("forwarded JSON");
                assert_eq!(got, expected.message, "{text}");
                assert_eq!(seen.changes, expected.changes, "{text}");
                repaired += 1;
            } else {
                assert_eq!(body, text, "goes on byte for byte");
                assert!(seen.changes.is_empty());
                same += 1;
            }
        }
    }
    assert!(
        same > 100 && repaired > 20,
        "{same} the same, {repaired} repaired"
    );
}

#[test]
fn under_a_policy_the_wire_and_sanitize_agree() {
    for options in [
        serde_json::json!({"userIntent": "redact"}),
        serde_json::json!({"unknownFields": "keep", "maxIntentBytes": 16, "maxEnvelopeBytes": 200}),
        serde_json::json!({"model": "drop", "userIntent": "drop"}),
    ] {
        let policy = Policy::from_value(&options).expect("a policy");
        let filter = Filter::new(FilterOptions {
            policy: Some(policy.clone()),
            ..FilterOptions::default()
        })
        .expect("a filter");
        for request in inputs() {
            for text in texts(&request) {
                let outcome = filter.filter(text.as_bytes(), &FilterContext::default());
                if outcome.messages[0].refused.is_some() {
                    continue;
                }
                let expected = sanitize(request.clone(), &policy).expect("a request");
                let got: Value = serde_json::from_str(forwarded(&outcome)).expect("JSON");
                assert_eq!(got, expected.message, "{options}: {text}");
                assert_eq!(outcome.messages[0].changes, expected.changes, "{text}");
            }
        }
    }
}

#[test]
fn the_record_is_audit_records() {
    let filter = Filter::new(FilterOptions::default()).expect("defaults");
    let context = FilterContext {
        session_id: Some("s-1".into()),
        ..FilterContext::default()
    };
    for request in inputs() {
        let text = serde_json::to_string(&request).expect("serializes");
        let outcome = filter.filter(text.as_bytes(), &context);
        let seen = &outcome.messages[0];
        let Some(record) = &seen.record else {
            assert!(seen.refused.is_some());
            continue;
        };
        let expected = audit_record(
            &request,
            &AuditContext {
                session_id: Some("s-1".into()),
                ..AuditContext::default()
            },
        )
        .expect("a request");
        assert_eq!(record, &expected, "{text}");
        let kind = if request.get("id").is_some() {
            MessageKind::Request
        } else {
            MessageKind::Notification
        };
        assert_eq!(seen.kind, kind);
    }
}

#[test]
fn a_batch_keeps_what_it_does_not_refuse_byte_for_byte() {
    let filter = Filter::new(FilterOptions::default()).expect("defaults");
    let good = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    for (body, expected) in [
        (format!("[7, {good}]"), format!("[{good}]")),
        (format!("[{good} , 7 ]"), format!("[{good} ]")),
        (format!("[ 7,\n 8, {good},9]"), format!("[ {good}]")),
        (format!("[{good},7,{good}]"), format!("[{good},{good}]")),
    ] {
        let outcome = filter.filter(body.as_bytes(), &FilterContext::default());
        assert_eq!(forwarded(&outcome), expected, "{body}");
        for seen in outcome
            .messages
            .iter()
            .filter(|seen| seen.refused.is_none())
        {
            let at = seen.forwarded.clone().expect("where it stands");
            assert_eq!(&expected[at], good);
        }
    }
}

/// Whether serde_json takes `text` as JSON once the escaped lone surrogates
/// and the numbers past f64 it refuses (the grammar allows both) stand in
/// for others of their kind.
fn judged_json(text: &str) -> bool {
    let judged = text.replace("\\ud800", "\\u00e8").replace("1e400", "1e4");
    serde_json::from_str::<serde::de::IgnoredAny>(&judged).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes: no panic; what goes on is JSON, and is the input unless
    /// a message was refused or changed.
    #[test]
    fn any_bytes_are_refused_or_forwarded_as_json(body in prop::collection::vec(any::<u8>(), 0..200)) {
        let filter = Filter::new(FilterOptions { max_depth: 8, ..FilterOptions::default() }).expect("a filter");
        let outcome = filter.filter(&body, &FilterContext::default());
        if let Verdict::Forward { body: forward, .. } = &outcome.verdict {
            prop_assert!(std::str::from_utf8(&body).is_ok());
            prop_assert!(judged_json(forward));
            let untouched = outcome.messages.iter().all(|seen| seen.refused.is_none() && seen.changes.is_empty());
            if untouched {
                prop_assert_eq!(forward.as_bytes(), &body[..]);
            }
        }
    }

    /// JSON-like text built from the pieces that matter: the filter agrees
    /// with serde_json on what is JSON, never panics, and forwards JSON.
    #[test]
    fn json_like_text_is_judged_as_serde_json_judges_it(pieces in prop::collection::vec(prop::sample::select(vec![
        "{", "}", "[", "]", ",", ":", " ", "\"id\"", "\"method\"", "\"params\"", "\"_meta\"",
        "\"io.modelcontextprotocol/aiInvocation\"", "\"userIntent\"", "\"text\"", "\"a\\nb\"", "\"\\ud800\"",
        "1", "-0.5e3", "1e400", "01", "true", "null", "\"x\"", "\"turnId\"", "\"\\u00e9\"",
    ]), 0..40)) {
        let text: String = pieces.concat();
        let filter = Filter::new(FilterOptions { policy: Some(Policy::default()), ..FilterOptions::default() }).expect("a filter");
        let outcome = filter.filter(text.as_bytes(), &FilterContext::default());
        let json = judged_json(&text);
        let refused_whole = matches!(&outcome.verdict, Verdict::Reject { status: 400, .. }) && outcome.messages.is_empty();
        let empty_batch = text.trim().starts_with('[') && serde_json::from_str::<Vec<Value>>(&text).is_ok_and(|v| v.is_empty());
        prop_assert_eq!(refused_whole, !json || empty_batch, "{}", text);
        if let Verdict::Forward { body, .. } = &outcome.verdict {
            prop_assert!(judged_json(body));
        }
    }
}

proptest! {
    /// JSON-like text as a call's `arguments`, which the filter checks and
    /// skips without reading: it agrees with serde_json on what is JSON,
    /// at every place of strings, escapes, numbers and literals.
    #[test]
    fn skipped_arguments_are_judged_as_serde_json_judges_them(pieces in prop::collection::vec(prop::sample::select(vec![
        "{", "}", "[", "]", ",", ":", " ", "\n", "\"id\"", "\"x\"", "\"\"", "\"abcdefghijklmnopq\"",
        "\"a\\nb\"", "\"\\\"\"", "\"\\\\\"", "\"\\u00e9\"", "\"\\u12g4\"", "\"\\x\"", "\"\u{1}\"", "\"\u{7f}é\"",
        "\"", "\\", "1", "-0.5e3", "1e+4", "01", "-", "1.", "1e", "0x1", "2.5E-3", "true", "tru", "false", "null", "nul",
    ]), 0..48)) {
        let text: String = pieces.concat();
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{text}}}}}"#);
        let filter = Filter::new(FilterOptions::default()).expect("a filter");
        let outcome = filter.filter(body.as_bytes(), &FilterContext::default());
        let refused_whole = matches!(&outcome.verdict, Verdict::Reject { status: 400, .. }) && outcome.messages.is_empty();
        prop_assert_eq!(refused_whole, !judged_json(&body), "{}", text);
    }
}

/// A capture of the vectors' messages and lines that are not plain
/// (blank, CRLF, not JSON, a batch, no line feed at the end).
fn capture() -> Vec<u8> {
    let mut capture: Vec<u8> = inputs()
        .iter()
        .flat_map(|input| {
            [
                serde_json::to_vec(input).expect("serializes"),
                b"\n".to_vec(),
            ]
        })
        .flatten()
        .collect();
    capture.extend_from_slice(
        b"\n  \nnot json\r\n[{\"id\":1,\"method\":\"ping\"},7]\r\n{\"id\":2,\"method\":\"ping\"}",
    );
    capture
}

/// `check` on `capture` handed over in the pieces that `cuts` (byte
/// offsets, in order) cut it into.
fn checked(check: &Check, capture: &[u8], cuts: &[usize]) -> (Counts, Printed, u8) {
    let mut reading = Capture::new(check.clone());
    let mut printed = Printed::default();
    let mut at = 0;
    for cut in cuts.iter().copied().chain([capture.len()]) {
        let cut = cut.clamp(at, capture.len());
        reading.read(&capture[at..cut], &mut printed);
        at = cut;
    }
    reading.end(&mut printed);
    printed.out.push_str(&reading.summary());
    (*reading.counts(), printed, reading.exit_code())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `check` in pieces cut anywhere prints and counts what it does on the
    /// capture whole and line by line, in text and in JSON, sanitizing; and
    /// so it does with a line bound that some lines are over, whichever
    /// piece they start and end in.
    #[test]
    fn check_in_pieces_is_check_whole(mut cuts in prop::collection::vec(0usize..40_000, 0..12), json in any::<bool>(), bound in prop::option::of(100usize..400)) {
        let capture = capture();
        let filter = Filter::new(FilterOptions { policy: Some(Policy::default()), ..FilterOptions::default() }).expect("a filter");
        let mut check = Check { json, sanitize: true, ..Check::new(filter) };
        if let Some(bound) = bound {
            check.max_line = bound;
        }
        cuts.sort_unstable();
        let whole = checked(&check, &capture, &[]);
        let line_by_line: Vec<usize> = (0..capture.len()).filter(|at| capture[*at] == b'\n').map(|at| at + 1).collect();
        let byte_by_byte: Vec<usize> = (1..capture.len()).step_by(97).collect();
        prop_assert_eq!(&checked(&check, &capture, &cuts), &whole);
        prop_assert_eq!(&checked(&check, &capture, &line_by_line), &whole);
        prop_assert_eq!(&checked(&check, &capture, &byte_by_byte), &whole);
        let lines = capture.split(|byte| *byte == b'\n').count() as u64;
        prop_assert_eq!(whole.0.lines, lines);
        prop_assert_eq!(whole.1.sanitized.matches('\n').count() as u64, lines);
        let over: u64 = capture.split(|byte| *byte == b'\n').filter(|line| line.len() > check.max_line).count() as u64;
        prop_assert_eq!(whole.0.over_limit, over);
        let marker = if json { r#""code":"over-limit","severity":"error","rule":"WIRE-4""# } else { "error WIRE-4 over-limit" };
        prop_assert_eq!(whole.1.out.matches(marker).count() as u64, over);
        prop_assert!(whole.0.unparseable <= 1);
    }
}

#[test]
fn a_line_is_the_account_as_serde_writes_it_with_the_message_first() {
    let filters = [
        Filter::new(FilterOptions::default()).expect("defaults"),
        Filter::from_value(&serde_json::json!({"policy": {"userIntent": "redact"}, "invocationKeys": ["com.example/ai"]}))
            .expect("a filter"),
    ];
    let context = FilterContext {
        received_at: Some("2026-12-01T00:00:00Z".into()),
        principal: Some("alice\n".into()),
        session_id: Some("s-1".into()),
        ..FilterContext::default()
    };
    let mut bodies: Vec<String> = inputs()
        .iter()
        .map(|request| serde_json::to_string(request).expect("serializes"))
        .collect();
    bodies.push(r#"[7, {"id":"r","result":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"x":1}}}}, {"id":1,"method":"m","method":"m"}]"#.into());
    // Correlation ids, one of them in a member, and one member of the list the line leaves out.
    bodies.push(r#"{"id":2,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1"},"vscode.conversationId":"c
1","x-codex-turn-metadata":{"turn_id":"t-2"},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}"#.into());
    for filter in &filters {
        for body in &bodies {
            let outcome = filter.filter(body.as_bytes(), &context);
            let forwarded = match &outcome.verdict {
                Verdict::Forward { body, .. } => body.as_ref(),
                _ => "",
            };
            for (seen, line) in outcome.messages.iter().zip(outcome.lines()) {
                let mut expected: Value = serde_json::to_value(seen).expect("serializes");
                if let Some(at) = seen.forwarded.clone() {
                    let message: Value = serde_json::from_str(&forwarded[at]).expect("JSON");
                    let mut with = serde_json::Map::new();
                    with.insert("message".into(), message);
                    with.extend(expected.as_object().expect("an object").clone());
                    expected = Value::Object(with);
                }
                let got: Value = serde_json::from_str(&line).expect("a JSON line");
                assert_eq!(got, expected, "{body}");
                assert!(line.starts_with(if seen.forwarded.is_some() {
                    "{\"message\":"
                } else {
                    "{\""
                }));
                let compact = serde_json::to_string(seen).expect("serializes");
                assert!(
                    line.ends_with(compact.strip_prefix('{').expect("an object")),
                    "{line}\n{compact}"
                );
            }
        }
    }
}

#[test]
fn a_policy_with_keys_of_its_own_is_refused_not_overridden() {
    let policy = Policy {
        keys: mcp_provenance::KeyOptions {
            invocation_key: Some("com.example/ai".into()),
            ui_key: None,
        },
        ..Policy::default()
    };
    let error = Filter::new(FilterOptions {
        policy: Some(policy),
        ..FilterOptions::default()
    })
    .unwrap_err();
    assert_eq!(error.code(), mcp_provenance::Code::UnknownOption);
    assert_eq!(
        error.to_string(),
        "a filter's policy holds no keys: the filter's keys are `invocation_keys` and `ui_keys`"
    );
}

#[test]
fn arguments_are_read_only_where_legacy_arguments_are_lifted() {
    let body = br#"{"id":1,"method":"tools/call","params":{"arguments":{"user_query":"a","user_query":"b"}}}"#;
    let plain = Filter::new(FilterOptions::default()).expect("defaults");
    let outcome = plain.filter(body, &FilterContext::default());
    assert_eq!(forwarded(&outcome).as_bytes(), body);
    let lifting = Filter::new(FilterOptions {
        lift_legacy: true,
        ..FilterOptions::default()
    })
    .expect("a filter");
    let outcome = lifting.filter(body, &FilterContext::default());
    assert_eq!(
        outcome.messages[0].refused,
        Some(mcp_provenance::Code::DuplicateMember)
    );
}

#[test]
fn a_response_lists_at_most_64_changes_then_how_many_more() {
    let members: Vec<String> = (0..200).map(|i| format!("\"u{i}\":{i}")).collect();
    let body = format!(
        r#"{{"id":"s","result":{{"_meta":{{"io.modelcontextprotocol/aiInvocation":{{"turnId":"t",{}}}}}}}}}"#,
        members.join(",")
    );
    let filter = Filter::from_value(&serde_json::json!({"policy": {"userIntent": "redact"}}))
        .expect("a filter");
    let outcome = filter.filter(body.as_bytes(), &FilterContext::default());
    let changes = &outcome.messages[0].changes;
    assert_eq!(changes.len(), 65);
    assert_eq!(changes[64].action.as_str(), "omitted");
    let got: Value = serde_json::from_str(forwarded(&outcome)).expect("JSON");
    assert_eq!(
        got["result"]["_meta"]["io.modelcontextprotocol/aiInvocation"],
        serde_json::json!({"turnId": "t"})
    );
}
