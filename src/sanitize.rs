//! Making an envelope safe to persist and forward (AI-8, AI-12..AI-15).

use std::borrow::Cow;

#[cfg(feature = "value")]
use serde::Serialize;

use crate::diagnostics::{Action, Change, Rule};
use crate::edit::{Edit, Put, Target};
use crate::error::Error;
use crate::json::{self, Slot, Text};
use crate::path::Path;
use crate::policy::{FieldPolicy, Policy};
use crate::schema::{
    ENVELOPE, FIELDS, Field, Group, Handling, Holds, MAX_MEMBERS, Place, Reads, USER_INTENT,
};

/// What `sanitize` reads of a message.
pub(crate) const READS: Reads = FIELDS | Group::Response.bit();
use crate::text;
use crate::view::{Envelope, FieldView, Message};
#[cfg(feature = "value")]
use serde_json::Value;

/// How deep a kept unknown field may nest before its deeper part is dropped.
const MAX_UNKNOWN_DEPTH: usize = 16;

/// The fields dropped, in this order, to fit an envelope in its byte limit
/// once its unknown fields are gone: `userIntent.text` comes first, marked
/// redacted (AI-15); `turnId` is kept to the last.
const FIT_ORDER: [usize; 3] = [0, 1, USER_INTENT];

/// What [`sanitize`] returns: the message made safe, and every change made.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Policy};
/// use serde_json::json;
///
/// let request = json!({"method": "ping"});
/// let out = sanitize(request.clone(), &Policy::default())?;
/// assert_eq!(out.message, request);
/// assert!(out.changes.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sanitized {
    /// The message, with its envelope made safe.
    pub message: Value,
    /// What was changed, in the order of the envelope.
    pub changes: Vec<Change>,
}

/// Makes a message's invocation envelope safe to persist or forward under
/// `policy`; a clean, well-formed envelope passes unchanged (AI-12).
///
/// Malformed parts are removed, not guessed at; strings are neutralized
/// (AI-13) and cut to their limits (AI-14); `userIntent.redacted` becomes true
/// when its text was touched (AI-15); unknown fields are dropped or kept by
/// policy (AI-8); an envelope over `max_envelope_bytes` loses unknown fields,
/// then `userIntent.text`, `invocationReason`, `model` and `userIntent` until
/// it fits, and is dropped whole when `turnId` alone does not fit. Nothing
/// outside the envelope is touched, the `ui` entry included (UI-8); a message
/// that is not a request is returned as it is.
///
/// # Errors
///
/// `not-a-message` (TypeError) when `message` is not an object; a KEY-3 code,
/// `invalid-limit` or `invalid-option` (RangeError) for a bad policy.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Policy};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"name": "q", "_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"userIntent": {"text": "a\r\nFAKE LOG LINE"}}}}});
/// let out = sanitize(request, &Policy::default())?;
/// assert_eq!(
///     out.message["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"]["userIntent"],
///     json!({"text": "a  FAKE LOG LINE", "redacted": true})
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn sanitize(message: Value, policy: &Policy) -> Result<Sanitized, Error> {
    policy.check()?;
    let (changes, edits) = {
        let view = Message::of(&message, &policy.keys, READS);
        let cleaned = plan(&view, policy)?;
        (cleaned.changes, cleaned.edits)
    };
    Ok(Sanitized {
        message: crate::edit::apply(message, edits, &policy.keys, &[]),
        changes,
    })
}

/// What sanitizing a message comes to: its changes, and its edits.
pub(crate) struct Plan {
    pub changes: Vec<Change>,
    pub edits: Vec<Edit>,
}

/// Sanitizes the envelope of a message's view: `not-a-message` unless the
/// message is a request or a response (which is returned as it is, MSG-1).
/// The policy is checked by the caller.
pub(crate) fn plan(view: &Message, policy: &Policy) -> Result<Plan, Error> {
    crate::message::message(view)?;
    if !view.is_request() || !view.envelope.value.is_present() {
        return Ok(Plan {
            changes: Vec::new(),
            edits: Vec::new(),
        });
    }
    let path = Path::place(Place::Envelope, &policy.keys);
    let cleaned = Cleaned::new(&view.envelope, policy, &path);
    let edits = cleaned.edits(Place::Envelope);
    let mut changes = cleaned.changes;
    crate::diagnostics::cap(&mut changes);
    Ok(Plan { changes, edits })
}

