//! Where things live in a JSON-RPC message, and how to reach them.

use serde_json::{Map, Value};

use crate::diagnostics::{Code, Diagnostic, Rule};
use crate::error::{Error, type_name};

/// A JSON object, as serde_json holds it.
pub(crate) type Object = Map<String, Value>;

/// The pointer of a request's `_meta`.
pub(crate) const PARAMS_META: &str = "/params/_meta";

/// A step on the way to a `_meta` that is there but is not an object.
pub(crate) struct NotAnObject {
    path: &'static str,
    found: &'static str,
}

impl NotAnObject {
    fn message(&self) -> String {
        format!("`{}` must be an object, not {}", self.path, self.found)
    }

    /// As `validate` reports it (MSG-1).
    pub(crate) fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(Code::InvalidType, Rule::Msg1, self.path, self.message())
    }
}

impl From<NotAnObject> for Error {
    fn from(step: NotAnObject) -> Self {
        Error::new(Code::InvalidType, step.message())
    }
}

/// The object under `key`, if there is one.
pub(crate) fn object_at<'a>(
    map: &'a Object,
    key: &str,
    path: &'static str,
) -> Result<Option<&'a Object>, NotAnObject> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Object(object)) => Ok(Some(object)),
        Some(other) => Err(NotAnObject {
            path,
            found: type_name(other),
        }),
    }
}

/// The object under `key` for writing, created when absent.
pub(crate) fn object_entry<'a>(
    map: &'a mut Object,
    key: &str,
    path: &'static str,
) -> Result<&'a mut Object, NotAnObject> {
    match map.entry(key).or_insert_with(|| Value::Object(Map::new())) {
        Value::Object(object) => Ok(object),
        other => Err(NotAnObject {
            path,
            found: type_name(other),
        }),
    }
}

/// `params._meta` of a request, when present.
pub(crate) fn request_meta(request: &Object) -> Result<Option<&Object>, NotAnObject> {
    match object_at(request, "params", "/params")? {
        Some(params) => object_at(params, "_meta", PARAMS_META),
        None => Ok(None),
    }
}

/// `params._meta` of a request for writing, with `params` and `_meta`
/// created when absent.
pub(crate) fn request_meta_mut(request: &mut Object) -> Result<&mut Object, Error> {
    let params = object_entry(request, "params", "/params")?;
    Ok(object_entry(params, "_meta", PARAMS_META)?)
}

/// `params._meta` of a request for changing what is there, if it is an object.
pub(crate) fn existing_meta_mut(request: &mut Object) -> Option<&mut Object> {
    request
        .get_mut("params")
        .and_then(Value::as_object_mut)
        .and_then(|params| params.get_mut("_meta"))
        .and_then(Value::as_object_mut)
}

/// Whether an object is a request or notification: it has a string `method`.
pub(crate) fn is_request(map: &Object) -> bool {
    map.get("method").is_some_and(Value::is_string)
}

fn not_a_request(value: &Value) -> Error {
    Error::new(
        Code::NotARequest,
        format!(
            "expected a JSON-RPC request: an object with a string `method`, not {}",
            match value {
                Value::Object(_) => "an object without one",
                other => type_name(other),
            }
        ),
    )
}

/// The request as an object, or `not-a-request`.
pub(crate) fn as_request(value: &Value) -> Result<&Object, Error> {
    match value {
        Value::Object(map) if is_request(map) => Ok(map),
        other => Err(not_a_request(other)),
    }
}

/// The request taken apart as an object, or `not-a-request`.
pub(crate) fn into_request(value: Value) -> Result<Object, Error> {
    match value {
        Value::Object(map) if is_request(&map) => Ok(map),
        other => Err(not_a_request(&other)),
    }
}
