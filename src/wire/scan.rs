//! The scanning under the parser ([`super::parse`]): whitespace, literals,
//! numbers and strings checked against RFC 8259 a byte (or, inside a string,
//! a run of eight) at a time; strings decoded into the document's store
//! where they hold an escape; and any value checked and skipped without
//! recursion, however deep it nests.

use super::parse::{Fault, Reader, Syntax};
use crate::json::Kind;
use crate::json::doc::{Raw, Span, StringSpan};

/// Whether a byte is JSON whitespace.
fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that ends a plain run of a string: a
/// quote, a backslash or a control character. Bytes above the lowest one
/// flagged may be flagged wrongly; the lowest is always right.
#[inline]
fn stops(word: u64) -> u64 {
    let quote = word ^ (u64::from(b'"') * LOW);
    let backslash = word ^ (u64::from(b'\\') * LOW);
    let zero = |x: u64| x.wrapping_sub(LOW) & !x;
    (zero(quote) | zero(backslash) | word.wrapping_sub(0x20 * LOW) & !word) & HIGH
}

/// The lines of `bytes`, each with its line feed but perhaps the last
/// (nothing for no bytes).
pub(super) fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = line_feed(rest).map_or(rest.len(), |at| at + 1);
        let (line, after) = rest.split_at(end);
        rest = after;
        Some(line)
    })
}

