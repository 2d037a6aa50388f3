//! Who initiated a request, as the MCP Apps Host attests it (UI-1..UI-8).

use std::str::FromStr;

use serde::{Deserialize, Serialize};
#[cfg(feature = "value")]
use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic, Rule};
use crate::edit::{Edit, Put, Target};
use crate::error::Error;
use crate::json::{Kind, Slot};
use crate::keys::KeyOptions;
use crate::path::Path;
use crate::schema::{Group, Place, Reads};

/// What stamping and clearing read of a request.
pub const READS: Reads = Group::Ui.bit();

/// The requests a View sends that a Host forwards towards the server, each
/// to be stamped `initiator: "app"` (UI-1): every request of the MCP Apps
/// View-to-Host protocol that is an MCP server request. (`ui/*` requests
/// and sampling are the Host's own to answer, never forwarded.)
///
/// # Examples
///
/// ```
/// assert!(mcp_provenance::VIEW_REQUESTS.contains(&"resources/read"));
/// ```
pub const VIEW_REQUESTS: &[&str] = &[
    "tools/call",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];
use crate::text;
use crate::view::MessageView;

/// How many bytes of an unknown initiator value an audit record keeps.
const MAX_RECORDED_INITIATOR_BYTES: usize = 64;

/// The initiator values the Host may attest (UI-7): `app` is the proposal's
/// own; `model`, `user` and `host` come from its open question.
///
/// # Examples
///
/// ```
/// use mcp_provenance::Initiator;
///
/// assert_eq!("app".parse::<Initiator>()?, Initiator::App);
/// assert_eq!(Initiator::Model.as_str(), "model");
/// assert!("App".parse::<Initiator>().is_err()); // values are case-sensitive
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Initiator {
    /// An embedded App (View) initiated the request: what the Host stamps (UI-1).
    #[default]
    App,
    /// The model or agent chose the call.
    Model,
    /// The user acted directly.
    User,
    /// The Host itself initiated the request.
    Host,
}

impl Initiator {
    /// Every known value, in the order of the proposal.
    pub const ALL: [Initiator; 4] = [
        Initiator::App,
        Initiator::Model,
        Initiator::User,
        Initiator::Host,
    ];

    /// The value as it stands in `_meta`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mcp_provenance::Initiator::Host.as_str(), "host");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Initiator::App => "app",
            Initiator::Model => "model",
            Initiator::User => "user",
            Initiator::Host => "host",
        }
    }
}

impl FromStr for Initiator {
    type Err = Error;

    fn from_str(value: &str) -> Result<Self, Error> {
        Initiator::ALL
            .into_iter()
            .find(|known| known.as_str() == value)
            .ok_or_else(|| {
                Error::new(
                    Code::InvalidInitiator,
                    "initiator must be one of \"app\", \"model\", \"user\", \"host\"",
                )
            })
    }
}

/// The edits that stamp `initiator` on a request (UI-1, UI-3, UI-5): only
/// `initiator` changes; a `ui` entry that is not an object is replaced.
pub fn stamp(request: &MessageView, initiator: Initiator) -> Result<Vec<Edit>, Error> {
    crate::message::writable_meta(request)?;
    let stamp = Edit::new(
        Target::place(Place::Initiator),
        Put::Text(initiator.as_str().to_owned()),
    );
    Ok(match request.get(Place::Ui) {
        Slot::Object(_) => vec![stamp],
        _ => vec![Edit::new(Target::place(Place::Ui), Put::Object), stamp],
    })
}

/// The edits that clear `initiator` from a request (UI-2).
pub fn clear(request: &MessageView) -> Result<Vec<Edit>, Error> {
    crate::message::request(request)?;
    Ok(match request.get(Place::Initiator) {
        Slot::Absent => Vec::new(),
        _ => vec![Edit::new(Target::place(Place::Initiator), Put::Remove)],
    })
}

/// Adds or overwrites `initiator` in the request's `ui` entry, as the Host
/// does when it proxies a request a View sent (UI-1, UI-3). Only `initiator`
/// changes (UI-5): other members of the entry, other `_meta` keys and
/// `arguments` stay as they were. A `ui` entry that is not an object is
/// replaced; `params` and `_meta` are created when absent.
///
/// # Errors
///
/// `not-a-request` or `invalid-type` (TypeError) when the request is not a
/// request or its `params`/`_meta` is not an object; a KEY-3 code (RangeError)
/// for a bad configured key.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{stamp_initiator, Initiator, KeyOptions};
/// use serde_json::json;
///
/// // The View tried to claim the model made this call.
/// let from_view = json!({"method": "tools/call", "params": {"name": "refresh_dashboard",
///     "_meta": {"io.modelcontextprotocol/ui": {"initiator": "model", "theme": "dark"}}}});
/// let forwarded = stamp_initiator(from_view, Initiator::App, &KeyOptions::default())?;
/// assert_eq!(forwarded["params"]["_meta"]["io.modelcontextprotocol/ui"],
///            json!({"initiator": "app", "theme": "dark"}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn stamp_initiator(
    request: Value,
    initiator: Initiator,
    keys: &KeyOptions,
) -> Result<Value, Error> {
    let edits = stamp_edits(&request, initiator, keys)?;
    Ok(crate::edit::apply(request, edits, keys, &[]))
}

