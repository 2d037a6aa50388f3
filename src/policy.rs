//! What `sanitize` keeps, and how much of it.

use crate::correlation::{CorrelationKind, KNOWN_CORRELATION_SOURCES, MAX_POLICY_KEYS};
use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::Slot;
use crate::keys::{self, KeyOptions, is_reserved_meta_key, is_valid_meta_key};
use crate::options::{self, FromOptions, Member, Name, Naming, Options};
use crate::schema::EnvelopeField;

/// The range of every per-field limit, in UTF-8 bytes.
const FIELD_LIMITS: (u32, u32) = (16, 1_048_576);
/// The range of `max_envelope_bytes`.
const ENVELOPE_LIMITS: (u32, u32) = (64, 1_048_576);

// The options of a policy, by their two names.
const MAX_REASON_BYTES: Name = Name::new("max_reason_bytes", "maxReasonBytes");
const MAX_INTENT_BYTES: Name = Name::new("max_intent_bytes", "maxIntentBytes");
const MAX_MODEL_BYTES: Name = Name::new("max_model_bytes", "maxModelBytes");
const MAX_TURN_ID_BYTES: Name = Name::new("max_turn_id_bytes", "maxTurnIdBytes");
const MAX_ENVELOPE_BYTES: Name = Name::new("max_envelope_bytes", "maxEnvelopeBytes");
const USER_INTENT: Name = Name::new("user_intent", "userIntent");
const MODEL: Name = Name::new("model", "model");
const INVOCATION_REASON: Name = Name::new("invocation_reason", "invocationReason");
const UNKNOWN_FIELDS: Name = Name::new("unknown_fields", "unknownFields");
const CORRELATION_KEYS: Name = Name::new("correlation_keys", crate::correlation::OPTION);

/// What to do with `userIntent` (AI-12, AI-15).
///
/// # Examples
///
/// ```
/// use mcp_provenance::{IntentPolicy, Policy};
///
/// let policy = Policy::from_value(&serde_json::json!({"userIntent": "redact"}))?;
/// assert_eq!(policy.user_intent, IntentPolicy::Redact);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntentPolicy {
    /// Keep it, neutralized and within its limit.
    #[default]
    Keep,
    /// Remove `text` and set `redacted: true`.
    Redact,
    /// Remove `userIntent` whole.
    Drop,
}

/// Whether to keep a member (neutralized and within limits) or drop it.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{FieldPolicy, Policy};
///
/// let policy = Policy::from_value(&serde_json::json!({"model": "drop"}))?;
/// assert_eq!(policy.model, FieldPolicy::Drop);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldPolicy {
    /// Keep it, made safe.
    Keep,
    /// Remove it.
    Drop,
}

/// What a policy does with a field of the envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Handling {
    /// Keep it, made safe.
    Keep,
    /// Remove its text and set its flag (AI-15).
    Redact,
    /// Remove it whole.
    Drop,
}

