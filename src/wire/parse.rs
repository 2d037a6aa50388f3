//! Strict JSON text (RFC 8259, UTF-8), read once: a body is one message or
//! a batch of them, each checked whole and read into a [`Doc`] as far as
//! the table of the message ([`crate::schema::MESSAGE`]) says a rule reads
//! it. Everything else (`arguments`, results, ids' siblings) is checked and
//! skipped without building anything, a run of plain bytes at a time.
//!
//! What the filter and the server must read alike is refused rather than
//! guessed at: a member duplicated where a rule reads (a parser-differential
//! channel: some servers keep the first, most the last), and nesting past
//! the depth bound (`serde_json` stops at 128). Those refuse one message;
//! text that is not JSON refuses the body, since where its messages end is
//! then unknown.

use std::cell::Cell;
use std::thread::LocalKey;

use crate::json::Kind;
use crate::json::doc::{Doc, Entry, Raw, Span, StringSpan};
use crate::json::spare;
use crate::schema::{Key, MESSAGE, Node, Read, Reads};

/// The text is not JSON: where it stops being so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Syntax(pub usize);

/// Why one message is refused, though the body is JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Nesting past the depth bound.
    TooDeep,
    /// A member duplicated where a rule reads.
    Duplicate,
}

/// The keys a body is read under: the standard ones and the configured
/// vendor ones, each an envelope or a `ui` entry wherever it stands.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    pub invocation: Vec<String>,
    pub ui: Vec<String>,
}

/// One message of a body as the parser read it: its document (the rules
/// read it through views, as any message), its own entry, and why it is
/// refused, when it is.
pub(crate) struct ParsedMessage<'a> {
    pub doc: Doc<'a>,
    /// The message's own value: its entry in the document.
    pub root: Entry,
    pub fault: Option<Fault>,
}

/// How much of a value to read.
#[derive(Clone, Copy)]
enum Want {
    /// Check it; keep its type.
    Skip,
    /// Keep a scalar's value (a container's type).
    Scalar,
    /// An object whose members the table names.
    Table(&'static Node),
    /// Everything, at every depth: an envelope or a `ui` entry.
    Whole,
}

/// Reads bodies under a set of keys and a depth bound.
pub(crate) struct Parser<'k> {
    keys: &'k Keys,
    pub(super) max_depth: usize,
    /// The groups of places read: `arguments` only where legacy arguments are lifted.
    reads: Reads,
}

/// The state of reading one body.
pub(super) struct Reader<'a, 'k> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    pub(super) doc: Doc<'a>,
    pub(super) parser: &'k Parser<'k>,
    pub(super) fault: Option<Fault>,
    /// The containers open while skipping: their closing bytes.
    pub(super) open: Vec<u8>,
    /// The entries of the containers being read, innermost last: each
    /// container's move to the document when it closes.
    pub(super) entries: Vec<Entry>,
    /// The names a rule reads of the objects being read, innermost last:
    /// a name twice in one object is a duplicate.
    names: Vec<StringSpan>,
}

/// What a reader works in, besides its document: kept from one reading to
/// the next (`json/spare.rs`).
#[derive(Default)]
struct Stacks {
    open: Vec<u8>,
    entries: Vec<Entry>,
    names: Vec<StringSpan>,
}

