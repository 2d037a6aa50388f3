//! The one description of the boundary: the table of places and every
//! number and name of the wire format (ops, tags, flags, limits, areas, the
//! kinds of puts and answers, codes, rules...), as JSON, from the Rust
//! constants themselves. It is checked in as `binding/table.json`, which
//! the build reads to generate the package's reader and from which the JS
//! side takes every constant it uses (tools/build-pkg.mjs, pkg/dist/
//! table.mjs); a test fails when the file is stale (`make describe` writes
//! it anew). It is compiled for that test alone: the `.wasm` holds none of it.

use super::answer::{CommandKind, PutKind, asserted_texts, witnessed_texts};
use super::tape::{RECORD, UNFINISHED, WHAT, WHOLE};
use super::{BODY, ERROR, MALFORMED, NONE, Op, RECORDS, RETRY, STRINGS, VALUES, first_read};
use crate::diagnostics::{Action, Code, Rule, Severity};
use crate::json::{compact, write_string};
use crate::keys::{AI_INVOCATION_KEY, KeyOptions, UI_KEY};
use crate::policy::Policy;
use crate::schema::{ENVELOPE, FIELDS, Group, Key, MESSAGE, Node, Read};

// Bounds the JS side keeps as it reads (the core only describes them).

/// How deep JS reads a value whole before it stops (`tooDeep`).
const MAX_DEPTH: u32 = 128;
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
/// The longest member name JS reads, in UTF-16 code units (`longName`): a
/// name is compared and edited by its whole value, never by a cut, so one
/// longer is refused.
const MAX_NAME_CHARS: u32 = 65_536;

/// The most records a tape holds, header included: the room JS keeps for
/// them (a message has 44 at most; a call reads at most two, and an option
/// object and an envelope).
const MAX_RECORDS: usize = 128;

/// The description, as compact JSON.
fn description() -> String {
    let mut out = String::from("{");
    let ops: Vec<(String, u8)> = Op::ALL
        .iter()
        .map(|op| (format!("{op:?}"), first_read(*op)))
        .collect();
    object(
        &mut out,
        "ops",
        ops.iter().map(|(name, _)| (name.as_str(), "")),
        |out, at| {
            out.push_str(&at.to_string());
        },
    );
    object(
        &mut out,
        "firstRead",
        ops.iter().map(|(name, _)| (name.as_str(), "")),
        |out, at| {
            out.push_str(&ops.get(at).map_or(0, |(_, flags)| *flags).to_string());
        },
    );
    numbers(
        &mut out,
        "flags",
        &[("FIELDS", FIELDS.into()), ("WHOLE", WHOLE.into())],
    );
    numbers(
        &mut out,
        "groups",
        &[
            ("Legacy", Group::Legacy.bit().into()),
            ("Names", Group::Names.bit().into()),
            ("Response", Group::Response.bit().into()),
            ("Ui", Group::Ui.bit().into()),
            ("Bare", Group::Bare.bit().into()),
        ],
    );
    numbers(
        &mut out,
        "tags",
        &[
            ("ABSENT", compact::ABSENT.into()),
            ("NULL", compact::NULL.into()),
            ("FALSE", compact::FALSE.into()),
            ("TRUE", compact::TRUE.into()),
            ("NUMBER", compact::NUMBER.into()),
            ("NUMBER_TEXT", compact::NUMBER_TEXT.into()),
            ("STRING", compact::STRING.into()),
            ("ARRAY", compact::ARRAY.into()),
            ("OBJECT", compact::OBJECT.into()),
            ("ARRAY_WHOLE", compact::ARRAY_WHOLE.into()),
            ("OBJECT_WHOLE", compact::OBJECT_WHOLE.into()),
            ("UNREADABLE", compact::UNREADABLE.into()),
            ("CUT", compact::CUT.into()),
            ("LOSSY", compact::LOSSY.into()),
        ],
    );
    numbers(
        &mut out,
        "areas",
        &[
            ("records", RECORDS as i64),
            ("strings", STRINGS as i64),
            ("values", VALUES as i64),
            ("body", BODY as i64),
        ],
    );
    numbers(&mut out, "none", &[("field", NONE.into())]);
    list(
        &mut out,
        "puts",
        PutKind::ALL.iter().map(|kind| match kind {
            PutKind::Remove => "remove",
            PutKind::Text => "text",
            PutKind::Bool => "bool",
            PutKind::Object => "object",
            PutKind::Json => "json",
            PutKind::Copy => "copy",
        }),
    );
    list(
        &mut out,
        "commands",
        CommandKind::ALL.iter().map(|kind| match kind {
            CommandKind::Help => "help",
            CommandKind::Error => "error",
            CommandKind::Run => "run",
        }),
    );
    list(
        &mut out,
        "counts",
        crate::wire::Counts::default()
            .reported()
            .into_iter()
            .map(|(name, _)| name),
    );
    let asserted = crate::audit::ClientAsserted::default();
    let witnessed = crate::audit::Witnessed::default();
    out.push_str("\"record\":{");
    list(
        &mut out,
        "clientAsserted",
        asserted_texts(&asserted).into_iter().map(|(name, _)| name),
    );
    list(
        &mut out,
        "witnessed",
        witnessed_texts(&witnessed)
            .into_iter()
            .map(|(name, _)| name),
    );
    out.pop();
    out.push_str("},");
    numbers(
        &mut out,
        "status",
        &[
            ("ERROR", ERROR.into()),
            ("RETRY", RETRY.into()),
            ("MALFORMED", MALFORMED.into()),
        ],
    );
    numbers(
        &mut out,
        "limits",
        &[
            ("cut", super::cut(&Policy::default()).into()),
            ("unfinished", UNFINISHED.into()),
            ("record", RECORD as i64),
            ("records", MAX_RECORDS as i64),
            ("depth", MAX_DEPTH.into()),
            ("items", MAX_ITEMS.into()),
            ("values", MAX_VALUES.into()),
            ("valueBytes", MAX_VALUE_BYTES.into()),
            ("optionChars", MAX_OPTION_CHARS.into()),
            ("nameChars", MAX_NAME_CHARS.into()),
        ],
    );
    list(&mut out, "what", WHAT.iter().map(|(name, _)| *name));
    list(&mut out, "keyOptions", KeyOptions::OPTIONS.into_iter());
    out.push_str("\"keysIn\":{\"AuditRecord\":");
    write_string(&mut out, crate::audit::AuditContext::POLICY);
    out.push_str("},");
    list(
        &mut out,
        "rules",
        Rule::ALL.iter().map(|rule| rule.as_str()),
    );
    list(
        &mut out,
        "levels",
        Rule::ALL.iter().map(|rule| rule.level().as_str()),
    );
    list(
        &mut out,
        "codes",
        Code::ALL.iter().map(|code| code.as_str()),
    );
    list(
        &mut out,
        "severities",
        Severity::ALL.iter().map(|severity| severity.as_str()),
    );
    list(
        &mut out,
        "actions",
        Action::ALL.iter().map(|action| action.as_str()),
    );
    list(
        &mut out,
        "viewRequests",
        crate::initiator::VIEW_REQUESTS.iter().copied(),
    );
    out.push_str("\"keys\":{\"invocation\":");
    write_string(&mut out, AI_INVOCATION_KEY);
    out.push_str(",\"ui\":");
    write_string(&mut out, UI_KEY);
    out.push_str("},\"envelope\":[");
    for (index, field) in ENVELOPE.values().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_string(&mut out, field.name);
        out.push_str(",\"members\":[");
        for (at, member) in field.members.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            write_string(&mut out, member.name);
        }
        out.push_str("]}");
    }
    out.push_str("],\"message\":");
    node(&mut out, &MESSAGE);
    out.push('}');
    out
}