/// Where the first line feed of `bytes` is: natively, 16 or 32 bytes a step
/// (memchr's SSE2 or AVX2).
#[cfg(not(target_arch = "wasm32"))]
#[inline]
fn line_feed(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// Where the first line feed of `bytes` is, eight bytes a step: in wasm
/// built without simd128, memchr's search is a loop of this kind four bytes
/// a step (wasm32's word), and would add 0.25 KB (gzipped) to the module.
#[cfg(target_arch = "wasm32")]
fn line_feed(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(word) = bytes
        .get(at..at + 8)
        .and_then(|chunk| chunk.try_into().ok())
    {
        let feeds = u64::from_le_bytes(word) ^ (u64::from(b'\n') * LOW);
        let found = feeds.wrapping_sub(LOW) & !feeds & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = bytes.get(at..)?;
    tail.iter().position(|byte| *byte == b'\n').map(|i| at + i)
}

/// Where the last line feed of `bytes` is.
pub(super) fn last_line_feed(bytes: &[u8]) -> Option<usize> {
    #[cfg(not(target_arch = "wasm32"))]
    return memchr::memrchr(b'\n', bytes);
    #[cfg(target_arch = "wasm32")]
    return bytes.iter().rposition(|byte| *byte == b'\n');
}

impl<'a, 'k> Reader<'a, 'k> {
    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    pub(super) fn next_byte(&mut self) -> Option<u8> {
        let byte = self.peek();
        self.at += 1;
        byte
    }

    /// Past whitespace, the place kept in a register (the loop on `self.at`
    /// stored it at each byte: a tenth of the reading of an indented body).
    #[inline]
    pub(super) fn ws(&mut self) {
        self.at = ws(self.bytes, self.at);
    }

    pub(super) fn expect(&mut self, byte: u8) -> Result<(), Syntax> {
        self.ws();
        match self.next_byte() {
            Some(found) if found == byte => Ok(()),
            _ => Err(Syntax(self.at.saturating_sub(1))),
        }
    }

    /// Nothing but whitespace is left.
    pub(super) fn end(&mut self) -> Result<(), Syntax> {
        self.ws();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(Syntax(self.at)),
        }
    }

    pub(super) fn literal(&mut self, word: &[u8], raw: Raw) -> Result<Raw, Syntax> {
        match self.bytes.get(self.at..self.at + word.len()) {
            Some(found) if found == word => {
                self.at += word.len();
                Ok(raw)
            }
            _ => Err(Syntax(self.at)),
        }
    }

    /// A string after its opening quote, decoded: a span of the body when
    /// it holds no escape.
    pub(super) fn string(&mut self) -> Result<StringSpan, Syntax> {
        let start = self.at;
        if self.skip_plain()? == b'"' {
            self.at += 1;
            return Ok(StringSpan {
                in_store: false,
                span: Span {
                    start,
                    end: self.at - 1,
                },
                lossy: false,
            });
        }
        let from = self.doc.store.len();
        let mut lossy = false;
        self.doc
            .store
            .push_str(self.doc.text.get(start..self.at).unwrap_or_default());
        loop {
            match self.next_byte() {
                Some(b'"') => break,
                Some(b'\\') => lossy |= self.escape()?,
                _ => return Err(Syntax(self.at.saturating_sub(1))),
            }
            let run = self.at;
            self.skip_plain()?;
            let text = self.doc.text.get(run..self.at).unwrap_or_default();
            self.doc.store.push_str(text);
        }
        Ok(StringSpan {
            in_store: true,
            span: Span {
                start: from,
                end: self.doc.store.len(),
            },
            lossy,
        })
    }

    /// Moves past the plain bytes of a string; the byte that stopped it
    /// (a quote or a backslash; anything else is an error).
    #[inline]
    pub(super) fn skip_plain(&mut self) -> Result<u8, Syntax> {
        loop {
            while let Some(chunk) = self.bytes.get(self.at..self.at + 8) {
                let word = u64::from_le_bytes(chunk.try_into().map_err(|_| Syntax(self.at))?);
                let found = stops(word);
                if found != 0 {
                    self.at += (found.trailing_zeros() / 8) as usize;
                    break;
                }
                self.at += 8;
            }
            match self.peek() {
                Some(byte @ (b'"' | b'\\')) => return Ok(byte),
                Some(0..0x20) | None => return Err(Syntax(self.at)),
                Some(_) => self.at += 1,
            }
        }
    }

    /// A string after its opening quote, checked and skipped.
    #[inline]
    pub(super) fn skip_string(&mut self) -> Result<(), Syntax> {
        self.at = skip_string(self.bytes, self.at)?;
        Ok(())
    }

    /// Four hex digits.
    pub(super) fn hex(&mut self) -> Result<u32, Syntax> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or(Syntax(self.at))?;
        let mut value = 0;
        for digit in digits {
            let nibble = char::from(*digit).to_digit(16).ok_or(Syntax(self.at))?;
            value = value * 16 + nibble;
        }
        self.at += 4;
        Ok(value)
    }

    /// An escape after its backslash, decoded into the store; whether it
    /// was a lone surrogate (read as U+FFFD).
    pub(super) fn escape(&mut self) -> Result<bool, Syntax> {
        let c = match self.next_byte() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{08}',
            Some(b'f') => '\u{0C}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex()?;
                let pair = (0xD800..0xDC00).contains(&unit)
                    && self.bytes.get(self.at..self.at + 2) == Some(b"\\u");
                let low = if pair {
                    let back = self.at;
                    self.at += 2;
                    let low = self.hex()?;
                    if (0xDC00..0xE000).contains(&low) {
                        Some(low)
                    } else {
                        self.at = back;
                        None
                    }
                } else {
                    None
                };
                let code = match low {
                    Some(low) => 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                    None => unit,
                };
                match char::from_u32(code) {
                    Some(c) => c,
                    None => {
                        self.doc.store.push('\u{FFFD}');
                        return Ok(true);
                    }
                }
            }
            _ => return Err(Syntax(self.at.saturating_sub(1))),
        };
        self.doc.store.push(c);
        Ok(false)
    }

    /// A number, checked against the grammar of RFC 8259.
    #[inline]
    pub(super) fn number(&mut self) -> Result<(), Syntax> {
        self.at = number(self.bytes, self.at)?;
        Ok(())
    }

    /// A value at `depth`, checked and skipped without recursion, whatever
    /// its depth (nesting past the bound is a fault of the message); its type.
    pub(super) fn skip(&mut self, depth: usize) -> Result<Kind, Syntax> {
        let mut open = std::mem::take(&mut self.open);
        open.clear();
        let mut too_deep = false;
        let skipped = Skip {
            bytes: self.bytes,
            depth,
            max_depth: self.parser.max_depth,
            open: &mut open,
            too_deep: &mut too_deep,
        }
        .value(self.at);
        self.open = open;
        if too_deep {
            self.fault = Some(Fault::TooDeep);
        }
        let (kind, at) = skipped?;
        self.at = at;
        Ok(kind)
    }
}

/// A value being skipped: the text, the value's depth and the bound, the
/// closing bytes of the containers open inside it, and whether it nested
/// past the bound. Its steps are functions of a place that return the
/// next, so that the place stays in a register.
struct Skip<'s> {
    bytes: &'s [u8],
    depth: usize,
    max_depth: usize,
    open: &'s mut Vec<u8>,
    too_deep: &'s mut bool,
}

