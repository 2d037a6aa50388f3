//! Checking any value against every rule, without throwing (MSG-1).

#[cfg(feature = "value")]
use serde_json::Value;

use crate::correlation::{self, CorrelationKind};
use crate::diagnostics::{Action, Code, Diagnostic, Report, Rule};
use crate::echo;
use crate::error::Error;
use crate::initiator;
use crate::invocation;
#[cfg(feature = "value")]
use crate::keys;
use crate::keys::KeyOptions;
use crate::message::{self, TO_META};
use crate::options::Naming;
#[cfg(feature = "value")]
use crate::options::{self, FromOptions, Member, Options};
use crate::path::Path;
use crate::policy::Policy;
use crate::sanitize::Cleaned;
use crate::schema::{ENVELOPE, FIELDS, Group, Place, Reads};
use crate::text;

/// What `validate` reads of a message (and of the request it answers).
pub const READS: Reads =
    FIELDS | Group::Response.bit() | Group::Ui.bit() | Group::Bare.bit() | Group::Correlation.bit();
use crate::view::{Envelope, MessageView};

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
///
/// // Deserialized by the field names: its keys (checked), never `request`,
/// // which borrows the request a response answers.
/// let options: ValidateOptions = serde_json::from_value(json!({"keys": {"ui_key": "com.example/ui"}}))?;
/// assert_eq!((options.keys.ui_key(), options.request), ("com.example/ui", None));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[cfg(feature = "value")]
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
///
/// // Bad keys are findings too (KEY-3), which name the fields.
/// let keys = mcp_provenance::KeyOptions { ui_key: Some("io.mcp/ui".into()), ..Default::default() };
/// let report = validate(&request, &ValidateOptions { keys, request: None });
/// assert_eq!(report.diagnostics[0].message, "option `ui_key` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/");
/// ```
#[cfg(feature = "value")]
pub fn validate(message: &Value, options: &ValidateOptions) -> Report {
    validate_as(message, options, Naming::Rust)
}

/// [`validate`], naming the key options as `naming` says.
#[cfg(feature = "value")]
pub(crate) fn validate_as(message: &Value, options: &ValidateOptions, naming: Naming) -> Report {
    let keys = &options.keys;
    let request = options
        .request
        .map(|request| MessageView::of(request, keys, READS));
    check(
        &MessageView::of(message, keys, READS),
        request.as_ref(),
        keys,
        &[],
        naming,
    )
}

/// `validate` on views: the message, and for a response the request it
/// answers; a request's correlation ids read from `extra` too (a policy's);
/// the key options named as `naming` says.
pub(crate) fn check(
    message: &MessageView,
    request: Option<&MessageView>,
    keys: &KeyOptions,
    extra: &[(String, CorrelationKind)],
    naming: Naming,
) -> Report {
    Report::from(findings(message, request, keys, extra, naming))
}

/// What `validate` finds, every finding, before a report caps the list (MSG-2).
pub(crate) fn findings(
    message: &MessageView,
    request: Option<&MessageView>,
    keys: &KeyOptions,
    extra: &[(String, CorrelationKind)],
    naming: Naming,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = keys
        .errors(naming)
        .into_iter()
        .map(option_diagnostic)
        .collect();
    let root = message.get(Place::Root);
    if message.is_request() {
        check_request(message, keys, extra, &mut out);
    } else if root.is_object() && message.get(Place::Method).is_present() {
        out.push(Diagnostic::error(
            Code::InvalidType,
            Rule::Msg1,
            "/method".to_owned(),
            "`method` must be a string",
        ));
    } else if message.is_response() {
        echo::check(message, request, keys, &mut out);
    } else if let Err(error) = message::message(message) {
        out.push(Diagnostic::error(
            error.code(),
            Rule::Msg1,
            String::new(),
            error.to_string(),
        ));
    }
    out
}

