//! Reading a call's options: the one reader behind `Policy::from_value`,
//! the `Deserialize` of every options struct, and their kin. Each options
//! struct has one table of its members ([`Member`]), each option by its two
//! names ([`Name`]): its Rust field's, which Rust readers write
//! (`Deserialize`) and which messages quote for options built in Rust, and
//! its JS member's, which JS and Python write (`from_value`, the bindings)
//! and which messages quote for options they gave ([`Naming`]). `null` or an
//! absent member means the default; a member of a name the options do not
//! have is refused (`unknown-option`), so that a misspelt option is never
//! ignored.

use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::{Slot, Tree};
use crate::text;

/// Which of its names a message gives an option: the one its writer used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// The Rust field names (`max_envelope_bytes`): options built or
    /// deserialized in Rust.
    Rust,
    /// The JS member names (`maxEnvelopeBytes`): options from JS or Python.
    Js,
}

/// An option by its two names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name {
    /// The Rust field's name.
    pub rust: &'static str,
    /// The JS member's name.
    pub js: &'static str,
}

impl Name {
    /// An option named `rust` in Rust and `js` in JS.
    pub(crate) const fn new(rust: &'static str, js: &'static str) -> Self {
        Name { rust, js }
    }

    /// Its name as `naming` gives it.
    pub(crate) fn get(self, naming: Naming) -> &'static str {
        match naming {
            Naming::Rust => self.rust,
            Naming::Js => self.js,
        }
    }
}

/// Options of their own inside an options struct (a policy's keys, a
/// middleware's filter): in Rust a field holding them, in JS their members
/// beside the others.
#[derive(Clone, Copy, Debug)]
pub struct Inline {
    /// The Rust field's name.
    pub rust: &'static str,
    /// What messages call them.
    pub what: &'static str,
    /// Their members.
    pub members: &'static [Member],
}

/// A member of an options struct, as its table lists it.
#[derive(Clone, Copy, Debug)]
pub enum Member {
    /// An option.
    Option(Name),
    /// Options of their own.
    Inline(Inline),
}

/// The names of `members` as `naming` gives them, in order.
pub(crate) fn names(members: &[Member], naming: Naming, out: &mut Vec<&'static str>) {
    for member in members {
        match (member, naming) {
            (Member::Option(name), _) => out.push(name.get(naming)),
            (Member::Inline(inline), Naming::Rust) => out.push(inline.rust),
            (Member::Inline(inline), Naming::Js) => names(inline.members, naming, out),
        }
    }
}

/// Whether `name` is one of `members` as `naming` names them.
fn knows(members: &[Member], naming: Naming, name: &str) -> bool {
    members.iter().any(|member| match (member, naming) {
        (Member::Option(option), _) => option.get(naming) == name,
        (Member::Inline(inline), Naming::Rust) => inline.rust == name,
        (Member::Inline(inline), Naming::Js) => knows(inline.members, naming, name),
    })
}

/// An options struct of the API: what messages call it, its table, and how
/// it is read from its members and checked.
pub trait FromOptions: Sized {
    /// What messages call it: "policy", "key options"…
    const WHAT: &'static str;
    /// Its members.
    const MEMBERS: &'static [Member];

    /// Reads it from its members, whose names are checked; what is wrong
    /// with a member's type is an error, what is wrong with its value is
    /// [`FromOptions::check_as`]'s to say.
    fn read(options: &Options) -> Result<Self, Error>;

    /// Checks what it holds (limits, keys), naming its options as `naming`
    /// says. By default, nothing: what it holds was checked as it was read.
    fn check_as(&self, _naming: Naming) -> Result<(), Error> {
        Ok(())
    }

    /// Reads it and checks it.
    fn from_options(options: &Options) -> Result<Self, Error> {
        let read = Self::read(options)?;
        read.check_as(options.naming)?;
        Ok(read)
    }

    /// Reads and checks it from a value by the names `naming` gives
    /// options: absent or `null` for the defaults.
    fn read_as(value: Slot<'_>, naming: Naming) -> Result<Self, Error> {
        Self::from_options(&Options::new(value, Self::WHAT, Self::MEMBERS, naming)?)
    }

    /// Reads and checks it from a value of JS or Python, by the JS names.
    fn from_slot(value: Slot<'_>) -> Result<Self, Error> {
        Self::read_as(value, Naming::Js)
    }
}

/// `Deserialize` for an options struct: its Rust field names, every member
/// optional, none unknown, and the checks its JS reader makes, all by the
/// one reader (through a `serde_json::Value`, which any format can give).
#[cfg(feature = "value")]
pub(crate) fn deserialize<'de, T: FromOptions, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
    T::read_as(Slot::of(&value), Naming::Rust).map_err(serde::de::Error::custom)
}