/// How [`sanitize`](crate::sanitize) and [`audit_record`](crate::audit_record)
/// make an envelope safe to persist or forward. Limits are UTF-8 bytes.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{IntentPolicy, Policy};
/// use serde_json::json;
///
/// let policy = Policy::from_value(&json!({"userIntent": "redact", "maxReasonBytes": 512}))?;
/// assert_eq!(policy.user_intent, IntentPolicy::Redact);
/// assert_eq!(policy.max_reason_bytes, 512);
/// assert_eq!(policy.max_intent_bytes, 2048);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Built in Rust, with `..Policy::default()` (a field added later then
/// needs no change), or deserialized by its field names (feature `value`),
/// checked as it is read; messages name the fields:
///
/// ```
/// use mcp_provenance::{IntentPolicy, Policy};
///
/// let policy: Policy = serde_json::from_str(r#"{"user_intent": "redact", "keys": {"invocation_key": "com.example/aiInvocation"}}"#)?;
/// assert_eq!((policy.user_intent, policy.keys.invocation_key()), (IntentPolicy::Redact, "com.example/aiInvocation"));
/// let err = serde_json::from_str::<Policy>(r#"{"max_envelope_bytes": 10}"#).unwrap_err();
/// assert_eq!(err.to_string(), "policy `max_envelope_bytes` must be an integer from 64 to 1048576");
/// let err = serde_json::from_str::<Policy>(r#"{"max_envelope_byte": 100}"#).unwrap_err();
/// assert_eq!(err.to_string(), "policy has no option `max_envelope_byte`; did you mean `max_envelope_bytes`?");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Which `_meta` keys hold the entries (KEY-3).
    pub keys: KeyOptions,
    /// Limit of `invocationReason.text` (and of each string of a kept unknown field); default 1024.
    pub max_reason_bytes: u32,
    /// Limit of `userIntent.text`; default 2048.
    pub max_intent_bytes: u32,
    /// Limit of `model.name`; default 256.
    pub max_model_bytes: u32,
    /// Limit of `turnId`; default 128.
    pub max_turn_id_bytes: u32,
    /// Limit of the whole envelope as compact JSON; default 8192.
    pub max_envelope_bytes: u32,
    /// What to do with `userIntent`; default keep.
    pub user_intent: IntentPolicy,
    /// What to do with `model`; default keep.
    pub model: FieldPolicy,
    /// What to do with `invocationReason`; default keep.
    pub invocation_reason: FieldPolicy,
    /// What to do with fields the envelope does not define (AI-8); default drop.
    pub unknown_fields: FieldPolicy,
    /// `_meta` keys an audit record reads correlation ids from, beside the
    /// known ones (COR-2), sorted by key (`correlationKeys`: an object of
    /// keys to kinds). Each is a valid vendor key, read by no other rule
    /// (in a filter, none of the filter's `invocation_keys` and `ui_keys`),
    /// of a kind a client names: not `trace`, `parentSpan` or `traceFlags`,
    /// which come from `traceparent` alone. At most 64.
    pub correlation_keys: Vec<(String, CorrelationKind)>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            keys: KeyOptions::default(),
            max_reason_bytes: 1024,
            max_intent_bytes: 2048,
            max_model_bytes: 256,
            max_turn_id_bytes: 128,
            max_envelope_bytes: 8192,
            user_intent: IntentPolicy::Keep,
            model: FieldPolicy::Keep,
            invocation_reason: FieldPolicy::Keep,
            unknown_fields: FieldPolicy::Drop,
            correlation_keys: Vec::new(),
        }
    }
}

