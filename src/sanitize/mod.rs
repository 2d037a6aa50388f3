//! Making an envelope safe to persist and forward (AI-8, AI-12..AI-15).
//!
//! [`Cleaned::new`] decides once what becomes of every part of an envelope
//! under a policy: each field (kept, its text made safe, or gone:
//! `fields.rs`), each member the table does not define (dropped, or kept as
//! JSON made safe: `unknown.rs`), and what goes, in a fixed order, for the
//! whole to fit its byte limit (`fit.rs`); [`Cleaned::edits`] turns those
//! fates into the edits a binding carries out (`edits.rs`). It keeps these
//! invariants:
//!
//! - `changes` holds one change for each thing changed, in the order of the
//!   envelope, then those made to fit it; `validate` warns from the same list.
//! - A text made safe is kept once, in `texts`, and named by its index there.
//! - A field's `touched` is true exactly when a change was made at or below
//!   it (so `userIntent.redacted` and audit records can say so, AI-15).
//! - Nothing outside the envelope is read or changed.

mod edits;
mod fields;
mod fit;
mod unknown;

#[cfg(feature = "value")]
use serde::Serialize;

use crate::diagnostics::{Action, Change, Rule};
use crate::edit::Edit;
use crate::error::Error;
use crate::path::Path;
use crate::policy::Policy;
use crate::schema::{EnvelopeField, FIELDS, Group, MAX_MEMBERS, PerField, Place, Reads};
use crate::view::{Envelope, MessageView};
#[cfg(feature = "value")]
use serde_json::Value;

/// What `sanitize` reads of a message.
pub const READS: Reads = FIELDS | Group::Response.bit();

/// What [`sanitize`] returns: the message made safe, and every change made.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Policy};
/// use serde_json::json;
///
/// let request = json!({"method": "ping"});
/// let out = sanitize(request.clone(), &Policy::default())?;
/// assert_eq!(out.message, request);
/// assert!(out.changes.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Sanitized {
    /// The message, with its envelope made safe.
    pub message: Value,
    /// What was changed, in the order of the envelope.
    pub changes: Vec<Change>,
}

/// Makes a message's invocation envelope safe to persist or forward under
/// `policy`; a clean, well-formed envelope passes unchanged (AI-12).
///
/// Malformed parts are removed, not guessed at; strings are neutralized
/// (AI-13) and cut to their limits (AI-14); `userIntent.redacted` becomes true
/// when its text was touched (AI-15); unknown fields are dropped or kept by
/// policy (AI-8); an envelope over `max_envelope_bytes` loses unknown fields,
/// then `userIntent.text`, `invocationReason`, `model` and `userIntent` until
/// it fits, and is dropped whole when `turnId` alone does not fit. Nothing
/// outside the envelope is touched, the `ui` entry included (UI-8); a message
/// that is not a request is returned as it is.
///
/// # Errors
///
/// `not-a-message` (TypeError) when `message` is not an object; a KEY-3 code,
/// `invalid-limit` or `invalid-option` (RangeError) for a bad policy.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Policy};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"name": "q", "_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"userIntent": {"text": "a\r\nFAKE LOG LINE"}}}}});
/// let out = sanitize(request, &Policy::default())?;
/// assert_eq!(
///     out.message["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"]["userIntent"],
///     json!({"text": "a  FAKE LOG LINE", "redacted": true})
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn sanitize(message: Value, policy: &Policy) -> Result<Sanitized, Error> {
    let Plan { changes, edits } = plan_value(&message, policy)?;
    Ok(Sanitized {
        message: crate::edit::apply(message, edits, &policy.keys, &[]),
        changes,
    })
}

/// What [`sanitize`] comes to, the policy checked: its changes, and the
/// edits a binding applies to the message it holds.
#[cfg(feature = "value")]
pub fn plan_value(message: &Value, policy: &Policy) -> Result<Plan, Error> {
    policy.check()?;
    plan(&MessageView::of(message, &policy.keys, READS), policy)
}

/// What sanitizing a message comes to: its changes, and its edits.
pub struct Plan {
    /// What changes, as `sanitize` reports it.
    pub changes: Vec<Change>,
    /// The edits that make those changes.
    pub edits: Vec<Edit>,
}

/// Sanitizes the envelope of a message's view: `not-a-message` unless the
/// message is a request or a response (which is returned as it is, MSG-1).
/// The policy is checked by the caller.
pub fn plan(view: &MessageView, policy: &Policy) -> Result<Plan, Error> {
    crate::message::message(view)?;
    if !view.is_request() || !view.envelope.value.is_present() {
        return Ok(Plan {
            changes: Vec::new(),
            edits: Vec::new(),
        });
    }
    let path = Path::place(Place::Envelope, &policy.keys);
    let cleaned = Cleaned::new(&view.envelope, policy, &path);
    let edits = cleaned.edits(Place::Envelope);
    let mut changes = cleaned.changes;
    crate::diagnostics::cap(&mut changes);
    Ok(Plan { changes, edits })
}

/// What becomes of one member an envelope field defines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Fate {
    /// Kept as it stands (or still absent).
    #[default]
    Same,
    Gone,
    /// A string made safe: `texts[n]`.
    Text(usize),
    /// The flag set, for text that was touched (AI-15).
    True,
}

/// What becomes of one field.
#[derive(Clone, Copy, Debug, Default)]
struct FieldFate {
    gone: bool,
    /// For a string field: its text made safe, `texts[n]`, when it changed.
    text: Option<usize>,
    members: [Fate; MAX_MEMBERS],
    /// A change was made at or below it.
    touched: bool,
}

/// A member of the envelope, or of one of its fields (`field`), that the
/// table does not define (AI-8): kept as JSON made safe, or removed.
struct Other<'a> {
    field: Option<EnvelopeField>,
    name: &'a str,
    /// The value as JSON made safe; `None` once removed.
    kept: Option<String>,
    /// The kept JSON differs from the value read.
    changed: bool,
}

/// An envelope made safe under a policy: what becomes of each part, and the
/// changes that says, in the order of the envelope.
pub(crate) struct Cleaned<'a, 'v> {
    view: &'v Envelope<'a>,
    policy: &'v Policy,
    /// The envelope is dropped whole.
    dropped: bool,
    fields: PerField<FieldFate>,
    others: Vec<Other<'a>>,
    texts: Vec<String>,
    pub changes: Vec<Change>,
}

impl<'a, 'v> Cleaned<'a, 'v> {
    /// Sanitizes `envelope`, whose pointer is `path`.
    pub(crate) fn new(envelope: &'v Envelope<'a>, policy: &'v Policy, path: &Path<'_>) -> Self {
        let mut cleaned = Cleaned {
            view: envelope,
            policy,
            dropped: false,
            fields: Default::default(),
            others: Vec::new(),
            texts: Vec::new(),
            changes: Vec::new(),
        };
        if !envelope.value.is_object() {
            cleaned.change(Action::Dropped, path, Rule::Ai2);
            cleaned.dropped = true;
            return cleaned;
        }
        for (field, view) in envelope.fields.iter() {
            if view.value.is_present() {
                let before = cleaned.changes.len();
                let mut fate = cleaned.field(field, view, &path.join(field.name()));
                fate.touched = cleaned.changes.len() > before;
                cleaned.fields[field] = fate;
            }
        }
        if envelope.others > 0 {
            cleaned.others_of(None, &envelope.unknown(), path);
        }
        cleaned.fit(path);
        cleaned
    }

    fn change(&mut self, action: Action, path: &Path<'_>, rule: Rule) {
        self.changes.push(Change {
            action,
            path: path.render(),
            rule,
        });
    }
}
