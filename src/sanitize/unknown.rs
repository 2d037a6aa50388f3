//! Members the envelope's table does not define (AI-8), in the envelope or
//! in one of its fields: dropped, or, when the policy keeps them, kept as
//! JSON whose strings are made safe like the rest, nesting cut at a depth.

use super::{Cleaned, Other};
use crate::diagnostics::{Action, Rule};
use crate::json::{self, Slot};
use crate::path::Path;
use crate::policy::FieldPolicy;
use crate::schema::EnvelopeField;
use crate::text;

/// How deep a kept unknown field may nest before its deeper part is dropped.
const MAX_UNKNOWN_DEPTH: usize = 16;

impl<'a> Cleaned<'a, '_> {
    /// Unknown members of the envelope or of one of its fields (`field`),
    /// at `path`: dropped, or kept made safe (AI-8).
    pub(super) fn others_of(
        &mut self,
        field: Option<EnvelopeField>,
        members: &[(&'a str, Slot<'a>)],
        path: &Path<'_>,
    ) {
        for (name, value) in members {
            let kept = if self.policy.unknown_fields == FieldPolicy::Drop {
                self.change(Action::Dropped, &path.join(name), Rule::Ai8);
                None
            } else {
                let mut json = String::new();
                self.member(name, *value, path, MAX_UNKNOWN_DEPTH, &mut json)
                    .map(|changed| (json, changed))
            };
            self.others.push(Other {
                field,
                name,
                changed: kept.as_ref().is_some_and(|(_, changed)| *changed),
                kept: kept.map(|(json, _)| json),
            });
        }
    }

    /// A kept unknown member: dropped (`None`) when its name would need
    /// changing or its value nests too deep; else its value made safe is
    /// written to `out`, and whether it changed is returned.
    fn member(
        &mut self,
        name: &str,
        value: Slot<'_>,
        path: &Path<'_>,
        depth: usize,
        out: &mut String,
    ) -> Option<bool> {
        let path = path.join(name);
        // A name is never rewritten: a member of another name is another
        // member, which the client did not send. Dropping is the one safe
        // edit of a name that would forge log lines or is too long (names
        // are bounded as free text is, by the reason's limit).
        if text::has_forbidden(name) {
            self.change(Action::Dropped, &path, Rule::Ai13);
            return None;
        }
        if name.len() > self.policy.max_reason_bytes as usize {
            self.change(Action::Dropped, &path, Rule::Ai14);
            return None;
        }
        self.plain(value, &path, depth, out)
    }

    /// Any JSON value of a kept unknown field, written to `out`: strings
    /// made safe like the rest (and bounded by the reason's limit), nesting
    /// cut at `MAX_UNKNOWN_DEPTH`; `None` when the value itself is dropped,
    /// else whether what is written differs from what was read (an item or
    /// member dropped inside it counts). Objects are written with their
    /// members sorted by name, as every runtime reads them.
    fn plain(
        &mut self,
        value: Slot<'_>,
        path: &Path<'_>,
        depth: usize,
        out: &mut String,
    ) -> Option<bool> {
        let is_container = matches!(value, Slot::Array(_) | Slot::Object(_));
        if is_container && depth == 0 {
            self.change(Action::Dropped, path, Rule::Ai8);
            return None;
        }
        let depth = depth.saturating_sub(1);
        let mut changed = false;
        match value {
            Slot::String(text) => {
                let (clean, _) = self.text(text, self.policy.max_reason_bytes, path);
                changed = clean.is_some();
                json::write_string(out, clean.as_deref().unwrap_or(text.text));
            }
            Slot::Array(tree) => {
                out.push('[');
                let mut first = true;
                for (index, item) in tree.items().enumerate() {
                    let mut written = String::new();
                    match self.plain(item, &path.index(index), depth, &mut written) {
                        Some(item_changed) => {
                            changed |= item_changed;
                            if !std::mem::take(&mut first) {
                                out.push(',');
                            }
                            out.push_str(&written);
                        }
                        None => changed = true,
                    }
                }
                out.push(']');
            }
            Slot::Object(tree) => {
                out.push('{');
                let mut first = true;
                for (name, item) in crate::view::unknown(tree, 0, std::iter::empty()) {
                    let mut written = String::new();
                    match self.member(name, item, path, depth, &mut written) {
                        Some(item_changed) => {
                            changed |= item_changed;
                            if !std::mem::take(&mut first) {
                                out.push(',');
                            }
                            json::write_string(out, name);
                            out.push(':');
                            out.push_str(&written);
                        }
                        None => changed = true,
                    }
                }
                out.push('}');
            }
            scalar => json::write_scalar(out, &scalar),
        }
        Some(changed)
    }
}
