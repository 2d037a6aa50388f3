//! `mcp-provenance check`: a capture (one JSON-RPC message or batch per
//! line) through the wire filter, line by line, and what the command prints
//! of each. The npm command and the native one both print what this writes,
//! so their outputs agree by construction.

use super::{Filter, FilterContext, Outcome, Verdict};
use crate::diagnostics::{Code, Diagnostic, Severity};

/// How `check` reads and prints a capture.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Check, Filter, FilterOptions};
///
/// let check = Check { filter: Filter::new(FilterOptions::default())?, json: false, field: None };
/// let mut counts = Default::default();
/// let line = check.line(1, br#"{"method":"tools/call","params":{"_meta":{"turnId":"t"}}}"#, &mut counts);
/// assert_eq!(line.out, "line 1: warning AI-9 bare-key /params/_meta/turnId a bare `_meta.turnId` is not SEP-2817's convention; put `turnId` inside the envelope\n");
/// assert_eq!(check.summary(&counts), "checked 1 messages: 0 errors, 1 warnings, 0 unparseable\n");
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Check {
    /// The filter every line goes through (its policy makes the sanitized copy).
    pub filter: Filter,
    /// Print JSON records rather than lines of text.
    pub json: bool,
    /// Take each line's message from this member of it; lines without it are skipped.
    pub field: Option<String>,
}

/// What a capture held, as the summary line gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages read.
    pub messages: u64,
    /// Error findings and refusals.
    pub errors: u64,
    /// Warning findings.
    pub warnings: u64,
    /// Lines that are not JSON.
    pub unparseable: u64,
    /// Lines without the `field` taken.
    pub skipped: u64,
}

/// What one line comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// What `check` prints of it (each line ending in `\n`; empty for a clean line of text).
    pub out: String,
    /// The line as it goes on under the filter's policy, or empty when it
    /// cannot go on as it came (not JSON, or refused): one output line per input line.
    pub sanitized: String,
}

impl Check {
    /// Checks line `number` of a capture, adding what it held to `counts`.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Check, Filter, FilterOptions};
    ///
    /// let check = Check { filter: Filter::new(FilterOptions::default())?, json: true, field: None };
    /// let mut counts = Default::default();
    /// assert_eq!(check.line(7, b"{not json", &mut counts).out, "{\"line\":7,\"unparseable\":true}\n");
    /// assert_eq!(counts.unparseable, 1);
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn line(&self, number: u64, line: &[u8], counts: &mut Counts) -> Line {
        let mut out = String::new();
        let blank = line
            .iter()
            .all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'));
        if blank {
            return Line {
                out,
                sanitized: String::new(),
            };
        }
        let message = match &self.field {
            None => Ok(Some(line)),
            Some(field) => self.filter.member(line, field),
        };
        let message = match message {
            Ok(Some(message)) => message,
            Ok(None) => {
                counts.skipped += 1;
                return Line {
                    out,
                    sanitized: String::new(),
                };
            }
            Err(()) => {
                self.unparseable(number, counts, &mut out);
                return Line {
                    out,
                    sanitized: String::new(),
                };
            }
        };
        let outcome = self.filter.filter(message, &FilterContext::default());
        match &outcome.refusal {
            Some(refusal) if refusal.code == Code::ParseError => {
                self.unparseable(number, counts, &mut out)
            }
            Some(refusal) => {
                counts.errors += 1;
                self.print(number, None, std::slice::from_ref(refusal), &mut out);
            }
            None => {}
        }
        for seen in &outcome.messages {
            counts.messages += 1;
            let found = seen
                .record
                .as_ref()
                .map_or(&seen.diagnostics, |record| &record.diagnostics);
            for diagnostic in found {
                match diagnostic.severity {
                    Severity::Error => counts.errors += 1,
                    Severity::Warning => counts.warnings += 1,
                }
            }
            if self.json {
                out.push_str(&format!("{{\"line\":{number},"));
                if let Some(index) = seen.index {
                    out.push_str(&format!("\"index\":{index},"));
                }
                out.push_str(&format!("\"valid\":{},\"diagnostics\":", seen.valid));
                super::line::diagnostics(found, &mut out);
                out.push_str("}\n");
            } else {
                self.print(number, seen.index, found, &mut out);
            }
        }
        Line {
            out,
            sanitized: sanitized(&outcome),
        }
    }

    fn unparseable(&self, number: u64, counts: &mut Counts, out: &mut String) {
        counts.unparseable += 1;
        if self.json {
            out.push_str(&format!("{{\"line\":{number},\"unparseable\":true}}\n"));
        } else {
            out.push_str(&format!("line {number}: not JSON\n"));
        }
    }

    /// Diagnostics as lines of text, or, in JSON, a record for a refusal of the whole line.
    fn print(&self, number: u64, index: Option<usize>, found: &[Diagnostic], out: &mut String) {
        let at = index.map(|index| format!("[{index}]")).unwrap_or_default();
        for d in found {
            if self.json {
                out.push_str(&format!(
                    "{{\"line\":{number},\"valid\":false,\"diagnostics\":"
                ));
                super::line::diagnostics(std::slice::from_ref(d), out);
                out.push_str("}\n");
                continue;
            }
            let path = if d.path.is_empty() { "/" } else { &d.path };
            out.push_str(&format!(
                "line {number}{at}: {} {} {} {path} {}\n",
                d.severity, d.rule, d.code, d.message
            ));
        }
    }

    /// The summary line.
    pub fn summary(&self, counts: &Counts) -> String {
        let Counts {
            messages,
            errors,
            warnings,
            unparseable,
            skipped,
        } = counts;
        if self.json {
            return format!(
                "{{\"summary\":{{\"messages\":{messages},\"errors\":{errors},\"warnings\":{warnings},\"unparseable\":{unparseable},\"skipped\":{skipped}}}}}\n"
            );
        }
        let mut note = String::new();
        if let (Some(field), 1..) = (&self.field, skipped) {
            note.push_str(&format!(" ({skipped} lines without "));
            note.push_str(field);
            note.push_str(" skipped)");
        }
        format!(
            "checked {messages} messages: {errors} errors, {warnings} warnings, {unparseable} unparseable{note}\n"
        )
    }
}

/// What goes on of a line, or nothing.
fn sanitized(outcome: &Outcome) -> String {
    match &outcome.verdict {
        Verdict::Forward { body, .. } => body.to_string(),
        Verdict::Reject { .. } => String::new(),
    }
}
