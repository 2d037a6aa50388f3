//! The middleware's core for JS (feature `filter`): a [`Gateway`] made once
//! from the options, an [`Exchange`] for each request, which the package's
//! HTTP middlewares (pkg/src/lib/http/) drive through `createGateway`
//! (pkg/src/gateway.mjs), moving bytes and nothing else. Headers cross in as
//! one string, a flat list `[name, value, ...]` joined by NUL (which no
//! header holds: JS refuses one that does), one crossing however many there
//! are (a string each took 0.3 µs more a header); a body, and each piece of an answer,
//! are written by JS into the module's room for a body (`bodyRoom`), so each
//! crosses in once. What goes back is one value a call: the filter's outcome
//! in the compact form of answer.rs; a step of the way back, or an answer of
//! the middleware's own, as a plain object made by serde-wasm-bindgen.
//!
//! Nothing here runs inside the arena's calls (`within`): an exchange keeps
//! what it learns (the requests waiting, the sessions) from call to call.

use mcp_provenance::__bindings::wire::{self, Edit, Own, Piece, SessionNews, Start, Step};
use mcp_provenance::Verdict;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::answer::Answer;
use crate::filter::{body, or_thrown, value};

/// Headers as JS hands them, `[name, value, ...]` joined by NUL, as pairs.
fn pairs(headers: &str) -> Vec<(&str, &str)> {
    let items: Vec<&str> = headers.split('\0').collect();
    items
        .chunks_exact(2)
        .filter_map(|pair| match pair {
            [name, value] => Some((*name, *value)),
            _ => None,
        })
        .collect()
}

/// `value` as a plain JS value: structs as objects, bytes as a `Uint8Array`.
fn plain(value: &impl Serialize) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::new())
        .unwrap_or(JsValue::UNDEFINED)
}

/// An answer of the middleware's own, as JS takes it.
#[derive(Serialize)]
struct OwnAnswer<'a> {
    status: u16,
    /// `[name, value]` pairs.
    headers: Vec<(&'static str, String)>,
    /// JSON text, or empty.
    body: &'a str,
}

/// `{status, headers, body}`.
fn answered(answer: &wire::Answer) -> JsValue {
    plain(&OwnAnswer {
        status: answer.status,
        headers: answer.headers(),
        body: &answer.body,
    })
}

/// The head of a step, as JS takes it.
#[derive(Serialize)]
struct HeadOut<'a> {
    status: u16,
    /// `[name, value]`, the value undefined for a header removed.
    edits: &'a [Edit],
    passes: bool,
}

/// A piece of a step: `[start, end]` of the piece given, or bytes of the exchange's own.
#[derive(Serialize)]
#[serde(untagged)]
enum PieceOut<'a> {
    Given(usize, usize),
    Made(&'a serde_bytes::Bytes),
}

/// A step, as JS takes it.
#[derive(Serialize)]
struct StepOut<'a> {
    head: Option<HeadOut<'a>>,
    pieces: Vec<PieceOut<'a>>,
    over: bool,
}

/// `{head, pieces, over}`.
fn stepped(step: &Step) -> JsValue {
    plain(&StepOut {
        head: step.head.as_ref().map(|head| HeadOut {
            status: head.status,
            edits: &head.edits,
            passes: head.passes,
        }),
        pieces: step
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Given(range) => PieceOut::Given(range.start, range.end),
                Piece::Made(bytes) => PieceOut::Made(serde_bytes::Bytes::new(bytes)),
            })
            .collect(),
        over: step.over,
    })
}

/// The middleware's core (`new Gateway(options)` in pkg/src/gateway.mjs):
/// its filter and options, checked once, and the sessions the app issued.
#[wasm_bindgen]
pub struct Gateway(mcp_provenance::Gateway);

#[wasm_bindgen]
impl Gateway {
    /// A gateway made from `options`, a plain JSON copy with the JS names
    /// (`undefined` for the defaults); the core's error, thrown, for options
    /// it refuses.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &JsValue) -> Result<Gateway, JsValue> {
        or_thrown(mcp_provenance::Gateway::from_value(&value(options)?)).map(Gateway)
    }

    /// The exchange of one request: its method, the path the app routes it
    /// by, and its headers, `[name, value, ...]` joined by NUL.
    pub fn begin(&self, method: &str, path: &str, headers: &str) -> Exchange {
        Exchange {
            exchange: self.0.begin(method, path, &pairs(headers)),
            rejected: None,
        }
    }
}

/// One HTTP exchange through the middleware (src/wire/exchange.rs).
#[wasm_bindgen]
pub struct Exchange {
    exchange: wire::Exchange,
    /// The answer to a body the filter refused whole, or whose messages it all refused.
    rejected: Option<wire::Answer>,
}

#[wasm_bindgen]
impl Exchange {
    /// `"pass"` (to the app as it came), `"watch"` (its answer through the
    /// exchange) or `"read"` (read the body, then `admit` it).
    #[wasm_bindgen(getter)]
    pub fn start(&self) -> String {
        match self.exchange.start() {
            Start::Pass => "pass",
            Start::Watch => "watch",
            Start::Read => "read",
        }
        .to_owned()
    }

