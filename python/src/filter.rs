//! The wire filter for Python: a gateway's request bodies (`bytes` or
//! `str`) in, what to forward or answer out, the GIL released while the
//! core filters a body (or echoes into an answer) of a mebibyte or more.

use std::borrow::Cow;

use pyo3::marker::Ungil;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use super::{options, raise, write};
use mcp_provenance::__bindings::error;
use mcp_provenance::{Filter, FilterContext, Outcome, Seen, Verdict};

/// The wire filter: a gateway's request bodies in, what to forward or
/// answer out, every decision the core's. What no rule changed goes on byte
/// for byte (ids such as `12345678901234567890`, numbers such as `1e400`,
/// whitespace, member order); what cannot be processed is refused.
///
/// >>> from mcp_provenance import Filter
/// >>> body = b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}'
/// >>> out = Filter({"policy": {"userIntent": "redact"}})(body, {"sessionId": "s-1"})
/// >>> out["forward"] is body, out["messages"][0]["record"]["requestId"]
/// (True, 12345678901234567890)
#[pyclass(frozen, name = "Filter", module = "mcp_provenance")]
pub(super) struct PyFilter(Filter);

#[pymethods]
impl PyFilter {
    #[new]
    #[pyo3(signature = (options = None))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        self::options(py, options, Filter::from_value).map(PyFilter)
    }

    /// Filters one body (`bytes`, or `str`): `{"forward": body, "replies",
    /// ...}` or `{"reject": body, "status", ...}`, the body of the type
    /// given; never raises for what it holds.
    ///
    /// >>> from mcp_provenance import Filter
    /// >>> out = Filter()(b'{"id":1,"method":"ping","id":2}')
    /// >>> out["status"], out["reject"]
    /// (200, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a member is duplicated","data":{"code":"duplicate-member"}}}')
    #[pyo3(signature = (body, context = None))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
        context: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let context = options(py, context, FilterContext::from_value)?;
        let text = body.cast::<PyString>().ok();
        let bytes = match &text {
            Some(text) => encoded(text)?,
            None => match body.cast::<PyBytes>() {
                Ok(bytes) => Cow::Borrowed(bytes.as_bytes()),
                Err(_) => return Err(invalid(py, "the body must be bytes or str")),
            },
        };
        let filter = &self.0;
        let outcome_of = detached(py, bytes.len(), || filter.filter(&bytes, &context));
        outcome(py, &outcome_of, body, text.is_some())
    }

    /// A server's answer to a forwarded body (a JSON body, or one event's
    /// `data`; `bytes` or `str`) with each result carrying the `turnId` of
    /// the request it answers, and nothing else of the envelope (AI-11):
    /// the answer of the type given, the very object when nothing changed;
    /// `None` when it is not JSON the echo can read (answer the requests
    /// yourself then: never pass on what was not checked). `forwarded` is
    /// the outcome the filter returned for the request body.
    ///
    /// >>> from mcp_provenance import Filter
    /// >>> echo = Filter()
    /// >>> out = echo(b'{"id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","model":{"name":"m"}}}}}')
    /// >>> echo.echo(b'{"id":7,"result":{"content":[]}}', out)
    /// b'{"id":7,"result":{"content":[],"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1"}}}}'
    /// >>> echo.echo(b'{"id":', out) is None
    /// True
    fn echo<'py>(
        &self,
        py: Python<'py>,
        answer: &Bound<'py, PyAny>,
        forwarded: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let text = answer.cast::<PyString>().ok();
        let bytes = match &text {
            Some(text) => encoded(text)?,
            None => match answer.cast::<PyBytes>() {
                Ok(bytes) => Cow::Borrowed(bytes.as_bytes()),
                Err(_) => return Err(invalid(py, "the answer must be bytes or str")),
            },
        };
        let turns: Vec<Option<String>> = forwarded
            .get_item("turns")
            .and_then(|turns| turns.extract())
            .map_err(|_| {
                invalid(
                    py,
                    "echo takes the outcome the filter returned for the request body",
                )
            })?;
        let filter = &self.0;
        // The answer's new text; `Some(None)` when it goes on as it came.
        let echoed = detached(py, bytes.len(), || {
            filter
                .echo(&bytes, turns.iter().flatten().map(String::as_str))
                .map(|echoed| match echoed {
                    Cow::Borrowed(_) => None,
                    Cow::Owned(text) => Some(text),
                })
        });
        Ok(match echoed {
            None => None,
            Some(None) => Some(answer.clone()),
            Some(Some(out)) => Some(match text {
                Some(_) => PyString::new(py, &out).into_any(),
                None => PyBytes::new(py, out.as_bytes()).into_any(),
            }),
        })
    }
}

