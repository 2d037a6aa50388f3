//! What the wire filter decides: what to forward or how to refuse the body,
//! the filter's own JSON-RPC answers, and an account of each message.

use std::borrow::Cow;
use std::ops::Range;

use serde::Serialize;

use super::headers::Unread;
use super::options::AuditArguments;
use crate::audit::{AuditRecord, RequestId};
use crate::diagnostics::{Change, Code, Diagnostic, Rule};
use crate::json;
use crate::json::doc::Span;

/// JSON-RPC error codes of the filter's own answers.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const INVALID_PARAMS: i32 = -32602;

/// What a message of a body is.
///
/// # Examples
///
/// ```
/// assert_eq!(serde_json::to_value(mcp_provenance::MessageKind::Notification)?, "notification");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MessageKind {
    /// A string `method` and a string or number `id`.
    Request,
    /// A string `method` and no `id`.
    Notification,
    /// `result` or `error`, no `method`: an answer the client sends back
    /// (to a sampling or elicitation request of the server).
    Response,
    /// None of those (WIRE-2): refused, never forwarded.
    Malformed,
}

/// The account of one message of a body.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Filter, FilterContext, FilterOptions};
///
/// let outcome = Filter::new(FilterOptions::default())?.filter(br#"{"id":"r","method":"ping"}"#, &FilterContext::default());
/// let seen = &outcome.messages[0];
/// assert_eq!(seen.record.as_ref().map(|r| r.method.as_str()), Some("ping"));
/// assert_eq!(seen.forwarded, Some(0..26));
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Seen {
    /// Its place in a batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// What it is.
    pub kind: MessageKind,
    /// Its JSON-RPC id, as a record keeps it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// Why the filter refused it; a refused message is never forwarded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<Code>,
    /// It goes on, and no finding about it is an error.
    pub valid: bool,
    /// A request's or notification's audit record (not of a refused one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<AuditRecord>,
    /// What `validate` found in a response or a malformed message, and why
    /// a message was refused (a request's findings are in its record, or
    /// here where no record was made: `check` makes none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    /// What the filter changed in it.
    pub changes: Vec<Change>,
    /// Where it stands in the forwarded body, when it goes on.
    #[serde(skip)]
    pub forwarded: Option<Range<usize>>,
    /// Its id as it came, JSON text and all (`12345678901234567890`,
    /// `"r\u0031"`), when it is a string or a number and not in doubt: what a
    /// gateway's own answer to it names.
    #[serde(skip)]
    pub id_text: Option<String>,
    /// For a request that goes on, what an answer to it echoes (AI-11): a
    /// note of its id and of the `turnId` each of its envelopes carried, as
    /// JSON text, for [`Filter::echo`](super::Filter::echo).
    #[serde(skip)]
    pub turn: Option<String>,
    /// What its line holds of `params.arguments` (WIRE-9): the filter's
    /// `auditArguments` for a message that goes on holding them, else
    /// [`AuditArguments::Keep`].
    #[serde(skip)]
    pub audit_arguments: AuditArguments,
}

impl Seen {
    pub(super) fn new(index: Option<usize>, kind: MessageKind, id: Option<RequestId>) -> Self {
        Seen {
            index,
            kind,
            id,
            refused: None,
            valid: false,
            record: None,
            diagnostics: Vec::new(),
            changes: Vec::new(),
            forwarded: None,
            id_text: None,
            turn: None,
            audit_arguments: AuditArguments::Keep,
        }
    }
}

/// What a gateway does with a body.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Verdict<'b> {
    /// Send `body` upstream (borrowed: exactly as it came), and answer the
    /// refused requests of a batch with `replies` beside the upstream's answer.
    Forward {
        /// What goes upstream.
        body: Cow<'b, str>,
        /// JSON-RPC errors, one JSON text each.
        replies: Vec<String>,
    },
    /// Send nothing upstream: answer the client with `status` and `body`
    /// (JSON, or empty with 202 when only notifications came and were refused).
    Reject {
        /// The HTTP status: 400 (not JSON, an empty batch), 413 (a batch too
        /// large), 415 (headers saying the body is not UTF-8 JSON), 200 (the filter's answers), 202 (nothing to answer).
        status: u16,
        /// What the client is answered.
        body: String,
    },
}

