//! Carrying out a rule's edits on a message's JSON text: the bytes a rule
//! changed are replaced, and every other byte stays as it came.
//!
//! An edit that replaces the value of a member that is there replaces that
//! value's bytes alone. An edit that removes a member, or adds one, rewrites
//! the object holding it: `{`, its other members byte for byte (name,
//! spacing, value), what was added, `}`. Nothing above or beside those
//! objects moves: ids, `arguments`, number spellings, whitespace and member
//! order elsewhere are forwarded as received.

use super::doc::{Doc, Entry, Raw, Span};
use crate::edit::{Edit, Put, Target};
use crate::json;
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
    /// For each object of the text with changes: its node, and its members' fates.
    mods: Vec<(usize, Vec<(String, Mod)>)>,
}

impl<'d, 'a> Patch<'d, 'a> {
    /// No edit yet to the message `root` of `doc`.
    pub(crate) fn new(doc: &'d Doc<'a>, root: Entry) -> Self {
        Patch {
            doc,
            root,
            mods: Vec::new(),
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

    /// The fates of the members of `node`, made empty when it has none yet.
    fn mods_of(&mut self, node: usize) -> Result<&mut Vec<(String, Mod)>, Unpatchable> {
        let at = match self.mods.iter().position(|(n, _)| *n == node) {
            Some(at) => at,
            None => {
                self.mods.push((node, Vec::new()));
                self.mods.len() - 1
            }
        };
        self.mods
            .get_mut(at)
            .map(|(_, mods)| mods)
            .ok_or(Unpatchable)
    }

    /// Puts `value` (`None`: removes the member) at `names` below the object `node`.
    fn put(&mut self, node: usize, names: &[&str], value: Option<New>) -> Result<(), Unpatchable> {
        let (name, rest) = names.split_first().ok_or(Unpatchable)?;
        let doc = self.doc;
        let object = doc
            .get(node)
            .filter(|found| found.object)
            .ok_or(Unpatchable)?;
        let entry = doc.member(object, name);
        let mods = self.mods_of(node)?;
        let made = mods.iter().position(|(n, _)| n == name);
        if rest.is_empty() {
            let fate = value.map_or(Mod::Remove, Mod::Set);
            match made.and_then(|at| mods.get_mut(at)) {
                Some(made) => made.1 = fate,
                None if entry.is_none() && matches!(fate, Mod::Remove) => {}
                None => mods.push(((*name).to_owned(), fate)),
            }
            return Ok(());
        }
        match made.and_then(|at| mods.get_mut(at)).map(|(_, fate)| fate) {
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
                if made.is_none() {
                    mods.push(((*name).to_owned(), Mod::Into));
                }
                self.put(child, rest, value)
            }
            Some(_) => Err(Unpatchable),
            None if value.is_none() => Ok(()),
            None => {
                let mut members = Vec::new();
                put_new(&mut members, rest, value);
                mods.push(((*name).to_owned(), Mod::Set(New::Object(members))));
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
        sort_by_start(&mut splices);
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

    fn fates(&self, node: usize) -> &[(String, Mod)] {
        self.mods
            .iter()
            .find(|(n, _)| *n == node)
            .map_or(&[], |(_, mods)| mods.as_slice())
    }

    /// The splices that carry out the changes at and below `node`.
    fn emit(&self, node: usize, splices: &mut Vec<(Span, String)>) {
        let doc = self.doc;
        let Some(object) = doc.get(node) else { return };
        let fates = self.fates(node);
        let reshaped = fates
            .iter()
            .any(|(name, fate)| matches!(fate, Mod::Remove) || doc.member(object, name).is_none());
        if reshaped {
            let mut out = String::new();
            self.render(node, &mut out);
            splices.push((object.span, out));
            return;
        }
        for (name, fate) in fates {
            let Some(entry) = doc.member(object, name) else {
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
        let fates = self.fates(node);
        let fate_of = |name: &str| fates.iter().find(|(n, _)| n == name).map(|(_, fate)| fate);
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
        for (name, fate) in fates {
            if let (Mod::Set(new), None) = (fate, doc.member(object, name)) {
                comma(out);
                json::write_string(out, name);
                out.push(':');
                write(new, out);
            }
        }
        out.push('}');
    }
}

/// Sorts splices by where they start: an insertion sort, for the few a
/// message has (the standard library's sorts are kilobytes of the module).
fn sort_by_start(splices: &mut [(Span, String)]) {
    for at in 1..splices.len() {
        let mut to = at;
        while to > 0 {
            let start = |i: usize| splices.get(i).map(|(span, _)| span.start);
            if start(to - 1) <= start(to) {
                break;
            }
            splices.swap(to - 1, to);
            to -= 1;
        }
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
