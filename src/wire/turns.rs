//! The way back: a server's answer carrying, in each result, the `turnId`
//! of the request it answers, and nothing else of the envelope (AI-11).
//!
//! When the filter forwards a request it notes the request's id and the
//! `turnId` it carried under each invocation key ([`Seen::turn`]); an HTTP
//! middleware in front of a server keeps those notes and hands each answer
//! the server sends back (a JSON body, or one event of an event stream) to
//! [`Filter::echo`] with them. Every byte the echo does not change stays as
//! it came, ids and numbers included.
//!
//! [`Seen::turn`]: super::Seen::turn

use std::borrow::Cow;
use std::collections::HashMap;

use super::filter::Filter;
use super::parse::{Body, Parser};
use super::patch::Patch;
use crate::edit::{Edit, Put, Target};
use crate::json::doc::{Doc, Entry};
use crate::json::{self, Number, Slot};
use crate::keys::AI_INVOCATION_KEY;
use crate::schema::{EnvelopeField, Place};
use crate::view::{Envelope, MessageView};

/// How deep an answer may nest for the echo to read it. A tool's result may
/// rightly hold JSON deeper than a request may (WIRE-4); past this the answer
/// is not read at all (the caller fails closed), and the parser's recursion
/// stays bounded.
const MAX_ANSWER_DEPTH: usize = 4096;

/// A JSON-RPC id by its value: `"r\u0031"` and `"r1"` are one id, `1` and
/// `1.0` are not (no server reads those alike).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Id {
    String(String),
    Number(String),
}

/// What the echo writes into the result of an answer to one request: the
/// `turnId` it carried under each pair of keys, in the order of the
/// filter's pairs (`None` for a `ui` pair, or where it carried none).
/// `Ambiguous`: two requests of the body named this id with different
/// `turnId`s, so the answer can echo neither (it echoes nothing).
#[derive(Debug, PartialEq)]
enum Echo {
    Turns(Vec<Option<String>>),
    Ambiguous,
}

/// The requests a body forwarded, by id: what an answer to them echoes.
#[derive(Debug, Default)]
struct Turns(HashMap<Id, Echo>);

impl Filter {
    /// The note [`Seen::turn`](super::Seen::turn) keeps of a request that
    /// goes on: its id as it came and the `turnId` each of its envelopes
    /// carried, as the JSON text of a request holding only those.
    pub(super) fn turn_note(&self, id_text: &str, views: &[MessageView]) -> String {
        let mut note = format!("{{\"id\":{id_text},\"params\":{{\"_meta\":{{");
        let mut first = true;
        for (pair, view) in self.pairs.iter().zip(views) {
            let Some(turn) = view
                .envelope
                .turn_id()
                .filter(|_| pair.keys.ui_key.is_none())
            else {
                continue;
            };
            let key = pair
                .keys
                .invocation_key
                .as_deref()
                .unwrap_or(AI_INVOCATION_KEY);
            if !std::mem::take(&mut first) {
                note.push(',');
            }
            json::write_string(&mut note, key);
            note.push_str(":{\"turnId\":");
            json::write_string(&mut note, turn.text);
            note.push('}');
        }
        note.push_str("}}}");
        note
    }

