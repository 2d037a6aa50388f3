//! An answer that streams through an [`Exchange`]: an event stream read
//! event by event, each echoed (WIRE-7, WIRE-8), and a JSON answer with the
//! filter's replies joined as it comes. Each byte is looked at once; what an
//! event leaves unfinished is held, copied once.

use std::borrow::Cow;

use super::events::{self, Cut, Event};
use super::exchange::{Exchange, Joining, Mode};
use super::own::Own;
use super::reading::{begins_answer, past_space};
use super::step::Step;

impl Exchange {
    /// The whole events of an event stream so far, each with its data
    /// echoed; what follows the last held (up to the bound). An event that
    /// cannot be read ends the stream: an error for each request still
    /// waiting instead.
    pub(super) fn events(&mut self, bytes: &[u8]) -> Step {
        let limit = self.shared.options.max_answer_bytes as usize;
        let mut step = Step::default();
        let mut start = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            match self.splitter.feed(byte) {
                None => continue,
                Some(Cut::Gap) => step.given(at..at + 1),
                Some(Cut::EventEnd) => {
                    let whole = at + 1;
                    let echoed = if self.held.is_empty() {
                        let event = bytes.get(start..at).unwrap_or_default();
                        self.event(event, limit)
                    } else {
                        let mut held = std::mem::take(&mut self.held);
                        held.extend_from_slice(bytes.get(start..at).unwrap_or_default());
                        self.event(&held, limit).map(|echoed| echoed.or(Some(held)))
                    };
                    match echoed {
                        Err(why) => return self.stream_failed(step, why),
                        Ok(None) => step.given(start..whole),
                        Ok(Some(mut out)) => {
                            out.extend_from_slice(bytes.get(at..whole).unwrap_or_default());
                            step.made(out);
                        }
                    }
                }
            }
            start = at + 1;
        }
        self.held
            .extend_from_slice(bytes.get(start..).unwrap_or_default());
        if self.held.len() > limit {
            return self.stream_failed(step, Own::AnswerTooLarge);
        }
        step
    }

    /// One event (its bytes up to the break that ends it) echoed: `None`
    /// when it goes on as it came, its new bytes (the break left to the
    /// caller) when echoing changed it; why not, when it cannot be read.
    fn event(&mut self, bytes: &[u8], limit: usize) -> Result<Option<Vec<u8>>, Own> {
        if bytes.len() > limit {
            return Err(Own::AnswerTooLarge);
        }
        let event = Event::read(bytes, std::mem::take(&mut self.first_event));
        if let (Some(session), Some(body), Some(id)) = (&self.session, self.remembered, event.id())
        {
            self.shared.sessions().stream_event(session, body, id);
        }
        let Some(data) = event.data() else {
            return Ok(None);
        };
        if !begins_answer(&data) {
            return Err(Own::AnswerNotJson);
        }
        match self
            .shared
            .filter
            .echo_to(&data, &self.awaiting, self.tally.as_deref_mut())
        {
            None => Err(Own::AnswerNotJson),
            Some(Cow::Borrowed(_)) => Ok(None),
            Some(Cow::Owned(echoed)) => Ok(Some(event.with_data(echoed.as_bytes()))),
        }
    }

    /// Ends an event stream that cannot go on: after the events already
    /// read, an error for each request still waiting, as events.
    fn stream_failed(&mut self, mut step: Step, why: Own) -> Step {
        self.mode = Mode::Over;
        self.held = Vec::new();
        for error in self.failures(why, true) {
            step.made(events::event(&error));
        }
        step.over = true;
        step
    }

    /// A piece of a JSON answer with the replies joined, as it streams: a
    /// batch goes on as it came (but for whitespace before its first item),
    /// the replies after its `[`; a single message becomes the last of a
    /// batch of the replies. An answer that begins as no JSON-RPC answer
    /// does is not passed on.
    pub(super) fn join(&mut self, mut joining: Joining, bytes: &[u8]) -> Step {
        let mut step = Step::default();
        let mut at = 0;
        if joining == Joining::Start {
            let Some(first) = past_space(bytes, 0) else {
                return step;
            };
            let replies = self.replies.join(",");
            match bytes.get(first) {
                Some(b'{') => {
                    step.made(format!("[{replies},").into_bytes());
                    joining = Joining::Object;
                    at = first;
                }
                Some(b'[') => {
                    step.made(format!("[{replies}").into_bytes());
                    joining = Joining::Items;
                    at = first + 1;
                }
                // Its head went already (200, JSON): the replies and the errors are its body.
                _ => {
                    let mut instead = self.instead(Own::AnswerNotJson);
                    instead.head = None;
                    return instead;
                }
            }
        }
        if joining == Joining::Items {
            let Some(item) = past_space(bytes, at) else {
                self.mode = Mode::Join(joining);
                return step;
            };
            if bytes.get(item) != Some(&b']') {
                step.made(b",".to_vec());
            }
            joining = Joining::Array;
            at = item;
        }
        self.mode = Mode::Join(joining);
        step.given(at..bytes.len());
        step
    }
}
