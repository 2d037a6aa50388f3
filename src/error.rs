//! The one error type: a call that could not run at all.
//!
//! What is wrong *with a message* is data (a [`Report`](crate::Report)); an
//! [`Error`] means the call itself could not run: its input was not a message
//! of the kind it needs, or an option was out of range.

use std::fmt;

use crate::diagnostics::Code;

/// Why a call could not run, with a stable [`Code`].
///
/// The message names the place and the expected type, never a value taken
/// from the message, so an error can be logged without leaking `userIntent`.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{stamp_initiator, Code, ErrorKind, Initiator, KeyOptions};
/// use serde_json::json;
///
/// let err = stamp_initiator(json!([1, 2]), Initiator::App, &KeyOptions::default()).unwrap_err();
/// assert_eq!(err.code(), Code::NotARequest);
/// assert_eq!(err.kind(), ErrorKind::Input);
/// assert_eq!(err.to_string(), "expected a JSON-RPC request: an object with a string `method`, not an array");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: Code,
    message: String,
}

impl Error {
    /// An error of `code` saying `message`: for the bindings, which raise
    /// the core's errors in their runtime's form.
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// The stable, kebab-case code of this failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, KeyOptions};
    ///
    /// let keys = KeyOptions { invocation_key: Some("io.mcp/mine".into()), ..KeyOptions::default() };
    /// assert_eq!(keys.check().unwrap_err().code(), Code::ReservedKey);
    /// ```
    pub fn code(&self) -> Code {
        self.code
    }

    /// Whether the input was not of the kind the call needs, or an option
    /// or bound was out of range (the npm package throws a `TypeError` or
    /// a `RangeError` for them).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{ErrorKind, Policy};
    ///
    /// let policy = Policy { max_intent_bytes: 3, ..Policy::default() };
    /// assert_eq!(policy.check().unwrap_err().kind(), ErrorKind::Range);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self.code {
            Code::NotARequest
            | Code::Unreadable
            | Code::NotAResponse
            | Code::NotAMessage
            | Code::InvalidType
            | Code::InvalidInvocation => ErrorKind::Input,
            _ => ErrorKind::Range,
        }
    }
}

/// What kind of failure an [`Error`] is.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{ErrorKind, KeyOptions};
///
/// let keys = KeyOptions { invocation_key: Some("no key".into()), ..KeyOptions::default() };
/// assert_eq!(keys.check().unwrap_err().kind(), ErrorKind::Range);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is not of the kind the call needs: not a request, not
    /// readable, a value of the wrong type.
    Input,
    /// An option, a limit or an argument is out of its range.
    Range,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
