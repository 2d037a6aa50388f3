//! `_meta` key names (KEY-1, KEY-2) and the two configurable keys (KEY-3).

use crate::diagnostics::Code;
use crate::error::Error;
use crate::options::{self, FromOptions, Inline, Member, Name, Naming, Options};

/// The SEP-2817 envelope key: `_meta["io.modelcontextprotocol/aiInvocation"]`.
///
/// # Examples
///
/// ```
/// assert!(mcp_provenance::is_reserved_meta_key(mcp_provenance::AI_INVOCATION_KEY));
/// ```
pub const AI_INVOCATION_KEY: &str = "io.modelcontextprotocol/aiInvocation";

/// The MCP Apps key whose entry carries `initiator`: `_meta["io.modelcontextprotocol/ui"]`.
///
/// # Examples
///
/// ```
/// assert!(mcp_provenance::is_valid_meta_key(mcp_provenance::UI_KEY));
/// ```
pub const UI_KEY: &str = "io.modelcontextprotocol/ui";

/// Whether `key` is a well-formed `_meta` key name (KEY-1): an optional prefix
/// of dot-separated labels and a `/`, then a name.
///
/// A label starts with an ASCII letter, ends with a letter or digit and holds
/// letters, digits and `-`. The name is empty, or starts and ends with a letter
/// or digit and holds letters, digits, `-`, `_` and `.`.
///
/// # Examples
///
/// ```
/// use mcp_provenance::is_valid_meta_key;
///
/// assert!(is_valid_meta_key("com.example/aiInvocation"));
/// assert!(is_valid_meta_key("progressToken"));
/// assert!(!is_valid_meta_key("com.example-/x"));  // a label ends with a letter or digit
/// assert!(!is_valid_meta_key("com.example/_x"));  // a name starts with a letter or digit
/// ```
pub fn is_valid_meta_key(key: &str) -> bool {
    match key.rsplit_once('/') {
        Some((prefix, name)) => prefix.split('.').all(is_label) && is_name(name),
        None => is_name(key),
    }
}

/// A label starts with a letter; inside, letters, digits and `-`.
fn is_label(label: &str) -> bool {
    shaped(label, u8::is_ascii_alphabetic, |b| {
        b.is_ascii_alphanumeric() || *b == b'-'
    })
    .unwrap_or(false)
}

/// A name is empty, or starts with a letter or digit; inside, also `-`, `_`, `.`.
fn is_name(name: &str) -> bool {
    shaped(name, u8::is_ascii_alphanumeric, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
    })
    .unwrap_or(true)
}

/// Whether `text` starts with a byte `first` accepts, ends with an ASCII
/// letter or digit and holds only bytes `inside` accepts; `None` when empty.
fn shaped(text: &str, first: fn(&u8) -> bool, inside: fn(&u8) -> bool) -> Option<bool> {
    let bytes = text.as_bytes();
    let (head, tail) = (bytes.first()?, bytes.last()?);
    Some(first(head) && tail.is_ascii_alphanumeric() && bytes.iter().all(inside))
}

/// The unprefixed keys the MCP specification (2026-07-28, SEP-414) reserves
/// for W3C Trace Context and Baggage.
pub(crate) const TRACE_CONTEXT_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// Whether `key` is reserved for MCP (KEY-2): its prefix's second label is
/// `modelcontextprotocol` or `mcp`, compared without regard to ASCII case
/// (domain labels are case-insensitive), or it is one of the trace context
/// keys `traceparent`, `tracestate` and `baggage`, which the specification
/// reserves without a prefix. Says nothing about well-formedness; ask
/// [`is_valid_meta_key`] for that.
///
/// # Examples
///
/// ```
/// use mcp_provenance::is_reserved_meta_key;
///
/// assert!(is_reserved_meta_key("io.modelcontextprotocol/aiInvocation"));
/// assert!(is_reserved_meta_key("com.mcp.tools/x"));
/// assert!(is_reserved_meta_key("traceparent"));
/// assert!(!is_reserved_meta_key("com.example.mcp/x")); // `mcp` is the third label
/// assert!(!is_reserved_meta_key("turnId"));            // no prefix at all
/// ```
pub fn is_reserved_meta_key(key: &str) -> bool {
    TRACE_CONTEXT_KEYS.contains(&key)
        || key
            .split_once('/')
            .and_then(|(prefix, _)| prefix.split('.').nth(1))
            .is_some_and(|label| {
                label.eq_ignore_ascii_case("modelcontextprotocol")
                    || label.eq_ignore_ascii_case("mcp")
            })
}

