//! One HTTP exchange through the middleware, as a state machine with no
//! I/O of its own: the request's body filtered, and the app's answer on its
//! way back read as the clients read it (WIRE-8), each result echoing only
//! the `turnId` of the request it answers (WIRE-7), the filter's replies
//! joined, and what cannot be read never passed on: each request still
//! waiting gets the middleware's error instead.
//!
//! A middleware hands it the app's status and headers ([`Exchange::head`]),
//! each piece of the app's body ([`Exchange::piece`]) and the body's end
//! ([`Exchange::end`]), or its last piece with its end
//! ([`Exchange::finish`]); each returns a [`Step`]: the head to send (when it
//! is known), the pieces to send, and whether the answer is over (what the
//! app still sends is dropped). Linear: each byte of an answer is looked at
//! once, and a piece held is copied once.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::events::{self, Splitter};
use super::filter::Filter;
use super::options::{FilterContext, GatewayOptions};
use super::outcome::{Outcome, Verdict};
use super::own::{self, Answer, Own};
use super::reading::{Reading, is_json_space, reading};
use super::sessions::Sessions;
use super::step::{Head, Piece, Start, Step};
use super::store::SessionNews;
use super::tally::Tally;
use super::turns::Awaiting;

/// What every exchange of a gateway shares.
#[derive(Debug)]
pub(super) struct Shared {
    pub filter: Filter,
    pub options: GatewayOptions,
    sessions: Mutex<Sessions>,
}

impl Shared {
    pub(super) fn new(filter: Filter, options: GatewayOptions, sessions: Mutex<Sessions>) -> Self {
        Shared {
            filter,
            options,
            sessions,
        }
    }

    /// The sessions, whatever a thread that held them before did.
    pub(super) fn sessions(&self) -> MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How the app's answer goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// Not decided yet: no head so far.
    Waiting,
    /// As it comes.
    Pass,
    /// A JSON answer held whole, to echo into and join the replies to.
    Hold,
    /// An event stream, event by event, each echoed.
    Events,
    /// An event stream as it comes, after the replies as events.
    Stream,
    /// A JSON answer as it comes, the replies joined (not echoing).
    Join(Joining),
    /// The middleware answered: the rest is dropped.
    Over,
}

/// How far the replies are joined to a JSON answer that streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Joining {
    /// Nothing of the answer yet but whitespace.
    Start,
    /// A single message, after `[` and the replies: a `]` closes it.
    Object,
    /// A batch: its first item not yet seen.
    Items,
    /// A batch, the replies in it: the rest as it comes.
    Array,
}

/// When an exchange's audit records are made.
#[derive(Debug)]
pub(super) enum Records {
    /// As the body is admitted.
    Now,
    /// When asked for ([`Exchange::accounts`]): the context the body was
    /// admitted in, once it was.
    Later(Option<FilterContext>),
}

/// One HTTP exchange: see the module's documentation.
#[derive(Debug)]
pub struct Exchange {
    pub(super) shared: Arc<Shared>,
    pub(super) start: Start,
    pub(super) delete: bool,
    /// A HEAD: its answer has no body.
    pub(super) bodiless: bool,
    /// The session the request named, once.
    pub(super) asked: Option<String>,
    /// The event a GET resumes its stream after (`Last-Event-ID`), once.
    pub(super) last_event: Option<String>,
    /// This body's requests, as the session remembers them: for its stream's event ids.
    pub(super) remembered: Option<u64>,
    /// The session the app issued that it names; or the one its answer issued.
    pub(super) session: Option<String>,
    /// Whether the session the request names, not known here, may be
    /// looked up in a shared store: until the body is admitted or the
    /// answer begins.
    pub(super) unknown: bool,
    /// What the app's answer taught of sessions, for a shared store.
    pub(super) news: Option<SessionNews>,
    /// The request's headers that say how its body is encoded.
    pub(super) content: Vec<(String, String)>,
    /// Why the middleware answered itself, when it did.
    pub(super) refused: Option<String>,
    /// The requests that went on, the ids of those waiting (JSON texts), and
    /// the filter's replies to refused ones; whether the body was a batch.
    pub(super) awaiting: Awaiting,
    pub(super) waiting: Vec<String>,
    pub(super) replies: Vec<String>,
    pub(super) batch: bool,
    pub(super) mode: Mode,
    pub(super) status: u16,
    /// The status the client was sent, once it was.
    pub(super) sent: Option<u16>,
    /// What the client got for each request that went on, when the outcome is kept.
    pub(super) tally: Option<Box<Tally>>,
    pub(super) records: Records,
    pub(super) held: Vec<u8>,
    pub(super) splitter: Splitter,
    pub(super) first_event: bool,
}

