//! The middleware's core for JS (feature `filter`): a [`Gateway`] made once
//! from the options, an [`Exchange`] for each request, which the package's
//! HTTP middlewares (pkg/src/lib/http/) drive through `createGateway`
//! (pkg/src/gateway.mjs), moving bytes and nothing else. Headers cross in as
//! one string, a flat list `[name, value, ...]` joined by NUL (which no
//! header holds: JS refuses one that does), one crossing however many there
//! are (a string each took 0.3 µs more a header); a body, and each piece of an answer,
//! are written by JS into the module's room for a body (`bodyRoom`), so each
//! crosses in once. What goes back is one value a call, in a compact form of
//! answer.rs: the filter's outcome, a step of the way back, or an answer of
//! the middleware's own. The options cross in as JSON text.
//!
//! Nothing here runs inside the arena's calls (`within`): an exchange keeps
//! what it learns (the requests waiting, the sessions) from call to call.

use mcp_provenance::__bindings::wire::{self, Own, SessionNews, Start, Step};
use mcp_provenance::Verdict;
use wasm_bindgen::prelude::*;

use crate::answer::Answer;
use crate::filter::{body, or_thrown, viewed};
use js_sys::Uint8Array;

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

/// An answer of the middleware's own: the compact form `own` of answer.rs.
fn answered(answer: &wire::Answer) -> Uint8Array {
    let mut out = Vec::new();
    Answer(&mut out).own(answer);
    viewed(out)
}

/// A step of the way back: the compact form `step` of answer.rs.
fn stepped(step: &Step) -> Uint8Array {
    let mut out = Vec::new();
    Answer(&mut out).step(step);
    viewed(out)
}

/// The middleware's core (`new Gateway(options)` in pkg/src/gateway.mjs):
/// its filter and options, checked once, and the sessions the app issued.
#[wasm_bindgen]
pub struct Gateway(mcp_provenance::Gateway);

#[wasm_bindgen]
impl Gateway {
    /// A gateway made from `options`, the JSON text of a plain copy with
    /// the JS names (`undefined` for the defaults); the core's error,
    /// thrown, for options it refuses.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<String>) -> Result<Gateway, JsValue> {
        or_thrown(wire::gateway_from_json(options.as_deref())).map(Gateway)
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

    /// The answer to a body past the bound.
    #[wasm_bindgen(js_name = tooLarge)]
    pub fn too_large(&mut self) -> Uint8Array {
        answered(&self.exchange.too_large())
    }

    /// The answer when the middleware cannot go on: `code` is
    /// `"body-already-read"`, else the middleware failed.
    pub fn failed(&mut self, code: &str) -> Uint8Array {
        let why = if code == Own::BodyAlreadyRead.code() {
            Own::BodyAlreadyRead
        } else {
            Own::MiddlewareFailed
        };
        answered(&self.exchange.failed(why))
    }

    /// Filters the body of `len` bytes in its room (whose text came as a JS
    /// string when `utf16`), recording `received_at` and `principal`: the
    /// compact forms `outcome` and `accounts` of answer.rs, one after the
    /// other; with `defer`, `outcome` alone, the records made by `accounts`
    /// when JS reads them.
    pub fn admit(
        &mut self,
        len: usize,
        utf16: bool,
        received_at: Option<String>,
        principal: Option<String>,
        defer: bool,
    ) -> Uint8Array {
        let mut out = Vec::new();
        if defer {
            self.exchange.defer_records();
        }
        body(len, |bytes| {
            let outcome = self.exchange.admit(bytes, received_at, principal);
            if let Verdict::Reject { status, body } = &outcome.verdict {
                self.rejected = Some(wire::Answer {
                    status: *status,
                    body: body.clone(),
                    close: false,
                });
            }
            let mut answer = Answer(&mut out);
            answer.outcome(&outcome);
            if !defer {
                answer.accounts(&outcome, utf16);
            }
        });
        viewed(out)
    }

    /// The accounts of the admitted body, of `len` bytes in its room (whose
    /// text came as a JS string when `utf16`), records and all, once
    /// records were deferred: the compact form `accounts` of answer.rs
    /// (none, unless `admit` deferred them).
    pub fn accounts(&self, len: usize, utf16: bool) -> Uint8Array {
        let mut out = Vec::new();
        body(len, |bytes| {
            if let Some(outcome) = self.exchange.accounts(bytes) {
                Answer(&mut out).accounts(&outcome, utf16);
            }
        });
        viewed(out)
    }

    /// The answer to a body the filter refused (`undefined` when it went on).
    pub fn rejected(&self) -> Option<Uint8Array> {
        self.rejected.as_ref().map(answered)
    }

    /// The answer when the audit sink failed with `code`.
    #[wasm_bindgen(js_name = auditFailed)]
    pub fn audit_failed(&mut self, code: &str) -> Uint8Array {
        answered(&self.exchange.audit_failed(code))
    }

    /// The app's answer begins: its `status` and headers, `[name, value, ...]` joined by NUL.
    pub fn head(&mut self, status: u16, headers: &str) -> Uint8Array {
        stepped(&self.exchange.head(status, &pairs(headers)))
    }

    /// A piece of the app's answer, the `len` bytes in the body's room.
    pub fn piece(&mut self, len: usize) -> Uint8Array {
        body(len, |bytes| stepped(&self.exchange.piece(bytes)))
    }

    /// The last piece of the app's answer, the `len` bytes in the body's
    /// room, and its end: one crossing for both.
    pub fn finish(&mut self, len: usize) -> Uint8Array {
        body(len, |bytes| stepped(&self.exchange.finish(bytes)))
    }

    /// The app's answer has ended.
    pub fn end(&mut self) -> Uint8Array {
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