/// The option naming the envelope's key.
pub(crate) const INVOCATION_KEY: Name = Name::new("invocation_key", "invocationKey");
/// The option naming the `ui` entry's key.
pub(crate) const UI_KEY_OPTION: Name = Name::new("ui_key", "uiKey");
/// The key options of an options struct that holds them (a policy, lift
/// options): the field `keys` in Rust, in JS their members beside the others.
pub(crate) const KEYS: Inline = Inline {
    rust: "keys",
    what: KeyOptions::WHAT,
    members: KeyOptions::MEMBERS,
};

/// Which `_meta` keys carry the two entries (KEY-3). `None` means the default:
/// [`AI_INVOCATION_KEY`] and [`UI_KEY`]. Until SEP-2817 is accepted, an
/// experiment should use a vendor-owned key such as `com.example/aiInvocation`.
///
/// # Examples
///
/// ```
/// use mcp_provenance::KeyOptions;
///
/// let keys = KeyOptions { invocation_key: Some("com.example/aiInvocation".into()), ..KeyOptions::default() };
/// assert!(keys.check().is_ok());
/// assert_eq!(keys.invocation_key(), "com.example/aiInvocation");
/// assert_eq!(keys.ui_key(), "io.modelcontextprotocol/ui");
/// ```
///
/// Like every options struct, it is built with `..Default::default()` (a
/// field added later then needs no change), or deserialized by its field
/// names (feature `value`), and checked as it is read:
///
/// ```
/// use mcp_provenance::KeyOptions;
///
/// let keys: KeyOptions = serde_json::from_str(r#"{"invocation_key": "com.example/aiInvocation"}"#)?;
/// assert_eq!(keys.invocation_key(), "com.example/aiInvocation");
/// let err = serde_json::from_str::<KeyOptions>(r#"{"invocation_key": "io.mcp/x"}"#).unwrap_err();
/// assert!(err.to_string().starts_with("option `invocation_key` uses a prefix reserved for MCP"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyOptions {
    /// The key of the SEP-2817 envelope (`invocationKey`); default [`AI_INVOCATION_KEY`].
    pub invocation_key: Option<String>,
    /// The key of the MCP Apps entry holding `initiator` (`uiKey`); default [`UI_KEY`].
    pub ui_key: Option<String>,
}

