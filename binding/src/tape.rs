//! The tape: what JS hands over in one call. JS reads the places of the
//! table ([`mcp_provenance::__bindings::schema`]) and writes one record for each, in table order;
//! this module reads them back as the views every rule reads.
//!
//! A tape is three areas of the module's memory:
//!
//! ```text
//! records  := header record*             16 bytes each
//! header   := op:u8 flags:u8 _:u8[14]    (flags: the handle's plan for the op)
//! record   := tag:u8 flags:u8 _:u48 payload:u64
//!             NUMBER: the f64; STRING: offset:u32 length:u32 in `strings`;
//!             ARRAY_WHOLE, OBJECT_WHOLE: offset:u32 in `values`;
//!             UNREADABLE: what it was, in `flags`; the rest: nothing
//! strings  := the UTF-8 of every string of the records, one after another
//! values   := values read whole, in the compact form of json::compact
//! ```
//!
//! The records of a message follow the tree of places: a place's children
//! follow it when it is an object; a place of a group follows only when the
//! flags hold the group's bit (`Group::bit`), and so do those under it. An
//! envelope's record is followed, when it is an object and FIELDS is set, by
//! each field's, then a record of its other members (ABSENT, or a whole
//! object of them, by type or with WHOLE whole); a field that is an object
//! is followed by its members' records and a record of its other members.
//!
//! Strings are cut where the handle's plan says ([`crate::handle`]): past
//! what the handle's policy keeps of any, so that a cut string reads as it
//! would whole. When JS meets a value it cannot read as JSON it writes an
//! UNREADABLE record where the value's would be, or inside a whole value,
//! and stops, leaving the whole values it was in unfinished (their size
//! `UNFINISHED`): [`Unreadable`] says where.

use crate::{NONE, WHAT};
use mcp_provenance::__bindings::json::compact;
use mcp_provenance::__bindings::json::{Number, Slot, Text, Tree};
use mcp_provenance::__bindings::message::Unreadable;
use mcp_provenance::__bindings::path::Path;
use mcp_provenance::__bindings::schema::{EnvelopeField, FIELDS, MESSAGE, Node, Place, Read};
use mcp_provenance::__bindings::view::{Envelope, MessageView};
use mcp_provenance::__bindings::{initiator, invocation};
use mcp_provenance::KeyOptions;

/// Read unknown members whole, not just their type: a flag of the tape,
/// beside the reads of [`mcp_provenance::__bindings::schema::Reads`].
#[cfg(any(feature = "host", test))]
pub(super) const WHOLE: u8 = 2;

/// The size and count a container has while JS has not finished it.
pub(super) const UNFINISHED: u32 = u32::MAX;

/// What the header of a tape says.
#[derive(Clone, Copy)]
pub(super) struct Header {
    pub op: u8,
    pub flags: u8,
}

/// What a tape asks for, by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Validate,
    Sanitize,
    StampInitiator,
    ClearInitiator,
    AttachInvocation,
    EchoTurnId,
    AuditRecord,
    LiftLegacyArguments,
}

impl Op {
    /// Every op, by its code.
    pub(crate) const ALL: [Op; 8] = [
        Op::Validate,
        Op::Sanitize,
        Op::StampInitiator,
        Op::ClearInitiator,
        Op::AttachInvocation,
        Op::EchoTurnId,
        Op::AuditRecord,
        Op::LiftLegacyArguments,
    ];
}

/// The flags every op reads with first: the groups of places its rules
/// read, and whether it reads the envelope's fields.
pub(crate) fn first_read(op: Op) -> u8 {
    match op {
        Op::Validate => mcp_provenance::__bindings::validate::READS,
        Op::Sanitize => mcp_provenance::__bindings::sanitize::READS,
        Op::StampInitiator | Op::ClearInitiator => initiator::READS,
        Op::EchoTurnId => mcp_provenance::__bindings::echo::READS,
        Op::AuditRecord => mcp_provenance::__bindings::audit::READS,
        Op::LiftLegacyArguments => mcp_provenance::__bindings::legacy::READS,
        Op::AttachInvocation => invocation::READS,
    }
}

/// One place of the message tree, with the place it hangs under.
#[derive(Clone, Copy, Debug)]
struct Entry {
    node: &'static Node,
    parent: Option<Place>,
}