/// What becomes of one member an envelope field defines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Fate {
    /// Kept as it stands (or still absent).
    #[default]
    Same,
    Gone,
    /// A string made safe: `texts[n]`.
    Text(usize),
    /// The flag set, for text that was touched (AI-15).
    True,
}

/// What becomes of one field.
#[derive(Clone, Copy, Debug, Default)]
struct FieldFate {
    gone: bool,
    /// For a string field: its text made safe, `texts[n]`, when it changed.
    text: Option<usize>,
    members: [Fate; MAX_MEMBERS],
    /// A change was made at or below it.
    touched: bool,
}

/// A member of the envelope, or of one of its fields (`field`), that the
/// table does not define (AI-8): kept as JSON made safe, or removed.
struct Other<'a> {
    field: Option<usize>,
    name: &'a str,
    /// The value as JSON made safe; `None` once removed.
    kept: Option<String>,
    /// The kept JSON differs from the value read.
    changed: bool,
}

/// An envelope made safe under a policy: what becomes of each part, and the
/// changes that says, in the order of the envelope.
pub(crate) struct Cleaned<'a, 'v> {
    view: &'v Envelope<'a>,
    policy: &'v Policy,
    /// The envelope is dropped whole.
    dropped: bool,
    fields: [FieldFate; 4],
    others: Vec<Other<'a>>,
    texts: Vec<String>,
    pub changes: Vec<Change>,
}

impl<'a, 'v> Cleaned<'a, 'v> {
    /// Sanitizes `envelope`, whose pointer is `path`.
    pub(crate) fn new(envelope: &'v Envelope<'a>, policy: &'v Policy, path: &Path<'_>) -> Self {
        let mut cleaned = Cleaned {
            view: envelope,
            policy,
            dropped: false,
            fields: Default::default(),
            others: Vec::new(),
            texts: Vec::new(),
            changes: Vec::new(),
        };
        if !envelope.value.is_object() {
            cleaned.change(Action::Dropped, path, Rule::Ai2);
            cleaned.dropped = true;
            return cleaned;
        }
        for (index, (field, view)) in ENVELOPE.iter().zip(&envelope.fields).enumerate() {
            if view.value.is_present() {
                let before = cleaned.changes.len();
                let mut fate = cleaned.field(index, field, view, &path.join(field.name));
                fate.touched = cleaned.changes.len() > before;
                if let Some(slot) = cleaned.fields.get_mut(index) {
                    *slot = fate;
                }
            }
        }
        if envelope.others > 0 {
            cleaned.others_of(None, &envelope.unknown(), path);
        }
        cleaned.fit(path);
        cleaned
    }

    fn change(&mut self, action: Action, path: &Path<'_>, rule: Rule) {
        self.changes.push(Change {
            action,
            path: path.render(),
            rule,
        });
    }

    /// The text neutralized (AI-13) and cut to `limit` bytes (AI-14), and
    /// whether it changed. The text is `None` when it stays as read; a lone
    /// surrogate read as U+FFFD is a change of its own (MSG-3).
    fn text(&mut self, text: Text<'_>, limit: u32, path: &Path<'_>) -> (Option<String>, bool) {
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

    fn field(
        &mut self,
        index: usize,
        field: &Field,
        view: &FieldView<'a>,
        path: &Path<'_>,
    ) -> FieldFate {
        let handling = (field.handling)(self.policy);
        let limit = (field.limit)(self.policy);
        let mut fate = FieldFate::default();
        if handling == Handling::Drop {
            self.change(Action::Dropped, path, Rule::Ai12);
            fate.gone = true;
            return fate;
        }
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
            self.others_of(Some(index), &view.unknown(field), path);
        }
        fate
    }

    /// Unknown members of the envelope or of one of its fields (`field`),
    /// at `path`: dropped, or kept made safe (AI-8).
    fn others_of(
        &mut self,
        field: Option<usize>,
        members: &[(&'a str, Slot<'a>)],
        path: &Path<'_>,
    ) {
        for (name, value) in members {
            let kept = if self.policy.unknown_fields == FieldPolicy::Drop {
                self.change(Action::Dropped, &path.join(name), Rule::Ai8);
                None
            } else {
                let mut json = String::new();
                self.member(name, *value, path, MAX_UNKNOWN_DEPTH, &mut json)
                    .map(|changed| (json, changed))
            };
            self.others.push(Other {
                field,
                name,
                changed: kept.as_ref().is_some_and(|(_, changed)| *changed),
                kept: kept.map(|(json, _)| json),
            });
        }
    }

