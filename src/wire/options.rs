//! The options of a wire filter and of a middleware, bound once, and what
//! a gateway knows of each body it filters.

use super::parse::Keys;
use crate::audit::AuditContext;
use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::Slot;
use crate::keys::{AI_INVOCATION_KEY, KeyOptions, UI_KEY};
use crate::options::{FromOptions, Options};
use crate::policy::Policy;

/// The range of `maxBatch`.
const BATCH_LIMITS: (u32, u32) = (1, 100_000);
/// The range of `maxDepth`.
const DEPTH_LIMITS: (u32, u32) = (8, 4096);

/// How a [`Filter`](crate::Filter) treats each body.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{AuditArguments, FilterOptions};
///
/// let options = FilterOptions::default();
/// assert_eq!((options.max_batch, options.max_depth), (1000, 128));
/// assert!(options.policy.is_none() && options.invocation_keys.is_empty());
/// assert_eq!(options.audit_arguments, AuditArguments::Keep);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterOptions {
    /// Sanitize every envelope under this policy (its keys stay at the
    /// defaults, else `unknown-option`: the filter's keys are
    /// `invocation_keys` and `ui_keys`).
    /// Without one, a valid envelope goes on untouched (AI-12) and an invalid
    /// one as `sanitize` repairs it under the default policy.
    pub policy: Option<Policy>,
    /// Lift legacy `user_query` / `invocation_reason` arguments into the
    /// standard envelope, removing them from `arguments` (AI-17).
    pub lift_legacy: bool,
    /// Vendor keys of envelopes, read besides the standard one (KEY-3).
    pub invocation_keys: Vec<String>,
    /// Vendor keys of `ui` entries, read besides the standard one (KEY-3).
    pub ui_keys: Vec<String>,
    /// The most messages a batch may hold (WIRE-4); 1 to 100,000, default 1,000.
    pub max_batch: u32,
    /// The deepest a message may nest (WIRE-4); 8 to 4,096, default 128,
    /// where `serde_json` stops.
    pub max_depth: u32,
    /// What each audit line holds of its message's `params.arguments`
    /// (`auditArguments`, WIRE-9): the line alone, never the record or what
    /// goes on.
    pub audit_arguments: AuditArguments,
}

/// What an audit line ([`Outcome::lines`](crate::Outcome::lines)) holds of
/// a message's `params.arguments` (WIRE-9), whatever its method
/// (`tools/call`, `prompts/get`, any other). A line that left them out
/// says how, in its member `auditArguments`; the message's account, its
/// audit record and what goes on are the same under every choice.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{AuditArguments, Filter, FilterContext, FilterOptions};
///
/// let body = br#"{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"card":"4111 1111 1111 1111"}}}"#;
/// let filter = Filter::new(FilterOptions { audit_arguments: AuditArguments::Drop, ..FilterOptions::default() })?;
/// let outcome = filter.filter(body, &FilterContext::default());
/// assert!(outcome.lines()[0].starts_with(r#"{"message":{"id":1,"method":"tools/call","params":{"name":"pay"}},"auditArguments":"drop","kind":"request""#));
///
/// let filter = Filter::new(FilterOptions { audit_arguments: AuditArguments::Digest, ..FilterOptions::default() })?;
/// let outcome = filter.filter(body, &FilterContext::default());
/// assert!(outcome.lines()[0].starts_with(r#"{"message":{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"sha256":"46c7b2a83d911587b42ddcce2be8caab6271bc4b71ac0093d3271eee237271f7","bytes":30}}},"auditArguments":"digest","kind""#));
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuditArguments {
    /// The message whole, as it goes on (`"keep"`, the default).
    #[default]
    Keep,
    /// Each `arguments` member of `params` replaced by `{"sha256": …,
    /// "bytes": …}`: the SHA-256 (lowercase hex) and the length in bytes of
    /// its JSON text as it goes on (`"digest"`), so that the arguments a
    /// server got can be matched, and nothing of them read.
    Digest,
    /// Each `arguments` member of `params` left out (`"drop"`).
    Drop,
}

impl AuditArguments {
    /// The choices, by their JS names.
    const CHOICES: [(&'static str, AuditArguments); 3] = [
        ("keep", AuditArguments::Keep),
        ("digest", AuditArguments::Digest),
        ("drop", AuditArguments::Drop),
    ];

    /// Its JS name, as a line's `auditArguments` names it.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mcp_provenance::AuditArguments::Digest.as_str(), "digest");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            AuditArguments::Keep => "keep",
            AuditArguments::Digest => "digest",
            AuditArguments::Drop => "drop",
        }
    }
}

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions {
            policy: None,
            lift_legacy: false,
            invocation_keys: Vec::new(),
            ui_keys: Vec::new(),
            max_batch: 1000,
            max_depth: 128,
            audit_arguments: AuditArguments::Keep,
        }
    }
}

