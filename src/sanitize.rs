//! Making an envelope safe to persist and forward (AI-8, AI-12..AI-15).

use std::io;

use serde::Serialize;
use serde_json::Value;

use crate::diagnostics::{Action, Change, Code, Rule};
use crate::error::{Error, type_name};
use crate::invocation::{FIELDS, field_names, unknown_members};
use crate::message::{self, Object, PARAMS_META};
use crate::pointer::join;
use crate::policy::{FieldPolicy, IntentPolicy, Policy};
use crate::text;

/// How deep a kept unknown field may nest before its deeper part is dropped.
const MAX_UNKNOWN_DEPTH: usize = 16;

/// What [`sanitize`] returns: the message made safe, and every change made.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Policy};
/// use serde_json::json;
///
/// let request = json!({"method": "ping"});
/// let out = sanitize(request.clone(), &Policy::default())?;
/// assert_eq!(out.message, request);
/// assert!(out.changes.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sanitized {
    /// The message, with its envelope made safe.
    pub message: Value,
    /// What was changed, in the order of the envelope.
    pub changes: Vec<Change>,
}

/// Makes a message's invocation envelope safe to persist or forward under
/// `policy`; a clean, well-formed envelope passes unchanged (AI-12).
///
/// Malformed parts are removed, not guessed at; strings are neutralized
/// (AI-13) and cut to their limits (AI-14); `userIntent.redacted` becomes true
/// when its text was touched (AI-15); unknown fields are dropped or kept by
/// policy (AI-8); an envelope over `max_envelope_bytes` loses unknown fields,
/// then `userIntent.text`, `invocationReason`, `model` and `userIntent` until
/// it fits, and is dropped whole when `turnId` alone does not fit. Nothing
/// outside the envelope is touched, the `ui` entry included (UI-8); a message
/// that is not a request is returned as it is.
///
/// # Errors
///
/// `not-a-message` (TypeError) when `message` is not an object; a KEY-3 code,
/// `invalid-limit` or `invalid-option` (RangeError) for a bad policy.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Policy};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"name": "q", "_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"userIntent": {"text": "a\r\nFAKE LOG LINE"}}}}});
/// let out = sanitize(request, &Policy::default())?;
/// assert_eq!(
///     out.message["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"]["userIntent"],
///     json!({"text": "a  FAKE LOG LINE", "redacted": true})
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sanitize(message: Value, policy: &Policy) -> Result<Sanitized, Error> {
    policy.check()?;
    let Value::Object(mut map) = message else {
        return Err(Error::new(
            Code::NotAMessage,
            format!(
                "expected a JSON-RPC message object, not {}",
                type_name(&message)
            ),
        ));
    };
    let mut changes = Vec::new();
    let key = policy.keys.invocation_key();
    if message::is_request(&map) {
        if let Some(meta) = message::existing_meta_mut(&mut map) {
            if let Some(envelope) = meta.get(key) {
                let (clean, found) = sanitize_envelope(envelope, policy, &join(PARAMS_META, key));
                if !found.is_empty() {
                    match clean {
                        Some(clean) => meta.insert(key.to_owned(), clean),
                        None => meta.remove(key),
                    };
                }
                changes = found;
            }
        }
    }
    Ok(Sanitized {
        message: Value::Object(map),
        changes,
    })
}

/// The envelope made safe (`None`: dropped whole) and the changes made, for
/// an envelope at pointer `path`.
pub(crate) fn sanitize_envelope(
    envelope: &Value,
    policy: &Policy,
    path: &str,
) -> (Option<Value>, Vec<Change>) {
    let mut sanitizer = Sanitizer {
        policy,
        changes: Vec::new(),
    };
    let clean = sanitizer.envelope(envelope, path).map(Value::Object);
    (clean, sanitizer.changes)
}

struct Sanitizer<'a> {
    policy: &'a Policy,
    changes: Vec<Change>,
}

