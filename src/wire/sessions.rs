//! What the middleware remembers of sessions (AI-10, WIRE-8): the session
//! ids the app issued, so that a record names a session only when the
//! server itself established it; and, for each, the requests forwarded in
//! it, so that an answer the server sends on a stream the client resumes
//! later (a GET with `Last-Event-ID`) is echoed like one on the POST's own.
//!
//! Bounded: at most `max_sessions` ids, the one named longest ago forgotten
//! first, and at most [`MAX_REMEMBERED`] requests over all sessions, each
//! of at most [`MAX_NOTE_BYTES`], the oldest forgotten first. A request
//! forgotten (or never remembered) only means an answer to it on a resumed
//! stream echoes no `turnId`.

use std::collections::{BTreeMap, HashMap, VecDeque};

use super::turns::Awaiting;

/// How many forwarded requests are remembered for resumed streams, over
/// all sessions.
pub const MAX_REMEMBERED: usize = 10_000;
/// The most bytes of `turnId`s one remembered request may hold.
pub const MAX_NOTE_BYTES: usize = 1024;

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
    /// strip it from its owner's records.
    pub(super) fn learn(
        &mut self,
        delete: bool,
        asked: Option<&str>,
        status: u16,
        named: Option<&str>,
    ) {
        if let Some(asked) = asked.filter(|_| delete && (200..300).contains(&status)) {
            self.forget(asked);
            return;
        }
        let Some(named) = named.filter(|_| status < 400) else {
            return;
        };
        self.tick += 1;
        if let Some(before) = self.issued.insert(named.to_owned(), self.tick) {
            self.by_age.remove(&before);
        }
        self.by_age.insert(self.tick, named.to_owned());
        while self.issued.len() > self.limit {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.forget(&oldest);
        }
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

    /// Remembers the requests a body forwarded in `session` (one it issued).
    pub(super) fn remember(&mut self, session: &str, awaiting: &Awaiting) {
        if awaiting.len() == 0
            || awaiting.bytes() > MAX_NOTE_BYTES * awaiting.len()
            || !self.issued.contains_key(session)
        {
            return;
        }
        self.tick += 1;
        self.remembered
            .entry(session.to_owned())
            .or_default()
            .push_back((self.tick, awaiting.clone()));
        self.order.push_back((self.tick, session.to_owned()));
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
    }

    /// Every request remembered in `session`, the later winning where ids meet.
    pub(super) fn recalled(&self, session: &str) -> Awaiting {
        let mut all = Awaiting::default();
        for (_, awaiting) in self.remembered.get(session).into_iter().flatten() {
            all.extend_latest(awaiting);
        }
        all
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
