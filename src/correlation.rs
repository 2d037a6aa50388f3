//! Correlation: the identifiers today's clients already send in `_meta`
//! (a conversation, a turn, a request, a user, an organization, a trace),
//! read from a table of known keys and a policy's own (COR-2), each checked
//! and neutralized (COR-3, COR-4) and kept in an audit record as the
//! client's word, labelled with where it came from (COR-1). Sources that
//! disagree are all kept, and the disagreement reported (COR-5).
//!
//! Nothing here is ever authorization evidence: a client can send any of
//! these ids, and the record says so by keeping them under `clientAsserted`.

use serde::{Deserialize, Serialize};

use crate::diagnostics::{Code, Diagnostic, Rule, string_enum};
use crate::json::{Kind, Slot};
use crate::keys::KeyOptions;
use crate::path::Path;
use crate::schema::{EnvelopeField, Place};
use crate::text;
use crate::view::MessageView;

string_enum! {
    /// What a correlation id identifies.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::CorrelationKind;
    ///
    /// assert_eq!(CorrelationKind::ParentSpan.as_str(), "parentSpan");
    /// ```
    #[non_exhaustive]
    pub enum CorrelationKind {
        /// A conversation (a chat session, a thread).
        Conversation => "conversation",
        /// One user turn of a conversation.
        Turn => "turn",
        /// One request of the client's own, which may make several calls.
        Request => "request",
        /// The user, as the client names them (often anonymized).
        User => "user",
        /// The user's organization, as the client names it.
        Organization => "organization",
        /// A W3C trace id (`traceparent`).
        Trace => "trace",
        /// The caller's span, the parent of the server's (`traceparent`).
        ParentSpan => "parentSpan",
        /// The trace flags of `traceparent` (`01`: sampled).
        TraceFlags => "traceFlags",
    }
}

/// A `_meta` entry a client sends that holds a correlation id: the member
/// `member` of the value at `key`, or the value itself.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{CorrelationKind, KNOWN_CORRELATION_SOURCES};
///
/// let vscode = &KNOWN_CORRELATION_SOURCES[0];
/// assert_eq!((vscode.key, vscode.kind), ("vscode.conversationId", CorrelationKind::Conversation));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CorrelationSource {
    /// The `_meta` key.
    pub key: &'static str,
    /// The member of the key's object holding the id; `None`: the value itself.
    pub member: Option<&'static str>,
    /// What the id identifies.
    pub kind: CorrelationKind,
    /// Who sends it, and where that is written down.
    pub sent_by: &'static str,
}

const fn source(
    key: &'static str,
    member: Option<&'static str>,
    kind: CorrelationKind,
    sent_by: &'static str,
) -> CorrelationSource {
    CorrelationSource {
        key,
        member,
        kind,
        sent_by,
    }
}

const VSCODE: &str = "VS Code (Copilot Chat): microsoft/vscode PR 265303, \
    src/vs/workbench/contrib/mcp/common/mcpServer.ts";
const OPENAI: &str = "ChatGPT (Apps SDK): the `_meta` fields the client provides, \
    developers.openai.com/apps-sdk/reference; anonymized";
const CODEX: &str = "Codex: openai/codex PR 15190 (issue 7951), \
    codex-rs/core/src/turn_metadata.rs";

/// The keys today's clients send correlation ids under (COR-2), beside the
/// SEP-2817 envelope's `turnId` and `traceparent` (SEP-414), which every
/// record reads too. A policy adds its own (`correlationKeys`).
pub const KNOWN_CORRELATION_SOURCES: [CorrelationSource; 7] = [
    source(
        "vscode.conversationId",
        None,
        CorrelationKind::Conversation,
        VSCODE,
    ),
    source("vscode.requestId", None, CorrelationKind::Request, VSCODE),
    source(
        "openai/session",
        None,
        CorrelationKind::Conversation,
        OPENAI,
    ),
    source("openai/subject", None, CorrelationKind::User, OPENAI),
    source(
        "openai/organization",
        None,
        CorrelationKind::Organization,
        OPENAI,
    ),
    source(
        "x-codex-turn-metadata",
        Some("session_id"),
        CorrelationKind::Conversation,
        CODEX,
    ),
    source(
        "x-codex-turn-metadata",
        Some("turn_id"),
        CorrelationKind::Turn,
        CODEX,
    ),
];

