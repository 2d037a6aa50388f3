//! Checking any value against every rule, without throwing (MSG-1).

use serde_json::Value;

use crate::diagnostics::{Action, Code, Diagnostic, Report, Rule};
use crate::echo;
use crate::error::Error;
use crate::initiator;
use crate::invocation::{self, field_names};
use crate::keys::KeyOptions;
use crate::message::{self, Object, PARAMS_META};
use crate::pointer::join;
use crate::policy::Policy;
use crate::sanitize::sanitize_envelope;

/// Options of [`validate`].
///
/// # Examples
///
/// ```
/// use mcp_provenance::{KeyOptions, ValidateOptions};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call"});
/// let options = ValidateOptions { keys: KeyOptions::default(), request: Some(&request) };
/// assert!(options.request.is_some());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ValidateOptions<'a> {
    /// Which `_meta` keys hold the entries (KEY-3).
    pub keys: KeyOptions,
    /// For a response: the request it answers, to check the `turnId` echo (AI-11).
    pub request: Option<&'a Value>,
}

/// Checks any value against every rule and reports what it finds; never fails.
///
/// A request or notification is checked for its envelope's schema (AI-2..AI-7),
/// unknown fields (AI-8), bare keys (AI-9), the `ui` entry's initiator (UI-7),
/// and for what `sanitize` would change under the default policy: control
/// characters (AI-13) and sizes over the default limits (AI-14). A response is
/// checked for what it echoes (AI-11). Anything else is `not-a-message` (MSG-1).
///
/// # Examples
///
/// ```
/// use mcp_provenance::{validate, ValidateOptions};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"name": "list_tables", "_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"invocationReason": {}, "turnId": "t-1"}}}});
/// let report = validate(&request, &ValidateOptions::default());
/// assert!(!report.valid);
/// assert_eq!(report.diagnostics[0].code.as_str(), "missing-field");
/// assert_eq!(report.diagnostics[0].message, "`invocationReason` must have a string `text`");
///
/// let report = validate(&json!("hello"), &ValidateOptions::default());
/// assert_eq!(report.diagnostics[0].rule.as_str(), "MSG-1");
/// ```
pub fn validate(message: &Value, options: &ValidateOptions) -> Report {
    let keys = &options.keys;
    let mut out: Vec<Diagnostic> = keys.errors().into_iter().map(option_diagnostic).collect();
    match message {
        Value::Object(map) if message::is_request(map) => request(map, keys, &mut out),
        Value::Object(map) if map.contains_key("method") => out.push(Diagnostic::error(
            Code::InvalidType,
            Rule::Msg1,
            "/method",
            "`method` must be a string",
        )),
        Value::Object(map) if map.contains_key("result") || map.contains_key("error") => {
            echo::check(map, options.request, keys.invocation_key(), &mut out);
        }
        _ => out.push(Diagnostic::error(
            Code::NotAMessage,
            Rule::Msg1,
            "",
            format!(
                "expected a JSON-RPC message: an object with a string `method`, or with `result` or `error`; found {}",
                describe(message)
            ),
        )),
    }
    Report::from(out)
}

/// A bad key option as `validate` reports it: an error at path `""` (KEY-3).
pub(crate) fn option_diagnostic(error: Error) -> Diagnostic {
    Diagnostic::error(error.code(), Rule::Key3, "", error.to_string())
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "an object with neither",
        other => crate::error::type_name(other),
    }
}

fn request(request: &Object, keys: &KeyOptions, out: &mut Vec<Diagnostic>) {
    let meta = match message::request_meta(request) {
        Ok(Some(meta)) => meta,
        Ok(None) => return,
        Err(step) => return out.push(step.diagnostic()),
    };
    let key = keys.invocation_key();
    if let Some(envelope) = meta.get(key) {
        let path = join(PARAMS_META, key);
        invocation::check(envelope, &path, out);
        would_change(envelope, &path, out);
    }
    for name in field_names().filter(|name| *name != key && meta.contains_key(*name)) {
        out.push(Diagnostic::warning(
            Code::BareKey,
            Rule::Ai9,
            &join(PARAMS_META, name),
            format!("a bare `_meta.{name}` is not SEP-2817's convention; put `{name}` inside `_meta[\"{key}\"]`"),
        ));
    }
    if let Some(entry) = meta.get(keys.ui_key()) {
        initiator::check(entry, keys.ui_key(), out);
    }
}

/// Warns where `sanitize` under the default policy would neutralize (AI-13)
/// or cut (AI-14) text: the same code decides both, so the warnings and the
/// changes cannot drift. Under the default limits, fields cut to size always
/// fit the 8192-byte envelope limit, so AI-14 warnings name fields.
fn would_change(envelope: &Value, path: &str, out: &mut Vec<Diagnostic>) {
    let (_, changes) = sanitize_envelope(envelope, &Policy::default(), path);
    for change in changes {
        let (code, rule, message) = match change.action {
            Action::Neutralized => (
                Code::ControlCharacter,
                Rule::Ai13,
                "holds line breaks, control or bidi characters that could forge or disguise log lines; sanitize replaces them",
            ),
            Action::Truncated => (
                Code::OverLimit,
                Rule::Ai14,
                "is over its default byte limit; sanitize truncates it",
            ),
            Action::Redacted | Action::Dropped => continue,
        };
        out.push(Diagnostic::warning(code, rule, &change.path, message));
    }
}
