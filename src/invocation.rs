//! The SEP-2817 envelope: its shape (AI-2..AI-8) and attaching it to a request.

use crate::diagnostics::{Code, Diagnostic, MAX_LISTED, Rule, Severity};
use crate::edit::{Edit, Put, Target};
use crate::error::Error;
use crate::json::{Kind, Slot};
#[cfg(feature = "value")]
use crate::keys::KeyOptions;
use crate::path::Path;
use crate::schema::{ENVELOPE, Place, Reads};

/// What attaching reads of a request: its `params` and `_meta`, no group.
pub const READS: Reads = 0;
use crate::view::{Envelope, MessageView};
#[cfg(feature = "value")]
use serde_json::Value;

/// Checks an envelope against the proposal's schema (AI-2..AI-7) and warns of
/// fields it does not define (AI-8). `path` is the envelope's pointer.
pub(crate) fn check(envelope: &Envelope, path: &Path<'_>, out: &mut Vec<Diagnostic>) {
    match envelope.value.kind() {
        None => return,
        Some(Kind::Object) => {}
        Some(found) => {
            return out.push(Diagnostic::invalid_type(
                "the invocation envelope",
                "an object",
                found.article(),
                Rule::Ai2,
                path.render(),
            ));
        }
    }
    for (field, view) in ENVELOPE.values().zip(envelope.fields.values()) {
        let Some(found) = view.value.kind() else {
            continue;
        };
        let at = path.join(field.name);
        let expected = if field.is_object() {
            Kind::Object
        } else {
            Kind::String
        };
        if found != expected {
            out.push(Diagnostic::invalid_type(
                &format!("`{}`", field.name),
                expected.article(),
                found.article(),
                field.rule,
                at.render(),
            ));
            continue;
        }
        for (member, slot) in field.members.iter().zip(&view.members) {
            let expected = member.holds.kind();
            match slot.kind() {
                None if member.required => out.push(Diagnostic::error(
                    Code::MissingField,
                    field.rule,
                    at.join(member.name).render(),
                    format!(
                        "`{}` must have {} `{}`",
                        field.name,
                        expected.article(),
                        member.name
                    ),
                )),
                Some(found) if found != expected => out.push(Diagnostic::invalid_type(
                    &format!("`{}.{}`", field.name, member.name),
                    expected.article(),
                    found.article(),
                    field.rule,
                    at.join(member.name).render(),
                )),
                _ => {}
            }
        }
        if view.others > 0 {
            warn_unknown(&view.unknown(field), &at, out);
        }
    }
    if envelope.others > 0 {
        warn_unknown(&envelope.unknown(), path, out);
    }
}

fn warn_unknown(unknown: &[(&str, Slot<'_>)], path: &Path<'_>, out: &mut Vec<Diagnostic>) {
    for (name, _) in unknown {
        // Past what a report lists only their number counts (MSG-2): an
        // envelope of a million members costs no million pointers.
        let (path, message) = if out.len() < MAX_LISTED {
            (
                path.join(name).render(),
                "a field SEP-2817 does not define; the default policy drops it",
            )
        } else {
            (String::new(), "")
        };
        out.push(Diagnostic::breach(
            Code::UnknownField,
            Rule::Ai8,
            path,
            message,
        ));
    }
}

/// The edit that attaches `invocation` (argument 1 of the call) as the
/// envelope of `request`: `invalid-invocation` when it breaks AI-2..AI-7.
pub fn attach(request: &MessageView, invocation: &Envelope) -> Result<Vec<Edit>, Error> {
    crate::message::writable_meta(request)?;
    let mut found = Vec::new();
    check(invocation, &Path::ROOT, &mut found);
    if let Some(error) = found.iter().find(|d| d.severity == Severity::Error) {
        let place = match error.path.as_str() {
            "" => String::new(),
            path => format!(" at `{path}`"),
        };
        return Err(Error::new(
            Code::InvalidInvocation,
            format!("invalid invocation{place}: {}", error.message),
        ));
    }
    Ok(vec![Edit::new(
        Target::place(Place::Envelope),
        Put::Copy {
            input: 1,
            target: Target::place(Place::Root),
        },
    )])
}

/// Puts `invocation` as the request's envelope, replacing any there, for a
/// call the host's model chose. The invocation must meet the envelope's
/// schema (warnings are allowed); `params` and `_meta` are created when absent.
///
/// # Errors
///
/// `not-a-request` or `invalid-type` (TypeError) when the request is not a
/// request or its `params`/`_meta` is not an object; `invalid-invocation`
/// (TypeError) when the invocation breaks AI-2..AI-7; a KEY-3 code (RangeError)
/// for a bad configured key.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{attach_invocation, KeyOptions};
/// use serde_json::json;
///
/// let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
///                      "params": {"name": "list_tables", "arguments": {}}});
/// let invocation = json!({"model": {"name": "example-model"}, "turnId": "t-1"});
/// let sent = attach_invocation(request, invocation.clone(), &KeyOptions::default())?;
/// assert_eq!(sent["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"], invocation);
///
/// let bad = attach_invocation(sent, json!({"turnId": 1}), &KeyOptions::default()).unwrap_err();
/// assert_eq!(bad.to_string(), "invalid invocation at `/turnId`: `turnId` must be a string, not a number");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "value")]
pub fn attach_invocation(
    request: Value,
    invocation: Value,
    keys: &KeyOptions,
) -> Result<Value, Error> {
    let edits = attach_edits(&request, &invocation, keys)?;
    Ok(crate::edit::apply(request, edits, keys, &[&invocation]))
}

/// The edits of [`attach_invocation`], the keys checked; a copied field is
/// taken from the invocation, the call's input 1.
#[cfg(feature = "value")]
pub fn attach_edits(
    request: &Value,
    invocation: &Value,
    keys: &KeyOptions,
) -> Result<Vec<Edit>, Error> {
    keys.check()?;
    attach(
        &MessageView::of(request, keys, READS),
        &Envelope::of(invocation),
    )
}
