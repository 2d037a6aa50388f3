//! JSON text written: strings escaped as `JSON.stringify` and `serde_json`
//! escape them (and every character that could break a line or disguise
//! text besides), JSON text put on one line, and the sizes of both.

use std::borrow::Cow;

use super::scalar::Number;
use super::slot::Slot;
use crate::text::{is_inert, is_printable_ascii};

/// Appends `text` as a JSON string, escaped as `JSON.stringify` and
/// `serde_json` both escape it, and besides every character that is not
/// [inert](is_inert) (U+2028, NEL, a bidi control…) as a
/// `\uXXXX` escape: the same JSON, and never a line break or a disguise in
/// whatever it is written into (a log line above all).
pub(crate) fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut rest = text;
    // Runs that need no escape go on whole; a run ends before an ASCII
    // byte to escape or the first byte of a character past ASCII.
    while let Some(at) = rest
        .bytes()
        .position(|byte| byte < 0x20 || byte == b'"' || byte == b'\\' || byte >= 0x7F)
    {
        let (run, escaped) = rest.split_at_checked(at).unwrap_or((rest, ""));
        out.push_str(run);
        let Some(c) = escaped.chars().next() else {
            break;
        };
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() || !is_inert(c) => write_escape(out, c),
            c => out.push(c),
        }
        rest = escaped.get(c.len_utf8()..).unwrap_or_default();
    }
    out.push_str(rest);
    out.push('"');
}

/// `c` as JSON's `\uXXXX` escapes: one, or a surrogate pair past U+FFFF.
fn write_escape(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        out.push_str("\\u");
        for shift in [12, 8, 4, 0] {
            let digit = HEX.get(usize::from((*unit >> shift) & 15)).copied();
            out.push(char::from(digit.unwrap_or(b'0')));
        }
    }
}

/// Whether `json` is one line already, holding no character AI-13 or TXT-1
/// would replace: what `one_line` leaves as it is. Printable ASCII is
/// settled eight bytes at a time, with no allocation.
pub fn is_one_line(json: &str) -> bool {
    is_printable_ascii(json.as_bytes()) || json.chars().all(is_inert)
}

