//! The audit record: what a server keeps of a request, with every fact
//! labelled by who vouches for it (AI-10, UI-6).

use serde::{Deserialize, Serialize};
use serde_json::Number;
#[cfg(feature = "value")]
use serde_json::Value;

use crate::correlation::{self, Correlation};
use crate::diagnostics::{Diagnostic, Severity};
use crate::error::Error;
use crate::initiator;
use crate::json::Slot;
use crate::message;
use crate::options::{self, FromOptions, Member, Name, Naming, Options};
use crate::path::Path;
use crate::policy::Policy;
use crate::sanitize::Cleaned;
use crate::schema::{EnvelopeField, FIELDS, Group, Place, Reads};

/// What an audit record reads of a request: what `validate` does of one, and its names.
pub const READS: Reads =
    FIELDS | Group::Names.bit() | Group::Ui.bit() | Group::Bare.bit() | Group::Correlation.bit();
use crate::text;
use crate::view::{Envelope, MessageView};

/// How many bytes of `method`, the tool name and a string request id a record keeps.
pub const MAX_RECORDED_NAME_BYTES: usize = 256;

// The options of an audit context, by their two names; a filter's context
// has the first three too.
pub(crate) const RECEIVED_AT: Name = Name::new("received_at", "receivedAt");
pub(crate) const PRINCIPAL: Name = Name::new("principal", "principal");
pub(crate) const SESSION_ID: Name = Name::new("session_id", "sessionId");
/// The member holding the policy, and with it the keys.
pub(crate) const POLICY: Name = Name::new("policy", "policy");

/// What the server itself knows about a request, for [`audit_record`].
///
/// # Examples
///
/// ```
/// use mcp_provenance::AuditContext;
/// use serde_json::json;
///
/// let context = AuditContext::from_value(&json!({"receivedAt": "2026-11-29T20:00:00Z", "sessionId": "s-1"}))?;
/// assert_eq!(context.session_id.as_deref(), Some("s-1"));
///
/// // In Rust: `..AuditContext::default()`, or deserialized by the field names.
/// let context: AuditContext = serde_json::from_value(json!({"session_id": "s-1", "policy": {"user_intent": "drop"}}))?;
/// assert_eq!(context.session_id.as_deref(), Some("s-1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditContext {
    /// When the server received the request, as the server writes time (`receivedAt`).
    pub received_at: Option<String>,
    /// Who the server authenticated, if anyone.
    pub principal: Option<String>,
    /// The transport session the request came in on (`sessionId`).
    pub session_id: Option<String>,
    /// How the envelope is made safe before it is recorded; default [`Policy::default`].
    pub policy: Option<Policy>,
}

impl AuditContext {
    /// Reads a context from JSON with the JS names (`null` for none), and
    /// checks its policy; messages name the options as JS does.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{AuditContext, Code};
    /// use serde_json::json;
    ///
    /// let err = AuditContext::from_value(&json!({"policy": {"maxModelBytes": 1}})).unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidLimit);
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        Self::from_slot(Slot::of(value))
    }
}

impl FromOptions for AuditContext {
    const WHAT: &'static str = "audit context";
    const MEMBERS: &'static [Member] = &[
        Member::Option(RECEIVED_AT),
        Member::Option(PRINCIPAL),
        Member::Option(SESSION_ID),
        Member::Option(POLICY),
    ];

    /// Reads the context, its policy read and checked first.
    fn read(options: &Options) -> Result<Self, Error> {
        let policy = match options.get(POLICY) {
            Slot::Absent => None,
            policy => Some(Policy::read_as(policy, options.naming())?),
        };
        Ok(AuditContext {
            received_at: options.string(RECEIVED_AT)?,
            principal: options.string(PRINCIPAL)?,
            session_id: options.string(SESSION_ID)?,
            policy,
        })
    }
}

options::deserialize_by_rust_names!(AuditContext);

/// A JSON-RPC request id as sent.
///
/// # Examples
///
/// ```
/// use mcp_provenance::RequestId;
///
/// assert_eq!(serde_json::to_value(RequestId::String("r-1".into()))?, "r-1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Number(Number),
    /// A string id, neutralized and at most 256 bytes.
    String(String),
}

