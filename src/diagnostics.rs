//! The vocabulary of results: rule IDs, codes, diagnostics, reports and changes.

use serde::{Deserialize, Serialize};

/// Declares a fieldless enum whose variants stand for fixed strings, with
/// `ALL`, `as_str`, `Display` and serde as those strings.
macro_rules! string_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vmeta])* $variant,)* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The string this value stands for on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == text)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&text, &[$($text),*]))
            }
        }
    };
}
pub(crate) use string_enum;

string_enum! {
    /// A rule of `docs/rules.md`, by its stable ID.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Rule;
    ///
    /// assert_eq!(Rule::Ai13.as_str(), "AI-13");
    /// assert_eq!(Rule::ALL.len(), 46);
    /// ```
    #[non_exhaustive]
    pub enum Rule {
        /// `validate` takes any value and reports what is not a JSON-RPC message.
        Msg1 => "MSG-1",
        /// A report lists at most 64 diagnostics, then one saying how many more there were.
        Msg2 => "MSG-2",
        /// A lone UTF-16 surrogate reads as U+FFFD, and is reported and listed as a change.
        Msg3 => "MSG-3",
        /// The `_meta` key grammar `[prefix/]name`.
        Key1 => "KEY-1",
        /// Prefixes whose second label is `modelcontextprotocol` or `mcp` are MCP's.
        Key2 => "KEY-2",
        /// A configured key must be valid and not reserved; the defaults are exempt.
        Key3 => "KEY-3",
        /// The invocation envelope is optional.
        Ai1 => "AI-1",
        /// The envelope is an object; its four fields are optional.
        Ai2 => "AI-2",
        /// `invocationReason` is an object with a required string `text`.
        Ai3 => "AI-3",
        /// `model` is an object with a required string `name`.
        Ai4 => "AI-4",
        /// `userIntent` is an object with optional string `text` and boolean `redacted`.
        Ai5 => "AI-5",
        /// An empty or absent `userIntent` is not malformed.
        Ai6 => "AI-6",
        /// `turnId` is an opaque string.
        Ai7 => "AI-7",
        /// Unknown envelope fields are tolerated, kept or dropped by policy.
        Ai8 => "AI-8",
        /// Bare `_meta.turnId` and friends are not this convention.
        Ai9 => "AI-9",
        /// Envelope fields are client-asserted, never authorization evidence.
        Ai10 => "AI-10",
        /// Only `turnId` may be echoed in a response.
        Ai11 => "AI-11",
        /// Intermediaries forward the envelope unmodified unless a policy says otherwise.
        Ai12 => "AI-12",
        /// Log-forging characters are neutralized before persisting.
        Ai13 => "AI-13",
        /// Per-field and total byte limits; truncation never splits a code point.
        Ai14 => "AI-14",
        /// `userIntent.redacted` is true whenever the text was changed or removed.
        Ai15 => "AI-15",
        /// Viewers encode envelope text for output, never as markup.
        Ai16 => "AI-16",
        /// Legacy `user_query` / `invocation_reason` arguments may be lifted.
        Ai17 => "AI-17",
        /// The Host adds or overwrites `initiator: "app"` on View-originated requests.
        Ui1 => "UI-1",
        /// The Host never sets `initiator: "app"` on model-originated calls.
        Ui2 => "UI-2",
        /// A View-supplied initiator is never trusted.
        Ui3 => "UI-3",
        /// Absence of `initiator` means unknown, never "model".
        Ui4 => "UI-4",
        /// Stamping touches only `initiator`.
        Ui5 => "UI-5",
        /// The initiator is host-attested, kept apart from other facts.
        Ui6 => "UI-6",
        /// Known initiators are `app`, `model`, `user`, `host`; others are flagged.
        Ui7 => "UI-7",
        /// Proxies and gateways preserve the `ui` entry.
        Ui8 => "UI-8",
        /// Invisible characters that carry no meaning are reported and replaced.
        Txt1 => "TXT-1",
        /// Correlation ids are the client's word, kept labelled with their source.
        Cor1 => "COR-1",
        /// Correlation ids are read from a table of known `_meta` keys, and a policy's own.
        Cor2 => "COR-2",
        /// A correlation id is a non-empty string within 256 bytes, neutralized.
        Cor3 => "COR-3",
        /// `traceparent` is W3C Trace Context; an invalid one is ignored.
        Cor4 => "COR-4",
        /// Sources that disagree on an id are all kept, and the disagreement reported.
        Cor5 => "COR-5",
        /// A filter forwards what came, byte for byte, but for what a rule changed.
        Wire1 => "WIRE-1",
        /// A body is strict JSON text; each message a request, notification or response.
        Wire2 => "WIRE-2",
        /// A member duplicated where a rule reads refuses its message.
        Wire3 => "WIRE-3",
        /// Depth and batch size are bounded.
        Wire4 => "WIRE-4",
        /// Every key and every message: the policy applies to each envelope found.
        Wire5 => "WIRE-5",
        /// Redacting, a bare `_meta.userIntent` refuses its request.
        Wire6 => "WIRE-6",
        /// On the way back, a result echoes its request's `turnId` alone.
        Wire7 => "WIRE-7",
        /// The way back reads an answer as the clients read it, and passes on
        /// nothing it could not read.
        Wire8 => "WIRE-8",
        /// An audit line holds a message's `params.arguments` as
        /// `auditArguments` says, and says when it left them out.
        Wire9 => "WIRE-9",
    }
}