impl Skip<'_> {
    /// The value at `at` (after whitespace): its type, and where it ends.
    fn value(&mut self, mut at: usize) -> Result<(Kind, usize), Syntax> {
        let bytes = self.bytes;
        let mut kind = None;
        loop {
            at = ws(bytes, at);
            let found = match bytes.get(at) {
                Some(&open @ (b'{' | b'[')) => {
                    if self.depth + self.open.len() > self.max_depth {
                        *self.too_deep = true;
                    }
                    at = ws(bytes, at + 1);
                    // `}` and `]` are two past `{` and `[`.
                    let close = open + 2;
                    let container = if open == b'{' {
                        Kind::Object
                    } else {
                        Kind::Array
                    };
                    if bytes.get(at) == Some(&close) {
                        at += 1;
                        container
                    } else {
                        self.open.push(close);
                        if open == b'{' {
                            at = member_name(bytes, at)?;
                        }
                        kind.get_or_insert(container);
                        continue;
                    }
                }
                Some(b'"') => {
                    at = skip_string(bytes, at + 1)?;
                    Kind::String
                }
                Some(b'-' | b'0'..=b'9') => {
                    at = number(bytes, at)?;
                    Kind::Number
                }
                Some(b't') => {
                    at = literal(bytes, at, b"true")?;
                    Kind::Bool
                }
                Some(b'f') => {
                    at = literal(bytes, at, b"false")?;
                    Kind::Bool
                }
                Some(b'n') => {
                    at = literal(bytes, at, b"null")?;
                    Kind::Null
                }
                _ => return Err(Syntax(at)),
            };
            let kind = *kind.get_or_insert(found);
            // After a value: close what it ends, or go on to the next entry.
            loop {
                let Some(&close) = self.open.last() else {
                    return Ok((kind, at));
                };
                at = ws(bytes, at);
                match bytes.get(at) {
                    Some(b',') => {
                        at += 1;
                        if close == b'}' {
                            at = member_name(bytes, at)?;
                        }
                        break;
                    }
                    Some(&byte) if byte == close => {
                        at += 1;
                        self.open.pop();
                    }
                    _ => return Err(Syntax(at)),
                }
            }
        }
    }
}

/// Past the whitespace at `at`.
#[inline]
fn ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).copied().is_some_and(is_ws) {
        at += 1;
    }
    at
}

/// Past `word` at `at`.
#[inline]
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Result<usize, Syntax> {
    match bytes.get(at..at + word.len()) {
        Some(found) if found == word => Ok(at + word.len()),
        _ => Err(Syntax(at)),
    }
}

/// Past a member's name and its colon, at `at` (after whitespace).
#[inline(always)]
fn member_name(bytes: &[u8], at: usize) -> Result<usize, Syntax> {
    let at = ws(bytes, at);
    if bytes.get(at) != Some(&b'"') {
        return Err(Syntax(at));
    }
    let at = ws(bytes, skip_string(bytes, at + 1)?);
    match bytes.get(at) {
        Some(b':') => Ok(at + 1),
        _ => Err(Syntax(at)),
    }
}

/// Past the string whose opening quote is before `at`, checked: its plain
/// bytes a run of eight at a time, its escapes one by one.
#[inline(always)]
fn skip_string(bytes: &[u8], mut at: usize) -> Result<usize, Syntax> {
    loop {
        while let Some(chunk) = bytes.get(at..at + 8) {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            let word = u64::from_le_bytes(word);
            let found = stops(word);
            if found != 0 {
                let shift = found.trailing_zeros() & !7;
                at += (shift / 8) as usize;
                // The common end, a quote, read from the word in hand.
                if (word >> shift) as u8 == b'"' {
                    return Ok(at + 1);
                }
                break;
            }
            at += 8;
        }
        match bytes.get(at) {
            Some(b'"') => return Ok(at + 1),
            Some(b'\\') => at = escape(bytes, at + 1)?,
            Some(0..0x20) | None => return Err(Syntax(at)),
            Some(_) => at += 1,
        }
    }
}

/// Past the escape whose backslash is before `at`, checked.
#[inline]
fn escape(bytes: &[u8], at: usize) -> Result<usize, Syntax> {
    match bytes.get(at) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 1),
        Some(b'u') => match bytes.get(at + 1..at + 5) {
            Some(digits) if digits.iter().all(u8::is_ascii_hexdigit) => Ok(at + 5),
            _ => Err(Syntax(at + 1)),
        },
        _ => Err(Syntax(at)),
    }
}

/// Past the number at `at`, checked against the grammar of RFC 8259.
#[inline(always)]
fn number(bytes: &[u8], mut at: usize) -> Result<usize, Syntax> {
    let digits = |mut at: usize| {
        let start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start { Err(Syntax(at)) } else { Ok(at) }
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match bytes.get(at) {
        Some(b'0') => at + 1,
        Some(b'1'..=b'9') => digits(at)?,
        _ => return Err(Syntax(at)),
    };
    if bytes.get(at) == Some(&b'.') {
        at = digits(at + 1)?;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        at = digits(at)?;
    }
    Ok(at)
}
