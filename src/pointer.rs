//! RFC 6901 JSON Pointers for diagnostics and changes.

use crate::text;

/// How many bytes of a member name a pointer keeps: a hostile, huge or
/// control-laden key must not turn a diagnostic into a log-forging vector.
pub(crate) const MAX_SEGMENT_BYTES: usize = 128;

/// `base` followed by one more reference token, escaped (`~` → `~0`,
/// `/` → `~1`), with AI-13 characters neutralized and long names cut.
pub(crate) fn join(base: &str, segment: &str) -> String {
    let safe = text::clean(segment, MAX_SEGMENT_BYTES).text;
    let mut out = String::with_capacity(base.len() + safe.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in safe.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            _ => out.push(c),
        }
    }
    out
}

/// Whether one pointer is the other or lies inside it (either way round).
pub(crate) fn overlaps(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long.strip_prefix(short)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_neutralizes() {
        assert_eq!(join("/params", "a/b~c"), "/params/a~1b~0c");
        assert_eq!(join("", "x\ny"), "/x y");
    }

    #[test]
    fn overlap_is_by_whole_tokens() {
        assert!(overlaps("/a/b", "/a/b/c"));
        assert!(overlaps("/a/b/c", "/a/b"));
        assert!(!overlaps("/a/b", "/a/bc"));
    }
}