/// JSON text on one line that holds no character AI-13 or TXT-1 would
/// replace: the same JSON, with the tabs, carriage returns and line feeds
/// between its tokens left out and every other such character (they can
/// only stand inside its strings) written as a `\uXXXX` escape. Borrowed
/// when `json` is one already. `json` must be JSON text: a line feed inside
/// a string of anything else would be dropped.
pub(crate) fn one_line(json: &str) -> Cow<'_, str> {
    if is_one_line(json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    let mut rest = json;
    // Runs of printable ASCII go on whole; a run ends before any other byte.
    while let Some(at) = rest.bytes().position(|byte| !(0x20..0x7F).contains(&byte)) {
        let (run, other) = rest.split_at_checked(at).unwrap_or((rest, ""));
        out.push_str(run);
        let Some(c) = other.chars().next() else {
            break;
        };
        match c {
            '\t' | '\n' | '\r' => {}
            c if is_inert(c) => out.push(c),
            c => write_escape(&mut out, c),
        }
        rest = other.get(c.len_utf8()..).unwrap_or_default();
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The UTF-8 length of `text` written as a JSON string.
pub(crate) fn string_len(text: &str) -> usize {
    let escapes: usize = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | 0x08 | 0x0C | b'\n' | b'\r' | b'\t' => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    text.len() + 2 + escapes
}

/// Appends a scalar slot as JSON (an absent one as `null`).
pub(crate) fn write_scalar(out: &mut String, slot: &Slot<'_>) {
    match slot {
        Slot::Null | Slot::Absent | Slot::Array(_) | Slot::Object(_) => out.push_str("null"),
        Slot::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Slot::Number(number) => write_number(out, number),
        Slot::String(text) => write_string(out, text.text),
    }
}

/// Appends `value`, a finite number, as the exact decimal it stands for
/// (`0.1` is `0.1000000000000000055511151231257827021181583404541015625`),
/// which any JSON reader reads back as the very same `f64`: a number's JSON
/// text without a shortest-digits algorithm and its tables (what the npm
/// package's host module does without). An integer is written as one.
///
/// # Examples
///
/// ```
/// use mcp_provenance::__bindings::json::write_exact;
///
/// for (value, text) in [(7.0, "7"), (-1.5, "-1.5"), (0.1, "0.1000000000000000055511151231257827021181583404541015625"), (1e21, "1000000000000000000000")] {
///     let mut out = String::new();
///     write_exact(value, &mut out);
///     assert_eq!(out, text);
///     assert_eq!(out.parse::<f64>(), Ok(value));
/// }
/// ```
pub fn write_exact(value: f64, out: &mut String) {
    if value.is_sign_negative() && value != 0.0 {
        out.push('-');
    }
    let bits = value.abs().to_bits();
    let (exponent, fraction) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
    // value = mantissa × 2^power
    let (mantissa, power) = match exponent {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), exponent - 1075),
    };
    if power >= 0 {
        return out.push_str(&decimal(mantissa, 2, power.unsigned_abs()));
    }
    let shift = power.unsigned_abs();
    let (whole, part) = match mantissa.checked_shr(shift) {
        Some(whole) => (whole, mantissa & ((1 << shift) - 1)),
        None => (0, mantissa),
    };
    out.push_str(&whole.to_string());
    if part != 0 {
        // part / 2^shift = part × 5^shift / 10^shift: its digits, `shift` of them.
        let digits = decimal(part, 5, shift);
        out.push('.');
        out.extend(std::iter::repeat_n(
            '0',
            (shift as usize).saturating_sub(digits.len()),
        ));
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// The decimal digits of `start × base^times`, `base` 2 or 5, in limbs of
/// nine digits, multiplied by as many factors at once as a limb's product
/// holds: a few thousand steps for the longest (`5e-324`).
fn decimal(start: u64, base: u64, times: u32) -> String {
    const LIMB: u64 = 1_000_000_000;
    // Least significant first; each below 2^30, so a product by 2^30 or 5^13 fits.
    let mut limbs = vec![start % LIMB, start / LIMB % LIMB, start / LIMB / LIMB];
    let step = if base == 2 { 30 } else { 13 };
    let mut left = times;
    while left > 0 {
        let factors = left.min(step);
        left -= factors;
        let by = base.pow(factors);
        let mut carry = 0;
        for limb in &mut limbs {
            let product = *limb * by + carry;
            (*limb, carry) = (product % LIMB, product / LIMB);
        }
        while carry > 0 {
            limbs.push(carry % LIMB);
            carry /= LIMB;
        }
    }
    let mut text = String::with_capacity(9 * limbs.len());
    for limb in limbs.iter().rev() {
        let mut unit = LIMB / 10;
        while unit > 0 {
            text.push(char::from(b'0' + (limb / unit % 10) as u8));
            unit /= 10;
        }
    }
    match text.trim_start_matches('0') {
        "" => "0".to_owned(),
        digits => digits.to_owned(),
    }
}

/// Appends a number's JSON text, as `JSON.stringify` writes it, so that
/// sizes agree in every runtime: `1e20` is `100000000000000000000`, `1e-7`
/// is `1e-7`.
fn write_number(out: &mut String, number: &Number) {
    match number {
        #[cfg(feature = "value")]
        Number::Value(number) => match number.as_f64() {
            Some(value) => out.push_str(ryu_js::Buffer::new().format(value)),
            None => out.push_str("null"),
        },
        Number::Text(_, text) | Number::Wire(text) => out.push_str(text),
        // Never inside a value read whole; written as JSON writes a
        // number it cannot hold, should it ever be.
        Number::Float(_) => out.push_str("null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn every_finite_number_is_written_as_the_exact_decimal_it_is() {
        let edges = [
            0.0,
            -0.0,
            5e-324,
            2.2250738585072014e-308,
            f64::MAX,
            f64::MIN,
            9007199254740993.0,
            0.1,
            1e-7,
            1e21,
            123.456,
        ];
        // A sequence of bit patterns spread over every exponent (a linear congruential one).
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        let spread = std::iter::repeat_with(move || {
            bits = bits
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            f64::from_bits(bits)
        });
        for value in edges
            .into_iter()
            .chain(spread.filter(|value| value.is_finite()).take(2000))
        {
            let mut out = String::new();
            write_exact(value, &mut out);
            assert_eq!(out.parse::<f64>(), Ok(value), "{out}");
            assert!(
                !(out.contains(['e', 'E'])
                    || out.ends_with('.')
                    || out.contains('.') && out.ends_with('0')),
                "{out}"
            );
        }
    }

    #[test]
    fn a_string_is_written_with_no_line_break_or_disguise_raw() {
        let text = "a\"\\\n\u{7f}\u{85}\u{2028}\u{202e}\u{e0041}é😀";
        let mut out = String::new();
        write_string(&mut out, text);
        assert_eq!(out, r#""a\"\\\n\u007f\u0085\u2028\u202e\udb40\udc41é😀""#);
        assert_eq!(
            serde_json::from_str::<String>(&out).ok().as_deref(),
            Some(text)
        );
    }

    #[test]
    fn json_text_is_put_on_one_line_as_the_same_json() {
        let json = "{\"a\" :\r\n\t[1,\n \"\u{2028}\u{85}x\\n\u{7f}é😀\"]}";
        assert_eq!(one_line(json), r#"{"a" :[1, "\u2028\u0085x\n\u007fé😀"]}"#);
        let parsed = |text: &str| serde_json::from_str::<Value>(text).ok();
        assert_eq!(parsed(&one_line(json)), parsed(json));
        for plain in [r#"{"a": "é"}"#, "[]"] {
            assert!(matches!(one_line(plain), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn strings_are_escaped_as_json_writes_them() {
        let text = "a\"b\\c\n\u{1}é";
        let mut out = String::new();
        write_string(&mut out, text);
        assert_eq!(out, serde_json::to_string(text).unwrap());
        assert_eq!(string_len(text), out.len());
        let value = json!({"n": 1.5});
        let mut number = String::new();
        write_scalar(&mut number, &Slot::of(&value["n"]));
        assert_eq!(number, "1.5");
    }
}
