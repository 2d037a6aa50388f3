//! The answers a request carries: from 2026-07-28, a client sends its
//! answers to a server's elicitation or sampling inside its next request,
//! `params.inputResponses` (each a bare result, keyed as the server asked).
//! Under a redacting policy such an answer is cut down to `turnId` as a
//! JSON-RPC response is (AI-11, WIRE-5), and one with a bare
//! `_meta.userIntent` refuses its request as a response is refused (WIRE-6):
//! the user's words go no further in a request than they would in a
//! response.

use super::filter::Filter;
use super::parse::Parser;
use super::patch::Patch;
use crate::diagnostics::{Change, Code};
use crate::echo;
use crate::json::doc::Span;
use crate::path::Path;
use crate::schema::Place;

/// What wraps an answer to read it as a response: `{"result":` and `}`.
const OPEN: &str = "{\"result\":";

impl Filter {
    /// The request `text` with the envelopes of its `params.inputResponses`
    /// cut down to `turnId`, and what that changed; `None` when nothing did.
    ///
    /// # Errors
    ///
    /// The code to refuse the request with: an answer, or `inputResponses`
    /// itself, named twice (which one would a server read?), an answer too
    /// deep or holding a duplicate where a response's rules read, or one
    /// with a bare `_meta.userIntent` (WIRE-6).
    pub(super) fn trim_answers(
        &self,
        parser: &Parser,
        text: &str,
    ) -> Result<Option<(String, Vec<Change>)>, Code> {
        let within = |outer: Span, span: Span| Span {
            start: outer.start + span.start,
            end: outer.start + span.end,
        };
        let Some(params) = once(parser, text, "params")? else {
            return Ok(None);
        };
        let Some(answers) = once(parser, at(text, params), "inputResponses")? else {
            return Ok(None);
        };
        let answers = within(params, answers);
        let Some(members) = parser
            .members(at(text, answers))
            .map_err(|_| Code::InternalError)?
        else {
            return Ok(None);
        };
        if crate::json::any_twice(members.iter().map(|(name, _)| name.as_str())) {
            return Err(Code::DuplicateMember);
        }
        let mut changes = Vec::new();
        let mut out = String::new();
        let mut from = 0;
        for (name, span) in &members {
            let span = within(answers, *span);
            let Some(trimmed) = self.trim_answer(parser, at(text, span), name, &mut changes)?
            else {
                continue;
            };
            out.push_str(text.get(from..span.start).unwrap_or_default());
            out.push_str(&trimmed);
            from = span.end;
        }
        if changes.is_empty() {
            return Ok(None);
        }
        out.push_str(text.get(from..).unwrap_or_default());
        Ok(Some((out, changes)))
    }

    /// One answer, `name` in `inputResponses`, cut down as the result of a
    /// response would be; its new text, when that changed.
    fn trim_answer(
        &self,
        parser: &Parser,
        answer: &str,
        name: &str,
        changes: &mut Vec<Change>,
    ) -> Result<Option<String>, Code> {
        let wrapped = format!("{OPEN}{answer}}}");
        let response = parser.one(&wrapped).map_err(|_| Code::InternalError)?;
        match response.fault {
            Some(super::parse::Fault::TooDeep) => return Err(Code::TooDeep),
            Some(super::parse::Fault::Duplicate) => return Err(Code::DuplicateMember),
            None => {}
        }
        let views = self.views(response.doc.slot(&response.root));
        let view = views.first().ok_or(Code::InternalError)?;
        self.bare_intent(view.get(Place::ResultMeta))?;
        let mut patch = Patch::new(&response.doc, response.root);
        let at = Path::ROOT.join("params");
        let at = at.join("inputResponses");
        let at = at.join(name).render();
        for (pair, view) in self.pairs.iter().zip(&views) {
            if pair.keys.ui_key.is_some() {
                continue;
            }
            let (dropped, edits) = echo::trim(view, &pair.keys);
            patch
                .edits(&edits, &pair.keys)
                .map_err(|_| Code::InternalError)?;
            // `/result/…` in the response is `/params/inputResponses/<name>/…` here.
            changes.extend(dropped.into_iter().map(|mut change| {
                let rest = change.path.strip_prefix("/result").unwrap_or_default();
                change.path = format!("{at}{rest}");
                change
            }));
        }
        Ok(patch.text().and_then(|text| {
            text.strip_prefix(OPEN)
                .and_then(|text| text.strip_suffix('}'))
                .map(str::to_owned)
        }))
    }
}

/// The text `span` of `text`.
fn at(text: &str, span: Span) -> &str {
    text.get(span.start..span.end).unwrap_or_default()
}

/// Where the value of the member `name` of the object `text` is; refused
/// when it is named twice.
fn once(parser: &Parser, text: &str, name: &str) -> Result<Option<Span>, Code> {
    let members = parser
        .members(text)
        .map_err(|_| Code::InternalError)?
        .unwrap_or_default();
    let mut named = members.iter().filter(|(found, _)| found == name);
    match (named.next(), named.next()) {
        (Some((_, span)), None) => Ok(Some(*span)),
        (None, _) => Ok(None),
        (Some(_), Some(_)) => Err(Code::DuplicateMember),
    }
}
