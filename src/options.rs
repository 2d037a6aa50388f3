//! Reading a call's options with their JS names: the one parser behind
//! `Policy::from_value` and its kin, for the JS package and for Rust
//! callers whose options arrive as JSON. `null` or an absent member means
//! the default; a member of a name the options do not have is refused
//! (`unknown-option`), so that a misspelt option is never ignored.

use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::{Slot, Tree};
use crate::text;

/// An options object of the API: what messages call it, the names of its
/// members, and how it is read from them.
pub trait FromOptions: Sized {
    /// What messages call it: "policy", "key options"…
    const WHAT: &'static str;
    /// The names of its members.
    const NAMES: &'static [&'static str];

    /// Reads it from its members, whose names are checked.
    fn from_options(options: &Options) -> Result<Self, Error>;

    /// Reads it from a value: absent or `null` for the defaults.
    fn from_slot(value: Slot<'_>) -> Result<Self, Error> {
        Self::from_options(&Options::new(value, Self::WHAT, Self::NAMES)?)
    }
}

/// The members of one options object, named `what` in messages.
pub struct Options<'a> {
    what: &'static str,
    members: Tree<'a>,
}

impl<'a> Options<'a> {
    /// The members of `value`, an options object of `names`.
    pub(crate) fn new(value: Slot<'a>, what: &'static str, names: &[&str]) -> Result<Self, Error> {
        let members = match value {
            Slot::Absent | Slot::Null => Tree::Opaque,
            Slot::Object(members) => members,
            other => {
                return Err(Error::new(
                    Code::InvalidOption,
                    format!(
                        "{what} must be an object, not {}",
                        other.kind().map_or("undefined", |kind| kind.article())
                    ),
                ));
            }
        };
        match members.members().find(|(name, _)| !names.contains(name)) {
            Some((name, _)) => Err(unknown(what, name, names)),
            None => Ok(Options { what, members }),
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

    /// A list of strings.
    pub(crate) fn strings(&self, name: &str) -> Result<Option<Vec<String>>, Error> {
        match self.get(name) {
            Slot::Absent => Ok(None),
            Slot::Array(items) => items
                .items()
                .map(|item| match item {
                    Slot::String(text) => Ok(text.text.to_owned()),
                    other => Err(self.wrong(name, "an array of strings", other)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            other => Err(self.wrong(name, "an array of strings", other)),
        }
    }

    /// An object whose members are strings or arrays of strings, as
    /// (member name, string) pairs in order, one pair per string: HTTP
    /// headers, with a header sent more than once as an array (as Node keeps
    /// some) or as a pair each.
    pub(crate) fn pairs(&self, name: &str) -> Result<Option<Vec<(String, String)>>, Error> {
        const EXPECTED: &str = "an object of strings or arrays of strings";
        let slot = self.get(name);
        if !slot.is_present() {
            return Ok(None);
        }
        if !slot.is_object() {
            return Err(self.wrong(name, EXPECTED, slot));
        }
        let mut pairs = Vec::new();
        for (member, value) in slot.tree().members() {
            let mut push = |item: Slot<'_>| match item {
                Slot::String(text) => {
                    pairs.push((member.to_owned(), text.text.to_owned()));
                    Ok(())
                }
                other => Err(self.wrong(name, EXPECTED, other)),
            };
            match value {
                Slot::Array(items) => items.items().try_for_each(&mut push)?,
                other => push(other)?,
            }
        }
        Ok(Some(pairs))
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

/// The error for a member `name` that `what` does not have: the name made
/// safe to print (it is the caller's, but may be anything), and the option
/// it is likely a misspelling of. Out of line: only a mistake reaches it.
#[cold]
#[inline(never)]
fn unknown(what: &str, name: &str, names: &[&str]) -> Error {
    let shown = text::clean(name, 64).text;
    let hint = names
        .iter()
        .find(|known| near(name.as_bytes(), known.as_bytes()))
        .map(|known| format!("; did you mean `{known}`?"))
        .unwrap_or_default();
    Error::new(
        Code::UnknownOption,
        format!("{what} has no option `{shown}`{hint}"),
    )
}

/// Whether `name` is `known` but for ASCII case and one slip: a letter
/// added, left out or changed, or two neighbours swapped.
fn near(name: &[u8], known: &[u8]) -> bool {
    // Where they first differ; past the slip, the rest must match.
    let at = name
        .iter()
        .zip(known)
        .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
        .count();
    let rest_matches = |n: usize, k: usize| match (name.get(at + n..), known.get(at + k..)) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    };
    let letter = |word: &[u8], i: usize| word.get(at + i).map(u8::to_ascii_lowercase);
    let swapped = letter(name, 0).is_some()
        && letter(name, 0) == letter(known, 1)
        && letter(name, 1) == letter(known, 0)
        && rest_matches(2, 2);
    known.len() >= 4
        && (rest_matches(0, 0)
            || rest_matches(1, 0)
            || rest_matches(0, 1)
            || rest_matches(1, 1)
            || swapped)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_misspelt_option_is_named_with_what_was_meant() {
        let names = ["maxIntentBytes", "uiKey", "remove"];
        let message = |name: &str| unknown("policy", name, &names).to_string();
        assert_eq!(
            message("maxIntentByte"),
            "policy has no option `maxIntentByte`; did you mean `maxIntentBytes`?"
        );
        assert_eq!(
            message("UIKEY"),
            "policy has no option `UIKEY`; did you mean `uiKey`?"
        );
        assert_eq!(
            message("remvoe"),
            "policy has no option `remvoe`; did you mean `remove`?"
        );
        assert_eq!(message("colour"), "policy has no option `colour`");
        assert_eq!(message("a\nb"), "policy has no option `a b`");
        assert!(message(&"x".repeat(1000)).len() < 100);
        for (name, near_it) in [
            ("maxIntentBytesX", true),
            ("maxIntenBytes", true),
            ("maxIntentBytez", true),
            ("maxIntentBtyes", true),
            ("maxIntentBy", false),
            ("maxReasonBytes", false),
        ] {
            assert_eq!(near(name.as_bytes(), b"maxIntentBytes"), near_it, "{name}");
        }
    }
}
