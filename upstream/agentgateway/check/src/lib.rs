//! The core of an agentgateway ExtMcp processor (`mcpGuardrails`, kind
//! `remote`) on mcp-provenance: what it answers to `CheckRequest` and
//! `CheckResponse`, the gRPC plumbing left out (a tonic `ExtMcp` server on
//! agentgateway's `ext_mcp.proto` calls these two functions and maps
//! [`Decision`] onto the result oneof).
//!
//! It needs agentgateway to send `params._meta` in `McpRequest.mcp_request`
//! and to forward the `_meta` of a `mutated` answer (keep-meta.patch). At
//! agentgateway 75b4e6c without the patch, every request looks to it like one
//! without an envelope: it redacts nothing, refuses nothing, records nothing
//! the client asserted.

use std::borrow::Cow;

use mcp_provenance::{AuditRecord, Filter, FilterContext, Verdict};
use serde::Deserialize;
use serde_json::value::RawValue;

/// What the processor answers: the `McpRequestResult` / `McpResponseResult`
/// oneof.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// `Pass {}`: forward as it came.
    Pass,
    /// `mutated`: the JSON-RPC `params` (or `result`) to forward instead.
    Mutated(Vec<u8>),
    /// `AuthorizationError { code: INVALID, reason, mcp_error: data }`:
    /// agentgateway answers the client with a JSON-RPC error carrying
    /// `reason` as its message and `data`, and forwards nothing.
    Reject {
        /// The error's message.
        reason: String,
        /// The error's `data` (JSON), e.g. `{"code":"bare-user-intent"}`.
        data: Option<Vec<u8>>,
    },
}

#[derive(Deserialize)]
struct Forwarded<'a> {
    #[serde(borrow)]
    params: &'a RawValue,
}

#[derive(Deserialize)]
struct Answered<'a> {
    #[serde(borrow)]
    error: &'a RawValue,
}

#[derive(Deserialize)]
struct ErrorObject<'a> {
    message: String,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Echoed<'a> {
    #[serde(borrow)]
    result: &'a RawValue,
}

/// `CheckRequest`: runs the filter on the request the client sent, rebuilt
/// around `params` (`McpRequest.mcp_request`, its bytes untouched), hands
/// each audit record to `sink` first (a record not written refuses the
/// request), and answers what the filter decided. `context` holds only what
/// the gateway established (e.g. `principal` from a `metadata` CEL
/// expression such as `jwt.sub`), never a client header.
///
/// The ExtMcp request carries no JSON-RPC id: the record's `requestId` is
/// the placeholder `0`.
pub fn check_request(
    filter: &Filter,
    method: &str,
    params: Option<&[u8]>,
    context: &FilterContext,
    mut sink: impl FnMut(&AuditRecord) -> Result<(), String>,
) -> Decision {
    let Ok(method) = serde_json::to_string(method) else {
        return internal("method not encodable");
    };
    let mut body = Vec::with_capacity(48 + method.len() + params.map_or(0, <[u8]>::len));
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":0,"method":"#);
    body.extend_from_slice(method.as_bytes());
    if let Some(params) = params {
        body.extend_from_slice(br#","params":"#);
        body.extend_from_slice(params);
    }
    body.push(b'}');
    let outcome = filter.filter(&body, context);
    for record in outcome
        .messages
        .iter()
        .filter_map(|seen| seen.record.as_ref())
    {
        if sink(record).is_err() {
            return internal("audit record not written");
        }
    }
    match outcome.verdict {
        // Borrowed: exactly as it came (a clean envelope, AI-12).
        Verdict::Forward {
            body: Cow::Borrowed(_),
            ..
        } => Decision::Pass,
        Verdict::Forward {
            body: Cow::Owned(text),
            ..
        } => match serde_json::from_str::<Forwarded>(&text) {
            Ok(forwarded) => Decision::Mutated(forwarded.params.get().as_bytes().to_vec()),
            Err(_) => internal("filtered request not readable"),
        },
        Verdict::Reject { body, .. } => {
            let error = serde_json::from_str::<Answered>(&body)
                .ok()
                .and_then(|answered| {
                    serde_json::from_str::<ErrorObject>(answered.error.get()).ok()
                });
            match error {
                Some(error) => Decision::Reject {
                    reason: error.message,
                    data: error.data.map(|data| data.get().as_bytes().to_vec()),
                },
                None => internal("refusal not readable"),
            }
        }
        // A verdict this build does not know of: refused (fail closed).
        _ => internal("verdict not known"),
    }
}

/// `CheckResponse`: the result (`McpResponse.mcp_response`) with the
/// envelope in `result._meta` removed: the processor does not see the
/// request the result answers, so a `turnId` there is the server's word,
/// never echoed as the client's (AI-11, WIRE-7); `Pass` when there was none.
/// A result the filter cannot read is refused.
pub fn check_response(filter: &Filter, result: &[u8]) -> Decision {
    let mut body = Vec::with_capacity(32 + result.len());
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":0,"result":"#);
    body.extend_from_slice(result);
    body.push(b'}');
    match filter.echo(&body, []) {
        Some(Cow::Borrowed(_)) => Decision::Pass,
        Some(Cow::Owned(text)) => match serde_json::from_str::<Echoed>(&text) {
            Ok(echoed) => Decision::Mutated(echoed.result.get().as_bytes().to_vec()),
            Err(_) => internal("echoed result not readable"),
        },
        None => internal("result not readable"),
    }
}

fn internal(reason: &str) -> Decision {
    Decision::Reject {
        reason: format!("mcp-provenance: {reason}"),
        data: None,
    }
}
