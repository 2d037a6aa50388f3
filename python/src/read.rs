//! Python values in. A message is read along the table ([`mcp_provenance::schema`])
//! into a `serde_json::Value` that holds the places the rules read and
//! nothing else, which the core's views then read as they read any value:
//! `params.arguments` only for its two legacy members, `_meta`'s other
//! members only where a correlation id may be (and only for the calls that
//! record or check them), a place read as a scalar only for its type when
//! it is a container. Options and envelopes given on their own are read
//! whole.
//!
//! What JSON cannot hold (a float `nan` or an integer past a double, a set,
//! bytes, a model object, a `str` with a lone surrogate, nesting past 128
//! levels or a cycle) is [`Unreadable`], where it stands.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde_json::{Map, Number, Value};

use mcp_provenance::__bindings::correlation;
use mcp_provenance::__bindings::message::{MAX_DEPTH, Unreadable};
use mcp_provenance::__bindings::path::{Path, key_name};
use mcp_provenance::__bindings::schema::{Key, MESSAGE, Node, Place, Read};
use mcp_provenance::{CorrelationKind, KeyOptions};

/// The places of `message` the rules read, under `keys`; with
/// `correlation` (a policy's own correlation keys), also the members of
/// `_meta` a correlation id may be in (COR-2).
pub(super) fn message(
    message: &Bound<'_, PyAny>,
    keys: &KeyOptions,
    correlation: Option<&[(String, CorrelationKind)]>,
) -> Result<Value, Unreadable> {
    let names = NAMES.get_or_init(message.py(), || Names::new(message.py()));
    Reader {
        keys,
        correlation,
        names,
    }
    .node(&MESSAGE, message)
}

/// The names members are looked up by, as Python strings made once (a
/// lookup then neither makes nor hashes one): each place's under the
/// default keys, and the known correlation sources'.
struct Names {
    places: Vec<Option<Py<PyString>>>,
    sources: Vec<(&'static str, Py<PyString>)>,
}

static NAMES: PyOnceLock<Names> = PyOnceLock::new();

impl Names {
    fn new(py: Python<'_>) -> Self {
        fn walk(
            py: Python<'_>,
            node: &Node,
            keys: &KeyOptions,
            places: &mut [Option<Py<PyString>>],
        ) {
            for child in node.children {
                if let Some(slot) = places.get_mut(child.place as usize) {
                    *slot = Some(PyString::new(py, key_name(child.key, keys)).unbind());
                }
                walk(py, child, keys, places);
            }
        }
        let mut places: Vec<Option<Py<PyString>>> = (0..Place::COUNT).map(|_| None).collect();
        walk(py, &MESSAGE, &KeyOptions::default(), &mut places);
        let sources = correlation::known_keys()
            .into_iter()
            .map(|name| (name, PyString::new(py, name).unbind()))
            .collect();
        Names { places, sources }
    }
}

/// All of `value`, read whole (`None` is JSON's null); `skip` names
/// members of a top-level dict left out (read apart, as `validate`'s
/// `request` is).
pub(super) fn whole(value: Option<&Bound<'_, PyAny>>, skip: &[&str]) -> Result<Value, Unreadable> {
    let Some(value) = value else {
        return Ok(Value::Null);
    };
    let read = match value.cast::<PyDict>() {
        Ok(dict) => object(dict, 0, skip),
        Err(_) => self::value(value, 0),
    };
    read.map_err(|broken| broken.at(String::new()))
}

/// What reads a message along the table.
struct Reader<'k> {
    keys: &'k KeyOptions,
    correlation: Option<&'k [(String, CorrelationKind)]>,
    names: &'k Names,
}

impl Reader<'_> {
    /// What `node`'s place holds, as far as the rules read it.
    fn node(&self, node: &Node, value: &Bound<'_, PyAny>) -> Result<Value, Unreadable> {
        let read = match (node.read, value.cast::<PyDict>()) {
            (Read::Envelope, _) => self::value(value, 0),
            (Read::Object, Ok(dict)) => return self.members(node, dict),
            // A container read as a scalar is read for its type.
            (_, Ok(_)) => Ok(Value::Object(Map::new())),
            _ if value.cast::<PyList>().is_ok() => Ok(Value::Array(Vec::new())),
            _ => scalar(value),
        };
        read.map_err(|broken| broken.at(self.path(node).render()))
    }

    /// The members of `dict`, an object the table reads into: its
    /// children's, and, where it reads the others and the call asks for
    /// correlation ids, the sources'.
    fn members(&self, node: &Node, dict: &Bound<'_, PyDict>) -> Result<Value, Unreadable> {
        let py = dict.py();
        let mut out = Map::new();
        for child in node.children.iter().filter(|c| c.read != Read::Others) {
            if let Some(item) = self.member(dict, &self.name(py, child), node)? {
                let name = key_name(child.key, self.keys).to_owned();
                out.insert(name, self.node(child, &item)?);
            }
        }
        let others = node.children.iter().any(|child| child.read == Read::Others);
        let Some(extra) = self.correlation.filter(|_| others) else {
            return Ok(Value::Object(out));
        };
        let known = self
            .names
            .sources
            .iter()
            .map(|(name, key)| (*name, key.bind(py).clone()));
        let extra = extra
            .iter()
            .map(|(name, _)| (name.as_str(), PyString::new(py, name)));
        for (name, key) in known.chain(extra) {
            // A name its children read stays theirs.
            if out.contains_key(name) {
                continue;
            }
            if let Some(item) = self.member(dict, &key, node)? {
                let read = value(&item, 0)
                    .map_err(|broken| broken.at(self.path(node).join(name).render()))?;
                out.insert(name.to_owned(), read);
            }
        }
        Ok(Value::Object(out))
    }

    /// The name `child` is looked up by: the one made once, but for a
    /// configured key.
    fn name<'py>(&self, py: Python<'py>, child: &Node) -> Bound<'py, PyString> {
        let configured = match child.key {
            Key::Invocation => self.keys.invocation_key.as_deref(),
            Key::Ui => self.keys.ui_key.as_deref(),
            _ => None,
        };
        let made = self
            .names
            .places
            .get(child.place as usize)
            .and_then(Option::as_ref);
        match (configured, made) {
            (None, Some(made)) => made.bind(py).clone(),
            _ => PyString::new(py, key_name(child.key, self.keys)),
        }
    }

    /// Member `key` of `dict`, the place of `node`.
    fn member<'py>(
        &self,
        dict: &Bound<'py, PyDict>,
        key: &Bound<'py, PyString>,
        node: &Node,
    ) -> Result<Option<Bound<'py, PyAny>>, Unreadable> {
        dict.get_item(key).map_err(|_| Unreadable {
            path: self.path(node).render(),
            what: "a dict whose members cannot be looked up".into(),
        })
    }

    /// The JSON Pointer of `node`'s place, under the keys in force.
    fn path(&self, node: &Node) -> Path<'_> {
        Path::place(node.place, self.keys)
    }
}

