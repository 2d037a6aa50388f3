//! What a body's HTTP headers say about how a server will decode it
//! (WIRE-2). The filter reads UTF-8 JSON; a server that honours a
//! `charset`, a `Content-Encoding` or another `Content-Type` would read other
//! text from the same bytes (a body checked as one harmless string can
//! decode, as UTF-7, into a whole envelope). So a body whose headers say
//! anything but plain UTF-8 JSON is refused before it is read.

use crate::diagnostics::Code;

/// Why the headers of a body were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unread {
    /// No `Content-Type`, more than one, one that does not parse, or a media
    /// type other than `application/json`.
    MediaType,
    /// A `charset` other than `utf-8`, or more than one.
    Charset,
    /// A `Content-Encoding` other than `identity`.
    Encoding,
}

impl Unread {
    /// The refusal's code.
    pub(super) fn code(self) -> Code {
        match self {
            Unread::MediaType => Code::UnsupportedMediaType,
            Unread::Charset => Code::UnsupportedCharset,
            Unread::Encoding => Code::UnsupportedEncoding,
        }
    }

    /// What the refusal says, naming the header, never its value.
    pub(super) fn message(self) -> &'static str {
        match self {
            Unread::MediaType => "the body must be sent with one `Content-Type: application/json`",
            Unread::Charset => "the body's `Content-Type` may name no charset but utf-8",
            Unread::Encoding => "the body must be sent without a `Content-Encoding`",
        }
    }
}

/// Checks a body's headers, given as (name, value) pairs with names in any
/// case and a header sent twice as two pairs.
pub(super) fn check(headers: &[(String, String)]) -> Result<(), Unread> {
    let named = |wanted: &'static str| {
        headers
            .iter()
            .filter(move |(name, _)| name.eq_ignore_ascii_case(wanted))
            .map(|(_, value)| value.as_str())
    };
    for value in named("content-encoding") {
        let identity = value
            .split(',')
            .all(|coding| coding.trim_matches(OWS).eq_ignore_ascii_case("identity"));
        if !identity {
            return Err(Unread::Encoding);
        }
    }
    let mut types = named("content-type");
    match (types.next(), types.next()) {
        (Some(value), None) => media_type(value),
        _ => Err(Unread::MediaType),
    }
}

/// Optional white space (RFC 9110 5.6.3).
const OWS: &[char] = &[' ', '\t'];

/// Checks one `Content-Type` value (RFC 9110 8.3.1): `application/json`,
/// its parameters well formed, a `charset` at most once and `utf-8`.
fn media_type(value: &str) -> Result<(), Unread> {
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or_default().trim_matches(OWS);
    let (kind, subtype) = essence.split_once('/').ok_or(Unread::MediaType)?;
    if !kind.eq_ignore_ascii_case("application") || !subtype.eq_ignore_ascii_case("json") {
        return Err(Unread::MediaType);
    }
    let mut charset = false;
    for parameter in parts {
        let parameter = parameter.trim_matches(OWS);
        if parameter.is_empty() {
            continue;
        }
        let (name, raw) = parameter.split_once('=').ok_or(Unread::MediaType)?;
        if !is_token(name) {
            return Err(Unread::MediaType);
        }
        let value = parameter_value(raw).ok_or(Unread::MediaType)?;
        if name.eq_ignore_ascii_case("charset") {
            if charset || !value.eq_ignore_ascii_case("utf-8") {
                return Err(Unread::Charset);
            }
            charset = true;
        }
    }
    Ok(())
}

/// A parameter's value: a token, or a quoted string with its escapes read.
fn parameter_value(raw: &str) -> Option<String> {
    let Some(quoted) = raw.strip_prefix('"') else {
        return is_token(raw).then(|| raw.to_owned());
    };
    let mut value = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return chars.as_str().is_empty().then_some(value),
            '\\' => value.push(chars.next().filter(is_quoted_text)?),
            c if is_quoted_text(&c) => value.push(c),
            _ => return None,
        }
    }
    None
}

/// A token (RFC 9110 5.6.2): one or more of its characters.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A character a quoted string may hold (qdtext or a quoted pair's):
/// visible ASCII, space and tab. Not `obs-text`: no header of a JSON body
/// needs it, and what is not ASCII is read differently by different stacks.
fn is_quoted_text(c: &char) -> bool {
    matches!(c, '\t' | ' '..='~')
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    fn checked(pairs: &[(&str, &str)]) -> Result<(), Unread> {
        check(&headers(pairs))
    }

    #[test]
    fn json_in_utf8_is_read() {
        for value in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            "application/json;charset=\"UTF-8\"",
            "application/json ; profile=x;charset=\"utf\\-8\"",
            "application/json;",
        ] {
            assert_eq!(checked(&[("Content-Type", value)]), Ok(()), "{value}");
        }
        assert_eq!(
            checked(&[
                ("content-type", "application/json"),
                ("content-encoding", "identity"),
                ("Content-Encoding", " Identity , identity"),
            ]),
            Ok(())
        );
    }

    #[test]
    fn another_charset_is_refused() {
        for value in [
            "application/json; charset=utf-7",
            "application/json; charset=utf-16",
            "application/json; charset=utf8",
            "application/json; charset=\"utf-7\"",
            "application/json; charset=utf-8; charset=utf-7",
            "application/json; charset=utf-8; Charset=utf-8",
        ] {
            assert_eq!(
                checked(&[("content-type", value)]),
                Err(Unread::Charset),
                "{value}"
            );
        }
    }

    #[test]
    fn another_media_type_is_refused() {
        for value in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/json-seq",
            "application/vnd.api+json",
            "application/json; charset",
            "application/json; charset=\"utf-8",
            "application/json; =utf-8",
            "application/json; charset=utf 8",
            "application/json; charset=\"utf-8\"x",
            "application/json; charset=\"\u{e9}\"",
            "json",
            "",
        ] {
            assert_eq!(
                checked(&[("content-type", value)]),
                Err(Unread::MediaType),
                "{value}"
            );
        }
        assert_eq!(checked(&[]), Err(Unread::MediaType));
        assert_eq!(
            checked(&[
                ("content-type", "application/json"),
                ("content-type", "application/json")
            ]),
            Err(Unread::MediaType)
        );
    }

    #[test]
    fn an_encoding_is_refused() {
        for value in ["gzip", "deflate", "br", "identity, gzip", ""] {
            assert_eq!(
                checked(&[
                    ("content-type", "application/json"),
                    ("content-encoding", value)
                ]),
                Err(Unread::Encoding),
                "{value}"
            );
        }
    }
}
