//! The response side: echoing `turnId`, and only `turnId` (AI-11).

use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic, Rule};
use crate::error::{Error, type_name};
use crate::invocation::{field_names, unknown_members};
use crate::keys::KeyOptions;
use crate::message::{self, Object};
use crate::pointer::join;

const RESULT_META: &str = "/result/_meta";

/// The request's `turnId`, when it is a string.
pub(crate) fn turn_id<'a>(request: &'a Value, invocation_key: &str) -> Option<&'a str> {
    let request = request.as_object()?;
    message::request_meta(request)
        .ok()??
        .get(invocation_key)?
        .get("turnId")?
        .as_str()
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
pub fn echo_turn_id(request: &Value, response: Value, keys: &KeyOptions) -> Result<Value, Error> {
    keys.check()?;
    message::as_request(request)?;
    let mut response = match response {
        Value::Object(map) if map.contains_key("result") || map.contains_key("error") => map,
        other => {
            return Err(Error::new(
                Code::NotAResponse,
                format!(
                    "expected a JSON-RPC response: an object with `result` or `error`, not {}",
                    match other {
                        Value::Object(_) => "an object without either",
                        other => type_name(&other),
                    }
                ),
            ));
        }
    };
    let key = keys.invocation_key();
    let Some(result) = response.get_mut("result") else {
        return Ok(Value::Object(response));
    };
    let Value::Object(result) = result else {
        return Err(Error::new(
            Code::InvalidType,
            format!("`/result` must be an object, not {}", type_name(result)),
        ));
    };
    match turn_id(request, key) {
        Some(turn_id) => {
            let echo = Object::from_iter([("turnId".to_owned(), Value::from(turn_id))]);
            message::object_entry(result, "_meta", RESULT_META)?
                .insert(key.to_owned(), Value::Object(echo));
        }
        None => {
            if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                meta.remove(key);
            }
        }
    }
    Ok(Value::Object(response))
}

/// Checks a response's envelope: only `turnId`, a string, and the one the
/// request sent when the request is known (AI-7, AI-11).
pub(crate) fn check(
    response: &Object,
    request: Option<&Value>,
    invocation_key: &str,
    out: &mut Vec<Diagnostic>,
) {
    let meta = match message::object_at(response, "result", "/result") {
        Ok(Some(result)) => message::object_at(result, "_meta", RESULT_META),
        other => other,
    };
    let envelope = match meta {
        Err(step) => return out.push(step.diagnostic()),
        Ok(meta) => match meta.and_then(|meta| meta.get(invocation_key)) {
            Some(envelope) => envelope,
            None => return,
        },
    };
    let path = join(RESULT_META, invocation_key);
    let Value::Object(envelope) = envelope else {
        return out.push(Diagnostic::invalid_type(
            "the echoed envelope",
            "an object",
            envelope,
            Rule::Ai11,
            &path,
        ));
    };
    let known: Vec<&str> = field_names().collect();
    let leaked = known
        .iter()
        .copied()
        .filter(|name| *name != "turnId" && envelope.contains_key(*name))
        .chain(
            unknown_members(envelope, &known)
                .into_iter()
                .map(|(name, _)| name.as_str()),
        );
    for name in leaked {
        out.push(Diagnostic::warning(
            Code::EchoLeak,
            Rule::Ai11,
            &join(&path, name),
            "a response should echo only turnId, never the request's other audit context",
        ));
    }
    match envelope.get("turnId") {
        None => {}
        Some(Value::String(echoed)) => {
            let sent = request.and_then(|request| turn_id(request, invocation_key));
            if request.is_some() && sent != Some(echoed.as_str()) {
                out.push(Diagnostic::warning(
                    Code::TurnIdMismatch,
                    Rule::Ai11,
                    &join(&path, "turnId"),
                    "the echoed turnId is not the one the request sent",
                ));
            }
        }
        Some(other) => out.push(Diagnostic::invalid_type(
            "`turnId`",
            "a string",
            other,
            Rule::Ai7,
            &join(&path, "turnId"),
        )),
    }
}
