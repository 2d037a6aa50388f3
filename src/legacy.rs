//! Migration from the legacy tool arguments `user_query` and
//! `invocation_reason` (AI-17).

use serde_json::Value;

use crate::error::Error;
use crate::keys::KeyOptions;
use crate::message::{self, Object};
use crate::options::Options;

/// The legacy argument lifted into `userIntent.text`.
const USER_QUERY: &str = "user_query";
/// The legacy argument lifted into `invocationReason.text`.
const INVOCATION_REASON: &str = "invocation_reason";

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
    /// Reads the options from JSON (`null` for the defaults).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::LiftOptions;
    ///
    /// assert_eq!(LiftOptions::from_value(&serde_json::Value::Null)?, LiftOptions::default());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        let options = Options::new(value, "lift options")?;
        Ok(LiftOptions {
            keys: KeyOptions::read(&options)?,
            remove: options.boolean("remove")?.unwrap_or(false),
        })
    }
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
pub fn lift_legacy_arguments(request: Value, options: &LiftOptions) -> Result<Value, Error> {
    options.keys.check()?;
    let key = options.keys.invocation_key();
    let mut request = message::into_request(request)?;
    let Some(params) = request.get_mut("params").and_then(Value::as_object_mut) else {
        return Ok(Value::Object(request));
    };
    let Some(Value::Object(arguments)) = params.get_mut("arguments") else {
        return Ok(Value::Object(request));
    };
    let query = string(arguments, USER_QUERY);
    let reason = string(arguments, INVOCATION_REASON);
    if options.remove {
        arguments.remove(USER_QUERY);
        arguments.remove(INVOCATION_REASON);
    }
    if query.is_none() && reason.is_none() {
        return Ok(Value::Object(request));
    }
    let meta = message::request_meta_mut(&mut request)?;
    let Value::Object(envelope) = meta
        .entry(key)
        .or_insert_with(|| Value::Object(Object::new()))
    else {
        return Ok(Value::Object(request));
    };
    if let Some(query) = query {
        match envelope.get_mut("userIntent") {
            None => {
                let intent = Object::from_iter([("text".to_owned(), Value::String(query))]);
                envelope.insert("userIntent".to_owned(), Value::Object(intent));
            }
            Some(Value::Object(intent))
                if !intent.contains_key("text")
                    && intent.get("redacted") != Some(&Value::Bool(true)) =>
            {
                intent.insert("text".to_owned(), Value::String(query));
            }
            Some(_) => {}
        }
    }
    if let Some(reason) = reason {
        if !envelope.contains_key("invocationReason") {
            let text = Object::from_iter([("text".to_owned(), Value::String(reason))]);
            envelope.insert("invocationReason".to_owned(), Value::Object(text));
        }
    }
    Ok(Value::Object(request))
}

fn string(arguments: &Object, key: &str) -> Option<String> {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
}