    /// The most bytes of the body to read.
    #[wasm_bindgen(getter, js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> usize {
        self.exchange.max_body_bytes()
    }

    /// Whether the body's `Content-Length` is past the bound already.
    #[wasm_bindgen(getter, js_name = declaredTooLarge)]
    pub fn declared_too_large(&self) -> bool {
        self.exchange.declared_too_large()
    }

    /// The session the app issued that the request names (or its answer issued).
    #[wasm_bindgen(getter)]
    pub fn session(&self) -> Option<String> {
        self.exchange.session().map(str::to_owned)
    }

    /// The key of the session the request names, not seen issued here: for
    /// a shared store to look up before the body is read.
    #[wasm_bindgen(getter, js_name = unknownSession)]
    pub fn unknown_session(&self) -> Option<String> {
        self.exchange.unknown_session()
    }

    /// A shared store says the app issued the session the request names.
    #[wasm_bindgen(js_name = issuedElsewhere)]
    pub fn issued_elsewhere(&mut self) {
        self.exchange.issued_elsewhere();
    }

    /// What the app's answer taught of sessions, for a shared store:
    /// `["issued", key]` or `["ended", key]`; `undefined` when nothing.
    #[wasm_bindgen(getter, js_name = sessionNews)]
    pub fn session_news(&self) -> Option<Vec<String>> {
        self.exchange.session_news().map(|news| match news {
            SessionNews::Issued(key) => vec!["issued".to_owned(), key.clone()],
            SessionNews::Ended(key) => vec!["ended".to_owned(), key.clone()],
        })
    }

    /// Why the middleware answered in the app's stead (a code), when it did.
    #[wasm_bindgen(getter)]
    pub fn refused(&self) -> Option<String> {
        self.exchange.refused().map(str::to_owned)
    }

    /// The ids (JSON texts, as sent) of the requests that went on.
    #[wasm_bindgen(getter)]
    pub fn waiting(&self) -> Vec<String> {
        self.exchange.waiting().to_vec()
    }

    /// Whether the body that went on was a batch.
    #[wasm_bindgen(getter)]
    pub fn batch(&self) -> bool {
        self.exchange.batch()
    }

    /// The answer to a body past the bound: `{status, headers, body}`.
    #[wasm_bindgen(js_name = tooLarge)]
    pub fn too_large(&mut self) -> JsValue {
        answered(&self.exchange.too_large())
    }

    /// The answer when the middleware cannot go on: `code` is
    /// `"body-already-read"`, else the middleware failed.
    pub fn failed(&mut self, code: &str) -> JsValue {
        let why = if code == Own::BodyAlreadyRead.code() {
            Own::BodyAlreadyRead
        } else {
            Own::MiddlewareFailed
        };
        answered(&self.exchange.failed(why))
    }

    /// Filters the body of `len` bytes in its room (whose text came as a JS
    /// string when `utf16`), recording `received_at` and `principal`: the
    /// compact form `outcome` of answer.rs.
    pub fn admit(
        &mut self,
        len: usize,
        utf16: bool,
        received_at: Option<String>,
        principal: Option<String>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        body(len, |bytes| {
            let outcome = self.exchange.admit(bytes, received_at, principal);
            if let Verdict::Reject { status, body } = &outcome.verdict {
                self.rejected = Some(wire::Answer {
                    status: *status,
                    body: body.clone(),
                    close: false,
                });
            }
            Answer(&mut out).outcome(&outcome, utf16);
        });
        out
    }

    /// The answer to a body the filter refused (`undefined` when it went on).
    pub fn rejected(&self) -> JsValue {
        self.rejected.as_ref().map_or(JsValue::UNDEFINED, answered)
    }

    /// The answer when the audit sink failed with `code`.
    #[wasm_bindgen(js_name = auditFailed)]
    pub fn audit_failed(&mut self, code: &str) -> JsValue {
        answered(&self.exchange.audit_failed(code))
    }

    /// The app's answer begins: its `status` and headers, `[name, value, ...]` joined by NUL.
    pub fn head(&mut self, status: u16, headers: &str) -> JsValue {
        stepped(&self.exchange.head(status, &pairs(headers)))
    }

    /// A piece of the app's answer, the `len` bytes in the body's room.
    pub fn piece(&mut self, len: usize) -> JsValue {
        body(len, |bytes| stepped(&self.exchange.piece(bytes)))
    }

    /// The last piece of the app's answer, the `len` bytes in the body's
    /// room, and its end: one crossing for both.
    pub fn finish(&mut self, len: usize) -> JsValue {
        body(len, |bytes| stepped(&self.exchange.finish(bytes)))
    }

    /// The app's answer has ended.
    pub fn end(&mut self) -> JsValue {
        stepped(&self.exchange.end())
    }

    /// Keeps what the client gets for each request that goes on: called
    /// before `admit` by a middleware with an audit sink.
    #[wasm_bindgen(js_name = keepOutcome)]
    pub fn keep_outcome(&mut self) {
        self.exchange.keep_outcome();
    }

    /// The exchange's outcome account as its JSON line, once the answer is
    /// over: `ms` how long it took, `pid` and `host` the worker's, where
    /// the runtime has them; `undefined` unless `keepOutcome` was called.
    pub fn outcome(&self, ms: f64, pid: Option<u32>, host: Option<String>) -> Option<String> {
        (self.exchange)
            .outcome(ms, pid, host.as_deref())
            .map(|outcome| outcome.json())
    }
}
