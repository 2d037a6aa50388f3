//! Sessions shared by many workers and hosts (AI-10, WIRE-8). What one
//! process saw the app issue, another has not: with two workers, or two
//! hosts behind a balancer, a session issued through one would not be
//! witnessed through the other. So a middleware keeps what the exchange
//! says an answer taught of sessions ([`SessionNews`]) in a store its peers
//! share (Redis), and, before it reads a body, looks up the session the
//! request names when its gateway has not seen it issued
//! ([`Exchange::unknown_session`](super::Exchange::unknown_session)),
//! telling the exchange what the store holds
//! ([`Exchange::issued_elsewhere`](super::Exchange::issued_elsewhere);
//! both in witness.rs). The store only carries news between processes; what
//! is news, and what a record may say, is decided here. A store that does
//! not answer claims nothing: the record names no session.
//!
//! The store's layout, the same for every runtime: for each session issued,
//! the key [`SESSION_KEY_PREFIX`] followed by the [`session_key`] of its id
//! (its SHA-256: the store never holds an id), kept for
//! [`SESSION_TTL_SECONDS`], removed when the app ends the session; its value
//! means nothing.

use super::arguments::sha256_hex;

/// The prefix of a session's key in a store a gateway's processes share
/// (Redis): the key is the prefix and [`session_key`] of the session's id.
pub const SESSION_KEY_PREFIX: &str = "mcp-provenance:session:";

/// How long a store a gateway's processes share keeps a session it was told
/// the app issued, in seconds (a day): a session is witnessed through the
/// other processes for that long after the app issued it (the process it was
/// issued through, and any that looked it up meanwhile, remember it as long
/// as they remember any session).
pub const SESSION_TTL_SECONDS: u32 = 86_400;

/// A session's key in a store a gateway's processes share: the SHA-256 of
/// its id, in lowercase hex. A session id is a bearer's secret (whoever
/// sends it speaks in the session): the store, and whoever reads it or its
/// backups, never gets one.
///
/// # Examples
///
/// ```
/// use mcp_provenance::__bindings::wire::session_key;
///
/// // As `printf s-1 | sha256sum` gives it.
/// assert_eq!(session_key("s-1"), "6a840baf5d8c3ff241688aeb14546e653774cd5387faf1cb982b0fbbf1fbb810");
/// ```
pub fn session_key(id: &str) -> String {
    let mut key = String::with_capacity(64);
    sha256_hex(id.as_bytes(), &mut key);
    key
}

/// What an app's answer taught of sessions that a store shared by the
/// gateway's other processes should know (see
/// [`Exchange::session_news`](super::Exchange::session_news)): each with the
/// session's [`session_key`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionNews {
    /// The app issued a session this process did not know of: keep its key
    /// (for [`SESSION_TTL_SECONDS`]).
    Issued(String),
    /// The app ended a session (it accepted a DELETE in it): remove its key.
    Ended(String),
}

