//! What a call changes in a message: edits, each a place and what to put
//! there. Natively they are applied to the owned `serde_json::Value`; the
//! wasm build hands them to JS, which applies them to a copy made along the
//! changed path, sharing everything else.

use crate::keys::KeyOptions;
use crate::path::key_name;
use crate::schema::{self, EnvelopeField, Place};

/// Where an edit writes: a place of the table and, below an envelope, one
/// of its fields, one of that field's members, or a member by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The place of the table written at, or below.
    pub place: Place,
    /// A field of the envelope at `place`.
    pub field: Option<EnvelopeField>,
    /// The index of a member of that field.
    pub member: Option<usize>,
    /// A member by name, below the rest.
    pub name: Option<String>,
}

impl Target {
    /// A place of the table.
    pub fn place(place: Place) -> Self {
        Target {
            place,
            field: None,
            member: None,
            name: None,
        }
    }

    /// A field of the envelope at `place`.
    pub fn field(place: Place, field: EnvelopeField) -> Self {
        Target {
            field: Some(field),
            ..Target::place(place)
        }
    }

    /// A member of a field of the envelope at `place`.
    pub fn member(place: Place, field: EnvelopeField, member: usize) -> Self {
        Target {
            member: Some(member),
            ..Target::field(place, field)
        }
    }

    /// The member `name` below this target.
    pub fn named(self, name: &str) -> Self {
        Target {
            name: Some(name.to_owned()),
            ..self
        }
    }

    /// The member names from the root to this target, under the keys in force.
    pub fn names<'a>(&'a self, keys: &'a KeyOptions) -> Vec<&'a str> {
        let mut names: Vec<&str> = schema::keys_to(self.place)
            .iter()
            .copied()
            .map(|key| key_name(key, keys))
            .collect();
        let field = self.field.map(EnvelopeField::spec);
        names.extend(field.map(|field| field.name));
        names.extend(
            field
                .zip(self.member)
                .and_then(|(field, index)| field.members.get(index))
                .map(|member| member.name),
        );
        names.extend(self.name.as_deref());
        names
    }
}

/// What an edit puts at its target. Objects missing on the way to it are
/// created; nothing else along the way changes.
#[derive(Clone, Debug, PartialEq)]
pub enum Put {
    /// Nothing: the member is removed.
    Remove,
    /// A string.
    Text(String),
    /// A boolean.
    Bool(bool),
    /// A new, empty object, in place of whatever stood there.
    Object,
    /// A value written as JSON text.
    Json(String),
    /// What stands at `target` of argument `input` of the call (0 is the
    /// message itself, before any edit), as it stands there.
    Copy {
        /// Which argument of the call.
        input: usize,
        /// Where in it.
        target: Target,
    },
}

/// One change to a message.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    /// Where it writes.
    pub target: Target,
    /// What it puts there.
    pub put: Put,
}

impl Edit {
    /// An edit putting `put` at `target`.
    pub fn new(target: Target, put: Put) -> Self {
        Edit { target, put }
    }
}

#[cfg(feature = "value")]
pub(crate) use apply::apply;

/// Applying edits to a `serde_json::Value`.
#[cfg(feature = "value")]
mod apply {
    use serde_json::{Map, Value};

    use super::{Edit, Put, Target};
    use crate::keys::KeyOptions;

    fn find<'a>(value: &'a Value, target: &Target, keys: &KeyOptions) -> Option<&'a Value> {
        target
            .names(keys)
            .into_iter()
            .try_fold(value, |value, name| value.get(name))
    }

    /// Applies `edits` to `message`; `inputs` are the call's other
    /// arguments, from 1 on, for [`Put::Copy`].
    pub(crate) fn apply(
        mut message: Value,
        edits: Vec<Edit>,
        keys: &KeyOptions,
        inputs: &[&Value],
    ) -> Value {
        if edits.is_empty() {
            return message;
        }
        // What is copied is read before anything changes.
        let values: Vec<Option<Value>> = edits
            .iter()
            .map(|edit| match &edit.put {
                Put::Remove => None,
                Put::Text(text) => Some(Value::String(text.clone())),
                Put::Bool(flag) => Some(Value::Bool(*flag)),
                Put::Object => Some(Value::Object(Map::new())),
                Put::Json(text) => serde_json::from_str(text).ok(),
                Put::Copy { input, target } => {
                    let source = match input {
                        0 => Some(&message),
                        n => inputs.get(n - 1).copied(),
                    };
                    source
                        .and_then(|source| find(source, target, keys))
                        .cloned()
                }
            })
            .collect();
        for (edit, value) in edits.iter().zip(values) {
            let names = edit.target.names(keys);
            let Some((last, path)) = names.split_last() else {
                continue;
            };
            let mut at = &mut message;
            for name in path {
                let Value::Object(map) = at else { break };
                at = map
                    .entry(*name)
                    .or_insert_with(|| Value::Object(Map::new()));
            }
            if let Value::Object(map) = at {
                match value {
                    Some(value) => map.insert((*last).to_owned(), value),
                    None => map.remove(*last),
                };
            }
        }
        message
    }
}
