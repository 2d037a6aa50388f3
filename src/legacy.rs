//! Migration from the legacy tool arguments `user_query` and
//! `invocation_reason` (AI-17).

#[cfg(feature = "value")]
use serde_json::Value;

use crate::diagnostics::{Action, Change, Rule};
use crate::edit::{Edit, Put, Target};
use crate::error::Error;
use crate::json::Slot;
use crate::keys::{self, KeyOptions};
use crate::options::{self, FromOptions, Member, Name, Naming, Options};
use crate::path::Path;
use crate::schema::{EnvelopeField, FIELDS, Group, Place, Reads};

/// What lifting reads of a request.
pub const READS: Reads = FIELDS | Group::Legacy.bit();
use crate::view::MessageView;

/// Options of [`lift_legacy_arguments`].
///
/// # Examples
///
/// ```
/// use mcp_provenance::LiftOptions;
/// use serde_json::json;
///
/// let options = LiftOptions::from_value(&json!({"remove": true}))?;
/// assert!(options.remove);
///
/// // In Rust: `..LiftOptions::default()`, or deserialized by the field names.
/// let options: LiftOptions = serde_json::from_value(json!({"remove": true, "keys": {"invocation_key": "com.example/ai"}}))?;
/// assert_eq!(options.keys.invocation_key(), "com.example/ai");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiftOptions {
    /// Which `_meta` keys hold the entries (KEY-3).
    pub keys: KeyOptions,
    /// Delete both legacy keys from `arguments`, lifted or not.
    pub remove: bool,
}

impl LiftOptions {
    /// Reads the options from JSON with the JS names (`null` for the
    /// defaults), and checks them; messages name the options as JS does.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::LiftOptions;
    ///
    /// assert_eq!(LiftOptions::from_value(&serde_json::Value::Null)?, LiftOptions::default());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        Self::from_slot(Slot::of(value))
    }
}

/// The option that deletes the legacy arguments.
const REMOVE: Name = Name::new("remove", "remove");

impl FromOptions for LiftOptions {
    const WHAT: &'static str = "lift options";
    const MEMBERS: &'static [Member] = &[Member::Inline(keys::KEYS), Member::Option(REMOVE)];

    fn read(options: &Options) -> Result<Self, Error> {
        Ok(LiftOptions {
            keys: KeyOptions::inline(options)?,
            remove: options.boolean(REMOVE)?.unwrap_or(false),
        })
    }

    fn check_as(&self, naming: Naming) -> Result<(), Error> {
        self.keys.check_as(naming)
    }
}

options::deserialize_by_rust_names!(LiftOptions);

/// The edits that lift the legacy arguments into the envelope (AI-17).
pub fn lift(request: &MessageView, remove: bool) -> Result<Vec<Edit>, Error> {
    crate::message::request(request)?;
    let mut edits = Vec::new();
    if !request.get(Place::Arguments).is_object() {
        return Ok(edits);
    }
    let (query, reason) = (
        request.get(Place::UserQuery),
        request.get(Place::LegacyReason),
    );
    if remove {
        for (place, slot) in [(Place::UserQuery, query), (Place::LegacyReason, reason)] {
            if slot.is_present() {
                edits.push(Edit::new(Target::place(place), Put::Remove));
            }
        }
    }
    let lifted = [(Place::UserQuery, query), (Place::LegacyReason, reason)]
        .into_iter()
        .filter(|(_, slot)| slot.text().is_some());
    if lifted.clone().next().is_none() {
        return Ok(edits);
    }
    if let Some(step) = crate::message::not_an_object(request, &crate::message::TO_META) {
        return Err(step.into());
    }
    let envelope = &request.envelope;
    match envelope.value {
        Slot::Absent => edits.push(Edit::new(Target::place(Place::Envelope), Put::Object)),
        Slot::Object(_) => {}
        _ => return Ok(edits),
    }
    for (from, _) in lifted {
        let into = if from == Place::UserQuery {
            EnvelopeField::UserIntent
        } else {
            EnvelopeField::InvocationReason
        };
        let view = &envelope.fields[into];
        let Some((text, _)) = into.spec().text() else {
            continue;
        };
        let wins = match view.value {
            Slot::Absent => {
                edits.push(Edit::new(Target::field(Place::Envelope, into), Put::Object));
                false
            }
            // A text already there wins, and so does a client that said it
            // withheld one (AI-15).
            Slot::Object(_) => {
                let withheld = matches!(view.flag(into), Some(Slot::Bool(true)));
                withheld || view.text_member(into).is_some_and(Slot::is_present)
            }
            _ => true,
        };
        if !wins {
            edits.push(Edit::new(
                Target::member(Place::Envelope, into, text),
                Put::Copy {
                    input: 0,
                    target: Target::place(from),
                },
            ));
        }
    }
    Ok(edits)
}

/// What the edits of [`lift`] change, as changes a filter lists: each legacy
/// argument removed (`dropped`), each text moved into the envelope (`lifted`).
pub(crate) fn changes(edits: &[Edit], keys: &KeyOptions) -> Vec<Change> {
    edits
        .iter()
        .filter_map(|edit| {
            let action = match edit.put {
                Put::Remove => Action::Dropped,
                Put::Copy { .. } => Action::Lifted,
                _ => return None,
            };
            let names = edit.target.names(keys);
            let path = names
                .iter()
                .map(|name| Path::ROOT.join(name).render())
                .collect();
            Some(Change {
                action,
                path,
                rule: Rule::Ai17,
            })
        })
        .collect()
}

/// Lifts the legacy string arguments `user_query` into `userIntent.text` and
/// `invocation_reason` into `invocationReason.text` of the envelope (AI-17).
///
/// What the envelope already holds wins: a `userIntent` with text, or with
/// `redacted: true` and no text (the client withheld it), and any
/// `invocationReason`, are left alone; so is an envelope that is not an
/// object. Only strings are lifted. With `remove`, both legacy keys are
/// deleted from `arguments` whether or not they were lifted.
///
/// # Errors
///
/// `not-a-request` (TypeError) when the request is not a request;
/// `invalid-type` (TypeError) when `_meta` is not an object where the lifted
/// text must go; a KEY-3 code (RangeError) for a bad configured key.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{lift_legacy_arguments, LiftOptions};
/// use serde_json::json;
///
/// let legacy = json!({"method": "tools/call", "params": {"name": "execute_query",
///     "arguments": {"query": "SELECT 1", "user_query": "Show me 10 employees"}}});
/// let lifted = lift_legacy_arguments(legacy, &LiftOptions { remove: true, ..LiftOptions::default() })?;
/// assert_eq!(lifted["params"], json!({"name": "execute_query", "arguments": {"query": "SELECT 1"},
///     "_meta": {"io.modelcontextprotocol/aiInvocation": {"userIntent": {"text": "Show me 10 employees"}}}}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn lift_legacy_arguments(request: Value, options: &LiftOptions) -> Result<Value, Error> {
    let edits = lift_edits(&request, options)?;
    Ok(crate::edit::apply(request, edits, &options.keys, &[]))
}

/// The edits of [`lift_legacy_arguments`], the keys checked.
#[cfg(feature = "value")]
pub fn lift_edits(request: &Value, options: &LiftOptions) -> Result<Vec<Edit>, Error> {
    options.keys.check()?;
    lift(
        &MessageView::of(request, &options.keys, READS),
        options.remove,
    )
}