#[cfg(test)]
mod tests {
    use super::super::{Exchange, Gateway, GatewayOptions};
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_key_is_the_ids_sha256_in_hex() {
        // As sha256sum gives them.
        assert_eq!(
            session_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let key = session_key("s\u{0}\u{202e}é");
        assert!(
            key.len() == 64
                && key
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }

    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q"}}"#;

    fn gateway() -> Gateway {
        Gateway::new(GatewayOptions::default()).expect("the default options")
    }

    fn in_session(id: &str) -> [(&'static str, &str); 2] {
        [("content-type", "application/json"), ("mcp-session-id", id)]
    }

    /// The `witnessed` of the first record of `body` admitted by `exchange`.
    fn witnessed(exchange: &mut Exchange, body: &[u8]) -> Option<String> {
        let outcome = exchange.admit(body, None, None);
        let record = outcome
            .messages
            .first()
            .and_then(|seen| seen.record.as_ref());
        record
            .expect("a call has a record")
            .witnessed
            .session_id
            .clone()
    }

    #[test]
    fn a_session_issued_through_one_is_witnessed_through_another_once_told() {
        let (a, b) = (gateway(), gateway());
        let mut initialize = a.begin("POST", "/mcp", &[("content-type", "application/json")]);
        assert_eq!(initialize.unknown_session(), None);
        initialize.admit(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
            None,
            None,
        );
        initialize.head(
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "s-1"),
            ],
        );
        let key = session_key("s-1");
        assert_eq!(
            initialize.session_news(),
            Some(&SessionNews::Issued(key.clone()))
        );
        assert_eq!(initialize.session(), Some("s-1"));

        // Untold, B witnesses nothing: the record claims no session.
        let mut untold = b.begin("POST", "/mcp", &in_session("s-1"));
        assert_eq!(untold.unknown_session(), Some(key.clone()));
        assert_eq!(witnessed(&mut untold, CALL), None);
        // Once the body is admitted, it is too late: the record is made.
        assert_eq!(untold.unknown_session(), None);
        untold.issued_elsewhere();
        assert_eq!(untold.session(), None);

        // Told before the body, B's record names it, and B remembers it.
        let mut told = b.begin("POST", "/mcp", &in_session("s-1"));
        told.issued_elsewhere();
        assert_eq!(
            (told.session(), told.unknown_session()),
            (Some("s-1"), None)
        );
        assert_eq!(witnessed(&mut told, CALL).as_deref(), Some("s-1"));
        let mut again = b.begin("POST", "/mcp", &in_session("s-1"));
        assert_eq!(
            (
                again.unknown_session(),
                witnessed(&mut again, CALL).as_deref()
            ),
            (None, Some("s-1"))
        );
        // The app naming it again through B is no news: the store has it.
        again.head(
            200,
            &[
                ("content-type", "application/json"),
                ("mcp-session-id", "s-1"),
            ],
        );
        assert_eq!(again.session_news(), None);

        // A DELETE B's app accepts ends it: news for the store, forgotten here.
        let mut delete = b.begin("DELETE", "/mcp", &in_session("s-1"));
        delete.head(200, &[("content-length", "0")]);
        assert_eq!(delete.session_news(), Some(&SessionNews::Ended(key)));
        assert_eq!(b.begin("POST", "/mcp", &in_session("s-1")).session(), None);
    }

    #[test]
    fn only_what_the_middleware_reads_asks_the_store() {
        let gateway = Gateway::new(GatewayOptions {
            paths: Some(vec!["/mcp".into()]),
            ..GatewayOptions::default()
        })
        .expect("options");
        // Not the middleware's path, no session named, or one known: nothing to ask.
        assert_eq!(
            gateway
                .begin("POST", "/token", &in_session("s-1"))
                .unknown_session(),
            None
        );
        assert_eq!(
            gateway
                .begin("POST", "/mcp", &[("content-type", "application/json")])
                .unknown_session(),
            None
        );
        // A session header sent twice names none.
        let twice = [("mcp-session-id", "s-1"), ("mcp-session-id", "s-2")];
        assert_eq!(
            gateway.begin("POST", "/mcp", &twice).unknown_session(),
            None
        );
        // A GET's stream or a DELETE names one too.
        let mut stream = gateway.begin("GET", "/mcp", &in_session("s-1"));
        assert_eq!(stream.unknown_session(), Some(session_key("s-1")));
        // Once the answer begins, it is too late.
        stream.head(200, &[("content-type", "text/event-stream")]);
        stream.issued_elsewhere();
        assert_eq!((stream.session(), stream.unknown_session()), (None, None));
        // An error names no session, and ends none.
        let mut refused = gateway.begin("DELETE", "/mcp", &in_session("s-1"));
        refused.head(404, &[("mcp-session-id", "s-1")]);
        assert_eq!(refused.session_news(), None);
    }
}
