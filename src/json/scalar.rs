//! The type of a JSON value, and the scalars as read: strings and numbers.

/// A JSON type, as messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    /// The type with its article, for messages: "a string", "null".
    pub fn article(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// A string as read.
#[derive(Clone, Copy, Debug)]
pub struct Text<'a> {
    /// The string, as far as it was read.
    pub text: &'a str,
    /// A lone UTF-16 surrogate was read as U+FFFD (only JS strings hold them).
    pub lossy: bool,
}

#[cfg(feature = "value")]
impl<'a> Text<'a> {
    /// A string read exactly.
    pub fn exact(text: &'a str) -> Self {
        Text { text, lossy: false }
    }
}

/// A number as read.
#[derive(Clone, Copy, Debug)]
pub enum Number<'a> {
    /// A number of serde_json, exactly as it holds it.
    #[cfg(feature = "value")]
    Value(&'a serde_json::Number),
    /// Read by its value: a request id, an option.
    Float(f64),
    /// Read by its value and its JSON text, as the runtime that holds it
    /// writes it: a number inside a value read whole.
    Text(f64, &'a str),
    /// Its JSON text as it came over the wire, spelling and all: `1.10`,
    /// `1e400` and `12345678901234567890` stay what they were.
    Wire(&'a str),
}

impl Number<'_> {
    /// The value, when it was read by value.
    pub fn value(&self) -> Option<f64> {
        match self {
            #[cfg(feature = "value")]
            Number::Value(number) => number.as_f64(),
            Number::Float(value) | Number::Text(value, _) => Some(*value),
            Number::Wire(text) => text.parse().ok(),
        }
    }

    /// As `serde_json` holds it: integers stay integers.
    pub fn to_json(self) -> Option<serde_json::Number> {
        match self {
            #[cfg(feature = "value")]
            Number::Value(number) => Some(number.clone()),
            Number::Float(value)
                if value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 =>
            {
                Some(serde_json::Number::from(value as i64))
            }
            Number::Float(value) | Number::Text(value, _) => serde_json::Number::from_f64(value),
            // Integers exactly, as far as 64 bits hold them; `1e400` is no number JSON stores.
            Number::Wire(text) => match text.parse::<u64>() {
                Ok(whole) => Some(whole.into()),
                Err(_) => match text.parse::<i64>() {
                    Ok(whole) => Some(whole.into()),
                    Err(_) => text.parse().ok().and_then(serde_json::Number::from_f64),
                },
            },
        }
    }
}
