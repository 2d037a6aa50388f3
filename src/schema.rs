//! The one table of a message: the SEP-2817 envelope's fields, each with its
//! members and rule, and every other place a rule reads. (What a policy
//! does with each field, and its byte limit, is the policy's to say.)
//! The views of [`crate::view`] are built from it, every rule reads those
//! views, and the npm package's reader is generated from it: nothing else
//! spells the schema out.

use crate::diagnostics::Rule;
use crate::json::Kind;

/// What a member of an envelope field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// A string: neutralized (AI-13) and cut to the field's limit (AI-14).
    Text,
    /// A boolean that says the field's text was withheld or changed (AI-15).
    Flag,
}

impl Holds {
    /// The JSON type the member must have.
    pub fn kind(self) -> Kind {
        match self {
            Holds::Text => Kind::String,
            Holds::Flag => Kind::Bool,
        }
    }
}

/// One member an envelope field defines.
#[derive(Debug)]
pub struct Member {
    pub name: &'static str,
    pub holds: Holds,
    /// Without it the field is malformed (AI-3, AI-4).
    pub required: bool,
}

/// One field of the envelope: a string (`members` empty) or an object
/// holding `members`.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    /// The rule its shape is checked against (AI-3, AI-4, AI-5, AI-7).
    pub rule: Rule,
    pub members: &'static [Member],
}

impl Field {
    /// Whether the field is an object of members (else it is a string).
    pub fn is_object(&self) -> bool {
        !self.members.is_empty()
    }

    /// The member holding the field's text.
    pub fn text(&self) -> Option<(usize, &'static Member)> {
        self.members
            .iter()
            .enumerate()
            .find(|(_, member)| member.holds == Holds::Text)
    }

    /// The member flagging the text as withheld or changed.
    pub fn flag(&self) -> Option<(usize, &'static Member)> {
        self.members
            .iter()
            .enumerate()
            .find(|(_, member)| member.holds == Holds::Flag)
    }

    /// The names of its members, for telling them from unknown ones.
    pub fn member_names(&self) -> impl Iterator<Item = &'static str> + Clone {
        self.members.iter().map(|member| member.name)
    }
}

/// The most members any field has.
pub(crate) const MAX_MEMBERS: usize = 2;

/// A field of the SEP-2817 envelope (AI-3..AI-7), named: the rules reach
/// each field's row of [`ENVELOPE`], view, fate or bare key by it, never by
/// a number. Their order is the order of diagnostics and changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvelopeField {
    /// `invocationReason` (AI-3).
    InvocationReason,
    /// `model` (AI-4).
    Model,
    /// `userIntent` (AI-5).
    UserIntent,
    /// `turnId` (AI-7).
    TurnId,
}

impl EnvelopeField {
    /// Every field, in the envelope's order.
    pub const ALL: [EnvelopeField; 4] = [
        EnvelopeField::InvocationReason,
        EnvelopeField::Model,
        EnvelopeField::UserIntent,
        EnvelopeField::TurnId,
    ];

    /// Its row of the table.
    pub fn spec(self) -> &'static Field {
        &ENVELOPE[self]
    }

    /// Its name in the envelope, and as a bare `_meta` key.
    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

/// One `T` for each field of the envelope, reached by the field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerField<T>([T; 4]);

impl<T> PerField<T> {
    /// The values of the fields, in the envelope's order.
    pub const fn new(values: [T; 4]) -> Self {
        PerField(values)
    }

    /// Each field with its value, in the envelope's order.
    pub fn iter(&self) -> impl Iterator<Item = (EnvelopeField, &T)> + Clone {
        EnvelopeField::ALL.into_iter().zip(&self.0)
    }

    /// Each field with its value to change, in the envelope's order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (EnvelopeField, &mut T)> {
        EnvelopeField::ALL.into_iter().zip(&mut self.0)
    }

    /// The values, in the envelope's order.
    pub fn values(&self) -> impl Iterator<Item = &T> + Clone {
        self.0.iter()
    }
}

impl<T> std::ops::Index<EnvelopeField> for PerField<T> {
    type Output = T;

