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
use crate::diagnostics::Report;
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

#[wasm_bindgen(js_name = aiInvocationKey, skip_typescript)]
pub fn ai_invocation_key() -> String {
    keys::AI_INVOCATION_KEY.to_owned()
}

#[wasm_bindgen(js_name = uiKey, skip_typescript)]
pub fn ui_key() -> String {
    keys::UI_KEY.to_owned()
}

#[wasm_bindgen(js_name = isValidMetaKey, skip_typescript)]
pub fn is_valid_meta_key(key: &JsValue) -> bool {
    key.as_string()
        .is_some_and(|key| keys::is_valid_meta_key(&key))
}

#[wasm_bindgen(js_name = isReservedMetaKey, skip_typescript)]
pub fn is_reserved_meta_key(key: &JsValue) -> bool {
    key.as_string()
        .is_some_and(|key| keys::is_reserved_meta_key(&key))
}

#[wasm_bindgen(js_name = validate, skip_typescript)]
pub fn validate(message: &JsValue, options: &JsValue) -> JsValue {
    to_js(&report(message, options)).unwrap_or(JsValue::NULL)
}

fn report(message: &JsValue, options: &JsValue) -> Report {
    let mut reader = Reader::new(None);
    let mut option = |name: &str| {
        reader
            .member(options, name, "")
            .unwrap_or(JsValue::UNDEFINED)
    };
    let (invocation_key, ui_key, request) = if options.is_object() {
        (option("invocationKey"), option("uiKey"), option("request"))
    } else {
        (JsValue::UNDEFINED, JsValue::UNDEFINED, JsValue::UNDEFINED)
    };
    let mut key_reader = Reader::new(None);
    let key_value = |reader: &mut Reader, value: &JsValue| reader.whole(value, "").ok().flatten();
    let mut given = serde_json::Map::new();
    for (name, value) in [("invocationKey", &invocation_key), ("uiKey", &ui_key)] {
        if let Some(read) = key_value(&mut key_reader, value) {
            given.insert(name.to_owned(), read);
        }
    }
    let keys = match KeyOptions::from_value(&Value::Object(given)) {
        Ok(keys) => keys,
        Err(error) => return Report::from(vec![option_diagnostic(error)]),
    };
    let plan = Plan {
        keys: &keys,
        envelope: Envelope::Fields {
            cut: cut(&Policy::default()),
            unknown: false,
        },
        cut: cut(&Policy::default()),
        legacy: false,
    };
    let skeleton = match message::read(message, &plan) {
        Ok(skeleton) => skeleton,
        Err(place) => return Report::from(vec![place.diagnostic()]),
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
        false => match message::read(&request, &exact) {
            Ok(request) => Some(request),
            Err(place) => return Report::from(vec![place.diagnostic()]),
        },
    };
    let options = ValidateOptions {
        keys: keys.clone(),
        request: request.as_ref().map(|request| &request.value),
    };
    crate::validate(&skeleton.value, &options)
}

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

#[wasm_bindgen(js_name = clearInitiator, skip_typescript)]
pub fn clear_initiator(request: &JsValue, options: &JsValue) -> JsResult {
    let keys = key_options(options)?;
    let skeleton = read(request, &keys, Envelope::Type, false)?;
    let out = crate::clear_initiator(skeleton.value.clone(), &keys).map_err(thrown)?;
    write_back(request, &skeleton, &out, &keys)
}

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

#[wasm_bindgen(js_name = liftLegacyArguments, skip_typescript)]
pub fn lift_legacy_arguments(request: &JsValue, options: &JsValue) -> JsResult {
    let lift = self::options(options, LiftOptions::from_value)?;
    let skeleton = read(request, &lift.keys, Envelope::Whole, true)?;
    let out = crate::lift_legacy_arguments(skeleton.value.clone(), &lift).map_err(thrown)?;
    write_back(request, &skeleton, &out, &lift.keys)
}

#[cfg(test)]
mod tests;
