//! The members of an object and the items of an array, read from each form
//! a [`Tree`] comes in: a `serde_json::Value`, the compact form, or a
//! document read from the wire, whose values are read here as slots.

#[cfg(feature = "value")]
use serde_json::Value;

use super::compact;
use super::doc::{Container, Doc, Entry, Raw, StringSpan};
use super::scalar::{Kind, Number, Text};
use super::slot::{Slot, Tree};

impl<'a> Tree<'a> {
    /// An object's members in the order they are held.
    pub fn members(self) -> Members<'a> {
        match self {
            #[cfg(feature = "value")]
            Tree::Value(Value::Object(map)) => Members::Value(map.iter()),
            Tree::Bytes(bytes) => Members::Bytes(compact::contents(bytes, compact::OBJECT)),
            Tree::Wire(container) if container.is_object() => Members::Wire(container.entries()),
            _ => Members::Empty,
        }
    }

    /// An array's items in order.
    pub fn items(self) -> Items<'a> {
        match self {
            #[cfg(feature = "value")]
            Tree::Value(Value::Array(items)) => Items::Value(items.iter()),
            Tree::Bytes(bytes) => Items::Bytes(compact::contents(bytes, compact::ARRAY)),
            Tree::Wire(container) if !container.is_object() => Items::Wire(container.entries()),
            _ => Items::Empty,
        }
    }

    /// The member `name` of an object.
    pub fn get(self, name: &str) -> Slot<'a> {
        match self {
            #[cfg(feature = "value")]
            Tree::Value(value) => Slot::of_option(value.get(name)),
            _ => self
                .members()
                .find(|(member, _)| *member == name)
                .map_or(Slot::Absent, |(_, slot)| slot),
        }
    }
}

/// The members of an object: `(name, value)`.
pub enum Members<'a> {
    Empty,
    #[cfg(feature = "value")]
    Value(serde_json::map::Iter<'a>),
    Bytes(&'a [u8]),
    Wire(Entries<'a>),
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Slot<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Members::Empty => None,
            #[cfg(feature = "value")]
            Members::Value(iter) => iter
                .next()
                .map(|(name, value)| (name.as_str(), Slot::of(value))),
            Members::Bytes(bytes) => {
                let name = compact::text(bytes).ok()?.text;
                Some((name, compact::value(bytes).ok()?))
            }
            Members::Wire(entries) => entries.next().map(|(name, slot)| (name.text, slot)),
        }
    }
}

/// The items of an array.
pub enum Items<'a> {
    Empty,
    #[cfg(feature = "value")]
    Value(std::slice::Iter<'a, Value>),
    Bytes(&'a [u8]),
    Wire(Entries<'a>),
}

impl<'a> Iterator for Items<'a> {
    type Item = Slot<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Items::Empty => None,
            #[cfg(feature = "value")]
            Items::Value(iter) => iter.next().map(Slot::of),
            Items::Bytes(bytes) if bytes.is_empty() => None,
            Items::Bytes(bytes) => compact::value(bytes).ok(),
            Items::Wire(entries) => entries.next().map(|(_, slot)| slot),
        }
    }
}

impl<'a> Doc<'a> {
    /// The slot of a value as the rules read it.
    pub fn slot(&self, entry: &Entry) -> Slot<'_> {
        match entry.raw {
            Raw::Null => Slot::Null,
            Raw::Bool(flag) => Slot::Bool(flag),
            Raw::Number => Slot::Number(Number::Wire(self.at(entry.value))),
            Raw::String(text) => Slot::String(self.text(text)),
            Raw::Node(node) => {
                let container = Container { doc: self, node };
                match self.get(node) {
                    Some(found) if found.object => Slot::Object(Tree::Wire(container)),
                    _ => Slot::Array(Tree::Wire(container)),
                }
            }
            Raw::Opaque(Kind::Object) => Slot::Object(Tree::Opaque),
            Raw::Opaque(Kind::Array) => Slot::Array(Tree::Opaque),
            // Scalars are always read; a skipped one reads as its type.
            Raw::Opaque(Kind::String) => Slot::String(Text {
                text: "",
                lossy: false,
            }),
            Raw::Opaque(_) => Slot::Null,
        }
    }

    /// A string of the document as read.
    fn text(&self, text: StringSpan) -> Text<'_> {
        Text {
            text: self.str(text),
            lossy: text.lossy,
        }
    }
}

impl<'a> Container<'a> {
    /// Its members or items, in order.
    pub fn entries(&self) -> Entries<'a> {
        let doc = self.doc;
        let entries = doc.get(self.node).map(|node| doc.entries(node));
        Entries {
            doc,
            iter: entries.unwrap_or_default().iter(),
        }
    }
}

/// The members (name and value) or items (an empty name) of a container.
pub struct Entries<'a> {
    doc: &'a Doc<'a>,
    iter: std::slice::Iter<'a, Entry>,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Text<'a>, Slot<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.iter.next()?;
        let name = entry.name.map_or(
            Text {
                text: "",
                lossy: false,
            },
            |name| self.doc.text(name),
        );
        Some((name, self.doc.slot(entry)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// `str` of the compact form.
    fn str(text: &str) -> Vec<u8> {
        [
            &(text.len() as u32).to_le_bytes()[..],
            &[0],
            text.as_bytes(),
        ]
        .concat()
    }

    /// A whole container of the compact form.
    fn whole(tag: u8, count: u32, contents: &[Vec<u8>]) -> Vec<u8> {
        let body = [&count.to_le_bytes()[..], &contents.concat()].concat();
        [&[tag][..], &(body.len() as u32).to_le_bytes(), &body].concat()
    }

    #[test]
    fn a_compact_tree_reads_like_the_value_it_holds() {
        // {"a": [1, "x"], "b": {"c": true}}, as a binding writes it.
        let one = [&[compact::NUMBER_TEXT][..], &1f64.to_le_bytes(), &str("1")].concat();
        let x = [&[compact::STRING][..], &str("x")].concat();
        let array = whole(compact::ARRAY_WHOLE, 2, &[one, x]);
        let inner = whole(compact::OBJECT_WHOLE, 1, &[str("c"), vec![compact::TRUE]]);
        let bytes = whole(
            compact::OBJECT_WHOLE,
            2,
            &[str("a"), array, str("b"), inner],
        );
        let tree = Tree::Bytes(&bytes);
        let names: Vec<&str> = tree.members().map(|(name, _)| name).collect();
        assert_eq!(names, ["a", "b"]);
        let items: Vec<Option<Kind>> = tree.get("a").tree().items().map(|s| s.kind()).collect();
        assert_eq!(items, [Some(Kind::Number), Some(Kind::String)]);
        assert!(matches!(tree.get("b").tree().get("c"), Slot::Bool(true)));
        assert!(matches!(tree.get("z"), Slot::Absent));
        let mut rest = &bytes[..];
        assert!(compact::value(&mut rest).is_ok() && rest.is_empty());
    }
}