/// The places of [`MESSAGE`] in the order they are read, each with its
/// parent: `ORDER[place as usize]` is `place`'s. Built when compiled, where
/// an index out of range is an error of the build, never a panic.
#[allow(clippy::indexing_slicing)]
const ORDER: [Entry; Place::COUNT] = {
    const fn walk(
        node: &'static Node,
        parent: Option<Place>,
        out: &mut [Option<Entry>; Place::COUNT],
    ) {
        out[node.place as usize] = Some(Entry { node, parent });
        let mut at = 0;
        while at < node.children.len() {
            walk(&node.children[at], Some(node.place), out);
            at += 1;
        }
    }
    let mut found = [None; Place::COUNT];
    walk(&MESSAGE, None, &mut found);
    let mut order = [Entry {
        node: &MESSAGE,
        parent: None,
    }; Place::COUNT];
    let mut at = 0;
    while at < Place::COUNT {
        order[at] = match found[at] {
            Some(entry) => entry,
            None => panic!("a place missing from the tree"),
        };
        at += 1;
    }
    order
};

/// The bytes of a record.
pub(super) const RECORD: usize = 16;

/// A tape being read, front to back.
pub(super) struct Tape<'a> {
    records: &'a [u8],
    /// The next record.
    next: usize,
    strings: &'a str,
    values: &'a [u8],
    pub header: Header,
    /// Where reading stopped, when it did: the record that could not be
    /// read, and whose value it is.
    stopped: Option<(usize, At)>,
}

/// Reading failed: the tape breaks its form, or JS could not read a value.
pub(super) enum Failure {
    Malformed,
    Unreadable(Unreadable),
}

/// Reading stopped; the tape keeps where.
struct Stop;

/// Whose value is being read: a place, an envelope field of it, a member
/// of that field. Made into a pointer only when reading stops.
#[derive(Clone, Copy)]
struct At {
    place: Place,
    /// The field, by its place in the envelope's order, or `NONE`.
    field: u8,
    /// The index of the member, or `NONE`.
    member: u8,
}

impl At {
    const fn place(place: Place) -> Self {
        At {
            place,
            field: NONE,
            member: NONE,
        }
    }

    fn field(self, field: EnvelopeField) -> Self {
        At {
            field: field as u8,
            ..self
        }
    }

    fn member(self, member: usize) -> Self {
        At {
            member: u8::try_from(member).unwrap_or(NONE),
            ..self
        }
    }

    fn render(self, keys: &KeyOptions) -> String {
        let place = Path::place(self.place, keys);
        // The field by its place in the envelope's order, as the JS side names it.
        let field = EnvelopeField::ALL
            .get(usize::from(self.field))
            .map(|field| field.spec());
        let member = field.and_then(|field| field.members.get(usize::from(self.member)));
        match (field, member) {
            (Some(field), Some(member)) => place.join(field.name).join(member.name).render(),
            (Some(field), None) => place.join(field.name).render(),
            _ => place.render(),
        }
    }
}

/// A record's payload as two words.
fn words(record: &[u8; RECORD]) -> (usize, usize) {
    let first = u32::from_le_bytes([record[8], record[9], record[10], record[11]]);
    let second = u32::from_le_bytes([record[12], record[13], record[14], record[15]]);
    (first as usize, second as usize)
}

impl<'a> Tape<'a> {
    /// A tape of the three areas; `Malformed` when `strings` is not UTF-8.
    pub(super) fn new(
        records: &'a [u8],
        strings: &'a [u8],
        values: &'a [u8],
    ) -> Result<Self, Failure> {
        let header: &[u8; RECORD] = records
            .get(..RECORD)
            .and_then(|header| header.try_into().ok())
            .ok_or(Failure::Malformed)?;
        let strings = std::str::from_utf8(strings).map_err(|_| Failure::Malformed)?;
        Ok(Tape {
            records,
            next: RECORD,
            strings,
            values,
            header: Header {
                op: header[0],
                flags: header[1],
            },
            stopped: None,
        })
    }

