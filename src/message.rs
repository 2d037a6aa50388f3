//! What a call needs a message to be before it can run, and what a
//! binding says of a value it could not read as JSON.

use crate::diagnostics::{Code, Diagnostic, Rule};
use crate::error::Error;
use crate::json::Kind;
use crate::schema::Place;
use crate::view::MessageView;

/// `not-a-request` unless the message is an object with a string `method`.
pub(crate) fn request(view: &MessageView) -> Result<(), Error> {
    if view.is_request() {
        return Ok(());
    }
    let root = view.get(Place::Root);
    Err(Error::new(
        Code::NotARequest,
        format!(
            "expected a JSON-RPC request: an object with a string `method`, not {}",
            match root.kind() {
                Some(Kind::Object) => "an object without one",
                _ => root.article(),
            }
        ),
    ))
}

/// `not-a-message` unless the message is a request or a response: the
/// error, as `validate` reports it (MSG-1) and `sanitize` fails on it.
pub(crate) fn message(view: &MessageView) -> Result<(), Error> {
    if view.is_request() || view.is_response() {
        return Ok(());
    }
    let root = view.get(Place::Root);
    Err(Error::new(
        Code::NotAMessage,
        format!(
            "expected a JSON-RPC message: an object with a string `method`, or with `result` or `error`; found {}",
            match root.kind() {
                Some(Kind::Object) => "an object with neither",
                _ => root.article(),
            }
        ),
    ))
}

/// The first of `places` that stands but is not an object, as `validate`
/// reports it (MSG-1) and as the other calls fail on it (`invalid-type`).
pub(crate) fn not_an_object(
    view: &MessageView,
    places: &[(Place, &'static str)],
) -> Option<NotAnObject> {
    places.iter().find_map(|(place, path)| {
        let slot = view.get(*place);
        (slot.is_present() && !slot.is_object()).then(|| NotAnObject {
            path,
            found: slot.article(),
        })
    })
}

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
        Diagnostic::error(
            Code::InvalidType,
            Rule::Msg1,
            self.path.to_owned(),
            self.message(),
        )
    }
}

impl From<NotAnObject> for Error {
    fn from(step: NotAnObject) -> Self {
        Error::new(Code::InvalidType, step.message())
    }
}

/// The steps to a request's `_meta`, each absent or an object when `_meta`
/// is to be written or read.
pub(crate) const TO_META: [(Place, &str); 2] =
    [(Place::Params, "/params"), (Place::Meta, "/params/_meta")];

/// The steps to a response's `result._meta`.
pub(crate) const TO_RESULT_META: [(Place, &str); 2] = [
    (Place::Result, "/result"),
    (Place::ResultMeta, "/result/_meta"),
];

/// A request whose `_meta` can be written: `params` and `_meta` are each
/// absent or an object.
pub(crate) fn writable_meta(view: &MessageView) -> Result<(), Error> {
    request(view)?;
    match not_an_object(view, &TO_META) {
        Some(step) => Err(step.into()),
        None => Ok(()),
    }
}

/// The deepest a binding reads a value whole: deeper nesting (or a cycle)
/// is [`Unreadable`].
pub const MAX_DEPTH: usize = 128;

/// A place in a value a binding was handed (a JS or Python object) that
/// cannot be read as JSON, and what stands there: `validate` reports it,
/// every other call fails on it.
pub struct Unreadable {
    /// RFC 6901 JSON Pointer of the place.
    pub path: String,
    /// What stands there, with its article: "a BigInt", "a cycle", "a set".
    pub what: std::borrow::Cow<'static, str>,
}

impl Unreadable {
    fn message(&self) -> String {
        match self.path.as_str() {
            "" => format!("the value cannot be read as JSON: {}", self.what),
            path => format!("`{path}` cannot be read as JSON: {}", self.what),
        }
    }

    /// As `validate` reports it (MSG-1).
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::error(
            Code::Unreadable,
            Rule::Msg1,
            self.path.clone(),
            self.message(),
        )
    }

    /// As the other calls fail on it (a TypeError).
    pub fn error(&self) -> Error {
        Error::new(Code::Unreadable, self.message())
    }
}
