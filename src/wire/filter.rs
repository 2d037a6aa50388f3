//! The [`Filter`]: a body read once, the rules run on each message it
//! holds, under every pair of keys it is read with, and their edits carried
//! out on its text (`wire/mod.rs` gives the whole).

use super::headers;
use super::options::{AuditArguments, FilterContext, FilterOptions};
use super::outcome::{self, Looked, MessageKind, Outcome, Refusal, Seen, reply};
use super::parse::{Body, Fault, Keys, ParsedMessage, Parser};
use super::patch::Patch;
use crate::audit::{self, AuditContext, RequestId};
use crate::diagnostics::{Code, Diagnostic, Report, Rule, Severity};
use crate::echo;
use crate::error::Error;
use crate::initiator;
use crate::invocation;
use crate::json::Slot;
use crate::json::doc::{Doc, Entry, Raw};
use crate::keys::KeyOptions;
use crate::legacy;
#[cfg(feature = "value")]
use crate::options::FromOptions;
use crate::options::Naming;
use crate::path::Path;
use crate::policy::{IntentPolicy, Policy};
use crate::sanitize;
use crate::schema::{EnvelopeField, Group, Place, Reads};
use crate::validate;
use crate::view::MessageView;

/// A gateway's filter, its options bound and checked once.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Filter, FilterContext, FilterOptions, IntentPolicy, Policy, Verdict};
///
/// let filter = Filter::new(FilterOptions {
///     policy: Some(Policy { user_intent: IntentPolicy::Redact, ..Policy::default() }),
///     ..FilterOptions::default()
/// })?;
/// let body = br#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"q",
///   "arguments":{"n":1e400},"_meta":{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"text":"secret"}}}}}"#;
/// let outcome = filter.filter(body, &FilterContext::default());
/// let Verdict::Forward { body, .. } = &outcome.verdict else { panic!("forwarded") };
/// assert_eq!(body, r#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"q",
///   "arguments":{"n":1e400},"_meta":{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"redacted":true}}}}}"#);
/// assert_eq!(outcome.messages[0].changes[0].action.as_str(), "redacted");
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Filter {
    options: FilterOptions,
    /// The keys bodies are read under.
    pub(super) keys: Keys,
    /// The policy in force: the one given, else the default.
    policy: Policy,
    /// Every pair of keys a message is read under, each with the policy
    /// under those keys: the standard pair first, then each vendor
    /// invocation key with the standard `ui` key, then the standard
    /// invocation key with each vendor `ui` key.
    pub(super) pairs: Vec<Policy>,
}

impl Filter {
    /// A filter with `options`, checked: vendor keys valid, not reserved and
    /// distinct (KEY-3), none read by the policy as a correlation key
    /// (COR-2), limits in range. Messages name the fields.
    ///
    /// # Errors
    ///
    /// A KEY-3 code, `invalid-limit` or `invalid-option` (RangeError).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, Filter, FilterOptions};
    ///
    /// let options = FilterOptions { invocation_keys: vec!["io.mcp/x".into()], ..FilterOptions::default() };
    /// assert_eq!(Filter::new(options).unwrap_err().code(), Code::ReservedKey);
    /// let err = Filter::new(FilterOptions { max_batch: 0, ..FilterOptions::default() }).unwrap_err();
    /// assert_eq!(err.to_string(), "filter option `max_batch` must be an integer from 1 to 100000");
    /// ```
    pub fn new(options: FilterOptions) -> Result<Self, Error> {
        Filter::build(options, Naming::Rust)
    }

    /// A filter with `options`, checked, naming them as `naming` says.
    pub(crate) fn build(options: FilterOptions, naming: Naming) -> Result<Self, Error> {
        let keys = options.check(naming)?;
        let policy = options.policy.clone().unwrap_or_default();
        let pair = |invocation: Option<&String>, ui: Option<&String>| Policy {
            keys: KeyOptions {
                invocation_key: invocation.cloned(),
                ui_key: ui.cloned(),
            },
            ..policy.clone()
        };
        let pairs = std::iter::once(pair(None, None))
            .chain(
                keys.invocation
                    .iter()
                    .skip(1)
                    .map(|key| pair(Some(key), None)),
            )
            .chain(keys.ui.iter().skip(1).map(|key| pair(None, Some(key))))
            .collect();
        Ok(Filter {
            options,
            keys,
            policy,
            pairs,
        })
    }

