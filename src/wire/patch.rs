//! Carrying out a rule's edits on a message's JSON text: the bytes a rule
//! changed are replaced, and every other byte stays as it came.
//!
//! An edit that replaces the value of a member that is there replaces that
//! value's bytes alone. An edit that removes a member, or adds one, rewrites
//! the object holding it: `{`, its other members byte for byte (name,
//! spacing, value), what was added, `}`. Nothing above or beside those
//! objects moves: ids, `arguments`, number spellings, whitespace and member
//! order elsewhere are forwarded as received.

use std::collections::BTreeMap;

use crate::edit::{Edit, Put, Target};
use crate::json;
use crate::json::doc::{Doc, Entry, Raw, Span};
use crate::keys::KeyOptions;

/// An edit the text cannot take: it goes through a value that was not read
/// whole. The rules never make one; the filter refuses the message if they do.
#[derive(Debug)]
pub(crate) struct Unpatchable;

/// A value an edit puts.
#[derive(Debug)]
enum New {
    /// JSON text, written as it is.
    Json(String),
    /// An object made by the edits, its members in the order they were put.
    Object(Vec<(String, New)>),
}

/// What becomes of a member of an object of the text.
#[derive(Debug)]
enum Mod {
    Remove,
    Set(New),
    /// Its value is an object of the text with changes of its own.
    Into,
}

/// The edits made so far to one message.
pub(crate) struct Patch<'d, 'a> {
    doc: &'d Doc<'a>,
    root: Entry,
    /// For each object of the text with changes, by node: its members' fates.
    mods: BTreeMap<usize, Fates<'d>>,
}

/// Objects of at most this many members are searched from end to end:
/// sorting them first cost more (a fifth of a redacting filter's patch on
/// the SEP example, whose objects hold one to four members).
const SEARCHED: usize = 8;

/// What becomes of the members of one object of the text. Past
/// [`SEARCHED`] members, every look-up is by name in sorted order, so that
/// edits to many members of one object (an envelope of many unknown fields,
/// dropped) cost n log n, not n².
struct Fates<'d> {
    /// The object's members as they came, sorted by name past [`SEARCHED`]
    /// (names are unique where an edit reaches: a duplicate there refuses
    /// the message).
    members: Vec<(&'d str, Entry)>,
    /// Each member's fate, by name.
    by_name: BTreeMap<String, Mod>,
    /// The names of members the edits add, in the order first put.
    added: Vec<String>,
}

impl<'d> Fates<'d> {
    /// The member `name` as it came.
    fn member(&self, name: &str) -> Option<Entry> {
        if self.members.len() <= SEARCHED {
            let found = self.members.iter().find(|(known, _)| *known == name);
            return found.map(|(_, entry)| *entry);
        }
        let at = self
            .members
            .binary_search_by(|(known, _)| (*known).cmp(name))
            .ok()?;
        self.members.get(at).map(|(_, entry)| *entry)
    }

    /// Gives the member `name`, which has no fate yet, `fate`; `added` when
    /// the object did not have it.
    fn set(&mut self, name: &str, fate: Mod, added: bool) {
        if added {
            self.added.push(name.to_owned());
        }
        self.by_name.insert(name.to_owned(), fate);
    }

    /// Whether the object is written anew: a member it had removed, or one
    /// it did not have added.
    fn reshaped(&self) -> bool {
        self.by_name.iter().any(|(name, fate)| {
            let there = self.member(name).is_some();
            match fate {
                Mod::Remove => there,
                Mod::Set(_) | Mod::Into => !there,
            }
        })
    }
}

impl<'d, 'a> Patch<'d, 'a> {
    /// No edit yet to the message `root` of `doc`.
    pub(crate) fn new(doc: &'d Doc<'a>, root: Entry) -> Self {
        Patch {
            doc,
            root,
            mods: BTreeMap::new(),
        }
    }

    /// Carries out `edits` in order, their places named under `keys`.
    pub(crate) fn edits(&mut self, edits: &[Edit], keys: &KeyOptions) -> Result<(), Unpatchable> {
        edits.iter().try_for_each(|edit| self.edit(edit, keys))
    }

