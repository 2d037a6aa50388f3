//! One HTTP exchange through the middleware, as a state machine with no
//! I/O of its own: the request's body filtered, and the app's answer on its
//! way back read as the clients read it (WIRE-8), each result echoing only
//! the `turnId` of the request it answers (WIRE-7), the filter's replies
//! joined, and what cannot be read never passed on: each request still
//! waiting gets the middleware's error instead.
//!
//! A middleware hands it the app's status and headers ([`Exchange::head`]),
//! each piece of the app's body ([`Exchange::piece`]) and the body's end
//! ([`Exchange::end`]); each returns a [`Step`]: the head to send (when it
//! is known), the pieces to send, and whether the answer is over (what the
//! app still sends is dropped). Linear: each byte of an answer is looked at
//! once, and a piece held is copied once.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::events::{self, Cut, Event, Splitter};
use super::filter::Filter;
use super::options::{FilterContext, GatewayOptions};
use super::outcome::{Outcome, Verdict};
use super::own::{self, Answer, Own};
use super::reading::{Reading, reading};
use super::sessions::Sessions;
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

/// What a middleware does with a request, once begun.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Not the middleware's (a path it does not watch): to the app as it came.
    Pass,
    /// To the app as it came, its answer through the exchange (a GET stream, a DELETE).
    Watch,
    /// Read the body (up to the bound), then [`Exchange::admit`] it.
    Read,
}

/// A change to the head of the answer: a header removed (`None`) or set.
pub type Edit = (&'static str, Option<String>);

/// The head of the answer the client gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// Its status.
    pub status: u16,
    /// The changes to the app's headers, in order.
    pub edits: Vec<Edit>,
    /// The rest of the app's answer goes on as it comes: no more calls.
    pub passes: bool,
}

impl Head {
    /// `headers` (the app's, names in any case) with the edits made: each
    /// removed header's every value gone, each set one last.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::wire::Head;
    ///
    /// let head = Head { status: 200, edits: vec![("content-length", None), ("content-length", Some("2".into()))], passes: false };
    /// let edited = head.edited(&[("Content-Length", "9"), ("mcp-session-id", "s-1")]);
    /// assert_eq!(edited, [("mcp-session-id".to_owned(), "s-1".to_owned()), ("content-length".to_owned(), "2".to_owned())]);
    /// ```
    pub fn edited<N: AsRef<str>, V: AsRef<str>>(
        &self,
        headers: &[(N, V)],
    ) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| (name.as_ref().to_owned(), value.as_ref().to_owned()))
            .collect();
        for (name, value) in &self.edits {
            out.retain(|(key, _)| !key.eq_ignore_ascii_case(name));
            if let Some(value) = value {
                out.push(((*name).to_owned(), value.clone()));
            }
        }
        out
    }
}

/// A piece of the answer the client gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// These bytes of the piece just given.
    Given(Range<usize>),
    /// Bytes of the exchange's own.
    Made(Vec<u8>),
}

/// What to send of the answer now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// The head, once it is known; sent before the pieces.
    pub head: Option<Head>,
    /// The pieces, in order.
    pub pieces: Vec<Piece>,
    /// The answer is over: end it; what the app still sends is dropped.
    pub over: bool,
}

impl Step {
    fn given(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Given(last)) if last.end == range.start => last.end = range.end,
            _ => self.pieces.push(Piece::Given(range)),
        }
    }

    fn made(&mut self, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            self.pieces.push(Piece::Made(bytes));
        }
    }
}

/// How the app's answer goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
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
enum Joining {
    /// Nothing of the answer yet but whitespace.
    Start,
    /// A single message, after `[` and the replies: a `]` closes it.
    Object,
    /// A batch: its first item not yet seen.
    Items,
    /// A batch, the replies in it: the rest as it comes.
    Array,
}