impl Policy {
    /// Reads a policy from JSON with the JS names (`null` for the default),
    /// and checks it; messages name the options as JS does.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, Policy};
    /// use serde_json::json;
    ///
    /// let err = Policy::from_value(&json!({"userIntent": "shred"})).unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidOption);
    /// let err = Policy::from_value(&json!({"maxTurnIdBytes": 8})).unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidLimit);
    /// assert_eq!(err.to_string(), "policy `maxTurnIdBytes` must be an integer from 16 to 1048576");
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        Self::from_slot(crate::json::Slot::of(value))
    }

    /// Checks the keys (KEY-3) and that every limit is in range: 16 to
    /// 1,048,576 for a field, 64 to 1,048,576 for the envelope. Messages
    /// name the fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Policy;
    ///
    /// assert!(Policy::default().check().is_ok());
    /// let err = Policy { max_envelope_bytes: 32, ..Policy::default() }.check().unwrap_err();
    /// assert_eq!(err.to_string(), "policy `max_envelope_bytes` must be an integer from 64 to 1048576");
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        self.check_as(Naming::Rust)
    }

    /// [`Policy::check`], for a policy whose envelopes and `ui` entries are
    /// read under `entries` besides its own keys (a filter's vendor keys):
    /// no correlation key may be one of them either.
    pub(crate) fn check_reading(&self, naming: Naming, entries: &[String]) -> Result<(), Error> {
        self.keys.check_as(naming)?;
        let limits = [
            (MAX_REASON_BYTES, self.max_reason_bytes, FIELD_LIMITS),
            (MAX_INTENT_BYTES, self.max_intent_bytes, FIELD_LIMITS),
            (MAX_MODEL_BYTES, self.max_model_bytes, FIELD_LIMITS),
            (MAX_TURN_ID_BYTES, self.max_turn_id_bytes, FIELD_LIMITS),
            (MAX_ENVELOPE_BYTES, self.max_envelope_bytes, ENVELOPE_LIMITS),
        ];
        for (name, value, (low, high)) in limits {
            if !(low..=high).contains(&value) {
                return Err(Error::new(
                    Code::InvalidLimit,
                    format!(
                        "policy `{}` must be an integer from {low} to {high}",
                        name.get(naming)
                    ),
                ));
            }
        }
        self.check_correlation_keys(naming, entries)
    }

    /// The byte limit of the text of `field`.
    pub(crate) fn limit(&self, field: EnvelopeField) -> u32 {
        match field {
            EnvelopeField::InvocationReason => self.max_reason_bytes,
            EnvelopeField::Model => self.max_model_bytes,
            EnvelopeField::UserIntent => self.max_intent_bytes,
            EnvelopeField::TurnId => self.max_turn_id_bytes,
        }
    }

    /// What the policy does with `field`.
    pub(crate) fn handling(&self, field: EnvelopeField) -> Handling {
        let keep_or_drop = |policy| match policy {
            FieldPolicy::Keep => Handling::Keep,
            FieldPolicy::Drop => Handling::Drop,
        };
        match field {
            EnvelopeField::InvocationReason => keep_or_drop(self.invocation_reason),
            EnvelopeField::Model => keep_or_drop(self.model),
            EnvelopeField::UserIntent => match self.user_intent {
                IntentPolicy::Keep => Handling::Keep,
                IntentPolicy::Redact => Handling::Redact,
                IntentPolicy::Drop => Handling::Drop,
            },
            EnvelopeField::TurnId => Handling::Keep,
        }
    }

    /// Checks `correlation_keys` (COR-2): each a valid key of no one else's
    /// (nor one of `entries`), of a kind a client names, at most 64.
    /// Messages never quote a key.
    fn check_correlation_keys(&self, naming: Naming, entries: &[String]) -> Result<(), Error> {
        let option = CORRELATION_KEYS.get(naming);
        let invalid =
            |why: &str| Error::new(Code::InvalidOption, format!("policy `{option}` {why}"));
        if self.correlation_keys.len() > MAX_POLICY_KEYS {
            return Err(invalid("may name at most 64 keys"));
        }
        let read_already = |key: &str| {
            KNOWN_CORRELATION_SOURCES
                .iter()
                .any(|source| source.key == key)
                || EnvelopeField::ALL.iter().any(|field| field.name() == key)
                || [self.keys.invocation_key(), self.keys.ui_key()].contains(&key)
                || entries.iter().any(|entry| entry == key)
        };
        for (key, kind) in &self.correlation_keys {
            if !is_valid_meta_key(key) {
                return Err(Error::new(
                    Code::InvalidKey,
                    format!(
                        "policy `{option}` names a key that is not a valid _meta key name: expected [prefix/]name"
                    ),
                ));
            }
            if is_reserved_meta_key(key) {
                return Err(Error::new(
                    Code::ReservedKey,
                    format!(
                        "policy `{option}` names a key reserved for MCP; use a vendor-owned key"
                    ),
                ));
            }
            if read_already(key) {
                return Err(invalid(
                    "names a key another rule reads already (a known correlation key, an entry's key or a bare envelope field)",
                ));
            }
            if matches!(
                kind,
                CorrelationKind::Trace | CorrelationKind::ParentSpan | CorrelationKind::TraceFlags
            ) {
                return Err(invalid(
                    "gives a kind only `traceparent` holds; a key's kind is conversation, turn, request, user or organization",
                ));
            }
        }
        Ok(())
    }
}