/// The edits of [`stamp_initiator`], the keys checked: what a binding
/// applies to the request it holds.
#[cfg(feature = "value")]
pub fn stamp_edits(
    request: &Value,
    initiator: Initiator,
    keys: &KeyOptions,
) -> Result<Vec<Edit>, Error> {
    keys.check()?;
    stamp(&MessageView::of(request, keys, READS), initiator)
}

/// Removes `initiator` from the request's `ui` entry, for a call the model
/// chose that arrives carrying one (UI-2). Nothing else changes; a request
/// without an initiator comes back as it was.
///
/// # Errors
///
/// `not-a-request` (TypeError) when the request is not a request; a KEY-3
/// code (RangeError) for a bad configured key.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{clear_initiator, KeyOptions};
/// use serde_json::json;
///
/// let model_call = json!({"method": "tools/call", "params": {"name": "execute_query",
///     "_meta": {"io.modelcontextprotocol/ui": {"initiator": "app"}}}});
/// let sent = clear_initiator(model_call, &KeyOptions::default())?;
/// assert_eq!(sent["params"]["_meta"]["io.modelcontextprotocol/ui"], json!({}));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn clear_initiator(request: Value, keys: &KeyOptions) -> Result<Value, Error> {
    let edits = clear_edits(&request, keys)?;
    Ok(crate::edit::apply(request, edits, keys, &[]))
}

/// The edits of [`clear_initiator`], the keys checked.
#[cfg(feature = "value")]
pub fn clear_edits(request: &Value, keys: &KeyOptions) -> Result<Vec<Edit>, Error> {
    keys.check()?;
    clear(&MessageView::of(request, keys, READS))
}

/// Checks the `ui` entry of a request's `_meta` (UI-7); absence is fine (UI-4).
pub(crate) fn check(request: &MessageView, keys: &KeyOptions, out: &mut Vec<Diagnostic>) {
    let entry = request.get(Place::Ui);
    let path = Path::place(Place::Ui, keys);
    match entry.kind() {
        None | Some(Kind::Object) => {}
        Some(found) => {
            return out.push(Diagnostic::invalid_type(
                "the ui entry",
                "an object",
                found.article(),
                Rule::Ui7,
                path.render(),
            ));
        }
    }
    let at = path.join("initiator");
    match request.get(Place::Initiator) {
        Slot::Absent => {}
        Slot::String(value) if value.text.parse::<Initiator>().is_ok() => {}
        Slot::String(_) => out.push(Diagnostic::breach(
            Code::UnknownInitiator,
            Rule::Ui7,
            at.render(),
            "initiator is not one of \"app\", \"model\", \"user\", \"host\"",
        )),
        other => out.push(Diagnostic::invalid_type(
            "`initiator`",
            "a string",
            other.article(),
            Rule::Ui7,
            at.render(),
        )),
    }
}

/// When a message carries `initiator` under more than one of the `ui` keys
/// read (`entries`: each key's view, in the order read) and they disagree,
/// the diagnostic that says so, at the first that differs from the first:
/// one of them is not the Host's (UI-3), and what the record keeps is
/// unknown (UI-4). A View under a Host that stamps a vendor key may put any
/// value under the standard key, which the Host leaves as it came (UI-5).
pub(crate) fn disagreement<'a>(
    entries: impl Iterator<Item = (&'a MessageView<'a>, &'a KeyOptions)>,
) -> Option<Diagnostic> {
    let value = |slot: Slot<'a>| match slot {
        Slot::String(text) => Some(text.text),
        _ => None,
    };
    let mut held = entries.map(|(view, keys)| (view.get(Place::Initiator), keys));
    let (first, _) = held.find(|(slot, _)| slot.is_present())?;
    let (_, keys) = held.find(|(slot, _)| slot.is_present() && value(*slot) != value(first))?;
    Some(Diagnostic::breach(
        Code::ConflictingInitiator,
        Rule::Ui4,
        Path::place(Place::Ui, keys).join("initiator").render(),
        "initiator differs from the one under another ui key: one of them is not the Host's, so none is recorded",
    ))
}

/// The initiator an audit record keeps (UI-6): a string value, neutralized
/// and at most 64 bytes when it is not a known one; `None` when absent (UI-4).
pub(crate) fn attested(request: &MessageView) -> Option<String> {
    let value = request.get(Place::Initiator).str()?;
    Some(
        text::clean(value, MAX_RECORDED_INITIATOR_BYTES)
            .text
            .into_owned(),
    )
}
