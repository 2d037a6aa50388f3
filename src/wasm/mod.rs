//! The JS API of the npm package. Each function reads what the core needs of
//! its arguments (see [`message`]), calls the core, and writes the core's
//! answer back into a copy of the input. Nothing here decides a rule.

mod js;
mod message;
mod read;

use serde_json::Value;
use wasm_bindgen::prelude::*;

use self::message::{Envelope, Plan, Skeleton, to_js, write_back};
use self::read::Reader;
use crate::diagnostics::{Diagnostic, Report};
use crate::error::{Error, Unreadable};
use crate::initiator::Initiator;
use crate::keys::{self, KeyOptions};
use crate::legacy::LiftOptions;
use crate::policy::{FieldPolicy, Policy};
use crate::validate::option_diagnostic;
use crate::{AuditContext, ValidateOptions};

type JsResult = Result<JsValue, JsValue>;

/// A core error as the JS `Error` it stands for, with its `code`.
fn thrown(error: Error) -> JsValue {
    js::fail(
        error.js_class() == "RangeError",
        error.code().as_str(),
        &error.to_string(),
    )
}

fn unreadable(place: Unreadable) -> JsValue {
    thrown(place.into())
}

/// An options argument read whole (`undefined` is no options), then parsed by the core.
fn options<T>(value: &JsValue, parse: fn(&Value) -> Result<T, Error>) -> Result<T, JsValue> {
    let read = Reader::new(None).whole(value, "").map_err(unreadable)?;
    parse(&read.unwrap_or(Value::Null)).map_err(thrown)
}

/// How many UTF-16 code units of a string to read under `policy`: twice
/// (for surrogate pairs) one more character than any output keeps, so a
/// longer string reads exactly as it would whole (see `text::clean`).
fn cut(policy: &Policy) -> Option<usize> {
    Some(2 * (policy.longest_kept_text() + 1))
}

fn read(
    message: &JsValue,
    keys: &KeyOptions,
    envelope: Envelope,
    legacy: bool,
) -> Result<Skeleton, JsValue> {
    let plan = Plan {
        keys,
        envelope,
        cut: cut(&Policy::default()),
        legacy,
    };
    message::read(message, &plan).map_err(unreadable)
}

/// The key options of a call's last argument.
fn key_options(value: &JsValue) -> Result<KeyOptions, JsValue> {
    options(value, KeyOptions::from_value)
}

/// `AI_INVOCATION_KEY`, read once by the entries.
#[wasm_bindgen(js_name = aiInvocationKey, skip_typescript)]
pub fn ai_invocation_key() -> String {
    keys::AI_INVOCATION_KEY.to_owned()
}

/// `UI_KEY`, read once by the entries.
#[wasm_bindgen(js_name = uiKey, skip_typescript)]
pub fn ui_key() -> String {
    keys::UI_KEY.to_owned()
}

/// `isValidMetaKey(key)`: false for anything but a valid key string.
#[wasm_bindgen(js_name = isValidMetaKey, skip_typescript)]
pub fn is_valid_meta_key(key: &JsValue) -> bool {
    key.as_string()
        .is_some_and(|key| keys::is_valid_meta_key(&key))
}

/// `isReservedMetaKey(key)`: false for anything but a reserved key string.
#[wasm_bindgen(js_name = isReservedMetaKey, skip_typescript)]
pub fn is_reserved_meta_key(key: &JsValue) -> bool {
    key.as_string()
        .is_some_and(|key| keys::is_reserved_meta_key(&key))
}

/// `validate(message, options?)`: a report, whatever it is given.
#[wasm_bindgen(js_name = validate, skip_typescript)]
pub fn validate(message: &JsValue, options: &JsValue) -> JsValue {
    to_js(&report(message, options)).unwrap_or(JsValue::NULL)
}

fn report(message: &JsValue, options: &JsValue) -> Report {
    match checked(message, options) {
        Ok(report) => report,
        Err(diagnostic) => Report::from(vec![diagnostic]),
    }
}

/// `validate`'s work; any input it cannot read is the one diagnostic.
fn checked(message: &JsValue, options: &JsValue) -> Result<Report, Diagnostic> {
    let mut reader = Reader::new(None);
    let given = if options.is_object() {
        let mut given = serde_json::Map::new();
        for name in ["invocationKey", "uiKey"] {
            let value = reader
                .member(options, name, "")
                .map_err(|place| place.diagnostic())?;
            if let Some(read) = reader
                .whole(&value, "")
                .map_err(|place| place.diagnostic())?
            {
                given.insert(name.to_owned(), read);
            }
        }
        Value::Object(given)
    } else {
        reader
            .whole(options, "")
            .map_err(|place| place.diagnostic())?
            .unwrap_or(Value::Null)
    };
    let keys = KeyOptions::from_value(&given).map_err(option_diagnostic)?;
    let checked = cut(&Policy::default());
    let plan = Plan {
        keys: &keys,
        envelope: Envelope::Fields {
            cut: checked,
            unknown: false,
        },
        cut: checked,
        legacy: false,
    };
    let skeleton = message::read(message, &plan).map_err(|place| place.diagnostic())?;
    let request = match options.is_object() {
        true => reader
            .member(options, "request", "")
            .map_err(|place| place.diagnostic())?,
        false => JsValue::UNDEFINED,
    };
    let exact = Plan {
        envelope: Envelope::Fields {
            cut: None,
            unknown: false,
        },
        ..plan
    };
    let request = match request.is_undefined() {
        true => None,
        false => Some(message::read(&request, &exact).map_err(|place| place.diagnostic())?),
    };
    let options = ValidateOptions {
        keys: keys.clone(),
        request: request.as_ref().map(|request| &request.value),
    };
    Ok(crate::validate(&skeleton.value, &options))
}