/// One HTTP exchange: see the module's documentation.
#[derive(Debug)]
pub struct Exchange {
    shared: Arc<Shared>,
    start: Start,
    delete: bool,
    /// The session the request named, once.
    asked: Option<String>,
    /// The event a GET resumes its stream after (`Last-Event-ID`), once.
    last_event: Option<String>,
    /// This body's requests, as the session remembers them: for its stream's event ids.
    remembered: Option<u64>,
    /// The session the app issued that it names; or the one its answer issued.
    session: Option<String>,
    /// The request's headers that say how its body is encoded.
    content: Vec<(String, String)>,
    /// Why the middleware answered itself, when it did.
    refused: Option<String>,
    /// The requests that went on, the ids of those waiting (JSON texts), and
    /// the filter's replies to refused ones; whether the body was a batch.
    awaiting: Awaiting,
    waiting: Vec<String>,
    replies: Vec<String>,
    batch: bool,
    mode: Mode,
    status: u16,
    held: Vec<u8>,
    splitter: Splitter,
    first_event: bool,
}

/// The whitespace JSON allows around a value.
fn is_json_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Where the first byte past JSON whitespace is, from `from`.
fn past_space(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len()).find(|&at| bytes.get(at).is_some_and(|&byte| !is_json_space(byte)))
}

/// Whether `bytes`, past whitespace, begin as a JSON-RPC answer does: an object or a batch.
fn begins_answer(bytes: &[u8]) -> bool {
    matches!(
        past_space(bytes, 0).and_then(|at| bytes.get(at)),
        Some(b'{' | b'[')
    )
}