string_enum! {
    /// A stable, kebab-case code for a [`Diagnostic`] or an [`Error`](crate::Error).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Code;
    ///
    /// assert_eq!(Code::ControlCharacter.as_str(), "control-character");
    /// ```
    #[non_exhaustive]
    pub enum Code {
        /// The value is not a JSON-RPC message object (diagnostic; or an error from `sanitize`).
        NotAMessage => "not-a-message",
        /// A JS value that cannot be read as JSON: a cycle, a throwing getter or
        /// Proxy trap, a BigInt, a symbol, a function, a class instance (diagnostic
        /// or error; only the JS package meets these).
        Unreadable => "unreadable",
        /// The value is not a request: an object with a string `method` (error).
        NotARequest => "not-a-request",
        /// The value is not a response: an object with `result` or `error` (error).
        NotAResponse => "not-a-response",
        /// A value has the wrong JSON type (diagnostic or error).
        InvalidType => "invalid-type",
        /// A required field is absent (diagnostic).
        MissingField => "missing-field",
        /// A field the envelope does not define (diagnostic).
        UnknownField => "unknown-field",
        /// A bare `_meta` key that belongs inside the envelope (diagnostic).
        BareKey => "bare-key",
        /// A string holds a log-forging or bidi control character (diagnostic).
        ControlCharacter => "control-character",
        /// A field or the whole envelope is over its default byte limit (diagnostic).
        OverLimit => "over-limit",
        /// A response echoes more than `turnId` (diagnostic).
        EchoLeak => "echo-leak",
        /// A response echoes a `turnId` its request did not send (diagnostic).
        TurnIdMismatch => "turn-id-mismatch",
        /// An initiator outside `app`, `model`, `user`, `host` (diagnostic).
        UnknownInitiator => "unknown-initiator",
        /// The invocation given to `attachInvocation` breaks the envelope's schema (error).
        InvalidInvocation => "invalid-invocation",
        /// A configured key is not a valid `_meta` key name (diagnostic or error).
        InvalidKey => "invalid-key",
        /// A configured key uses a prefix reserved for MCP (diagnostic or error).
        ReservedKey => "reserved-key",
        /// The invocation key and the `ui` key are the same (diagnostic or error).
        ConflictingKeys => "conflicting-keys",
        /// A byte limit of the policy is out of range (error).
        InvalidLimit => "invalid-limit",
        /// An option has the wrong type or an unknown value (error).
        InvalidOption => "invalid-option",
        /// An options object has a member of a name it does not have (error;
        /// a diagnostic from `validate`).
        UnknownOption => "unknown-option",
        /// A string holds an invisible character that carries no meaning, a tag
        /// character or a zero-width one (diagnostic, TXT-1).
        InvisibleCharacter => "invisible-character",
        /// More diagnostics were found than a report lists (diagnostic, MSG-2).
        TooManyDiagnostics => "too-many-diagnostics",
        /// A string holds a lone UTF-16 surrogate, read as U+FFFD (diagnostic, MSG-3).
        LoneSurrogate => "lone-surrogate",
        /// The WebAssembly module ran out of memory or trapped; the call was
        /// refused and the module starts afresh (error; only the JS package meets it).
        ResourceExhausted => "resource-exhausted",
        /// The JS side and the module disagreed: a bug of the package, never of
        /// the input (error; only the JS package meets it).
        InternalError => "internal-error",
        /// An initiator argument outside `app`, `model`, `user`, `host` (error).
        InvalidInitiator => "invalid-initiator",
        /// A body that is not JSON text in UTF-8 (a refusal of the wire filter, WIRE-2).
        ParseError => "parse-error",
        /// A message that is not a request, notification or response, or an
        /// empty batch (a refusal of the wire filter, WIRE-2).
        InvalidRequest => "invalid-request",
        /// A member duplicated where a rule reads (a refusal of the wire filter, WIRE-3).
        DuplicateMember => "duplicate-member",
        /// Nesting past the filter's depth bound (a refusal of the wire filter, WIRE-4).
        TooDeep => "too-deep",
        /// A batch of more messages than the filter takes (a refusal of the wire filter, WIRE-4).
        BatchTooLarge => "batch-too-large",
        /// A bare `_meta.userIntent` where the policy redacts intents (a
        /// refusal of the wire filter, WIRE-6).
        BareUserIntent => "bare-user-intent",
        /// A call of the package made while another of its calls was still
        /// at work (from a getter or Proxy trap of a value it was reading):
        /// refused, and the other call unharmed (error; only the JS package
        /// meets it).
        ReentrantCall => "reentrant-call",
        /// WebAssembly cannot be compiled here: a Content-Security-Policy
        /// without `'wasm-unsafe-eval'`, or a runtime without WebAssembly
        /// (error; only the JS package meets it).
        WasmUnavailable => "wasm-unavailable",
        /// A correlation id is not a non-empty string (diagnostic, COR-3).
        InvalidCorrelation => "invalid-correlation",
        /// A `traceparent` is not W3C Trace Context (diagnostic, COR-4).
        InvalidTraceparent => "invalid-traceparent",
        /// Two sources give one kind of correlation id different values
        /// (diagnostic, COR-5).
        CorrelationConflict => "correlation-conflict",
        /// A body sent with no `Content-Type`, or one other than
        /// `application/json` (a refusal of the wire filter, WIRE-2).
        UnsupportedMediaType => "unsupported-media-type",
        /// A body whose `Content-Type` names a charset other than utf-8 (a
        /// refusal of the wire filter, WIRE-2).
        UnsupportedCharset => "unsupported-charset",
        /// A body sent with a `Content-Encoding` (a refusal of the wire
        /// filter, WIRE-2).
        UnsupportedEncoding => "unsupported-encoding",
        /// A message carries `initiator` under two `ui` keys, with values
        /// that differ: neither is recorded (diagnostic, UI-4).
        ConflictingInitiator => "conflicting-initiator",
    }
}