    /// `answer` (a server's JSON answer: one message or a batch, a JSON
    /// body or the `data` of one event) with each result of a request of
    /// `turns` carrying that request's `turnId` in `result._meta[key]` and
    /// nothing else of the envelope (AI-11): the member set to
    /// `{"turnId": …}`, or removed where the request carried no `turnId`.
    /// `turns` are the [`Seen::turn`](super::Seen::turn) notes of the
    /// forwarded body's outcome. Borrowed, exactly as it came, when nothing
    /// changed: errors, notifications, a result whose `_meta` is no object.
    /// A result that answers none of `turns`' requests keeps a string
    /// `turnId` of its envelope alone.
    ///
    /// `None` when the answer cannot be read (not UTF-8 JSON, nesting past
    /// 4,096, a member named twice where the echo reads): the caller fails
    /// closed, answering the requests itself rather than passing on what the
    /// echo could not check.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Filter, FilterContext, FilterOptions};
    ///
    /// let filter = Filter::new(FilterOptions::default())?;
    /// let request = br#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"q","_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"secret"}}}}}"#;
    /// let outcome = filter.filter(request, &FilterContext::default());
    /// let turns: Vec<&str> = outcome.messages.iter().filter_map(|seen| seen.turn.as_deref()).collect();
    ///
    /// let answer = br#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[],"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"secret"}}}}}"#;
    /// let echoed = filter.echo(answer, turns.iter().copied()).expect("JSON");
    /// assert_eq!(echoed, r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{"content":[],"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1"}}}}"#);
    ///
    /// // Not JSON: nothing the caller may pass on as it came.
    /// assert_eq!(filter.echo(b"{\"id\":", turns.iter().copied()), None);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn echo<'a, 't>(
        &self,
        answer: &'a [u8],
        turns: impl IntoIterator<Item = &'t str>,
    ) -> Option<Cow<'a, str>> {
        let text = std::str::from_utf8(answer).ok()?;
        let parser = Parser::new(&self.keys, MAX_ANSWER_DEPTH, self.reads());
        let messages = match parser.body(text, usize::MAX).ok()? {
            Body::One(message) => vec![message],
            Body::Batch(_, messages) => messages,
            Body::TooMany => return None,
        };
        let turns = self.turns(&parser, turns);
        let mut splices = Vec::new();
        for message in &messages {
            if message.fault.is_some() {
                return None;
            }
            if let Some(echoed) = self.echo_one(&message.doc, message.root, &turns) {
                splices.push((message.root.value, echoed));
            }
        }
        if splices.is_empty() {
            return Some(Cow::Borrowed(text));
        }
        let mut out = String::with_capacity(text.len() + 64);
        let mut from = 0;
        for (span, echoed) in &splices {
            out.push_str(text.get(from..span.start).unwrap_or_default());
            out.push_str(echoed);
            from = span.end;
        }
        out.push_str(text.get(from..).unwrap_or_default());
        Some(Cow::Owned(out))
    }

    /// The notes read back, by id; a note that does not read (not one of
    /// the filter's own) is passed over.
    fn turns<'t>(&self, parser: &Parser, notes: impl IntoIterator<Item = &'t str>) -> Turns {
        let mut turns = Turns::default();
        for note in notes {
            let Ok(message) = parser.one(note) else {
                continue;
            };
            let views = self.views(message.doc.slot(&message.root));
            let Some(id) = views.first().and_then(id_of) else {
                continue;
            };
            let echo = Echo::Turns(
                views
                    .iter()
                    .map(|view| view.envelope.turn_id().map(|turn| turn.text.to_owned()))
                    .collect(),
            );
            turns
                .0
                .entry(id)
                .and_modify(|known| {
                    if *known != echo {
                        *known = Echo::Ambiguous;
                    }
                })
                .or_insert(echo);
        }
        turns
    }

    /// One message of an answer, echoed: its new text, when that changed.
    /// A result that answers no request of `turns` (one of another body's,
    /// an id in another spelling of a number) keeps a string `turnId` of
    /// its envelope alone, as a response the client sends does (WIRE-5).
    fn echo_one(&self, doc: &Doc, root: Entry, turns: &Turns) -> Option<String> {
        let views = self.views(doc.slot(&root));
        let primary = views.first()?;
        if !primary.is_response() || !primary.get(Place::Result).is_object() {
            return None;
        }
        let echo = id_of(primary).and_then(|id| turns.0.get(&id));
        let mut patch = Patch::new(doc, root);
        for (index, (pair, view)) in self.pairs.iter().zip(&views).enumerate() {
            if pair.keys.ui_key.is_some() {
                continue;
            }
            let turn = match echo {
                Some(Echo::Turns(turns)) => turns.get(index).and_then(Option::as_deref),
                Some(Echo::Ambiguous) => None,
                None => {
                    let (_, edits) = crate::echo::trim(view, &pair.keys);
                    patch.edits(&edits, &pair.keys).ok()?;
                    continue;
                }
            };
            let put = match turn {
                Some(turn) if holds_only(&view.echo, turn) => continue,
                Some(turn) => {
                    let mut object = String::from("{\"turnId\":");
                    json::write_string(&mut object, turn);
                    object.push('}');
                    Put::Json(object)
                }
                None if view.echo.value.is_present() => Put::Remove,
                None => continue,
            };
            // A `_meta` that is no object holds no envelope to write over:
            // the message goes on as it came.
            patch
                .edits(&[Edit::new(Target::place(Place::Echo), put)], &pair.keys)
                .ok()?;
        }
        patch.text()
    }
}

/// A message's id by its value, when it is a string or an integer.
fn id_of(view: &MessageView) -> Option<Id> {
    match view.get(Place::Id) {
        Slot::String(text) => Some(Id::String(text.text.to_owned())),
        Slot::Number(Number::Wire(text)) => Some(Id::Number(text.to_owned())),
        _ => None,
    }
}

/// Whether an echoed envelope is `{"turnId": turn}` already.
fn holds_only(envelope: &Envelope, turn: &str) -> bool {
    envelope.value.is_object()
        && envelope.others == 0
        && envelope.fields.iter().all(|(field, view)| {
            if field == EnvelopeField::TurnId {
                view.value.text().is_some_and(|text| text.text == turn)
            } else {
                !view.value.is_present()
            }
        })
}
