//! Text made safe to persist: AI-13 neutralization, TXT-1 invisible
//! characters, and AI-14 byte limits.

use std::borrow::Cow;

/// What AI-13 makes of one character.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Harmless: kept.
    Keep,
    /// Breaks a line (CR, LF, TAB, VT, FF, NEL, U+2028, U+2029): becomes a space.
    LineBreak,
    /// Any other control or bidi control of AI-13: becomes U+FFFD.
    Control,
    /// An invisible character that carries no meaning (TXT-1): becomes U+FFFD.
    Invisible,
}

fn class(c: char) -> Class {
    match c {
        '\r' | '\n' | '\t' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => {
            Class::LineBreak
        }
        '\u{00}'..='\u{1F}'
        | '\u{7F}'..='\u{9F}'
        | '\u{061C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}' => Class::Control,
        // Zero width space, word joiner, the invisible mathematical
        // operators, the byte order mark, the Mongolian vowel separator, and
        // the tag characters. Not ZWJ (U+200D) and ZWNJ (U+200C): scripts
        // and emoji sequences need them.
        '\u{200B}'
        | '\u{2060}'..='\u{2064}'
        | '\u{FEFF}'
        | '\u{180E}'
        | '\u{E0000}'..='\u{E007F}' => Class::Invisible,
        _ => Class::Keep,
    }
}

/// What AI-13 and TXT-1 make of one character: line breaks become a space,
/// other controls and invisible characters U+FFFD, the rest stays.
fn neutral(c: char) -> char {
    match class(c) {
        Class::Keep => c,
        Class::LineBreak => ' ',
        Class::Control | Class::Invisible => '\u{FFFD}',
    }
}

/// Whether a character may stand raw in a log line: none of AI-13 or
/// TXT-1 (no line break of any kind, no other control, no bidi control, no
/// invisible character).
pub(crate) fn is_inert(c: char) -> bool {
    class(c) == Class::Keep
}

/// Whether `text` is kept as it is: within `max_bytes`, and holding no
/// character AI-13 neutralizes.
#[inline]
pub(crate) fn is_plain(text: &str, max_bytes: usize) -> bool {
    text.len() <= max_bytes && !has_forbidden(text)
}

/// Whether a string holds any character AI-13 neutralizes. Printable ASCII
/// is settled eight bytes at a time; only a string with another byte has
/// its characters decoded.
pub(crate) fn has_forbidden(text: &str) -> bool {
    !is_printable_ascii(text.as_bytes()) && text.chars().any(|c| class(c) != Class::Keep)
}

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each of eight bytes that is under 0x20 or over 0x7E
/// (all of them for a chunk shorter than eight). A borrow of the
/// subtraction starts only at a byte under 0x20 and moves up, so the lowest
/// byte marked is always one that is outside.
fn outside(chunk: &[u8]) -> u64 {
    let word = <[u8; 8]>::try_from(chunk).map_or(HIGH, u64::from_le_bytes);
    ((word.wrapping_sub(0x20 * LOW) & !word) | word | ((word & !HIGH) + LOW)) & HIGH
}

/// Whether every byte is printable ASCII (0x20..=0x7E): all chunks at once,
/// with no branch inside the loop.
pub(crate) fn is_printable_ascii(bytes: &[u8]) -> bool {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    chunks.fold(0, |found, chunk| found | outside(chunk)) == 0
        && tail.iter().all(|b| (0x20..0x7F).contains(b))
}