    fn index(&self, field: EnvelopeField) -> &T {
        let [reason, model, intent, turn_id] = &self.0;
        match field {
            EnvelopeField::InvocationReason => reason,
            EnvelopeField::Model => model,
            EnvelopeField::UserIntent => intent,
            EnvelopeField::TurnId => turn_id,
        }
    }
}

impl<T> std::ops::IndexMut<EnvelopeField> for PerField<T> {
    fn index_mut(&mut self, field: EnvelopeField) -> &mut T {
        let [reason, model, intent, turn_id] = &mut self.0;
        match field {
            EnvelopeField::InvocationReason => reason,
            EnvelopeField::Model => model,
            EnvelopeField::UserIntent => intent,
            EnvelopeField::TurnId => turn_id,
        }
    }
}

/// The SEP-2817 envelope (AI-2..AI-7), a row a field.
pub static ENVELOPE: PerField<Field> = PerField::new([
    Field {
        name: "invocationReason",
        rule: Rule::Ai3,
        members: &[Member {
            name: "text",
            holds: Holds::Text,
            required: true,
        }],
    },
    Field {
        name: "model",
        rule: Rule::Ai4,
        members: &[Member {
            name: "name",
            holds: Holds::Text,
            required: true,
        }],
    },
    Field {
        name: "userIntent",
        rule: Rule::Ai5,
        members: &[
            Member {
                name: "text",
                holds: Holds::Text,
                required: false,
            },
            Member {
                name: "redacted",
                holds: Holds::Flag,
                required: false,
            },
        ],
    },
    Field {
        name: "turnId",
        rule: Rule::Ai7,
        members: &[],
    },
]);

/// The names of the envelope's fields.
pub(crate) fn field_names() -> impl Iterator<Item = &'static str> + Clone {
    ENVELOPE.values().map(|field| field.name)
}

/// A place of a message a rule reads, and where the core may write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The message itself.
    Root,
    /// `method`.
    Method,
    /// `id`.
    Id,
    /// `error`.
    Error,
    /// `result`.
    Result,
    /// `result._meta`.
    ResultMeta,
    /// `result._meta[invocationKey]`: what a response echoes (AI-11).
    Echo,
    /// `params`.
    Params,
    /// `params.name`: the tool of a `tools/call`.
    Tool,
    /// `params._meta`.
    Meta,
    /// `params._meta[invocationKey]`: the SEP-2817 envelope.
    Envelope,
    /// `params._meta[uiKey]`: the MCP Apps entry.
    Ui,
    /// `params._meta[uiKey].initiator` (UI-1..UI-7).
    Initiator,
    /// `params._meta.invocationReason` and the other bare keys (AI-9), in
    /// the order of [`ENVELOPE`].
    BareReason,
    /// `params._meta.model`.
    BareModel,
    /// `params._meta.userIntent`.
    BareIntent,
    /// `params._meta.turnId`.
    BareTurnId,
    /// The members of `params._meta` no other place names, read whole:
    /// where correlation ids are (COR-2). Natively, `_meta` itself.
    MetaOthers,
    /// `params.arguments`, read only to lift legacy arguments (AI-17).
    Arguments,
    /// `params.arguments.user_query`.
    UserQuery,
    /// `params.arguments.invocation_reason`.
    LegacyReason,
}

impl Place {
    /// How many places there are.
    pub const COUNT: usize = Place::LegacyReason as usize + 1;

    /// The bare key of `_meta` of each field.
    pub const BARE: PerField<Place> = PerField::new([
        Place::BareReason,
        Place::BareModel,
        Place::BareIntent,
        Place::BareTurnId,
    ]);
}

/// The name of a place in its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// The message has no parent.
    Root,
    /// A member name.
    Name(&'static str),
    /// The name of a field of [`ENVELOPE`] (a bare key).
    Field(EnvelopeField),
    /// The configured invocation key (KEY-3).
    Invocation,
    /// The configured `ui` key (KEY-3).
    Ui,
    /// No one name: the members of the parent that its other children do
    /// not name ([`Read::Others`]).
    Others,
}