/// The W3C Trace Context key (SEP-414 carries it in `_meta`, unprefixed).
pub(crate) const TRACEPARENT: &str = "traceparent";

/// The policy option that adds keys ([`crate::Policy::correlation_keys`]).
pub const OPTION: &str = "correlationKeys";

/// Every `_meta` key a record reads ids from unless a policy adds more:
/// `traceparent` and the known sources' keys, each once. A binding reads
/// these members of `_meta` (and a policy's) and no others; the
/// description lists them for it.
pub fn known_keys() -> Vec<&'static str> {
    let mut keys = vec![TRACEPARENT];
    for source in &KNOWN_CORRELATION_SOURCES {
        if !keys.contains(&source.key) {
            keys.push(source.key);
        }
    }
    keys
}

/// The longest correlation id a record keeps, in UTF-8 bytes (COR-3).
pub const MAX_ID_BYTES: usize = 256;

/// The most keys a policy may add (`correlationKeys`).
pub(crate) const MAX_POLICY_KEYS: usize = 64;

/// One correlation id as a record keeps it: what it identifies, its value
/// (neutralized, COR-3), and where it came from: the `_meta` key and, for an
/// id inside that key's object, the member.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{audit_record, AuditContext};
/// use serde_json::json;
///
/// let request = json!({"method": "tools/call", "params": {"name": "t", "_meta": {
///     "vscode.conversationId": "c-1"}}});
/// let record = audit_record(&request, &AuditContext::default())?;
/// assert_eq!(serde_json::to_value(&record.client_asserted.correlation)?, json!([
///     {"kind": "conversation", "value": "c-1", "key": "vscode.conversationId"}]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Correlation {
    /// What the id identifies.
    pub kind: CorrelationKind,
    /// The id, neutralized (AI-13, TXT-1), at most 256 bytes.
    pub value: String,
    /// The `_meta` key it came from.
    pub key: String,
    /// The member of that key's object it came from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
}

/// The ids of a request and what is wrong with the ones not kept.
pub(crate) struct Found<'t> {
    /// The ids kept, in the order read; from [`ids`], the envelope's
    /// `turnId` first.
    pub ids: Vec<Correlation>,
    pub diagnostics: Vec<Diagnostic>,
    /// The envelope's `turnId`, which other turn ids are compared with.
    turn: Option<&'t str>,
}

/// The correlation ids a record keeps of `request` (its envelope's `turnId`
/// as `turn` gives it, then `traceparent`'s, the known sources' and the
/// policy's (`extra`)), and the diagnostics of those it cannot keep.
pub(crate) fn ids<'t>(
    request: &MessageView,
    keys: &KeyOptions,
    turn: Option<&'t str>,
    extra: &[(String, CorrelationKind)],
) -> Found<'t> {
    let mut found = Found {
        ids: Vec::new(),
        diagnostics: Vec::new(),
        turn,
    };
    // Only where the view read `_meta`'s other members: a record whose
    // view did not holds no correlation at all, rather than a part of it.
    if let Some(turn) = turn.filter(|_| request.get(Place::MetaOthers).is_object()) {
        let field = EnvelopeField::TurnId.name();
        found.ids.push(Correlation {
            kind: CorrelationKind::Turn,
            value: turn.to_owned(),
            key: keys.invocation_key().to_owned(),
            member: Some(field.to_owned()),
        });
    }
    read(request, keys, extra, &mut found);
    found
}

/// What `validate` reports of the correlation ids of `request`: the same
/// reading as [`ids`], which makes no copy of a clean request's `turnId`.
pub(crate) fn diagnostics(
    request: &MessageView,
    keys: &KeyOptions,
    turn: Option<&str>,
    extra: &[(String, CorrelationKind)],
) -> Vec<Diagnostic> {
    let mut found = Found {
        ids: Vec::new(),
        diagnostics: Vec::new(),
        turn,
    };
    read(request, keys, extra, &mut found);
    found.diagnostics
}

