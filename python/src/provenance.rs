//! `Provenance`: a policy (keys and all) read once, and every function of
//! the package under it; and those functions' bodies, which the module's
//! own functions run with the options of each call.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::{OrRaise, options, raise, read, write};
use mcp_provenance::__bindings::audit::POLICY;
use mcp_provenance::__bindings::error;
use mcp_provenance::__bindings::message::Unreadable;
use mcp_provenance::__bindings::validate as validating;
use mcp_provenance::__bindings::{echo, initiator, invocation, legacy};
use mcp_provenance::{
    AuditContext, Code, Initiator, KeyOptions, LiftOptions, Policy, Report, ValidateOptions,
};

/// The package's functions with a policy bound once, for a deployment that
/// uses a vendor key or its own policy: the options are read and checked
/// when it is made (a `ProvenanceValueError` for a bad one), never again.
///
/// >>> from mcp_provenance import Provenance
/// >>> mp = Provenance({"invocationKey": "com.example/aiInvocation", "userIntent": "redact"})
/// >>> request = {"method": "tools/call", "params": {"_meta": {
/// ...     "com.example/aiInvocation": {"userIntent": {"text": "hi"}}}}}
/// >>> mp.sanitize(request)["message"]["params"]["_meta"]
/// {'com.example/aiInvocation': {'userIntent': {'redacted': True}}}
/// >>> mp.invocation_key, mp.ui_key
/// ('com.example/aiInvocation', 'io.modelcontextprotocol/ui')
#[pyclass(frozen, name = "Provenance", module = "mcp_provenance")]
pub(crate) struct Provenance {
    policy: Policy,
}

#[pymethods]
impl Provenance {
    #[new]
    #[pyo3(signature = (options = None))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let policy = crate::options(py, options, Policy::from_value)?;
        Ok(Provenance { policy })
    }

    /// The envelope's key in force.
    #[getter]
    fn invocation_key(&self) -> &str {
        self.policy.keys.invocation_key()
    }

    /// The `ui` entry's key in force.
    #[getter]
    fn ui_key(&self) -> &str {
        self.policy.keys.ui_key()
    }

    /// `validate` under the bound keys; `request`, for a response, the
    /// request it answers.
    #[pyo3(signature = (message, request = None))]
    fn validate<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
        request: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let report = report(message, request, &self.policy.keys)
            .unwrap_or_else(|unreadable| Report::from(vec![unreadable.diagnostic()]));
        write::serialized(py, &report)
    }

    /// `sanitize` under the bound policy.
    fn sanitize<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        sanitize(py, message, &self.policy)
    }

    /// `stamp_initiator` under the bound keys.
    #[pyo3(signature = (request, initiator = None))]
    fn stamp_initiator<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
        initiator: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        stamp_initiator(py, request, initiator, &self.policy.keys)
    }

    /// `clear_initiator` under the bound keys.
    fn clear_initiator<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        clear_initiator(py, request, &self.policy.keys)
    }

    /// `attach_invocation` under the bound keys.
    fn attach_invocation<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
        invocation: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        attach_invocation(py, request, invocation, &self.policy.keys)
    }

    /// `echo_turn_id` under the bound keys.
    fn echo_turn_id<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
        response: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        echo_turn_id(py, request, response, &self.policy.keys)
    }

    /// `audit_record` under the bound policy: `context` holds the server's
    /// own facts (`receivedAt`, `principal`, `sessionId`); its policy is
    /// the bound one, so a context naming one is refused.
    ///
    /// >>> from mcp_provenance import Provenance
    /// >>> Provenance().audit_record({"method": "ping"}, {"policy": {}})
    /// Traceback (most recent call last):
    ///   ...
    /// mcp_provenance.errors.ProvenanceValueError: a Provenance's audit context takes no `policy`: the policy is the one it was made with
    #[pyo3(signature = (request, context = None))]
    fn audit_record<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
        context: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut context = options(py, context, AuditContext::from_value)?;
        if context.policy.is_some() {
            let message = format!(
                "a Provenance's audit context takes no `{POLICY}`: the policy is the one it was made with"
            );
            return Err(raise(py, &error::new(Code::InvalidOption, message)));
        }
        context.policy = Some(self.policy.clone());
        audit_record(py, request, &context)
    }

    /// `lift_legacy_arguments` under the bound keys; `remove` takes the
    /// legacy arguments out of the copy.
    #[pyo3(signature = (request, remove = false))]
    fn lift_legacy_arguments<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
        remove: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = LiftOptions {
            keys: self.policy.keys.clone(),
            remove,
        };
        lift_legacy_arguments(py, request, &options)
    }
}

