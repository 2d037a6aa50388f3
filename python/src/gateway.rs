//! The middleware's core for Python: a [`Gateway`] made once from the
//! options, an [`Exchange`] for each request, which the ASGI middleware
//! (`mcp_provenance.asgi`) drives with the request and the app's answer,
//! moving bytes and nothing else. Headers cross as ASGI has them, `bytes`
//! pairs read as Latin-1; every own answer as `(status, headers, body)`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use super::filter::{detached, outcome};
use super::options;
use super::write::json;
use mcp_provenance::__bindings::wire::{self, Answer, Own, Piece, SessionNews, Start, Step};

/// A header pair of ASGI's, as text: its bytes read as Latin-1.
type Pair = (String, String);

/// ASGI's headers (`[(bytes, bytes), ...]`) as text pairs.
fn pairs(headers: &Bound<'_, PyAny>) -> PyResult<Vec<Pair>> {
    let latin1 = |bytes: &[u8]| {
        bytes
            .iter()
            .map(|&byte| char::from(byte))
            .collect::<String>()
    };
    let mut out = Vec::new();
    for pair in headers.try_iter()? {
        let (name, value): (Vec<u8>, Vec<u8>) = pair?.extract()?;
        out.push((latin1(&name), latin1(&value)));
    }
    Ok(out)
}

/// Text pairs as ASGI's headers; a character past Latin-1 (none the core writes) as `?`.
fn asgi<'py>(
    py: Python<'py>,
    headers: &[(impl AsRef<str>, impl AsRef<str>)],
) -> PyResult<Bound<'py, PyList>> {
    let latin1 = |text: &str| {
        text.chars()
            .map(|c| u8::try_from(c).unwrap_or(b'?'))
            .collect::<Vec<u8>>()
    };
    let items = headers.iter().map(|(name, value)| {
        (
            PyBytes::new(py, &latin1(name.as_ref())),
            PyBytes::new(py, &latin1(value.as_ref())),
        )
    });
    PyList::new(py, items)
}

/// An own answer as `(status, headers, body)`.
fn answered<'py>(py: Python<'py>, answer: &Answer) -> PyResult<Bound<'py, PyTuple>> {
    let headers = asgi(py, &answer.headers())?;
    (
        answer.status,
        headers,
        PyBytes::new(py, answer.body.as_bytes()),
    )
        .into_pyobject(py)
}

/// The middleware's core: the filter and the middleware's options, checked
/// once, and the sessions the app issued.
///
/// >>> from mcp_provenance._native import Gateway
/// >>> gateway = Gateway({"paths": ["/mcp"], "policy": {"userIntent": "redact"}})
/// >>> [gateway.begin(method, path, []).start for method, path in (("POST", "/mcp/"), ("GET", "/mcp"), ("POST", "/token"))]
/// ['read', 'watch', 'pass']
#[pyclass(frozen, name = "Gateway", module = "mcp_provenance")]
pub(super) struct PyGateway(mcp_provenance::Gateway);

#[pymethods]
impl PyGateway {
    #[new]
    #[pyo3(signature = (options = None))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        self::options(py, options, mcp_provenance::Gateway::from_value).map(PyGateway)
    }

    /// The exchange of one request: its method, the path the app routes it
    /// by, and its ASGI headers.
    fn begin(&self, method: &str, path: &str, headers: &Bound<'_, PyAny>) -> PyResult<PyExchange> {
        let headers = pairs(headers)?;
        Ok(PyExchange {
            exchange: self.0.begin(method, path, &headers),
            headers: Vec::new(),
            rejected: None,
        })
    }
}

/// One HTTP exchange through the middleware (src/wire/exchange.rs).
#[pyclass(name = "Exchange", module = "mcp_provenance")]
pub(super) struct PyExchange {
    exchange: wire::Exchange,
    /// The app's headers, kept from its `http.response.start` until the
    /// head the client gets is known.
    headers: Vec<Pair>,
    /// The answer to a body the filter refused whole, or whose messages it all refused.
    rejected: Option<Answer>,
}