/// How much of a place's value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Its type, and its value when a string, number or boolean.
    Scalar,
    /// Its type, and the places under it when it is an object.
    Object,
    /// An envelope: its type, and, as the call plans, the fields of
    /// [`ENVELOPE`] and the members they define, and its other members.
    Envelope,
    /// The members of the parent that its other children do not name,
    /// whole, as an object of them (the parent itself, where a binding
    /// reads nothing twice by reading it whole).
    Others,
}

/// Which calls read a place (and the places under it): every call, or only
/// those that ask for its group. A binding reads no more of a message than
/// its call asks for; `params.arguments` is never touched but to lift
/// legacy arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Read by every call.
    Always,
    /// `params.arguments` and the legacy arguments (AI-17).
    Legacy,
    /// `id` and the tool name, for audit records.
    Names,
    /// `error` and `result`, down to the echo (AI-11).
    Response,
    /// The `ui` entry and its `initiator` (UI-1..UI-7).
    Ui,
    /// The bare keys of `_meta` (AI-9).
    Bare,
    /// The other members of `_meta`, for correlation ids (COR-2).
    Correlation,
}

impl Group {
    /// The group's bit in what a call reads.
    pub const fn bit(self) -> Reads {
        match self {
            Group::Always => 0,
            Group::Legacy => 4,
            Group::Names => 8,
            Group::Response => 16,
            Group::Ui => 32,
            Group::Bare => 64,
            Group::Correlation => 128,
        }
    }
}

/// What a call reads of a message: the bits of the groups of places its
/// rules read, and [`FIELDS`] when they read the envelope's fields rather
/// than its type alone.
pub type Reads = u8;

/// Read the envelope's fields, not just its type.
pub const FIELDS: Reads = 1;

/// The most children a place has.
pub(crate) const MAX_CHILDREN: usize = 7;

/// One place in the tree of a message.
#[derive(Debug)]
pub struct Node {
    /// The place.
    pub place: Place,
    /// Its name in its parent.
    pub key: Key,
    /// How much of it is read.
    pub read: Read,
    /// Which calls read it.
    pub group: Group,
    /// The places under it.
    pub children: &'static [Node],
}

const fn leaf(place: Place, key: Key, read: Read) -> Node {
    Node {
        place,
        key,
        read,
        group: Group::Always,
        children: &[],
    }
}

const fn grouped(group: Group, node: Node) -> Node {
    Node { group, ..node }
}

/// Every place a rule reads, as a tree from the message down, in the order
/// it is read.
pub const MESSAGE: Node = Node {
    place: Place::Root,
    key: Key::Root,
    read: Read::Object,
    group: Group::Always,
    children: &[
        leaf(Place::Method, Key::Name("method"), Read::Scalar),
        grouped(Group::Names, leaf(Place::Id, Key::Name("id"), Read::Scalar)),
        grouped(
            Group::Response,
            leaf(Place::Error, Key::Name("error"), Read::Scalar),
        ),
        Node {
            place: Place::Result,
            key: Key::Name("result"),
            read: Read::Object,
            group: Group::Response,
            children: &[Node {
                place: Place::ResultMeta,
                key: Key::Name("_meta"),
                read: Read::Object,
                group: Group::Always,
                children: &[leaf(Place::Echo, Key::Invocation, Read::Envelope)],
            }],
        },
        Node {
            place: Place::Params,
            key: Key::Name("params"),
            read: Read::Object,
            group: Group::Always,
            children: &[
                grouped(
                    Group::Names,
                    leaf(Place::Tool, Key::Name("name"), Read::Scalar),
                ),
                Node {
                    place: Place::Meta,
                    key: Key::Name("_meta"),
                    read: Read::Object,
                    group: Group::Always,
                    children: &[
                        leaf(Place::Envelope, Key::Invocation, Read::Envelope),
                        Node {
                            place: Place::Ui,
                            key: Key::Ui,
                            read: Read::Object,
                            group: Group::Ui,
                            children: &[leaf(
                                Place::Initiator,
                                Key::Name("initiator"),
                                Read::Scalar,
                            )],
                        },
                        grouped(
                            Group::Bare,
                            leaf(
                                Place::BareReason,
                                Key::Field(EnvelopeField::InvocationReason),
                                Read::Scalar,
                            ),
                        ),
                        grouped(
                            Group::Bare,
                            leaf(
                                Place::BareModel,
                                Key::Field(EnvelopeField::Model),
                                Read::Scalar,
                            ),
                        ),
                        grouped(
                            Group::Bare,
                            leaf(
                                Place::BareIntent,
                                Key::Field(EnvelopeField::UserIntent),
                                Read::Scalar,
                            ),
                        ),
                        grouped(
                            Group::Bare,
                            leaf(
                                Place::BareTurnId,
                                Key::Field(EnvelopeField::TurnId),
                                Read::Scalar,
                            ),
                        ),
                        // Last: JS writes it once the places it leaves out are read.
                        grouped(
                            Group::Correlation,
                            leaf(Place::MetaOthers, Key::Others, Read::Others),
                        ),
                    ],
                },
                Node {
                    place: Place::Arguments,
                    key: Key::Name("arguments"),
                    read: Read::Object,
                    group: Group::Legacy,
                    children: &[
                        leaf(Place::UserQuery, Key::Name("user_query"), Read::Scalar),
                        leaf(
                            Place::LegacyReason,
                            Key::Name("invocation_reason"),
                            Read::Scalar,
                        ),
                    ],
                },
            ],
        },
    ],
};

