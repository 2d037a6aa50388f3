//! A message as every rule reads it: the places of the table
//! ([`crate::schema`]), each a borrowed [`Slot`]. Natively a view is built
//! from a `&serde_json::Value` without copying anything; the wasm build
//! builds it from what JS read of the same places.

#[cfg(feature = "value")]
use serde_json::Value;

use crate::json::{Slot, Tree, sort_by_name};
use crate::keys::KeyOptions;
use crate::path::key_name;
use crate::schema::{
    ENVELOPE, EnvelopeField, FIELDS, Field, MAX_CHILDREN, MAX_MEMBERS, Node, PerField, Place, Read,
    Reads,
};

/// One field of an envelope.
#[derive(Clone, Copy, Debug, Default)]
pub struct FieldView<'a> {
    pub value: Slot<'a>,
    /// The members the table defines for it, in its order.
    pub members: [Slot<'a>; MAX_MEMBERS],
    /// How many members it has that the table does not define.
    pub others: usize,
}

/// An invocation envelope: a request's, a response's echo, or one given to
/// `attachInvocation`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Envelope<'a> {
    /// The envelope's value, as far as it was read.
    pub value: Slot<'a>,
    /// A view of each field of [`ENVELOPE`].
    pub fields: PerField<FieldView<'a>>,
    /// How many members it has that the table does not define.
    pub others: usize,
}

/// Whether two member names are the same, the lengths and first bytes
/// compared before the rest (most names differ in those).
#[inline]
fn same(known: &str, name: &str) -> bool {
    known.len() == name.len()
        && known.as_bytes().first() == name.as_bytes().first()
        && known == name
}

/// Unknown members of an object: those whose name is not in `known`,
/// sorted by name so that every runtime reports them in one order. `others`
/// says how many there are.
pub(crate) fn unknown<'a>(
    tree: Tree<'a>,
    others: usize,
    known: impl Iterator<Item = &'static str> + Clone,
) -> Vec<(&'a str, Slot<'a>)> {
    let mut found = Vec::with_capacity(others.min(64));
    found.extend(
        tree.members()
            .filter(|(name, _)| !known.clone().any(|known| known == *name)),
    );
    sort_by_name(&mut found);
    found
}

impl<'a> Envelope<'a> {
    /// The unknown members of the envelope itself.
    #[inline]
    pub fn unknown(&self) -> Vec<(&'a str, Slot<'a>)> {
        if self.others == 0 {
            return Vec::new();
        }
        unknown(self.value.tree(), self.others, crate::schema::field_names())
    }

    /// The string `turnId`, when the envelope is an object holding one.
    pub fn turn_id(&self) -> Option<crate::json::Text<'a>> {
        self.fields[EnvelopeField::TurnId].value.text()
    }

    /// The view of an envelope value: one pass over its members, each given
    /// to the field it names.
    #[cfg(feature = "value")]
    pub fn of(value: &'a Value) -> Self {
        let mut envelope = Envelope::default();
        envelope.read(Slot::of(value));
        envelope
    }

    /// Makes this the view of `value`, in place.
    pub fn read(&mut self, value: Slot<'a>) {
        let envelope = self;
        envelope.value = value;
        let Slot::Object(members) = value else {
            return;
        };
        for (name, value) in members.members() {
            let fields = ENVELOPE.values().zip(envelope.fields.iter_mut());
            let Some((field, (_, view))) =
                fields.into_iter().find(|(field, _)| same(field.name, name))
            else {
                envelope.others += 1;
                continue;
            };
            view.value = value;
            let Slot::Object(inner) = value else {
                continue;
            };
            for (name, value) in inner.members() {
                let members = field.members.iter().zip(view.members.iter_mut());
                match members
                    .into_iter()
                    .find(|(member, _)| same(member.name, name))
                {
                    Some((_, slot)) => *slot = value,
                    None => view.others += 1,
                }
            }
        }
    }
}

impl<'a> FieldView<'a> {
    /// The unknown members of this field, which is `field`.
    #[inline]
    pub fn unknown(&self, field: &Field) -> Vec<(&'a str, Slot<'a>)> {
        if self.others == 0 {
            return Vec::new();
        }
        unknown(self.value.tree(), self.others, field.member_names())
    }

    /// Its flag member (`userIntent.redacted`), as read, when `field`, the
    /// field this is, defines one.
    pub fn flag(&self, field: EnvelopeField) -> Option<&Slot<'a>> {
        let (at, _) = field.spec().flag()?;
        self.members.get(at)
    }

    /// Its text member (`invocationReason.text`...), as read, when `field`,
    /// the field this is, defines one.
    pub fn text_member(&self, field: EnvelopeField) -> Option<&Slot<'a>> {
        let (at, _) = field.spec().text()?;
        self.members.get(at)
    }
}