/// An outcome as Python takes it: `{"forward": body, "replies", ...}` or
/// `{"reject": body, "status", ...}`, a body of the type given (`str` when
/// `text`), the very object given when nothing changed.
pub(super) fn outcome<'py>(
    py: Python<'py>,
    outcome: &Outcome<'_>,
    body: &Bound<'py, PyAny>,
    text: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let body_of = |out: &str| -> Bound<'py, PyAny> {
        if text {
            PyString::new(py, out).into_any()
        } else {
            PyBytes::new(py, out.as_bytes()).into_any()
        }
    };
    let out = PyDict::new(py);
    match &outcome.verdict {
        Verdict::Forward {
            body: Cow::Borrowed(_),
            replies,
        } => {
            out.set_item("forward", body)?;
            out.set_item("replies", replies)?;
        }
        Verdict::Forward {
            body: changed,
            replies,
        } => {
            out.set_item("forward", body_of(changed))?;
            out.set_item("replies", replies)?;
        }
        Verdict::Reject { status, body } => {
            out.set_item("reject", body_of(body))?;
            out.set_item("status", status)?;
            out.set_item("replies", Vec::<String>::new())?;
        }
        // A verdict this build does not know of sends nothing on: fail
        // closed, with a 500 and no body.
        _ => {
            out.set_item("reject", body_of(""))?;
            out.set_item("status", 500)?;
            out.set_item("replies", Vec::<String>::new())?;
        }
    }
    out.set_item("lines", outcome.lines())?;
    let ids: Vec<Option<&str>> = outcome
        .messages
        .iter()
        .map(|seen| seen.id_text.as_deref())
        .collect();
    out.set_item("ids", ids)?;
    let turns: Vec<Option<&str>> = outcome
        .messages
        .iter()
        .map(|seen| seen.turn.as_deref())
        .collect();
    out.set_item("turns", turns)?;
    out.set_item("messages", accounts(py, &outcome.messages)?)?;
    Ok(out)
}

/// Each message's account as Python holds it, read from the JSON the core
/// writes directly (`Seen::json`, equal to what serde writes of it, at a
/// fraction of the cost).
fn accounts<'py>(py: Python<'py>, messages: &[Seen]) -> PyResult<Bound<'py, PyAny>> {
    let mut text = String::from("[");
    for (at, seen) in messages.iter().enumerate() {
        if at > 0 {
            text.push(',');
        }
        text.push_str(&seen.json());
    }
    text.push(']');
    write::json(py, &text)
}

/// The fewest bytes the core reads without the GIL: a millisecond's work or
/// more. Below it the GIL is kept. Once released, another thread running
/// Python (a sync tool, an exporter) holds it for up to the interpreter's
/// switch interval, 5 ms, before the call can return: for a body of a few
/// kilobytes, filtered in microseconds, a thousand times the work.
const DETACHED_BYTES: usize = 1 << 20;

/// `work` on `len` bytes, without the GIL when they are enough to be worth it.
pub(super) fn detached<T: Ungil>(
    py: Python<'_>,
    len: usize,
    work: impl Ungil + FnOnce() -> T,
) -> T {
    if len >= DETACHED_BYTES {
        py.detach(work)
    } else {
        work()
    }
}

/// A `TypeError` with the code `invalid-type`.
fn invalid(py: Python<'_>, message: &str) -> PyErr {
    raise(
        py,
        &error::new(mcp_provenance::Code::InvalidType, message.to_owned()),
    )
}

/// A `str` body's UTF-8; one holding a lone surrogate as the bytes it would
/// be, which are no UTF-8, so that the filter refuses it as it refuses any
/// such body (WIRE-2).
fn encoded<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match text.to_str() {
        Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
        Err(_) => {
            let raw = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
            Ok(Cow::Owned(raw.cast::<PyBytes>()?.as_bytes().to_vec()))
        }
    }
}