/// `correlation_keys`: an object of `_meta` keys to kinds, sorted by key.
fn correlation_keys(options: &Options) -> Result<Vec<(String, CorrelationKind)>, Error> {
    let value = options.get(CORRELATION_KEYS);
    let wrong = || {
        Error::new(
            Code::InvalidOption,
            format!(
                "policy `{}` must be an object of `_meta` keys to kinds: conversation, turn, request, user or organization",
                CORRELATION_KEYS.get(options.naming())
            ),
        )
    };
    let Slot::Object(members) = value else {
        return match value {
            Slot::Absent => Ok(Vec::new()),
            _ => Err(wrong()),
        };
    };
    let mut keys = members
        .members()
        .map(|(key, kind)| {
            let kind = CorrelationKind::ALL
                .iter()
                .find(|known| Some(known.as_str()) == kind.str());
            kind.map(|kind| (key, *kind)).ok_or_else(wrong)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // In one order whatever order the options came in (a JS object's, or serde_json's).
    crate::json::sort_by_name(&mut keys);
    Ok(keys
        .into_iter()
        .map(|(key, kind)| (key.to_owned(), kind))
        .collect())
}

impl FromOptions for Policy {
    const WHAT: &'static str = "policy";
    const MEMBERS: &'static [Member] = &[
        Member::Inline(keys::KEYS),
        Member::Option(MAX_REASON_BYTES),
        Member::Option(MAX_INTENT_BYTES),
        Member::Option(MAX_MODEL_BYTES),
        Member::Option(MAX_TURN_ID_BYTES),
        Member::Option(MAX_ENVELOPE_BYTES),
        Member::Option(USER_INTENT),
        Member::Option(MODEL),
        Member::Option(INVOCATION_REASON),
        Member::Option(UNKNOWN_FIELDS),
        Member::Option(CORRELATION_KEYS),
    ];

    fn read(options: &Options) -> Result<Self, Error> {
        let keep_drop = [("keep", FieldPolicy::Keep), ("drop", FieldPolicy::Drop)];
        let intent = [
            ("keep", IntentPolicy::Keep),
            ("redact", IntentPolicy::Redact),
            ("drop", IntentPolicy::Drop),
        ];
        let default = Policy::default();
        Ok(Policy {
            keys: KeyOptions::inline(options)?,
            max_reason_bytes: options
                .limit(MAX_REASON_BYTES)?
                .unwrap_or(default.max_reason_bytes),
            max_intent_bytes: options
                .limit(MAX_INTENT_BYTES)?
                .unwrap_or(default.max_intent_bytes),
            max_model_bytes: options
                .limit(MAX_MODEL_BYTES)?
                .unwrap_or(default.max_model_bytes),
            max_turn_id_bytes: options
                .limit(MAX_TURN_ID_BYTES)?
                .unwrap_or(default.max_turn_id_bytes),
            max_envelope_bytes: options
                .limit(MAX_ENVELOPE_BYTES)?
                .unwrap_or(default.max_envelope_bytes),
            user_intent: options
                .choice(USER_INTENT, &intent)?
                .unwrap_or(default.user_intent),
            model: options.choice(MODEL, &keep_drop)?.unwrap_or(default.model),
            invocation_reason: options
                .choice(INVOCATION_REASON, &keep_drop)?
                .unwrap_or(default.invocation_reason),
            unknown_fields: options
                .choice(UNKNOWN_FIELDS, &keep_drop)?
                .unwrap_or(default.unknown_fields),
            correlation_keys: correlation_keys(options)?,
        })
    }

    fn check_as(&self, naming: Naming) -> Result<(), Error> {
        self.check_reading(naming, &[])
    }

    /// No options are the defaults, which hold: made without reading the
    /// table, since a binding's `sanitize` without a policy reads them on
    /// every call (reading them took 150 ns natively, making them 25).
    fn read_as(value: Slot<'_>, naming: Naming) -> Result<Self, Error> {
        match value {
            Slot::Absent | Slot::Null => Ok(Policy::default()),
            value => Self::from_options(&Options::new(value, Self::WHAT, Self::MEMBERS, naming)?),
        }
    }
}

options::deserialize_by_rust_names!(Policy);

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// No options (absent, or `null`) are what an empty object of them
    /// reads as, by either naming: the defaults.
    #[cfg(feature = "value")]
    #[test]
    fn no_options_are_an_empty_object_of_them() {
        let empty = serde_json::json!({});
        for naming in [Naming::Js, Naming::Rust] {
            let options = Options::new(Slot::of(&empty), Policy::WHAT, Policy::MEMBERS, naming);
            let read = Policy::from_options(&options.expect("options")).expect("a policy");
            assert_eq!(read, Policy::default());
            for none in [Slot::Absent, Slot::Null] {
                assert_eq!(Policy::read_as(none, naming).expect("a policy"), read);
            }
        }
    }
}