/// What the client says about why the request was made: recorded, never
/// evidence (AI-10). Every string is neutralized and within its limit.
///
/// # Examples
///
/// ```
/// let asserted = mcp_provenance::ClientAsserted::default();
/// assert_eq!(serde_json::to_value(asserted)?, serde_json::json!({}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClientAsserted {
    /// The `turnId` the client sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// `model.name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `invocationReason.text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation_reason: Option<String>,
    /// `userIntent.text`, as kept by the policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_intent: Option<String>,
    /// Whether the client said the intent was redacted, or the policy changed
    /// or removed its text; absent when the request carried no `userIntent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_intent_redacted: Option<bool>,
    /// The request's correlation ids (COR-1..COR-5): the envelope's
    /// `turnId`, `traceparent`'s trace, and the ids today's clients send
    /// under their own keys, each labelled with its source; absent when
    /// there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub correlation: Vec<Correlation>,
}

/// What the MCP Apps Host attests: asserted, not verified (UI-6).
///
/// # Examples
///
/// ```
/// let mut attested = mcp_provenance::HostAttested::default();
/// attested.initiator = Some("app".into());
/// assert_eq!(serde_json::to_value(attested)?, serde_json::json!({"initiator": "app"}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostAttested {
    /// The `initiator` of the `ui` entry; absent means unknown (UI-4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initiator: Option<String>,
}

/// What the server saw for itself.
///
/// # Examples
///
/// ```
/// let mut witnessed = mcp_provenance::Witnessed::default();
/// witnessed.session_id = Some("s-1".into());
/// assert_eq!(serde_json::to_value(witnessed)?, serde_json::json!({"sessionId": "s-1"}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Witnessed {
    /// When the request arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received_at: Option<String>,
    /// Who sent it, as authenticated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The transport session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// One request as an audit store keeps it, its facts kept apart by who
/// vouches for them (AI-10, UI-6). No string in it holds an AI-13 character.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{audit_record, AuditContext};
/// use serde_json::json;
///
/// let request = json!({"id": 3, "method": "tools/call", "params": {"name": "refresh_dashboard",
///     "_meta": {"io.modelcontextprotocol/ui": {"initiator": "app"}}}});
/// let record = audit_record(&request, &AuditContext::default())?;
/// assert_eq!(serde_json::to_value(&record)?, json!({
///     "method": "tools/call", "tool": "refresh_dashboard", "requestId": 3,
///     "clientAsserted": {}, "hostAttested": {"initiator": "app"}, "witnessed": {},
///     "diagnostics": [], "valid": true}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuditRecord {
    /// The JSON-RPC method.
    pub method: String,
    /// `params.name` of a `tools/call`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The JSON-RPC id; absent for a notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// The envelope's fields, as the policy keeps them.
    pub client_asserted: ClientAsserted,
    /// The `ui` entry's initiator.
    pub host_attested: HostAttested,
    /// The server's own facts.
    pub witnessed: Witnessed,
    /// What `validate` found in the request.
    pub diagnostics: Vec<Diagnostic>,
    /// No diagnostic is an error: the request is valid, as `validate` says.
    pub valid: bool,
}

/// Builds the record a server keeps of `request`: the envelope made safe by
/// the context's policy (AI-13..AI-15), the host-attested initiator (an
/// unknown value kept neutralized, at most 64 bytes, with its UI-7
/// diagnostic), the server's witnessed facts, and `validate`'s diagnostics.
///
/// # Errors
///
/// `not-a-request` (TypeError) when the request is not a request; a KEY-3
/// code, `invalid-limit` or `invalid-option` (RangeError) for a bad policy.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{audit_record, AuditContext};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"name": "execute_query", "_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"model": {"name": "example-model"}, "turnId": "t\r\n1"}}}});
/// let context = AuditContext { session_id: Some("s-9".into()), ..AuditContext::default() };
/// let record = audit_record(&request, &context)?;
/// assert_eq!(record.client_asserted.model.as_deref(), Some("example-model"));
/// assert_eq!(record.client_asserted.turn_id.as_deref(), Some("t  1"));
/// assert_eq!(record.witnessed.session_id.as_deref(), Some("s-9"));
/// assert_eq!(record.diagnostics[0].rule.as_str(), "AI-13");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn audit_record(request: &Value, context: &AuditContext) -> Result<AuditRecord, Error> {
    let default_policy = Policy::default();
    let policy = context.policy.as_ref().unwrap_or(&default_policy);
    policy.check()?;
    record(&MessageView::of(request, &policy.keys, READS), context)
}