/// A value that cannot be read as JSON: what stands there, and the names
/// from the value read whole down to it, innermost first (gathered only
/// on the way out of a failed read).
struct Broken {
    what: Cow<'static, str>,
    names: Vec<String>,
}

impl Broken {
    fn new(what: impl Into<Cow<'static, str>>) -> Self {
        Broken {
            what: what.into(),
            names: Vec::new(),
        }
    }

    /// The same, found below member (or index) `name`.
    fn under(mut self, name: impl Into<String>) -> Self {
        self.names.push(name.into());
        self
    }

    /// Where it is, the value read whole standing at `start`.
    fn at(self, start: String) -> Unreadable {
        let mut path = start;
        for name in self.names.iter().rev() {
            path.push_str(&Path::ROOT.join(name).render());
        }
        Unreadable {
            path,
            what: self.what,
        }
    }
}

/// A value, read whole.
fn value(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Broken> {
    if let Ok(dict) = value.cast::<PyDict>() {
        return object(dict, depth, &[]);
    }
    let Ok(list) = value.cast::<PyList>() else {
        return scalar(value);
    };
    if depth >= MAX_DEPTH {
        return Err(Broken::new(TOO_DEEP));
    }
    let mut items = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        items
            .push(self::value(&item, depth + 1).map_err(|broken| broken.under(index.to_string()))?);
    }
    Ok(Value::Array(items))
}

/// What reading deeper than [`MAX_DEPTH`] meets.
const TOO_DEEP: &str = "nesting deeper than 128 levels (or a cycle)";

/// A dict read whole, but for the members named in `skip`.
fn object(dict: &Bound<'_, PyDict>, depth: usize, skip: &[&str]) -> Result<Value, Broken> {
    if depth >= MAX_DEPTH {
        return Err(Broken::new(TOO_DEEP));
    }
    let mut members = Map::new();
    for (name, item) in dict.iter() {
        let Ok(name) = name.cast::<PyString>() else {
            return Err(Broken::new("a member name that is not a string"));
        };
        let Ok(name) = name.to_str() else {
            return Err(Broken::new("a member name holding a lone surrogate"));
        };
        if skip.contains(&name) {
            continue;
        }
        let read = self::value(&item, depth + 1).map_err(|broken| broken.under(name))?;
        members.insert(name.to_owned(), read);
    }
    Ok(Value::Object(members))
}

/// A value that is no container: a string, number, boolean or null.
fn scalar(value: &Bound<'_, PyAny>) -> Result<Value, Broken> {
    if let Ok(text) = value.cast::<PyString>() {
        return match text.to_str() {
            Ok(text) => Ok(Value::String(text.to_owned())),
            Err(_) => Err(Broken::new("a string holding a lone surrogate")),
        };
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    // Before integers: a bool is one in Python.
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.cast::<PyInt>().is_ok() {
        if let Ok(whole) = value.extract::<i64>() {
            return Ok(Value::Number(whole.into()));
        }
        if let Ok(whole) = value.extract::<u64>() {
            return Ok(Value::Number(whole.into()));
        }
        // Wider integers read as JSON numbers do (and serde_json reads
        // their text): as the nearest double.
        return value
            .extract::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| Broken::new(NOT_A_NUMBER));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return Number::from_f64(float.value())
            .map(Value::Number)
            .ok_or_else(|| Broken::new(NOT_A_NUMBER));
    }
    Err(Broken::new(match value.get_type().name() {
        Ok(name) => Cow::Owned(format!("a `{name}`")),
        Err(_) => Cow::Borrowed("an object of no JSON type"),
    }))
}

/// What `nan`, `inf` and an integer past a double are.
const NOT_A_NUMBER: &str = "a number JSON cannot hold";
