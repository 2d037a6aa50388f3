//! Cell 5: the marker alone changes no decision of the filter (AI-10,
//! UI-6); the bodies, markers and comparison the tower layer's tests share.

use mcp_provenance::{AI_INVOCATION_KEY as KEY, Filter, FilterContext, UI_KEY as UI, Verdict};
use serde_json::{Value, json};

use super::{VENDOR, accounts, call_with};

const ENVELOPE: &str = r#""io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"my salary is 123456"}}"#;

pub(crate) fn call(id: u32, m: &str, rest: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"q","_meta":{{{m}{ENVELOPE}}}{rest}}}}}"#
    )
}

fn deep(id: u32, m: &str) -> String {
    let (open, close) = ("[".repeat(200), "]".repeat(200));
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{{m}"progressToken":1}},"arguments":{open}{close}}}}}"#
    )
}

/// A body whose every `_meta` begins with the marker it is given.
pub(crate) type Body = fn(&str) -> String;

/// The bodies, each with what the filter does with it bare: its status (or
/// `forward`), then each message's refusal (or `-`).
pub(crate) fn bodies() -> Vec<(&'static str, Body, &'static [&'static str])> {
    vec![
        (
            "a call with an envelope (its intent redacted)",
            |m| call(1, m, r#","arguments":{"n":1e400}"#),
            &["forward", "-"],
        ),
        (
            "a call whose envelope breaks its schema (repaired)",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"_meta":{{{m}"{KEY}":{{"turnId":7,"model":{{}},"extra":1}}}}}}}}"#
                )
            },
            &["forward", "-"],
        ),
        (
            "a call with legacy arguments (lifted)",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"arguments":{{"user_query":"q","invocation_reason":"r"}},"_meta":{{{m}"progressToken":1}}}}}}"#
                )
            },
            &["forward", "-"],
        ),
        (
            "a bare intent under a redacting policy (refused)",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"_meta":{{{m}"userIntent":{{"text":"secret"}}}}}}}}"#
                )
            },
            &["200", "bare-user-intent"],
        ),
        (
            "a duplicated turnId (refused)",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"_meta":{{{m}"{KEY}":{{"turnId":"a","turnId":"b"}}}}}}}}"#
                )
            },
            &["200", "duplicate-member"],
        ),
        (
            "a call nested too deep (refused)",
            |m| deep(6, m),
            &["200", "too-deep"],
        ),
        (
            "a batch with a refused message",
            |m| format!("[{}, {}]", call(7, m, ""), deep(8, m)),
            &["forward", "-", "too-deep"],
        ),
        (
            "a batch past maxBatch (refused whole)",
            |m| format!("[{}]", [9, 10, 11, 12].map(|id| call(id, m, "")).join(",")),
            &["413"],
        ),
        (
            "a notification",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"_meta":{{{m}"progressToken":1}},"progress":1}}}}"#
                )
            },
            &["forward", "-"],
        ),
        (
            "a response to the server",
            |m| format!(r#"{{"jsonrpc":"2.0","id":"s-1","result":{{"_meta":{{{m}"x":1}}}}}}"#),
            &["forward", "-"],
        ),
        (
            "an envelope past maxEnvelopeBytes",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"_meta":{{{m}"{KEY}":{{"turnId":"t","model":{{"name":"{}"}},"invocationReason":{{"text":"{}"}}}}}}}}}}"#,
                    "m".repeat(200),
                    "r".repeat(900)
                )
            },
            &["forward", "-"],
        ),
        (
            "not JSON (refused whole)",
            |m| {
                format!(
                    r#"{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"_meta":{{{m}"x":1}}}}"#
                )
            },
            &["400"],
        ),
    ]
}

pub(crate) fn options() -> Value {
    json!({"policy": {"userIntent": "redact", "maxEnvelopeBytes": 512}, "liftLegacy": true, "maxBatch": 3, "uiKeys": [VENDOR]})
}

