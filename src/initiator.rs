//! Who initiated a request, as the MCP Apps Host attests it (UI-1..UI-8).

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic, Rule};
use crate::error::Error;
use crate::keys::KeyOptions;
use crate::message::{self, Object, PARAMS_META};
use crate::pointer::join;
use crate::text;

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
pub fn stamp_initiator(
    request: Value,
    initiator: Initiator,
    keys: &KeyOptions,
) -> Result<Value, Error> {
    keys.check()?;
    let mut request = message::into_request(request)?;
    let stamp = Value::from(initiator.as_str());
    let meta = message::request_meta_mut(&mut request)?;
    match meta.get_mut(keys.ui_key()) {
        Some(Value::Object(entry)) => {
            entry.insert("initiator".to_owned(), stamp);
        }
        _ => {
            let entry = Object::from_iter([("initiator".to_owned(), stamp)]);
            meta.insert(keys.ui_key().to_owned(), Value::Object(entry));
        }
    }
    Ok(Value::Object(request))
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
pub fn clear_initiator(request: Value, keys: &KeyOptions) -> Result<Value, Error> {
    keys.check()?;
    let mut request = message::into_request(request)?;
    if let Some(Value::Object(entry)) =
        message::existing_meta_mut(&mut request).and_then(|meta| meta.get_mut(keys.ui_key()))
    {
        entry.remove("initiator");
    }
    Ok(Value::Object(request))
}

/// Checks the `ui` entry of a request's `_meta` (UI-7); absence is fine (UI-4).
pub(crate) fn check(entry: &Value, ui_key: &str, out: &mut Vec<Diagnostic>) {
    let path = join(PARAMS_META, ui_key);
    let Value::Object(entry) = entry else {
        out.push(Diagnostic::invalid_type(
            "the ui entry",
            "an object",
            entry,
            Rule::Ui7,
            &path,
        ));
        return;
    };
    match entry.get("initiator") {
        None => {}
        Some(Value::String(value)) if value.parse::<Initiator>().is_ok() => {}
        Some(Value::String(_)) => out.push(Diagnostic::warning(
            Code::UnknownInitiator,
            Rule::Ui7,
            &join(&path, "initiator"),
            "initiator is not one of \"app\", \"model\", \"user\", \"host\"",
        )),
        Some(other) => out.push(Diagnostic::invalid_type(
            "`initiator`",
            "a string",
            other,
            Rule::Ui7,
            &join(&path, "initiator"),
        )),
    }
}

/// The initiator an audit record keeps (UI-6): a string value, neutralized
/// and at most 64 bytes when it is not a known one; `None` when absent (UI-4).
pub(crate) fn attested(entry: Option<&Value>) -> Option<String> {
    let value = entry?.get("initiator")?.as_str()?;
    Some(text::clean(value, MAX_RECORDED_INITIATOR_BYTES).text)
}
