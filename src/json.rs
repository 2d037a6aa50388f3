//! JSON values as the rules read them, borrowed: from a `serde_json::Value`
//! natively, from the flat form a binding lays them out in (the wasm
//! build, from what JS handed over), or from JSON text as it came over the
//! wire ([`crate::wire`]). Nothing here is copied.

use std::borrow::Cow;

#[cfg(feature = "value")]
use serde_json::Value;

/// A JSON type, as messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// The type with its article, for messages: "a string", "null".
    pub(crate) fn article(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// What stands at one place of a message, as far as it was read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum Slot<'a> {
    /// Nothing: the member is missing (or, in JS, `undefined`).
    #[default]
    Absent,
    Null,
    Bool(bool),
    Number(Number<'a>),
    String(Text<'a>),
    Array(Tree<'a>),
    Object(Tree<'a>),
}

impl<'a> Slot<'a> {
    /// The JSON type, `None` when absent.
    pub(crate) fn kind(&self) -> Option<Kind> {
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
    pub(crate) fn article(&self) -> &'static str {
        self.kind().map_or("undefined", Kind::article)
    }

    pub(crate) fn is_present(&self) -> bool {
        !matches!(self, Slot::Absent)
    }

    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Slot::Object(_))
    }

    /// The string, when this is one.
    pub(crate) fn text(&self) -> Option<Text<'a>> {
        match self {
            Slot::String(text) => Some(*text),
            _ => None,
        }
    }

    /// The string as read, when this is one.
    pub(crate) fn str(&self) -> Option<&'a str> {
        self.text().map(|text| text.text)
    }

    /// The object's members, when this is one (none otherwise).
    pub(crate) fn tree(&self) -> Tree<'a> {
        match self {
            Slot::Object(tree) | Slot::Array(tree) => *tree,
            _ => Tree::Opaque,
        }
    }

    /// The slot of a `serde_json::Value`.
    #[cfg(feature = "value")]
    pub(crate) fn of(value: &'a Value) -> Self {
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
    pub(crate) fn of_option(value: Option<&'a Value>) -> Self {
        value.map_or(Slot::Absent, Slot::of)
    }
}

/// A string as read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Text<'a> {
    pub text: &'a str,
    /// A lone UTF-16 surrogate was read as U+FFFD (only JS strings hold them).
    pub lossy: bool,
}

#[cfg(feature = "value")]
impl<'a> Text<'a> {
    /// A string read exactly.
    pub(crate) fn exact(text: &'a str) -> Self {
        Text { text, lossy: false }
    }
}

