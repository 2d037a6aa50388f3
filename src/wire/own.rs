//! The middleware's own answers: what it says in the app's stead when a
//! body cannot be read, audited or answered, one wording for every stack
//! (WIRE-8). Each request still waiting gets a JSON-RPC error naming its id
//! as the client sent it; what the error says names no value.

use super::outcome::error;

/// JSON-RPC's "invalid request": a body the middleware will not read.
const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC's "internal error": the server could not do what the request needed.
const INTERNAL_ERROR: i32 = -32603;

/// Why the middleware answered in the app's stead.
///
/// # Examples
///
/// ```
/// use mcp_provenance::__bindings::wire::Own;
///
/// assert_eq!(Own::AnswerUnreadable.code(), "answer-unreadable");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Own {
    /// The request's body is larger than the middleware reads (HTTP 413).
    BodyTooLarge,
    /// Something read the body before the middleware could (HTTP 500).
    BodyAlreadyRead,
    /// The middleware itself failed: a `principal` function that threw (HTTP 500).
    MiddlewareFailed,
    /// The audit sink could not keep the body's accounts.
    AuditFailed,
    /// The app's answer, or one event of it, is larger than the middleware holds.
    AnswerTooLarge,
    /// The app's answer, or one event of it, is not JSON-RPC.
    AnswerNotJson,
    /// The app's answer is in a form a client may read otherwise than the
    /// middleware does: another JSON media type, a charset, an encoding.
    AnswerUnreadable,
}

impl Own {
    /// Its code, as `data.code` names it.
    pub fn code(self) -> &'static str {
        match self {
            Own::BodyTooLarge => "body-too-large",
            Own::BodyAlreadyRead => "body-already-read",
            Own::MiddlewareFailed => "middleware-failed",
            Own::AuditFailed => "audit-failed",
            Own::AnswerTooLarge => "answer-too-large",
            Own::AnswerNotJson => "answer-not-json",
            Own::AnswerUnreadable => "answer-unreadable",
        }
    }

    /// What the error says; `limit` the bound passed, `event` whether one
    /// event of a stream was at fault rather than the whole answer.
    fn message(self, limit: usize, event: bool) -> String {
        let answer = if event {
            "an event of the server's answer"
        } else {
            "the server's answer"
        };
        match self {
            Own::BodyTooLarge => format!("the body is larger than {limit} bytes"),
            Own::BodyAlreadyRead => {
                "the body was read before the provenance middleware: mount it before any body parser".to_owned()
            }
            Own::MiddlewareFailed => "the provenance middleware failed".to_owned(),
            Own::AuditFailed => "the request could not be audited".to_owned(),
            Own::AnswerTooLarge => format!("{answer} is larger than {limit} bytes"),
            Own::AnswerNotJson => format!("{answer} is not JSON-RPC"),
            Own::AnswerUnreadable => {
                format!("{answer} is in a form the middleware does not read (its Content-Type, charset or Content-Encoding)")
            }
        }
    }

    /// The JSON-RPC error (JSON text) for the request whose id's JSON text is
    /// `id` (`null` for none); `code` its `data.code` (an audit sink's own
    /// code for [`Own::AuditFailed`]).
    pub(super) fn error(self, id: &str, code: &str, limit: usize, event: bool) -> String {
        error(id, self.rpc(), &self.message(limit, event), code)
    }

    /// The JSON-RPC error code it answers with.
    pub(super) fn rpc(self) -> i32 {
        if self == Own::BodyTooLarge {
            INVALID_REQUEST
        } else {
            INTERNAL_ERROR
        }
    }
}

/// JSON-RPC messages (texts) as one answer: a batch when the request was
/// one, or when there are several.
pub(super) fn composed(parts: &[String], batch: bool) -> String {
    match parts {
        [one] if !batch => one.clone(),
        parts => format!("[{}]", parts.join(",")),
    }
}

/// An audit sink's code as an error may name it: at most 64 characters, and
/// nothing a log line or a terminal reads as anything but text.
pub(super) fn sink_code(code: &str) -> String {
    crate::text::clean(code, 64).text.into_owned()
}

/// An answer of the middleware's own, whole: its status, the headers it
/// needs besides those of JSON, and its body (JSON text, or empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The body: JSON text, or empty (then no `Content-Type`).
    pub body: String,
    /// Whether the connection must close after it (a body not read to its end).
    pub close: bool,
}

impl Answer {
    /// An answer with `status` and `body`.
    pub(super) fn new(status: u16, body: String) -> Self {
        Answer {
            status,
            body,
            close: false,
        }
    }

    /// The headers it is sent with: JSON's media type when it has a body,
    /// its length, and `connection: close` when the connection must close.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Gateway, GatewayOptions};
    ///
    /// let gateway = Gateway::new(GatewayOptions { max_body_bytes: 16, ..GatewayOptions::default() })?;
    /// let answer = gateway.begin("POST", "/mcp", &[("content-length", "17")]).too_large();
    /// assert_eq!(answer.status, 413);
    /// assert_eq!(answer.headers(), [("content-type", "application/json".to_owned()), ("content-length", answer.body.len().to_string()), ("connection", "close".to_owned())]);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = Vec::with_capacity(3);
        if !self.body.is_empty() {
            headers.push(("content-type", "application/json".to_owned()));
        }
        headers.push(("content-length", self.body.len().to_string()));
        if self.close {
            headers.push(("connection", "close".to_owned()));
        }
        headers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn errors_name_the_request_and_no_value() {
        assert_eq!(
            Own::AnswerTooLarge.error("12345678901234567890", "answer-too-large", 64, true),
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32603,"message":"an event of the server's answer is larger than 64 bytes","data":{"code":"answer-too-large"}}}"#
        );
        assert_eq!(
            Own::BodyTooLarge.error("null", Own::BodyTooLarge.code(), 1024, false),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the body is larger than 1024 bytes","data":{"code":"body-too-large"}}}"#
        );
        assert_eq!(sink_code("disk\r\nfull\u{202e}"), "disk  full\u{fffd}");
    }

    #[test]
    fn parts_compose_as_the_request_was_sent() {
        let parts = ["{\"id\":1}".to_owned()];
        assert_eq!(composed(&parts, false), "{\"id\":1}");
        assert_eq!(composed(&parts, true), "[{\"id\":1}]");
        assert_eq!(composed(&[], false), "[]");
    }
}
