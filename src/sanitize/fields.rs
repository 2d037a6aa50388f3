//! What becomes of each field the envelope defines: dropped by policy or
//! when malformed, its text neutralized and cut to its limit, its flag set
//! when its text was touched (AI-13..AI-15); and what each keeps.

use std::borrow::Cow;

use super::{Cleaned, Fate, FieldFate};
use crate::diagnostics::{Action, Rule};
use crate::json::{Slot, Text};
use crate::path::Path;
use crate::policy::Handling;
use crate::schema::{EnvelopeField, Holds};
use crate::text;
use crate::view::FieldView;

impl<'a> Cleaned<'a, '_> {
    /// The text neutralized (AI-13) and cut to `limit` bytes (AI-14), and
    /// whether it changed. The text is `None` when it stays as read; a lone
    /// surrogate read as U+FFFD is a change of its own (MSG-3).
    pub(super) fn text(
        &mut self,
        text: Text<'_>,
        limit: u32,
        path: &Path<'_>,
    ) -> (Option<String>, bool) {
        if !text.lossy && text::is_plain(text.text, limit as usize) {
            return (None, false);
        }
        if text.lossy {
            self.change(Action::Neutralized, path, Rule::Msg3);
        }
        let clean = text::clean(text.text, limit as usize);
        if clean.neutralized {
            self.change(Action::Neutralized, path, Rule::Ai13);
        }
        if clean.invisible {
            self.change(Action::Neutralized, path, Rule::Txt1);
        }
        if clean.truncated {
            self.change(Action::Truncated, path, Rule::Ai14);
        }
        let touched = text.lossy || clean.neutralized || clean.invisible || clean.truncated;
        let text = match clean.text {
            Cow::Owned(text) => Some(text),
            Cow::Borrowed(same) if text.lossy => Some(same.to_owned()),
            Cow::Borrowed(_) => None,
        };
        (text, touched)
    }

    /// Keeps `text` among the texts made safe; its index.
    fn keep_text(&mut self, text: String) -> usize {
        self.texts.push(text);
        self.texts.len() - 1
    }

    /// What becomes of field `which`, present, read as `view` at `path`:
    /// gone when the policy drops it (AI-12) or it is malformed (a string
    /// field not a string, an object field not an object or without a
    /// required member of its type: never guessed at); else each member
    /// kept, made safe or removed, the flag set when the text was touched
    /// (AI-15), and its unknown members settled.
    pub(super) fn field(
        &mut self,
        which: EnvelopeField,
        view: &FieldView<'a>,
        path: &Path<'_>,
    ) -> FieldFate {
        let field = which.spec();
        let handling = self.policy.handling(which);
        let limit = self.policy.limit(which);
        let mut fate = FieldFate::default();
        // Dropped by policy: its content does not matter.
        if handling == Handling::Drop {
            self.change(Action::Dropped, path, Rule::Ai12);
            fate.gone = true;
            return fate;
        }
        // `turnId`: a string, made safe, or gone.
        if !field.is_object() {
            match view.value.text() {
                Some(text) => {
                    let (clean, _) = self.text(text, limit, path);
                    fate.text = clean.map(|clean| self.keep_text(clean));
                }
                None => {
                    self.change(Action::Dropped, path, field.rule);
                    fate.gone = true;
                }
            }
            return fate;
        }
        let malformed = !view.value.is_object()
            || field
                .members
                .iter()
                .zip(&view.members)
                .any(|(member, slot)| member.required && slot.kind() != Some(member.holds.kind()));
        if malformed {
            self.change(Action::Dropped, path, field.rule);
            fate.gone = true;
            return fate;
        }
        // Each member it defines. Under redaction a text is removed whole;
        // a member of the wrong type is removed (and, if it held the text,
        // counts as the text touched, so the flag says so).
        let mut text_touched = false;
        let members = field.members.iter().zip(&view.members);
        for ((member, slot), out) in members.zip(fate.members.iter_mut()) {
            let member_path = path.join(member.name);
            *out = match (member.holds, slot) {
                (_, Slot::Absent) => Fate::Same,
                (Holds::Text, Slot::String(_)) if handling == Handling::Redact => {
                    self.change(Action::Redacted, &member_path, Rule::Ai15);
                    text_touched = true;
                    Fate::Gone
                }
                (Holds::Text, Slot::String(text)) => {
                    let (clean, touched) = self.text(*text, limit, &member_path);
                    text_touched |= touched;
                    clean.map_or(Fate::Same, |clean| Fate::Text(self.keep_text(clean)))
                }
                (Holds::Flag, Slot::Bool(_)) => Fate::Same,
                (holds, _) => {
                    self.change(Action::Dropped, &member_path, field.rule);
                    text_touched |= holds == Holds::Text;
                    Fate::Gone
                }
            };
        }
        if text_touched {
            if let Some(flag) = field.flag().and_then(|(at, _)| fate.members.get_mut(at)) {
                *flag = Fate::True;
            }
        }
        if view.others > 0 {
            self.others_of(Some(which), &view.unknown(field), path);
        }
        fate
    }

    /// The text a member keeps, by its fate and the slot it had.
    pub(super) fn member_text(&self, fate: Fate, slot: &Slot<'a>) -> Option<&str> {
        match fate {
            Fate::Same => slot.str(),
            Fate::Text(at) => self.texts.get(at).map(String::as_str),
            Fate::Gone | Fate::True => None,
        }
    }

    /// The text a field keeps: its string, or its text member's.
    pub(crate) fn text_of(&self, which: EnvelopeField) -> Option<&str> {
        let (field, fate, view) = (which.spec(), &self.fields[which], &self.view.fields[which]);
        if self.dropped || fate.gone {
            return None;
        }
        if !field.is_object() {
            return self.member_text(fate.text.map_or(Fate::Same, Fate::Text), &view.value);
        }
        let (at, _) = field.text()?;
        self.member_text(*fate.members.get(at)?, view.members.get(at)?)
    }

    /// Whether a field had any change at or below it, or the envelope was
    /// dropped whole.
    pub(crate) fn touched(&self, field: EnvelopeField) -> bool {
        self.dropped || self.fields[field].touched
    }
}