/// The names of a policy's options inside the filter's `policy`: all but the keys.
fn policy_names() -> &'static [&'static str] {
    Policy::NAMES.get(2..).unwrap_or_default()
}

impl FilterOptions {
    /// Reads the options from their JS names. A policy option outside
    /// `policy` is refused with a hint: the policy one level too high would
    /// otherwise be a policy silently not in force.
    #[cfg(feature = "value")]
    pub(crate) fn from_slot(value: Slot<'_>) -> Result<Self, Error> {
        Self::misplaced(value)?;
        Self::from_options(&Options::new(value, Self::WHAT, Self::NAMES)?)
    }

    /// Refuses options holding a policy option outside `policy`.
    #[cfg(feature = "value")]
    pub(super) fn misplaced(value: Slot<'_>) -> Result<(), Error> {
        let misplaced = value
            .tree()
            .members()
            .find(|(name, _)| policy_names().contains(name));
        match (value, misplaced) {
            (Slot::Object(_), Some((name, _))) => Err(Error::new(
                Code::UnknownOption,
                format!("filter options have no option `{name}`: policy options go in `policy`"),
            )),
            _ => Ok(()),
        }
    }

    /// Checks that the bounds are in range.
    pub(crate) fn check_limits(&self) -> Result<(), Error> {
        for (name, value, (low, high)) in [
            ("maxBatch", self.max_batch, BATCH_LIMITS),
            ("maxDepth", self.max_depth, DEPTH_LIMITS),
        ] {
            if !(low..=high).contains(&value) {
                return Err(Error::new(
                    Code::InvalidLimit,
                    format!("filter option `{name}` must be an integer from {low} to {high}"),
                ));
            }
        }
        Ok(())
    }
}

impl FromOptions for FilterOptions {
    const WHAT: &'static str = "filter options";
    const NAMES: &'static [&'static str] = &[
        "policy",
        "liftLegacy",
        "invocationKeys",
        "uiKeys",
        "maxBatch",
        "maxDepth",
        "auditArguments",
    ];

    fn from_options(options: &Options) -> Result<Self, Error> {
        let default = FilterOptions::default();
        let policy = match options.get("policy") {
            Slot::Absent => None,
            slot => Some(Policy::from_options(&Options::new(
                slot,
                "filter policy",
                policy_names(),
            )?)?),
        };
        Ok(FilterOptions {
            policy,
            lift_legacy: options.boolean("liftLegacy")?.unwrap_or(false),
            invocation_keys: options.strings("invocationKeys")?.unwrap_or_default(),
            ui_keys: options.strings("uiKeys")?.unwrap_or_default(),
            max_batch: options.limit("maxBatch")?.unwrap_or(default.max_batch),
            max_depth: options.limit("maxDepth")?.unwrap_or(default.max_depth),
            audit_arguments: options
                .choice("auditArguments", &AuditArguments::CHOICES)?
                .unwrap_or_default(),
        })
    }
}

/// What a gateway knows of a body it filters: recorded as witnessed.
///
/// # Examples
///
/// ```
/// use mcp_provenance::FilterContext;
///
/// let context = FilterContext { session_id: Some("s-1".into()), ..FilterContext::default() };
/// assert_eq!(context.session_id.as_deref(), Some("s-1"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilterContext {
    /// When the body arrived (`receivedAt`).
    pub received_at: Option<String>,
    /// Who sent it, as the gateway authenticated them.
    pub principal: Option<String>,
    /// The transport session (`sessionId`).
    pub session_id: Option<String>,
    /// The request's HTTP headers (`headers`), as (name, value) pairs, names
    /// in any case. Given, they are checked before the body is read: a body
    /// a server would decode as anything but UTF-8 JSON (a `charset`, a
    /// `Content-Encoding`, another or no `Content-Type`) is refused with 415
    /// (WIRE-2). The filter reads no other header.
    pub headers: Option<Vec<(String, String)>>,
}

impl FilterContext {
    /// Reads a context from JSON with the JS names (`null` for none).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, FilterContext};
    /// use serde_json::json;
    ///
    /// let err = FilterContext::from_value(&json!({"policy": {}})).unwrap_err();
    /// assert_eq!(err.code(), Code::UnknownOption);
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        Self::from_slot(Slot::of(value))
    }
}

impl FromOptions for FilterContext {
    const WHAT: &'static str = "filter context";
    const NAMES: &'static [&'static str] = &["receivedAt", "principal", "sessionId", "headers"];

    fn from_options(options: &Options) -> Result<Self, Error> {
        let AuditContext {
            received_at,
            principal,
            session_id,
            ..
        } = AuditContext::from_options(options)?;
        Ok(FilterContext {
            received_at,
            principal,
            session_id,
            headers: options.pairs("headers")?,
        })
    }
}

/// The key of a kind of `_meta` entry in the list the filter reads: the
/// standard one first, then the vendor keys, each once.
fn keys_of(standard: &str, vendor: &[String]) -> Vec<String> {
    let mut keys = vec![standard.to_owned()];
    for key in vendor {
        if !keys.contains(key) {
            keys.push(key.clone());
        }
    }
    keys
}

