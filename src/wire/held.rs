//! What an [`Exchange`] sends whole: a JSON answer held to its end (echoed,
//! the filter's replies joined, its length set), and the middleware's own
//! answer in the app's stead (the replies and an error for each request
//! still waiting, WIRE-8).

use std::borrow::Cow;

use super::exchange::{Exchange, Mode};
use super::own::{self, Own};
use super::reading::{begins_answer, past_space};
use super::step::{Edit, Head, Piece, Step};

/// The UTF-8 byte-order mark, which a client's decoder drops.
const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Exchange {
    /// A JSON answer held whole: echoed, the replies joined; or the
    /// middleware's own, when it cannot be read.
    pub(super) fn settle(&mut self, body: &[u8]) -> Step {
        let bom = if body.starts_with(BOM) { BOM.len() } else { 0 };
        let json = body.get(bom..).unwrap_or_default();
        if past_space(json, 0).is_none() {
            // No answer (202): the replies, if any, are the answer.
            if !self.replies.is_empty() {
                return self.own(200, own::composed(&self.replies, true).into_bytes());
            }
            return self.whole(body.to_vec());
        }
        let echoed = if !begins_answer(json) {
            None
        } else if self.shared.options.echo {
            self.shared
                .filter
                .echo_to(json, &self.awaiting, self.tally.as_deref_mut())
        } else {
            std::str::from_utf8(json).ok().map(Cow::Borrowed)
        };
        let Some(echoed) = echoed else {
            return self.instead(Own::AnswerNotJson);
        };
        if !self.replies.is_empty() {
            return self.own(200, joined(echoed.as_bytes(), &self.replies));
        }
        let mut out = body.get(..bom).unwrap_or_default().to_vec();
        out.extend_from_slice(echoed.as_bytes());
        self.whole(out)
    }

    /// The app's answer, whole, with its own status and its length.
    fn whole(&mut self, body: Vec<u8>) -> Step {
        self.mode = Mode::Over;
        self.sent = Some(self.status);
        let edits = vec![("content-length", Some(body.len().to_string()))];
        let head = Head {
            status: self.status,
            edits,
            passes: false,
        };
        Step {
            head: Some(head),
            pieces: vec![Piece::Made(body)],
            over: true,
        }
    }

    /// The middleware's own answer in place of the app's: the replies and
    /// an error for each request that went on; 502 when there is nothing to say.
    pub(super) fn instead(&mut self, why: Own) -> Step {
        let parts = self.failures(why, false);
        if parts.is_empty() {
            return self.own(502, Vec::new());
        }
        let body = own::composed(&parts, self.batch).into_bytes();
        self.own(200, body)
    }

    /// The replies and an error for each request still waiting, said to be `why`.
    pub(super) fn failures(&mut self, why: Own, event: bool) -> Vec<String> {
        self.refused = Some(why.code().to_owned());
        if let Some(tally) = self.tally.as_deref_mut() {
            tally.failed(why.rpc());
        }
        let limit = self.shared.options.max_answer_bytes as usize;
        let mut parts = std::mem::take(&mut self.replies);
        parts.extend(
            self.waiting
                .iter()
                .map(|id| why.error(id, why.code(), limit, event)),
        );
        parts
    }

    /// An answer of the middleware's own: `status`, `body` (JSON, or
    /// none), the app's headers but those of its body.
    pub(super) fn own(&mut self, status: u16, body: Vec<u8>) -> Step {
        self.mode = Mode::Over;
        self.sent = Some(status);
        self.held = Vec::new();
        let mut edits: Vec<Edit> = vec![
            ("content-length", None),
            ("content-type", None),
            ("content-encoding", None),
        ];
        if !body.is_empty() {
            edits.push(("content-type", Some("application/json".to_owned())));
        }
        edits.push(("content-length", Some(body.len().to_string())));
        Step {
            head: Some(Head {
                status,
                edits,
                passes: false,
            }),
            pieces: vec![Piece::Made(body)],
            over: true,
        }
    }
}

/// An answer (a JSON object or batch) with `replies` first: a batch whose
/// first items are the replies, the answer's own bytes after them as they came.
fn joined(answer: &[u8], replies: &[String]) -> Vec<u8> {
    let replies = replies.join(",");
    let first = past_space(answer, 0).unwrap_or(answer.len());
    let rest = answer.get(first..).unwrap_or_default();
    if rest.first() == Some(&b'{') {
        return [b"[", replies.as_bytes(), b",", rest, b"]"].concat();
    }
    let item = past_space(answer, first + 1).unwrap_or(answer.len());
    let items = answer.get(item..).unwrap_or_default();
    let comma: &[u8] = if items.first() == Some(&b']') {
        b""
    } else {
        b","
    };
    [b"[", replies.as_bytes(), comma, items].concat()
}
