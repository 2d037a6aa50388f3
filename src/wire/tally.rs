//! What the client got for each request an exchange forwarded, read from
//! the answer as it goes (WIRE-8): the answers among each JSON answer and
//! each event the exchange reads, matched to the requests by id (its very
//! text, as servers mostly send it back; else as the clients match ids,
//! `ids.rs`), the first answer to a request the one a client takes; the
//! middleware's own error where it answered in the app's stead. Kept only
//! when the exchange's outcome is (`answered.rs`), and read off what the
//! echo parsed already: no answer is read twice.

use serde::Serialize;

use super::ids::{self, IdKey};
use super::outcome::Seen;
use super::parse::{ParsedMessage, Parser};
use crate::audit::RequestId;
use crate::json::doc::Raw;

/// What the client got for a request that went on.
///
/// # Examples
///
/// ```
/// use mcp_provenance::Got;
///
/// assert_eq!(serde_json::to_value(Got::Unseen)?, "unseen");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Got {
    /// A result.
    Result,
    /// A JSON-RPC error: the app's, or the middleware's in its stead.
    Error,
    /// No answer to it was seen: the app ended without one, the client left
    /// first, or the answer went on unread (`echo: false`, a media type no
    /// client reads a message from).
    Unseen,
}

impl Got {
    /// As an account names it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Got::Result => "result",
            Got::Error => "error",
            Got::Unseen => "unseen",
        }
    }
}

/// What one request that went on got.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Answered {
    /// Its JSON-RPC id, as its message's account has it.
    pub id: RequestId,
    /// What the client got for it.
    pub answer: Got,
    /// The JSON-RPC error's `code`, when it got an error with an integer code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
}

/// What an exchange keeps for its outcome: each request that went on, and
/// what the client got for it.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    requests: Vec<Kept>,
    received_at: Option<String>,
    /// Whether a body was filtered: it came whole.
    admitted: bool,
}

/// One request that went on, and what the client got for it so far.
#[derive(Debug)]
struct Kept {
    id: RequestId,
    /// Its id as it came, JSON text.
    text: String,
    /// Every key a client may read its id by: made only when an answer's id
    /// is not its very text.
    keys: Option<Vec<IdKey>>,
    got: Got,
    code: Option<i64>,
}

impl Tally {
    /// The requests of a body that went on: those of `messages` with a note
    /// of their id (every request that goes on has one).
    pub(super) fn went_on(&mut self, messages: &[Seen]) {
        self.requests = messages
            .iter()
            .filter(|seen| seen.turn.is_some())
            .filter_map(|seen| {
                Some(Kept {
                    id: seen.id.clone()?,
                    text: seen.id_text.clone()?,
                    keys: None,
                    got: Got::Unseen,
                    code: None,
                })
            })
            .collect();
    }

    /// A body came whole, and was received at `at`.
    pub(super) fn received(&mut self, at: Option<String>) {
        self.admitted = true;
        self.received_at = at;
    }

    /// The answers among `messages` (an answer the client got, read whole
    /// by `parser`): each goes to the requests whose id is its very id
    /// text, or else to those its id matches as the clients match ids,
    /// unless an answer came before (a client takes the first answer to its
    /// request).
    pub(super) fn read(&mut self, parser: &Parser<'_>, messages: &[ParsedMessage<'_>]) {
        for message in messages {
            let doc = &message.doc;
            let Raw::Node(root) = message.root.raw else {
                continue;
            };
            let Some(root) = doc.get(root) else {
                continue;
            };
            let (error, result) = (doc.member(root, "error"), doc.member(root, "result"));
            let Some(id) = doc
                .member(root, "id")
                .filter(|_| error.is_some() || result.is_some())
            else {
                continue;
            };
            let (got, code) = match error {
                Some(error) => (Got::Error, code(parser, doc.at(error.value))),
                None => (Got::Result, None),
            };
            let text = doc.at(id.value);
            if self.requests.iter().any(|kept| kept.text == text) {
                for kept in self.requests.iter_mut().filter(|kept| kept.text == text) {
                    kept.answered(got, code);
                }
                continue;
            }
            let keys = ids::keys(&doc.slot(id));
            for kept in &mut self.requests {
                let theirs = kept.keys.get_or_insert_with(|| keys_of(parser, &kept.text));
                if theirs.iter().any(|key| keys.contains(key)) {
                    kept.answered(got, code);
                }
            }
        }
    }

    /// The middleware's own error, JSON-RPC `rpc`, for each request no answer reached.
    pub(super) fn failed(&mut self, rpc: i32) {
        for kept in &mut self.requests {
            kept.answered(Got::Error, Some(i64::from(rpc)));
        }
    }
}

impl Kept {
    /// It got `got`, unless it got an answer before.
    fn answered(&mut self, got: Got, code: Option<i64>) {
        if self.got == Got::Unseen {
            (self.got, self.code) = (got, code);
        }
    }
}

/// The keys of the id whose JSON text is `text`, read by `parser`.
fn keys_of(parser: &Parser<'_>, text: &str) -> Vec<IdKey> {
    let note = format!("{{\"id\":{text}}}");
    let Ok(message) = parser.one(&note) else {
        return Vec::new();
    };
    let id = match message.root.raw {
        Raw::Node(root) => message
            .doc
            .get(root)
            .and_then(|root| message.doc.member(root, "id")),
        _ => None,
    };
    id.map_or_else(Vec::new, |id| ids::keys(&message.doc.slot(id)))
}

/// The `code` of the JSON-RPC error whose text is `error`, when it is an
/// integer (as JSON-RPC's are), read as the clients read it (the last of a
/// member named twice). The error is read for its type alone: its `code`
/// from its text.
fn code(parser: &Parser<'_>, error: &str) -> Option<i64> {
    let code = parser.member(error, "code").ok()??;
    error.get(code.start..code.end)?.parse().ok()
}

impl Tally {
    /// What each request got so far, in the body's order.
    pub(super) fn answered(&self) -> Vec<Answered> {
        self.requests
            .iter()
            .map(|kept| Answered {
                id: kept.id.clone(),
                answer: kept.got,
                code: kept.code,
            })
            .collect()
    }

    /// When the request was received, as its records say.
    pub(super) fn received_at(&self) -> Option<&str> {
        self.received_at.as_deref()
    }

    /// Whether a body came whole, and was filtered.
    pub(super) fn admitted(&self) -> bool {
        self.admitted
    }
}