/// `sanitize(message, policy?)`: `{message, changes}`.
#[wasm_bindgen(js_name = sanitize, skip_typescript)]
pub fn sanitize(message: &JsValue, policy: &JsValue) -> JsResult {
    let policy = options(policy, Policy::from_value)?;
    let plan = Plan {
        keys: &policy.keys,
        envelope: Envelope::Fields {
            cut: cut(&policy),
            unknown: policy.unknown_fields == FieldPolicy::Keep,
        },
        cut: cut(&policy),
        legacy: false,
    };
    let skeleton = message::read(message, &plan).map_err(unreadable)?;
    let out = crate::sanitize(skeleton.value.clone(), &policy).map_err(thrown)?;
    let result = js_sys::Object::new();
    let patched = write_back(message, &skeleton, &out.message, &policy.keys)?;
    js::put(&result, "message", &patched)?;
    js::put(&result, "changes", &to_js(&out.changes)?)?;
    Ok(result.into())
}

/// `attachInvocation(request, invocation, options?)`.
#[wasm_bindgen(js_name = attachInvocation, skip_typescript)]
pub fn attach_invocation(request: &JsValue, invocation: &JsValue, options: &JsValue) -> JsResult {
    let keys = key_options(options)?;
    let skeleton = read(request, &keys, Envelope::Whole, false)?;
    let invocation = Reader::new(None)
        .whole(invocation, "")
        .map_err(unreadable)?
        .unwrap_or(Value::Null);
    let out =
        crate::attach_invocation(skeleton.value.clone(), invocation, &keys).map_err(thrown)?;
    write_back(request, &skeleton, &out, &keys)
}

/// `stampInitiator(request, initiator = "app", options?)`.
#[wasm_bindgen(js_name = stampInitiator, skip_typescript)]
pub fn stamp_initiator(request: &JsValue, initiator: &JsValue, options: &JsValue) -> JsResult {
    let keys = key_options(options)?;
    let initiator = match initiator.is_undefined() {
        true => Initiator::default(),
        false => initiator
            .as_string()
            .unwrap_or_default()
            .parse()
            .map_err(thrown)?,
    };
    let skeleton = read(request, &keys, Envelope::Type, false)?;
    let out = crate::stamp_initiator(skeleton.value.clone(), initiator, &keys).map_err(thrown)?;
    write_back(request, &skeleton, &out, &keys)
}

/// `clearInitiator(request, options?)`.
#[wasm_bindgen(js_name = clearInitiator, skip_typescript)]
pub fn clear_initiator(request: &JsValue, options: &JsValue) -> JsResult {
    let keys = key_options(options)?;
    let skeleton = read(request, &keys, Envelope::Type, false)?;
    let out = crate::clear_initiator(skeleton.value.clone(), &keys).map_err(thrown)?;
    write_back(request, &skeleton, &out, &keys)
}

/// `echoTurnId(request, response, options?)`.
#[wasm_bindgen(js_name = echoTurnId, skip_typescript)]
pub fn echo_turn_id(request: &JsValue, response: &JsValue, options: &JsValue) -> JsResult {
    let keys = key_options(options)?;
    let exact = Envelope::Fields {
        cut: None,
        unknown: false,
    };
    let request = read(request, &keys, exact, false)?;
    let skeleton = read(response, &keys, Envelope::Type, false)?;
    let out = crate::echo_turn_id(&request.value, skeleton.value.clone(), &keys).map_err(thrown)?;
    write_back(response, &skeleton, &out, &keys)
}

/// `auditRecord(request, context?)`: the record, as a plain object.
#[wasm_bindgen(js_name = auditRecord, skip_typescript)]
pub fn audit_record(request: &JsValue, context: &JsValue) -> JsResult {
    let context = options(context, AuditContext::from_value)?;
    let policy = context.policy.clone().unwrap_or_default();
    let plan = Plan {
        keys: &policy.keys,
        envelope: Envelope::Fields {
            cut: cut(&policy),
            unknown: false,
        },
        cut: cut(&policy),
        legacy: false,
    };
    let skeleton = message::read(request, &plan).map_err(unreadable)?;
    let record = crate::audit_record(&skeleton.value, &context).map_err(thrown)?;
    to_js(&record)
}

/// `liftLegacyArguments(request, options?)`.
#[wasm_bindgen(js_name = liftLegacyArguments, skip_typescript)]
pub fn lift_legacy_arguments(request: &JsValue, options: &JsValue) -> JsResult {
    let lift = self::options(options, LiftOptions::from_value)?;
    let skeleton = read(request, &lift.keys, Envelope::Whole, true)?;
    let out = crate::lift_legacy_arguments(skeleton.value.clone(), &lift).map_err(thrown)?;
    write_back(request, &skeleton, &out, &lift.keys)
}

#[cfg(test)]
mod tests;