/// `"name":{"a":f(0),"b":f(1),…},`
fn object<'a>(
    out: &mut String,
    name: &str,
    keys: impl Iterator<Item = (&'a str, &'a str)>,
    mut value: impl FnMut(&mut String, usize),
) {
    write_string(out, name);
    out.push_str(":{");
    for (at, (key, _)) in keys.enumerate() {
        if at > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        value(out, at);
    }
    out.push_str("},");
}

fn numbers(out: &mut String, name: &str, entries: &[(&str, i64)]) {
    object(
        out,
        name,
        entries.iter().map(|(key, _)| (*key, "")),
        |out, at| {
            out.push_str(&entries.get(at).map_or(0, |(_, value)| *value).to_string());
        },
    );
}

fn list<'a>(out: &mut String, name: &str, items: impl Iterator<Item = &'a str>) {
    write_string(out, name);
    out.push_str(":[");
    for (at, item) in items.enumerate() {
        if at > 0 {
            out.push(',');
        }
        write_string(out, item);
    }
    out.push_str("],");
}

fn node(out: &mut String, node: &Node) {
    out.push_str(&format!("{{\"place\":{},\"key\":", node.place as u8));
    match node.key {
        Key::Root => out.push_str("null"),
        Key::Name(name) => write_string(out, name),
        Key::Field(field) => write_string(out, field.name()),
        Key::Invocation => out.push_str("{\"configured\":\"invocation\"}"),
        Key::Ui => out.push_str("{\"configured\":\"ui\"}"),
    }
    let read = match node.read {
        Read::Scalar => "scalar",
        Read::Object => "object",
        Read::Envelope => "envelope",
    };
    out.push_str(&format!(
        ",\"name\":\"{:?}\",\"read\":\"{read}\",\"group\":{},\"children\":[",
        node.place,
        node.group.bit()
    ));
    for (at, child) in node.children.iter().enumerate() {
        if at > 0 {
            out.push(',');
        }
        self::node(out, child);
    }
    out.push_str("]}");
}

#[cfg(test)]
mod tests {
    /// The description the build reads is the one the core gives; with
    /// `MCP_PROVENANCE_BLESS` set (`make describe`), it is written anew.
    #[test]
    fn the_checked_in_description_is_current() {
        use super::{CommandKind, PutKind};
        // The names are listed in the order of the bytes they stand for.
        assert!(
            PutKind::ALL
                .iter()
                .enumerate()
                .all(|(at, kind)| *kind as usize == at)
        );
        assert!(
            CommandKind::ALL
                .iter()
                .enumerate()
                .all(|(at, kind)| *kind as usize == at)
        );
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/binding/table.json");
        let value: serde_json::Value =
            serde_json::from_str(&super::description()).expect("the description is JSON");
        let described = serde_json::to_string_pretty(&value).expect("JSON") + "\n";
        if std::env::var_os("MCP_PROVENANCE_BLESS").is_some() {
            std::fs::write(path, &described).expect("binding/table.json written");
        }
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == described,
            "binding/table.json is not what the core describes: run `make describe`"
        );
    }
}
