//! Text made safe to persist: AI-13 neutralization and AI-14 byte limits.

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
        _ => Class::Keep,
    }
}

/// Whether a string holds any character AI-13 neutralizes.
pub(crate) fn has_forbidden(text: &str) -> bool {
    text.chars().any(|c| class(c) != Class::Keep)
}

/// Replaces every AI-13 character: line breaks by a space, the rest by U+FFFD.
pub(crate) fn neutralize(text: &str) -> Cow<'_, str> {
    if !has_forbidden(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match class(c) {
                Class::Keep => c,
                Class::LineBreak => ' ',
                Class::Control => '\u{FFFD}',
            })
            .collect(),
    )
}

/// The mark that ends a truncated text: "…" (3 bytes in UTF-8).
const ELLIPSIS: &str = "\u{2026}";

/// Cuts `text` to at most `max_bytes` UTF-8 bytes, ending it with "…", never
/// inside a code point. `max_bytes` is at least the 3 bytes of the mark.
pub(crate) fn truncate(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let mut end = max_bytes.saturating_sub(ELLIPSIS.len());
    while !text.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    let kept = text.get(..end).unwrap_or_default();
    Cow::Owned(format!("{kept}{ELLIPSIS}"))
}

/// Neutralizes, then truncates: the text a store may keep.
/// Returns the result and whether each step changed anything.
pub(crate) fn clean(text: &str, max_bytes: usize) -> (String, bool, bool) {
    let neutral = neutralize(text);
    let neutralized = matches!(neutral, Cow::Owned(_));
    let cut = truncate(&neutral, max_bytes);
    let truncated = matches!(cut, Cow::Owned(_));
    (cut.into_owned(), neutralized, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ai13_class_is_replaced() {
        let all = "a\r\n\t\u{0B}\u{0C}\u{85}\u{2028}\u{2029}b\u{0}\u{1B}\u{7F}\u{80}\u{9F}\u{61C}\u{200E}\u{200F}\u{202A}\u{202E}\u{2066}\u{2069}c";
        assert_eq!(
            neutralize(all),
            "a        b\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}c"
        );
        assert!(matches!(neutralize("plain é 𝄞"), Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_keeps_code_points_whole() {
        // "é" is 2 bytes, "😀" 4: a 16-byte limit leaves 13 bytes before "…".
        assert_eq!(truncate("ééééééééé", 16), "éééééé…");
        assert_eq!(truncate("😀😀😀😀😀", 16), "😀😀😀…");
        assert_eq!(truncate("exactly sixteen!", 16), "exactly sixteen!");
        assert_eq!(truncate("seventeen bytes!!", 16), "seventeen byt…");
    }
}
