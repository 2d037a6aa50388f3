//! Reading JS values as JSON, no more of them than the core needs.

use js_sys::JsString;
use serde_json::{Map, Number, Value};
use wasm_bindgen::{JsCast, JsValue};

use super::js;
use crate::error::Unreadable;
use crate::pointer::join;

/// How deep a value read whole may nest: serde_json's own parsing limit, so
/// the JS package reads what a native server could parse.
const MAX_DEPTH: usize = 128;

/// The longest array read whole: no envelope limit can keep a longer one, and
/// a sparse `new Array(4e9)` must not keep the reader busy for hours.
const MAX_ITEMS: u32 = 1_048_576;

/// What a JS value is, as far as JSON goes.
pub(super) enum Shape {
    /// A string, number, boolean or null: read.
    Scalar(Value),
    /// An array.
    Array,
    /// A plain object.
    Object,
}

/// Reads JS values as JSON. Strings longer than `cut` UTF-16 code units are
/// cut first, so a hostile string costs what the limits allow.
pub(super) struct Reader {
    cut: Option<usize>,
    /// A lone surrogate was read (and became U+FFFD).
    pub lossy: bool,
    ancestors: Vec<JsValue>,
}

fn threw(path: &str) -> Unreadable {
    unreadable(path, "a getter or Proxy trap threw")
}

fn unreadable(path: &str, what: &'static str) -> Unreadable {
    Unreadable {
        path: path.to_owned(),
        what,
    }
}

impl Reader {
    pub(super) fn new(cut: Option<usize>) -> Self {
        Reader {
            cut,
            lossy: false,
            ancestors: Vec::new(),
        }
    }

    /// What `value` is; `None` for `undefined`, which JSON omits.
    pub(super) fn shape(
        &mut self,
        value: &JsValue,
        path: &str,
    ) -> Result<Option<Shape>, Unreadable> {
        if value.is_undefined() {
            return Ok(None);
        }
        if value.is_null() {
            return Ok(Some(Shape::Scalar(Value::Null)));
        }
        if let Some(flag) = value.as_bool() {
            return Ok(Some(Shape::Scalar(Value::Bool(flag))));
        }
        if let Some(number) = value.as_f64() {
            return number_value(number)
                .map(|n| Some(Shape::Scalar(n)))
                .ok_or_else(|| unreadable(path, "a number JSON cannot hold"));
        }
        if let Some(text) = value.dyn_ref::<JsString>() {
            return Ok(Some(Shape::Scalar(Value::String(self.string(text)))));
        }
        if value.is_bigint() {
            return Err(unreadable(path, "a BigInt"));
        }
        if value.is_symbol() {
            return Err(unreadable(path, "a symbol"));
        }
        if value.is_function() {
            return Err(unreadable(path, "a function"));
        }
        match js::shape(value).map_err(|_| threw(path))? {
            1 => Ok(Some(Shape::Array)),
            2 => Ok(Some(Shape::Object)),
            _ => Err(unreadable(
                path,
                "an object that is not plain JSON (a class instance, a Date, a Map…)",
            )),
        }
    }

    fn string(&mut self, text: &JsString) -> String {
        let text = match self.cut {
            Some(max) => js::cut(text, max),
            None => text.clone(),
        };
        self.lossy |= !js::well_formed(&text);
        String::from(&text)
    }

    /// `value` with its containers left empty: enough for the core to see its type.
    pub(super) fn shallow(
        &mut self,
        value: &JsValue,
        path: &str,
    ) -> Result<Option<Value>, Unreadable> {
        Ok(self.shape(value, path)?.map(|shape| match shape {
            Shape::Scalar(value) => value,
            Shape::Array => Value::Array(Vec::new()),
            Shape::Object => Value::Object(Map::new()),
        }))
    }

    /// Whether `value` is a plain object, without reading its members.
    pub(super) fn is_object(&mut self, value: &JsValue, path: &str) -> Result<bool, Unreadable> {
        Ok(value.is_object() && matches!(self.shape(value, path)?, Some(Shape::Object)))
    }

    /// The own enumerable members of a plain object, in order, without
    /// `undefined` ones; `None` when `value` is no plain object.
    pub(super) fn members(
        &mut self,
        value: &JsValue,
        path: &str,
    ) -> Result<Option<Vec<(String, JsValue)>>, Unreadable> {
        if !self.is_object(value, path)? {
            return Ok(None);
        }
        let names = js::keys(value).map_err(|_| threw(path))?;
        let mut members = Vec::with_capacity(names.len());
        for name in names {
            let name = self.string(&name);
            let member = js::own(value, &name).map_err(|_| threw(&join(path, &name)))?;
            if !member.is_undefined() {
                members.push((name, member));
            }
        }
        Ok(Some(members))
    }

    /// The member `name` of `value` when it is a plain object.
    pub(super) fn member(
        &mut self,
        value: &JsValue,
        name: &str,
        path: &str,
    ) -> Result<JsValue, Unreadable> {
        js::own(value, name).map_err(|_| threw(&join(path, name)))
    }

    /// All of `value`, as JSON.stringify would read it (without calling
    /// `toJSON`): cycles, non-JSON values and nesting past 128 levels are
    /// unreadable.
    pub(super) fn whole(
        &mut self,
        value: &JsValue,
        path: &str,
    ) -> Result<Option<Value>, Unreadable> {
        let Some(shape) = self.shape(value, path)? else {
            return Ok(None);
        };
        if let Shape::Scalar(value) = shape {
            return Ok(Some(value));
        }
        if self.ancestors.len() >= MAX_DEPTH {
            return Err(unreadable(path, "nesting deeper than 128 levels"));
        }
        if self.ancestors.iter().any(|ancestor| ancestor == value) {
            return Err(unreadable(path, "a cycle"));
        }
        self.ancestors.push(value.clone());
        let read = match shape {
            Shape::Array => self.array(value, path).map(Value::Array),
            _ => self.object(value, path).map(Value::Object),
        };
        self.ancestors.pop();
        read.map(Some)
    }

    fn array(&mut self, value: &JsValue, path: &str) -> Result<Vec<Value>, Unreadable> {
        let length = js_sys::Reflect::get(value, &JsValue::from_str("length"))
            .map_err(|_| threw(path))?
            .as_f64()
            .unwrap_or(0.0);
        if length > f64::from(MAX_ITEMS) {
            return Err(unreadable(path, "an array of more than 1048576 items"));
        }
        let mut items = Vec::new();
        for index in 0..length as u32 {
            let name = index.to_string();
            let item_path = join(path, &name);
            let item = self.member(value, &name, path)?;
            items.push(self.whole(&item, &item_path)?.unwrap_or(Value::Null));
        }
        Ok(items)
    }

    fn object(&mut self, value: &JsValue, path: &str) -> Result<Map<String, Value>, Unreadable> {
        let mut map = Map::new();
        for (name, member) in self.members(value, path)?.unwrap_or_default() {
            let member_path = join(path, &name);
            if let Some(read) = self.whole(&member, &member_path)? {
                map.insert(name, read);
            }
        }
        Ok(map)
    }
}

/// A finite JS number as JSON: integers stay integers (so `1` is not `1.0`).
fn number_value(number: f64) -> Option<Value> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if number.fract() == 0.0 && number.abs() <= SAFE {
        Some(Value::from(number as i64))
    } else {
        Number::from_f64(number).map(Value::Number)
    }
}