    /// A kept unknown member: dropped (`None`) when its name would need
    /// changing or its value nests too deep; else its value made safe is
    /// written to `out`, and whether it changed is returned.
    fn member(
        &mut self,
        name: &str,
        value: Slot<'_>,
        path: &Path<'_>,
        depth: usize,
        out: &mut String,
    ) -> Option<bool> {
        let path = path.join(name);
        if text::has_forbidden(name) {
            self.change(Action::Dropped, &path, Rule::Ai13);
            return None;
        }
        if name.len() > self.policy.max_reason_bytes as usize {
            self.change(Action::Dropped, &path, Rule::Ai14);
            return None;
        }
        self.plain(value, &path, depth, out)
    }

    /// Any JSON value of a kept unknown field, written to `out`: strings
    /// made safe like the rest, nesting cut at `MAX_UNKNOWN_DEPTH`.
    fn plain(
        &mut self,
        value: Slot<'_>,
        path: &Path<'_>,
        depth: usize,
        out: &mut String,
    ) -> Option<bool> {
        let is_container = matches!(value, Slot::Array(_) | Slot::Object(_));
        if is_container && depth == 0 {
            self.change(Action::Dropped, path, Rule::Ai8);
            return None;
        }
        let depth = depth.saturating_sub(1);
        let mut changed = false;
        match value {
            Slot::String(text) => {
                let (clean, _) = self.text(text, self.policy.max_reason_bytes, path);
                changed = clean.is_some();
                json::write_string(out, clean.as_deref().unwrap_or(text.text));
            }
            Slot::Array(tree) => {
                out.push('[');
                let mut first = true;
                for (index, item) in tree.items().enumerate() {
                    let mut written = String::new();
                    match self.plain(item, &path.index(index), depth, &mut written) {
                        Some(item_changed) => {
                            changed |= item_changed;
                            if !std::mem::take(&mut first) {
                                out.push(',');
                            }
                            out.push_str(&written);
                        }
                        None => changed = true,
                    }
                }
                out.push(']');
            }
            Slot::Object(tree) => {
                out.push('{');
                let mut first = true;
                for (name, item) in crate::view::unknown(tree, 0, std::iter::empty()) {
                    let mut written = String::new();
                    match self.member(name, item, path, depth, &mut written) {
                        Some(item_changed) => {
                            changed |= item_changed;
                            if !std::mem::take(&mut first) {
                                out.push(',');
                            }
                            json::write_string(out, name);
                            out.push(':');
                            out.push_str(&written);
                        }
                        None => changed = true,
                    }
                }
                out.push('}');
            }
            scalar => json::write_scalar(out, &scalar),
        }
        Some(changed)
    }

    /// The text a member keeps, by its fate and the slot it had.
    fn member_text(&self, fate: Fate, slot: &Slot<'a>) -> Option<&str> {
        match fate {
            Fate::Same => slot.str(),
            Fate::Text(at) => self.texts.get(at).map(String::as_str),
            Fate::Gone | Fate::True => None,
        }
    }

