//! The edits that carry out what sanitizing decided, for a binding to apply
//! to the message (a `serde_json::Value`, a JS copy, or the text of a body).

use super::{Cleaned, Fate};
use crate::edit::{Edit, Put, Target};
use crate::schema::Place;

impl<'a> Cleaned<'a, '_> {
    /// The edits that make the envelope at `place` what it became: only
    /// what changed is written (a clean envelope gives none, AI-12), each
    /// field's edits before its unknown members', and nothing below a field
    /// that is gone. Texts are put whole (already neutralized and cut);
    /// unknown members kept are put as the JSON made of them, and only when
    /// that differs from what was read.
    pub(crate) fn edits(&self, place: Place) -> Vec<Edit> {
        if self.dropped {
            return vec![Edit::new(Target::place(place), Put::Remove)];
        }
        let text = |at: usize| Put::Text(self.texts.get(at).cloned().unwrap_or_default());
        let mut edits = Vec::new();
        for (field, fate) in self.fields.iter() {
            let view = &self.view.fields[field];
            let target = Target::field(place, field);
            if fate.gone {
                edits.push(Edit::new(target, Put::Remove));
                continue;
            }
            if let Some(at) = fate.text {
                edits.push(Edit::new(target, text(at)));
            }
            for (member, (fate, slot)) in fate.members.iter().zip(&view.members).enumerate() {
                let target = Target::member(place, field, member);
                match fate {
                    // A member gone that was never there needs no removing.
                    Fate::Gone if slot.is_present() => edits.push(Edit::new(target, Put::Remove)),
                    Fate::Same | Fate::Gone => {}
                    Fate::Text(at) => edits.push(Edit::new(target, text(*at))),
                    Fate::True => edits.push(Edit::new(target, Put::Bool(true))),
                }
            }
        }
        // Unknown members: of the envelope, or of a field still there.
        for other in &self.others {
            let target = match other.field {
                Some(field) if self.fields[field].gone => continue,
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