    /// A filter from options with their JS names (`null` for the defaults);
    /// messages name the options as JS does.
    ///
    /// # Errors
    ///
    /// `unknown-option` for a name the options do not have (a policy option
    /// outside `policy` included), and the errors of [`Filter::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Code, Filter};
    /// use serde_json::json;
    ///
    /// let err = Filter::from_value(&json!({"maxBatch": 0})).unwrap_err();
    /// assert_eq!(err.to_string(), "filter option `maxBatch` must be an integer from 1 to 100000");
    /// let err = Filter::from_value(&json!({"userIntent": "redact"})).unwrap_err();
    /// assert_eq!(err.code(), Code::UnknownOption);
    /// assert_eq!(err.to_string(), "filter options have no option `userIntent`: policy options go in `policy`");
    /// assert!(Filter::from_value(&json!({"policy": {"userIntent": "redact"}, "invocationKeys": ["com.example/ai"]})).is_ok());
    /// ```
    #[cfg(feature = "value")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, Error> {
        Filter::build(FilterOptions::from_slot(Slot::of(value))?, Naming::Js)
    }

    /// The options it was made with.
    pub fn options(&self) -> &FilterOptions {
        &self.options
    }

    /// Filters one HTTP request body: what to forward, or how to refuse it,
    /// and an account of each message. Never fails: what cannot be processed
    /// is refused, never passed on as it came.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Filter, FilterContext, FilterOptions, MessageKind, Verdict};
    ///
    /// let filter = Filter::new(FilterOptions::default())?;
    /// let outcome = filter.filter(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 7]"#, &FilterContext::default());
    /// let Verdict::Forward { body, replies } = &outcome.verdict else { panic!("forwarded") };
    /// assert_eq!(body, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    /// assert_eq!(replies[0], r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not a JSON-RPC request, notification or response","data":{"code":"invalid-request"}}}"#);
    /// assert_eq!(outcome.messages[1].kind, MessageKind::Malformed);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn filter<'b>(&self, body: &'b [u8], context: &FilterContext) -> Outcome<'b> {
        self.judge(body, context, Wants::Everything)
    }

    /// [`Filter::filter`] for a gateway that keeps no audit: the same
    /// verdict, replies, ids and turns (for [`Filter::echo`]), and each
    /// message's findings, but no message's `record`, which is most of what
    /// a request costs. Filtering the same body again with
    /// [`Filter::filter`] makes its records when they are wanted after all.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Filter, FilterContext, FilterOptions};
    ///
    /// let filter = Filter::new(FilterOptions::default())?;
    /// let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
    /// let forwarded = filter.filter_without_records(body, &FilterContext::default());
    /// let recorded = filter.filter(body, &FilterContext::default());
    /// assert_eq!(forwarded.verdict, recorded.verdict);
    /// assert_eq!(forwarded.messages[0].turn, recorded.messages[0].turn);
    /// assert!(forwarded.messages[0].record.is_none() && recorded.messages[0].record.is_some());
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn filter_without_records<'b>(
        &self,
        body: &'b [u8],
        context: &FilterContext,
    ) -> Outcome<'b> {
        self.judge(body, context, Wants::Forwarding)
    }

    /// [`Filter::filter`], doing only what `wants` asks for.
    pub(crate) fn judge<'b>(
        &self,
        body: &'b [u8],
        context: &FilterContext,
        wants: Wants,
    ) -> Outcome<'b> {
        if let Some(Err(unread)) = context.headers.as_deref().map(headers::check) {
            return Outcome::refuse(Refusal::Headers(unread));
        }
        let Ok(text) = std::str::from_utf8(body) else {
            return Outcome::refuse(Refusal::NotUtf8);
        };
        let pass = Pass {
            parser: Parser::new(&self.keys, self.options.max_depth as usize, self.reads()),
            context: AuditContext {
                received_at: context.received_at.clone(),
                principal: context.principal.clone(),
                session_id: context.session_id.clone(),
                // Each record's policy is its pair's, given where it is made.
                policy: None,
            },
            wants,
        };
        match pass.parser.body(text, self.options.max_batch as usize) {
            Err(_) => Outcome::refuse(Refusal::NotJson),
            Ok(Body::TooMany) => Outcome::refuse(Refusal::BatchTooLarge(self.options.max_batch)),
            Ok(Body::Batch(_, messages)) if messages.is_empty() => {
                Outcome::refuse(Refusal::EmptyBatch)
            }
            Ok(Body::One(message)) => {
                let looked = self.look(&pass, &message, None);
                Outcome::assemble(text, None, vec![looked])
            }
            Ok(Body::Batch(span, messages)) => {
                let looked = messages
                    .iter()
                    .enumerate()
                    .map(|(index, message)| self.look(&pass, message, Some(index)))
                    .collect();
                Outcome::assemble(text, Some(span), looked)
            }
        }
    }

    /// The text of the member `name` of the object `body` as it came, when
    /// there is one; `Err` when `body` is not JSON text.
    pub(crate) fn member<'b>(&self, body: &'b [u8], name: &str) -> Result<Option<&'b [u8]>, ()> {
        let text = std::str::from_utf8(body).map_err(|_| ())?;
        let parser = Parser::new(&self.keys, self.options.max_depth as usize, self.reads());
        let span = parser.member(text, name).map_err(|_| ())?;
        Ok(span.and_then(|span| body.get(span.start..span.end)))
    }

    /// The places the filter reads: every group, but `arguments` only when
    /// it lifts legacy arguments, so that without lifting no member of
    /// `arguments` is looked at.
    pub(super) fn reads(&self) -> Reads {
        if self.options.lift_legacy {
            Reads::MAX
        } else {
            Reads::MAX & !Group::Legacy.bit()
        }
    }

    /// Whether the policy keeps users' words from servers.
    fn redacting(&self) -> bool {
        self.options.policy.is_some() && self.policy.user_intent != IntentPolicy::Keep
    }

    /// WIRE-6, wherever a message carries `_meta` (`meta`: a request's or
    /// notification's `params._meta`, a response's `result._meta`, an
    /// answer's in `params.inputResponses`): under a policy that redacts
    /// intents, a bare `userIntent` there refuses the message. It is no
    /// envelope field, so the policy cannot reach it, and forwarding it
    /// would send the very words the policy keeps from servers. Where
    /// `userIntent` is itself a configured invocation key, it is an envelope
    /// the policy does reach.
    ///
    /// # Errors
    ///
    /// `bare-user-intent`.
    pub(super) fn bare_intent(&self, meta: Slot) -> Result<(), Code> {
        let name = EnvelopeField::UserIntent.name();
        let refused = self.redacting()
            && meta.tree().get(name).is_present()
            && !self.keys.invocation.iter().any(|key| key == name);
        if refused {
            Err(Code::BareUserIntent)
        } else {
            Ok(())
        }
    }

    /// The views of a message under each pair of keys, in the order of `pairs`.
    pub(super) fn views<'d>(&self, message: Slot<'d>) -> Vec<MessageView<'d>> {
        self.pairs
            .iter()
            .map(|pair| MessageView::of_slot(message, &pair.keys, self.reads()))
            .collect()
    }

    /// Looks at one message of the body.
    fn look(&self, pass: &Pass, message: &ParsedMessage, index: Option<usize>) -> Looked {
        let doc = &message.doc;
        let root = message.root;
        let views = self.views(doc.slot(&root));
        let Some(view) = views.first() else {
            return looked_refused(index, root, Code::InternalError);
        };
        let kind = kind_of(view);
        let mut seen = Seen::new(index, kind, request_id(view));
        seen.id_text = id_text(doc, &root)
            .filter(|text| !text.starts_with('n'))
            .map(str::to_owned);
        let mut looked = Looked {
            seen,
            text: None,
            reply: None,
            span: root.value,
        };
        let refused = match message.fault {
            Some(Fault::TooDeep) => Err(Code::TooDeep),
            Some(Fault::Duplicate) => Err(Code::DuplicateMember),
            None => match kind {
                MessageKind::Request | MessageKind::Notification => {
                    self.request(pass, doc, root, &views, &mut looked)
                }
                MessageKind::Response => self.response(pass, doc, root, &views, &mut looked),
                MessageKind::Malformed => {
                    let mut found =
                        validate::check(view, None, &KeyOptions::default(), &[], Naming::Rust)
                            .diagnostics;
                    if found.is_empty() {
                        // An object `validate` takes as a message, but whose id JSON-RPC refuses.
                        found.push(Diagnostic::error(
                            Code::InvalidRequest,
                            Rule::Wire2,
                            "/id".to_owned(),
                            "`id` must be a string or an integer (no fraction, no exponent)",
                        ));
                    }
                    looked.seen.diagnostics = found;
                    Err(Code::InvalidRequest)
                }
            },
        };
        if refused.is_ok() && kind == MessageKind::Request && pass.wants.turns() {
            looked.seen.turn = looked
                .seen
                .id_text
                .as_deref()
                .map(|id| self.turn_note(id, &views));
        }
        // WIRE-9: its line leaves its arguments out (when the line is made).
        let arguments = self.options.audit_arguments;
        if refused.is_ok()
            && arguments != AuditArguments::Keep
            && has_param(doc, &root, "arguments")
        {
            looked.seen.audit_arguments = arguments;
        }
        if let Err(code) = refused {
            looked.seen.refused = Some(code);
            if code != Code::InvalidRequest {
                looked.seen.diagnostics.push(outcome::refusal(code));
            }
            // An id in doubt (duplicated) is no id to record or answer.
            if looked.seen.id_text.is_none() {
                looked.seen.id = None;
            }
            looked.text = None;
            looked.seen.record = None;
            looked.seen.valid = false;
            looked.seen.changes.clear();
            if kind != MessageKind::Notification || code == Code::InvalidRequest {
                let id = looked.seen.id_text.as_deref().unwrap_or("null");
                looked.reply = Some(reply(id, code));
            }
        }
        crate::diagnostics::cap(&mut looked.seen.changes);
        looked
    }

    /// A request or notification: refused (with its code), or its record
    /// made and the text it goes on as.
    fn request(
        &self,
        pass: &Pass,
        doc: &Doc,
        root: Entry,
        views: &[MessageView],
        looked: &mut Looked,
    ) -> Result<(), Code> {
        let view = views.first().ok_or(Code::InternalError)?;
        self.bare_intent(view.get(Place::Meta))?;
        let lifted = if self.options.lift_legacy {
            let edits = legacy::lift(view, true).map_err(|error| error.code())?;
            looked
                .seen
                .changes
                .extend(legacy::changes(&edits, &KeyOptions::default()));
            let mut patch = Patch::new(doc, root);
            patch
                .edits(&edits, &KeyOptions::default())
                .map_err(|_| Code::InternalError)?;
            patch.text()
        } else {
            None
        };
        match &lifted {
            Some(text) => {
                let lifted = pass.parser.one(text).map_err(|_| Code::InternalError)?;
                let views = self.views(lifted.doc.slot(&lifted.root));
                let mut out = self.record(pass, &lifted.doc, lifted.root, &views, looked)?;
                looked.text = Some(out.take().unwrap_or_else(|| text.clone()));
            }
            None => looked.text = self.record(pass, doc, root, views, looked)?,
        }
        // The answers are read whatever the call wants: what refuses the
        // request (WIRE-3, WIRE-6) is a finding too.
        if self.redacting() && has_param(doc, &root, "inputResponses") {
            let text = looked.text.as_deref().unwrap_or_else(|| doc.at(root.value));
            let trimmed = self.trim_answers(&pass.parser, text)?;
            if let Some((trimmed, changes)) = trimmed.filter(|_| pass.wants != Wants::Findings) {
                looked.text = Some(trimmed);
                looked.seen.changes.extend(changes);
            }
        }
        Ok(())
    }

    /// Records a request and sanitizes each envelope it carries as the
    /// policy says; the text it goes on as, when that changed.
    fn record(
        &self,
        pass: &Pass,
        doc: &Doc,
        root: Entry,
        views: &[MessageView],
        looked: &mut Looked,
    ) -> Result<Option<String>, Code> {
        let pairs = self.pairs.iter().zip(views);
        let mut pairs_after = pairs.clone();
        let Some((primary, primary_view)) = pairs_after.next() else {
            return Err(Code::InternalError);
        };
        let mut diagnostics = validate::findings(
            primary_view,
            None,
            &primary.keys,
            &primary.correlation_keys,
            Naming::Rust,
        );
        for (pair, view) in pairs_after {
            let keys = &pair.keys;
            if keys.invocation_key.is_some() {
                let path = Path::place(Place::Envelope, keys);
                validate::check_envelope(&view.envelope, &path, &mut diagnostics);
            } else {
                initiator::check(view, keys, &mut diagnostics);
            }
        }
        let mut patch = Patch::new(doc, root);
        let envelopes = pairs.clone().filter(|(pair, view)| {
            pass.wants != Wants::Findings
                && pair.keys.ui_key.is_none()
                && view.envelope.value.is_present()
        });
        for (pair, view) in envelopes {
            if self.options.policy.is_none() && !has_error(view, &pair.keys) {
                continue;
            }
            let plan = sanitize::plan(view, pair).map_err(|error| error.code())?;
            looked.seen.changes.extend(plan.changes);
            patch
                .edits(&plan.edits, &pair.keys)
                .map_err(|_| Code::InternalError)?;
        }
        // The record reads the first envelope found, and the initiator of the
        // first ui entry that holds one, unless another disagrees (UI-4).
        let first = |present: &dyn Fn(&MessageView) -> bool| {
            pairs
                .clone()
                .find(|(_, view)| present(view))
                .map(|(pair, _)| pair)
        };
        let invocation = first(&|view| view.envelope.value.is_present()).unwrap_or(primary);
        let ui = first(&|view| view.get(Place::Initiator).is_present()).unwrap_or(primary);
        let entries = pairs
            .clone()
            .filter(|(pair, _)| pair.keys.invocation_key.is_none())
            .map(|(pair, view)| (view, &pair.keys));
        let disagreement = initiator::disagreement(entries);
        let unknown = disagreement.is_some();
        diagnostics.extend(disagreement);
        let report = Report::from(diagnostics);
        looked.seen.valid = report.valid;
        if pass.wants != Wants::Everything {
            looked.seen.diagnostics = report.diagnostics;
            return Ok(patch.text());
        }
        let context = &pass.context;
        let record = if std::ptr::eq(invocation, primary) && std::ptr::eq(ui, primary) {
            audit::record_with(primary_view, context, primary, report.diagnostics)
        } else {
            let policy = Policy {
                keys: KeyOptions {
                    invocation_key: invocation.keys.invocation_key.clone(),
                    ui_key: ui.keys.ui_key.clone(),
                },
                ..self.policy.clone()
            };
            let view = MessageView::of_slot(doc.slot(&root), &policy.keys, self.reads());
            audit::record_with(&view, context, &policy, report.diagnostics)
        };
        let mut record = record.map_err(|error| error.code())?;
        if unknown {
            record.host_attested.initiator = None;
        }
        looked.seen.record = Some(record);
        Ok(patch.text())
    }

    /// A response: refused (WIRE-6), or its findings, and under a redacting
    /// policy its envelopes cut down to `turnId` (AI-11).
    fn response(
        &self,
        pass: &Pass,
        doc: &Doc,
        root: Entry,
        views: &[MessageView],
        looked: &mut Looked,
    ) -> Result<(), Code> {
        let view = views.first().ok_or(Code::InternalError)?;
        self.bare_intent(view.get(Place::ResultMeta))?;
        let report = validate::check(view, None, &KeyOptions::default(), &[], Naming::Rust);
        looked.seen.valid = report.valid;
        looked.seen.diagnostics = report.diagnostics;
        if !self.redacting() || pass.wants == Wants::Findings {
            return Ok(());
        }
        let mut patch = Patch::new(doc, root);
        let envelopes = self.pairs.iter().zip(views);
        for (pair, view) in envelopes.filter(|(pair, _)| pair.keys.ui_key.is_none()) {
            let (changes, edits) = echo::trim(view, &pair.keys);
            looked.seen.changes.extend(changes);
            patch
                .edits(&edits, &pair.keys)
                .map_err(|_| Code::InternalError)?;
        }
        looked.text = patch.text();
        Ok(())
    }
}