/// `audit_record` on a view; the policy is checked by the caller.
pub fn record(request: &MessageView, context: &AuditContext) -> Result<AuditRecord, Error> {
    let default_policy = Policy::default();
    let policy = context.policy.as_ref().unwrap_or(&default_policy);
    let diagnostics = crate::validate::check(
        request,
        None,
        &policy.keys,
        &policy.correlation_keys,
        Naming::Rust,
    );
    record_with(request, context, policy, diagnostics.diagnostics)
}

/// The record of a request whose diagnostics were found already, made
/// under `policy` (in place of the context's own, which is not read).
pub(crate) fn record_with(
    request: &MessageView,
    context: &AuditContext,
    policy: &Policy,
    diagnostics: Vec<Diagnostic>,
) -> Result<AuditRecord, Error> {
    message::request(request)?;
    let mut client_asserted = match request.envelope.value {
        Slot::Absent => ClientAsserted::default(),
        _ => client_asserted(&request.envelope, policy),
    };
    let turn = client_asserted.turn_id.as_deref();
    client_asserted.correlation =
        correlation::ids(request, &policy.keys, turn, &policy.correlation_keys).ids;
    let method = request.get(Place::Method).str().unwrap_or_default();
    let tool = request
        .get(Place::Tool)
        .str()
        .filter(|_| method == "tools/call");
    let request_id = match request.get(Place::Id) {
        Slot::Number(number) => number.to_json().map(RequestId::Number),
        Slot::String(id) => Some(RequestId::String(name(id.text))),
        _ => None,
    };
    Ok(AuditRecord {
        method: name(method),
        tool: tool.map(name),
        request_id,
        client_asserted,
        host_attested: HostAttested {
            initiator: initiator::attested(request),
        },
        witnessed: Witnessed {
            received_at: context.received_at.as_deref().map(neutral),
            principal: context.principal.as_deref().map(neutral),
            session_id: context.session_id.as_deref().map(neutral),
        },
        valid: diagnostics.iter().all(|d| d.severity != Severity::Error),
        diagnostics,
    })
}

fn client_asserted(envelope: &Envelope, policy: &Policy) -> ClientAsserted {
    let path = Path::place(Place::Envelope, &policy.keys);
    let cleaned = Cleaned::new(envelope, policy, &path);
    let text = |field: EnvelopeField| cleaned.text_of(field).map(str::to_owned);
    let intent = &envelope.fields[EnvelopeField::UserIntent];
    let user_intent_redacted = intent.value.is_present().then(|| {
        matches!(
            intent.flag(EnvelopeField::UserIntent),
            Some(Slot::Bool(true))
        ) || cleaned.touched(EnvelopeField::UserIntent)
    });
    ClientAsserted {
        turn_id: text(EnvelopeField::TurnId),
        model: text(EnvelopeField::Model),
        invocation_reason: text(EnvelopeField::InvocationReason),
        user_intent: text(EnvelopeField::UserIntent),
        user_intent_redacted,
        correlation: Vec::new(),
    }
}

/// A name-like string of the request, made safe to keep.
pub(crate) fn name(text: &str) -> String {
    text::clean(text, MAX_RECORDED_NAME_BYTES).text.into_owned()
}

/// A witnessed fact, neutralized so the record as a whole holds no AI-13 character.
fn neutral(text: &str) -> String {
    text::neutralize(text).into_owned()
}