impl spare::Buffers for Stacks {
    fn kept() -> &'static LocalKey<Cell<Self>> {
        std::thread_local! {
            static KEPT: Cell<Stacks> = Cell::new(Stacks::default());
        }
        &KEPT
    }

    fn room(&self) -> usize {
        let open = self.open.capacity().div_ceil(8);
        self.entries.capacity().max(self.names.capacity()).max(open)
    }

    fn clear(&mut self) {
        self.open.clear();
        self.entries.clear();
        self.names.clear();
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Drop for Reader<'_, '_> {
    /// Gives its stacks to the next reader on this thread.
    fn drop(&mut self) {
        spare::give(Stacks {
            open: std::mem::take(&mut self.open),
            entries: std::mem::take(&mut self.entries),
            names: std::mem::take(&mut self.names),
        });
    }
}

/// What a body holds.
pub(crate) enum Body<'a> {
    One(ParsedMessage<'a>),
    /// A batch: its span and its messages.
    Batch(Span, Vec<ParsedMessage<'a>>),
    /// A batch of more messages than allowed (its first `max + 1` were seen).
    TooMany,
}

impl<'k> Parser<'k> {
    /// A parser under `keys` and a depth bound, reading the places of the
    /// groups `reads` holds (the rest of a message is checked and skipped).
    pub(crate) fn new(keys: &'k Keys, max_depth: usize, reads: Reads) -> Self {
        Parser {
            keys,
            max_depth,
            reads,
        }
    }

    /// Reads a body: one message, or a batch of at most `max_batch`.
    pub(crate) fn body<'a>(&self, text: &'a str, max_batch: usize) -> Result<Body<'a>, Syntax> {
        let mut reader = Reader::new(text, self);
        reader.ws();
        if reader.peek() != Some(b'[') {
            let message = reader.message()?;
            reader.end()?;
            return Ok(Body::One(message));
        }
        let start = reader.at;
        reader.at += 1;
        reader.ws();
        let mut messages = Vec::new();
        if reader.peek() == Some(b']') {
            reader.at += 1;
        } else {
            loop {
                if messages.len() == max_batch {
                    return Ok(Body::TooMany);
                }
                reader.ws();
                messages.push(reader.message()?);
                reader.ws();
                match reader.next_byte() {
                    Some(b',') => continue,
                    Some(b']') => break,
                    _ => return Err(Syntax(reader.at)),
                }
            }
        }
        let span = Span {
            start,
            end: reader.at,
        };
        reader.end()?;
        Ok(Body::Batch(span, messages))
    }

    /// Reads one message standing alone (as the patcher's output is re-read).
    pub(crate) fn one<'a>(&self, text: &'a str) -> Result<ParsedMessage<'a>, Syntax> {
        let mut reader = Reader::new(text, self);
        reader.ws();
        let message = reader.message()?;
        reader.end()?;
        Ok(message)
    }

    /// Reads one JSON value standing alone, every member of it at every
    /// depth: options and contexts a binding hands over as JSON text.
    pub(crate) fn whole<'a>(&self, text: &'a str) -> Result<ParsedMessage<'a>, Syntax> {
        let mut reader = Reader::new(text, self);
        reader.ws();
        let start = reader.at;
        reader.doc.reserve();
        reader.entry(Want::Whole, 1, None, start)?;
        let root = reader.entries.pop().ok_or(Syntax(start))?;
        reader.end()?;
        Ok(ParsedMessage {
            doc: std::mem::replace(&mut reader.doc, Doc::new(text)),
            root,
            fault: reader.fault,
        })
    }

    /// Where the value of the member `name` of the object `text` is, when
    /// `text` is JSON and an object with that member (the last, if several).
    pub(crate) fn member(&self, text: &str, name: &str) -> Result<Option<Span>, Syntax> {
        let mut found = None;
        self.each_member(text, |member, _, span| {
            if member == name {
                found = Some(span);
            }
        })?;
        Ok(found)
    }

    /// The members of the object `text`, each name (read) with where its
    /// value is, in the order they come; `None` when `text` is JSON but
    /// not an object.
    pub(crate) fn members(&self, text: &str) -> Result<Option<Vec<(String, Span)>>, Syntax> {
        let mut found = Vec::new();
        let object = self.each_member(text, |member, _, span| {
            found.push((member.to_owned(), span))
        })?;
        Ok(object.then_some(found))
    }

    /// Hands each member of the object `text` to `each`, its name read,
    /// with where the member begins (its name's opening quote) and where
    /// its value is, in the order they come; whether `text` (JSON, else an
    /// error) is an object.
    pub(super) fn each_member(
        &self,
        text: &str,
        mut each: impl FnMut(&str, usize, Span),
    ) -> Result<bool, Syntax> {
        let mut reader = Reader::new(text, self);
        reader.ws();
        if reader.peek() != Some(b'{') {
            reader.skip(1)?;
            reader.end()?;
            return Ok(false);
        }
        reader.at += 1;
        reader.ws();
        if reader.peek() == Some(b'}') {
            reader.at += 1;
        } else {
            loop {
                reader.ws();
                let begins = reader.at;
                reader.expect(b'"')?;
                let member = reader.string()?;
                reader.expect(b':')?;
                reader.ws();
                let start = reader.at;
                reader.skip(2)?;
                each(
                    reader.doc.str(member),
                    begins,
                    Span {
                        start,
                        end: reader.at,
                    },
                );
                reader.ws();
                match reader.next_byte() {
                    Some(b',') => reader.ws(),
                    Some(b'}') => break,
                    _ => return Err(Syntax(reader.at)),
                }
            }
        }
        reader.end()?;
        Ok(true)
    }

    /// Whether the members of an object read as `parent` that no place
    /// names are read too ([`Read::Others`]).
    fn others(&self, parent: &'static Node) -> bool {
        parent.children.iter().any(|child| {
            child.read == Read::Others && self.reads & child.group.bit() == child.group.bit()
        })
    }

    /// The node of the table a member `name` of an object read as `parent` stands for.
    fn child(&self, parent: &'static Node, name: &str) -> Option<&'static Node> {
        let read = |child: &&Node| self.reads & child.group.bit() == child.group.bit();
        parent
            .children
            .iter()
            .filter(read)
            .find(|child| match child.key {
                Key::Root | Key::Others => false,
                Key::Name(known) => known == name,
                Key::Field(field) => field.name() == name,
                Key::Invocation => self.keys.invocation.iter().any(|key| key == name),
                Key::Ui => self.keys.ui.iter().any(|key| key == name),
            })
    }
}

impl<'a, 'k> Reader<'a, 'k> {
    fn new(text: &'a str, parser: &'k Parser<'k>) -> Self {
        let Stacks {
            open,
            mut entries,
            names,
        } = spare::take();
        entries.reserve(32);
        Reader {
            bytes: text.as_bytes(),
            at: 0,
            doc: Doc::new(text),
            parser,
            fault: None,
            open,
            entries,
            names,
        }
    }