/// Reads `traceparent`, the known sources and the policy's, in that order.
fn read(
    request: &MessageView,
    keys: &KeyOptions,
    extra: &[(String, CorrelationKind)],
    found: &mut Found,
) {
    let meta = request.get(Place::MetaOthers);
    if !meta.is_object() {
        return;
    }
    // The keys of the entries are theirs, even where a source has the same
    // name (natively `_meta`'s others are all of `_meta`, and what JS reads
    // of them may hold an entry too).
    let entries = [keys.invocation_key(), keys.ui_key()];
    let source = |name: &str| {
        !entries.contains(&name)
            && (name == TRACEPARENT
                || KNOWN_CORRELATION_SOURCES
                    .iter()
                    .any(|source| source.key == name)
                || extra.iter().any(|(key, _)| key == name))
    };
    // One pass over `_meta`; most requests hold none of these keys, and
    // then nothing is allocated.
    let present: Vec<(&str, Slot)> = meta
        .tree()
        .members()
        .filter(|(name, _)| source(name))
        .collect();
    if present.is_empty() {
        return;
    }
    let get = |key: &str| {
        present
            .iter()
            .find(|(name, _)| *name == key)
            .map_or(Slot::Absent, |(_, slot)| *slot)
    };
    let meta_path = Path::place(Place::Meta, keys);
    let traceparent = get(TRACEPARENT);
    if traceparent.is_present() {
        found.traceparent(traceparent, &meta_path.join(TRACEPARENT));
    }
    let policy = extra.iter().map(|(key, kind)| (key.as_str(), None, *kind));
    let known = KNOWN_CORRELATION_SOURCES
        .iter()
        .map(|source| (source.key, source.member, source.kind));
    for (key, member, kind) in known.chain(policy) {
        let at = meta_path.join(key);
        let value = get(key);
        match member {
            None => found.id(kind, value, key, None, &at),
            Some(member) => match value.kind() {
                None => {}
                Some(Kind::Object) => found.id(
                    kind,
                    value.tree().get(member),
                    key,
                    Some(member),
                    &at.join(member),
                ),
                // One diagnostic for the key, however many ids it was to hold.
                Some(_) if found.reported(&at) => {}
                Some(other) => found.invalid(
                    Code::InvalidCorrelation,
                    &at,
                    &format!(
                        "an entry holding correlation ids must be an object, not {}; none is kept",
                        other.article()
                    ),
                ),
            },
        }
    }
}

