//! The SEP-2817 envelope: its shape (AI-2..AI-8) and attaching it to a request.

use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic, Rule, Severity};
use crate::error::Error;
use crate::keys::KeyOptions;
use crate::message::{self, Object};
use crate::pointer::join;

/// The envelope's fields, each with the members it defines when it is an object.
pub(crate) const FIELDS: [(&str, &[&str]); 4] = [
    ("invocationReason", &["text"]),
    ("model", &["name"]),
    ("userIntent", &["text", "redacted"]),
    ("turnId", &[]),
];

/// The names of the envelope's fields.
pub(crate) fn field_names() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().map(|(name, _)| *name)
}

/// The members of `object` outside `known`, sorted by name so that every
/// runtime reports them in one order, whatever order its maps keep.
pub(crate) fn unknown_members<'a>(
    object: &'a Object,
    known: &[&str],
) -> Vec<(&'a String, &'a Value)> {
    let mut unknown: Vec<_> = object
        .iter()
        .filter(|(name, _)| !known.contains(&name.as_str()))
        .collect();
    unknown.sort_by(|a, b| a.0.cmp(b.0));
    unknown
}

/// Checks an envelope against the proposal's schema (AI-2..AI-7) and warns of
/// fields it does not define (AI-8). `path` is the envelope's pointer.
pub(crate) fn check(envelope: &Value, path: &str, out: &mut Vec<Diagnostic>) {
    let Value::Object(envelope) = envelope else {
        out.push(Diagnostic::invalid_type(
            "the invocation envelope",
            "an object",
            envelope,
            Rule::Ai2,
            path,
        ));
        return;
    };
    if let Some(reason) = envelope.get("invocationReason") {
        required_text(
            reason,
            "invocationReason",
            "text",
            Rule::Ai3,
            &join(path, "invocationReason"),
            out,
        );
    }
    if let Some(model) = envelope.get("model") {
        required_text(model, "model", "name", Rule::Ai4, &join(path, "model"), out);
    }
    if let Some(intent) = envelope.get("userIntent") {
        user_intent(intent, &join(path, "userIntent"), out);
    }
    if let Some(turn_id) = envelope.get("turnId") {
        expect_type(
            turn_id,
            Value::is_string,
            "`turnId`",
            "a string",
            Rule::Ai7,
            &join(path, "turnId"),
            out,
        );
    }
    let names: Vec<&str> = field_names().collect();
    warn_unknown(envelope, &names, path, out);
}

/// An object field whose `member` is a required string (AI-3, AI-4).
fn required_text(
    value: &Value,
    field: &str,
    member: &str,
    rule: Rule,
    path: &str,
    out: &mut Vec<Diagnostic>,
) {
    let Value::Object(object) = value else {
        out.push(Diagnostic::invalid_type(
            &format!("`{field}`"),
            "an object",
            value,
            rule,
            path,
        ));
        return;
    };
    let member_path = join(path, member);
    match object.get(member) {
        None => out.push(Diagnostic::error(
            Code::MissingField,
            rule,
            &member_path,
            format!("`{field}` must have a string `{member}`"),
        )),
        Some(text) => expect_type(
            text,
            Value::is_string,
            &format!("`{field}.{member}`"),
            "a string",
            rule,
            &member_path,
            out,
        ),
    }
    warn_unknown(object, &[member], path, out);
}

/// `userIntent`: an object with optional string `text` and boolean `redacted`;
/// empty is fine (AI-5, AI-6).
fn user_intent(value: &Value, path: &str, out: &mut Vec<Diagnostic>) {
    let Value::Object(intent) = value else {
        out.push(Diagnostic::invalid_type(
            "`userIntent`",
            "an object",
            value,
            Rule::Ai5,
            path,
        ));
        return;
    };
    if let Some(text) = intent.get("text") {
        expect_type(
            text,
            Value::is_string,
            "`userIntent.text`",
            "a string",
            Rule::Ai5,
            &join(path, "text"),
            out,
        );
    }
    if let Some(redacted) = intent.get("redacted") {
        expect_type(
            redacted,
            Value::is_boolean,
            "`userIntent.redacted`",
            "a boolean",
            Rule::Ai5,
            &join(path, "redacted"),
            out,
        );
    }
    warn_unknown(intent, &["text", "redacted"], path, out);
}

fn expect_type(
    value: &Value,
    is_expected: fn(&Value) -> bool,
    what: &str,
    expected: &str,
    rule: Rule,
    path: &str,
    out: &mut Vec<Diagnostic>,
) {
    if !is_expected(value) {
        out.push(Diagnostic::invalid_type(what, expected, value, rule, path));
    }
}

fn warn_unknown(object: &Object, known: &[&str], path: &str, out: &mut Vec<Diagnostic>) {
    for (name, _) in unknown_members(object, known) {
        out.push(Diagnostic::warning(
            Code::UnknownField,
            Rule::Ai8,
            &join(path, name),
            "a field SEP-2817 does not define; the default policy drops it",
        ));
    }
}

/// Puts `invocation` as the request's envelope, replacing any there, for a
/// call the host's model chose. The invocation must meet the envelope's
/// schema (warnings are allowed); `params` and `_meta` are created when absent.
///
/// # Errors
///
/// `not-a-request` or `invalid-type` (TypeError) when the request is not a
/// request or its `params`/`_meta` is not an object; `invalid-invocation`
/// (TypeError) when the invocation breaks AI-2..AI-7; a KEY-3 code (RangeError)
/// for a bad configured key.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{attach_invocation, KeyOptions};
/// use serde_json::json;
///
/// let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
///                      "params": {"name": "list_tables", "arguments": {}}});
/// let invocation = json!({"model": {"name": "example-model"}, "turnId": "t-1"});
/// let sent = attach_invocation(request, invocation.clone(), &KeyOptions::default())?;
/// assert_eq!(sent["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"], invocation);
///
/// let bad = attach_invocation(sent, json!({"turnId": 1}), &KeyOptions::default()).unwrap_err();
/// assert_eq!(bad.to_string(), "invalid invocation at `/turnId`: `turnId` must be a string, not a number");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn attach_invocation(
    request: Value,
    invocation: Value,
    keys: &KeyOptions,
) -> Result<Value, Error> {
    keys.check()?;
    let mut request = message::into_request(request)?;
    let mut found = Vec::new();
    check(&invocation, "", &mut found);
    if let Some(error) = found.iter().find(|d| d.severity == Severity::Error) {
        let place = if error.path.is_empty() {
            String::new()
        } else {
            format!(" at `{}`", error.path)
        };
        return Err(Error::new(
            Code::InvalidInvocation,
            format!("invalid invocation{place}: {}", error.message),
        ));
    }
    message::request_meta_mut(&mut request)?.insert(keys.invocation_key().to_owned(), invocation);
    Ok(Value::Object(request))
}