#[pymethods]
impl PyExchange {
    /// `"pass"` (to the app as it came), `"watch"` (its answer through the
    /// exchange), or `"read"` (read the body, then `admit` it).
    #[getter]
    fn start(&self) -> &'static str {
        match self.exchange.start() {
            Start::Pass => "pass",
            Start::Watch => "watch",
            Start::Read => "read",
        }
    }

    /// The most bytes of the body to read.
    #[getter]
    fn max_body_bytes(&self) -> usize {
        self.exchange.max_body_bytes()
    }

    /// Whether the body's `Content-Length` is past the bound already.
    #[getter]
    fn declared_too_large(&self) -> bool {
        self.exchange.declared_too_large()
    }

    /// The session the app issued that the request names (or its answer issued).
    #[getter]
    fn session(&self) -> Option<&str> {
        self.exchange.session()
    }

    /// The key of the session the request names, not seen issued here: for
    /// a shared store to look up before the body is read.
    #[getter]
    fn unknown_session(&self) -> Option<String> {
        self.exchange.unknown_session()
    }

    /// A shared store says the app issued the session the request names.
    fn issued_elsewhere(&mut self) {
        self.exchange.issued_elsewhere();
    }

    /// What the app's answer taught of sessions, for a shared store:
    /// `("issued", key)` or `("ended", key)`; `None` when nothing.
    #[getter]
    fn session_news(&self) -> Option<(&'static str, &str)> {
        self.exchange.session_news().map(|news| match news {
            SessionNews::Issued(key) => ("issued", key.as_str()),
            SessionNews::Ended(key) => ("ended", key.as_str()),
        })
    }

    /// Why the middleware answered in the app's stead, when it did.
    #[getter]
    fn refused(&self) -> Option<&str> {
        self.exchange.refused()
    }

    /// The answer to a body past the bound (413, the connection closed).
    fn too_large<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        answered(py, &self.exchange.too_large())
    }

    /// The answer when the middleware itself failed.
    fn failed<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        answered(py, &self.exchange.failed(Own::MiddlewareFailed))
    }

    /// Filters the body: the filter's outcome (as `Filter` gives it), with
    /// the witnessed session, `received_at` and `principal` in each record;
    /// without `accounts`, what it forwards alone (no sink reads the rest),
    /// no record made.
    #[pyo3(signature = (body, received_at = None, principal = None, accounts = true))]
    fn admit<'py>(
        &mut self,
        py: Python<'py>,
        body: &Bound<'py, PyBytes>,
        received_at: Option<String>,
        principal: Option<String>,
        accounts: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let bytes = body.as_bytes();
        let exchange = &mut self.exchange;
        if !accounts {
            exchange.defer_records();
        }
        let outcome_of = detached(py, bytes.len(), || {
            exchange.admit(bytes, received_at, principal)
        });
        if let mcp_provenance::Verdict::Reject { status, body } = &outcome_of.verdict {
            self.rejected = Some(Answer {
                status: *status,
                body: body.clone(),
                close: false,
            });
        }
        if accounts {
            return outcome(py, &outcome_of, body.as_any(), false);
        }
        let out = PyDict::new(py);
        if let mcp_provenance::Verdict::Forward { body: forward, .. } = &outcome_of.verdict {
            match forward {
                std::borrow::Cow::Borrowed(_) => out.set_item("forward", body)?,
                std::borrow::Cow::Owned(changed) => {
                    out.set_item("forward", PyBytes::new(py, changed.as_bytes()))?
                }
            }
        }
        Ok(out)
    }

    /// The answer to a body the filter refused whole, or whose messages it
    /// all refused: `(status, headers, body)`.
    fn rejected<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.rejected
            .as_ref()
            .map(|answer| answered(py, answer))
            .transpose()
    }

    /// The answer when the audit sink failed with `code`.
    fn audit_failed<'py>(&mut self, py: Python<'py>, code: &str) -> PyResult<Bound<'py, PyTuple>> {
        answered(py, &self.exchange.audit_failed(code))
    }

    /// The app's answer begins: `(head, pieces, over)`, `head` `None` until
    /// the client's is known, else `(status, headers, passes)`.
    fn head<'py>(
        &mut self,
        py: Python<'py>,
        status: u16,
        headers: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        self.headers = pairs(headers)?;
        let step = self.exchange.head(status, &self.headers);
        self.step(py, step, &[])
    }

    /// A piece of the app's body: `(head, pieces, over)`.
    fn piece<'py>(
        &mut self,
        py: Python<'py>,
        body: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let bytes = body.as_bytes();
        let step = self.exchange.piece(bytes);
        self.step(py, step, bytes)
    }

    /// The app's body has ended: `(head, pieces, over)`.
    fn end<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let step = self.exchange.end();
        self.step(py, step, &[])
    }

    /// Keeps what the client gets for each request that goes on, for
    /// `outcome`: called before `admit` by a middleware with an audit sink.
    fn keep_outcome(&mut self) {
        self.exchange.keep_outcome();
    }

    /// The exchange's outcome, once the answer is over: `(account, line)`,
    /// the account as a dict and its JSON line; `ms` how long it took, `pid`
    /// and `host` the worker's. `None` unless `keep_outcome` was called.
    #[pyo3(signature = (ms, pid = None, host = None))]
    fn outcome<'py>(
        &self,
        py: Python<'py>,
        ms: f64,
        pid: Option<u32>,
        host: Option<&str>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, String)>> {
        let Some(outcome) = self.exchange.outcome(ms, pid, host) else {
            return Ok(None);
        };
        let line = outcome.json();
        Ok(Some((json(py, &line)?, line)))
    }

    /// The last piece of the app's body, and its end, in one step: `piece`
    /// then `end` (most answers come in one piece: one crossing for both).
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
        body: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let bytes = body.as_bytes();
        let step = self.exchange.finish(bytes);
        self.step(py, step, bytes)
    }
}

impl PyExchange {
    /// A step as Python takes it; `given` the piece its ranges are of.
    fn step<'py>(
        &self,
        py: Python<'py>,
        step: Step,
        given: &[u8],
    ) -> PyResult<Bound<'py, PyTuple>> {
        let head = match &step.head {
            None => None,
            Some(head) => Some((
                head.status,
                asgi(py, &head.edited(&self.headers))?,
                head.passes,
            )),
        };
        let pieces = step.pieces.iter().map(|piece| match piece {
            Piece::Given(range) => PyBytes::new(py, given.get(range.clone()).unwrap_or_default()),
            Piece::Made(bytes) => PyBytes::new(py, bytes),
        });
        (head, PyList::new(py, pieces)?, step.over).into_pyobject(py)
    }
}
