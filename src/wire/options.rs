//! The options of a wire filter and of a middleware, bound once, and what
//! a gateway knows of each body it filters.

use super::parse::{Keys, Parser};
use crate::audit::{self, AuditContext};
use crate::diagnostics::Code;
use crate::error::Error;
use crate::json::Slot;
use crate::keys::{AI_INVOCATION_KEY, KeyOptions, UI_KEY};
use crate::message::{self, Unreadable};
use crate::options::{self, FromOptions, Inline, Member, Name, Naming, Options};
use crate::policy::Policy;

/// Options, or a context, a binding hands over as JSON text (a plain copy
/// its runtime made, `None` for none given), read by the core's own parser
/// and handed to `read` as a slot: the npm filter module reads no
/// `serde_json::Value`. Text that is not one JSON value, nests deeper than a
/// value a binding reads, or repeats a member is `unreadable`.
pub(crate) fn read_json<T>(
    text: Option<&str>,
    read: impl FnOnce(Slot<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    let Some(text) = text else {
        return read(Slot::Absent);
    };
    let keys = Keys {
        invocation: Vec::new(),
        ui: Vec::new(),
    };
    let unreadable = |what: &'static str| {
        Unreadable {
            path: String::new(),
            what: what.into(),
        }
        .error()
    };
    let parsed = Parser::new(&keys, message::MAX_DEPTH, 0)
        .whole(text)
        .map_err(|_| unreadable("text that is not one JSON value"))?;
    match parsed.fault {
        None => read(parsed.doc.slot(&parsed.root)),
        Some(super::parse::Fault::TooDeep) => Err(unreadable("nesting too deep")),
        Some(super::parse::Fault::Duplicate) => Err(unreadable("a member named twice")),
    }
}

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
///
/// // Or deserialized by the field names (feature `value`), and checked.
/// let options: FilterOptions = serde_json::from_str(r#"{"policy": {"user_intent": "redact"}, "invocation_keys": ["com.example/ai"]}"#)?;
/// assert_eq!(options.invocation_keys, ["com.example/ai"]);
/// let err = serde_json::from_str::<FilterOptions>(r#"{"max_depth": 4}"#).unwrap_err();
/// assert_eq!(err.to_string(), "filter option `max_depth` must be an integer from 8 to 4096");
/// # Ok::<(), serde_json::Error>(())
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

// The options of a filter, by their two names.
const POLICY: Name = Name::new("policy", "policy");
const LIFT_LEGACY: Name = Name::new("lift_legacy", "liftLegacy");
const INVOCATION_KEYS: Name = Name::new("invocation_keys", "invocationKeys");
const UI_KEYS: Name = Name::new("ui_keys", "uiKeys");
const MAX_BATCH: Name = Name::new("max_batch", "maxBatch");
const MAX_DEPTH: Name = Name::new("max_depth", "maxDepth");
const AUDIT_ARGUMENTS: Name = Name::new("audit_arguments", "auditArguments");
/// A middleware's filter: the field `filter` in Rust, in JS its options
/// beside the middleware's own.
const FILTER: Inline = Inline {
    rust: "filter",
    what: FilterOptions::WHAT,
    members: FilterOptions::MEMBERS,
};

/// The members of a filter's policy: a policy's options, not its keys (the
/// filter's are its own, `invocation_keys` and `ui_keys`).
fn policy_options() -> Vec<Member> {
    let options = Policy::MEMBERS.iter().copied();
    options
        .filter(|member| matches!(member, Member::Option(_)))
        .collect()
}

/// Refuses options that hold a policy option outside `policy`, with a
/// hint: the policy one level too high would otherwise be a policy silently
/// not in force.
fn misplaced(value: Slot<'_>, naming: Naming) -> Result<(), Error> {
    let mut names = Vec::new();
    options::names(&policy_options(), naming, &mut names);
    let misplaced = value
        .tree()
        .members()
        .find(|(name, _)| names.contains(name));
    match (value, misplaced) {
        (Slot::Object(_), Some((name, _))) => Err(Error::new(
            Code::UnknownOption,
            format!("filter options have no option `{name}`: policy options go in `policy`"),
        )),
        _ => Ok(()),
    }
}

