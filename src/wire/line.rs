//! A message's account as one JSON line, written directly ([`Seen::json`],
//! [`Outcome::lines`]): the line a gateway logs for each message, as
//! `serde_json` writes a [`Seen`] (a test holds them equal) but that a line
//! is one line, whatever came: no line break, control, bidi or invisible
//! character stands in it raw, in the account or in the message (its text
//! as forwarded, put on one line by [`json::one_line`]). At a fraction of
//! serde's cost, and without its serializer in the npm package's module.
//! The message's arguments are left out of it as the filter's
//! `auditArguments` says (WIRE-9, `arguments.rs`), when it is made.

use super::arguments::left_out;
use super::options::AuditArguments;
use super::outcome::{MessageKind, Outcome, Seen, Verdict};
use crate::audit::{AuditRecord, RequestId};
use crate::diagnostics::{Change, Diagnostic};
use crate::json::{self, write_string};

impl Seen {
    /// The account as one JSON object, as a log line has it less the message.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Filter, FilterContext, FilterOptions};
    ///
    /// let outcome = Filter::new(FilterOptions::default())?.filter(b"[7]", &FilterContext::default());
    /// assert_eq!(outcome.messages[0].json(), r#"{"index":0,"kind":"malformed","refused":"invalid-request","valid":false,"diagnostics":[{"code":"not-a-message","severity":"error","rule":"MSG-1","path":"","message":"expected a JSON-RPC message: an object with a string `method`, or with `result` or `error`; found a number"}],"changes":[]}"#);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn json(&self) -> String {
        let mut out = String::with_capacity(256);
        write(self, None, &mut out);
        out
    }
}

impl Outcome<'_> {
    /// One JSON line per message, for a log: its account, with the message
    /// as it goes on (`"message"`, its text as forwarded, put on one line)
    /// when it does, its `params.arguments` left out as the filter's
    /// `auditArguments` says ([`line_head`]). A line is one line whatever
    /// the body held: no line break, control, bidi or invisible character
    /// stands in it raw.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Filter, FilterContext, FilterOptions};
    ///
    /// let outcome = Filter::new(FilterOptions::default())?.filter(b"{\"id\":100,\n\"method\":\"ping\"}", &FilterContext::default());
    /// assert_eq!(outcome.lines(), [r#"{"message":{"id":100,"method":"ping"},"kind":"request","id":100,"valid":true,"record":{"method":"ping","requestId":100,"clientAsserted":{},"hostAttested":{},"witnessed":{},"diagnostics":[],"valid":true},"changes":[]}"#]);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn lines(&self) -> Vec<String> {
        let forwarded = match &self.verdict {
            Verdict::Forward { body, .. } => body.as_ref(),
            Verdict::Reject { .. } => "",
        };
        self.messages
            .iter()
            .map(|seen| {
                let message = seen.forwarded.clone().and_then(|at| forwarded.get(at));
                let head = message.map(|message| line_head(message, seen.audit_arguments));
                let mut line = String::with_capacity(256 + head.as_ref().map_or(0, String::len));
                write(seen, head.as_deref(), &mut line);
                line
            })
            .collect()
    }
}

/// The members a message's line opens with, before its account:
/// `"message"`, its text as it goes on put on one line, with the `arguments`
/// of its `params` left out as `arguments` says (WIRE-9); and, when they
/// were, `"auditArguments"` saying how. `message` is JSON text.
///
/// # Examples
///
/// ```
/// use mcp_provenance::AuditArguments;
/// use mcp_provenance::__bindings::wire::line_head;
///
/// let call = "{\"id\":1,\n \"params\":{\"name\":\"t\",\"arguments\":{\"card\":\"4111\"}}}";
/// assert_eq!(line_head(call, AuditArguments::Keep), r#""message":{"id":1, "params":{"name":"t","arguments":{"card":"4111"}}}"#);
/// assert_eq!(line_head(call, AuditArguments::Drop), r#""message":{"id":1, "params":{"name":"t"}},"auditArguments":"drop""#);
/// assert_eq!(line_head(r#"{"id":1,"method":"ping"}"#, AuditArguments::Drop), r#""message":{"id":1,"method":"ping"}"#);
/// ```
pub fn line_head(message: &str, arguments: AuditArguments) -> String {
    let left = left_out(message, arguments);
    let text = json::one_line(left.as_deref().unwrap_or(message));
    let mut out = String::with_capacity(text.len() + 40);
    out.push_str("\"message\":");
    out.push_str(&text);
    if left.is_some() {
        out.push_str(",\"auditArguments\":");
        write_string(&mut out, arguments.as_str());
    }
    out
}

/// Writes `seen` as a JSON object, after `head` (its line's first members,
/// [`line_head`]) when its message goes on.
fn write(seen: &Seen, head: Option<&str>, out: &mut String) {
    let mut object = Object::open(out);
    if let Some(head) = head {
        object.members(head);
    }
    if let Some(index) = seen.index {
        object.raw("index", &index.to_string());
    }
    object.string("kind", kind(seen));
    if let Some(id) = &seen.id {
        object.key("id");
        id_of(id, object.out);
    }
    if let Some(code) = seen.refused {
        object.string("refused", code.as_str());
    }
    object.raw("valid", if seen.valid { "true" } else { "false" });
    if let Some(record) = &seen.record {
        object.key("record");
        write_record(record, object.out, id_of);
    }
    if !seen.diagnostics.is_empty() {
        object.key("diagnostics");
        diagnostics(&seen.diagnostics, object.out);
    }
    object.key("changes");
    changes(&seen.changes, object.out);
    object.close();
}