/// What the filter decided for one body.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Outcome<'b> {
    /// Forward, or reject.
    pub verdict: Verdict<'b>,
    /// Why the body was refused whole (WIRE-2, WIRE-4), as a diagnostic.
    pub refusal: Option<Diagnostic>,
    /// One account per message, in the order they came.
    pub messages: Vec<Seen>,
}

/// One message looked at: its account, the text it goes on as (when
/// changed), the filter's answer to it (when refused), and whether it goes on.
pub(super) struct Looked {
    pub seen: Seen,
    pub text: Option<String>,
    pub reply: Option<String>,
    /// Where it stands in the body.
    pub span: Span,
}

/// Why a whole body is refused.
pub(super) enum Refusal {
    Headers(Unread),
    NotUtf8,
    NotJson,
    BatchTooLarge(u32),
    EmptyBatch,
}

impl<'b> Outcome<'b> {
    /// A body refused whole.
    pub(super) fn refuse(refusal: Refusal) -> Self {
        let (status, code, rpc, message) = match refusal {
            Refusal::Headers(unread) => (
                415,
                unread.code(),
                INVALID_REQUEST,
                unread.message().to_owned(),
            ),
            Refusal::NotUtf8 => (
                400,
                Code::ParseError,
                PARSE_ERROR,
                "the body is not UTF-8".to_owned(),
            ),
            Refusal::NotJson => (
                400,
                Code::ParseError,
                PARSE_ERROR,
                "the body is not JSON".to_owned(),
            ),
            Refusal::BatchTooLarge(max) => (
                413,
                Code::BatchTooLarge,
                INVALID_REQUEST,
                format!("a batch may hold at most {max} messages"),
            ),
            Refusal::EmptyBatch => (
                400,
                Code::InvalidRequest,
                INVALID_REQUEST,
                "an empty batch".to_owned(),
            ),
        };
        let rule = match code {
            Code::BatchTooLarge => Rule::Wire4,
            _ => Rule::Wire2,
        };
        Outcome {
            refusal: Some(Diagnostic::error(
                code,
                rule,
                String::new(),
                message.clone(),
            )),
            verdict: Verdict::Reject {
                status,
                body: error("null", rpc, &message, code.as_str()),
            },
            messages: Vec::new(),
        }
    }

    /// Nothing goes on: the filter's answers, or 202 when there are none.
    pub(super) fn answer(batch: bool, replies: Vec<String>, messages: Vec<Seen>) -> Self {
        let body = match (batch, replies.as_slice()) {
            (_, []) => String::new(),
            (false, [one, ..]) => one.clone(),
            (true, all) => format!("[{}]", all.join(",")),
        };
        let status = if body.is_empty() { 202 } else { 200 };
        Outcome {
            verdict: Verdict::Reject { status, body },
            refusal: None,
            messages,
        }
    }
}

/// The filter's JSON-RPC answer to a message it refused, `id` its id's text.
pub(super) fn reply(id: &str, code: Code) -> String {
    let (rpc, message) = answer(code);
    error(id, rpc, message, code.as_str())
}

/// The diagnostic of a refusal that none of a message's findings explains.
pub(super) fn refusal(code: Code) -> Diagnostic {
    let rule = match code {
        Code::DuplicateMember => Rule::Wire3,
        Code::TooDeep => Rule::Wire4,
        Code::BareUserIntent => Rule::Wire6,
        _ => Rule::Wire2,
    };
    Diagnostic::error(code, rule, String::new(), answer(code).1)
}