/// A message, as far as the rules read it.
#[derive(Clone, Copy, Debug)]
pub struct MessageView<'a> {
    slots: [Slot<'a>; Place::COUNT],
    /// `params._meta[invocationKey]`.
    pub envelope: Envelope<'a>,
    /// `result._meta[invocationKey]`.
    pub echo: Envelope<'a>,
}

impl<'a> MessageView<'a> {
    /// A message of which nothing is known yet.
    #[inline(always)]
    pub fn empty() -> Self {
        MessageView {
            slots: [Slot::Absent; Place::COUNT],
            envelope: Envelope::default(),
            echo: Envelope::default(),
        }
    }

    /// What stands at `place`; absent when a parent is not an object.
    pub fn get(&self, place: Place) -> Slot<'a> {
        self.slots.get(place as usize).copied().unwrap_or_default()
    }

    /// Puts what stands at `place`.
    pub fn set(&mut self, place: Place, slot: Slot<'a>) {
        if let Some(at) = self.slots.get_mut(place as usize) {
            *at = slot;
        }
    }

    /// Whether this is a request or notification: an object with a string `method`.
    pub fn is_request(&self) -> bool {
        self.get(Place::Root).is_object() && self.get(Place::Method).str().is_some()
    }

    /// Whether this is a response: an object with `result` or `error`
    /// (read when the call's reads hold the response group).
    pub fn is_response(&self) -> bool {
        self.get(Place::Root).is_object()
            && (self.get(Place::Result).is_present() || self.get(Place::Error).is_present())
    }

    /// The view of a `serde_json::Value`, its configured keys as `keys`
    /// says, of the places a call `reads` (the others stay absent).
    #[cfg(feature = "value")]
    #[inline(always)]
    pub fn of(message: &'a Value, keys: &KeyOptions, reads: Reads) -> Self {
        MessageView::of_slot(Slot::of(message), keys, reads)
    }

    /// The view of a message read as a slot (a value, or JSON text read
    /// over the wire), its configured keys as `keys` says, of the places a
    /// call `reads`.
    pub fn of_slot(message: Slot<'a>, keys: &KeyOptions, reads: Reads) -> Self {
        let mut view = MessageView::empty();
        view.read(&crate::schema::MESSAGE, message, keys, reads);
        view
    }

    fn read(&mut self, node: &Node, value: Slot<'a>, keys: &KeyOptions, reads: Reads) {
        self.set(node.place, value);
        match node.read {
            Read::Envelope if node.place == Place::Echo => self.echo.read(value),
            Read::Envelope if reads & FIELDS == 0 => self.envelope.value = value,
            Read::Envelope => self.envelope.read(value),
            Read::Object => {
                let Slot::Object(members) = value else {
                    return;
                };
                // The others of an object are read where they stand: in it.
                let wanted = |child: &&Node| reads & child.group.bit() == child.group.bit();
                for child in node.children.iter().filter(wanted) {
                    if child.read == Read::Others {
                        self.set(child.place, value);
                    }
                }
                // The children's names, resolved once; then one pass over
                // the members, each given to the child it names.
                let mut names = [""; MAX_CHILDREN];
                for (name, child) in names.iter_mut().zip(node.children) {
                    *name = key_name(child.key, keys);
                }
                for (name, value) in members.members() {
                    let mut children = node.children.iter().zip(names);
                    let found = children
                        .find(|(child, known)| child.read != Read::Others && same(known, name));
                    if let Some((child, _)) =
                        found.filter(|(child, _)| reads & child.group.bit() == child.group.bit())
                    {
                        self.read(child, value, keys, reads);
                    }
                }
            }
            Read::Scalar | Read::Others => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Kind;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn every_place_is_read_under_the_keys_in_force() {
        let message = json!({"method": "tools/call", "id": 3, "params": {"name": "t",
            "arguments": {"user_query": "q"},
            "_meta": {"com.example/ai": {"turnId": "t-1", "userIntent": {"text": "x", "v": 1}, "x": 2},
                      "com.example/ui": {"initiator": "app"}, "model": {}}}});
        let keys = KeyOptions {
            invocation_key: Some("com.example/ai".into()),
            ui_key: Some("com.example/ui".into()),
        };
        let view = MessageView::of(&message, &keys, Reads::MAX);
        assert!(view.is_request());
        assert_eq!(view.get(Place::Initiator).str(), Some("app"));
        assert_eq!(view.get(Place::BareModel).kind(), Some(Kind::Object));
        assert_eq!(view.get(Place::UserQuery).str(), Some("q"));
        assert_eq!(view.envelope.turn_id().map(|t| t.text), Some("t-1"));
        let intent = view.envelope.fields[EnvelopeField::UserIntent];
        assert_eq!(intent.members[0].str(), Some("x"));
        assert_eq!(intent.unknown(EnvelopeField::UserIntent.spec()).len(), 1);
        assert_eq!(
            view.envelope
                .unknown()
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>(),
            ["x"]
        );
        assert!(!view.get(Place::Result).is_present());
    }
}
