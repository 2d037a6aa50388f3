//! The layer: a gateway, an audit sink and a principal, bound once; what
//! the sink is handed, and the error it fails with.

use std::fmt;
use std::sync::Arc;

use http::request::Parts;
use serde::Serialize;

use crate::error::Error;
use crate::wire::{ExchangeOutcome, Gateway, GatewayOptions, Outcome, Own, Seen};

/// The audit sink: each account and its log line.
pub(super) type Sink = dyn Fn(Account<'_>, &str) -> Result<(), AuditError> + Send + Sync;

/// What the audit sink is handed, with its line: the account of each
/// message of a body, before the service reads it; then, once the answer
/// is over, the exchange's outcome (`kind` `"outcome"`: the status sent,
/// what each request got). Serialized, it is the account as its line has
/// it (less a message's text).
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Account, AuditError, Gateway, ProvenanceLayer};
///
/// let layer = ProvenanceLayer::from(Gateway::new(Default::default())?).audit(|account, line| {
///     match account {
///         Account::Message(seen) if seen.record.is_none() => println!("unread: {line}"),
///         Account::Message(_) => println!("{line}"),
///         // After the answer: a request the service refused reads as an error, its code given.
///         Account::Outcome(outcome) => println!("{} request(s) answered: {line}", outcome.requests.len()),
///         // Accounts of kinds a later version adds: kept as their lines.
///         _ => println!("{line}"),
///     }
///     Ok::<(), AuditError>(())
/// });
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Account<'a> {
    /// One message of a body, as the filter saw it.
    Message(&'a Seen),
    /// What became of the exchange once its answer was over.
    Outcome(&'a ExchangeOutcome),
}
/// Who sent a request, as the stack authenticated them.
pub(super) type Principal = dyn Fn(&Parts) -> Option<String> + Send + Sync;

/// Why the audit sink could not keep a body's accounts: a code, which each
/// request's error names as `data.code` (at most 64 characters of it, made
/// safe for a log line). Its text is the code alone: a sink's own failure may
/// quote what it was writing, an intent among it.
///
/// # Examples
///
/// ```
/// use mcp_provenance::AuditError;
///
/// assert_eq!(AuditError::new("store-down").code(), "store-down");
/// let failed: AuditError = std::io::Error::other("disk full").into();
/// assert_eq!(failed.to_string(), "the audit sink failed: audit-failed");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditError {
    code: String,
}

impl AuditError {
    /// A failure with `code` (kebab-case, by custom).
    pub fn new(code: impl Into<String>) -> Self {
        AuditError { code: code.into() }
    }

    /// Its code.
    pub fn code(&self) -> &str {
        &self.code
    }
}

impl Default for AuditError {
    /// `audit-failed`, the code of a sink that gives none.
    fn default() -> Self {
        AuditError::new(Own::AuditFailed.code())
    }
}

impl fmt::Display for AuditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the audit sink failed: {}", self.code)
    }
}

impl std::error::Error for AuditError {}

impl From<std::io::Error> for AuditError {
    /// A sink that writes a file fails with `audit-failed`.
    fn from(_: std::io::Error) -> Self {
        AuditError::default()
    }
}

/// The middleware, as a [`tower_layer::Layer`]: a [`Gateway`] (its filter,
/// options and the sessions the service issued, shared by every clone), an
/// optional audit sink and an optional principal. See the [module's
/// documentation](super).
#[derive(Clone)]
pub struct ProvenanceLayer {
    pub(super) gateway: Gateway,
    pub(super) audit: Option<Arc<Sink>>,
    pub(super) principal: Option<Arc<Principal>>,
}

impl fmt::Debug for ProvenanceLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProvenanceLayer")
            // Its options: the sessions it remembers are no one's to print.
            .field("options", self.gateway.options())
            .field("audit", &self.audit.is_some())
            .field("principal", &self.principal.is_some())
            .finish()
    }
}

impl From<Gateway> for ProvenanceLayer {
    fn from(gateway: Gateway) -> Self {
        ProvenanceLayer::new(gateway)
    }
}