impl Found<'_> {
    /// A string id from a source: kept when it is a non-empty string within
    /// the limit, neutralized; otherwise reported and left out (COR-3).
    fn id(
        &mut self,
        kind: CorrelationKind,
        value: Slot,
        key: &str,
        member: Option<&str>,
        at: &Path,
    ) {
        let Some(found) = value.kind() else {
            return;
        };
        let Some(id) = value.str().filter(|id| !id.is_empty()) else {
            let what = if found == Kind::String {
                "an empty string"
            } else {
                found.article()
            };
            return self.invalid(
                Code::InvalidCorrelation,
                at,
                &format!("a correlation id must be a non-empty string, not {what}; it is not kept"),
            );
        };
        if value.text().is_some_and(|text| text.lossy) {
            return self.invalid(
                Code::LoneSurrogate,
                at,
                "a correlation id holds a lone UTF-16 surrogate, which reads as U+FFFD and so names no one id; it is not kept",
            );
        }
        // Measured as sent and as kept: a character replaced by U+FFFD
        // grows (to three bytes at most from one, so nothing is cut here),
        // and an id cut to fit would join the wrong records.
        let clean = (id.len() <= MAX_ID_BYTES).then(|| text::clean(id, 3 * MAX_ID_BYTES));
        let Some(clean) = clean.filter(|clean| clean.text.len() <= MAX_ID_BYTES) else {
            return self.invalid(
                Code::OverLimit,
                at,
                "a correlation id must be at most 256 bytes long; it is not kept",
            );
        };
        if clean.neutralized {
            self.invalid(
                Code::ControlCharacter,
                at,
                "a correlation id holds line breaks, control or bidi characters; it is kept with them replaced",
            );
        } else if clean.invisible {
            self.invalid(
                Code::InvisibleCharacter,
                at,
                "a correlation id holds invisible characters; it is kept with them replaced",
            );
        }
        self.keep(kind, clean.text.into_owned(), key, member, at);
    }

    /// `traceparent`: its trace id, parent span id and flags, when it is
    /// valid W3C Trace Context (COR-4); otherwise reported and ignored.
    fn traceparent(&mut self, value: Slot, at: &Path) {
        let Some((trace, parent, flags)) = value.str().and_then(parse_traceparent) else {
            return self.invalid(
                Code::InvalidTraceparent,
                at,
                "`traceparent` is not W3C Trace Context (version-traceid-parentid-flags in lower-case hex, neither id all zeros); it is ignored",
            );
        };
        for (kind, id) in [
            (CorrelationKind::Trace, trace),
            (CorrelationKind::ParentSpan, parent),
            (CorrelationKind::TraceFlags, flags),
        ] {
            self.keep(kind, id.to_owned(), TRACEPARENT, None, at);
        }
    }

    /// Keeps an id; reports it when an id of its kind from another source
    /// differs (COR-5: both are kept).
    fn keep(
        &mut self,
        kind: CorrelationKind,
        value: String,
        key: &str,
        member: Option<&str>,
        at: &Path,
    ) {
        let turn = self.turn.filter(|_| kind == CorrelationKind::Turn);
        let differs = turn.is_some_and(|turn| turn != value)
            || self
                .ids
                .iter()
                .any(|id| id.kind == kind && id.value != value);
        if differs {
            self.diagnostics.push(Diagnostic::breach(
                Code::CorrelationConflict,
                Rule::Cor5,
                at.render(),
                format!("a `{kind}` id that differs from another source's; both are kept, each with its source"),
            ));
        }
        self.ids.push(Correlation {
            kind,
            value,
            key: key.to_owned(),
            member: member.map(str::to_owned),
        });
    }

    /// A warning about a correlation id at `at` (COR-4 for `traceparent`, else COR-3).
    fn invalid(&mut self, code: Code, at: &Path, message: &str) {
        let rule = if code == Code::InvalidTraceparent {
            Rule::Cor4
        } else {
            Rule::Cor3
        };
        self.diagnostics
            .push(Diagnostic::breach(code, rule, at.render(), message));
    }

    /// Whether a diagnostic was made at `at` already.
    fn reported(&self, at: &Path) -> bool {
        let at = at.render();
        self.diagnostics.iter().any(|d| d.path == at)
    }
}

/// The trace id, parent span id and flags of a W3C `traceparent`: version,
/// trace id, parent id and flags in lower-case hex, separated by `-`; the
/// version not `ff`; version `00` exactly 55 characters, a later one at
/// least that, and then `-`; neither id all zeros.
///
/// # Examples
///
/// ```ignore
/// let ids = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
/// assert_eq!(ids, Some(("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "01")));
/// ```
pub(crate) fn parse_traceparent(text: &str) -> Option<(&str, &str, &str)> {
    let hex = |part: &str, len: usize| {
        part.len() == len
            && part
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let head = text.get(..55)?;
    let tail = text.get(55..)?;
    let mut parts = head.split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let zero = |id: &str| id.bytes().all(|b| b == b'0');
    let well_formed = hex(version, 2) && hex(trace, 32) && hex(parent, 16) && hex(flags, 2);
    let versioned = match version {
        "ff" => false,
        "00" => tail.is_empty(),
        _ => tail.is_empty() || tail.starts_with('-'),
    };
    (well_formed && versioned && !zero(trace) && !zero(parent)).then_some((trace, parent, flags))
}

#[cfg(test)]
mod tests {
    use super::parse_traceparent;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn traceparent_follows_w3c_trace_context() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(
            parse_traceparent(good),
            Some(("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "01"))
        );
        // A later version may carry more after a dash; version 00 may not.
        assert!(parse_traceparent(&format!("01{}-extra", &good[2..])).is_some());
        for bad in [
            &format!("00{}-extra", &good[2..]),
            &format!("01{}extra", &good[2..]),
            &format!("ff{}", &good[2..]),
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "",
            "é",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
    }
}