impl Sanitizer<'_> {
    fn change(&mut self, action: Action, path: &str, rule: Rule) {
        self.changes.push(Change {
            action,
            path: path.to_owned(),
            rule,
        });
    }

    /// The text neutralized (AI-13) and cut to `limit` bytes (AI-14).
    fn text(&mut self, text: &str, limit: u32, path: &str) -> String {
        let clean = text::clean(text, limit as usize);
        if clean.neutralized {
            self.change(Action::Neutralized, path, Rule::Ai13);
        }
        if clean.truncated {
            self.change(Action::Truncated, path, Rule::Ai14);
        }
        clean.text
    }

    fn envelope(&mut self, envelope: &Value, path: &str) -> Option<Object> {
        let Value::Object(envelope) = envelope else {
            self.change(Action::Dropped, path, Rule::Ai2);
            return None;
        };
        let policy = self.policy;
        let mut out = Object::new();
        let mut put = |name: &str, value: Option<Value>| {
            if let Some(value) = value {
                out.insert(name.to_owned(), value);
            }
        };
        if let Some(reason) = envelope.get("invocationReason") {
            let path = join(path, "invocationReason");
            put(
                "invocationReason",
                self.required_text(
                    reason,
                    "text",
                    policy.invocation_reason,
                    policy.max_reason_bytes,
                    Rule::Ai3,
                    &path,
                ),
            );
        }
        if let Some(model) = envelope.get("model") {
            let path = join(path, "model");
            put(
                "model",
                self.required_text(
                    model,
                    "name",
                    policy.model,
                    policy.max_model_bytes,
                    Rule::Ai4,
                    &path,
                ),
            );
        }
        if let Some(intent) = envelope.get("userIntent") {
            put(
                "userIntent",
                self.user_intent(intent, &join(path, "userIntent")),
            );
        }
        match envelope.get("turnId") {
            Some(Value::String(turn_id)) => {
                let clean = self.text(turn_id, policy.max_turn_id_bytes, &join(path, "turnId"));
                put("turnId", Some(Value::String(clean)));
            }
            Some(_) => self.change(Action::Dropped, &join(path, "turnId"), Rule::Ai7),
            None => {}
        }
        let names: Vec<&str> = field_names().collect();
        self.unknown(envelope, &names, &mut out, path);
        self.fit(out, path)
    }

    /// `invocationReason` or `model`: dropped whole by policy, or when it is
    /// not an object or its required string `member` is missing.
    fn required_text(
        &mut self,
        value: &Value,
        member: &str,
        policy: FieldPolicy,
        limit: u32,
        rule: Rule,
        path: &str,
    ) -> Option<Value> {
        if policy == FieldPolicy::Drop {
            self.change(Action::Dropped, path, Rule::Ai12);
            return None;
        }
        let Some(object) = value.as_object() else {
            self.change(Action::Dropped, path, rule);
            return None;
        };
        let Some(Value::String(text)) = object.get(member) else {
            self.change(Action::Dropped, path, rule);
            return None;
        };
        let mut out = Object::new();
        let clean = self.text(text, limit, &join(path, member));
        out.insert(member.to_owned(), Value::String(clean));
        self.unknown(object, &[member], &mut out, path);
        Some(Value::Object(out))
    }

    fn user_intent(&mut self, value: &Value, path: &str) -> Option<Value> {
        let policy = self.policy.user_intent;
        if policy == IntentPolicy::Drop {
            self.change(Action::Dropped, path, Rule::Ai12);
            return None;
        }
        let Some(intent) = value.as_object() else {
            self.change(Action::Dropped, path, Rule::Ai5);
            return None;
        };
        let mut out = Object::new();
        let text_path = join(path, "text");
        let mut text_touched = false;
        match intent.get("text") {
            None => {}
            Some(Value::String(_)) if policy == IntentPolicy::Redact => {
                self.change(Action::Redacted, &text_path, Rule::Ai15);
                text_touched = true;
            }
            Some(Value::String(text)) => {
                let clean = self.text(text, self.policy.max_intent_bytes, &text_path);
                text_touched = clean != *text;
                out.insert("text".to_owned(), Value::String(clean));
            }
            Some(_) => {
                self.change(Action::Dropped, &text_path, Rule::Ai5);
                text_touched = true;
            }
        }
        match intent.get("redacted") {
            Some(Value::Bool(redacted)) => {
                out.insert("redacted".to_owned(), Value::Bool(*redacted));
            }
            Some(_) => self.change(Action::Dropped, &join(path, "redacted"), Rule::Ai5),
            None => {}
        }
        if text_touched {
            out.insert("redacted".to_owned(), Value::Bool(true));
        }
        self.unknown(intent, &["text", "redacted"], &mut out, path);
        Some(Value::Object(out))
    }

    /// Members of `object` outside `known`: dropped, or kept made safe (AI-8).
    fn unknown(&mut self, object: &Object, known: &[&str], out: &mut Object, path: &str) {
        for (name, value) in unknown_members(object, known) {
            let path = join(path, name);
            if self.policy.unknown_fields == FieldPolicy::Drop {
                self.change(Action::Dropped, &path, Rule::Ai8);
            } else if let Some(value) = self.member(name, value, &path, MAX_UNKNOWN_DEPTH) {
                out.insert(name.clone(), value);
            }
        }
    }

    /// A kept unknown member: dropped when its name would need changing, its
    /// value made safe otherwise.
    fn member(&mut self, name: &str, value: &Value, path: &str, depth: usize) -> Option<Value> {
        if text::has_forbidden(name) {
            self.change(Action::Dropped, path, Rule::Ai13);
            return None;
        }
        if name.len() > self.policy.max_reason_bytes as usize {
            self.change(Action::Dropped, path, Rule::Ai14);
            return None;
        }
        self.plain(value, path, depth)
    }

    /// Any JSON value of a kept unknown field: strings made safe like the
    /// rest, nesting cut at `MAX_UNKNOWN_DEPTH`.
    fn plain(&mut self, value: &Value, path: &str, depth: usize) -> Option<Value> {
        let is_container = matches!(value, Value::Array(_) | Value::Object(_));
        if is_container && depth == 0 {
            self.change(Action::Dropped, path, Rule::Ai8);
            return None;
        }
        let depth = depth.saturating_sub(1);
        match value {
            Value::String(text) => Some(Value::String(self.text(
                text,
                self.policy.max_reason_bytes,
                path,
            ))),
            Value::Array(items) => Some(Value::Array(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(index, item)| {
                        self.plain(item, &join(path, &index.to_string()), depth)
                    })
                    .collect(),
            )),
            Value::Object(object) => {
                let mut out = Object::new();
                for (name, item) in unknown_members(object, &[]) {
                    if let Some(item) = self.member(name, item, &join(path, name), depth) {
                        out.insert(name.clone(), item);
                    }
                }
                Some(Value::Object(out))
            }
            other => Some(other.clone()),
        }
    }

    /// Drops members, in the order the policy sets, until the envelope fits
    /// `max_envelope_bytes`; `None` when even `turnId` alone does not fit.
    fn fit(&mut self, mut envelope: Object, path: &str) -> Option<Object> {
        let fits =
            |envelope: &Object| json_len(envelope) <= self.policy.max_envelope_bytes as usize;
        if fits(&envelope) {
            return Some(envelope);
        }
        self.strip_unknown(&mut envelope, path);
        if fits(&envelope) {
            return Some(envelope);
        }
        if let Some(Value::Object(intent)) = envelope.get_mut("userIntent") {
            if intent.remove("text").is_some() {
                intent.insert("redacted".to_owned(), Value::Bool(true));
                self.change(
                    Action::Dropped,
                    &join(&join(path, "userIntent"), "text"),
                    Rule::Ai14,
                );
                if fits(&envelope) {
                    return Some(envelope);
                }
            }
        }
        for name in ["invocationReason", "model", "userIntent"] {
            if envelope.remove(name).is_some() {
                self.change(Action::Dropped, &join(path, name), Rule::Ai14);
                if fits(&envelope) {
                    return Some(envelope);
                }
            }
        }
        self.change(Action::Dropped, path, Rule::Ai14);
        None
    }

    /// Removes every unknown member, at the top and inside the known fields.
    fn strip_unknown(&mut self, envelope: &mut Object, path: &str) {
        let names: Vec<&str> = field_names().collect();
        for name in owned_unknown(envelope, &names) {
            envelope.remove(&name);
            self.change(Action::Dropped, &join(path, &name), Rule::Ai14);
        }
        for (field, members) in FIELDS {
            if let Some(Value::Object(object)) = envelope.get_mut(field) {
                for name in owned_unknown(object, members) {
                    object.remove(&name);
                    self.change(
                        Action::Dropped,
                        &join(&join(path, field), &name),
                        Rule::Ai14,
                    );
                }
            }
        }
    }
}

fn owned_unknown(object: &Object, known: &[&str]) -> Vec<String> {
    unknown_members(object, known)
        .into_iter()
        .map(|(name, _)| name.clone())
        .collect()
}

/// The size of an object as compact JSON, in bytes, without building the text.
pub(crate) fn json_len(object: &Object) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, object) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `validate` relies on this: under the default policy no envelope is
    /// ever over the envelope limit once its fields are cut to size, even
    /// when every character doubles under JSON escaping.
    #[test]
    fn default_field_limits_always_fit_the_default_envelope_limit() {
        let worst = |bytes: usize| "\"".repeat(bytes);
        let envelope = json!({
            "invocationReason": {"text": worst(5000)},
            "model": {"name": worst(5000)},
            "userIntent": {"text": worst(5000), "redacted": false},
            "turnId": worst(5000),
        });
        let (clean, changes) = sanitize_envelope(&envelope, &Policy::default(), "");
        assert!(changes.iter().all(|c| c.action == Action::Truncated));
        let size = clean.as_ref().and_then(Value::as_object).map(json_len);
        assert!(size.is_some_and(|size| size <= 8192), "{size:?}");
    }
}
