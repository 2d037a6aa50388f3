//! What stands at one place of a message ([`Slot`]), and what an array or
//! object holds ([`Tree`]) in each form a value comes in. Their members and
//! items are read in `members.rs`.

#[cfg(feature = "value")]
use serde_json::Value;

use super::doc::Container;
use super::scalar::{Kind, Number, Text};

/// What stands at one place of a message, as far as it was read.
#[derive(Clone, Copy, Debug, Default)]
pub enum Slot<'a> {
    /// Nothing: the member is missing (or, in JS, `undefined`).
    #[default]
    Absent,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number<'a>),
    /// A string.
    String(Text<'a>),
    /// An array, with its items as far as they were read.
    Array(Tree<'a>),
    /// An object, with its members as far as they were read.
    Object(Tree<'a>),
}

impl<'a> Slot<'a> {
    /// The JSON type, `None` when absent.
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Slot::Absent => return None,
            Slot::Null => Kind::Null,
            Slot::Bool(_) => Kind::Bool,
            Slot::Number(_) => Kind::Number,
            Slot::String(_) => Kind::String,
            Slot::Array(_) => Kind::Array,
            Slot::Object(_) => Kind::Object,
        })
    }

    /// The type with its article, "undefined" when absent (only JS has it).
    pub fn article(&self) -> &'static str {
        self.kind().map_or("undefined", Kind::article)
    }

    /// Whether anything stands there (`null` included).
    pub fn is_present(&self) -> bool {
        !matches!(self, Slot::Absent)
    }

    /// Whether an object stands there.
    pub fn is_object(&self) -> bool {
        matches!(self, Slot::Object(_))
    }

    /// The string, when this is one.
    pub fn text(&self) -> Option<Text<'a>> {
        match self {
            Slot::String(text) => Some(*text),
            _ => None,
        }
    }

    /// The string as read, when this is one.
    pub fn str(&self) -> Option<&'a str> {
        self.text().map(|text| text.text)
    }

    /// The object's members, when this is one (none otherwise).
    pub fn tree(&self) -> Tree<'a> {
        match self {
            Slot::Object(tree) | Slot::Array(tree) => *tree,
            _ => Tree::Opaque,
        }
    }

    /// The slot of a `serde_json::Value`.
    #[cfg(feature = "value")]
    pub fn of(value: &'a Value) -> Self {
        match value {
            Value::Null => Slot::Null,
            Value::Bool(flag) => Slot::Bool(*flag),
            Value::Number(number) => Slot::Number(Number::Value(number)),
            Value::String(text) => Slot::String(Text::exact(text)),
            Value::Array(_) => Slot::Array(Tree::Value(value)),
            Value::Object(_) => Slot::Object(Tree::Value(value)),
        }
    }

    /// The slot of an optional `serde_json::Value`.
    #[cfg(feature = "value")]
    pub fn of_option(value: Option<&'a Value>) -> Self {
        value.map_or(Slot::Absent, Slot::of)
    }
}

/// The contents of an array or object, as far as they were read.
#[derive(Clone, Copy, Debug, Default)]
pub enum Tree<'a> {
    /// Only the type was read.
    #[default]
    Opaque,
    /// A serde_json array or object, whole.
    #[cfg(feature = "value")]
    Value(&'a Value),
    /// The container in the compact form, from its tag (see
    /// [`compact`](super::compact)).
    Bytes(&'a [u8]),
    /// A container of JSON text read over the wire.
    Wire(Container<'a>),
}
