//! What the fuzz targets share: reading an input as a message, the
//! policies to try, and the properties every output must have, checked
//! against plain readings of the rules rather than the core's own code.

use mcp_provenance::{AI_INVOCATION_KEY, FieldPolicy, IntentPolicy, Policy};
use serde_json::Value;

/// The input as a JSON value, when it is JSON text.
pub fn message(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}

/// A policy chosen by the input's length: the default, one that keeps and
/// redacts, and one with the smallest limits there are.
pub fn policy(data: &[u8]) -> Policy {
    match data.len() % 3 {
        0 => Policy::default(),
        1 => Policy {
            user_intent: IntentPolicy::Redact,
            unknown_fields: FieldPolicy::Keep,
            ..Policy::default()
        },
        _ => Policy {
            max_reason_bytes: 16,
            max_intent_bytes: 16,
            max_model_bytes: 16,
            max_turn_id_bytes: 16,
            max_envelope_bytes: 64,
            unknown_fields: FieldPolicy::Keep,
            ..Policy::default()
        },
    }
}

/// Whether `c` is a character AI-13 neutralizes: C0 and C1 controls, DEL,
/// U+2028, U+2029 and the bidi controls.
pub fn forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' | '\u{61C}' | '\u{200E}' | '\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// Every string in `value`, member names included.
pub fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Object(members) => {
            for (name, member) in members {
                out.push(name.clone());
                strings(member, out);
            }
        }
        _ => {}
    }
}

/// The length of `value` as compact JSON the way `JSON.stringify` writes it,
/// which is how AI-14 sizes an envelope in every runtime: numbers as
/// ECMAScript writes them (`0`, not Rust's `0.0`; `100000000000000000000`,
/// not `1e20`), everything else as serde_json writes it.
pub fn js_json_len(value: &Value) -> usize {
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(float) if !number.is_i64() && !number.is_u64() => {
                ryu_js::Buffer::new().format(float).len()
            }
            _ => number.to_string().len(),
        },
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(js_json_len).sum::<usize>()
        }
        Value::Object(members) => {
            let inner: usize = members
                .iter()
                .map(|(name, member)| {
                    serde_json::to_string(name).map_or(0, |json| json.len())
                        + 1
                        + js_json_len(member)
                })
                .sum();
            2 + members.len().saturating_sub(1) + inner
        }
        other => serde_json::to_string(other).map_or(0, |json| json.len()),
    }
}

/// The envelope of a message, at the default key, when there is one.
pub fn envelope(message: &Value) -> Option<&Value> {
    message.get("params")?.get("_meta")?.get(AI_INVOCATION_KEY)
}