    /// What the record at `at` (a byte offset) holds; `None` for an
    /// UNREADABLE one, an unfinished whole value, or a broken record.
    #[inline]
    fn slot(&self, at: usize) -> Option<Slot<'a>> {
        let record: &[u8; RECORD] = self.records.get(at..at + RECORD)?.try_into().ok()?;
        let (first, second) = words(record);
        Some(match record[0] {
            compact::ABSENT => Slot::Absent,
            compact::NULL => Slot::Null,
            compact::FALSE => Slot::Bool(false),
            compact::TRUE => Slot::Bool(true),
            compact::NUMBER => {
                let bits = u64::from_le_bytes(record[8..].try_into().ok()?);
                Slot::Number(Number::Float(f64::from_bits(bits)))
            }
            compact::STRING => Slot::String(Text {
                text: self.strings.get(first..first + second)?,
                lossy: record[1] & compact::LOSSY != 0,
            }),
            compact::ARRAY => Slot::Array(Tree::Opaque),
            compact::OBJECT => Slot::Object(Tree::Opaque),
            compact::ARRAY_WHOLE | compact::OBJECT_WHOLE => {
                let mut value = self.values.get(first..)?;
                compact::value(&mut value).ok()?
            }
            _ => return None,
        })
    }

    /// The next value, `at` a place for a report.
    #[inline]
    fn value(&mut self, at: At) -> Result<Slot<'a>, Stop> {
        let record = self.next;
        self.next += RECORD;
        self.slot(record).ok_or_else(|| {
            self.stopped = Some((record, at));
            Stop
        })
    }

    /// Why reading stopped, under the keys in force.
    fn failure(&self, keys: &KeyOptions) -> Failure {
        let Some((record, at)) = self.stopped else {
            return Failure::Malformed;
        };
        let Some(record) = self.records.get(record..record + RECORD) else {
            return Failure::Malformed;
        };
        let path = at.render(keys);
        match record.first() {
            Some(&compact::UNREADABLE) => Failure::Unreadable(Unreadable {
                path,
                what: describe(record.get(1).copied()).into(),
            }),
            Some(&(compact::ARRAY_WHOLE | compact::OBJECT_WHOLE)) => {
                let offset = record
                    .get(8..12)
                    .and_then(|raw| raw.try_into().ok())
                    .map_or(usize::MAX, |raw| u32::from_le_bytes(raw) as usize);
                match self.values.get(offset..) {
                    Some(value) => Failure::Unreadable(locate(value, path)),
                    None => Failure::Malformed,
                }
            }
            _ => Failure::Malformed,
        }
    }

    /// A value read whole: an option object, a key, an initiator.
    pub(super) fn whole(&mut self) -> Result<Slot<'a>, Failure> {
        self.value(At::place(Place::Root))
            .map_err(|Stop| self.failure(&KeyOptions::default()))
    }

    /// Reads a message into `view`, its configured keys as `keys` says.
    pub(super) fn message(
        &mut self,
        view: &mut MessageView<'a>,
        keys: &KeyOptions,
    ) -> Result<(), Failure> {
        self.places(view).map_err(|Stop| self.failure(keys))
    }

    /// The places of a message, in table order: each one whose parent is an
    /// object, and whose group the flags ask for.
    fn places(&mut self, view: &mut MessageView<'a>) -> Result<(), Stop> {
        for entry in &ORDER {
            let node = entry.node;
            let reached = entry
                .parent
                .is_none_or(|parent| view.get(parent).is_object());
            if !reached || self.header.flags & node.group.bit() != node.group.bit() {
                continue;
            }
            let at = At::place(node.place);
            match node.read {
                Read::Envelope if node.place == Place::Echo => {
                    self.envelope_into(&mut view.echo, true, at)?;
                    view.set(node.place, view.echo.value);
                }
                Read::Envelope => {
                    self.envelope_into(&mut view.envelope, self.header.flags & FIELDS != 0, at)?;
                    view.set(node.place, view.envelope.value);
                }
                Read::Others => {
                    let (slot, _) = self.others(at)?;
                    view.set(node.place, slot);
                }
                Read::Scalar | Read::Object => {
                    let slot = self.value(at)?;
                    view.set(node.place, slot);
                }
            }
        }
        Ok(())
    }

    /// An envelope given as an argument: its type, and what is in it.
    pub(super) fn envelope(&mut self, out: &mut Envelope<'a>) -> Result<(), Failure> {
        self.envelope_into(out, true, At::place(Place::Root))
            .map_err(|Stop| self.failure(&KeyOptions::default()))
    }

    /// An envelope `at` a place: its type, and with `fields` what is in it.
    fn envelope_into(
        &mut self,
        envelope: &mut Envelope<'a>,
        fields: bool,
        at: At,
    ) -> Result<(), Stop> {
        envelope.value = self.value(at)?;
        if !fields || !envelope.value.is_object() {
            return Ok(());
        }
        for (which, view) in envelope.fields.iter_mut() {
            let (field, at) = (which.spec(), at.field(which));
            view.value = self.value(at)?;
            if field.is_object() && view.value.is_object() {
                for (member, slot) in view
                    .members
                    .iter_mut()
                    .take(field.members.len())
                    .enumerate()
                {
                    *slot = self.value(at.member(member))?;
                }
                (view.value, view.others) = self.others(at)?;
            }
        }
        (envelope.value, envelope.others) = self.others(at)?;
        Ok(())
    }

    /// The members of an object `at` a place that the table does not
    /// define, as the object's slot, and how many there are.
    fn others(&mut self, at: At) -> Result<(Slot<'a>, usize), Stop> {
        let slot = self.value(at)?;
        let Slot::Object(tree @ Tree::Bytes(bytes)) = slot else {
            return Ok((Slot::Object(Tree::Opaque), 0));
        };
        let count = bytes
            .get(5..9)
            .and_then(|raw| raw.try_into().ok())
            .map_or(0, u32::from_le_bytes) as usize;
        Ok((Slot::Object(tree), count))
    }
}