    /// The text a field keeps: its string, or its text member's.
    pub(crate) fn text_of(&self, index: usize) -> Option<&str> {
        let ((field, fate), view) = ENVELOPE
            .iter()
            .zip(&self.fields)
            .zip(&self.view.fields)
            .nth(index)?;
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
    pub(crate) fn touched(&self, index: usize) -> bool {
        self.dropped || self.fields.get(index).is_some_and(|fate| fate.touched)
    }

    /// The size of the envelope as it stands now, as compact JSON, each
    /// string measured by `string_len`.
    // Out of line: inlined for both measures it is 5 KB of the module, for
    // what runs only when an envelope is near its limit.
    #[inline(never)]
    fn json_len(&self, string_len: fn(&str) -> usize) -> usize {
        // `{}`, and `"name":value` and a comma for each member, one comma too many.
        let member = |name: &str, value: usize| string_len(name) + 1 + value + 1;
        let mut len = 2 + self.others_len(None, string_len);
        let fields = ENVELOPE.iter().zip(&self.fields).zip(&self.view.fields);
        for (index, ((field, fate), view)) in fields.enumerate() {
            if fate.gone || !view.value.is_present() {
                continue;
            }
            if !field.is_object() {
                let text = self.member_text(fate.text.map_or(Fate::Same, Fate::Text), &view.value);
                len += member(field.name, string_len(text.unwrap_or_default()));
                continue;
            }
            let mut inner = 2 + self.others_len(Some(index), string_len);
            let defined = field.members.iter().zip(&fate.members).zip(&view.members);
            for ((name, fate), slot) in defined {
                inner += match (fate, slot) {
                    (Fate::True, _) | (Fate::Same, Slot::Bool(true)) => member(name.name, 4),
                    (Fate::Same, Slot::Bool(false)) => member(name.name, 5),
                    _ => match self.member_text(*fate, slot) {
                        Some(text) => member(name.name, string_len(text)),
                        None => 0,
                    },
                };
            }
            len += member(field.name, inner - usize::from(inner > 2));
        }
        len - usize::from(len > 2)
    }

    /// The size of the kept unknown members of `field` as JSON members, each
    /// with its comma.
    fn others_len(&self, field: Option<usize>, string_len: fn(&str) -> usize) -> usize {
        self.others
            .iter()
            .filter(|other| other.field == field)
            .filter_map(|other| {
                other
                    .kept
                    .as_ref()
                    .map(|json| string_len(other.name) + 2 + json.len())
            })
            .sum()
    }

    /// Whether the envelope fits `max_envelope_bytes`. A text kept is at
    /// most three times its bytes (U+FFFD for a control) and at most its
    /// limit, and twice that as JSON (nothing left needs more escaping);
    /// with no unknown member kept, names, braces, commas and flags take
    /// less than 256 bytes. That bound settles the common case without
    /// writing or scanning anything.
    fn fits(&self) -> bool {
        let max = self.policy.max_envelope_bytes as usize;
        if self.others.iter().all(|other| other.kept.is_none()) {
            let bound: usize = ENVELOPE
                .iter()
                .zip(&self.view.fields)
                .map(|(field, view)| {
                    let limit = (field.limit)(self.policy) as usize;
                    std::iter::once(&view.value)
                        .chain(&view.members)
                        .filter_map(Slot::str)
                        .map(|text| 2 * (3 * text.len()).min(limit) + 2)
                        .sum::<usize>()
                })
                .sum();
            if bound + 256 <= max {
                return true;
            }
        }
        // Twice a string's bytes and its quotes bound it as JSON: when that
        // fits, nothing is escaped to find out.
        self.json_len(|text| 2 * text.len() + 2) <= max || self.json_len(json::string_len) <= max
    }

    /// Drops members, in the order the policy sets, until the envelope fits
    /// `max_envelope_bytes`; drops it whole when even `turnId` alone does not fit.
    fn fit(&mut self, path: &Path<'_>) {
        if self.fits() {
            return;
        }
        // Unknown members first: the envelope's own, then each field's.
        // `new` finds each field's in the envelope's order, then the
        // envelope's own: those come first from the end.
        let count = self.others.len();
        let own = self
            .others
            .iter()
            .position(|other| other.field.is_none())
            .unwrap_or(count);
        for at in (own..count).chain(0..own) {
            let Some(other) = self.others.get_mut(at) else {
                continue;
            };
            if other.kept.take().is_none() {
                continue;
            }
            let (field, name) = (other.field, other.name);
            let field_path = field
                .and_then(|f| ENVELOPE.get(f))
                .map(|f| path.join(f.name));
            self.change(
                Action::Dropped,
                &field_path.as_ref().unwrap_or(path).join(name),
                Rule::Ai14,
            );
            if let Some(fate) = field.and_then(|f| self.fields.get_mut(f)) {
                fate.touched = true;
            }
        }
        if self.fits() || self.drop_intent_text(path) && self.fits() {
            return;
        }
        for index in FIT_ORDER {
            if self.drop_field(index, path) && self.fits() {
                return;
            }
        }
        self.change(Action::Dropped, path, Rule::Ai14);
        self.dropped = true;
    }

    /// Removes `userIntent.text` and marks the intent redacted (AI-15);
    /// whether there was a text to remove.
    fn drop_intent_text(&mut self, path: &Path<'_>) -> bool {
        let intent = &ENVELOPE[USER_INTENT];
        let (Some((text, member)), Some((flag, _))) = (intent.text(), intent.flag()) else {
            return false;
        };
        if self.text_of(USER_INTENT).is_none() {
            return false;
        }
        let fate = &mut self.fields[USER_INTENT];
        for (at, put) in [(text, Fate::Gone), (flag, Fate::True)] {
            if let Some(member) = fate.members.get_mut(at) {
                *member = put;
            }
        }
        fate.touched = true;
        self.change(
            Action::Dropped,
            &path.join(intent.name).join(member.name),
            Rule::Ai14,
        );
        true
    }

    /// Removes the field at `index` when it is still there; whether it was.
    fn drop_field(&mut self, index: usize, path: &Path<'_>) -> bool {
        let present = self
            .view
            .fields
            .get(index)
            .is_some_and(|view| view.value.is_present());
        let (Some(field), Some(fate)) = (ENVELOPE.get(index), self.fields.get_mut(index)) else {
            return false;
        };
        if !present || fate.gone {
            return false;
        }
        fate.gone = true;
        fate.touched = true;
        self.change(Action::Dropped, &path.join(field.name), Rule::Ai14);
        true
    }

    /// The edits that make the envelope at `place` what it became.
    pub(crate) fn edits(&self, place: Place) -> Vec<Edit> {
        if self.dropped {
            return vec![Edit::new(Target::place(place), Put::Remove)];
        }
        let text = |at: usize| Put::Text(self.texts.get(at).cloned().unwrap_or_default());
        let mut edits = Vec::new();
        for (index, (fate, view)) in self.fields.iter().zip(&self.view.fields).enumerate() {
            let target = Target::field(place, index);
            if fate.gone {
                edits.push(Edit::new(target, Put::Remove));
                continue;
            }
            if let Some(at) = fate.text {
                edits.push(Edit::new(target, text(at)));
            }
            for (member, (fate, slot)) in fate.members.iter().zip(&view.members).enumerate() {
                let target = Target::member(place, index, member);
                match fate {
                    Fate::Gone if slot.is_present() => edits.push(Edit::new(target, Put::Remove)),
                    Fate::Same | Fate::Gone => {}
                    Fate::Text(at) => edits.push(Edit::new(target, text(*at))),
                    Fate::True => edits.push(Edit::new(target, Put::Bool(true))),
                }
            }
        }
        let gone = self.fields.map(|fate| fate.gone);
        for other in &self.others {
            let target = match other.field {
                Some(field) if gone.get(field).copied().unwrap_or(true) => continue,
                Some(field) => Target::field(place, field),
                None => Target::place(place),
            };
            match &other.kept {
                None => edits.push(Edit::new(target.named(other.name), Put::Remove)),
                Some(json) if other.changed => {
                    edits.push(Edit::new(target.named(other.name), Put::Json(json.clone())))
                }
                Some(_) => {}
            }
        }
        edits
    }
}

#[cfg(all(test, feature = "value"))]
mod tests {
    use super::*;
    use serde_json::json;