#[cfg(feature = "value")]
impl FromOptions for ValidateOptions<'_> {
    const WHAT: &'static str = "validate options";
    const MEMBERS: &'static [Member] = &[Member::Inline(keys::KEYS)];

    fn read(options: &Options) -> Result<Self, Error> {
        Ok(ValidateOptions {
            keys: KeyOptions::inline(options)?,
            request: None,
        })
    }

    fn check_as(&self, naming: Naming) -> Result<(), Error> {
        self.keys.check_as(naming)
    }
}

#[cfg(feature = "value")]
options::deserialize_by_rust_names!(ValidateOptions<'_>);

/// A bad key option as `validate` reports it: an error at path `""` (KEY-3).
pub fn option_diagnostic(error: Error) -> Diagnostic {
    Diagnostic::error(error.code(), Rule::Key3, String::new(), error.to_string())
}

fn check_request(
    request: &MessageView,
    keys: &KeyOptions,
    extra: &[(String, CorrelationKind)],
    out: &mut Vec<Diagnostic>,
) {
    if let Some(step) = message::not_an_object(request, &TO_META) {
        return out.push(step.diagnostic());
    }
    if !request.get(Place::Meta).is_object() {
        return;
    }
    check_envelope(&request.envelope, &Path::place(Place::Envelope, keys), out);
    for (field, place) in ENVELOPE.values().zip(Place::BARE.values().copied()) {
        let configured = [keys.invocation_key(), keys.ui_key()];
        if request.get(place).is_present() && !configured.contains(&field.name) {
            // The message names the field, never the configured key: an option's value is not quoted.
            let name = field.name;
            out.push(Diagnostic::breach(
                Code::BareKey,
                Rule::Ai9,
                Path::place(place, keys).render(),
                format!("a bare `_meta.{name}` is not SEP-2817's convention; put `{name}` inside the envelope"),
            ));
        }
    }
    initiator::check(request, keys, out);
    let turn = request
        .envelope
        .turn_id()
        .map(|turn| text::neutralize(turn.text));
    out.extend(correlation::diagnostics(
        request,
        keys,
        turn.as_deref(),
        extra,
    ));
}

/// Checks an envelope, if there is one, at `path`: its schema (AI-2..AI-8)
/// and what `sanitize` would change in it.
pub(crate) fn check_envelope(envelope: &Envelope, path: &Path<'_>, out: &mut Vec<Diagnostic>) {
    if envelope.value.is_present() {
        invocation::check(envelope, path, out);
        would_change(envelope, path, out);
    }
}

/// Warns where `sanitize` under the default policy would replace a lone
/// surrogate (MSG-3), neutralize (AI-13) or cut (AI-14) text: the same code
/// decides both, so the warnings and the changes cannot drift. Under the
/// default limits, fields cut to size always fit the 8192-byte envelope
/// limit, so AI-14 warnings name fields.
fn would_change(envelope: &Envelope, path: &Path<'_>, out: &mut Vec<Diagnostic>) {
    let policy = Policy::default();
    for change in Cleaned::new(envelope, &policy, path).changes {
        let (code, rule, message) = match (change.action, change.rule) {
            (Action::Neutralized, Rule::Msg3) => (
                Code::LoneSurrogate,
                Rule::Msg3,
                "holds a lone UTF-16 surrogate, which no JSON store can keep; it reads, and sanitize writes it, as U+FFFD",
            ),
            (Action::Neutralized, Rule::Txt1) => (
                Code::InvisibleCharacter,
                Rule::Txt1,
                "holds invisible characters (tag or zero-width characters) that could hide text from a reader; sanitize replaces them",
            ),
            (Action::Neutralized, _) => (
                Code::ControlCharacter,
                Rule::Ai13,
                "holds line breaks, control or bidi characters that could forge or disguise log lines; sanitize replaces them",
            ),
            (Action::Truncated, _) => (
                Code::OverLimit,
                Rule::Ai14,
                "is over its default byte limit; sanitize truncates it",
            ),
            (Action::Redacted | Action::Dropped | Action::Omitted | Action::Lifted, _) => continue,
        };
        out.push(Diagnostic::breach(code, rule, change.path, message));
    }
}
