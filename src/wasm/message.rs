//! A message as the core sees it, read from JS (the *skeleton*: only the
//! parts a rule looks at), and the core's answer written back into a copy
//! that shares every untouched subtree with the original.

use serde_json::{Map, Value};
use wasm_bindgen::JsValue;

use super::js;
use super::read::Reader;
use crate::error::Unreadable;
use crate::invocation::FIELDS;
use crate::keys::KeyOptions;
use crate::pointer::{join, overlaps};

/// How much of the invocation envelope an operation reads.
#[derive(Clone, Copy)]
pub(super) enum Envelope {
    /// Nothing but its type: the operation never changes it.
    Type,
    /// The fields the proposal defines, with strings cut to `cut` code units
    /// when given; unknown fields whole when `unknown`, else their type only.
    Fields { cut: Option<usize>, unknown: bool },
    /// All of it, exactly: the operation writes it back as it reads it.
    Whole,
}

/// What to read of a message.
pub(super) struct Plan<'a> {
    pub keys: &'a KeyOptions,
    pub envelope: Envelope,
    /// Strings outside the envelope (method, id, tool name, initiator) are cut here.
    pub cut: Option<usize>,
    /// Read `user_query` and `invocation_reason` of `params.arguments`.
    pub legacy: bool,
}

/// The skeleton, and the slots whose text came through lossily (a lone
/// surrogate read as U+FFFD), which are written back whatever the core says.
pub(super) struct Skeleton {
    pub value: Value,
    lossy: Vec<String>,
}

/// Reads the skeleton of `message`: `method`, `id`, `error` (its type),
/// `params.name`, `params._meta` (the envelope as planned, the `ui` entry's
/// `initiator`, the presence of bare keys), the two legacy arguments when
/// planned, and `result._meta[key]`. Nothing else is touched: not
/// `arguments`, not the other `_meta` keys.
pub(super) fn read(message: &JsValue, plan: &Plan) -> Result<Skeleton, Unreadable> {
    let mut skeleton = Reading {
        reader: Reader::new(plan.cut),
        plan,
        lossy: Vec::new(),
    };
    let value = skeleton.message(message)?;
    Ok(Skeleton {
        value,
        lossy: skeleton.lossy,
    })
}

struct Reading<'a> {
    reader: Reader,
    plan: &'a Plan<'a>,
    lossy: Vec<String>,
}

