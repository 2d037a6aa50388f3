//! The response side: echoing `turnId`, and only `turnId` (AI-11).

#[cfg(feature = "value")]
use serde_json::Value;

use crate::diagnostics::{Action, Change, Code, Diagnostic, Rule};
use crate::edit::{Edit, Put, Target};
use crate::error::Error;
use crate::json::{Kind, Slot};
use crate::keys::KeyOptions;
use crate::message::{self, TO_RESULT_META};
use crate::path::Path;
use crate::schema::{EnvelopeField, FIELDS, Group, Place, Reads};

/// What echoing reads of the request and of the response.
pub const READS: Reads = FIELDS | Group::Response.bit();
use crate::view::MessageView;

/// The edits that make `response` echo the `turnId` of `request` (argument
/// 1 of the call) and nothing else.
pub fn echo(request: &MessageView, response: &MessageView) -> Result<Vec<Edit>, Error> {
    message::request(request)?;
    let root = response.get(Place::Root);
    if !response.is_response() {
        return Err(Error::new(
            Code::NotAResponse,
            format!(
                "expected a JSON-RPC response: an object with `result` or `error`, not {}",
                match root.kind() {
                    Some(Kind::Object) => "an object without either",
                    _ => root.article(),
                }
            ),
        ));
    }
    let result = response.get(Place::Result);
    match result.kind() {
        None => return Ok(Vec::new()),
        Some(Kind::Object) => {}
        Some(_) => {
            return Err(Error::new(
                Code::InvalidType,
                format!("`/result` must be an object, not {}", result.article()),
            ));
        }
    }
    if request.envelope.turn_id().is_none() {
        return Ok(match response.get(Place::Echo) {
            Slot::Absent => Vec::new(),
            _ => vec![Edit::new(Target::place(Place::Echo), Put::Remove)],
        });
    }
    if let Some(step) = message::not_an_object(response, &TO_RESULT_META) {
        return Err(step.into());
    }
    Ok(vec![
        Edit::new(Target::place(Place::Echo), Put::Object),
        Edit::new(
            Target::field(Place::Echo, EnvelopeField::TurnId),
            Put::Copy {
                input: 1,
                target: Target::field(Place::Envelope, EnvelopeField::TurnId),
            },
        ),
    ])
}

/// Makes the response's envelope hold the request's `turnId` and nothing else
/// (AI-11): `result._meta[key]` becomes `{"turnId": ...}`, exactly as the
/// request sent it, or is removed when the request sent no string `turnId`.
/// An error response comes back as it was.
///
/// # Errors
///
/// `not-a-request` / `not-a-response` (TypeError) when either is not what it
/// should be; `invalid-type` (TypeError) when `result` or `result._meta` is
/// not an object where the echo must be written; a KEY-3 code (RangeError)
/// for a bad configured key.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{echo_turn_id, KeyOptions};
/// use serde_json::json;
///
/// let request = json!({"id": 1, "method": "tools/call", "params": {"_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "userIntent": {"text": "secret"}}}}});
/// let response = json!({"id": 1, "result": {"content": []}});
/// let reply = echo_turn_id(&request, response, &KeyOptions::default())?;
/// assert_eq!(reply["result"]["_meta"], json!({"io.modelcontextprotocol/aiInvocation": {"turnId": "t-1"}}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn echo_turn_id(request: &Value, response: Value, keys: &KeyOptions) -> Result<Value, Error> {
    let edits = echo_edits(request, &response, keys)?;
    Ok(crate::edit::apply(response, edits, keys, &[request]))
}

/// The edits of [`echo_turn_id`] to the response, the keys checked; what
/// is copied is taken from the request, the call's input 1.
#[cfg(feature = "value")]
pub fn echo_edits(
    request: &Value,
    response: &Value,
    keys: &KeyOptions,
) -> Result<Vec<Edit>, Error> {
    keys.check()?;
    echo(
        &MessageView::of(request, keys, READS),
        &MessageView::of(response, keys, READS),
    )
}

/// Checks a response's envelope: only `turnId`, a string, and the one the
/// request sent when the request is known (AI-7, AI-11).
pub(crate) fn check(
    response: &MessageView,
    request: Option<&MessageView>,
    keys: &KeyOptions,
    out: &mut Vec<Diagnostic>,
) {
    if let Some(step) = message::not_an_object(response, &TO_RESULT_META) {
        return out.push(step.diagnostic());
    }
    let envelope = &response.echo;
    let path = Path::place(Place::Echo, keys);
    match envelope.value.kind() {
        None => return,
        Some(Kind::Object) => {}
        Some(found) => {
            return out.push(Diagnostic::invalid_type(
                "the echoed envelope",
                "an object",
                found.article(),
                Rule::Ai11,
                path.render(),
            ));
        }
    }
    let leaked = envelope
        .fields
        .iter()
        .filter(|(field, view)| *field != EnvelopeField::TurnId && view.value.is_present())
        .map(|(field, _)| field.name())
        .chain(envelope.unknown().into_iter().map(|(name, _)| name));
    for name in leaked {
        out.push(Diagnostic::breach(
            Code::EchoLeak,
            Rule::Ai11,
            path.join(name).render(),
            "a response should echo only turnId, never the request's other audit context",
        ));
    }
    let at = path.join(EnvelopeField::TurnId.name());
    match envelope.fields[EnvelopeField::TurnId].value {
        Slot::Absent => {}
        Slot::String(echoed) => {
            let sent = request.and_then(|request| request.envelope.turn_id());
            if request.is_some() && sent.map(|sent| sent.text) != Some(echoed.text) {
                out.push(Diagnostic::breach(
                    Code::TurnIdMismatch,
                    Rule::Ai11,
                    at.render(),
                    "the echoed turnId is not the one the request sent",
                ));
            }
        }
        other => out.push(Diagnostic::invalid_type(
            "`turnId`",
            "a string",
            other.article(),
            Rule::Ai7,
            at.render(),
        )),
    }
}

/// What an intermediary that keeps users' words from servers does to the
/// envelope a response carries (a sampling or elicitation answer a client
/// sends back): it keeps `turnId` alone, when it is a string, and drops the
/// rest (AI-11). The changes it makes, and their edits.
pub(crate) fn trim(response: &MessageView, keys: &KeyOptions) -> (Vec<Change>, Vec<Edit>) {
    let envelope = &response.echo;
    let path = Path::place(Place::Echo, keys);
    let mut dropped = Vec::new();
    match envelope.value {
        Slot::Absent => {}
        Slot::Object(_) => {
            for (field, view) in envelope.fields.iter() {
                let kept = field == EnvelopeField::TurnId && view.value.text().is_some();
                if view.value.is_present() && !kept {
                    dropped.push((
                        Target::field(Place::Echo, field),
                        path.join(field.name()).render(),
                    ));
                }
            }
            for (name, _) in envelope.unknown() {
                dropped.push((
                    Target::place(Place::Echo).named(name),
                    path.join(name).render(),
                ));
            }
        }
        _ => dropped.push((Target::place(Place::Echo), path.render())),
    }
    dropped
        .into_iter()
        .map(|(target, path)| {
            let change = Change {
                action: Action::Dropped,
                path,
                rule: Rule::Ai11,
            };
            (change, Edit::new(target, Put::Remove))
        })
        .unzip()
}