/// What a call of the filter is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wants {
    /// A gateway's: each request's audit record, and the text each message
    /// goes on as.
    Everything,
    /// A gateway's that reads no record: the text each message goes on as,
    /// and each request's turn (which its answer's echo and a witnessed
    /// session need). The rest of [`Wants::Everything`].
    Forwarding,
    /// `check --sanitize`'s: the findings (the same as the records'), and
    /// the text each message goes on as.
    FindingsAndText,
    /// `check`'s: the findings alone. Nothing is sanitized, so an
    /// outcome's changes are empty and what it forwards is the body as it
    /// came: neither is to be read.
    Findings,
}

impl Wants {
    /// Whether each request's turn is noted (for the echo of its answer).
    fn turns(self) -> bool {
        matches!(self, Wants::Everything | Wants::Forwarding)
    }
}

/// What one call of the filter reads a body with.
struct Pass<'k> {
    parser: Parser<'k>,
    /// What each record is made in (its policy set where it is made).
    context: AuditContext,
    /// What the call is for.
    wants: Wants,
}

/// The account of a message that could not even be looked at.
fn looked_refused(index: Option<usize>, root: Entry, code: Code) -> Looked {
    let mut seen = Seen::new(index, MessageKind::Malformed, None);
    seen.refused = Some(code);
    Looked {
        seen,
        text: None,
        reply: Some(reply("null", code)),
        span: root.value,
    }
}

