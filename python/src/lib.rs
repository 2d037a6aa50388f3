//! The Python package's boundary, `mcp_provenance._native`: each function
//! reads what its rules read of its Python arguments ([`read`]), hands the
//! values to the same core functions the `serde_json::Value` API runs, and
//! gives back dicts ([`write`]). Nothing here decides a rule.
//!
//! Options are read as the JSON documents they are in every runtime
//! (`{"maxIntentBytes": 512}`), so that one policy file serves the npm
//! package, the native command and Python alike.

// A panic would surface in Python as a PanicException, not the package's
// own errors: outside tests, every failure is a value (as in the core).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::string_slice,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod filter;
mod gateway;
mod provenance;
mod read;
mod write;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

use mcp_provenance::__bindings::json::Slot;
use mcp_provenance::__bindings::message::Unreadable;
use mcp_provenance::__bindings::validate as validating;
use mcp_provenance::{AuditContext, Error, ErrorKind, KeyOptions, LiftOptions, Policy, Report};

/// The exception an error raises: a `TypeError` or a `ValueError` of the
/// package's own (`mcp_provenance.errors`), carrying its stable code.
pub(crate) fn raise(py: Python<'_>, error: &Error) -> PyErr {
    let class = match error.kind() {
        ErrorKind::Input => "ProvenanceTypeError",
        ErrorKind::Range => "ProvenanceValueError",
        // A kind this build does not know of: the base of both.
        _ => "ProvenanceError",
    };
    let made = py
        .import("mcp_provenance.errors")
        .and_then(|module| module.getattr(class))
        .and_then(|class| class.call1((error.to_string(), error.code().as_str())));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(failed) => failed,
    }
}

/// A core result, or its error raised.
trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| raise(py, &error))
    }
}

impl<T> OrRaise<T> for Result<T, Unreadable> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|unreadable| raise(py, &unreadable.error()))
    }
}

/// Reads `options` whole into `T` (none given: its defaults).
pub(crate) fn options<T>(
    py: Python<'_>,
    options: Option<&Bound<'_, PyAny>>,
    parse: impl FnOnce(&Value) -> Result<T, Error>,
) -> PyResult<T> {
    let value = read::whole(options, &[]).or_raise(py)?;
    parse(&value).or_raise(py)
}

/// Checks a message (request, notification or response): a report of every
/// diagnostic, never an exception for what the message holds. For a
/// response, `options["request"]` lets it check the `turnId` echo (AI-11).
///
/// >>> from mcp_provenance import validate
/// >>> validate({"method": "tools/call", "params": {"_meta": {
/// ...     "io.modelcontextprotocol/aiInvocation": {"turnId": 7}}}})["diagnostics"][0]["message"]
/// '`turnId` must be a string, not a number'
#[pyfunction]
#[pyo3(signature = (message, options = None))]
fn validate<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let report = || -> Result<Report, Unreadable> {
        // `request` is a message of its own, read as one.
        let options_read = read::whole(options, &["request"])?;
        let keys = match validating::keys(Slot::of(&options_read)) {
            Ok(keys) => keys,
            Err(error) => {
                return Ok(Report::from(vec![validating::option_diagnostic(error)]));
            }
        };
        let request = match options.map(|options| options.cast::<PyDict>()) {
            Some(Ok(options)) => options.get_item("request").ok().flatten(),
            _ => None,
        };
        provenance::report(message, request.as_ref(), &keys)
    };
    let report = report().unwrap_or_else(|unreadable| Report::from(vec![unreadable.diagnostic()]));
    write::serialized(py, &report)
}

/// A copy of `message` made safe to persist or forward under `policy`, and
/// what changed: strings neutralized (AI-13) and cut (AI-14), malformed
/// fields dropped, intents redacted or dropped as the policy says.
///
/// >>> from mcp_provenance import sanitize
/// >>> out = sanitize({"method": "tools/call", "params": {"_meta": {
/// ...     "io.modelcontextprotocol/aiInvocation": {"userIntent": {"text": "hi"}}}}}, {"userIntent": "redact"})
/// >>> out["message"]["params"]["_meta"]
/// {'io.modelcontextprotocol/aiInvocation': {'userIntent': {'redacted': True}}}
/// >>> out["changes"]
/// [{'action': 'redacted', 'path': '/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text', 'rule': 'AI-15'}]
#[pyfunction]
#[pyo3(signature = (message, policy = None))]
fn sanitize<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
    policy: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let policy = options(py, policy, Policy::from_value)?;
    provenance::sanitize(py, message, &policy)
}

