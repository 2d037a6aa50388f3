//! A log line is one line: whatever whitespace a body puts between its
//! tokens and whatever line-breaking, control, bidi or invisible characters
//! it puts in its strings, each of an outcome's `lines` is one line, is
//! JSON, holds no such character raw, and carries the message as forwarded
//! (the same JSON).
#![cfg(not(target_arch = "wasm32"))]

use mcp_provenance::{Filter, FilterContext, Verdict};
use proptest::prelude::*;
use serde_json::Value;

/// Whether `c` would forge or disguise a log line standing raw in it:
/// AI-13's line breaks, controls and bidi controls, and TXT-1's invisible
/// characters (listed here from docs/rules.md, not taken from the core).
fn forging(c: char) -> bool {
    matches!(c,
        '\u{00}'..='\u{1F}' | '\u{7F}'..='\u{9F}' | '\u{061C}' | '\u{180E}' | '\u{200B}'
        | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
}

/// JSON's whitespace, as a body may put it between tokens.
fn space() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![" ", "\t", "\n", "\r", "\r\n"]),
        0..3,
    )
    .prop_map(|pieces| pieces.concat())
}

/// The body of a JSON string: plain text, escapes (of line breaks and
/// controls among them), and every character that forges a line, raw.
fn string() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a",
        "t-1",
        "é",
        "\\n",
        "\\r",
        "\\u0000",
        "\\u2028",
        "\\\"",
        "\u{7F}",
        "\u{85}",
        "\u{9B}",
        "\u{2028}",
        "\u{2029}",
        "\u{202E}",
        "\u{2066}",
        "\u{061C}",
        "\u{200B}",
        "\u{FEFF}",
        "\u{E0041}",
        "\u{180E}",
        "\u{200F}",
    ]);
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

/// A request whose tokens are spread out by `spaces` and whose strings are `texts`.
fn body(spaces: &[String], texts: &[String]) -> String {
    let template = [
        "{",
        "\"jsonrpc\"",
        ":",
        "\"2.0\"",
        ",",
        "\"id\"",
        ":",
        "\"$\"",
        ",",
        "\"method\"",
        ":",
        "\"tools/call\"",
        ",",
        "\"params\"",
        ":",
        "{",
        "\"name\"",
        ":",
        "\"$\"",
        ",",
        "\"arguments\"",
        ":",
        "{",
        "\"$\"",
        ":",
        "\"$\"",
        "}",
        ",",
        "\"_meta\"",
        ":",
        "{",
        "\"io.modelcontextprotocol/aiInvocation\"",
        ":",
        "{",
        "\"turnId\"",
        ":",
        "\"$\"",
        ",",
        "\"model\"",
        ":",
        "{",
        "\"name\"",
        ":",
        "\"$\"",
        "}",
        ",",
        "\"userIntent\"",
        ":",
        "{",
        "\"text\"",
        ":",
        "\"$\"",
        "}",
        ",",
        "\"x$\"",
        ":",
        "\"$\"",
        "}",
        ",",
        "\"io.modelcontextprotocol/ui\"",
        ":",
        "{",
        "\"initiator\"",
        ":",
        "\"$\"",
        "}",
        ",",
        "\"vscode.conversationId\"",
        ":",
        "\"$\"",
        ",",
        "\"y$\"",
        ":",
        "[",
        "\"$\"",
        "]",
        "}",
        "}",
        "}",
    ];
    let mut texts = texts.iter().cycle();
    let mut spaces = spaces.iter().cycle();
    let mut out = String::new();
    for token in template {
        out.push_str(spaces.next().map_or("", String::as_str));
        out.push_str(&token.replace('$', texts.next().map_or("", String::as_str)));
    }
    out
}

/// The options of the filters the lines are made by.
const FILTERS: [&str; 3] = [
    "null",
    r#"{"policy":{"userIntent":"redact"}}"#,
    r#"{"policy":{"unknownFields":"keep"},"liftLegacy":true}"#,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_line_is_one_line_of_json_with_nothing_forging_it(
        spaces in prop::collection::vec(space(), 1..32),
        texts in prop::collection::vec(string(), 1..16),
        batch in any::<bool>(),
    ) {
        let one = body(&spaces, &texts);
        let body = if batch { format!("[{one},\n\t{one}\r\n]") } else { one };
        for options in FILTERS {
            let filter = Filter::from_value(&serde_json::from_str(options).expect("JSON"))
                .expect("a filter");
            let outcome = filter.filter(body.as_bytes(), &FilterContext::default());
            let forwarded = match &outcome.verdict {
                Verdict::Forward { body, .. } => body.as_ref(),
                _ => "",
            };
            prop_assert_eq!(outcome.lines().len(), outcome.messages.len());
            for (line, seen) in outcome.lines().iter().zip(&outcome.messages) {
                prop_assert!(!line.chars().any(forging), "{}", line);
                let parsed: Value = serde_json::from_str(line).expect("a line is JSON");
                if let Some(at) = seen.forwarded.clone() {
                    let message: Value = serde_json::from_str(&forwarded[at]).expect("JSON");
                    prop_assert_eq!(&parsed["message"], &message);
                }
                prop_assert!(!seen.json().chars().any(forging));
            }
        }
    }
}