string_enum! {
    /// The keyword a rule is stated with (RFC 2119), which says how serious
    /// a breach of it is: of a MUST, an error (a `FAILURE` for `probe`); of
    /// a SHOULD, a warning; a MAY is never broken, only reported. One table,
    /// [`Rule::level`], for the library's diagnostics and both commands.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Level, Rule, Severity};
    ///
    /// assert_eq!(Rule::Ai11.level(), Level::Should);
    /// assert_eq!(Level::Should.severity(), Severity::Warning);
    /// ```
    pub enum Level {
        /// An absolute requirement.
        Must => "MUST",
        /// A recommendation: a breach is allowed for a reason, and warned of.
        Should => "SHOULD",
        /// An option.
        May => "MAY",
    }
}

impl Level {
    /// The severity of a breach of a rule stated at this level.
    pub fn severity(self) -> Severity {
        match self {
            Level::Must => Severity::Error,
            Level::Should | Level::May => Severity::Warning,
        }
    }
}

impl Rule {
    /// The keyword the rule is stated with in `docs/rules.md` (its table of
    /// levels): what a breach of it is. A value of the wrong type breaks the
    /// proposals' schema and is an error whatever the rule it sits under;
    /// MSG-2's summary diagnostic takes the severity of what it summarizes.
    pub const fn level(self) -> Level {
        use Level::{May, Must, Should};
        match self {
            Rule::Msg1 | Rule::Msg2 => Must,
            Rule::Msg3 => Should,
            Rule::Key1 | Rule::Key2 => Must,
            Rule::Key3 => Should,
            Rule::Ai1 | Rule::Ai2 | Rule::Ai3 | Rule::Ai4 | Rule::Ai5 | Rule::Ai6 | Rule::Ai7 => {
                Must
            }
            Rule::Ai8 | Rule::Ai9 => Should,
            Rule::Ai10 => Must,
            Rule::Ai11 | Rule::Ai12 | Rule::Ai13 | Rule::Ai14 => Should,
            Rule::Ai15 | Rule::Ai16 => Must,
            Rule::Ai17 => May,
            Rule::Ui1 | Rule::Ui2 | Rule::Ui3 | Rule::Ui4 | Rule::Ui5 | Rule::Ui6 => Must,
            Rule::Ui7 | Rule::Ui8 => Should,
            Rule::Txt1 => Should,
            Rule::Cor1 | Rule::Cor2 => Must,
            Rule::Cor3 | Rule::Cor4 => Should,
            Rule::Cor5 => May,
            Rule::Wire1
            | Rule::Wire2
            | Rule::Wire3
            | Rule::Wire4
            | Rule::Wire5
            | Rule::Wire6
            | Rule::Wire7
            | Rule::Wire8
            | Rule::Wire9 => Must,
        }
    }
}

