//! The few JS operations the bindings need, each catching what a hostile
//! value throws (a getter, a Proxy trap) so that it comes back as an `Err`
//! instead of unwinding through wasm.

use js_sys::JsString;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export function own(o, k) {
  return Object.prototype.propertyIsEnumerable.call(o, k) ? o[k] : undefined;
}
export function keys(o) { return Object.keys(o); }
export function shape(v) {
  if (Array.isArray(v)) return 1;
  const p = Object.getPrototypeOf(v);
  return p === null || Object.getPrototypeOf(p) === null ? 2 : 3;
}
export function copy(o) { return { ...o }; }
export function put(o, k, v) {
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
}
export function remove(o, k) { delete o[k]; }
export function cut(s, max) {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
export function wellFormed(s) {
  return typeof s.isWellFormed === "function" ? s.isWellFormed() : !/\p{Cs}/u.test(s);
}
export function parse(text) { return JSON.parse(text); }
export function fail(range, code, message) {
  const error = range ? new RangeError(message) : new TypeError(message);
  error.code = code;
  return error;
}
"#)]
extern "C" {
    /// `o[k]` when `k` is an own enumerable property of `o`, else `undefined`.
    #[wasm_bindgen(catch)]
    pub(super) fn own(o: &JsValue, k: &str) -> Result<JsValue, JsValue>;
    /// `Object.keys(o)`.
    #[wasm_bindgen(catch)]
    pub(super) fn keys(o: &JsValue) -> Result<Vec<JsString>, JsValue>;
    /// 1 for an array, 2 for a plain object (of any realm), 3 for any other object.
    #[wasm_bindgen(catch)]
    pub(super) fn shape(v: &JsValue) -> Result<u8, JsValue>;
    /// `{...o}`: a new plain object with `o`'s own enumerable members, by identity.
    #[wasm_bindgen(catch)]
    pub(super) fn copy(o: &JsValue) -> Result<JsValue, JsValue>;
    /// Defines a data member, so a `__proto__` key never reaches the setter.
    #[wasm_bindgen(catch)]
    pub(super) fn put(o: &JsValue, k: &str, v: &JsValue) -> Result<(), JsValue>;
    /// `delete o[k]`.
    #[wasm_bindgen(catch)]
    pub(super) fn remove(o: &JsValue, k: &str) -> Result<(), JsValue>;
    /// The first `max` UTF-16 code units of `s`, one fewer when that would
    /// split a surrogate pair.
    pub(super) fn cut(s: &JsString, max: usize) -> JsString;
    /// Whether `s` holds no lone surrogate.
    #[wasm_bindgen(js_name = wellFormed)]
    pub(super) fn well_formed(s: &JsString) -> bool;
    /// `JSON.parse`: plain objects whose `__proto__` keys are own data members.
    #[wasm_bindgen(catch)]
    pub(super) fn parse(text: &str) -> Result<JsValue, JsValue>;
    /// A `TypeError` or, with `range`, a `RangeError`, carrying `code`.
    pub(super) fn fail(range: bool, code: &str, message: &str) -> JsValue;
}