impl FromOptions for FilterOptions {
    const WHAT: &'static str = "filter options";
    const MEMBERS: &'static [Member] = &[
        Member::Option(POLICY),
        Member::Option(LIFT_LEGACY),
        Member::Option(INVOCATION_KEYS),
        Member::Option(UI_KEYS),
        Member::Option(MAX_BATCH),
        Member::Option(MAX_DEPTH),
        Member::Option(AUDIT_ARGUMENTS),
    ];

    fn read(options: &Options) -> Result<Self, Error> {
        let default = FilterOptions::default();
        let policy = match options.get(POLICY) {
            Slot::Absent => None,
            slot => Some(Policy::from_options(&Options::new(
                slot,
                "filter policy",
                &policy_options(),
                options.naming(),
            )?)?),
        };
        Ok(FilterOptions {
            policy,
            lift_legacy: options.boolean(LIFT_LEGACY)?.unwrap_or(false),
            invocation_keys: options.strings(INVOCATION_KEYS)?.unwrap_or_default(),
            ui_keys: options.strings(UI_KEYS)?.unwrap_or_default(),
            max_batch: options.limit(MAX_BATCH)?.unwrap_or(default.max_batch),
            max_depth: options.limit(MAX_DEPTH)?.unwrap_or(default.max_depth),
            audit_arguments: options
                .choice(AUDIT_ARGUMENTS, &AuditArguments::CHOICES)?
                .unwrap_or_default(),
        })
    }

    fn check_as(&self, naming: Naming) -> Result<(), Error> {
        self.check(naming).map(drop)
    }

    /// Refuses a policy option outside `policy` before anything else.
    fn read_as(value: Slot<'_>, naming: Naming) -> Result<Self, Error> {
        misplaced(value, naming)?;
        Self::from_options(&Options::new(value, Self::WHAT, Self::MEMBERS, naming)?)
    }
}

options::deserialize_by_rust_names!(FilterOptions);

/// What a gateway knows of a body it filters: recorded as witnessed.
///
/// # Examples
///
/// ```
/// use mcp_provenance::FilterContext;
///
/// let context = FilterContext { session_id: Some("s-1".into()), ..FilterContext::default() };
/// assert_eq!(context.session_id.as_deref(), Some("s-1"));
///
/// // Or deserialized by the field names (feature `value`): headers as an object.
/// let context: FilterContext = serde_json::from_str(r#"{"session_id": "s-1", "headers": {"content-type": "application/json"}}"#)?;
/// assert_eq!(context.headers.as_deref(), Some(&[("content-type".to_owned(), "application/json".to_owned())][..]));
/// # Ok::<(), serde_json::Error>(())
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
    /// Reads a context from JSON with the JS names (`null` for none);
    /// messages name the options as JS does.
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

/// The request's headers, in a filter's context.
const HEADERS: Name = Name::new("headers", "headers");

impl FromOptions for FilterContext {
    const WHAT: &'static str = "filter context";
    const MEMBERS: &'static [Member] = &[
        Member::Option(audit::RECEIVED_AT),
        Member::Option(audit::PRINCIPAL),
        Member::Option(audit::SESSION_ID),
        Member::Option(HEADERS),
    ];

    /// What it shares with an audit context, read as that is; then the headers.
    fn read(options: &Options) -> Result<Self, Error> {
        let AuditContext {
            received_at,
            principal,
            session_id,
            ..
        } = AuditContext::read(options)?;
        Ok(FilterContext {
            received_at,
            principal,
            session_id,
            headers: options.pairs(HEADERS)?,
        })
    }
}