fn kind(seen: &Seen) -> &'static str {
    match seen.kind {
        MessageKind::Request => "request",
        MessageKind::Notification => "notification",
        MessageKind::Response => "response",
        MessageKind::Malformed => "malformed",
    }
}

pub(super) fn id_of(id: &RequestId, out: &mut String) {
    match id {
        RequestId::Number(number) => out.push_str(&number.to_string()),
        RequestId::String(text) => write_string(out, text),
    }
}

/// `record` as the JSON a message's line holds it in, a numeric request id
/// as the exact decimal it is ([`json::write_exact`]): the one form a
/// record crosses a binding in.
pub fn record_json(record: &AuditRecord) -> String {
    let mut out = String::with_capacity(256);
    write_record(record, &mut out, |id, out| match id {
        RequestId::Number(number) => json::write_exact(number.as_f64().unwrap_or_default(), out),
        RequestId::String(text) => write_string(out, text),
    });
    out
}

/// Writes `record`, its request id as `id` writes one.
fn write_record(record: &AuditRecord, out: &mut String, id: fn(&RequestId, &mut String)) {
    let mut object = Object::open(out);
    object.string("method", &record.method);
    object.optional("tool", record.tool.as_deref());
    if let Some(request_id) = &record.request_id {
        object.key("requestId");
        id(request_id, object.out);
    }
    let asserted = &record.client_asserted;
    object.key("clientAsserted");
    let mut inner = Object::open(object.out);
    inner.optional("turnId", asserted.turn_id.as_deref());
    inner.optional("model", asserted.model.as_deref());
    inner.optional("invocationReason", asserted.invocation_reason.as_deref());
    inner.optional("userIntent", asserted.user_intent.as_deref());
    if let Some(redacted) = asserted.user_intent_redacted {
        inner.raw(
            "userIntentRedacted",
            if redacted { "true" } else { "false" },
        );
    }
    if !asserted.correlation.is_empty() {
        inner.key("correlation");
        array(&asserted.correlation, inner.out, |id, object| {
            object.string("kind", id.kind.as_str());
            object.string("value", &id.value);
            object.string("key", &id.key);
            object.optional("member", id.member.as_deref());
        });
    }
    inner.close();
    object.key("hostAttested");
    let mut inner = Object::open(object.out);
    inner.optional("initiator", record.host_attested.initiator.as_deref());
    inner.close();
    let witnessed = &record.witnessed;
    object.key("witnessed");
    let mut inner = Object::open(object.out);
    inner.optional("receivedAt", witnessed.received_at.as_deref());
    inner.optional("principal", witnessed.principal.as_deref());
    inner.optional("sessionId", witnessed.session_id.as_deref());
    inner.close();
    object.key("diagnostics");
    diagnostics(&record.diagnostics, object.out);
    object.raw("valid", if record.valid { "true" } else { "false" });
    object.close();
}

/// Diagnostics as a JSON array.
pub(super) fn diagnostics(found: &[Diagnostic], out: &mut String) {
    array(found, out, |d, object| {
        object.string("code", d.code.as_str());
        object.string("severity", d.severity.as_str());
        object.string("rule", d.rule.as_str());
        object.string("path", &d.path);
        object.string("message", &d.message);
    });
}

fn changes(made: &[Change], out: &mut String) {
    array(made, out, |change, object| {
        object.string("action", change.action.as_str());
        object.string("path", &change.path);
        object.string("rule", change.rule.as_str());
    });
}

/// An array of objects, each written by `write`.
fn array<T>(items: &[T], out: &mut String, write: impl Fn(&T, &mut Object)) {
    out.push('[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        let mut object = Object::open(out);
        write(item, &mut object);
        object.close();
    }
    out.push(']');
}

/// An object being written: its members, commas between them.
struct Object<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'o> Object<'o> {
    fn open(out: &'o mut String) -> Self {
        out.push('{');
        Object { out, first: true }
    }

    /// A member's name and colon; its value follows.
    fn key(&mut self, name: &str) {
        if !std::mem::take(&mut self.first) {
            self.out.push(',');
        }
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
    }

    /// Members written already, as JSON text (`"name":value,...`).
    fn members(&mut self, json: &str) {
        if !std::mem::take(&mut self.first) {
            self.out.push(',');
        }
        self.out.push_str(json);
    }

    fn raw(&mut self, name: &str, json: &str) {
        self.key(name);
        self.out.push_str(json);
    }

    fn string(&mut self, name: &str, text: &str) {
        self.key(name);
        write_string(self.out, text);
    }

    fn optional(&mut self, name: &str, text: Option<&str>) {
        if let Some(text) = text {
            self.string(name, text);
        }
    }

    fn close(self) {
        self.out.push('}');
    }
}