    /// `validate` relies on this: under the default policy no envelope is
    /// ever over the envelope limit once its fields are cut to size, even
    /// when every character doubles under JSON escaping.
    #[test]
    fn default_field_limits_always_fit_the_default_envelope_limit() {
        let worst = |bytes: usize| "\"".repeat(bytes);
        let envelope = json!({
            "invocationReason": {"text": worst(5000)},
            "model": {"name": worst(5000)},
            "userIntent": {"text": worst(5000), "redacted": false},
            "turnId": worst(5000),
        });
        let view = Envelope::of(&envelope);
        let policy = Policy::default();
        let cleaned = Cleaned::new(&view, &policy, &Path::ROOT);
        assert!(
            cleaned
                .changes
                .iter()
                .all(|c| c.action == Action::Truncated)
        );
        assert_eq!(cleaned.changes.len(), 4);
        let size = cleaned.json_len(json::string_len);
        assert!(size <= 8192, "{size}");
    }

    #[test]
    fn the_size_is_that_of_the_json_written() {
        let request = json!({"method": "m", "params": {"_meta": {"io.modelcontextprotocol/aiInvocation": {
            "invocationReason": {"text": "why \"so\"", "v": [1, {"a": "b"}]},
            "userIntent": {"text": "é", "redacted": false},
            "turnId": "t", "x": null}}}});
        let policy = Policy {
            unknown_fields: FieldPolicy::Keep,
            ..Policy::default()
        };
        let out = sanitize(request, &policy).unwrap();
        let envelope = &out.message["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"];
        let view = Envelope::of(envelope);
        let cleaned = Cleaned::new(&view, &policy, &Path::ROOT);
        assert_eq!(
            cleaned.json_len(json::string_len),
            serde_json::to_string(envelope).unwrap().len()
        );
    }
}
