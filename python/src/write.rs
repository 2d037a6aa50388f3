//! Python values out: JSON values as dicts, lists and scalars, and a
//! call's edits made on a copy of the message taken along the changed
//! paths, every other member shared with the input, which never changes.

use std::borrow::Cow;

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde::Serialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use mcp_provenance::__bindings::edit::{Edit, Put};
use mcp_provenance::KeyOptions;

/// JSON text as Python holds it: dicts with their members in the order
/// written, lists, and scalars.
pub(super) fn json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let mut reader = serde_json::Deserializer::from_str(text);
    Build(py)
        .deserialize(&mut reader)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// One of the core's results (a report, a record, changes) as Python holds
/// it: the JSON its `Serialize` writes, members in the order of its fields.
pub(super) fn serialized<'py, T: Serialize>(
    py: Python<'py>,
    result: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(result).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    json(py, &text)
}

/// Builds the Python value of the JSON it is handed.
struct Build<'py>(Python<'py>);

impl<'de, 'py> DeserializeSeed<'de> for Build<'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, from: D) -> Result<Self::Value, D::Error> {
        from.deserialize_any(self)
    }
}

impl<'de, 'py> Visitor<'de> for Build<'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, out: &mut std::fmt::Formatter) -> std::fmt::Result {
        out.write_str("JSON")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.None().into_bound(self.0))
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Self::Value, E> {
        flag.into_bound_py_any(self.0).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, whole: i64) -> Result<Self::Value, E> {
        whole.into_bound_py_any(self.0).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, whole: u64) -> Result<Self::Value, E> {
        whole.into_bound_py_any(self.0).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<Self::Value, E> {
        number.into_bound_py_any(self.0).map_err(E::custom)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0, text).into_any())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Self::Value, A::Error> {
        let list = PyList::empty(self.0);
        while let Some(item) = items.next_element_seed(Build(self.0))? {
            list.append(item).map_err(de::Error::custom)?;
        }
        Ok(list.into_any())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.0);
        while let Some(name) = members.next_key::<Cow<'de, str>>()? {
            let item = members.next_value_seed(Build(self.0))?;
            dict.set_item(name.as_ref(), item)
                .map_err(de::Error::custom)?;
        }
        Ok(dict.into_any())
    }
}

/// A deep copy of `value`, a JSON value read whole already: new dicts and
/// lists, in their order, the immutable scalars shared.
fn copy<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(dict) = value.cast::<PyDict>() {
        let out = PyDict::new(value.py());
        for (name, item) in dict.iter() {
            out.set_item(name, copy(&item)?)?;
        }
        return Ok(out.into_any());
    }
    if let Ok(list) = value.cast::<PyList>() {
        let out = PyList::empty(value.py());
        for item in list.iter() {
            out.append(copy(&item)?)?;
        }
        return Ok(out.into_any());
    }
    Ok(value.clone())
}

/// `message` with `edits` made, on a copy: each dict on the way to an
/// edited place is copied once, the rest is shared. `inputs` are the
/// call's other arguments, from 1 on, read whole already, for what an edit
/// copies.
pub(super) fn apply<'py>(
    message: &Bound<'py, PyAny>,
    edits: &[Edit],
    keys: &KeyOptions,
    inputs: &[&Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    let py = message.py();
    let Ok(root) = message.cast::<PyDict>() else {
        // The rules edit requests and responses only: objects.
        return Ok(message.clone());
    };
    // What is copied is read before anything changes.
    let mut puts = Vec::with_capacity(edits.len());
    for edit in edits {
        puts.push(match &edit.put {
            Put::Remove => None,
            Put::Text(text) => Some(text.into_bound_py_any(py)?),
            Put::Bool(flag) => Some(flag.into_bound_py_any(py)?),
            Put::Object => Some(PyDict::new(py).into_any()),
            Put::Json(text) => Some(json(py, text)?),
            // What stands in the message itself is shared; what another
            // argument holds is copied, so that the caller's later changes
            // to it never reach the message.
            Put::Copy { input, target } => {
                let source = match input {
                    0 => Some(message),
                    n => inputs.get(n - 1).copied(),
                };
                let mut at = source.cloned();
                for name in target.names(keys) {
                    at = match at.as_ref().map(|at| at.cast::<PyDict>()) {
                        Some(Ok(dict)) => dict.get_item(name)?,
                        _ => None,
                    };
                }
                match at {
                    Some(found) if *input > 0 => Some(copy(&found)?),
                    found => found,
                }
            }
        });
    }
    let copy = root.copy()?;
    // The dicts made or copied in this call, which edits change in place.
    let mut fresh = vec![copy.as_ptr()];
    'edits: for (edit, put) in edits.iter().zip(puts) {
        let names = edit.target.names(keys);
        let Some((last, path)) = names.split_last() else {
            continue;
        };
        let mut at = copy.clone();
        for name in path {
            let next = match at.get_item(name)? {
                None => PyDict::new(py),
                Some(child) => match child.cast::<PyDict>() {
                    Ok(dict) if fresh.contains(&dict.as_ptr()) => {
                        at = dict.clone();
                        continue;
                    }
                    Ok(dict) => dict.copy()?,
                    // Nothing is made below a value that is no object.
                    Err(_) => continue 'edits,
                },
            };
            at.set_item(name, &next)?;
            fresh.push(next.as_ptr());
            at = next;
        }
        match put {
            Some(put) => {
                // An object an edit made is this call's own: later edits fill it in place.
                if matches!(edit.put, Put::Object) {
                    fresh.push(put.as_ptr());
                }
                at.set_item(last, put)?;
            }
            None if at.contains(last)? => at.del_item(last)?,
            None => {}
        }
    }
    Ok(copy.into_any())
}