/// The one value of the header `name`; `None` when absent or given twice.
fn header<'h, N: AsRef<str>, V: AsRef<str>>(headers: &'h [(N, V)], name: &str) -> Option<&'h str> {
    let mut values = headers
        .iter()
        .filter(|(key, _)| key.as_ref().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_ref());
    match (values.next(), values.next()) {
        (Some(value), None) => Some(value),
        _ => None,
    }
}

impl Exchange {
    pub(super) fn new<N: AsRef<str>, V: AsRef<str>>(
        shared: Arc<Shared>,
        start: Start,
        method: &str,
        headers: &[(N, V)],
    ) -> Self {
        let asked = header(headers, "mcp-session-id").map(str::to_owned);
        let last_event = header(headers, "last-event-id").map(str::to_owned);
        // A request not the middleware's is looked at no further.
        let session = match start {
            Start::Pass => None,
            _ => shared.sessions().witnessed(asked.as_deref()),
        };
        let unknown = start != Start::Pass && session.is_none() && asked.is_some();
        let content = if start == Start::Read {
            headers
                .iter()
                .filter(|(name, _)| {
                    name.as_ref().len() > 8
                        && name
                            .as_ref()
                            .get(..8)
                            .is_some_and(|p| p.eq_ignore_ascii_case("content-"))
                })
                .map(|(name, value)| (name.as_ref().to_owned(), value.as_ref().to_owned()))
                .collect()
        } else {
            Vec::new()
        };
        Exchange {
            shared,
            start,
            delete: method.eq_ignore_ascii_case("DELETE"),
            bodiless: method.eq_ignore_ascii_case("HEAD"),
            asked,
            last_event,
            remembered: None,
            session,
            unknown,
            news: None,
            content,
            refused: None,
            awaiting: Awaiting::default(),
            waiting: Vec::new(),
            replies: Vec::new(),
            batch: false,
            mode: Mode::Waiting,
            status: 0,
            sent: None,
            tally: None,
            records: Records::Now,
            held: Vec::new(),
            splitter: Splitter::default(),
            first_event: true,
        }
    }

    /// What the middleware does with the request.
    pub fn start(&self) -> Start {
        self.start
    }

    /// The most bytes of the body to read ([`Start::Read`]): past it, [`Exchange::too_large`].
    pub fn max_body_bytes(&self) -> usize {
        self.shared.options.max_body_bytes as usize
    }

    /// Whether the body's declared `Content-Length` is already past the bound.
    pub fn declared_too_large(&self) -> bool {
        header(&self.content, "content-length")
            .and_then(|length| length.trim().parse::<u64>().ok())
            .is_some_and(|length| length > u64::from(self.shared.options.max_body_bytes))
    }

    /// The session the app issued that the request named (or that its
    /// answer issued): what a record may call witnessed.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Why the middleware answered in the app's stead (a code), when it did.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// The ids (JSON texts, as sent) of the requests that went on, waiting for their answers.
    pub fn waiting(&self) -> &[String] {
        &self.waiting
    }

    /// Whether the body that went on was a batch (its own answers are one too).
    pub fn batch(&self) -> bool {
        self.batch
    }

    /// The answer to a body past the bound: 413, and the connection closed
    /// (the rest of the body is not read).
    pub fn too_large(&mut self) -> Answer {
        self.refused = Some(Own::BodyTooLarge.code().to_owned());
        self.sent = Some(413);
        let limit = self.max_body_bytes();
        Answer {
            close: true,
            ..Answer::new(
                413,
                Own::BodyTooLarge.error("null", Own::BodyTooLarge.code(), limit, false),
            )
        }
    }

    /// The answer when the middleware cannot go on: `why` is
    /// [`Own::BodyAlreadyRead`] or [`Own::MiddlewareFailed`] (500).
    pub fn failed(&mut self, why: Own) -> Answer {
        self.refused = Some(why.code().to_owned());
        self.mode = Mode::Over;
        self.sent = Some(500);
        Answer::new(500, why.error("null", why.code(), 0, false))
    }

