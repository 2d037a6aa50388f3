//! A message as it came over the wire, read once (by the wire filter's
//! parser): the spans of its members and, for the places a rule reads,
//! their values. The rules read it through [`Tree::Wire`](super::Tree) like
//! any other JSON value (`members.rs`); the filter's patcher uses the spans
//! to change what a rule changed and nothing else.
//!
//! Invariants: `text` is the whole body (valid UTF-8); every span is a byte
//! range of it; the entries of a container are contiguous in `entries`, in
//! the order they came; a container that was only skipped has no node (its
//! entry says `Raw::Opaque`). No name is duplicated in a container that has
//! a node where a rule reads (the parser refuses the message otherwise).

use std::cell::Cell;
use std::thread::LocalKey;

use super::scalar::Kind;
use super::spare;

/// A byte range of the body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Where a string's decoded text is: a span of the body when it holds no
/// escape, else a range of the document's store, where it was decoded.
#[derive(Clone, Copy, Debug)]
pub struct StringSpan {
    pub in_store: bool,
    pub span: Span,
    /// An escaped lone surrogate was read as U+FFFD (MSG-3).
    pub lossy: bool,
}

/// What a value is, as far as it was read.
#[derive(Clone, Copy, Debug)]
pub enum Raw {
    Null,
    Bool(bool),
    Number,
    String(StringSpan),
    /// A container read whole: the index of its node.
    Node(usize),
    /// Only its type was read (it was checked, and skipped).
    Opaque(Kind),
}

/// A member of an object or an item of an array.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The member's name (an item has none).
    pub name: Option<StringSpan>,
    /// Where the entry begins: its name's opening quote, or the item.
    pub start: usize,
    pub value: Span,
    pub raw: Raw,
}

/// A container read whole.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub object: bool,
    /// From its opening bracket to just past its closing one.
    pub span: Span,
    first: usize,
    len: usize,
}

/// What a document holds its reading in, without the text it reads.
#[derive(Default)]
struct Buffers {
    store: String,
    nodes: Vec<Node>,
    entries: Vec<Entry>,
}

impl spare::Buffers for Buffers {
    fn kept() -> &'static LocalKey<Cell<Self>> {
        std::thread_local! {
            static KEPT: Cell<Buffers> = Cell::new(Buffers::default());
        }
        &KEPT
    }

    fn room(&self) -> usize {
        let store = self.store.capacity().div_ceil(4);
        self.entries
            .capacity()
            .max(self.nodes.capacity())
            .max(store)
    }

    fn clear(&mut self) {
        self.store.clear();
        self.nodes.clear();
        self.entries.clear();
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Drop for Doc<'_> {
    /// Gives its buffers to the next document read on this thread.
    fn drop(&mut self) {
        spare::give(Buffers {
            store: std::mem::take(&mut self.store),
            nodes: std::mem::take(&mut self.nodes),
            entries: std::mem::take(&mut self.entries),
        });
    }
}

/// The message read, with everything the rules and the patcher need.
pub struct Doc<'a> {
    pub text: &'a str,
    /// The decoded text of the strings that hold an escape.
    pub store: String,
    nodes: Vec<Node>,
    entries: Vec<Entry>,
}

impl<'a> Doc<'a> {
    /// An empty document of the body `text`, in the buffers the last
    /// document let go of on this thread, when there are some.
    pub fn new(text: &'a str) -> Self {
        let Buffers {
            store,
            nodes,
            entries,
        } = spare::take::<Buffers>();
        Doc {
            text,
            store,
            nodes,
            entries,
        }
    }

    /// Makes room for what a message usually holds, at once.
    pub fn reserve(&mut self) {
        self.nodes.reserve(8);
        self.entries.reserve(32);
    }

    /// Adds a node holding `entries`; its index.
    pub fn node(&mut self, object: bool, span: Span, entries: &[Entry]) -> usize {
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
    pub fn at(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or_default()
    }

    /// A string's decoded text.
    pub fn str(&self, text: StringSpan) -> &str {
        let from = if text.in_store {
            self.store.as_str()
        } else {
            self.text
        };
        from.get(text.span.start..text.span.end).unwrap_or_default()
    }

    /// The node of index `node`.
    pub fn get(&self, node: usize) -> Option<&Node> {
        self.nodes.get(node)
    }

    /// The entries of a node.
    pub fn entries(&self, node: &Node) -> &[Entry] {
        self.entries
            .get(node.first..node.first + node.len)
            .unwrap_or_default()
    }

    /// The member `name` of an object node.
    pub fn member(&self, node: &Node, name: &str) -> Option<&Entry> {
        self.entries(node)
            .iter()
            .find(|entry| entry.name.is_some_and(|n| self.str(n) == name))
    }
}

/// A container of a document, as a [`Tree`](super::Tree) holds it.
#[derive(Clone, Copy, Debug)]
pub struct Container<'a> {
    pub doc: &'a Doc<'a>,
    pub node: usize,
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
    /// Whether it is an object (else an array).
    pub fn is_object(&self) -> bool {
        self.doc.get(self.node).is_some_and(|node| node.object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// A document holding `members` entries under one node.
    fn filled(members: usize) -> Doc<'static> {
        let mut doc = Doc::new("{}");
        let entry = Entry {
            name: None,
            start: 0,
            value: Span::default(),
            raw: Raw::Null,
        };
        doc.node(true, Span::default(), &vec![entry; members]);
        doc
    }

    #[test]
    fn a_document_takes_the_buffers_the_last_let_go_of_natively_and_its_own_in_wasm() {
        // Natively each test runs on a thread of its own: nothing is kept yet.
        assert_eq!(Doc::new("").entries.capacity(), 0);
        drop(filled(100));
        let doc = Doc::new("[]");
        if cfg!(target_arch = "wasm32") {
            // In wasm nothing outlives a reading (json/spare.rs).
            assert_eq!(doc.entries.capacity(), 0);
        } else {
            assert!(doc.entries.capacity() >= 100 && doc.nodes.capacity() >= 1);
        }
        assert!(doc.entries.is_empty() && doc.nodes.is_empty() && doc.store.is_empty());
        // Taken: the next document has its own.
        assert_eq!(Doc::new("").entries.capacity(), 0);
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn buffers_past_the_bound_are_let_go_of_and_the_larger_set_is_kept() {
        drop(filled(spare::KEPT + 1));
        assert_eq!(Doc::new("").entries.capacity(), 0);
        // Two let go of one after the other (a batch's messages): the larger set stays.
        let (large, small) = (filled(200), filled(20));
        drop(large);
        drop(small);
        assert!(Doc::new("").entries.capacity() >= 200);
    }
}
