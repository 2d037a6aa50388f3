//! Reading a call's options from JSON with their JS names: the one parser
//! behind `Policy::from_value` and its kin, for the JS package and for Rust
//! callers whose options arrive as JSON. `null` or an absent member means
//! the default; unknown members are ignored.

use serde_json::{Map, Value};

use crate::diagnostics::Code;
use crate::error::{Error, type_name};

/// The members of one options object, named `what` in messages.
pub(crate) struct Options<'a> {
    what: &'static str,
    members: Option<&'a Map<String, Value>>,
}

impl<'a> Options<'a> {
    pub(crate) fn new(value: &'a Value, what: &'static str) -> Result<Self, Error> {
        match value {
            Value::Null => Ok(Options {
                what,
                members: None,
            }),
            Value::Object(members) => Ok(Options {
                what,
                members: Some(members),
            }),
            other => Err(Error::new(
                Code::InvalidOption,
                format!("{what} must be an object, not {}", type_name(other)),
            )),
        }
    }

    /// The member `name`, unless absent or null.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.members?.get(name).filter(|value| !value.is_null())
    }

    fn wrong(&self, name: &str, expected: &str, found: &Value) -> Error {
        Error::new(
            Code::InvalidOption,
            format!(
                "{} `{name}` must be {expected}, not {}",
                self.what,
                type_name(found)
            ),
        )
    }

    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    pub(crate) fn boolean(&self, name: &str) -> Result<Option<bool>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(other) => Err(self.wrong(name, "a boolean", other)),
        }
    }

    /// One of a few strings, each standing for a value.
    pub(crate) fn choice<T: Copy>(
        &self,
        name: &str,
        choices: &[(&str, T)],
    ) -> Result<Option<T>, Error> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let found = value
            .as_str()
            .and_then(|text| choices.iter().find(|(choice, _)| *choice == text));
        match found {
            Some((_, choice)) => Ok(Some(*choice)),
            None => {
                let names: Vec<String> = choices
                    .iter()
                    .map(|(choice, _)| format!("\"{choice}\""))
                    .collect();
                Err(Error::new(
                    Code::InvalidOption,
                    format!("{} `{name}` must be one of {}", self.what, names.join(", ")),
                ))
            }
        }
    }

    /// A byte limit: any whole number that fits; the caller checks its range.
    /// A number that is not whole or out of `u32` reads as 0, which no range
    /// holds, so 1.5, -1 and 1e12 draw the same `invalid-limit` as 8.
    pub(crate) fn limit(&self, name: &str) -> Result<Option<u32>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(Some(
                number
                    .as_u64()
                    .and_then(|whole| u32::try_from(whole).ok())
                    .or_else(|| {
                        number
                            .as_f64()
                            .filter(|float| {
                                float.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(float)
                            })
                            .map(|float| float as u32)
                    })
                    .unwrap_or(0),
            )),
            Some(other) => Err(self.wrong(name, "a number", other)),
        }
    }
}
