//! The table and the boundary's vocabulary as JSON, for the JS side: the
//! build generates the package's reader from it (tools/build-pkg.mjs), so
//! that JS reads exactly the places the core names, and names every code,
//! rule and tag as the core does.

use super::answer::Answer;
use super::tape::{
    MAX_DEPTH, MAX_ITEMS, MAX_NAME_CHARS, MAX_OPTION_CHARS, MAX_RECORDS, MAX_VALUE_BYTES,
    MAX_VALUES, RECORD, UNFINISHED, WHAT, WHOLE,
};
use super::{ERROR, MALFORMED, Op, RETRY, first_read};
use crate::diagnostics::{Action, Code, Rule, Severity};
use crate::json::{compact, write_string};
use crate::keys::{AI_INVOCATION_KEY, KeyOptions, UI_KEY};
use crate::policy::Policy;
use crate::schema::{ENVELOPE, FIELDS, Group, Key, MESSAGE, Node, Read};

/// Writes the description into `answer`.
pub(super) fn write(answer: &mut Answer) {
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
    answer.text(&out);
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