/// A copy of `request` whose `ui` entry says who initiated it, as a Host
/// does for a call its View made (UI-1..UI-5): whatever the View put there
/// is overwritten; nothing else changes.
///
/// >>> from mcp_provenance import stamp_initiator
/// >>> from_view = {"method": "tools/call", "params": {"name": "refresh",
/// ...     "_meta": {"io.modelcontextprotocol/ui": {"initiator": "model"}}}}
/// >>> stamp_initiator(from_view)["params"]["_meta"]
/// {'io.modelcontextprotocol/ui': {'initiator': 'app'}}
#[pyfunction]
#[pyo3(signature = (request, initiator = None, options = None))]
fn stamp_initiator<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    initiator: Option<&Bound<'py, PyAny>>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let keys = self::options(py, options, KeyOptions::from_value)?;
    provenance::stamp_initiator(py, request, initiator, &keys)
}

/// A copy of `request` without an `initiator`, for a call the model chose
/// (UI-2).
///
/// >>> from mcp_provenance import clear_initiator
/// >>> clear_initiator({"method": "tools/call", "params": {
/// ...     "_meta": {"io.modelcontextprotocol/ui": {"initiator": "app"}}}})["params"]
/// {'_meta': {'io.modelcontextprotocol/ui': {}}}
#[pyfunction]
#[pyo3(signature = (request, options = None))]
fn clear_initiator<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let keys = self::options(py, options, KeyOptions::from_value)?;
    provenance::clear_initiator(py, request, &keys)
}

/// A copy of `request` carrying (a copy of) `invocation` as its envelope,
/// for a call the host's model makes; an invocation that breaks AI-2..AI-7
/// raises `invalid-invocation`.
///
/// >>> from mcp_provenance import attach_invocation
/// >>> sent = attach_invocation({"method": "tools/call", "params": {"name": "q"}},
/// ...     {"model": {"name": "example-model"}, "turnId": "t-1"})
/// >>> sent["params"]["_meta"]
/// {'io.modelcontextprotocol/aiInvocation': {'model': {'name': 'example-model'}, 'turnId': 't-1'}}
#[pyfunction]
#[pyo3(signature = (request, invocation, options = None))]
fn attach_invocation<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    invocation: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let keys = self::options(py, options, KeyOptions::from_value)?;
    provenance::attach_invocation(py, request, invocation, &keys)
}

/// A copy of `response` whose envelope holds the request's `turnId`, and
/// only that (AI-11).
///
/// >>> from mcp_provenance import echo_turn_id
/// >>> request = {"id": 1, "method": "tools/call", "params": {"_meta": {
/// ...     "io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "model": {"name": "m"}}}}}
/// >>> echo_turn_id(request, {"id": 1, "result": {"content": []}})["result"]
/// {'content': [], '_meta': {'io.modelcontextprotocol/aiInvocation': {'turnId': 't-1'}}}
#[pyfunction]
#[pyo3(signature = (request, response, options = None))]
fn echo_turn_id<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    response: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let keys = self::options(py, options, KeyOptions::from_value)?;
    provenance::echo_turn_id(py, request, response, &keys)
}

/// The audit record of a request: what the client asserted, made safe
/// under `context["policy"]` (never authorization evidence, AI-10), what
/// the Host attested, what the server witnessed, and the diagnostics.
///
/// >>> from mcp_provenance import audit_record
/// >>> record = audit_record({"id": 3, "method": "tools/call", "params": {"name": "q", "_meta": {
/// ...     "io.modelcontextprotocol/ui": {"initiator": "app"}}}}, {"sessionId": "s-9"})
/// >>> record["tool"], record["hostAttested"], record["witnessed"], record["valid"]
/// ('q', {'initiator': 'app'}, {'sessionId': 's-9'}, True)
#[pyfunction]
#[pyo3(signature = (request, context = None))]
fn audit_record<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let context = options(py, context, AuditContext::from_value)?;
    provenance::audit_record(py, request, &context)
}

