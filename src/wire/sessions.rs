//! What the middleware remembers of sessions (AI-10, WIRE-8): the session
//! ids the app issued, so that a record names a session only when the
//! server itself established it; and, for each, the requests forwarded in
//! it, so that an answer the server sends on a stream the client resumes
//! later (a GET with `Last-Event-ID`) is echoed like one on the POST's own.
//!
//! A client resumes one stream, the one its `Last-Event-ID` names, and the
//! Python SDK takes every answer on it for the answer to the request it
//! resumes: so each event id a POST's stream carried is remembered with that
//! POST's requests, and a resumed stream echoes those alone (an event id not
//! known, none).
//!
//! Bounded: at most `max_sessions` ids, the one named longest ago forgotten
//! first; at most [`MAX_REMEMBERED`] requests over all sessions, each of at
//! most [`MAX_NOTE_BYTES`], and as many event ids, each of at most
//! [`MAX_EVENT_ID_BYTES`], the oldest forgotten first. A request forgotten
//! (or never remembered) only means an answer to it on a resumed stream
//! echoes no `turnId`.
//!
//! What an answer taught that a store shared by the gateway's other
//! processes lacks is the exchange's news (store.rs).

use std::collections::{BTreeMap, HashMap, VecDeque};

use super::store::{SessionNews, session_key};
use super::turns::Awaiting;

/// How many forwarded requests are remembered for resumed streams, over
/// all sessions.
pub(super) const MAX_REMEMBERED: usize = 10_000;
/// The most bytes of `turnId`s one remembered request may hold.
pub(super) const MAX_NOTE_BYTES: usize = 1024;
/// The longest event id remembered.
pub(super) const MAX_EVENT_ID_BYTES: usize = 256;

/// The sessions the app issued, and the requests forwarded in each.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    limit: usize,
    /// Each issued id, with the tick it was last named at.
    issued: HashMap<String, u64>,
    /// The ids by the tick they were last named at, oldest first.
    by_age: BTreeMap<u64, String>,
    tick: u64,
    /// The requests forwarded in each session, the oldest first, each with its tick.
    remembered: HashMap<String, VecDeque<(u64, Awaiting)>>,
    /// Every remembered body's session and tick, the oldest first.
    order: VecDeque<(u64, String)>,
    /// How many requests are remembered.
    count: usize,
    /// For each session, the body (its tick) whose stream carried each event id.
    streams: HashMap<String, HashMap<Vec<u8>, u64>>,
    /// Every remembered event id, its session and body, the oldest first.
    events: VecDeque<(String, Vec<u8>, u64)>,
}

impl Sessions {
    /// Sessions remembering at most `limit` ids.
    pub(super) fn new(limit: usize) -> Self {
        Sessions {
            limit,
            ..Sessions::default()
        }
    }

    /// The session `asked` names (a request's `Mcp-Session-Id`), when the app issued it.
    pub(super) fn witnessed(&self, asked: Option<&str>) -> Option<String> {
        asked
            .filter(|id| self.issued.contains_key(*id))
            .map(str::to_owned)
    }

    /// What the app's answer (its `status`, the `Mcp-Session-Id` it
    /// `named`) to a request (`delete`: a DELETE; in session `asked`) says
    /// of sessions: the one it names was issued; one it ended (a DELETE it
    /// accepted) is forgotten. Nothing else forgets one: a 404 may come of
    /// any path or method, and would let anyone who knows a session id
    /// strip it from its owner's records. What a store shared with other
    /// processes should learn of it: a session issued that was not known
    /// here, or one ended.
    pub(super) fn learn(
        &mut self,
        delete: bool,
        asked: Option<&str>,
        status: u16,
        named: Option<&str>,
    ) -> Option<SessionNews> {
        if let Some(asked) = asked.filter(|_| delete && (200..300).contains(&status)) {
            self.forget(asked);
            return Some(SessionNews::Ended(session_key(asked)));
        }
        let named = named.filter(|_| status < 400)?;
        self.issue(named)
            .then(|| SessionNews::Issued(session_key(named)))
    }

    /// A store shared with other processes says the app issued `id`
    /// (through one of them): witnessed here from now on, as if this
    /// process had seen it issued.
    pub(super) fn issued_elsewhere(&mut self, id: &str) {
        self.issue(id);
    }

    /// Remembers `id` as issued, named now; whether it was not known.
    fn issue(&mut self, id: &str) -> bool {
        self.tick += 1;
        let before = self.issued.insert(id.to_owned(), self.tick);
        if let Some(before) = before {
            self.by_age.remove(&before);
        }
        self.by_age.insert(self.tick, id.to_owned());
        while self.issued.len() > self.limit {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.forget(&oldest);
        }
        before.is_none()
    }

    fn forget(&mut self, id: &str) {
        if let Some(tick) = self.issued.remove(id) {
            self.by_age.remove(&tick);
        }
        if let Some(gone) = self.remembered.remove(id) {
            self.count -= gone
                .iter()
                .map(|(_, awaiting)| awaiting.len())
                .sum::<usize>();
        }
    }