string_enum! {
    /// How serious a [`Diagnostic`] is: a MUST-level or schema breach is an
    /// error, a SHOULD-level one a warning.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Severity;
    ///
    /// assert_eq!(Severity::Warning.as_str(), "warning");
    /// ```
    pub enum Severity {
        /// Breaks a MUST or the schema: the message is not valid.
        Error => "error",
        /// Breaks a SHOULD, or is something `sanitize` would change.
        Warning => "warning",
    }
}

string_enum! {
    /// What `sanitize` did to one place of the envelope.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Action;
    ///
    /// assert_eq!(Action::Truncated.as_str(), "truncated");
    /// ```
    #[non_exhaustive]
    pub enum Action {
        /// Log-forging characters were replaced (AI-13).
        Neutralized => "neutralized",
        /// The text was cut to its byte limit and ends with "…" (AI-14).
        Truncated => "truncated",
        /// The text was removed by the `userIntent: "redact"` policy (AI-15).
        Redacted => "redacted",
        /// The member was removed: malformed, unknown, over the envelope limit or by policy.
        Dropped => "dropped",
        /// More changes were made than are listed: the list stops at 64 (MSG-2).
        Omitted => "omitted",
        /// A legacy argument's text was moved into the envelope (AI-17; the wire filter).
        Lifted => "lifted",
    }
}