/// A copy of `request` with legacy `user_query` / `invocation_reason`
/// arguments lifted into the envelope (AI-17); `{"remove": True}` takes
/// them out of the (copied) arguments.
///
/// >>> from mcp_provenance import lift_legacy_arguments
/// >>> legacy = {"method": "tools/call", "params": {"name": "q",
/// ...     "arguments": {"sql": "SELECT 1", "user_query": "Show me 10 employees"}}}
/// >>> lift_legacy_arguments(legacy, {"remove": True})["params"]
/// {'name': 'q', 'arguments': {'sql': 'SELECT 1'}, '_meta': {'io.modelcontextprotocol/aiInvocation': {'userIntent': {'text': 'Show me 10 employees'}}}}
#[pyfunction]
#[pyo3(signature = (request, options = None))]
fn lift_legacy_arguments<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = self::options(py, options, LiftOptions::from_value)?;
    provenance::lift_legacy_arguments(py, request, &options)
}

/// Whether `key` is a valid `_meta` key (KEY-1); `False` for what is not a `str`.
///
/// >>> from mcp_provenance import is_valid_meta_key
/// >>> is_valid_meta_key("com.example/turn"), is_valid_meta_key("no key")
/// (True, False)
#[pyfunction]
fn is_valid_meta_key(key: &Bound<'_, PyAny>) -> bool {
    let key = key.cast::<PyString>().ok();
    key.is_some_and(|key| key.to_str().is_ok_and(mcp_provenance::is_valid_meta_key))
}

/// Whether `key` is reserved for MCP itself (KEY-2); `False` for what is not a `str`.
///
/// >>> from mcp_provenance import is_reserved_meta_key
/// >>> is_reserved_meta_key("io.modelcontextprotocol/mine"), is_reserved_meta_key("com.example/x")
/// (True, False)
#[pyfunction]
fn is_reserved_meta_key(key: &Bound<'_, PyAny>) -> bool {
    let key = key.cast::<PyString>().ok();
    key.is_some_and(|key| key.to_str().is_ok_and(mcp_provenance::is_reserved_meta_key))
}

/// Checks a policy as `sanitize` and `audit_record` would, at once: what a
/// middleware does when it is made, and a server may do with its
/// configuration when it starts.
///
/// >>> from mcp_provenance import check_policy
/// >>> check_policy({"maxIntentBytes": 512, "userIntent": "redact"})
/// >>> check_policy({"maxIntentBytes": 3})
/// Traceback (most recent call last):
///   ...
/// mcp_provenance.errors.ProvenanceValueError: policy `maxIntentBytes` must be an integer from 16 to 1048576
#[pyfunction]
#[pyo3(signature = (policy = None))]
fn check_policy(py: Python<'_>, policy: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let policy = options(py, policy, Policy::from_value)?;
    policy.check().or_raise(py)
}

/// `mcp_provenance._native`.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("AI_INVOCATION_KEY", mcp_provenance::AI_INVOCATION_KEY)?;
    module.add("UI_KEY", mcp_provenance::UI_KEY)?;
    module.add(
        "SESSION_KEY_PREFIX",
        mcp_provenance::__bindings::wire::SESSION_KEY_PREFIX,
    )?;
    module.add(
        "SESSION_TTL_SECONDS",
        mcp_provenance::__bindings::wire::SESSION_TTL_SECONDS,
    )?;
    module.add_function(wrap_pyfunction!(validate, module)?)?;
    module.add_function(wrap_pyfunction!(sanitize, module)?)?;
    module.add_function(wrap_pyfunction!(stamp_initiator, module)?)?;
    module.add_function(wrap_pyfunction!(clear_initiator, module)?)?;
    module.add_function(wrap_pyfunction!(attach_invocation, module)?)?;
    module.add_function(wrap_pyfunction!(echo_turn_id, module)?)?;
    module.add_function(wrap_pyfunction!(audit_record, module)?)?;
    module.add_function(wrap_pyfunction!(lift_legacy_arguments, module)?)?;
    module.add_function(wrap_pyfunction!(is_valid_meta_key, module)?)?;
    module.add_function(wrap_pyfunction!(is_reserved_meta_key, module)?)?;
    module.add_function(wrap_pyfunction!(check_policy, module)?)?;
    module.add_class::<provenance::Provenance>()?;
    module.add_class::<filter::PyFilter>()?;
    module.add_class::<gateway::PyGateway>()?;
    module.add_class::<gateway::PyExchange>()?;
    Ok(())
}
