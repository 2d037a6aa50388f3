//! The one description of the boundary: the table of places and every
//! number and name of the wire format (ops, tags, flags, limits, areas, the
//! kinds of puts and answers, codes, rules...), as JSON, from the Rust
//! constants themselves. It is checked in as `binding/table.json`, which
//! the build reads to generate the package's reader and from which the JS
//! side takes every constant it uses (tools/build-pkg.mjs, pkg/dist/
//! table.mjs); a test fails when the file is stale (`make describe` writes
//! it anew). It is compiled for that test alone: the `.wasm` holds none of it.

use super::answer::KINDS;
use super::handle::{NEW, Reads};
use super::memory::{ERROR, MALFORMED, RECORDS, STRINGS, VALUES};
use super::tape::{Op, RECORD, UNFINISHED, WHOLE};
use super::{MAX_NAME_CHARS, NONE, WHAT};
use mcp_provenance::__bindings::json::compact;
use mcp_provenance::__bindings::schema::{ENVELOPE, FIELDS, Group, Key, MESSAGE, Node};
use mcp_provenance::{
    AI_INVOCATION_KEY, Action, Code, CorrelationKind, Rule, Severity, UI_KEY, VIEW_REQUESTS,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;

// Bounds the JS side keeps as it reads (the core only describes them).

/// The most items of one array JS reads (`tooLong`).
const MAX_ITEMS: u32 = 1_048_576;
/// The most values JS reads whole in one call, counting each item and
/// member (`tooMany`): shared references count each time they are met, so
/// a value that refers to itself by many paths cannot cost exponential time.
const MAX_VALUES: u32 = 1_048_576;
/// The most bytes of values read whole in one call (`tooLarge`).
const MAX_VALUE_BYTES: u32 = 64 << 20;
/// The longest string an option may be, in UTF-16 code units (`longOption`).
const MAX_OPTION_CHARS: u32 = 65_536;

/// The most records a tape holds, header included: the room JS keeps for
/// them (a message has 44 at most; a call reads at most two, and an option
/// object and an envelope).
const MAX_RECORDS: usize = 128;

/// The description, as JSON (its members in the order JSON objects keep:
/// by name).
fn description() -> Value {
    let ops = || Op::ALL.iter().map(|op| format!("{op:?}"));
    let groups: BTreeMap<_, u8> = [
        Group::Legacy,
        Group::Names,
        Group::Response,
        Group::Ui,
        Group::Bare,
    ]
    .map(|group| (format!("{group:?}"), group.bit()))
    .into_iter()
    .collect();
    let mut table = json!({
        "ops": ops().zip(0..).collect::<BTreeMap<_, u8>>(),
        "reads": Reads::ALL.iter().map(|reads| format!("{reads:?}")).zip(0..).collect::<BTreeMap<_, u8>>(),
        "flags": { "FIELDS": FIELDS, "WHOLE": WHOLE },
        "groups": groups,
        "tags": {
            "ABSENT": compact::ABSENT, "NULL": compact::NULL, "FALSE": compact::FALSE,
            "TRUE": compact::TRUE, "NUMBER": compact::NUMBER, "NUMBER_TEXT": compact::NUMBER_TEXT,
            "STRING": compact::STRING, "ARRAY": compact::ARRAY, "OBJECT": compact::OBJECT,
            "ARRAY_WHOLE": compact::ARRAY_WHOLE, "OBJECT_WHOLE": compact::OBJECT_WHOLE,
            "UNREADABLE": compact::UNREADABLE, "LOSSY": compact::LOSSY,
        },
        "areas": { "records": RECORDS, "strings": STRINGS, "values": VALUES },
        "none": { "field": NONE },
        "counts": mcp_provenance::Counts::default().reported().map(|(name, _)| name),
        "status": { "ERROR": ERROR, "MALFORMED": MALFORMED },
        "limits": {
            "unfinished": UNFINISHED,
            "newHandle": NEW,
            "record": RECORD,
            "records": MAX_RECORDS,
            "depth": mcp_provenance::__bindings::message::MAX_DEPTH,
            "items": MAX_ITEMS,
            "values": MAX_VALUES,
            "valueBytes": MAX_VALUE_BYTES,
            "optionChars": MAX_OPTION_CHARS,
            "nameChars": MAX_NAME_CHARS,
        },
        "what": WHAT.map(|(name, _)| name),
        "rules": strs(Rule::ALL, Rule::as_str),
        "levels": strs(Rule::ALL, |rule| rule.level().as_str()),
        "codes": strs(Code::ALL, Code::as_str),
        "severities": strs(Severity::ALL, Severity::as_str),
        "actions": strs(Action::ALL, Action::as_str),
        "correlation": { "kinds": strs(CorrelationKind::ALL, CorrelationKind::as_str) },
        "viewRequests": VIEW_REQUESTS,
        "keys": { "invocation": AI_INVOCATION_KEY, "ui": UI_KEY },
        "sessions": {
            "prefix": mcp_provenance::__bindings::wire::SESSION_KEY_PREFIX,
            "ttlSeconds": mcp_provenance::__bindings::wire::SESSION_TTL_SECONDS,
        },
        "envelope": ENVELOPE.values().map(|field| json!({
            "name": field.name,
            "members": field.members.iter().map(|member| member.name).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "message": node(&MESSAGE),
    });
    // What the bytes of each choice in an answer stand for (answer.rs `kinds!`).
    for (name, kinds) in KINDS {
        table[name] = kinds.iter().map(|kind| lower_first(kind)).collect();
    }
    table
}

/// `AsItCame` as JS names it: `asItCame`.
fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_ascii_lowercase().to_string() + chars.as_str()
    })
}

/// The names of a vocabulary's words, in its order.
fn strs<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> Vec<&'static str> {
    all.iter().copied().map(name).collect()
}

/// A place of the table and the places under it.
fn node(node: &Node) -> Value {
    let key = match node.key {
        Key::Root => Value::Null,
        Key::Name(name) => json!(name),
        Key::Field(field) => json!(field.name()),
        Key::Invocation => json!({ "configured": "invocation" }),
        Key::Ui => json!({ "configured": "ui" }),
        Key::Others => json!({ "others": true }),
    };
    json!({
        "place": node.place as u8,
        "key": key,
        "name": format!("{:?}", node.place),
        "read": format!("{:?}", node.read).to_lowercase(),
        "group": node.group.bit(),
        "children": node.children.iter().map(self::node).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The description the build reads is the one the core gives; with
    /// `MCP_PROVENANCE_BLESS` set (`make describe`), it is written anew.
    #[test]
    fn the_checked_in_description_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/table.json");
        let described = serde_json::to_string_pretty(&super::description()).expect("JSON") + "\n";
        if std::env::var_os("MCP_PROVENANCE_BLESS").is_some() {
            std::fs::write(path, &described).expect("binding/table.json written");
        }
        #[cfg(not(target_arch = "wasm32"))]
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        // Wasm reads no files: the wasm build's description against the
        // checked-in one, compiled in.
        #[cfg(target_arch = "wasm32")]
        let checked_in = include_str!("../table.json");
        assert!(
            checked_in == described,
            "binding/table.json is not what the core describes: run `make describe`"
        );
    }
}