/// Whether an envelope breaks its schema: a repair is due even where no
/// policy was given.
fn has_error(view: &MessageView, keys: &KeyOptions) -> bool {
    let mut found = Vec::new();
    invocation::check(
        &view.envelope,
        &Path::place(Place::Envelope, keys),
        &mut found,
    );
    found
        .iter()
        .any(|d: &Diagnostic| d.severity == Severity::Error)
}

/// Whether a message has `params[name]` (read as the parse found it, its
/// name unescaped: no look at the text again, nothing allocated).
fn has_param(doc: &Doc, root: &Entry, name: &str) -> bool {
    let member = |entry: &Entry, name: &str| match entry.raw {
        Raw::Node(node) => doc
            .get(node)
            .and_then(|node| doc.member(node, name))
            .copied(),
        _ => None,
    };
    member(root, "params").is_some_and(|params| member(&params, name).is_some())
}

/// What kind of JSON-RPC message a view is.
fn kind_of(view: &MessageView) -> MessageKind {
    let id = view.get(Place::Id);
    // A number with a fraction or an exponent (1.5, 1.0, 1e2) is an id
    // servers read differently: a float, an integer, or no id at all (the
    // Python SDK takes such a request for a notification).
    let integer = |text: &str| !text.contains(['.', 'e', 'E']);
    let id_ok = match id {
        Slot::String(_) => true,
        Slot::Number(crate::json::Number::Wire(text)) => integer(text),
        _ => false,
    };
    if !view.get(Place::Root).is_object() {
        return MessageKind::Malformed;
    }
    match view.get(Place::Method) {
        Slot::String(_) if !id.is_present() => MessageKind::Notification,
        Slot::String(_) if id_ok => MessageKind::Request,
        Slot::Absent if view.is_response() && (id_ok || matches!(id, Slot::Null)) => {
            MessageKind::Response
        }
        _ => MessageKind::Malformed,
    }
}

/// The request id, as a record keeps it.
fn request_id(view: &MessageView) -> Option<RequestId> {
    match view.get(Place::Id) {
        Slot::Number(number) => number.to_json().map(RequestId::Number),
        Slot::String(text) => Some(RequestId::String(audit::name(text.text))),
        _ => None,
    }
}

/// The id of a message as it came, when it is one JSON-RPC allows and it
/// is not in doubt (duplicated).
fn id_text<'d>(doc: &'d Doc, root: &Entry) -> Option<&'d str> {
    let Raw::Node(node) = root.raw else {
        return None;
    };
    let node = doc.get(node)?;
    let mut ids = doc
        .entries(node)
        .iter()
        .filter(|entry| entry.name.is_some_and(|name| doc.str(name) == "id"));
    let entry = ids.next()?;
    if ids.next().is_some() {
        return None;
    }
    match entry.raw {
        Raw::String(_) | Raw::Number | Raw::Null => Some(doc.at(entry.value)),
        _ => None,
    }
}