/// The UTF-8 byte-order mark, which a client's decoder drops.
const BOM: &[u8] = b"\xEF\xBB\xBF";

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
        let session = shared.sessions().witnessed(asked.as_deref());
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
            asked,
            last_event,
            remembered: None,
            session,
            content,
            refused: None,
            awaiting: Awaiting::default(),
            waiting: Vec::new(),
            replies: Vec::new(),
            batch: false,
            mode: Mode::Waiting,
            status: 0,
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
        let context = FilterContext {
            received_at,
            principal,
            session_id: self.session.clone(),
            headers: Some(std::mem::take(&mut self.content)),
        };
        let filter = &self.shared.filter;
        let outcome = filter.filter(body, &context);
        match &outcome.verdict {
            Verdict::Reject { .. } => {
                self.refused = outcome
                    .refusal
                    .as_ref()
                    .map(|refusal| refusal.code.as_str().to_owned());
                self.mode = Mode::Over;
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
            }
        }
        outcome
    }

    /// The answer when the audit sink could not keep the body's accounts
    /// (`code`: its own, or `audit-failed`): the filter's replies, and an
    /// error for each request that would have gone on; 500 when there are none.
    pub fn audit_failed(&mut self, code: &str) -> Answer {
        let code = own::sink_code(code);
        self.mode = Mode::Over;
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
        self.refused = Some(code);
        answer
    }

    /// The app's answer begins: its `status` and headers. What it says of
    /// sessions is learnt; how the rest goes on is decided.
    pub fn head<N: AsRef<str>, V: AsRef<str>>(&mut self, status: u16, headers: &[(N, V)]) -> Step {
        let named = header(headers, "mcp-session-id");
        {
            let mut sessions = self.shared.sessions();
            sessions.learn(self.delete, self.asked.as_deref(), status, named);
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
        if self.mode == Mode::Over || (!echo && !replies) {
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
    fn streaming(&self, status: u16) -> Step {
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

    /// A JSON answer held whole: echoed, the replies joined; or the
    /// middleware's own, when it cannot be read.
    fn settle(&mut self, body: &[u8]) -> Step {
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
            self.shared.filter.echo_to(json, &self.awaiting)
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
    fn instead(&mut self, why: Own) -> Step {
        let parts = self.failures(why, false);
        if parts.is_empty() {
            return self.own(502, Vec::new());
        }
        let body = own::composed(&parts, self.batch).into_bytes();
        self.own(200, body)
    }

    /// The replies and an error for each request still waiting, said to be `why`.
    fn failures(&mut self, why: Own, event: bool) -> Vec<String> {
        self.refused = Some(why.code().to_owned());
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
    fn own(&mut self, status: u16, body: Vec<u8>) -> Step {
        self.mode = Mode::Over;
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

    /// The whole events of an event stream so far, each with its data
    /// echoed; what follows the last held (up to the bound). An event that
    /// cannot be read ends the stream: an error for each request still
    /// waiting instead.
    fn events(&mut self, bytes: &[u8]) -> Step {
        let limit = self.shared.options.max_answer_bytes as usize;
        let mut step = Step::default();
        let mut start = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            match self.splitter.feed(byte) {
                None => continue,
                Some(Cut::Gap) => step.given(at..at + 1),
                Some(Cut::EventEnd) => {
                    let whole = at + 1;
                    let echoed = if self.held.is_empty() {
                        let event = bytes.get(start..at).unwrap_or_default();
                        self.event(event, limit)
                    } else {
                        let mut held = std::mem::take(&mut self.held);
                        held.extend_from_slice(bytes.get(start..at).unwrap_or_default());
                        self.event(&held, limit).map(|echoed| echoed.or(Some(held)))
                    };
                    match echoed {
                        Err(why) => return self.stream_failed(step, why),
                        Ok(None) => step.given(start..whole),
                        Ok(Some(mut out)) => {
                            out.extend_from_slice(bytes.get(at..whole).unwrap_or_default());
                            step.made(out);
                        }
                    }
                }
            }
            start = at + 1;
        }
        self.held
            .extend_from_slice(bytes.get(start..).unwrap_or_default());
        if self.held.len() > limit {
            return self.stream_failed(step, Own::AnswerTooLarge);
        }
        step
    }

    /// One event (its bytes up to the break that ends it) echoed: `None`
    /// when it goes on as it came, its new bytes (the break left to the
    /// caller) when echoing changed it; why not, when it cannot be read.
    fn event(&mut self, bytes: &[u8], limit: usize) -> Result<Option<Vec<u8>>, Own> {
        if bytes.len() > limit {
            return Err(Own::AnswerTooLarge);
        }
        let event = Event::read(bytes, std::mem::take(&mut self.first_event));
        if let (Some(session), Some(body), Some(id)) = (&self.session, self.remembered, event.id())
        {
            self.shared.sessions().stream_event(session, body, id);
        }
        let Some(data) = event.data() else {
            return Ok(None);
        };
        if !begins_answer(&data) {
            return Err(Own::AnswerNotJson);
        }
        match self.shared.filter.echo_to(&data, &self.awaiting) {
            None => Err(Own::AnswerNotJson),
            Some(Cow::Borrowed(_)) => Ok(None),
            Some(Cow::Owned(echoed)) => Ok(Some(event.with_data(echoed.as_bytes()))),
        }
    }

    /// Ends an event stream that cannot go on: after the events already
    /// read, an error for each request still waiting, as events.
    fn stream_failed(&mut self, mut step: Step, why: Own) -> Step {
        self.mode = Mode::Over;
        self.held = Vec::new();
        for error in self.failures(why, true) {
            step.made(events::event(&error));
        }
        step.over = true;
        step
    }

    /// A piece of a JSON answer with the replies joined, as it streams: a
    /// batch goes on as it came (but for whitespace before its first item),
    /// the replies after its `[`; a single message becomes the last of a
    /// batch of the replies. An answer that begins as no JSON-RPC answer
    /// does is not passed on.
    fn join(&mut self, mut joining: Joining, bytes: &[u8]) -> Step {
        let mut step = Step::default();
        let mut at = 0;
        if joining == Joining::Start {
            let Some(first) = past_space(bytes, 0) else {
                return step;
            };
            let replies = self.replies.join(",");
            match bytes.get(first) {
                Some(b'{') => {
                    step.made(format!("[{replies},").into_bytes());
                    joining = Joining::Object;
                    at = first;
                }
                Some(b'[') => {
                    step.made(format!("[{replies}").into_bytes());
                    joining = Joining::Items;
                    at = first + 1;
                }
                // Its head went already (200, JSON): the replies and the errors are its body.
                _ => {
                    let mut instead = self.instead(Own::AnswerNotJson);
                    instead.head = None;
                    return instead;
                }
            }
        }
        if joining == Joining::Items {
            let Some(item) = past_space(bytes, at) else {
                self.mode = Mode::Join(joining);
                return step;
            };
            if bytes.get(item) != Some(&b']') {
                step.made(b",".to_vec());
            }
            joining = Joining::Array;
            at = item;
        }
        self.mode = Mode::Join(joining);
        step.given(at..bytes.len());
        step
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