impl ProvenanceLayer {
    /// The layer of `gateway`, with no audit sink and no principal.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Gateway, GatewayOptions, ProvenanceLayer};
    ///
    /// let gateway = Gateway::new(GatewayOptions { paths: Some(vec!["/mcp".into()]), ..GatewayOptions::default() })?;
    /// let layer = ProvenanceLayer::new(gateway);
    /// assert_eq!(layer.gateway().options().paths.as_deref(), Some(&["/mcp".to_owned()][..]));
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn new(gateway: Gateway) -> Self {
        ProvenanceLayer {
            gateway,
            audit: None,
            principal: None,
        }
    }

    /// The layer of a gateway with `options`.
    ///
    /// # Errors
    ///
    /// Those of [`Gateway::new`]: options out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, FilterOptions, GatewayOptions, ProvenanceLayer};
    ///
    /// let filter = FilterOptions { max_depth: 4, ..FilterOptions::default() };
    /// let err = ProvenanceLayer::with_options(GatewayOptions { filter, ..GatewayOptions::default() }).unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidLimit);
    /// ```
    pub fn with_options(options: GatewayOptions) -> Result<Self, Error> {
        Gateway::new(options).map(ProvenanceLayer::new)
    }

    /// The layer of a gateway with options by their JS names, as every
    /// runtime reads them (`{"policy": {"userIntent": "redact"}, "paths": ["/mcp"]}`).
    ///
    /// # Errors
    ///
    /// Those of [`Gateway::from_value`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::ProvenanceLayer;
    /// use serde_json::json;
    ///
    /// let err = ProvenanceLayer::from_value(&json!({"userIntent": "redact"})).unwrap_err();
    /// assert_eq!(err.to_string(), "filter options have no option `userIntent`: policy options go in `policy`");
    /// ```
    #[cfg(feature = "value")]
    #[cfg_attr(docsrs, doc(cfg(feature = "value")))]
    pub fn from_value(options: &serde_json::Value) -> Result<Self, Error> {
        Gateway::from_value(options).map(ProvenanceLayer::new)
    }

    /// With an audit sink: called with each message's account and its log
    /// line (one line of JSON, [`Outcome::lines`]) before the service reads
    /// the body. When it fails, nothing goes on: each request of the body
    /// is answered JSON-RPC -32603, `data.code` the failure's code (a body
    /// the filter refused keeps its refusal). Once the answer to a body is
    /// over (sent, or dropped: the client gone), it is called once more
    /// with the exchange's outcome ([`Account::Outcome`]); the answer is
    /// gone by then, so a failure there changes nothing but a line on stderr.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Account, AuditError, Gateway, ProvenanceLayer};
    ///
    /// let layer = ProvenanceLayer::from(Gateway::new(Default::default())?)
    ///     .audit(|account, line| match account {
    ///         Account::Message(seen) if seen.record.is_none() => Err(AuditError::new("no-record")),
    ///         _ => Ok(println!("{line}")),
    ///     });
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    #[must_use]
    pub fn audit<F>(mut self, sink: F) -> Self
    where
        F: Fn(Account<'_>, &str) -> Result<(), AuditError> + Send + Sync + 'static,
    {
        self.audit = Some(Arc::new(sink));
        self
    }

    /// With a principal: who sent a request, as the stack authenticated
    /// them (an extension an authentication layer put in the request's
    /// `parts`), recorded as `witnessed.principal`. Never a header a client
    /// could write itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Gateway, ProvenanceLayer};
    ///
    /// #[derive(Clone)]
    /// struct User(String);
    ///
    /// let layer = ProvenanceLayer::from(Gateway::new(Default::default())?)
    ///     .principal(|parts| parts.extensions.get::<User>().map(|user| user.0.clone()));
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    #[must_use]
    pub fn principal<F>(mut self, principal: F) -> Self
    where
        F: Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    {
        self.principal = Some(Arc::new(principal));
        self
    }

    /// Its gateway.
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// Hands each account of `outcome` to the sink: the code of its
    /// failure, if it failed.
    pub(super) fn audited(&self, outcome: &Outcome<'_>) -> Option<String> {
        let sink = self.audit.as_ref()?;
        let lines = outcome.lines();
        for (seen, line) in outcome.messages.iter().zip(&lines) {
            if let Err(failure) = sink(Account::Message(seen), line) {
                return Some(failure.code);
            }
        }
        None
    }
}