    /// Carries out `edit`, its places named under `keys`.
    fn edit(&mut self, edit: &Edit, keys: &KeyOptions) -> Result<(), Unpatchable> {
        let value = match &edit.put {
            Put::Remove => None,
            Put::Text(text) => {
                let mut out = String::with_capacity(text.len() + 2);
                json::write_string(&mut out, text);
                Some(New::Json(out))
            }
            Put::Bool(flag) => Some(New::Json(flag.to_string())),
            Put::Object => Some(New::Object(Vec::new())),
            Put::Json(text) => Some(New::Json(text.clone())),
            // What a member of the message held, as it came: escapes and all.
            Put::Copy { input: 0, target } => Some(New::Json(self.raw(target, keys)?.to_owned())),
            Put::Copy { .. } => return Err(Unpatchable),
        };
        let Raw::Node(root) = self.root.raw else {
            return Err(Unpatchable);
        };
        self.put(root, &edit.target.names(keys), value)
    }

    /// The text of the value at `target`, as it came.
    fn raw(&self, target: &Target, keys: &KeyOptions) -> Result<&'d str, Unpatchable> {
        let mut entry = self.root;
        for name in target.names(keys) {
            let Raw::Node(node) = entry.raw else {
                return Err(Unpatchable);
            };
            let node = self.doc.get(node).ok_or(Unpatchable)?;
            entry = *self.doc.member(node, name).ok_or(Unpatchable)?;
        }
        Ok(self.doc.at(entry.value))
    }

    /// The fates of the members of the object `node`, made empty when it has none yet.
    fn fates_of(&mut self, node: usize) -> Result<&mut Fates<'d>, Unpatchable> {
        let doc = self.doc;
        let object = doc
            .get(node)
            .filter(|found| found.object)
            .ok_or(Unpatchable)?;
        Ok(self.mods.entry(node).or_insert_with(|| {
            let mut members: Vec<(&str, Entry)> = doc
                .entries(object)
                .iter()
                .map(|entry| {
                    (
                        entry.name.map(|name| doc.str(name)).unwrap_or_default(),
                        *entry,
                    )
                })
                .collect();
            if members.len() > SEARCHED {
                crate::json::sort_by_name(&mut members);
            }
            Fates {
                members,
                by_name: BTreeMap::new(),
                added: Vec::new(),
            }
        }))
    }

    /// Puts `value` (`None`: removes the member) at `names` below the object `node`.
    fn put(&mut self, node: usize, names: &[&str], value: Option<New>) -> Result<(), Unpatchable> {
        let (name, rest) = names.split_first().ok_or(Unpatchable)?;
        let fates = self.fates_of(node)?;
        let entry = fates.member(name);
        let made = fates.by_name.get_mut(*name);
        if rest.is_empty() {
            let fate = value.map_or(Mod::Remove, Mod::Set);
            match made {
                Some(made) => *made = fate,
                None if entry.is_none() && matches!(fate, Mod::Remove) => {}
                None => fates.set(name, fate, entry.is_none()),
            }
            return Ok(());
        }
        match made {
            Some(Mod::Set(New::Object(members))) => {
                put_new(members, rest, value);
                return Ok(());
            }
            Some(Mod::Into) => {}
            Some(fate) if value.is_some() => {
                let mut members = Vec::new();
                put_new(&mut members, rest, value);
                *fate = Mod::Set(New::Object(members));
                return Ok(());
            }
            Some(_) => return Ok(()),
            None => {}
        }
        match entry.map(|entry| entry.raw) {
            Some(Raw::Node(child)) => {
                if !fates.by_name.contains_key(*name) {
                    fates.set(name, Mod::Into, false);
                }
                self.put(child, rest, value)
            }
            Some(_) => Err(Unpatchable),
            None if value.is_none() => Ok(()),
            None => {
                let mut members = Vec::new();
                put_new(&mut members, rest, value);
                fates.set(name, Mod::Set(New::Object(members)), true);
                Ok(())
            }
        }
    }

    /// The message's text with the edits made, `None` when there were none.
    pub(crate) fn text(&self) -> Option<String> {
        let Raw::Node(root) = self.root.raw else {
            return None;
        };
        let mut splices = Vec::new();
        self.emit(root, &mut splices);
        if splices.is_empty() {
            return None;
        }
        crate::json::sort_by(&mut splices, |(span, _)| span.start);
        let whole = self.root.value;
        let mut out = String::with_capacity(whole.end - whole.start + 64);
        let mut at = whole.start;
        for (span, text) in &splices {
            out.push_str(self.doc.at(Span {
                start: at,
                end: span.start,
            }));
            out.push_str(text);
            at = span.end;
        }
        out.push_str(self.doc.at(Span {
            start: at,
            end: whole.end,
        }));
        Some(out)
    }

    /// The splices that carry out the changes at and below `node`.
    fn emit(&self, node: usize, splices: &mut Vec<(Span, String)>) {
        let Some(fates) = self.mods.get(&node) else {
            return;
        };
        if fates.reshaped() {
            let mut out = String::new();
            self.render(node, &mut out);
            if let Some(object) = self.doc.get(node) {
                splices.push((object.span, out));
            }
            return;
        }
        for (name, fate) in &fates.by_name {
            let Some(entry) = fates.member(name) else {
                continue;
            };
            match (fate, entry.raw) {
                (Mod::Set(new), _) => {
                    let mut out = String::new();
                    write(new, &mut out);
                    splices.push((entry.value, out));
                }
                (Mod::Into, Raw::Node(child)) => self.emit(child, splices),
                _ => {}
            }
        }
    }

    /// Writes the object `node` as it becomes: its members as they came
    /// but for those changed, then those added.
    fn render(&self, node: usize, out: &mut String) {
        let doc = self.doc;
        let Some(object) = doc.get(node) else { return };
        let fates = self.mods.get(&node);
        let fate_of = |name: &str| fates.and_then(|fates| fates.by_name.get(name));
        out.push('{');
        let mut first = true;
        let mut comma = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        for entry in doc.entries(object) {
            let name = entry.name.map(|name| doc.str(name)).unwrap_or_default();
            let head = Span {
                start: entry.start,
                end: entry.value.start,
            };
            match (fate_of(name), entry.raw) {
                (Some(Mod::Remove), _) => {}
                (Some(Mod::Set(new)), _) => {
                    comma(out);
                    out.push_str(doc.at(head));
                    write(new, out);
                }
                (Some(Mod::Into), Raw::Node(child)) => {
                    comma(out);
                    out.push_str(doc.at(head));
                    self.render(child, out);
                }
                _ => {
                    comma(out);
                    out.push_str(doc.at(Span {
                        start: entry.start,
                        end: entry.value.end,
                    }));
                }
            }
        }
        for name in fates.map_or(&[][..], |fates| &fates.added) {
            if let Some(Mod::Set(new)) = fate_of(name) {
                comma(out);
                json::write_string(out, name);
                out.push(':');
                write(new, out);
            }
        }
        out.push('}');
    }
}