impl KeyOptions {
    /// Reads key options from JSON with the JS names (`null` for the
    /// defaults), and checks them; messages name them as JS does.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, KeyOptions};
    /// use serde_json::json;
    ///
    /// let keys = KeyOptions::from_value(&json!({"uiKey": "com.example/ui"}))?;
    /// assert_eq!(keys.ui_key(), "com.example/ui");
    /// let err = KeyOptions::from_value(&json!({"uiKey": 5})).unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidOption);
    /// let err = KeyOptions::from_value(&json!({"uikey": "com.example/ui"})).unwrap_err();
    /// assert_eq!(err.code(), Code::UnknownOption);
    /// let err = KeyOptions::from_value(&json!({"uiKey": "dev.mcp/ui"})).unwrap_err();
    /// assert_eq!(err.to_string(), "option `uiKey` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        Self::from_slot(crate::json::Slot::of(value))
    }

    /// The key of the invocation envelope in force.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mcp_provenance::KeyOptions::default().invocation_key(), mcp_provenance::AI_INVOCATION_KEY);
    /// ```
    pub fn invocation_key(&self) -> &str {
        self.invocation_key.as_deref().unwrap_or(AI_INVOCATION_KEY)
    }

    /// The key of the `ui` entry in force.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(mcp_provenance::KeyOptions::default().ui_key(), mcp_provenance::UI_KEY);
    /// ```
    pub fn ui_key(&self) -> &str {
        self.ui_key.as_deref().unwrap_or(UI_KEY)
    }

    /// The first KEY-3 problem, if any: a configured key that is not a valid
    /// key name or is reserved for MCP, or two keys that are the same. A key
    /// equal to its own default is exempt. Messages name the fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, KeyOptions};
    ///
    /// let bad = KeyOptions { ui_key: Some("not a key".into()), ..KeyOptions::default() };
    /// let err = bad.check().unwrap_err();
    /// assert_eq!(err.code(), Code::InvalidKey);
    /// assert_eq!(err.to_string(), "option `ui_key` is not a valid _meta key name: expected [prefix/]name");
    /// ```
    pub fn check(&self) -> Result<(), Error> {
        self.check_as(Naming::Rust)
    }

    /// Every KEY-3 problem, for `validate` to report them all, naming the
    /// options as `naming` says.
    pub(crate) fn errors(&self, naming: Naming) -> Vec<Error> {
        if self.invocation_key.is_none() && self.ui_key.is_none() {
            return Vec::new();
        }
        let mut errors: Vec<Error> = [
            check_key(
                INVOCATION_KEY.get(naming),
                self.invocation_key.as_deref(),
                AI_INVOCATION_KEY,
            ),
            check_key(UI_KEY_OPTION.get(naming), self.ui_key.as_deref(), UI_KEY),
        ]
        .into_iter()
        .flatten()
        .collect();
        if self.invocation_key() == self.ui_key() {
            errors.push(Error::new(
                Code::ConflictingKeys,
                format!(
                    "options `{}` and `{}` name the same key; the two entries need keys of their own",
                    INVOCATION_KEY.get(naming),
                    UI_KEY_OPTION.get(naming)
                ),
            ));
        }
        errors
    }
}

fn check_key(option: &str, configured: Option<&str>, default: &str) -> Option<Error> {
    let key = configured.filter(|key| *key != default)?;
    if !is_valid_meta_key(key) {
        Some(Error::new(
            Code::InvalidKey,
            format!("option `{option}` is not a valid _meta key name: expected [prefix/]name"),
        ))
    } else if is_reserved_meta_key(key) {
        Some(Error::new(
            Code::ReservedKey,
            format!(
                "option `{option}` uses a prefix reserved for MCP; use a vendor-owned prefix such as com.example/"
            ),
        ))
    } else {
        None
    }
}

impl FromOptions for KeyOptions {
    const WHAT: &'static str = "key options";
    const MEMBERS: &'static [Member] = &[
        Member::Option(INVOCATION_KEY),
        Member::Option(UI_KEY_OPTION),
    ];

    fn read(options: &Options) -> Result<Self, Error> {
        Ok(KeyOptions {
            invocation_key: options.string(INVOCATION_KEY)?,
            ui_key: options.string(UI_KEY_OPTION)?,
        })
    }

    /// The first KEY-3 problem, if any.
    fn check_as(&self, naming: Naming) -> Result<(), Error> {
        self.errors(naming).into_iter().next().map_or(Ok(()), Err)
    }
}

impl KeyOptions {
    /// The key options an options struct holds ([`KEYS`]), read: the
    /// struct checks them with the rest of what it holds.
    pub(crate) fn inline(options: &Options) -> Result<Self, Error> {
        KeyOptions::read(&options.inline(KEYS)?)
    }
}

options::deserialize_by_rust_names!(KeyOptions);