impl FilterOptions {
    /// Checks the options; the keys the filter reads.
    pub(super) fn check(&self) -> Result<Keys, Error> {
        if let Some(policy) = &self.policy {
            if policy.keys != KeyOptions::default() {
                return Err(Error::new(
                    Code::UnknownOption,
                    "a filter's policy holds no keys: the filter's keys are `invocationKeys` and `uiKeys`",
                ));
            }
            policy.check()?;
        }
        self.check_limits()?;
        let invocation = keys_of(AI_INVOCATION_KEY, &self.invocation_keys);
        let ui = keys_of(UI_KEY, &self.ui_keys);
        for key in invocation.iter().skip(1) {
            KeyOptions {
                invocation_key: Some(key.clone()),
                ui_key: None,
            }
            .check()?;
        }
        for key in ui.iter().skip(1) {
            KeyOptions {
                invocation_key: None,
                ui_key: Some(key.clone()),
            }
            .check()?;
        }
        if invocation.iter().any(|key| ui.contains(key)) {
            return Err(Error::new(
                Code::ConflictingKeys,
                "options `invocationKeys` and `uiKeys` name the same key; the two entries need keys of their own",
            ));
        }
        Ok(Keys { invocation, ui })
    }
}

/// How a [`Gateway`](super::Gateway) treats each exchange, besides its filter's options.
///
/// # Examples
///
/// ```
/// use mcp_provenance::GatewayOptions;
///
/// let options = GatewayOptions::default();
/// assert!(options.echo && options.paths.is_none());
/// assert_eq!((options.max_body_bytes, options.max_answer_bytes, options.max_sessions), (1 << 20, 16 << 20, 10_000));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayOptions {
    /// The filter's options.
    pub filter: FilterOptions,
    /// Whether results carry their request's `turnId` back (AI-11), and
    /// nothing else of an envelope; `false` leaves answers as the app made
    /// them (an intermediary's choice), the filter's replies still joined.
    pub echo: bool,
    /// The most bytes of a request body read; past it, 413 (`maxBodyBytes`).
    pub max_body_bytes: u32,
    /// The most bytes of a JSON answer, or of one event, held to echo into (`maxAnswerBytes`).
    pub max_answer_bytes: u32,
    /// The most session ids remembered (`maxSessions`).
    pub max_sessions: u32,
    /// The MCP endpoints, as the app routes them (`paths`): each begins with
    /// `/`, `*` stands for one segment, a trailing slash is the same path,
    /// and every path below one is the app's too (a mount serves it). `None`
    /// watches every path.
    pub paths: Option<Vec<String>>,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            filter: FilterOptions::default(),
            echo: true,
            max_body_bytes: 1 << 20,
            max_answer_bytes: 16 << 20,
            max_sessions: 10_000,
            paths: None,
        }
    }
}

/// The middleware's own option names; the filter's are beside them.
#[cfg(feature = "value")]
const OWN_NAMES: [&str; 5] = [
    "echo",
    "maxBodyBytes",
    "maxAnswerBytes",
    "maxSessions",
    "paths",
];

impl GatewayOptions {
    /// Reads the options from their JS names: the filter's and the
    /// middleware's own, in one object.
    #[cfg(feature = "value")]
    pub(crate) fn from_slot(value: Slot<'_>) -> Result<Self, Error> {
        FilterOptions::misplaced(value)?;
        let names: Vec<&str> = FilterOptions::NAMES
            .iter()
            .copied()
            .chain(OWN_NAMES)
            .collect();
        let options = Options::new(value, "middleware options", &names)?;
        let default = GatewayOptions::default();
        let positive = |name: &str, value: Option<u32>, default: u32| match value {
            None => Ok(default),
            Some(0) => Err(Error::new(
                Code::InvalidLimit,
                format!("option `{name}` must be a positive integer"),
            )),
            Some(value) => Ok(value),
        };
        let paths = options.strings("paths")?;
        for (index, path) in paths.iter().flatten().enumerate() {
            if !path.starts_with('/') {
                return Err(Error::new(
                    Code::InvalidOption,
                    format!("option `paths[{index}]` must begin with \"/\""),
                ));
            }
        }
        Ok(GatewayOptions {
            filter: FilterOptions::from_options(&options)?,
            echo: options.boolean("echo")?.unwrap_or(default.echo),
            max_body_bytes: positive(
                "maxBodyBytes",
                options.limit("maxBodyBytes")?,
                default.max_body_bytes,
            )?,
            max_answer_bytes: positive(
                "maxAnswerBytes",
                options.limit("maxAnswerBytes")?,
                default.max_answer_bytes,
            )?,
            max_sessions: positive(
                "maxSessions",
                options.limit("maxSessions")?,
                default.max_sessions,
            )?,
            paths,
        })
    }
}