/// The JSON-RPC error code and message the filter answers a refusal with.
fn answer(code: Code) -> (i32, &'static str) {
    match code {
        Code::InvalidRequest => (
            INVALID_REQUEST,
            "not a JSON-RPC request, notification or response",
        ),
        Code::DuplicateMember => (
            INVALID_REQUEST,
            "a member is duplicated where the request's metadata is read",
        ),
        Code::TooDeep => (
            INVALID_REQUEST,
            "the message nests deeper than the gateway reads",
        ),
        Code::BareUserIntent => (
            INVALID_PARAMS,
            "a bare _meta.userIntent, which a policy that redacts intents cannot reach",
        ),
        _ => (INVALID_PARAMS, "the request's metadata cannot be processed"),
    }
}

/// A JSON-RPC error object as text: for the request whose id's JSON text
/// is `id`, `code` its `data.code`.
pub(super) fn error(id: &str, rpc: i32, message: &str, code: &str) -> String {
    let mut out =
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{rpc},\"message\":");
    json::write_string(&mut out, message);
    out.push_str(",\"data\":{\"code\":");
    json::write_string(&mut out, code);
    out.push_str("}}}");
    out
}

impl<'b> Outcome<'b> {
    /// The outcome of a body whose messages were looked at: what goes on is
    /// the body with refused messages removed and changed ones replaced.
    pub(super) fn assemble(text: &'b str, batch: Option<Span>, looked: Vec<Looked>) -> Self {
        let replies: Vec<String> = looked.iter().filter_map(|l| l.reply.clone()).collect();
        let mut messages: Vec<Seen> = Vec::with_capacity(looked.len());
        if looked.iter().all(|l| l.seen.refused.is_some()) {
            messages.extend(looked.into_iter().map(|l| l.seen));
            return Outcome::answer(batch.is_some(), replies, messages);
        }
        // Splices: each run of refused messages removed with the commas
        // around it, each changed message replaced.
        let mut splices: Vec<(Span, &str)> = Vec::new();
        let mut last_kept: Option<usize> = None;
        let mut run: Option<Span> = None;
        for looked in &looked {
            if looked.seen.refused.is_some() {
                let start = run.map_or(looked.span.start, |run| run.start);
                run = Some(Span {
                    start,
                    end: looked.span.end,
                });
                continue;
            }
            if let Some(refused) = run.take() {
                let end = looked.span.start;
                splices.push((
                    Span {
                        start: refused.start,
                        end,
                    },
                    "",
                ));
            }
            if let Some(text) = &looked.text {
                splices.push((looked.span, text.as_str()));
            }
            last_kept = Some(looked.span.end);
        }
        if let Some(refused) = run {
            let start = last_kept.unwrap_or(refused.start);
            splices.push((
                Span {
                    start,
                    end: refused.end,
                },
                "",
            ));
        }
        let mut body = String::new();
        let mut from = 0;
        for (span, with) in &splices {
            body.push_str(text.get(from..span.start).unwrap_or_default());
            body.push_str(with);
            from = span.end;
        }
        let changed = !splices.is_empty();
        if changed {
            body.push_str(text.get(from..).unwrap_or_default());
        }
        // Where each message that goes on stands in what is forwarded: its
        // place in the body, moved by what the splices before it changed
        // (both in the body's order, so one pass over each).
        let mut before = splices.iter().peekable();
        let mut moved: isize = 0;
        let places: Vec<Option<std::ops::Range<usize>>> = looked
            .iter()
            .map(|looked| {
                let span = looked.span;
                while let Some((s, with)) = before.next_if(|(s, _)| s.end <= span.start) {
                    moved += with.len() as isize - (s.end - s.start) as isize;
                }
                let start = span.start.saturating_add_signed(moved);
                let len = looked
                    .text
                    .as_ref()
                    .map_or(span.end - span.start, String::len);
                looked.seen.refused.is_none().then_some(start..start + len)
            })
            .collect();
        drop(splices);
        for (looked, place) in looked.into_iter().zip(places) {
            let mut seen = looked.seen;
            seen.forwarded = place;
            messages.push(seen);
        }
        let body = if changed {
            Cow::Owned(body)
        } else {
            Cow::Borrowed(text)
        };
        Outcome {
            verdict: Verdict::Forward { body, replies },
            refusal: None,
            messages,
        }
    }
}