/// How many bytes `bytes` starts with that are printable ASCII, found eight
/// at a time.
fn printable_prefix(bytes: &[u8]) -> usize {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    let mut at = 0;
    for chunk in chunks {
        let found = outside(chunk);
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + tail
        .iter()
        .take_while(|b| (0x20..0x7F).contains(*b))
        .count()
}

/// Replaces every AI-13 character, at any length.
pub(crate) fn neutralize(text: &str) -> Cow<'_, str> {
    if has_forbidden(text) {
        Cow::Owned(text.chars().map(neutral).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` shown as text to a person (AI-16): every character AI-13 or
/// TXT-1 replaces is written as an escape instead, so that nothing in it
/// acts on a terminal or disguises what it says. For a terminal (`json`
/// false) the escape is `\u{1b}`, the code point in hex, and each backslash
/// is doubled so that no escape can be forged. Inside JSON text (`json`)
/// it is JSON's own `\u001b` (a surrogate pair past U+FFFF), which keeps
/// the text the same JSON: JSON text holds those characters only inside its
/// strings, but for the whitespace between its tokens (space, tab, line
/// feed, carriage return), which stays as it is. (The npm package's `probe`
/// prints what servers send through it.)
pub fn visible(text: &str, json: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' if !json => out.push_str("\\\\"),
            '\t' | '\n' | '\r' if json => out.push(c),
            c if class(c) == Class::Keep => out.push(c),
            c if json => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out
}

/// The mark that ends a truncated text: "…" (3 bytes in UTF-8).
const ELLIPSIS: &str = "\u{2026}";

/// What a store may keep of one string, and what it took.
pub(crate) struct Clean<'a> {
    /// The text: neutralized, at most `max_bytes` long; borrowed when
    /// nothing changed.
    pub text: Cow<'a, str>,
    /// A character AI-13 replaces stands in the part that was kept.
    pub neutralized: bool,
    /// An invisible character TXT-1 replaces stands in the part that was kept.
    pub invisible: bool,
    /// The text was cut and ends with "…".
    pub truncated: bool,
}

/// Which rules replaced a character so far.
#[derive(Clone, Copy, Default)]
struct Found {
    neutralized: bool,
    invisible: bool,
}

impl Found {
    fn with(self, c: char) -> Self {
        match class(c) {
            Class::Keep => self,
            Class::Invisible => Found {
                invisible: true,
                ..self
            },
            Class::LineBreak | Class::Control => Found {
                neutralized: true,
                ..self
            },
        }
    }
}

/// Neutralizes `text` (AI-13, TXT-1) and cuts it to `max_bytes` UTF-8
/// bytes, never inside a code point, ending a cut text with "…" (AI-14).
/// Only what is kept counts: a control character in the part cut away is
/// not reported as neutralized. So the result depends on the first
/// `max_bytes + 1` characters alone, and a caller may hand over no more of
/// a hostile string. `max_bytes` is at least 16.
pub(crate) fn clean(text: &str, max_bytes: usize) -> Clean<'_> {
    if is_plain(text, max_bytes) {
        return Clean {
            text: Cow::Borrowed(text),
            neutralized: false,
            invisible: false,
            truncated: false,
        };
    }
    let budget = max_bytes.saturating_sub(ELLIPSIS.len());
    let mut kept = String::with_capacity(text.len().min(max_bytes + 4));
    let mut found = Found::default();
    // How long `kept` was, and what had been replaced, when it last fit the
    // budget: where a text too long is cut.
    let mut fit = (0, found);
    let mut rest = text;
    // Neutralized text goes into `kept` until all of it is there or it is
    // longer than `max_bytes`: printable ASCII a run at a time, the rest a
    // character at a time.
    while kept.len() <= max_bytes {
        let run = printable_prefix(rest.as_bytes()).min(max_bytes + 1 - kept.len());
        if let Some((ascii, after)) = rest.split_at_checked(run).filter(|(a, _)| !a.is_empty()) {
            if kept.len() <= budget {
                fit = ((kept.len() + run).min(budget), found);
            }
            kept.push_str(ascii);
            rest = after;
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        kept.push(neutral(c));
        found = found.with(c);
        rest = chars.as_str();
        if kept.len() <= budget {
            fit = (kept.len(), found);
        }
    }
    let truncated = kept.len() > max_bytes;
    if truncated {
        kept.truncate(fit.0);
        kept.push_str(ELLIPSIS);
        found = fit.1;
    }
    Clean {
        text: Cow::Owned(kept),
        neutralized: found.neutralized,
        invisible: found.invisible,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn visible_text_escapes_what_would_act_or_hide() {
        let text = "a\u{1b}[2J\\ \u{9b}31m\u{202e}\u{2028}\u{E0041}é\u{200D}\n";
        assert_eq!(
            visible(text, false),
            "a\\u{1b}[2J\\\\ \\u{9b}31m\\u{202e}\\u{2028}\\u{e0041}é\u{200D}\\u{a}"
        );
        assert_eq!(
            visible(text, true),
            "a\\u001b[2J\\ \\u009b31m\\u202e\\u2028\\udb40\\udc41é\u{200D}\n"
        );
        // Pretty JSON stays the same JSON.
        let document = "{\n  \"a\": \"\u{7f}\\n\\u001b\"\n}";
        let shown = visible(document, true);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            serde_json::from_str::<serde_json::Value>(document).unwrap()
        );
    }

    #[test]
    fn every_ai13_class_is_replaced() {
        let all = "a\r\n\t\u{0B}\u{0C}\u{85}\u{2028}\u{2029}b\u{0}\u{1B}\u{7F}\u{80}\u{9F}\u{61C}\u{200E}\u{200F}\u{202A}\u{202E}\u{2066}\u{2069}c";
        assert_eq!(
            neutralize(all),
            "a        b\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}c"
        );
        assert!(matches!(neutralize("plain é 𝄞"), Cow::Borrowed(_)));
        assert!(!has_forbidden("plain é 𝄞 \u{FFFD}"));
        assert!(has_forbidden("é\u{202E}"));
        for byte in 0..=255u8 {
            for len in [3, 8, 18, 41] {
                for at in 0..len {
                    let mut bytes =
                        b" ~abcdefghijklmn~ 0123456789ABCDEFGHIJKLMNOPQRSTUVW~"[..len].to_vec();
                    bytes[at] = byte;
                    let printable = (0x20..0x7F).contains(&byte);
                    assert_eq!(
                        printable_prefix(&bytes),
                        if printable { len } else { at },
                        "byte {byte:#x} at {at} of {len}"
                    );
                    assert_eq!(is_printable_ascii(&bytes), printable);
                }
            }
        }
        assert!(matches!(clean("plain é", 16).text, Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_keeps_code_points_whole() {
        // "é" is 2 bytes, "😀" 4: a 16-byte limit leaves 13 bytes before "…".
        let cut = |text: &str| clean(text, 16).text.into_owned();
        assert_eq!(cut("ééééééééé"), "éééééé…");
        assert_eq!(cut("😀😀😀😀😀"), "😀😀😀…");
        assert_eq!(cut("exactly sixteen!"), "exactly sixteen!");
        assert_eq!(cut("seventeen bytes!!"), "seventeen byt…");
    }

    #[test]
    fn only_what_is_kept_counts_as_neutralized() {
        let tail = clean("0123456789abcdef\r\n", 16);
        assert_eq!(
            (&*tail.text, tail.neutralized, tail.truncated),
            ("0123456789abc…", false, true)
        );
        let head = clean("\r\n23456789abcdefg", 16);
        assert_eq!(
            (&*head.text, head.neutralized, head.truncated),
            ("  23456789abc…", true, true)
        );
        // Neutralizing can make a text too long: six NULs are 18 bytes as U+FFFD.
        let grown = clean("\0\0\0\0\0\0", 16);
        assert_eq!(
            (
                grown.text.chars().count(),
                grown.neutralized,
                grown.truncated
            ),
            (5, true, true)
        );
    }

    /// `clean` against the plainest reading of AI-13 and AI-14: neutralize
    /// every character, and if that is too long keep the longest prefix of
    /// whole characters that leaves room for "…".
    #[test]
    fn clean_agrees_with_the_plain_reading() {
        // Every piece below that changes is an AI-13 character.
        let reference = |text: &str, max: usize| {
            let all: Vec<(char, char)> = text.chars().map(|c| (c, neutral(c))).collect();
            if all.iter().map(|(_, n)| n.len_utf8()).sum::<usize>() <= max {
                let kept: String = all.iter().map(|(_, n)| n).collect();
                return (kept, all.iter().any(|(c, n)| c != n), false);
            }
            let (mut kept, mut neutralized) = (String::new(), false);
            for (c, n) in all {
                if kept.len() + n.len_utf8() > max - ELLIPSIS.len() {
                    break;
                }
                kept.push(n);
                neutralized |= c != n;
            }
            (kept + ELLIPSIS, neutralized, true)
        };
        let pieces = [
            "a",
            "bcdefghij",
            "\n",
            "\u{0}",
            "é",
            "😀",
            "\u{202E}",
            "\u{2028}",
            " ",
        ];
        // Every string of up to five pieces from a small counter, at several limits.
        for mut n in 0..pieces.len().pow(5) {
            let mut text = String::new();
            while n > 0 {
                text.push_str(pieces[n % pieces.len()]);
                n /= pieces.len();
            }
            for max in [16, 17, 18, 19, 20, 24, 31] {
                let got = clean(&text, max);
                assert_eq!(
                    (got.text.into_owned(), got.neutralized, got.truncated),
                    reference(&text, max),
                    "{text:?} at {max}"
                );
            }
        }
    }
}