/// Puts `value` at `names` in an object the edits made.
fn put_new(members: &mut Vec<(String, New)>, names: &[&str], value: Option<New>) {
    let Some((name, rest)) = names.split_first() else {
        return;
    };
    let at = members.iter().position(|(n, _)| n == name);
    if rest.is_empty() {
        match (at, value) {
            (Some(at), None) => {
                members.remove(at);
            }
            (Some(at), Some(value)) => {
                if let Some(member) = members.get_mut(at) {
                    member.1 = value;
                }
            }
            (None, Some(value)) => members.push(((*name).to_owned(), value)),
            (None, None) => {}
        }
        return;
    }
    let at = match at {
        Some(at) => at,
        None if value.is_none() => return,
        None => {
            members.push(((*name).to_owned(), New::Object(Vec::new())));
            members.len() - 1
        }
    };
    let Some((_, member)) = members.get_mut(at) else {
        return;
    };
    if let New::Json(_) = member {
        *member = New::Object(Vec::new());
    }
    if let New::Object(inner) = member {
        put_new(inner, rest, value);
    }
}

/// Writes a value the edits made.
fn write(value: &New, out: &mut String) {
    match value {
        New::Json(text) => out.push_str(text),
        New::Object(members) => {
            out.push('{');
            for (index, (name, value)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                json::write_string(out, name);
                out.push(':');
                write(value, out);
            }
            out.push('}');
        }
    }
}
