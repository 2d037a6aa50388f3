//! What `sanitize` keeps, and how much of it.

use crate::correlation::{CorrelationKind, KNOWN_CORRELATION_SOURCES, MAX_POLICY_KEYS};
use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::Slot;
use crate::keys::{KeyOptions, is_reserved_meta_key, is_valid_meta_key};
use crate::options::{FromOptions, Options};
use crate::schema::EnvelopeField;

/// The range of every per-field limit, in UTF-8 bytes.
const FIELD_LIMITS: (u32, u32) = (16, 1_048_576);
/// The range of `max_envelope_bytes`.
const ENVELOPE_LIMITS: (u32, u32) = (64, 1_048_576);

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Which `_meta` keys hold the entries (KEY-3): `invocationKey`, `uiKey`.
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
    /// keys to kinds). Each is a valid vendor key, read by no other rule,
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
    /// Reads a policy from JSON with the JS field names (`null` for the
    /// default), and checks it.
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
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        Self::from_slot(crate::json::Slot::of(value))
    }

    /// Checks the keys (KEY-3) and that every limit is in range: 16 to
    /// 1,048,576 for a field, 64 to 1,048,576 for the envelope.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Policy;
    ///
    /// assert!(Policy::default().check().is_ok());
    /// let err = Policy { max_envelope_bytes: 32, ..Policy::default() }.check().unwrap_err();
    /// assert_eq!(err.to_string(), "policy `maxEnvelopeBytes` must be an integer from 64 to 1048576");
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        self.keys.check()?;
        let limits = [
            ("maxReasonBytes", self.max_reason_bytes, FIELD_LIMITS),
            ("maxIntentBytes", self.max_intent_bytes, FIELD_LIMITS),
            ("maxModelBytes", self.max_model_bytes, FIELD_LIMITS),
            ("maxTurnIdBytes", self.max_turn_id_bytes, FIELD_LIMITS),
            ("maxEnvelopeBytes", self.max_envelope_bytes, ENVELOPE_LIMITS),
        ];
        for (name, value, (low, high)) in limits {
            if !(low..=high).contains(&value) {
                return Err(Error::new(
                    Code::InvalidLimit,
                    format!("policy `{name}` must be an integer from {low} to {high}"),
                ));
            }
        }
        self.check_correlation_keys()
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

    /// Checks `correlation_keys` (COR-2): each a valid key of no one else's,
    /// of a kind a client names, at most 64. Messages never quote a key.
    fn check_correlation_keys(&self) -> Result<(), Error> {
        let invalid = |why: &str| {
            Error::new(
                Code::InvalidOption,
                format!("policy `correlationKeys` {why}"),
            )
        };
        if self.correlation_keys.len() > MAX_POLICY_KEYS {
            return Err(invalid("may name at most 64 keys"));
        }
        let read_already = |key: &str| {
            KNOWN_CORRELATION_SOURCES
                .iter()
                .any(|source| source.key == key)
                || EnvelopeField::ALL.iter().any(|field| field.name() == key)
                || [self.keys.invocation_key(), self.keys.ui_key()].contains(&key)
        };
        for (key, kind) in &self.correlation_keys {
            if !is_valid_meta_key(key) {
                return Err(Error::new(
                    Code::InvalidKey,
                    "policy `correlationKeys` names a key that is not a valid _meta key name: expected [prefix/]name",
                ));
            }
            if is_reserved_meta_key(key) {
                return Err(Error::new(
                    Code::ReservedKey,
                    "policy `correlationKeys` names a key reserved for MCP; use a vendor-owned key",
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

/// `correlationKeys`: an object of `_meta` keys to kinds, sorted by key.
fn correlation_keys(value: Slot) -> Result<Vec<(String, CorrelationKind)>, Error> {
    let wrong = || {
        Error::new(
            Code::InvalidOption,
            "policy `correlationKeys` must be an object of `_meta` keys to kinds: conversation, turn, request, user or organization",
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
    const NAMES: &'static [&'static str] = &[
        crate::keys::OPTIONS[0],
        crate::keys::OPTIONS[1],
        "maxReasonBytes",
        "maxIntentBytes",
        "maxModelBytes",
        "maxTurnIdBytes",
        "maxEnvelopeBytes",
        "userIntent",
        "model",
        "invocationReason",
        "unknownFields",
        crate::correlation::OPTION,
    ];

    /// Reads and checks a policy from its options.
    fn from_options(options: &Options) -> Result<Self, Error> {
        if options.is_empty() {
            return Ok(Policy::default());
        }
        let keep_drop = [("keep", FieldPolicy::Keep), ("drop", FieldPolicy::Drop)];
        let intent = [
            ("keep", IntentPolicy::Keep),
            ("redact", IntentPolicy::Redact),
            ("drop", IntentPolicy::Drop),
        ];
        let default = Policy::default();
        let policy = Policy {
            keys: KeyOptions::from_options(options)?,
            max_reason_bytes: options
                .limit("maxReasonBytes")?
                .unwrap_or(default.max_reason_bytes),
            max_intent_bytes: options
                .limit("maxIntentBytes")?
                .unwrap_or(default.max_intent_bytes),
            max_model_bytes: options
                .limit("maxModelBytes")?
                .unwrap_or(default.max_model_bytes),
            max_turn_id_bytes: options
                .limit("maxTurnIdBytes")?
                .unwrap_or(default.max_turn_id_bytes),
            max_envelope_bytes: options
                .limit("maxEnvelopeBytes")?
                .unwrap_or(default.max_envelope_bytes),
            user_intent: options
                .choice("userIntent", &intent)?
                .unwrap_or(default.user_intent),
            model: options
                .choice("model", &keep_drop)?
                .unwrap_or(default.model),
            invocation_reason: options
                .choice("invocationReason", &keep_drop)?
                .unwrap_or(default.invocation_reason),
            unknown_fields: options
                .choice("unknownFields", &keep_drop)?
                .unwrap_or(default.unknown_fields),
            correlation_keys: correlation_keys(options.get(crate::correlation::OPTION))?,
        };
        policy.check()?;
        Ok(policy)
    }
}