/// One finding about a message.
///
/// `path` is an RFC 6901 JSON Pointer from the message root (`""` for the
/// options of the call). `message` names the place and the expected type,
/// never the value that was sent.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{validate, Code, Rule, Severity, ValidateOptions};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"turnId": 7}}}});
/// let report = validate(&request, &ValidateOptions::default());
/// let d = &report.diagnostics[0];
/// assert_eq!((d.code, d.severity, d.rule), (Code::InvalidType, Severity::Error, Rule::Ai7));
/// assert_eq!(d.path, "/params/_meta/io.modelcontextprotocol~1aiInvocation/turnId");
/// assert_eq!(d.message, "`turnId` must be a string, not a number");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// Stable code of the finding.
    pub code: Code,
    /// Error (the message is invalid) or warning.
    pub severity: Severity,
    /// The rule the finding cites.
    pub rule: Rule,
    /// Where: an RFC 6901 JSON Pointer from the message root.
    pub path: String,
    /// What is wrong, for a person; never quotes the value.
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn error(code: Code, rule: Rule, path: String, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, rule, path, message)
    }

    /// A breach of `rule`, as serious as the rule's [`Level`] says.
    pub(crate) fn breach(code: Code, rule: Rule, path: String, message: impl Into<String>) -> Self {
        Self::new(code, rule.level().severity(), rule, path, message)
    }

    /// `what` is of the wrong JSON type: names the expected type and the
    /// type found (both with their article), never the value.
    pub(crate) fn invalid_type(
        what: &str,
        expected: &str,
        found: &str,
        rule: Rule,
        path: String,
    ) -> Self {
        let message = format!("{what} must be {expected}, not {found}");
        Self::error(Code::InvalidType, rule, path, message)
    }

    fn new(
        code: Code,
        severity: Severity,
        rule: Rule,
        path: String,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity,
            rule,
            path,
            message: message.into(),
        }
    }
}

/// The most diagnostics a report lists, and changes `sanitize` lists (MSG-2).
pub(crate) const MAX_LISTED: usize = 64;

/// Caps a list of changes as a report caps its diagnostics (MSG-2): the
/// first 64, then one `omitted` change at path `""`.
pub(crate) fn cap(changes: &mut Vec<Change>) {
    if changes.len() > MAX_LISTED {
        changes.truncate(MAX_LISTED);
        changes.push(Change {
            action: Action::Omitted,
            path: String::new(),
            rule: Rule::Msg2,
        });
    }
}

/// What [`validate`](crate::validate) found: `valid` is true exactly when no
/// diagnostic is an error. At most 64 are listed, in the order of the
/// message; when more were found, one more diagnostic says how many were
/// left out, an error when any of them was (MSG-2).
///
/// # Examples
///
/// ```
/// use mcp_provenance::{validate, ValidateOptions};
/// use serde_json::json;
///
/// let report = validate(&json!({"method": "ping"}), &ValidateOptions::default());
/// assert!(report.valid && report.diagnostics.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Report {
    /// No diagnostic has error severity.
    pub valid: bool,
    /// Every finding, in the order of the message.
    pub diagnostics: Vec<Diagnostic>,
}

impl From<Vec<Diagnostic>> for Report {
    fn from(mut diagnostics: Vec<Diagnostic>) -> Self {
        let valid = diagnostics.iter().all(|d| d.severity != Severity::Error);
        if diagnostics.len() > MAX_LISTED {
            let left_out = diagnostics.split_off(MAX_LISTED);
            let severity = if left_out.iter().any(|d| d.severity == Severity::Error) {
                Severity::Error
            } else {
                Severity::Warning
            };
            let count = left_out.len();
            diagnostics.push(Diagnostic::new(
                Code::TooManyDiagnostics,
                severity,
                Rule::Msg2,
                String::new(),
                format!(
                    "{count} more diagnostics were found; a report lists the first {MAX_LISTED}"
                ),
            ));
        }
        Report { valid, diagnostics }
    }
}

/// One thing [`sanitize`](crate::sanitize) changed, at an RFC 6901 JSON
/// Pointer from the message root, citing the rule that made it change.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{sanitize, Action, Policy, Rule};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"_meta": {
///     "io.modelcontextprotocol/aiInvocation": {"turnId": "a\nb"}}}});
/// let out = sanitize(request, &Policy::default())?;
/// assert_eq!(out.changes[0].action, Action::Neutralized);
/// assert_eq!(out.changes[0].rule, Rule::Ai13);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Change {
    /// What was done.
    pub action: Action,
    /// Where: an RFC 6901 JSON Pointer from the message root.
    pub path: String,
    /// The rule that called for it.
    pub rule: Rule,
}