/// Where in `bytes`, the value JS broke off at `path`, the `UNREADABLE`
/// stands: containers finished before it are skipped, the unfinished one it
/// is in is entered.
fn locate(bytes: &[u8], path: String) -> Unreadable {
    let mut bytes = bytes;
    let mut names: Vec<String> = Vec::new();
    let what = loop {
        let Ok(tag) = compact::byte(&mut bytes) else {
            break None;
        };
        match tag {
            compact::UNREADABLE => break compact::byte(&mut bytes).ok(),
            compact::ARRAY_WHOLE | compact::OBJECT_WHOLE => {
                let _ = compact::u32(&mut bytes);
                let _ = compact::u32(&mut bytes);
                if tag == compact::ARRAY_WHOLE {
                    names.push(skip_items(&mut bytes).to_string());
                } else {
                    match skip_members(&mut bytes) {
                        Some(name) => names.push(name),
                        None => break None,
                    }
                }
            }
            _ => break None,
        }
    };
    let mut full = path;
    for name in &names {
        full.push_str(&Path::ROOT.join(name).render());
    }
    Unreadable {
        path: full,
        what: describe(what).into(),
    }
}

/// What the byte after UNREADABLE says JS met.
fn describe(what: Option<u8>) -> &'static str {
    what.and_then(|what| WHAT.get(usize::from(what)))
        .map_or(WHAT[0].1, |(_, what)| what)
}

/// Skips the finished items of an unfinished array; how many there were.
fn skip_items(bytes: &mut &[u8]) -> usize {
    let mut count = 0;
    while starts_finished(bytes) {
        if compact::value(bytes).is_err() {
            break;
        }
        count += 1;
    }
    count
}

/// Skips the finished members of an unfinished object; the name of the one
/// the break is in.
fn skip_members(bytes: &mut &[u8]) -> Option<String> {
    loop {
        let name = compact::text(bytes).ok()?.text.to_owned();
        if !starts_finished(bytes) {
            return Some(name);
        }
        compact::value(bytes).ok()?;
    }
}

/// Whether the value at the head of `bytes` is complete: not the break and
/// not a container JS left unfinished.
fn starts_finished(bytes: &[u8]) -> bool {
    match bytes.first() {
        Some(&compact::UNREADABLE) | None => false,
        Some(&(compact::ARRAY_WHOLE | compact::OBJECT_WHOLE)) => {
            bytes
                .get(1..5)
                .and_then(|raw| raw.try_into().ok())
                .map(u32::from_le_bytes)
                != Some(UNFINISHED)
        }
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn the_order_lists_each_place_after_its_parent() {
        for (index, entry) in ORDER.iter().enumerate() {
            assert_eq!(entry.node.place as usize, index);
            assert!(entry.parent.is_none_or(|parent| (parent as usize) < index));
        }
    }
}