/// A number as read.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Number<'a> {
    #[cfg(feature = "value")]
    Value(&'a serde_json::Number),
    /// Read by its value: a request id, an option.
    Float(f64),
    /// Read by its value and its JSON text, as the runtime that holds it
    /// writes it: a number inside a value read whole.
    Text(f64, &'a str),
    /// Its JSON text as it came over the wire, spelling and all: `1.10`,
    /// `1e400` and `12345678901234567890` stay what they were.
    Wire(&'a str),
}

impl Number<'_> {
    /// The value, when it was read by value.
    pub(crate) fn value(&self) -> Option<f64> {
        match self {
            #[cfg(feature = "value")]
            Number::Value(number) => number.as_f64(),
            Number::Float(value) | Number::Text(value, _) => Some(*value),
            Number::Wire(text) => text.parse().ok(),
        }
    }

    /// As `serde_json` holds it: integers stay integers.
    pub(crate) fn to_json(self) -> Option<serde_json::Number> {
        match self {
            #[cfg(feature = "value")]
            Number::Value(number) => Some(number.clone()),
            Number::Float(value)
                if value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 =>
            {
                Some(serde_json::Number::from(value as i64))
            }
            Number::Float(value) | Number::Text(value, _) => serde_json::Number::from_f64(value),
            // Integers exactly, as far as 64 bits hold them; `1e400` is no number JSON stores.
            Number::Wire(text) => match text.parse::<u64>() {
                Ok(whole) => Some(whole.into()),
                Err(_) => match text.parse::<i64>() {
                    Ok(whole) => Some(whole.into()),
                    Err(_) => text.parse().ok().and_then(serde_json::Number::from_f64),
                },
            },
        }
    }

    /// Appends the number's JSON text, as `JSON.stringify` writes it, so
    /// that sizes agree in every runtime: `1e20` is
    /// `100000000000000000000`, `1e-7` is `1e-7`.
    fn write(&self, out: &mut String) {
        match self {
            #[cfg(feature = "value")]
            Number::Value(number) => match number.as_f64() {
                Some(value) => out.push_str(ryu_js::Buffer::new().format(value)),
                None => out.push_str("null"),
            },
            Number::Text(_, text) | Number::Wire(text) => out.push_str(text),
            // Never inside a value read whole; written as JSON writes a
            // number it cannot hold, should it ever be.
            Number::Float(_) => out.push_str("null"),
        }
    }
}

/// The contents of an array or object, as far as they were read.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum Tree<'a> {
    /// Only the type was read.
    #[default]
    Opaque,
    #[cfg(feature = "value")]
    Value(&'a Value),
    /// The container in the compact form, from its tag (see [`compact`]).
    Bytes(&'a [u8]),
    /// A container of JSON text read over the wire.
    Wire(crate::wire::Container<'a>),
}

impl<'a> Tree<'a> {
    /// An object's members in the order they are held.
    pub(crate) fn members(self) -> Members<'a> {
        match self {
            #[cfg(feature = "value")]
            Tree::Value(Value::Object(map)) => Members::Value(map.iter()),
            Tree::Bytes(bytes) => Members::Bytes(compact::contents(bytes, compact::OBJECT)),
            Tree::Wire(container) if container.is_object() => Members::Wire(container.entries()),
            _ => Members::Empty,
        }
    }

    /// An array's items in order.
    pub(crate) fn items(self) -> Items<'a> {
        match self {
            #[cfg(feature = "value")]
            Tree::Value(Value::Array(items)) => Items::Value(items.iter()),
            Tree::Bytes(bytes) => Items::Bytes(compact::contents(bytes, compact::ARRAY)),
            Tree::Wire(container) if !container.is_object() => Items::Wire(container.entries()),
            _ => Items::Empty,
        }
    }

    /// The member `name` of an object.
    pub(crate) fn get(self, name: &str) -> Slot<'a> {
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
pub(crate) enum Members<'a> {
    Empty,
    #[cfg(feature = "value")]
    Value(serde_json::map::Iter<'a>),
    Bytes(&'a [u8]),
    Wire(crate::wire::Entries<'a>),
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
pub(crate) enum Items<'a> {
    Empty,
    #[cfg(feature = "value")]
    Value(std::slice::Iter<'a, Value>),
    Bytes(&'a [u8]),
    Wire(crate::wire::Entries<'a>),
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

/// Appends `text` as a JSON string, escaped as `JSON.stringify` and
/// `serde_json` both escape it, and besides every character that is not
/// [inert](crate::text::is_inert) (U+2028, NEL, a bidi control…) as a
/// `\uXXXX` escape: the same JSON, and never a line break or a disguise in
/// whatever it is written into (a log line above all).
pub(crate) fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut rest = text;
    // Runs that need no escape go on whole; a run ends before an ASCII
    // byte to escape or the first byte of a character past ASCII.
    while let Some(at) = rest
        .bytes()
        .position(|byte| byte < 0x20 || byte == b'"' || byte == b'\\' || byte >= 0x7F)
    {
        let (run, escaped) = rest.split_at_checked(at).unwrap_or((rest, ""));
        out.push_str(run);
        let Some(c) = escaped.chars().next() else {
            break;
        };
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() || !crate::text::is_inert(c) => write_escape(out, c),
            c => out.push(c),
        }
        rest = escaped.get(c.len_utf8()..).unwrap_or_default();
    }
    out.push_str(rest);
    out.push('"');
}

/// `c` as JSON's `\uXXXX` escapes: one, or a surrogate pair past U+FFFF.
fn write_escape(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        out.push_str("\\u");
        for shift in [12, 8, 4, 0] {
            let digit = HEX.get(usize::from((*unit >> shift) & 15)).copied();
            out.push(char::from(digit.unwrap_or(b'0')));
        }
    }
}

/// Whether `json` is one line already, holding no character AI-13 or TXT-1
/// would replace: what [`one_line`] leaves as it is. Printable ASCII is
/// settled eight bytes at a time, with no allocation.
pub(crate) fn is_one_line(json: &str) -> bool {
    crate::text::is_printable_ascii(json.as_bytes()) || json.chars().all(crate::text::is_inert)
}

/// JSON text on one line that holds no character AI-13 or TXT-1 would
/// replace: the same JSON, with the tabs, carriage returns and line feeds
/// between its tokens left out and every other such character (they can
/// only stand inside its strings) written as a `\uXXXX` escape. Borrowed
/// when `json` is one already. `json` must be JSON text: a line feed inside
/// a string of anything else would be dropped.
pub(crate) fn one_line(json: &str) -> Cow<'_, str> {
    if is_one_line(json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '\t' | '\n' | '\r' => {}
            c if crate::text::is_inert(c) => out.push(c),
            c => write_escape(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// The UTF-8 length of `text` written as a JSON string.
pub(crate) fn string_len(text: &str) -> usize {
    let escapes: usize = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | 0x08 | 0x0C | b'\n' | b'\r' | b'\t' => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    text.len() + 2 + escapes
}

/// Appends a scalar slot as JSON (an absent one as `null`).
pub(crate) fn write_scalar(out: &mut String, slot: &Slot<'_>) {
    match slot {
        Slot::Null | Slot::Absent | Slot::Array(_) | Slot::Object(_) => out.push_str("null"),
        Slot::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Slot::Number(number) => number.write(out),
        Slot::String(text) => write_string(out, text.text),
    }
}

/// The compact form a binding hands values over in, read in place: a tag
/// byte, then what the tag says, integers little-endian.
///
/// ```text
/// value := ABSENT | NULL | FALSE | TRUE | NUMBER f64 | NUMBER_TEXT f64 str
///        | STRING str | ARRAY | OBJECT | UNREADABLE what:u8
///        | ARRAY_WHOLE size:u32 count:u32 value{count}
///        | OBJECT_WHOLE size:u32 count:u32 (str value){count}
/// str   := len:u32 flags:u8 utf8[len]        flags: 1 cut, 2 lossy
/// ```
///
/// `ARRAY` and `OBJECT` give the type alone; the `_WHOLE` forms hold every
/// item or member, `size` being the bytes after it. `UNREADABLE` marks a
/// value JS could not read as JSON; what it was is the binding's to say.
pub(crate) mod compact {
    use super::{Number, Slot, Text, Tree};

    pub(crate) const ABSENT: u8 = 0;
    pub(crate) const NULL: u8 = 1;
    pub(crate) const FALSE: u8 = 2;
    pub(crate) const TRUE: u8 = 3;
    pub(crate) const NUMBER: u8 = 4;
    pub(crate) const NUMBER_TEXT: u8 = 5;
    pub(crate) const STRING: u8 = 6;
    pub(crate) const ARRAY: u8 = 7;
    pub(crate) const OBJECT: u8 = 8;
    pub(crate) const ARRAY_WHOLE: u8 = 9;
    pub(crate) const OBJECT_WHOLE: u8 = 10;
    pub(crate) const UNREADABLE: u8 = 11;

    /// A string's flag: not all of it was read.
    pub(crate) const CUT: u8 = 1;
    /// A string's flag: a lone surrogate was read as U+FFFD.
    pub(crate) const LOSSY: u8 = 2;

    /// Why bytes could not be read as a value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Broken {
        /// JS could not read the value as JSON; the byte says why.
        Unreadable(u8),
        /// The bytes break the form.
        Malformed,
    }

    #[inline]
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], Broken> {
        let (head, rest) = bytes.split_at_checked(n).ok_or(Broken::Malformed)?;
        *bytes = rest;
        Ok(head)
    }

    #[inline]
    pub(crate) fn byte(bytes: &mut &[u8]) -> Result<u8, Broken> {
        take(bytes, 1)?.first().copied().ok_or(Broken::Malformed)
    }

    #[inline]
    pub(crate) fn u32(bytes: &mut &[u8]) -> Result<u32, Broken> {
        let raw = take(bytes, 4)?.try_into().map_err(|_| Broken::Malformed)?;
        Ok(u32::from_le_bytes(raw))
    }

    #[inline]
    fn f64(bytes: &mut &[u8]) -> Result<f64, Broken> {
        let raw = take(bytes, 8)?.try_into().map_err(|_| Broken::Malformed)?;
        Ok(f64::from_le_bytes(raw))
    }

    /// A `str` at the head of `bytes`, and whether it was cut short.
    #[inline]
    pub(crate) fn text_and_cut<'a>(bytes: &mut &'a [u8]) -> Result<(Text<'a>, bool), Broken> {
        let len = u32(bytes)? as usize;
        let flags = byte(bytes)?;
        let text = std::str::from_utf8(take(bytes, len)?).map_err(|_| Broken::Malformed)?;
        let lossy = flags & LOSSY != 0;
        Ok((Text { text, lossy }, flags & CUT != 0))
    }

    /// A `str` at the head of `bytes`.
    #[inline]
    pub(crate) fn text<'a>(bytes: &mut &'a [u8]) -> Result<Text<'a>, Broken> {
        text_and_cut(bytes).map(|(text, _)| text)
    }

    /// The value at the head of `bytes`. A whole container is returned as
    /// a tree over its bytes, which are skipped, not read.
    #[inline]
    pub(crate) fn value<'a>(bytes: &mut &'a [u8]) -> Result<Slot<'a>, Broken> {
        let start = *bytes;
        Ok(match byte(bytes)? {
            ABSENT => Slot::Absent,
            NULL => Slot::Null,
            FALSE => Slot::Bool(false),
            TRUE => Slot::Bool(true),
            NUMBER => Slot::Number(Number::Float(f64(bytes)?)),
            NUMBER_TEXT => {
                let value = f64(bytes)?;
                Slot::Number(Number::Text(value, text(bytes)?.text))
            }
            STRING => Slot::String(text(bytes)?),
            ARRAY => Slot::Array(Tree::Opaque),
            OBJECT => Slot::Object(Tree::Opaque),
            tag @ (ARRAY_WHOLE | OBJECT_WHOLE) => {
                let size = u32(bytes)? as usize;
                take(bytes, size)?;
                let whole = start.get(..5 + size).ok_or(Broken::Malformed)?;
                match tag {
                    ARRAY_WHOLE => Slot::Array(Tree::Bytes(whole)),
                    _ => Slot::Object(Tree::Bytes(whole)),
                }
            }
            UNREADABLE => return Err(Broken::Unreadable(byte(bytes)?)),
            _ => return Err(Broken::Malformed),
        })
    }

    /// The items or members of a whole container whose tag `kind` names
    /// (`ARRAY` or `OBJECT`): the bytes after its count.
    pub(crate) fn contents(bytes: &[u8], kind: u8) -> &[u8] {
        let whole = if kind == ARRAY {
            ARRAY_WHOLE
        } else {
            OBJECT_WHOLE
        };
        match bytes.split_first() {
            Some((tag, rest)) if *tag == whole => rest.get(8..).unwrap_or_default(),
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn a_string_is_written_with_no_line_break_or_disguise_raw() {
        let text = "a\"\\\n\u{7f}\u{85}\u{2028}\u{202e}\u{e0041}é😀";
        let mut out = String::new();
        write_string(&mut out, text);
        assert_eq!(out, r#""a\"\\\n\u007f\u0085\u2028\u202e\udb40\udc41é😀""#);
        assert_eq!(
            serde_json::from_str::<String>(&out).ok().as_deref(),
            Some(text)
        );
    }

    #[test]
    fn json_text_is_put_on_one_line_as_the_same_json() {
        let json = "{\"a\" :\r\n\t[1,\n \"\u{2028}\u{85}x\\n\"]}";
        assert_eq!(one_line(json), r#"{"a" :[1, "\u2028\u0085x\n"]}"#);
        let parsed = |text: &str| serde_json::from_str::<Value>(text).ok();
        assert_eq!(parsed(&one_line(json)), parsed(json));
        for plain in [r#"{"a": "é"}"#, "[]"] {
            assert!(matches!(one_line(plain), Cow::Borrowed(_)));
        }
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

    #[test]
    fn strings_are_escaped_as_json_writes_them() {
        let text = "a\"b\\c\n\u{1}é";
        let mut out = String::new();
        write_string(&mut out, text);
        assert_eq!(out, serde_json::to_string(text).unwrap());
        assert_eq!(string_len(text), out.len());
        let value = json!({"n": 1.5});
        let mut number = String::new();
        write_scalar(&mut number, &Slot::of(&value["n"]));
        assert_eq!(number, "1.5");
    }
}