impl Reading<'_> {
    fn message(&mut self, message: &JsValue) -> Result<Value, Unreadable> {
        if !self.reader.is_object(message, "")? {
            return Ok(self.reader.shallow(message, "")?.unwrap_or(Value::Null));
        }
        let mut out = Map::new();
        for name in ["method", "id", "error"] {
            self.shallow_member(message, name, "", &mut out)?;
        }
        let params = self.reader.member(message, "params", "")?;
        if let Some(value) = self.params(&params)? {
            out.insert("params".to_owned(), value);
        }
        let result = self.reader.member(message, "result", "")?;
        if let Some(value) = self.object_with(&result, "/result", "_meta", |reading, meta| {
            reading.object_with(
                meta,
                "/result/_meta",
                reading.plan.keys.invocation_key(),
                |reading, envelope| {
                    let path = join("/result/_meta", reading.plan.keys.invocation_key());
                    reading.envelope(
                        envelope,
                        &path,
                        Envelope::Fields {
                            cut: None,
                            unknown: false,
                        },
                    )
                },
            )
        })? {
            out.insert("result".to_owned(), value);
        }
        Ok(Value::Object(out))
    }

    fn shallow_member(
        &mut self,
        object: &JsValue,
        name: &str,
        path: &str,
        out: &mut Map<String, Value>,
    ) -> Result<(), Unreadable> {
        let member = self.reader.member(object, name, path)?;
        if let Some(value) = self.reader.shallow(&member, &join(path, name))? {
            out.insert(name.to_owned(), value);
        }
        Ok(())
    }

    /// `value` when it is not a plain object, shallow; when it is, an object
    /// holding what `inner` reads of its member `name`.
    fn object_with(
        &mut self,
        value: &JsValue,
        path: &str,
        name: &str,
        inner: impl FnOnce(&mut Self, &JsValue) -> Result<Option<Value>, Unreadable>,
    ) -> Result<Option<Value>, Unreadable> {
        if !self.reader.is_object(value, path)? {
            return self.reader.shallow(value, path);
        }
        let member = self.reader.member(value, name, path)?;
        let mut out = Map::new();
        if let Some(read) = inner(self, &member)? {
            out.insert(name.to_owned(), read);
        }
        Ok(Some(Value::Object(out)))
    }

    fn params(&mut self, params: &JsValue) -> Result<Option<Value>, Unreadable> {
        if !self.reader.is_object(params, "/params")? {
            return self.reader.shallow(params, "/params");
        }
        let mut out = Map::new();
        self.shallow_member(params, "name", "/params", &mut out)?;
        let meta = self.reader.member(params, "_meta", "/params")?;
        if let Some(value) = self.meta(&meta)? {
            out.insert("_meta".to_owned(), value);
        }
        if self.plan.legacy {
            let arguments = self.reader.member(params, "arguments", "/params")?;
            let mut whole = Reader::new(None);
            let read = if whole.is_object(&arguments, "/params/arguments")? {
                let mut legacy = Map::new();
                for name in ["user_query", "invocation_reason"] {
                    let member = whole.member(&arguments, name, "/params/arguments")?;
                    if let Some(value) = whole.whole(&member, &join("/params/arguments", name))? {
                        legacy.insert(name.to_owned(), value);
                    }
                }
                Some(Value::Object(legacy))
            } else {
                whole.shallow(&arguments, "/params/arguments")?
            };
            if let Some(read) = read {
                out.insert("arguments".to_owned(), read);
            }
        }
        Ok(Some(Value::Object(out)))
    }

    fn meta(&mut self, meta: &JsValue) -> Result<Option<Value>, Unreadable> {
        const PATH: &str = "/params/_meta";
        if !self.reader.is_object(meta, PATH)? {
            return self.reader.shallow(meta, PATH);
        }
        let keys = self.plan.keys;
        let (invocation_key, ui_key) = (keys.invocation_key(), keys.ui_key());
        let mut out = Map::new();
        let envelope = self.reader.member(meta, invocation_key, PATH)?;
        if let Some(value) =
            self.envelope(&envelope, &join(PATH, invocation_key), self.plan.envelope)?
        {
            out.insert(invocation_key.to_owned(), value);
        }
        let ui = self.reader.member(meta, ui_key, PATH)?;
        let ui_path = join(PATH, ui_key);
        let before = self.reader.lossy;
        if let Some(value) =
            self.object_with(&ui, &ui_path, "initiator", |reading, initiator| {
                reading
                    .reader
                    .shallow(initiator, &join(&ui_path, "initiator"))
            })?
        {
            out.insert(ui_key.to_owned(), value);
        }
        self.note_lossy(before, join(&ui_path, "initiator"));
        for (bare, _) in FIELDS {
            if bare != invocation_key
                && bare != ui_key
                && !self.reader.member(meta, bare, PATH)?.is_undefined()
            {
                out.insert(bare.to_owned(), Value::Null);
            }
        }
        Ok(Some(Value::Object(out)))
    }

    fn note_lossy(&mut self, before: bool, slot: String) {
        if self.reader.lossy && !before {
            self.lossy.push(slot);
        }
        self.reader.lossy = before;
    }

    fn envelope(
        &mut self,
        envelope: &JsValue,
        path: &str,
        how: Envelope,
    ) -> Result<Option<Value>, Unreadable> {
        let before = self.reader.lossy;
        let read = match how {
            Envelope::Type => self.reader.shallow(envelope, path),
            Envelope::Whole => Reader::new(None).whole(envelope, path),
            Envelope::Fields { cut, unknown } => {
                let mut reader = Reader::new(cut);
                let read = fields(&mut reader, envelope, path, unknown);
                self.reader.lossy |= reader.lossy;
                read
            }
        };
        self.note_lossy(before, path.to_owned());
        read
    }
}