    /// One message at the reader, read as the table says; its document,
    /// moved out so that the next message starts a document of its own.
    fn message(&mut self) -> Result<ParsedMessage<'a>, Syntax> {
        self.fault = None;
        self.doc.reserve();
        let start = self.at;
        self.entry(Want::Table(&MESSAGE), 1, None, start)?;
        let root = self.entries.pop().ok_or(Syntax(start))?;
        let text = self.doc.text;
        let doc = std::mem::replace(&mut self.doc, Doc::new(text));
        Ok(ParsedMessage {
            doc,
            root,
            fault: self.fault,
        })
    }

    /// A value at `depth` (the message is at 1), read as `want` says, as
    /// the entry of its container (`name`, from `begins`). The entry is
    /// pushed where it is made: a value handed back through the stack costs
    /// a stalled load of each one.
    fn entry(
        &mut self,
        want: Want,
        depth: usize,
        name: Option<StringSpan>,
        begins: usize,
    ) -> Result<(), Syntax> {
        self.ws();
        let start = self.at;
        let raw = match (self.peek(), want) {
            (Some(b'{' | b'['), Want::Table(_) | Want::Whole) if depth > self.parser.max_depth => {
                self.fault = Some(Fault::TooDeep);
                Raw::Opaque(self.skip(depth)?)
            }
            (Some(b'{'), Want::Table(node)) if node.read != Read::Scalar => {
                self.container(true, want, depth)?
            }
            (Some(b'{' | b'['), Want::Whole) => {
                self.container(self.peek() == Some(b'{'), want, depth)?
            }
            (Some(b'"'), Want::Scalar | Want::Whole | Want::Table(_)) => {
                self.at += 1;
                Raw::String(self.string()?)
            }
            (Some(b'"'), Want::Skip) => {
                self.at += 1;
                self.skip_string()?;
                Raw::Opaque(Kind::String)
            }
            (Some(b'-' | b'0'..=b'9'), _) => {
                self.number()?;
                Raw::Number
            }
            (Some(b't'), _) => self.literal(b"true", Raw::Bool(true))?,
            (Some(b'f'), _) => self.literal(b"false", Raw::Bool(false))?,
            (Some(b'n'), _) => self.literal(b"null", Raw::Null)?,
            _ => Raw::Opaque(self.skip(depth)?),
        };
        self.entries.push(Entry {
            name,
            start: begins,
            value: Span {
                start,
                end: self.at,
            },
            raw,
        });
        Ok(())
    }

    /// An object or array read whole (`Whole`) or as the table says
    /// (`Table`); its node.
    fn container(&mut self, object: bool, want: Want, depth: usize) -> Result<Raw, Syntax> {
        let start = self.at;
        self.at += 1;
        let close = if object { b'}' } else { b']' };
        let first = self.entries.len();
        // The names a rule reads, as they come: a second one is a duplicate.
        let first_name = self.names.len();
        self.ws();
        if self.peek() == Some(close) {
            self.at += 1;
        } else {
            loop {
                self.ws();
                let entry_start = self.at;
                let (name, child) = if object {
                    if self.next_byte() != Some(b'"') {
                        return Err(Syntax(entry_start));
                    }
                    let name = self.string()?;
                    self.expect(b':')?;
                    let child = match want {
                        Want::Table(node) => match self.parser.child(node, self.doc.str(name)) {
                            Some(child) => {
                                self.names.push(name);
                                match child.read {
                                    Read::Scalar => Want::Scalar,
                                    Read::Object => Want::Table(child),
                                    Read::Envelope | Read::Others => Want::Whole,
                                }
                            }
                            // A rule reads the others too: each whole, and once.
                            None if self.parser.others(node) => {
                                self.names.push(name);
                                Want::Whole
                            }
                            None => Want::Skip,
                        },
                        _ => Want::Whole,
                    };
                    (Some(name), child)
                } else {
                    (None, Want::Whole)
                };
                self.entry(child, depth + 1, name, entry_start)?;
                self.ws();
                match self.next_byte() {
                    Some(b',') => continue,
                    Some(found) if found == close => break,
                    _ => return Err(Syntax(self.at.saturating_sub(1))),
                }
            }
        }
        let entries = self.entries.get(first..).unwrap_or_default();
        let duplicated = if matches!(want, Want::Whole) {
            object && duplicated(entries.iter().filter_map(|entry| entry.name), &self.doc)
        } else {
            let names = self.names.get(first_name..).unwrap_or_default();
            duplicated(names.iter().copied(), &self.doc)
        };
        self.names.truncate(first_name);
        if duplicated {
            self.fault = Some(Fault::Duplicate);
        }
        let span = Span {
            start,
            end: self.at,
        };
        let node = self.doc.node(object, span, entries);
        self.entries.truncate(first);
        Ok(Raw::Node(node))
    }
}

/// Whether a name comes twice among `names`, read in `doc`.
fn duplicated(names: impl Iterator<Item = StringSpan> + Clone, doc: &Doc) -> bool {
    crate::json::any_twice(names.map(|name| doc.str(name)))
}
