//! JSON-RPC ids as the clients match an answer to the request it answers
//! (WIRE-7). The echo writes into a result the `turnId` of the request a
//! client will take it for, so an id is matched as loosely as any client
//! matches it:
//!
//! - the TypeScript SDK (1.x and 2.x) looks its pending requests up by
//!   `Number(response.id)`: `1`, `1.0`, `"1"`, `" 1 "`, `"0x1"` and `"1e0"`
//!   all answer its request `1`;
//! - the Python SDK (2.x) by `int(id)` for a string: `"1"`, `"+1"`, `"1_0"`
//!   (ten) answer `1` or `10`;
//! - and both by the id's value: `"r\u0031"` is `"r1"`.
//!
//! An id is known under each key a client may read it by ([`IdKey`]); two
//! ids match when they share one. An answer whose keys reach requests that
//! carried different `turnId`s echoes none, and so does one that reaches
//! none: whatever a client takes it for, it never carries another request's
//! `turnId`, nor the server's own envelope.

use crate::json::{Number, Slot};

/// One way a client may read an id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum IdKey {
    /// Its value: a string's text, or a number as written.
    String(String),
    Number(String),
    /// As JavaScript's `Number()` reads it: the bits of the double (`-0` as `0`).
    Double(u64),
    /// As Python's `int()` reads it: the integer, in decimal without a sign
    /// for zero or leading zeros.
    Integer(String),
}

/// The keys of an id: none when it is neither a string nor a number.
pub(super) fn keys(id: &Slot<'_>) -> Vec<IdKey> {
    let mut keys = Vec::with_capacity(3);
    match id {
        Slot::String(text) => {
            let text = text.text;
            keys.push(IdKey::String(text.to_owned()));
            keys.extend(js_number(text).map(double));
            keys.extend(python_int(text).map(IdKey::Integer));
        }
        Slot::Number(Number::Wire(text)) => {
            keys.push(IdKey::Number((*text).to_owned()));
            keys.extend(text.parse::<f64>().ok().map(double));
            keys.extend(
                python_int(text)
                    .filter(|_| is_json_integer(text))
                    .map(IdKey::Integer),
            );
        }
        Slot::Number(number) => {
            keys.extend(number.value().map(double));
        }
        _ => {}
    }
    keys
}

/// A double as a key: `-0` is `0`, `NaN` none (no two NaNs are one id).
fn double(value: f64) -> IdKey {
    IdKey::Double(if value == 0.0 { 0 } else { value.to_bits() })
}

/// Whether a JSON number is written as an integer: no fraction, no exponent.
fn is_json_integer(text: &str) -> bool {
    !text.contains(['.', 'e', 'E'])
}

/// White space as JavaScript's `Number()` trims it (WhiteSpace and
/// LineTerminator of ECMA-262).
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | ' '
            | '\u{a0}'
            | '\u{feff}'
            | '\u{2028}'
            | '\u{2029}'
    ) || (c.is_whitespace() && c > '\u{7f}')
}

/// A string as JavaScript's `Number()` reads it (ECMA-262 StringToNumber):
/// decimal with an optional sign, fraction and exponent, `Infinity`, or
/// `0x`/`0o`/`0b` digits; the empty string is 0. `None` for `NaN`.
fn js_number(text: &str) -> Option<f64> {
    let text = text.trim_matches(is_js_space);
    if text.is_empty() {
        return Some(0.0);
    }
    let radix = |prefix: [&str; 2], radix: u32| {
        let digits = prefix.iter().find_map(|p| text.strip_prefix(p))?;
        let valid = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
        // Past 2^53 JavaScript rounds; an id that large matches nothing here.
        valid.then(|| u64::from_str_radix(digits, radix).ok().map(|n| n as f64))?
    };
    if let Some(value) = radix(["0x", "0X"], 16)
        .or_else(|| radix(["0o", "0O"], 8))
        .or_else(|| radix(["0b", "0B"], 2))
    {
        return Some(value);
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned == "Infinity" {
        return Some(if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    // StrDecimalLiteral: digits, a dot, digits (one side at least), then an exponent.
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    let ok = digits(whole)
        && digits(fraction)
        && !(whole.is_empty() && fraction.is_empty())
        && exponent_ok;
    ok.then(|| text.parse::<f64>().ok()).flatten()
}

/// A string as Python's `int()` reads it, in decimal: white space around,
/// an optional sign, ASCII digits with single underscores between them.
/// (Python also reads other scripts' digits; an id spelled so matches
/// nothing here, and its answer echoes none.)
fn python_int(text: &str) -> Option<String> {
    let text = text.trim_matches(|c: char| c.is_whitespace());
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let well_formed = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if !well_formed {
        return None;
    }
    let value: String = digits
        .chars()
        .filter(|c| *c != '_')
        .skip_while(|c| *c == '0')
        .collect();
    Some(match (value.is_empty(), negative) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{value}"),
        (false, false) => value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Text;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn string(text: &str) -> Vec<IdKey> {
        keys(&Slot::String(Text { text, lossy: false }))
    }

    fn number(text: &str) -> Vec<IdKey> {
        keys(&Slot::Number(Number::Wire(text)))
    }

    fn matched(a: &[IdKey], b: &[IdKey]) -> bool {
        a.iter().any(|key| b.contains(key))
    }

    #[test]
    fn a_client_takes_these_for_request_one() {
        let one = number("1");
        for answer in [
            number("1.0"),
            number("1e0"),
            number("10e-1"),
            string("1"),
            string(" 1 "),
            string("+1"),
            string("0x1"),
            string("1e0"),
            string("01"),
        ] {
            assert!(matched(&answer, &one), "{answer:?}");
        }
        for answer in [
            number("2"),
            number("1.5"),
            string("one"),
            string("1x"),
            string("0x"),
            string("1__0"),
            string("."),
            string("e1"),
        ] {
            assert!(!matched(&answer, &one), "{answer:?}");
        }
    }

    #[test]
    fn strings_match_by_value_and_python_by_integer() {
        assert!(matched(&string("r1"), &string("r1")));
        assert!(!matched(&string("r1"), &string("r2")));
        assert!(matched(&string("1_0"), &number("10")));
        assert!(matched(&string("-0"), &number("0")));
        assert!(matched(&number("-0"), &number("0")));
        // Past 2^53 a double no longer tells them apart, and JavaScript takes one for the other.
        assert!(matched(
            &number("12345678901234567891"),
            &number("12345678901234567890")
        ));
    }

    #[test]
    fn javascript_number_reads_as_ecma_262_says() {
        assert_eq!(js_number(""), Some(0.0));
        assert_eq!(js_number("\u{a0}12\n"), Some(12.0));
        assert_eq!(js_number("0b101"), Some(5.0));
        assert_eq!(js_number("0o17"), Some(15.0));
        assert_eq!(js_number("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(js_number(".5"), Some(0.5));
        assert_eq!(js_number("5."), Some(5.0));
        for nan in ["inf", "NaN", "-0x1", "1 2", "0x1g", "infinity", "1e", "+-1"] {
            assert_eq!(js_number(nan), None, "{nan}");
        }
    }
}
