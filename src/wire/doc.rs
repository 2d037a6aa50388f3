//! A message as it came over the wire, read once: the spans of its members
//! and, for the places a rule reads, their values. The rules read it through
//! [`Tree::Wire`](crate::json::Tree) like any other JSON value; the patcher
//! ([`super::patch`]) uses the spans to change what a rule changed and
//! nothing else.
//!
//! Invariants: `text` is the whole body (valid UTF-8); every span is a byte
//! range of it; the entries of a container are contiguous in `entries`, in
//! the order they came; a container that was only skipped has no node (its
//! entry says `Raw::Opaque`). No name is duplicated in a container that has
//! a node where a rule reads (the parser refuses the message otherwise).

use crate::json::{Kind, Number, Slot, Text, Tree};

/// A byte range of the body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
}

/// A string's text: a span of the body when it holds no escape, else a
/// range of the document's store, where it was decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Str {
    pub(super) in_store: bool,
    pub(super) span: Span,
    /// An escaped lone surrogate was read as U+FFFD (MSG-3).
    pub(super) lossy: bool,
}

/// What a value is, as far as it was read.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Raw {
    Null,
    Bool(bool),
    Number,
    String(Str),
    /// A container read whole: the index of its node.
    Node(usize),
    /// Only its type was read (it was checked, and skipped).
    Opaque(Kind),
}

/// A member of an object or an item of an array.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    /// The member's name (an item has none).
    pub name: Option<Str>,
    /// Where the entry begins: its name's opening quote, or the item.
    pub start: usize,
    pub value: Span,
    pub raw: Raw,
}

/// A container read whole.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub object: bool,
    /// From its opening bracket to just past its closing one.
    pub span: Span,
    first: usize,
    len: usize,
}

/// The message read, with everything the rules and the patcher need.
pub(crate) struct Doc<'a> {
    pub text: &'a str,
    pub(super) store: String,
    pub(super) nodes: Vec<Node>,
    pub(super) entries: Vec<Entry>,
}

impl<'a> Doc<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Doc {
            text,
            store: String::new(),
            nodes: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Makes room for what a message usually holds, at once.
    pub(super) fn reserve(&mut self) {
        self.nodes.reserve(8);
        self.entries.reserve(32);
    }

    /// Adds a node holding `entries`; its index.
    pub(super) fn node(&mut self, object: bool, span: Span, entries: &[Entry]) -> usize {
        self.nodes.push(Node {
            object,
            span,
            first: self.entries.len(),
            len: entries.len(),
        });
        self.entries.extend_from_slice(entries);
        self.nodes.len() - 1
    }

    /// The bytes of a span, as text.
    pub(crate) fn at(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or_default()
    }

    /// A string's decoded text.
    pub(crate) fn str(&self, text: Str) -> &str {
        let from = if text.in_store {
            self.store.as_str()
        } else {
            self.text
        };
        from.get(text.span.start..text.span.end).unwrap_or_default()
    }

    pub(crate) fn get(&self, node: usize) -> Option<&Node> {
        self.nodes.get(node)
    }

    /// The entries of a node.
    pub(crate) fn entries(&self, node: &Node) -> &[Entry] {
        self.entries
            .get(node.first..node.first + node.len)
            .unwrap_or_default()
    }

    /// The member `name` of an object node.
    pub(crate) fn member(&self, node: &Node, name: &str) -> Option<&Entry> {
        self.entries(node)
            .iter()
            .find(|entry| entry.name.is_some_and(|n| self.str(n) == name))
    }

    /// The slot of a value as the rules read it.
    pub(crate) fn slot(&self, entry: &Entry) -> Slot<'_> {
        match entry.raw {
            Raw::Null => Slot::Null,
            Raw::Bool(flag) => Slot::Bool(flag),
            Raw::Number => Slot::Number(Number::Wire(self.at(entry.value))),
            Raw::String(text) => Slot::String(self.text(text)),
            Raw::Node(node) => {
                let container = Container { doc: self, node };
                match self.nodes.get(node) {
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

    fn text(&self, text: Str) -> Text<'_> {
        Text {
            text: self.str(text),
            lossy: text.lossy,
        }
    }
}

/// A container of a document, as a [`Tree`] holds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Container<'a> {
    doc: &'a Doc<'a>,
    node: usize,
}

impl std::fmt::Debug for Doc<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Doc({} bytes, {} nodes)",
            self.text.len(),
            self.nodes.len()
        )
    }
}

impl<'a> Container<'a> {
    pub(crate) fn is_object(&self) -> bool {
        self.doc.get(self.node).is_some_and(|node| node.object)
    }

    /// Its members or items, in order.
    pub(crate) fn entries(&self) -> Entries<'a> {
        let doc = self.doc;
        let entries = doc.get(self.node).map(|node| doc.entries(node));
        Entries {
            doc,
            iter: entries.unwrap_or_default().iter(),
        }
    }
}

/// The members (name and value) or items (an empty name) of a container.
pub(crate) struct Entries<'a> {
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
