//! Reading a call's options with their JS names: the one parser behind
//! `Policy::from_value` and its kin, for the JS package and for Rust
//! callers whose options arrive as JSON. `null` or an absent member means
//! the default; unknown members are ignored.

use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::{Slot, Tree};

/// The members of one options object, named `what` in messages.
pub(crate) struct Options<'a> {
    what: &'static str,
    members: Tree<'a>,
}

impl<'a> Options<'a> {
    pub(crate) fn new(value: Slot<'a>, what: &'static str) -> Result<Self, Error> {
        match value {
            Slot::Absent | Slot::Null => Ok(Options {
                what,
                members: Tree::Opaque,
            }),
            Slot::Object(members) => Ok(Options { what, members }),
            other => Err(Error::new(
                Code::InvalidOption,
                format!(
                    "{what} must be an object, not {}",
                    other.kind().map_or("undefined", |kind| kind.article())
                ),
            )),
        }
    }

    /// Whether no options were given (`undefined` or `null`).
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self.members, Tree::Opaque)
    }

    /// The member `name`, absent when missing or null.
    pub(crate) fn get(&self, name: &str) -> Slot<'a> {
        if self.is_empty() {
            return Slot::Absent;
        }
        match self.members.get(name) {
            Slot::Null => Slot::Absent,
            found => found,
        }
    }

    fn wrong(&self, name: &str, expected: &str, found: Slot<'_>) -> Error {
        Error::new(
            Code::InvalidOption,
            format!(
                "{} `{name}` must be {expected}, not {}",
                self.what,
                found.kind().map_or("undefined", |kind| kind.article())
            ),
        )
    }

    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, Error> {
        match self.get(name) {
            Slot::Absent => Ok(None),
            Slot::String(text) => Ok(Some(text.text.to_owned())),
            other => Err(self.wrong(name, "a string", other)),
        }
    }

    pub(crate) fn boolean(&self, name: &str) -> Result<Option<bool>, Error> {
        match self.get(name) {
            Slot::Absent => Ok(None),
            Slot::Bool(flag) => Ok(Some(flag)),
            other => Err(self.wrong(name, "a boolean", other)),
        }
    }

    /// One of a few strings, each standing for a value.
    pub(crate) fn choice<T: Copy>(
        &self,
        name: &str,
        choices: &[(&str, T)],
    ) -> Result<Option<T>, Error> {
        let value = self.get(name);
        if !value.is_present() {
            return Ok(None);
        }
        let found = value
            .str()
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
            Slot::Absent => Ok(None),
            Slot::Number(number) => Ok(Some(
                number
                    .value()
                    .filter(|float| {
                        float.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(float)
                    })
                    .map_or(0, |float| float as u32),
            )),
            other => Err(self.wrong(name, "a number", other)),
        }
    }
}
