//! The compact form a binding hands values over in, read in place: a tag
//! byte, then what the tag says, integers little-endian.
//!
//! ```text
//! value := ABSENT | NULL | FALSE | TRUE | NUMBER f64 | NUMBER_TEXT f64 str
//!        | STRING str | ARRAY | OBJECT | UNREADABLE what:u8
//!        | ARRAY_WHOLE size:u32 count:u32 value{count}
//!        | OBJECT_WHOLE size:u32 count:u32 (str value){count}
//! str   := len:u32 flags:u8 utf8[len]        flags: 2 lossy
//! ```
//!
//! `ARRAY` and `OBJECT` give the type alone; the `_WHOLE` forms hold every
//! item or member, `size` being the bytes after it. `UNREADABLE` marks a
//! value JS could not read as JSON; what it was is the binding's to say.

use super::scalar::{Number, Text};
use super::slot::{Slot, Tree};

// The tags, as the grammar above names them.
/// The tag of a missing member (`undefined`).
pub const ABSENT: u8 = 0;
/// The tag of `null`.
pub const NULL: u8 = 1;
/// The tag of `false`.
pub const FALSE: u8 = 2;
/// The tag of `true`.
pub const TRUE: u8 = 3;
/// The tag of a number, by its value.
pub const NUMBER: u8 = 4;
/// The tag of a number, by its value and its text.
pub const NUMBER_TEXT: u8 = 5;
/// The tag of a string.
pub const STRING: u8 = 6;
/// The tag of an array, its type alone.
pub const ARRAY: u8 = 7;
/// The tag of an object, its type alone.
pub const OBJECT: u8 = 8;
/// The tag of an array with every item.
pub const ARRAY_WHOLE: u8 = 9;
/// The tag of an object with every member.
pub const OBJECT_WHOLE: u8 = 10;
/// The tag of a value JS could not read as JSON.
pub const UNREADABLE: u8 = 11;

/// A string's flag: a lone surrogate was read as U+FFFD.
pub const LOSSY: u8 = 2;

/// Why bytes could not be read as a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// JS could not read the value as JSON; the byte says why.
    Unreadable(u8),
    /// The bytes break the form.
    Malformed,
}

/// The next `n` bytes, taken off the head of `bytes`.
#[inline]
fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], Broken> {
    let (head, rest) = bytes.split_at_checked(n).ok_or(Broken::Malformed)?;
    *bytes = rest;
    Ok(head)
}

/// The byte at the head of `bytes`, taken off it.
#[inline]
pub fn byte(bytes: &mut &[u8]) -> Result<u8, Broken> {
    take(bytes, 1)?.first().copied().ok_or(Broken::Malformed)
}

/// The `u32` at the head of `bytes`, taken off it.
#[inline]
pub fn u32(bytes: &mut &[u8]) -> Result<u32, Broken> {
    let raw = take(bytes, 4)?.try_into().map_err(|_| Broken::Malformed)?;
    Ok(u32::from_le_bytes(raw))
}

/// The `f64` at the head of `bytes`, taken off it.
#[inline]
fn f64(bytes: &mut &[u8]) -> Result<f64, Broken> {
    let raw = take(bytes, 8)?.try_into().map_err(|_| Broken::Malformed)?;
    Ok(f64::from_le_bytes(raw))
}

/// A `str` at the head of `bytes`.
#[inline]
pub fn text<'a>(bytes: &mut &'a [u8]) -> Result<Text<'a>, Broken> {
    let len = u32(bytes)? as usize;
    let flags = byte(bytes)?;
    let text = std::str::from_utf8(take(bytes, len)?).map_err(|_| Broken::Malformed)?;
    Ok(Text {
        text,
        lossy: flags & LOSSY != 0,
    })
}

/// The value at the head of `bytes`. A whole container is returned as
/// a tree over its bytes, which are skipped, not read.
#[inline]
pub fn value<'a>(bytes: &mut &'a [u8]) -> Result<Slot<'a>, Broken> {
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
pub fn contents(bytes: &[u8], kind: u8) -> &[u8] {
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
