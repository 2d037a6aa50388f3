//! What became of an exchange, once its answer is over: the outcome account
//! an audit sink gets after the accounts of the body's messages (WIRE-8).
//!
//! A message's account says what the filter let through, not what happened
//! next: a call the app refused (a JSON-RPC error) would read as served. So
//! an exchange that is asked to ([`Exchange::keep_outcome`]) keeps what the
//! client got for each request that went on (`tally.rs`), and gives it,
//! with the HTTP status sent and the middleware's own code, as one account
//! ([`Exchange::outcome`]) and one JSON line ([`ExchangeOutcome::json`]).
//! An exchange not asked keeps nothing: a middleware with no sink pays
//! nothing for it.

use serde::Serialize;

use super::exchange::Exchange;
use super::line::id_of;
use super::tally::Answered;
use crate::json;

/// The most bytes of a host name an account keeps.
const MAX_HOST_BYTES: usize = 255;

/// The outcome of one exchange, as the audit sink gets it once the answer
/// is over: `kind` `"outcome"`, the status the client was sent, the
/// middleware's own code when it answered in the app's stead, what each
/// request that went on got, and when, how long, and which worker.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Gateway, GatewayOptions};
///
/// let gateway = Gateway::new(GatewayOptions::default())?;
/// let mut exchange = gateway.begin("POST", "/mcp", &[("content-type", "application/json")]);
/// exchange.keep_outcome();
/// drop(exchange.admit(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}"#, None, None));
/// exchange.head(200, &[("content-type", "application/json")]);
/// exchange.finish(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}"#);
/// let outcome = exchange.outcome(1.5, Some(4242), Some("worker-1")).expect("kept");
/// assert_eq!(outcome.json(), r#"{"kind":"outcome","status":200,"requests":[{"id":1,"answer":"error","code":-32602}],"ms":1.5,"pid":4242,"host":"worker-1"}"#);
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename = "outcome", rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExchangeOutcome {
    /// The HTTP status the client was sent; none when nothing was (the
    /// client left, or the app failed, before a head).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why the middleware answered in the app's stead, or put its errors in
    /// place of the app's answer (its own code, the audit sink's, or the
    /// filter's refusal of the whole body), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Each request that went on, in the body's order (none when nothing went on).
    pub requests: Vec<Answered>,
    /// When the request was received, as its records say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received_at: Option<String>,
    /// The session the app issued that the request named (or its answer issued).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// How long the exchange took, from the request to the answer's end, in
    /// milliseconds (to the microsecond).
    pub ms: f64,
    /// The id of the process that served it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The name of the host it ran on (at most 255 bytes, made safe for a line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl ExchangeOutcome {
    /// The account as one JSON line, as `serde_json` writes it: nothing
    /// in it breaks a line or disguises text (see [`ExchangeOutcome`]).
    pub fn json(&self) -> String {
        let mut out = String::with_capacity(160 + 48 * self.requests.len());
        out.push_str("{\"kind\":\"outcome\"");
        if let Some(status) = self.status {
            out.push_str(",\"status\":");
            out.push_str(&status.to_string());
        }
        string(&mut out, "refused", self.refused.as_deref());
        out.push_str(",\"requests\":[");
        for (index, answered) in self.requests.iter().enumerate() {
            if index > 0 {
                out.push(',');
            }
            out.push_str("{\"id\":");
            id_of(&answered.id, &mut out);
            out.push_str(",\"answer\":\"");
            out.push_str(answered.answer.as_str());
            out.push('"');
            if let Some(code) = answered.code {
                out.push_str(",\"code\":");
                out.push_str(&code.to_string());
            }
            out.push('}');
        }
        out.push(']');
        string(&mut out, "receivedAt", self.received_at.as_deref());
        string(&mut out, "sessionId", self.session_id.as_deref());
        out.push_str(",\"ms\":");
        write_millis(&mut out, self.ms);
        if let Some(pid) = self.pid {
            out.push_str(",\"pid\":");
            out.push_str(&pid.to_string());
        }
        string(&mut out, "host", self.host.as_deref());
        out.push('}');
        out
    }
}

/// A member `name` holding `text` as a JSON string, when there is one.
fn string(out: &mut String, name: &str, text: Option<&str>) {
    if let Some(text) = text {
        out.push_str(",\"");
        out.push_str(name);
        out.push_str("\":");
        json::write_string(out, text);
    }
}

impl Exchange {
    /// Keeps what the client gets for each request that goes on, for
    /// [`Exchange::outcome`]: called before [`Exchange::admit`], by a
    /// middleware with an audit sink (one without calls neither, and the
    /// exchange keeps nothing).
    pub fn keep_outcome(&mut self) {
        self.tally = Some(Box::default());
    }

    /// The exchange's outcome, once its answer is over (or the client left,
    /// or the app failed): `ms` how long it took, from the request to the
    /// end, `pid` and `host` the worker that served it, where the stack has
    /// them. `None` unless [`Exchange::keep_outcome`] was called, and for an
    /// exchange that neither filtered a body nor answered (the client left
    /// before its body came whole: no account came before, nothing was
    /// said). See [`ExchangeOutcome`].
    pub fn outcome(
        &self,
        ms: f64,
        pid: Option<u32>,
        host: Option<&str>,
    ) -> Option<ExchangeOutcome> {
        let tally = self.tally.as_deref()?;
        if !tally.admitted() && self.sent.is_none() {
            return None;
        }
        let ms = if ms.is_finite() && ms > 0.0 {
            (ms * 1000.0).round() / 1000.0
        } else {
            0.0
        };
        Some(ExchangeOutcome {
            status: self.sent,
            refused: self.refused.clone(),
            requests: tally.answered(),
            received_at: tally.received_at().map(str::to_owned),
            session_id: self.session.clone(),
            ms,
            pid,
            host: host.map(|host| crate::text::clean(host, MAX_HOST_BYTES).text.into_owned()),
        })
    }
}

