//! What an exchange asks of a store its gateway shares with others (its
//! other workers or hosts), and tells it: the session a request names that
//! this gateway has not seen issued, what the store says of it, and what the
//! app's answer taught of sessions (store.rs has the store's layout).

use super::exchange::Exchange;
use super::store::{SessionNews, session_key};

/// What an exchange asks of a shared store, and tells it.
impl Exchange {
    /// The key ([`session_key`]) of the session the
    /// request names, when this gateway has not seen the app issue it: for
    /// a middleware whose gateway shares a store with others (its other
    /// workers or hosts) to look up, before it reads the body. When the
    /// store holds it, [`issued_elsewhere`](Exchange::issued_elsewhere); when it
    /// does not, or does not answer, nothing: the session is not witnessed.
    /// `None` once the body is admitted or the answer begins.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::__bindings::wire::{SessionNews, session_key};
    /// use mcp_provenance::{Gateway, GatewayOptions};
    ///
    /// // Two workers, each its own gateway; what they share, a store of keys (Redis).
    /// let (a, b) = (Gateway::new(GatewayOptions::default())?, Gateway::new(GatewayOptions::default())?);
    /// let mut store = std::collections::HashSet::new();
    ///
    /// // Through worker A, the app issues session s-1: A's exchange says so, A keeps the key.
    /// let mut initialize = a.begin("POST", "/mcp", &[("content-type", "application/json")]);
    /// initialize.head(200, &[("mcp-session-id", "s-1")]);
    /// let Some(SessionNews::Issued(key)) = initialize.session_news() else { unreachable!() };
    /// store.insert(key.clone());
    ///
    /// // A call in s-1 comes to worker B, which has not seen it issued: it asks the store.
    /// let headers = [("content-type", "application/json"), ("mcp-session-id", "s-1")];
    /// let mut call = b.begin("POST", "/mcp", &headers);
    /// assert_eq!((call.session(), call.unknown_session()), (None, Some(session_key("s-1"))));
    /// if call.unknown_session().is_some_and(|key| store.contains(&key)) {
    ///     call.issued_elsewhere();
    /// }
    /// assert_eq!(call.session(), Some("s-1"));
    /// // B remembers it now, as if it had seen it issued.
    /// assert_eq!(b.begin("POST", "/mcp", &headers).unknown_session(), None);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn unknown_session(&self) -> Option<String> {
        self.asked
            .as_deref()
            .filter(|_| self.unknown)
            .map(session_key)
    }

    /// A store this gateway shares says the app issued the session the
    /// request names ([`unknown_session`](Exchange::unknown_session)), through
    /// another of its gateways: the exchange's session, witnessed, and the
    /// gateway's from now on. Nothing when there is no such session, or once
    /// the body is admitted or the answer begins (a record already made
    /// does not change).
    pub fn issued_elsewhere(&mut self) {
        if !std::mem::take(&mut self.unknown) {
            return;
        }
        if let Some(asked) = &self.asked {
            self.shared.sessions().issued_elsewhere(asked);
            self.session = Some(asked.clone());
        }
    }

    /// What the app's answer taught of sessions, once it began
    /// ([`head`](Exchange::head)), for a store this gateway shares with others:
    /// a session issued that this gateway did not know of (keep its key),
    /// or one the app ended, accepting a DELETE (remove it). A middleware
    /// tells the store before it sends the answer's head on, so that the
    /// client's next request, wherever it goes, finds it there.
    pub fn session_news(&self) -> Option<&SessionNews> {
        self.news.as_ref()
    }
}