/// Implements `Deserialize` for options structs by [`deserialize`].
macro_rules! deserialize_by_rust_names {
    ($($options:ty),+) => {$(
        #[cfg(feature = "value")]
        #[cfg_attr(docsrs, doc(cfg(feature = "value")))]
        impl<'de> serde::Deserialize<'de> for $options {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::options::deserialize(deserializer)
            }
        }
    )+};
}
pub(crate) use deserialize_by_rust_names;

/// The members of one options object, named `what` in messages, and by
/// which names.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    what: &'static str,
    members: Tree<'a>,
    naming: Naming,
}

impl<'a> Options<'a> {
    /// The members of `value`, an options object of `members`, by the names
    /// `naming` gives them.
    pub(crate) fn new(
        value: Slot<'a>,
        what: &'static str,
        members: &[Member],
        naming: Naming,
    ) -> Result<Self, Error> {
        let tree = match value {
            Slot::Absent | Slot::Null => Tree::Opaque,
            Slot::Object(members) => members,
            other => {
                return Err(Error::new(
                    Code::InvalidOption,
                    format!("{what} must be an object, not {}", other.article()),
                ));
            }
        };
        // Each member's name looked up in the table, with nothing made: the
        // list of names (for the hint) only for a name it has not.
        match tree
            .members()
            .find(|(name, _)| !knows(members, naming, name))
        {
            Some((name, _)) => {
                let mut known = Vec::new();
                names(members, naming, &mut known);
                Err(unknown(what, name, &known))
            }
            None => Ok(Options {
                what,
                members: tree,
                naming,
            }),
        }
    }

    /// The names its messages give options.
    pub(crate) fn naming(&self) -> Naming {
        self.naming
    }

    /// The options `inline` holds: in Rust, the object of its field; in
    /// JS, these same members (their names were checked with these).
    pub(crate) fn inline(&self, inline: Inline) -> Result<Options<'a>, Error> {
        match self.naming {
            Naming::Rust => Options::new(
                self.get_named(inline.rust),
                inline.what,
                inline.members,
                Naming::Rust,
            ),
            Naming::Js => Ok(*self),
        }
    }

    /// Whether no options were given (`undefined` or `null`).
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self.members, Tree::Opaque)
    }

    /// The member `name`, absent when missing or null.
    pub(crate) fn get(&self, name: Name) -> Slot<'a> {
        self.get_named(name.get(self.naming))
    }

    /// The member named `name` as it stands, absent when missing or null.
    fn get_named(&self, name: &str) -> Slot<'a> {
        if self.is_empty() {
            return Slot::Absent;
        }
        match self.members.get(name) {
            Slot::Null => Slot::Absent,
            found => found,
        }
    }

    /// The error for option `name` of a value not of the type `expected`.
    pub(crate) fn wrong(&self, name: Name, expected: &str, found: Slot<'_>) -> Error {
        Error::new(
            Code::InvalidOption,
            format!(
                "{} `{}` must be {expected}, not {}",
                self.what,
                name.get(self.naming),
                found.article()
            ),
        )
    }

    pub(crate) fn string(&self, name: Name) -> Result<Option<String>, Error> {
        match self.get(name) {
            Slot::Absent => Ok(None),
            Slot::String(text) => Ok(Some(text.text.to_owned())),
            other => Err(self.wrong(name, "a string", other)),
        }
    }

    /// A list of strings.
    pub(crate) fn strings(&self, name: Name) -> Result<Option<Vec<String>>, Error> {
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
    pub(crate) fn pairs(&self, name: Name) -> Result<Option<Vec<(String, String)>>, Error> {
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

    pub(crate) fn boolean(&self, name: Name) -> Result<Option<bool>, Error> {
        match self.get(name) {
            Slot::Absent => Ok(None),
            Slot::Bool(flag) => Ok(Some(flag)),
            other => Err(self.wrong(name, "a boolean", other)),
        }
    }

    /// One of a few strings, each standing for a value.
    pub(crate) fn choice<T: Copy>(
        &self,
        name: Name,
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
                    format!(
                        "{} `{}` must be one of {}",
                        self.what,
                        name.get(self.naming),
                        names.join(", ")
                    ),
                ))
            }
        }
    }

    /// A byte limit: any whole number that fits; the caller checks its range.
    /// A number that is not whole or out of `u32` reads as 0, which no range
    /// holds, so 1.5, -1 and 1e12 draw the same `invalid-limit` as 8.
    pub(crate) fn limit(&self, name: Name) -> Result<Option<u32>, Error> {
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