/// The markers a body may carry, as `_meta` members (none first).
pub(crate) fn markers() -> Vec<String> {
    let mut all = vec![String::new()];
    for value in ["\"app\"", "\"model\"", "42", "null", r#"{"value":"app"}"#] {
        all.push(format!(r#""{UI}":{{"initiator":{value}}},"#));
    }
    all.push(format!(r#""{UI}":"app","#));
    all.push(format!(r#""{UI}":{{}},"#));
    all.push(format!(r#""{VENDOR}":{{"initiator":"app"}},"#));
    all
}

/// An account (as JSON) less what the initiator itself is: its host-attested
/// record, its UI-* diagnostics and the validity they decide; a clock, as
/// recorded or not.
pub(crate) fn apart(mut account: Value) -> Value {
    let ui = |d: &Value| {
        d["rule"]
            .as_str()
            .is_some_and(|rule| rule.starts_with("UI-"))
    };
    let object = account.as_object_mut().unwrap();
    object.remove("valid");
    if let Some(Value::Array(diagnostics)) = object.get_mut("diagnostics") {
        diagnostics.retain(|d| !ui(d));
    }
    if let Some(Value::Object(record)) = object.get_mut("record") {
        record.remove("hostAttested");
        record.remove("valid");
        if let Some(Value::Array(diagnostics)) = record.get_mut("diagnostics") {
            diagnostics.retain(|d| !ui(d));
        }
        if let Some(Value::Object(witnessed)) = record.get_mut("witnessed") {
            let at = witnessed.contains_key("receivedAt");
            witnessed.insert("receivedAt".into(), json!(at));
        }
    }
    account
}

/// A decision: what went on (each body the app read), and all else, as JSON.
pub(crate) type Decision = (Vec<String>, Value);

/// Asserts that `marked` (for the body whose every `_meta` begins with
/// `marker`) is `bare`'s: what went on holds the marker once per `_meta`, as
/// it came, and is otherwise the same.
pub(crate) fn assert_same(marked: Decision, bare: &Decision, marker: &str, label: &str) {
    assert_eq!(marked.0.len(), bare.0.len(), "{label}");
    for (text, plain) in marked.0.iter().zip(&bare.0) {
        let sites = plain.matches(r#""_meta":{"#).count();
        assert_eq!(
            text.matches(marker).count(),
            sites,
            "{label}: the marker goes on as it came"
        );
    }
    let sent: Vec<String> = marked
        .0
        .iter()
        .map(|text| text.replace(marker, ""))
        .collect();
    assert_eq!((&sent, &marked.1), (&bare.0, &bare.1), "{label}");
}

#[test]
fn cell_5_the_filter_decides_the_same_with_any_marker_or_none() {
    let filter = Filter::from_value(&options()).unwrap();
    let decide = |body: &str, content_type: &str| -> Decision {
        let context = FilterContext {
            principal: Some("alice".into()),
            session_id: Some("s-1".into()),
            headers: Some(vec![("content-type".into(), content_type.into())]),
            ..FilterContext::default()
        };
        let outcome = filter.filter(body.as_bytes(), &context);
        let accounts: Vec<Value> = accounts(&outcome).into_iter().map(apart).collect();
        match outcome.verdict {
            Verdict::Forward { body, replies } => (
                vec![body.into_owned()],
                json!({"replies": replies, "accounts": accounts}),
            ),
            Verdict::Reject { status, body } => (
                vec![],
                json!({"status": status, "reject": body, "accounts": accounts}),
            ),
            other => panic!("a verdict the matrix does not know: {other:?}"),
        }
    };
    let markers = markers();
    for (label, body, expected) in bodies() {
        let bare = decide(&body(""), "application/json");
        let status = bare
            .1
            .get("status")
            .map_or("forward".to_owned(), Value::to_string);
        let refused = (bare.1["accounts"].as_array().unwrap().iter()).map(|a| {
            a.get("refused")
                .and_then(Value::as_str)
                .unwrap_or("-")
                .to_owned()
        });
        assert_eq!(
            std::iter::once(status).chain(refused).collect::<Vec<_>>(),
            expected,
            "{label}"
        );
        for marker in &markers[1..] {
            assert_same(
                decide(&body(marker), "application/json"),
                &bare,
                marker,
                &format!("{label} with {marker}"),
            );
        }
    }
    let notification = bodies()[8].1;
    let typed = decide(&notification(""), "text/plain");
    assert_eq!(typed.1["status"], json!(415));
    for marker in &markers[1..] {
        assert_same(
            decide(&notification(marker), "text/plain"),
            &typed,
            marker,
            marker,
        );
    }
}

#[test]
fn cell_5_a_duplicated_initiator_is_refused_as_any_duplicated_member_whatever_its_values() {
    let filter = Filter::from_value(&json!({})).unwrap();
    let refusal = |meta: String| match filter
        .filter(call_with(&meta).as_bytes(), &FilterContext::default())
        .verdict
    {
        Verdict::Reject { status, body } => (status, body),
        other => panic!("{meta} went on: {other:?}"),
    };
    let duplicated = refusal(format!(r#""{KEY}":{{"turnId":"a","turnId":"a"}},"#));
    assert!(duplicated.1.contains("duplicate-member"));
    for (first, second) in [
        ("app", "app"),
        ("model", "app"),
        ("app", "model"),
        ("1", "null"),
    ] {
        let quoted = |v: &str| {
            if v.parse::<f64>().is_ok() || v == "null" {
                v.to_owned()
            } else {
                format!("\"{v}\"")
            }
        };
        let meta = format!(
            r#""{UI}":{{"initiator":{},"initiator":{}}},"#,
            quoted(first),
            quoted(second)
        );
        assert_eq!(refusal(meta), duplicated, "{first}, {second}");
    }
}