    /// Filters the body: what the filter made of it, for the audit sink
    /// (each message's account) and the app (what it forwards), with the
    /// witnessed session and what the middleware knows (`received_at`, the
    /// `principal` the stack authenticated). A body refused whole is the
    /// verdict's answer.
    pub fn admit<'b>(
        &mut self,
        body: &'b [u8],
        received_at: Option<String>,
        principal: Option<String>,
    ) -> Outcome<'b> {
        if let Some(tally) = self.tally.as_deref_mut() {
            tally.received(received_at.clone());
        }
        self.unknown = false;
        let context = FilterContext {
            received_at,
            principal,
            session_id: self.session.clone(),
            headers: Some(std::mem::take(&mut self.content)),
        };
        let filter = &self.shared.filter;
        let outcome = match &mut self.records {
            Records::Now => filter.filter(body, &context),
            Records::Later(admitted) => {
                let outcome = filter.filter_without_records(body, &context);
                *admitted = Some(context);
                outcome
            }
        };
        match &outcome.verdict {
            Verdict::Reject { status, .. } => {
                self.refused = outcome
                    .refusal
                    .as_ref()
                    .map(|refusal| refusal.code.as_str().to_owned());
                self.mode = Mode::Over;
                self.sent = Some(*status);
            }
            Verdict::Forward { body, replies } => {
                self.batch = body.bytes().find(|&byte| !is_json_space(byte)) == Some(b'[');
                self.replies.clone_from(replies);
                self.waiting = outcome
                    .messages
                    .iter()
                    .filter(|seen| seen.turn.is_some())
                    .filter_map(|seen| seen.id_text.clone())
                    .collect();
                self.awaiting = filter.awaiting(
                    outcome
                        .messages
                        .iter()
                        .filter_map(|seen| seen.turn.as_deref()),
                );
                if let Some(session) = &self.session {
                    self.remembered = self.shared.sessions().remember(session, &self.awaiting);
                }
                if let Some(tally) = self.tally.as_deref_mut() {
                    tally.went_on(&outcome.messages);
                }
            }
        }
        outcome
    }

    /// Makes no audit record as [`Exchange::admit`] filters the body, for
    /// a middleware that keeps no audit: its outcome's messages have none,
    /// and [`Exchange::accounts`] makes them when they are asked for after
    /// all. Called before `admit`.
    pub fn defer_records(&mut self) {
        self.records = Records::Later(None);
    }

    /// The outcome of `body`, the body admitted, records and all, as
    /// [`Exchange::admit`] would have made it without
    /// [`Exchange::defer_records`]: `None` unless the records were
    /// deferred and the body admitted. The filter is a function of the
    /// body and the context it was admitted in, so the two agree; nothing
    /// of the exchange changes.
    pub fn accounts<'b>(&self, body: &'b [u8]) -> Option<Outcome<'b>> {
        match &self.records {
            Records::Later(Some(context)) => Some(self.shared.filter.filter(body, context)),
            _ => None,
        }
    }

    /// The answer when the audit sink could not keep the body's accounts
    /// (`code`: its own, or `audit-failed`): the filter's replies, and an
    /// error for each request that would have gone on; 500 when there are none.
    pub fn audit_failed(&mut self, code: &str) -> Answer {
        let code = own::sink_code(code);
        self.mode = Mode::Over;
        if let Some(tally) = self.tally.as_deref_mut() {
            tally.failed(Own::AuditFailed.rpc());
        }
        let mut parts = self.replies.clone();
        parts.extend(
            self.waiting
                .iter()
                .map(|id| Own::AuditFailed.error(id, &code, 0, false)),
        );
        let answer = if parts.is_empty() {
            Answer::new(500, Own::AuditFailed.error("null", &code, 0, false))
        } else {
            Answer::new(200, own::composed(&parts, self.batch))
        };
        self.sent = Some(answer.status);
        self.refused = Some(code);
        answer
    }

    /// The app's answer begins: its `status` and headers. What it says of
    /// sessions is learnt; how the rest goes on is decided.
    pub fn head<N: AsRef<str>, V: AsRef<str>>(&mut self, status: u16, headers: &[(N, V)]) -> Step {
        let named = header(headers, "mcp-session-id");
        self.unknown = false;
        {
            let mut sessions = self.shared.sessions();
            self.news = sessions.learn(self.delete, self.asked.as_deref(), status, named);
            if let Some(issued) = sessions.witnessed(named) {
                self.session = Some(issued);
            }
            if self.start == Start::Watch {
                if let Some(session) = sessions.witnessed(self.asked.as_deref()) {
                    self.awaiting = sessions.recalled(&session, self.last_event.as_deref());
                }
            }
        }
        self.status = status;
        let echo = self.shared.options.echo;
        let replies = !self.replies.is_empty();
        // An answer with no body (to a HEAD, a 204, a 304) has nothing to read, nor a length to set.
        let bodiless = self.bodiless || matches!(status, 100..=199 | 204 | 304);
        if self.mode == Mode::Over || (!echo && !replies) || (bodiless && !replies) {
            return self.pass(status);
        }
        self.mode = match reading(headers) {
            Reading::Events if echo => Mode::Events,
            Reading::Events => Mode::Stream,
            Reading::Json if echo => Mode::Hold,
            Reading::Json => Mode::Join(Joining::Start),
            Reading::Plain if replies => Mode::Hold,
            Reading::Plain => return self.pass(status),
            Reading::Unreadable => return self.instead(Own::AnswerUnreadable),
        };
        match self.mode {
            Mode::Events | Mode::Stream => {
                let mut step = self.streaming(status);
                for reply in &self.replies {
                    step.made(events::event(reply));
                }
                step
            }
            Mode::Join(_) => {
                let mut step = self.streaming(200);
                if let Some(head) = &mut step.head {
                    head.edits
                        .push(("content-type", Some("application/json".to_owned())));
                }
                step
            }
            _ => Step::default(),
        }
    }

    /// The head of an answer that goes on as it comes.
    fn pass(&mut self, status: u16) -> Step {
        self.mode = Mode::Pass;
        self.sent = Some(status);
        Step {
            head: Some(Head {
                status,
                edits: Vec::new(),
                passes: true,
            }),
            ..Step::default()
        }
    }

    /// The head of an answer that streams, changed: its length unknown.
    fn streaming(&mut self, status: u16) -> Step {
        self.sent = Some(status);
        Step {
            head: Some(Head {
                status,
                edits: vec![("content-length", None)],
                passes: false,
            }),
            ..Step::default()
        }
    }

    /// A piece of the app's answer.
    pub fn piece(&mut self, bytes: &[u8]) -> Step {
        match self.mode {
            Mode::Waiting | Mode::Pass | Mode::Stream => {
                let mut step = Step::default();
                step.given(0..bytes.len());
                step
            }
            Mode::Over => Step::default(),
            Mode::Hold => {
                if self.held.len() + bytes.len() > self.shared.options.max_answer_bytes as usize {
                    return self.instead(Own::AnswerTooLarge);
                }
                self.held.extend_from_slice(bytes);
                Step::default()
            }
            Mode::Events => self.events(bytes),
            Mode::Join(joining) => self.join(joining, bytes),
        }
    }

    /// The last piece of the app's answer and its end, in one step: what
    /// [`piece`](Self::piece) then [`end`](Self::end) give, together (most
    /// answers come in one piece: one call, and an answer held from its
    /// first byte to its last is not copied to be held).
    pub fn finish(&mut self, bytes: &[u8]) -> Step {
        if matches!(self.mode, Mode::Hold) && self.held.is_empty() {
            if bytes.len() > self.shared.options.max_answer_bytes as usize {
                return self.instead(Own::AnswerTooLarge);
            }
            self.mode = Mode::Over;
            return self.settle(bytes);
        }
        let mut step = self.piece(bytes);
        if !step.over {
            let end = self.end();
            step.head = step.head.or(end.head);
            step.over = end.over;
            step.pieces.extend(end.pieces);
        }
        step
    }

    /// The app's answer has ended.
    pub fn end(&mut self) -> Step {
        let mode = std::mem::replace(&mut self.mode, Mode::Over);
        match mode {
            Mode::Hold => {
                let held = std::mem::take(&mut self.held);
                self.settle(&held)
            }
            Mode::Join(Joining::Object) => Step {
                pieces: vec![Piece::Made(b"]".to_vec())],
                over: true,
                ..Step::default()
            },
            Mode::Join(Joining::Start) => Step {
                pieces: vec![Piece::Made(
                    format!("[{}]", self.replies.join(",")).into_bytes(),
                )],
                over: true,
                ..Step::default()
            },
            // An event the stream did not end is dropped, as a client drops it.
            _ => Step {
                over: true,
                ..Step::default()
            },
        }
    }
}
