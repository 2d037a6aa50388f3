//! A message's `params.arguments` left out of its audit line (WIRE-9, the
//! filter's `auditArguments`): each `arguments` member of `params` digested
//! (the SHA-256 and length of its text) or dropped, in the message's text
//! as it goes on, every other byte of it as it came. Done when a line is
//! made, never when a body is filtered: where no one reads the lines,
//! nothing is hashed.

use sha2::{Digest, Sha256};

use super::options::AuditArguments;
use super::parse::{Keys, Parser};

/// `message` (a message's JSON text as it goes on) with the `arguments`
/// members of its `params` left out as `how` says; `None` when it keeps
/// them, or `params` is no object holding one.
///
/// Every `arguments` member is left out, a duplicated one too (which goes on
/// where no rule reads it: WIRE-3), and its name is read as a server reads
/// it, escapes and all.
pub(super) fn left_out(message: &str, how: AuditArguments) -> Option<String> {
    if how == AuditArguments::Keep {
        return None;
    }
    let keys = Keys {
        invocation: Vec::new(),
        ui: Vec::new(),
    };
    // The message went on: it is JSON within the filter's bounds, so no
    // depth is checked again.
    let parser = Parser::new(&keys, usize::MAX, 0);
    let params = parser.member(message, "params").ok()??;
    let object = message.get(params.start..params.end)?;
    // Each member of `params`: whether it is `arguments`, where it begins
    // (its name) and where its value stands.
    let mut members = Vec::new();
    let is_object = parser
        .each_member(object, |name, begins, value| {
            members.push((name == "arguments", begins, value));
        })
        .ok()?;
    if !is_object || !members.iter().any(|(arguments, ..)| *arguments) {
        return None;
    }
    let mut out = String::with_capacity(message.len());
    out.push_str(message.get(..params.start)?);
    // `{` and the space before the first member.
    out.push_str(object.get(..members.first()?.1)?);
    // Where the member before stands, its value's end: what separates a
    // member from it (a comma, spaces) follows it.
    let mut before: Option<usize> = None;
    let mut written = false;
    for (arguments, begins, value) in &members {
        if !(*arguments && how == AuditArguments::Drop) {
            if let (Some(end), true) = (before, written) {
                out.push_str(object.get(end..*begins)?);
            }
            if *arguments {
                out.push_str(object.get(*begins..value.start)?);
                digest(object.get(value.start..value.end)?, &mut out);
            } else {
                out.push_str(object.get(*begins..value.end)?);
            }
            written = true;
        }
        before = Some(value.end);
    }
    // The space after the last member, and `}`; then the rest of the message.
    out.push_str(object.get(before?..)?);
    out.push_str(message.get(params.end..)?);
    Some(out)
}

/// Writes what stands for `text` (the JSON text of a value) in a line:
/// `{"sha256":"<its SHA-256, lowercase hex>","bytes":<its length in bytes>}`.
fn digest(text: &str, out: &mut String) {
    out.push_str("{\"sha256\":\"");
    sha256_hex(text.as_bytes(), out);
    out.push_str("\",\"bytes\":");
    out.push_str(&text.len().to_string());
    out.push('}');
}

/// Writes the SHA-256 of `bytes`, in lowercase hex.
pub(super) fn sha256_hex(bytes: &[u8], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for byte in Sha256::digest(bytes) {
        for nibble in [byte >> 4, byte & 15] {
            out.push(char::from(
                HEX.get(usize::from(nibble)).copied().unwrap_or(b'0'),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// SHA-256 of the empty string and of `{}`, as FIPS 180-4 and `sha256sum` give them.
    #[test]
    fn a_digest_is_sha256_in_lowercase_hex_and_the_length_in_bytes() {
        let digested = |text: &str| {
            let mut out = String::new();
            digest(text, &mut out);
            out
        };
        assert_eq!(
            digested(""),
            r#"{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","bytes":0}"#
        );
        assert_eq!(
            digested("{}"),
            r#"{"sha256":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","bytes":2}"#
        );
        assert_eq!(
            digested(r#"{"é":1}"#),
            format!(
                r#"{{"sha256":"{}","bytes":8}}"#,
                "ddcfcf4765da163969972bb20660092ca2787782d9352d1d8a38e93f70acf3bf"
            )
        );
    }

    /// Each `arguments` member goes, with the comma beside it, wherever it
    /// stands among the members of `params`; everything else stays as it came.
    #[test]
    fn dropping_takes_each_arguments_member_with_its_comma() {
        let dropped = |message: &str| left_out(message, AuditArguments::Drop);
        for (message, expected) in [
            (r#"{"params":{"arguments":{"a":1}}}"#, r#"{"params":{}}"#),
            (
                r#"{"params": { "arguments" : [1, 2] , "name": "t" }, "id": 1}"#,
                r#"{"params": { "name": "t" }, "id": 1}"#,
            ),
            (
                r#"{"params":{"name":"t",
  "arguments":{"a":1}
},"id":1}"#,
                r#"{"params":{"name":"t"
},"id":1}"#,
            ),
            (
                r#"{"params":{"arguments":1,"name":"t","argu\u006dents":2,"_meta":{}}}"#,
                r#"{"params":{"name":"t","_meta":{}}}"#,
            ),
        ] {
            assert_eq!(dropped(message).as_deref(), Some(expected), "{message}");
        }
        for none in [
            r#"{"params":{"name":"t"}}"#,
            r#"{"params":[{"arguments":1}]}"#,
            r#"{"arguments":{},"params":{"_meta":{"arguments":1}}}"#,
            r#"{"id":1,"method":"ping"}"#,
        ] {
            assert_eq!(dropped(none), None, "{none}");
        }
        assert_eq!(
            left_out(r#"{"params":{"arguments":{}}}"#, AuditArguments::Keep),
            None
        );
    }

    #[test]
    fn digesting_replaces_each_arguments_value_alone() {
        assert_eq!(
            left_out(
                r#"{"params":{"arguments": {},"name":"t","arguments":""}}"#,
                AuditArguments::Digest
            )
            .as_deref(),
            Some(concat!(
                r#"{"params":{"arguments": {"sha256":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","bytes":2},"#,
                r#""name":"t","arguments":{"sha256":"12ae32cb1ec02d01eda3581b127c1fee3b0dc53572ed6baf239721a03d82e126","bytes":2}}}"#
            ))
        );
    }
}