options::deserialize_by_rust_names!(FilterContext);

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
    /// Checks the options, naming them as `naming` says; the keys the
    /// filter reads. No key the filter reads an entry under may be one its
    /// policy reads correlation ids from: the policy's own check knows only
    /// the policy's keys, which in a filter are the defaults, and such a
    /// key, read as an entry, was never read as a correlation id.
    pub(super) fn check(&self, naming: Naming) -> Result<Keys, Error> {
        let invocation = keys_of(AI_INVOCATION_KEY, &self.invocation_keys);
        let ui = keys_of(UI_KEY, &self.ui_keys);
        if let Some(policy) = &self.policy {
            if policy.keys != KeyOptions::default() {
                return Err(Error::new(
                    Code::UnknownOption,
                    format!(
                        "a filter's policy holds no keys: the filter's keys are `{}` and `{}`",
                        INVOCATION_KEYS.get(naming),
                        UI_KEYS.get(naming)
                    ),
                ));
            }
            let entries: Vec<String> = invocation.iter().chain(&ui).cloned().collect();
            policy.check_reading(naming, &entries)?;
        }
        for (name, value, (low, high)) in [
            (MAX_BATCH, self.max_batch, BATCH_LIMITS),
            (MAX_DEPTH, self.max_depth, DEPTH_LIMITS),
        ] {
            if !(low..=high).contains(&value) {
                return Err(Error::new(
                    Code::InvalidLimit,
                    format!(
                        "filter option `{}` must be an integer from {low} to {high}",
                        name.get(naming)
                    ),
                ));
            }
        }
        for key in invocation.iter().skip(1) {
            KeyOptions {
                invocation_key: Some(key.clone()),
                ui_key: None,
            }
            .check_as(naming)?;
        }
        for key in ui.iter().skip(1) {
            KeyOptions {
                invocation_key: None,
                ui_key: Some(key.clone()),
            }
            .check_as(naming)?;
        }
        if invocation.iter().any(|key| ui.contains(key)) {
            return Err(Error::new(
                Code::ConflictingKeys,
                format!(
                    "options `{}` and `{}` name the same key; the two entries need keys of their own",
                    INVOCATION_KEYS.get(naming),
                    UI_KEYS.get(naming)
                ),
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
///
/// // Or deserialized by the field names (feature `value`): the filter's in `filter`.
/// let options: GatewayOptions = serde_json::from_str(r#"{"filter": {"lift_legacy": true}, "paths": ["/mcp"]}"#)?;
/// assert!(options.filter.lift_legacy);
/// let err = serde_json::from_str::<GatewayOptions>(r#"{"max_sessions": 0}"#).unwrap_err();
/// assert_eq!(err.to_string(), "option `max_sessions` must be a positive integer");
/// # Ok::<(), serde_json::Error>(())
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

// The middleware's own options, by their two names.
const ECHO: Name = Name::new("echo", "echo");
const MAX_BODY_BYTES: Name = Name::new("max_body_bytes", "maxBodyBytes");
const MAX_ANSWER_BYTES: Name = Name::new("max_answer_bytes", "maxAnswerBytes");
const MAX_SESSIONS: Name = Name::new("max_sessions", "maxSessions");
const PATHS: Name = Name::new("paths", "paths");

/// Each path begins with `/`.
fn check_paths(paths: Option<&[String]>, naming: Naming) -> Result<(), Error> {
    for (index, path) in paths.unwrap_or_default().iter().enumerate() {
        if !path.starts_with('/') {
            return Err(Error::new(
                Code::InvalidOption,
                format!(
                    "option `{}[{index}]` must begin with \"/\"",
                    PATHS.get(naming)
                ),
            ));
        }
    }
    Ok(())
}

/// A bound of the middleware's own is positive.
fn positive(name: Name, value: u32, naming: Naming) -> Result<u32, Error> {
    match value {
        0 => Err(Error::new(
            Code::InvalidLimit,
            format!("option `{}` must be a positive integer", name.get(naming)),
        )),
        value => Ok(value),
    }
}

impl GatewayOptions {
    /// Checks the middleware's own options (its filter's are the filter's
    /// to check), naming them as `naming` says.
    pub(super) fn check_own(&self, naming: Naming) -> Result<(), Error> {
        check_paths(self.paths.as_deref(), naming)?;
        for (name, value) in [
            (MAX_BODY_BYTES, self.max_body_bytes),
            (MAX_ANSWER_BYTES, self.max_answer_bytes),
            (MAX_SESSIONS, self.max_sessions),
        ] {
            positive(name, value, naming)?;
        }
        Ok(())
    }
}

impl FromOptions for GatewayOptions {
    const WHAT: &'static str = "middleware options";
    const MEMBERS: &'static [Member] = &[
        Member::Inline(FILTER),
        Member::Option(ECHO),
        Member::Option(MAX_BODY_BYTES),
        Member::Option(MAX_ANSWER_BYTES),
        Member::Option(MAX_SESSIONS),
        Member::Option(PATHS),
    ];

    /// Reads the options: in JS the filter's and the middleware's own in
    /// one object. The paths are checked first and each bound as it is
    /// read, in the order JS and Python have always been answered in.
    fn read(options: &Options) -> Result<Self, Error> {
        let naming = options.naming();
        let default = GatewayOptions::default();
        let bound = |name: Name, default: u32| {
            positive(name, options.limit(name)?.unwrap_or(default), naming)
        };
        let paths = options.strings(PATHS)?;
        check_paths(paths.as_deref(), naming)?;
        Ok(GatewayOptions {
            filter: FilterOptions::read(&options.inline(FILTER)?)?,
            echo: options.boolean(ECHO)?.unwrap_or(default.echo),
            max_body_bytes: bound(MAX_BODY_BYTES, default.max_body_bytes)?,
            max_answer_bytes: bound(MAX_ANSWER_BYTES, default.max_answer_bytes)?,
            max_sessions: bound(MAX_SESSIONS, default.max_sessions)?,
            paths,
        })
    }

    fn check_as(&self, naming: Naming) -> Result<(), Error> {
        self.check_own(naming)?;
        self.filter.check(naming).map(drop)
    }

    /// Refuses a policy option outside `policy` before anything else.
    fn read_as(value: Slot<'_>, naming: Naming) -> Result<Self, Error> {
        misplaced(value, naming)?;
        Self::from_options(&Options::new(value, Self::WHAT, Self::MEMBERS, naming)?)
    }
}

options::deserialize_by_rust_names!(GatewayOptions);