/// The envelope's own fields, their members read as scalars (a container
/// where a string belongs is read as an empty one: the core only needs its
/// type); unknown members whole or by type.
fn fields(
    reader: &mut Reader,
    envelope: &JsValue,
    path: &str,
    unknown: bool,
) -> Result<Option<Value>, Unreadable> {
    let Some(members) = reader.members(envelope, path)? else {
        return reader.shallow(envelope, path);
    };
    let mut out = Map::new();
    for (name, value) in members {
        let field_path = join(path, &name);
        let known = FIELDS
            .iter()
            .find(|(field, _)| *field == name)
            .map(|(_, members)| *members);
        let read = match known {
            Some(inner) if !inner.is_empty() => match reader.members(&value, &field_path)? {
                Some(members) => {
                    let mut object = Map::new();
                    for (member, item) in members {
                        let item_path = join(&field_path, &member);
                        let read = if !inner.contains(&member.as_str()) && unknown {
                            reader.whole(&item, &item_path)?
                        } else {
                            reader.shallow(&item, &item_path)?
                        };
                        if let Some(read) = read {
                            object.insert(member, read);
                        }
                    }
                    Some(Value::Object(object))
                }
                None => reader.shallow(&value, &field_path)?,
            },
            None if unknown => reader.whole(&value, &field_path)?,
            _ => reader.shallow(&value, &field_path)?,
        };
        if let Some(read) = read {
            out.insert(name, read);
        }
    }
    Ok(Some(Value::Object(out)))
}

/// Where the core may change a message: the envelope, the `ui` entry's
/// `initiator`, the two legacy arguments, and the echo in `result._meta`.
struct Slot {
    key: Key,
    children: &'static [Slot],
}

enum Key {
    Fixed(&'static str),
    Invocation,
    Ui,
}

const fn leaf(key: Key) -> Slot {
    Slot { key, children: &[] }
}

const SLOTS: &[Slot] = &[
    Slot {
        key: Key::Fixed("params"),
        children: &[
            Slot {
                key: Key::Fixed("_meta"),
                children: &[
                    leaf(Key::Invocation),
                    Slot {
                        key: Key::Ui,
                        children: &[leaf(Key::Fixed("initiator"))],
                    },
                ],
            },
            Slot {
                key: Key::Fixed("arguments"),
                children: &[
                    leaf(Key::Fixed("user_query")),
                    leaf(Key::Fixed("invocation_reason")),
                ],
            },
        ],
    },
    Slot {
        key: Key::Fixed("result"),
        children: &[Slot {
            key: Key::Fixed("_meta"),
            children: &[leaf(Key::Invocation)],
        }],
    },
];

/// A copy of `original` carrying what the core changed between `before` and
/// `after` (two skeletons): new objects along each changed path, every other
/// member shared by identity.
pub(super) fn write_back(
    original: &JsValue,
    before: &Skeleton,
    after: &Value,
    keys: &KeyOptions,
) -> Result<JsValue, JsValue> {
    let empty = Map::new();
    let before_map = before.value.as_object().unwrap_or(&empty);
    let after_map = after.as_object().unwrap_or(&empty);
    patch(
        original,
        before_map,
        after_map,
        SLOTS,
        "",
        &before.lossy,
        keys,
    )
}

fn patch(
    original: &JsValue,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    slots: &[Slot],
    path: &str,
    lossy: &[String],
    keys: &KeyOptions,
) -> Result<JsValue, JsValue> {
    let copy = js::copy(original)?;
    for slot in slots {
        let key = match slot.key {
            Key::Fixed(name) => name,
            Key::Invocation => keys.invocation_key(),
            Key::Ui => keys.ui_key(),
        };
        let slot_path = join(path, key);
        let forced = lossy.iter().any(|slot| overlaps(slot, &slot_path));
        let (was, is) = (before.get(key), after.get(key));
        if was == is && !forced {
            continue;
        }
        match (was, is) {
            (Some(Value::Object(was)), Some(Value::Object(is))) if !slot.children.is_empty() => {
                let inner = js::own(original, key)?;
                let patched = patch(&inner, was, is, slot.children, &slot_path, lossy, keys)?;
                js::put(&copy, key, &patched)?;
            }
            (_, Some(is)) => js::put(&copy, key, &to_js(is)?)?,
            (_, None) => js::remove(&copy, key)?,
        }
    }
    Ok(copy)
}

/// A new JS value for JSON the core made.
pub(super) fn to_js(value: &impl serde::Serialize) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value).map_err(|e| JsValue::from_str(&e.to_string()))?;
    js::parse(&text)
}