/// Appends `ms` to the thousandth, as the shortest text that reads back
/// the same (`1.5`, `0.0`, `12.345`), with integers alone: a double's
/// formatting machinery is 20 KB of the npm filter module. Not finite or
/// negative is 0.0; past `u64::MAX` microseconds, that many.
fn write_millis(out: &mut String, ms: f64) {
    let micros = if ms.is_finite() && ms > 0.0 {
        // Saturates, as `as` does from a float.
        (ms * 1000.0).round() as u64
    } else {
        0
    };
    out.push_str(&(micros / 1000).to_string());
    out.push('.');
    let fraction = micros % 1000;
    let digits = [fraction / 100, fraction / 10 % 10, fraction % 10];
    // Down to the last digit that is not 0, and at least one.
    let kept = digits
        .iter()
        .rposition(|digit| *digit != 0)
        .map_or(1, |last| last + 1);
    for digit in digits.iter().take(kept) {
        out.push(char::from(b'0' + *digit as u8));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use crate::wire::{Gateway, GatewayOptions};

    /// The outcome of a body and an answer through a gateway of `options`.
    fn through(options: GatewayOptions, body: &str, answer: &[&str]) -> ExchangeOutcome {
        let gateway = Gateway::new(options).expect("a gateway");
        let mut exchange = gateway.begin("POST", "/mcp", &[("content-type", "application/json")]);
        exchange.keep_outcome();
        drop(exchange.admit(
            body.as_bytes(),
            Some("2026-01-02T03:04:05.678Z".into()),
            None,
        ));
        exchange.head(
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "s\u{202e}1"),
            ],
        );
        for piece in answer {
            exchange.piece(piece.as_bytes());
        }
        exchange.end();
        exchange
            .outcome(0.000_4, Some(7), Some("h\nost"))
            .expect("kept")
    }

    #[test]
    fn the_line_is_the_account_as_serde_writes_it() {
        let outcomes = [
            through(
                GatewayOptions::default(),
                r#"[{"id":"a\u0031","method":"ping"},{"id":2,"method":"ping"},{"id":3,"method":"ping"}]"#,
                &[
                    r#"[{"id":"a1","result":{}},{"id":"2","error":{"code":-32601,"message":"no"}},"#,
                    r#"{"id":2,"result":{}},{"id":3,"error":{"code":1.5}}]"#,
                ],
            ),
            through(
                GatewayOptions::default(),
                r#"{"method":"notifications/initialized"}"#,
                &[],
            ),
        ];
        for outcome in &outcomes {
            let line = outcome.json();
            let read: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            assert_eq!(read, serde_json::to_value(outcome).expect("serializes"));
            assert!(json::is_one_line(&line), "{line}");
        }
        // Matched as the clients match ids, the first answer the one taken; a code that is no integer, none.
        assert_eq!(
            outcomes[0].json(),
            r#"{"kind":"outcome","status":200,"requests":[{"id":"a1","answer":"result"},{"id":2,"answer":"error","code":-32601},{"id":3,"answer":"error"}],"receivedAt":"2026-01-02T03:04:05.678Z","sessionId":"s\u202e1","ms":0.0,"pid":7,"host":"h ost"}"#
        );
        assert_eq!(outcomes[1].requests, []);
    }

    #[test]
    fn an_exchange_not_asked_keeps_nothing_nor_one_that_read_no_body_and_said_nothing() {
        let gateway = Gateway::new(GatewayOptions::default()).expect("a gateway");
        let exchange = gateway.begin("POST", "/mcp", &[("content-type", "application/json")]);
        assert_eq!(exchange.outcome(1.0, None, None), None);
        // The client left before its body came whole.
        let mut gone = gateway.begin("POST", "/mcp", &[("content-type", "application/json")]);
        gone.keep_outcome();
        assert_eq!(gone.outcome(1.0, None, None), None);
        assert_eq!(gone.too_large().status, 413);
        assert_eq!(
            gone.outcome(1.0, None, None).map(|outcome| outcome.status),
            Some(Some(413))
        );
    }

    #[test]
    fn milliseconds_are_written_to_the_thousandth_as_the_shortest_text() {
        for (ms, text) in [
            (0.0, "0.0"),
            (1.5, "1.5"),
            (12.345, "12.345"),
            (100.0, "100.0"),
            (0.0004, "0.0"),
            (0.0996, "0.1"),
            (2.05, "2.05"),
            (f64::NAN, "0.0"),
            (-3.0, "0.0"),
            (f64::INFINITY, "0.0"),
            (1e30, "18446744073709551.615"),
        ] {
            let mut out = String::new();
            write_millis(&mut out, ms);
            assert_eq!(out, text, "{ms}");
            if ms.is_finite() && (0.0..1e12).contains(&ms) {
                assert_eq!(
                    out.parse::<f64>().ok(),
                    Some((ms * 1000.0).round() / 1000.0),
                    "{ms}"
                );
            }
        }
    }
}
