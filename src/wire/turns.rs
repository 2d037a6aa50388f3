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
use super::ids::{self, IdKey};
use super::parse::{Body, Parser};
use super::patch::Patch;
use super::tally::Tally;
use crate::edit::{Edit, Put, Target};
use crate::json::doc::{Doc, Entry};
use crate::json::{self, Slot};
use crate::keys::AI_INVOCATION_KEY;
use crate::schema::{EnvelopeField, Place};
use crate::view::{Envelope, MessageView};

/// How deep an answer may nest for the echo to read it. A tool's result may
/// rightly hold JSON deeper than a request may (WIRE-4); past this the answer
/// is not read at all (the caller fails closed), and the parser's recursion
/// stays bounded.
const MAX_ANSWER_DEPTH: usize = 4096;

/// What the echo writes into a result answering one request: the `turnId`
/// it carried under each pair of keys, in the order of the filter's pairs
/// (`None` for a `ui` pair, or where it carried none). `Ambiguous`: requests
/// that carried different `turnId`s share an id as some client reads it, so
/// the answer can echo neither (it echoes none).
#[derive(Clone, Debug, PartialEq)]
enum Echo {
    Turns(Vec<Option<String>>),
    Ambiguous,
}

/// The requests a body forwarded (or a session did, for a stream resumed
/// later), each by every key a client may read its id by ([`ids`]): what an
/// answer to them echoes. Built once, read for every result.
#[derive(Clone, Debug, Default)]
pub(crate) struct Awaiting {
    by_key: HashMap<IdKey, Echo>,
    /// How many requests were added.
    requests: usize,
    /// How many bytes of `turnId`s were added.
    bytes: usize,
}

impl Awaiting {
    /// Adds a request: the keys of its id and its turns.
    fn add(&mut self, keys: Vec<IdKey>, turns: Vec<Option<String>>) {
        self.requests += 1;
        self.bytes += turns.iter().flatten().map(String::len).sum::<usize>();
        for key in keys {
            let echo = Echo::Turns(turns.clone());
            self.by_key
                .entry(key)
                .and_modify(|known| {
                    if *known != echo {
                        *known = Echo::Ambiguous;
                    }
                })
                .or_insert(echo);
        }
    }

    /// Adds every request of `other`, a later body's: where an id of both
    /// meets, `other`'s wins (a client reuses an id once it is answered).
    pub(crate) fn extend_latest(&mut self, other: &Awaiting) {
        self.requests += other.requests;
        self.bytes += other.bytes;
        for (key, echo) in &other.by_key {
            self.by_key.insert(key.clone(), echo.clone());
        }
    }

    /// How many bytes of `turnId`s it holds.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many requests it holds.
    pub(crate) fn len(&self) -> usize {
        self.requests
    }

    /// The turns a result with this id echoes: those of every request its
    /// id matches as some client reads it, when they agree; `None` when it
    /// matches none, or requests that disagree (it echoes none). Never by
    /// its place alone: the Python SDK takes any answer on a request's
    /// stream for that request's, the TypeScript SDK by `Number(id)` for
    /// whichever request bears it, so an answer whose id is not the one
    /// request's would be taken by the two for two requests.
    fn turns_for(&self, id: &Slot<'_>) -> Option<&[Option<String>]> {
        let mut found: Option<&Vec<Option<String>>> = None;
        for key in ids::keys(id) {
            match self.by_key.get(&key) {
                None => continue,
                Some(Echo::Ambiguous) => return None,
                Some(Echo::Turns(turns)) if found.is_some_and(|seen| seen != turns) => return None,
                Some(Echo::Turns(turns)) => found = Some(turns),
            }
        }
        found.map(Vec::as_slice)
    }
}

impl Filter {
    /// The note [`Seen::turn`](super::Seen::turn) keeps of a request that
    /// goes on: its id as it came and the `turnId` each of its envelopes
    /// carried, as the JSON text of a request holding only those.
    pub(super) fn turn_note(&self, id_text: &str, views: &[MessageView]) -> String {
        // Room for the standard envelope's note at once: it is the one there usually is.
        let mut note = String::with_capacity(96 + id_text.len() + AI_INVOCATION_KEY.len());
        note.push_str("{\"id\":");
        note.push_str(id_text);
        note.push_str(",\"params\":{\"_meta\":{");
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
    /// forwarded body's outcome. A result is matched to its request as the
    /// clients match it (see `ids.rs`), by its id alone; a result that
    /// answers none of them, or requests that disagree, echoes no `turnId`:
    /// it never keeps the server's own. Borrowed, exactly as it came, when nothing changed:
    /// errors, notifications, a result whose `_meta` is no object.
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
        self.echo_to(answer, &self.awaiting(turns), None)
    }

    /// [`Filter::echo`] on requests read once: `answer` echoed for
    /// `awaiting`; what it answers kept in `tally`, when it can be read.
    pub(crate) fn echo_to<'a>(
        &self,
        answer: &'a [u8],
        awaiting: &Awaiting,
        tally: Option<&mut Tally>,
    ) -> Option<Cow<'a, str>> {
        let text = std::str::from_utf8(answer).ok()?;
        let parser = Parser::new(&self.keys, MAX_ANSWER_DEPTH, self.reads());
        let messages = match parser.body(text, usize::MAX).ok()? {
            Body::One(message) => vec![message],
            Body::Batch(_, messages) => messages,
            Body::TooMany => return None,
        };
        let mut splices = Vec::new();
        for message in &messages {
            if message.fault.is_some() {
                return None;
            }
            if let Some(echoed) = self.echo_one(&message.doc, message.root, awaiting) {
                splices.push((message.root.value, echoed));
            }
        }
        if let Some(tally) = tally {
            tally.read(&parser, &messages);
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

    /// The requests of [`Seen::turn`](super::Seen::turn) notes, read once; a
    /// note that does not read (not one of the filter's own) is passed over.
    pub(crate) fn awaiting<'t>(&self, notes: impl IntoIterator<Item = &'t str>) -> Awaiting {
        let parser = Parser::new(&self.keys, MAX_ANSWER_DEPTH, self.reads());
        let mut awaiting = Awaiting::default();
        for note in notes {
            let Ok(message) = parser.one(note) else {
                continue;
            };
            let views = self.views(message.doc.slot(&message.root));
            let Some(primary) = views.first() else {
                continue;
            };
            let keys = ids::keys(&primary.get(Place::Id));
            if keys.is_empty() {
                continue;
            }
            let turns = views
                .iter()
                .map(|view| view.envelope.turn_id().map(|turn| turn.text.to_owned()))
                .collect();
            awaiting.add(keys, turns);
        }
        awaiting
    }

    /// One message of an answer, echoed: its new text, when that changed. A
    /// result that answers no request of `awaiting` (or requests that
    /// disagree) has its envelope removed: a `turnId` there is the server's
    /// word, not the client's.
    fn echo_one(&self, doc: &Doc, root: Entry, awaiting: &Awaiting) -> Option<String> {
        let views = self.views(doc.slot(&root));
        let primary = views.first()?;
        if !primary.is_response() || !primary.get(Place::Result).is_object() {
            return None;
        }
        let turns = awaiting.turns_for(&primary.get(Place::Id));
        let mut patch = Patch::new(doc, root);
        for (index, (pair, view)) in self.pairs.iter().zip(&views).enumerate() {
            if pair.keys.ui_key.is_some() {
                continue;
            }
            let turn = turns
                .and_then(|turns| turns.get(index))
                .and_then(Option::as_deref);
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
