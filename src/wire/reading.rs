//! How the clients read an answer, by its head: as one JSON body, as an
//! event stream, or as neither. The way back reads what a client reads and
//! passes on only what it read (WIRE-8): an answer whose head a client
//! could read otherwise than the middleware does is unreadable.
//!
//! The TypeScript SDK reads a body by its media type's essence
//! (`application/json`, `text/event-stream`), decoding UTF-8 whatever the
//! charset says; the Python SDK by whether the lowercased `Content-Type`
//! *begins* with either (so `application/json-rpc` is JSON to it), decoding
//! an event stream in the charset the header names; both undo a
//! `Content-Encoding`. So only those two essences, in UTF-8 and with no
//! encoding, are read; any other media type naming JSON or an event stream,
//! another charset, an encoding, or a `Content-Type` given twice makes the
//! answer unreadable. A media type that names neither is no message to any
//! client (an HTML error page) and goes on as it came.

/// How an answer's body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reading {
    /// One JSON text: a message or a batch.
    Json,
    /// An event stream, each event's data a message or a batch.
    Events,
    /// No message: a client takes none from it.
    Plain,
    /// A client may read messages from it that the middleware cannot.
    Unreadable,
}

/// How an answer with these headers is read.
pub(super) fn reading<N: AsRef<str>, V: AsRef<str>>(headers: &[(N, V)]) -> Reading {
    let named = |wanted: &'static str| {
        headers
            .iter()
            .filter(move |(name, _)| name.as_ref().eq_ignore_ascii_case(wanted))
            .map(|(_, value)| value.as_ref())
    };
    let mut types = named("content-type");
    let reading = match (types.next(), types.next()) {
        (None, _) => Reading::Plain,
        (Some(_), Some(_)) => Reading::Unreadable,
        (Some(value), None) => media(value),
    };
    let encoded = named("content-encoding").any(|value| {
        value.split(',').any(|coding| {
            !coding
                .trim_matches([' ', '\t'])
                .eq_ignore_ascii_case("identity")
        })
    });
    match reading {
        Reading::Json | Reading::Events if encoded => Reading::Unreadable,
        reading => reading,
    }
}

/// How a body of this one `Content-Type` is read.
fn media(value: &str) -> Reading {
    let lower = value.to_ascii_lowercase();
    let mut parts = lower.split(';');
    let essence = parts.next().unwrap_or_default().trim_matches([' ', '\t']);
    let reading = match essence {
        "application/json" => Reading::Json,
        "text/event-stream" => Reading::Events,
        _ if lower.contains("json") || lower.contains("event-stream") => {
            return Reading::Unreadable;
        }
        _ => return Reading::Plain,
    };
    for parameter in parts {
        let Some((name, charset)) = parameter.split_once('=') else {
            continue;
        };
        let charset = charset.trim_matches([' ', '\t']);
        let charset = charset
            .strip_prefix('"')
            .and_then(|quoted| quoted.strip_suffix('"'))
            .unwrap_or(charset);
        if name.trim_matches([' ', '\t']) == "charset" && charset != "utf-8" {
            return Reading::Unreadable;
        }
    }
    reading
}

/// The whitespace JSON allows around a value.
pub(super) fn is_json_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Where the first byte past JSON whitespace is, from `from`.
pub(super) fn past_space(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len()).find(|&at| bytes.get(at).is_some_and(|&byte| !is_json_space(byte)))
}

/// Whether `bytes`, past whitespace, begin as a JSON-RPC answer does: an object or a batch.
pub(super) fn begins_answer(bytes: &[u8]) -> bool {
    matches!(
        past_space(bytes, 0).and_then(|at| bytes.get(at)),
        Some(b'{' | b'[')
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn read(pairs: &[(&str, &str)]) -> Reading {
        reading(pairs)
    }

    #[test]
    fn the_two_media_types_in_utf8_are_read() {
        for (value, expected) in [
            ("application/json", Reading::Json),
            ("Application/JSON; charset=UTF-8", Reading::Json),
            ("application/json;", Reading::Json),
            ("text/event-stream", Reading::Events),
            ("text/event-stream; charset=\"utf-8\"", Reading::Events),
            ("text/html", Reading::Plain),
            ("text/plain; charset=latin1", Reading::Plain),
        ] {
            assert_eq!(read(&[("Content-Type", value)]), expected, "{value}");
        }
        assert_eq!(read(&[]), Reading::Plain);
        assert_eq!(
            read(&[
                ("content-type", "application/json"),
                ("content-encoding", "identity")
            ]),
            Reading::Json
        );
        assert_eq!(
            read(&[("content-type", "text/html"), ("content-encoding", "gzip")]),
            Reading::Plain
        );
    }

    #[test]
    fn what_a_client_may_read_otherwise_is_unreadable() {
        for value in [
            "application/json-rpc",
            "application/json; charset=utf-16",
            "application/json; charset=\"latin1\"",
            "text/event-stream; charset=utf-7",
            "application/vnd.api+json",
            "text/event-stream2",
            "application/json, text/html",
        ] {
            assert_eq!(
                read(&[("content-type", value)]),
                Reading::Unreadable,
                "{value}"
            );
        }
        assert_eq!(
            read(&[
                ("content-type", "application/json"),
                ("Content-Type", "application/json")
            ]),
            Reading::Unreadable
        );
        assert_eq!(
            read(&[
                ("content-type", "application/json"),
                ("content-encoding", "gzip")
            ]),
            Reading::Unreadable
        );
        assert_eq!(
            read(&[
                ("content-type", "text/event-stream"),
                ("content-encoding", "identity, br")
            ]),
            Reading::Unreadable
        );
    }
}
