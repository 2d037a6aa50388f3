//! Fitting an envelope in `max_envelope_bytes` (AI-14): its size as
//! compact JSON, measured without writing it, and what goes, in a fixed
//! order, until it fits.

use super::{Cleaned, Fate};
use crate::diagnostics::{Action, Rule};
use crate::json::{self, Slot};
use crate::path::Path;
use crate::schema::EnvelopeField;

/// The fields dropped, in this order, to fit an envelope in its byte limit
/// once its unknown fields are gone: `userIntent.text` comes first, marked
/// redacted (AI-15); `turnId` is kept to the last.
const FIT_ORDER: [EnvelopeField; 3] = [
    EnvelopeField::InvocationReason,
    EnvelopeField::Model,
    EnvelopeField::UserIntent,
];

impl<'a> Cleaned<'a, '_> {
    /// The size of the envelope as it stands now, as compact JSON, each
    /// string measured by `string_len`.
    // Out of line: inlined for both measures it is 5 KB of the module, for
    // what runs only when an envelope is near its limit.
    #[inline(never)]
    fn json_len(&self, string_len: fn(&str) -> usize) -> usize {
        // `{}`, and `"name":value` and a comma for each member, one comma too many.
        let member = |name: &str, value: usize| string_len(name) + 1 + value + 1;
        let mut len = 2 + self.others_len(None, string_len);
        for (which, fate) in self.fields.iter() {
            let (field, view) = (which.spec(), &self.view.fields[which]);
            if fate.gone || !view.value.is_present() {
                continue;
            }
            if !field.is_object() {
                let text = self.member_text(fate.text.map_or(Fate::Same, Fate::Text), &view.value);
                len += member(field.name, string_len(text.unwrap_or_default()));
                continue;
            }
            let mut inner = 2 + self.others_len(Some(which), string_len);
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
    fn others_len(&self, field: Option<EnvelopeField>, string_len: fn(&str) -> usize) -> usize {
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
            let bound: usize = self
                .view
                .fields
                .iter()
                .map(|(field, view)| {
                    let limit = self.policy.limit(field) as usize;
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
    pub(super) fn fit(&mut self, path: &Path<'_>) {
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
            let field_path = field.map(|f| path.join(f.name()));
            self.change(
                Action::Dropped,
                &field_path.as_ref().unwrap_or(path).join(name),
                Rule::Ai14,
            );
            if let Some(field) = field {
                self.fields[field].touched = true;
            }
        }
        if self.fits() || self.drop_intent_text(path) && self.fits() {
            return;
        }
        for field in FIT_ORDER {
            if self.drop_field(field, path) && self.fits() {
                return;
            }
        }
        self.change(Action::Dropped, path, Rule::Ai14);
        self.dropped = true;
    }

    /// Removes `userIntent.text` and marks the intent redacted (AI-15);
    /// whether there was a text to remove.
    fn drop_intent_text(&mut self, path: &Path<'_>) -> bool {
        let intent = EnvelopeField::UserIntent.spec();
        let (Some((text, member)), Some((flag, _))) = (intent.text(), intent.flag()) else {
            return false;
        };
        if self.text_of(EnvelopeField::UserIntent).is_none() {
            return false;
        }
        let fate = &mut self.fields[EnvelopeField::UserIntent];
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

    /// Removes `field` when it is still there; whether it was.
    fn drop_field(&mut self, field: EnvelopeField, path: &Path<'_>) -> bool {
        let present = self.view.fields[field].value.is_present();
        let fate = &mut self.fields[field];
        if !present || fate.gone {
            return false;
        }
        fate.gone = true;
        fate.touched = true;
        self.change(Action::Dropped, &path.join(field.name()), Rule::Ai14);
        true
    }
}

#[cfg(all(test, feature = "value"))]
mod tests {
    use super::*;
    use crate::policy::{FieldPolicy, Policy};
    use crate::sanitize::sanitize;
    use crate::view::Envelope;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

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