    /// Remembers the requests a body forwarded in `session` (one it
    /// issued): the body's tick, for the event ids of its stream.
    pub(super) fn remember(&mut self, session: &str, awaiting: &Awaiting) -> Option<u64> {
        if awaiting.len() == 0
            || awaiting.bytes() > MAX_NOTE_BYTES * awaiting.len()
            || !self.issued.contains_key(session)
        {
            return None;
        }
        self.tick += 1;
        let tick = self.tick;
        self.remembered
            .entry(session.to_owned())
            .or_default()
            .push_back((tick, awaiting.clone()));
        self.order.push_back((tick, session.to_owned()));
        self.count += awaiting.len();
        // Each body remembered holds a request, so past the bound the oldest are stale or go.
        while self.count > MAX_REMEMBERED || self.order.len() > MAX_REMEMBERED {
            let Some((tick, session)) = self.order.pop_front() else {
                break;
            };
            let Some(queue) = self.remembered.get_mut(&session) else {
                continue;
            };
            if queue.front().is_some_and(|(first, _)| *first == tick) {
                if let Some((_, gone)) = queue.pop_front() {
                    self.count -= gone.len();
                }
            }
            if queue.is_empty() {
                self.remembered.remove(&session);
            }
        }
        Some(tick)
    }

    /// Remembers that the stream of the body `body` (a tick of
    /// [`Sessions::remember`]) in `session` carried the event `id`.
    pub(super) fn stream_event(&mut self, session: &str, body: u64, id: &[u8]) {
        if id.is_empty() || id.len() > MAX_EVENT_ID_BYTES {
            return;
        }
        let Some(streams) = self
            .remembered
            .contains_key(session)
            .then(|| self.streams.entry(session.to_owned()).or_default())
        else {
            return;
        };
        streams.insert(id.to_vec(), body);
        self.events
            .push_back((session.to_owned(), id.to_vec(), body));
        while self.events.len() > MAX_REMEMBERED {
            let Some((session, id, body)) = self.events.pop_front() else {
                break;
            };
            if let Some(streams) = self.streams.get_mut(&session) {
                if streams.get(&id) == Some(&body) {
                    streams.remove(&id);
                }
            }
        }
    }

    /// The requests an answer on a stream of `session` may answer: on a
    /// stream resumed after `last_event`, those of the body whose stream
    /// carried it (none, when it is not known); on any other, every request
    /// remembered in the session, the later winning where ids meet.
    pub(super) fn recalled(&self, session: &str, last_event: Option<&str>) -> Awaiting {
        let bodies = self.remembered.get(session).into_iter().flatten();
        let Some(last_event) = last_event else {
            let mut all = Awaiting::default();
            for (_, awaiting) in bodies {
                all.extend_latest(awaiting);
            }
            return all;
        };
        let body = self
            .streams
            .get(session)
            .and_then(|streams| streams.get(last_event.as_bytes()));
        let mut bodies = bodies;
        body.and_then(|body| bodies.find(|(tick, _)| tick == body))
            .map(|(_, awaiting)| awaiting.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn only_the_app_issues_and_only_a_delete_ends() {
        let mut sessions = Sessions::new(2);
        assert_eq!(sessions.witnessed(Some("a")), None);
        sessions.learn(false, None, 200, Some("a"));
        assert_eq!(sessions.witnessed(Some("a")).as_deref(), Some("a"));
        // An error names no session; a 404 ends none.
        sessions.learn(false, None, 400, Some("x"));
        sessions.learn(false, Some("a"), 404, None);
        assert_eq!(
            (
                sessions.witnessed(Some("x")),
                sessions.witnessed(Some("a")).as_deref()
            ),
            (None, Some("a"))
        );
        sessions.learn(true, Some("a"), 404, None);
        assert_eq!(sessions.witnessed(Some("a")).as_deref(), Some("a"));
        sessions.learn(true, Some("a"), 200, None);
        assert_eq!(sessions.witnessed(Some("a")), None);
    }

    #[test]
    fn the_news_is_what_a_shared_store_lacks() {
        let mut sessions = Sessions::new(2);
        let issued = |id: &str| Some(SessionNews::Issued(session_key(id)));
        assert_eq!(sessions.learn(false, None, 200, Some("a")), issued("a"));
        // Named again, or in an error, or a 404 to a DELETE: nothing new.
        assert_eq!(sessions.learn(false, Some("a"), 200, Some("a")), None);
        assert_eq!(sessions.learn(false, None, 404, Some("b")), None);
        assert_eq!(sessions.learn(true, Some("a"), 404, None), None);
        // One learnt from the store is known here: the app naming it is no news.
        sessions.issued_elsewhere("c");
        assert_eq!(sessions.witnessed(Some("c")).as_deref(), Some("c"));
        assert_eq!(sessions.learn(false, Some("c"), 200, Some("c")), None);
        // A DELETE the app accepted ends it, known here or not (the store may know it).
        assert_eq!(
            sessions.learn(true, Some("x"), 204, None),
            Some(SessionNews::Ended(session_key("x")))
        );
        assert_eq!(
            sessions.learn(true, Some("c"), 200, Some("c")),
            Some(SessionNews::Ended(session_key("c")))
        );
        assert_eq!(sessions.witnessed(Some("c")), None);
        // Forgotten as the oldest, it is news again when the app names it.
        sessions.learn(false, None, 200, Some("d"));
        sessions.learn(false, None, 200, Some("e"));
        assert_eq!(sessions.learn(false, None, 200, Some("a")), issued("a"));
    }

    #[test]
    fn the_one_named_longest_ago_goes_first() {
        let mut sessions = Sessions::new(2);
        for id in ["a", "b", "a", "c"] {
            sessions.learn(false, None, 200, Some(id));
        }
        let known: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|id| sessions.witnessed(Some(id)).is_some())
            .collect();
        assert_eq!(known, [true, false, true]);
    }
}