/// The report on `message` (and on the `request` a response answers).
pub(crate) fn report(
    message: &Bound<'_, PyAny>,
    request: Option<&Bound<'_, PyAny>>,
    keys: &KeyOptions,
) -> Result<Report, Unreadable> {
    let message = read::message(message, keys, Some(&[]))?;
    let request = match request.filter(|request| !request.is_none()) {
        Some(request) => Some(read::message(request, keys, Some(&[]))?),
        None => None,
    };
    let options = ValidateOptions {
        keys: keys.clone(),
        request: request.as_ref(),
    };
    Ok(validating::validate(&message, &options))
}

pub(crate) fn sanitize<'py>(
    py: Python<'py>,
    message: &Bound<'py, PyAny>,
    policy: &Policy,
) -> PyResult<Bound<'py, PyDict>> {
    let read = read::message(message, &policy.keys, None).or_raise(py)?;
    let plan = mcp_provenance::__bindings::sanitize::plan_value(&read, policy).or_raise(py)?;
    let out = PyDict::new(py);
    out.set_item(
        "message",
        write::apply(message, &plan.edits, &policy.keys, &[])?,
    )?;
    out.set_item("changes", write::serialized(py, &plan.changes)?)?;
    Ok(out)
}

pub(crate) fn stamp_initiator<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    initiator: Option<&Bound<'py, PyAny>>,
    keys: &KeyOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let initiator = match initiator {
        None => Initiator::default(),
        // What is no name is none of the four.
        Some(name) => {
            let name = name.cast::<PyString>().ok();
            let name = name.as_ref().and_then(|name| name.to_str().ok());
            name.unwrap_or_default().parse::<Initiator>().or_raise(py)?
        }
    };
    let read = read::message(request, keys, None).or_raise(py)?;
    let edits = initiator::stamp_edits(&read, initiator, keys).or_raise(py)?;
    write::apply(request, &edits, keys, &[])
}

pub(crate) fn clear_initiator<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    keys: &KeyOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let read = read::message(request, keys, None).or_raise(py)?;
    let edits = initiator::clear_edits(&read, keys).or_raise(py)?;
    write::apply(request, &edits, keys, &[])
}

pub(crate) fn attach_invocation<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    invocation: &Bound<'py, PyAny>,
    keys: &KeyOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let read = read::message(request, keys, None).or_raise(py)?;
    let read_invocation = read::whole(Some(invocation), &[]).or_raise(py)?;
    let edits = invocation::attach_edits(&read, &read_invocation, keys).or_raise(py)?;
    write::apply(request, &edits, keys, &[invocation])
}

pub(crate) fn echo_turn_id<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    response: &Bound<'py, PyAny>,
    keys: &KeyOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let read_request = read::message(request, keys, None).or_raise(py)?;
    let read = read::message(response, keys, None).or_raise(py)?;
    let edits = echo::echo_edits(&read_request, &read, keys).or_raise(py)?;
    write::apply(response, &edits, keys, &[request])
}

pub(crate) fn audit_record<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    context: &AuditContext,
) -> PyResult<Bound<'py, PyAny>> {
    let default = Policy::default();
    let policy = context.policy.as_ref().unwrap_or(&default);
    let read = read::message(request, &policy.keys, Some(&policy.correlation_keys));
    let record = mcp_provenance::audit_record(&read.or_raise(py)?, context).or_raise(py)?;
    write::serialized(py, &record)
}

pub(crate) fn lift_legacy_arguments<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
    options: &LiftOptions,
) -> PyResult<Bound<'py, PyAny>> {
    let read = read::message(request, &options.keys, None).or_raise(py)?;
    let edits = legacy::lift_edits(&read, options).or_raise(py)?;
    write::apply(request, &edits, &options.keys, &[])
}
