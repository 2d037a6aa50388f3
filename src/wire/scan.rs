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
/// (nothing for no bytes), found eight bytes at a time.
pub(super) fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut at = 0;
        let end = loop {
            let Some(word) = rest.get(at..at + 8).and_then(|chunk| chunk.try_into().ok()) else {
                break rest
                    .get(at..)?
                    .iter()
                    .position(|byte| *byte == b'\n')
                    .map(|i| at + i);
            };
            let feeds = u64::from_le_bytes(word) ^ (u64::from(b'\n') * LOW);
            let found = feeds.wrapping_sub(LOW) & !feeds & HIGH;
            if found != 0 {
                break Some(at + (found.trailing_zeros() / 8) as usize);
            }
            at += 8;
        };
        let (line, after) = rest.split_at(end.map_or(rest.len(), |end| end + 1));
        rest = after;
        Some(line)
    })
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

    #[inline]
    pub(super) fn ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.at += 1;
        }
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
    pub(super) fn skip_string(&mut self) -> Result<(), Syntax> {
        loop {
            match self.skip_plain()? {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => {
                    self.at += 1;
                    self.check_escape()?;
                }
            }
        }
    }

    /// An escape after its backslash, checked.
    pub(super) fn check_escape(&mut self) -> Result<(), Syntax> {
        match self.next_byte() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(()),
            Some(b'u') => self.hex().map(|_| ()),
            _ => Err(Syntax(self.at.saturating_sub(1))),
        }
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
    pub(super) fn number(&mut self) -> Result<(), Syntax> {
        let digits = |reader: &mut Self| {
            let start = reader.at;
            while reader.peek().is_some_and(|b| b.is_ascii_digit()) {
                reader.at += 1;
            }
            if reader.at == start {
                Err(Syntax(reader.at))
            } else {
                Ok(())
            }
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => digits(self)?,
            _ => return Err(Syntax(self.at)),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            digits(self)?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            digits(self)?;
        }
        Ok(())
    }

    /// A value at `depth`, checked and skipped without recursion, whatever
    /// its depth (nesting past the bound is a fault of the message); its type.
    pub(super) fn skip(&mut self, depth: usize) -> Result<Kind, Syntax> {
        self.open.clear();
        let mut kind = None;
        loop {
            self.ws();
            let found = match self.next_byte() {
                Some(open @ (b'{' | b'[')) => {
                    if depth + self.open.len() > self.parser.max_depth {
                        self.fault = Some(Fault::TooDeep);
                    }
                    self.ws();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.at += 1;
                    } else {
                        self.open.push(close);
                        if open == b'{' {
                            self.member_name()?;
                        }
                        kind.get_or_insert(if open == b'{' {
                            Kind::Object
                        } else {
                            Kind::Array
                        });
                        continue;
                    }
                    if open == b'{' {
                        Kind::Object
                    } else {
                        Kind::Array
                    }
                }
                Some(b'"') => {
                    self.skip_string()?;
                    Kind::String
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.at -= 1;
                    self.number()?;
                    Kind::Number
                }
                Some(b't') => {
                    self.at -= 1;
                    self.literal(b"true", Raw::Null)?;
                    Kind::Bool
                }
                Some(b'f') => {
                    self.at -= 1;
                    self.literal(b"false", Raw::Null)?;
                    Kind::Bool
                }
                Some(b'n') => {
                    self.at -= 1;
                    self.literal(b"null", Raw::Null)?;
                    Kind::Null
                }
                _ => return Err(Syntax(self.at.saturating_sub(1))),
            };
            let kind = *kind.get_or_insert(found);
            // After a value: close what it ends, or go on to the next entry.
            loop {
                let Some(&close) = self.open.last() else {
                    return Ok(kind);
                };
                self.ws();
                match self.next_byte() {
                    Some(b',') => {
                        if close == b'}' {
                            self.member_name()?;
                        }
                        break;
                    }
                    Some(byte) if byte == close => {
                        self.open.pop();
                    }
                    _ => return Err(Syntax(self.at.saturating_sub(1))),
                }
            }
        }
    }

    /// A member's name and its colon, checked and skipped.
    pub(super) fn member_name(&mut self) -> Result<(), Syntax> {
        self.ws();
        if self.next_byte() != Some(b'"') {
            return Err(Syntax(self.at.saturating_sub(1)));
        }
        self.skip_string()?;
        self.expect(b':')
    }
}
