// The crate's docs, for Rust readers (src/lib.md): they show the API on
// `serde_json::Value`, which the npm package's build leaves out.
#![cfg_attr(feature = "value", doc = include_str!("lib.md"))]
#![cfg_attr(
    not(feature = "value"),
    doc = "The rules of SEP-2817 and MCP Apps initiator provenance, built for the npm package: enable the feature `value` for the API."
)]
// Where the docs' links to the tower middleware go: to its items, where the
// feature `tower` builds them; else to their pages on docs.rs, which
// documents every feature.
#![cfg_attr(
    all(feature = "value", feature = "tower", not(target_arch = "wasm32")),
    doc = "[`ProvenanceLayer`]: crate::ProvenanceLayer\n[the `tower` module]: crate::tower"
)]
#![cfg_attr(
    all(
        feature = "value",
        not(all(feature = "tower", not(target_arch = "wasm32")))
    ),
    doc = "[`ProvenanceLayer`]: https://docs.rs/mcp-provenance/latest/mcp_provenance/struct.ProvenanceLayer.html\n[the `tower` module]: https://docs.rs/mcp-provenance/latest/mcp_provenance/tower/index.html"
)]
#![warn(missing_docs)]
// Only what the crate root or the bindings' door lets through is `pub`: the
// rest says `pub(crate)`, so that a glance tells API from internals.
#![warn(unreachable_pub)]
// docs.rs marks what a feature gates ([package.metadata.docs.rs]).
#![cfg_attr(docsrs, feature(doc_cfg))]
// A panic in WebAssembly is a trap that can poison the instance: outside
// tests, every failure is a value.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::string_slice,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

// The layers of the core, lowest first: a module imports only from the
// layers below its own (the files of a directory module also from each
// other), and no files import each other in a circle. tests/layers.rs
// states these lines and holds the code to them:
//
//   diagnostics, text        the vocabulary of results; AI-13/AI-14 on one string
//   error, json              the one error type; JSON values as read, borrowed
//   options, schema          options read by their Rust or JS names; the one table of a message
//   keys                     `_meta` key names and the two configurable keys (KEY-1..3)
//   path                     JSON Pointers to the places of the table
//   view, edit               a message read through the table; what a call changes
//   message                  what a call needs a message to be
//   correlation, echo, initiator, invocation, legacy  the rules that read views and make edits
//   policy                   what sanitize keeps, and which ids a record reads
//   sanitize                 an envelope made safe under a policy (AI-8, AI-12..15)
//   validate                 every rule's findings on a message
//   audit                    the audit record of a request
//   wire                     the filter: bytes in, the rules run, bytes out
//   tower                    the middleware for tower's HTTP stack, over the exchange
//   bindings                 the one door for the workspace's bindings, not the API
//   lib                      the crate root: the modules, and the public API
//
// Above the core stand its two bindings, each a crate of the workspace that
// depends on this one: binding/ (the npm package's wasm module) and python/
// (the Python package's extension module). They read their runtime's values
// into the views below and run the rules on them, so they need more than the
// API: they reach it through one door, `__bindings` (src/bindings.rs), which
// names each item it lets through and is hidden from the documentation and
// outside semver. The modules themselves are private: the API is what the
// crate root re-exports, and what the door holds changes with the bindings,
// which are built from this repository alone.
//
// With the `value` feature (on by default), each rule has its public form on
// `serde_json::Value`: it builds a view, runs the rule, and applies the edits
// (the rule's edits alone, for a binding that applies them itself).
/// The one door for the crates of this workspace that stand on the core
/// (binding/, python/) and for its own tests: not part of the API, not
/// covered by semver. Rust users have the crate root.
#[doc(hidden)]
#[path = "bindings.rs"]
pub mod __bindings;
mod audit;
mod correlation;
mod diagnostics;
mod echo;
mod edit;
mod error;
mod initiator;
mod invocation;
mod json;
mod keys;
mod legacy;
mod message;
mod options;
mod path;
mod policy;
mod sanitize;
mod schema;
mod text;
mod validate;
mod view;
mod wire;
// The one module that is its own page of the documentation: a middleware,
// behind its feature, whose guide is its module's text. Native only.
#[cfg(all(feature = "tower", not(target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;

// The README's Rust examples (for the crates.io page and GitHub) run as
// doctests too, though the crate's docs are its own (src/lib.md).
#[cfg(all(doctest, feature = "value"))]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

// The API. `#[non_exhaustive]` marks what will grow and what users only
// read: the codes, rules, kinds, verdicts and choices (a `match` outside the
// crate needs a `_` arm) and the results (records, reports, outcomes, the
// accounts of a body), which users do not build. The options (`Policy`,
// `KeyOptions`, `LiftOptions`, `ValidateOptions`, `AuditContext`,
// `FilterContext`, `FilterOptions`, `GatewayOptions`, `Check`) stay
// exhaustive on purpose: Rust users build them as struct literals with
// `..Default::default()`, a form that keeps compiling when a field is
// added and that `#[non_exhaustive]` would forbid outside the crate (they
// deserialize from configuration too). `CheckCommand` stays exhaustive
// too: a command must run each of its forms.
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use audit::audit_record;
pub use audit::{AuditContext, AuditRecord, ClientAsserted, HostAttested, RequestId, Witnessed};
pub use correlation::{Correlation, CorrelationKind, CorrelationSource, KNOWN_CORRELATION_SOURCES};
pub use diagnostics::{Action, Change, Code, Diagnostic, Level, Report, Rule, Severity};
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use echo::echo_turn_id;
pub use error::{Error, ErrorKind};
pub use initiator::{Initiator, VIEW_REQUESTS};
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use initiator::{clear_initiator, stamp_initiator};
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use invocation::attach_invocation;
pub use keys::{AI_INVOCATION_KEY, KeyOptions, UI_KEY, is_reserved_meta_key, is_valid_meta_key};
pub use legacy::LiftOptions;
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use legacy::lift_legacy_arguments;
pub use policy::{FieldPolicy, IntentPolicy, Policy};
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use sanitize::{Sanitized, sanitize};
#[cfg(all(feature = "tower", not(target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use tower::{Account, AuditError, Provenance, ProvenanceBody, ProvenanceLayer};
#[cfg(feature = "value")]
#[cfg_attr(docsrs, doc(cfg(feature = "value")))]
pub use validate::{ValidateOptions, validate};
pub use wire::{
    Answered, AuditArguments, CHECK_USAGE, Capture, Check, CheckCommand, Counts, ExchangeOutcome,
    Filter, FilterContext, FilterOptions, Gateway, GatewayOptions, Got, MAX_LINE_BOUND,
    MAX_LINE_BYTES, MessageKind, NOTHING_CHECKED, Outcome, Printed, SAME_FILE, Seen, USAGE,
    Verdict,
};