/// The most keys from the message down to a place.
const MAX_KEYS: usize = 6;

/// The keys from the message down to each place, outermost first, and how
/// many: found once, when compiled, where an index out of range is an error
/// of the build, never a panic.
#[allow(clippy::indexing_slicing)]
const KEYS_TO: [([Key; MAX_KEYS], usize); Place::COUNT] = {
    const fn walk(
        node: &Node,
        keys: [Key; MAX_KEYS],
        len: usize,
        out: &mut [([Key; MAX_KEYS], usize); Place::COUNT],
    ) {
        out[node.place as usize] = (keys, len);
        let mut at = 0;
        while at < node.children.len() {
            let child = &node.children[at];
            let mut below = keys;
            below[len] = child.key;
            walk(child, below, len + 1, out);
            at += 1;
        }
    }
    let mut out = [([Key::Root; MAX_KEYS], 0); Place::COUNT];
    walk(&MESSAGE, [Key::Root; MAX_KEYS], 0, &mut out);
    out
};

/// The keys from the message down to `place`, outermost first; none for
/// the message itself.
pub(crate) fn keys_to(place: Place) -> &'static [Key] {
    KEYS_TO
        .get(place as usize)
        .and_then(|(keys, len)| keys.get(..*len))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn every_place_is_in_the_tree_once() {
        fn places(node: &Node, out: &mut Vec<Place>) {
            out.push(node.place);
            for child in node.children {
                places(child, out);
            }
        }
        let mut found = Vec::new();
        places(&MESSAGE, &mut found);
        assert_eq!(found.len(), Place::COUNT);
        fn widest(node: &Node) -> usize {
            node.children
                .iter()
                .map(widest)
                .fold(node.children.len(), usize::max)
        }
        assert_eq!(widest(&MESSAGE), MAX_CHILDREN);
        for (index, place) in found.iter().enumerate() {
            assert_eq!(
                *place as usize, index,
                "{place:?} is read in declaration order"
            );
        }
    }

    #[test]
    fn the_bare_keys_are_the_field_names() {
        let bare: Vec<Key> = Place::BARE
            .values()
            .map(|place| *keys_to(*place).last().expect("a key"))
            .collect();
        assert_eq!(bare, EnvelopeField::ALL.map(Key::Field));
        assert_eq!(EnvelopeField::TurnId.name(), "turnId");
        assert_eq!(EnvelopeField::UserIntent.name(), "userIntent");
        assert!(ENVELOPE.values().all(|f| f.members.len() <= MAX_MEMBERS));
    }
}
