//! `mcp-provenance check`: a capture (one JSON-RPC message or batch per
//! line) through the wire filter, line by line, and what the command prints
//! of each. The npm command and the native one both print what this writes,
//! so their outputs agree by construction.

use std::borrow::Cow;

use super::{Filter, FilterContext, Verdict};
use crate::diagnostics::{Code, Diagnostic, Severity};

/// How `check` reads and prints a capture.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Check, Counts, Filter, FilterOptions, Printed};
///
/// let check = Check { filter: Filter::new(FilterOptions::default())?, json: false, field: None, sanitize: false };
/// let (mut counts, mut printed) = (Counts::default(), Printed::default());
/// check.lines(b"{\"method\":\"tools/call\",\"params\":{\"_meta\":{\"turnId\":\"t\"}}}\n", &mut counts, &mut printed);
/// assert_eq!(printed.out, "line 1: warning AI-9 bare-key /params/_meta/turnId a bare `_meta.turnId` is not SEP-2817's convention; put `turnId` inside the envelope\n");
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
    /// Write each line as it goes on under the filter's policy to [`Printed::sanitized`].
    pub sanitize: bool,
}

/// What a capture held, as the summary line gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lines read: the number of the last one.
    pub lines: u64,
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

/// What lines of a capture come to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Printed {
    /// What `check` prints of them (each line ending in `\n`; nothing for a clean line of text).
    pub out: String,
    /// With [`Check::sanitize`], each line as it goes on under the filter's
    /// policy, or an empty line where it cannot go on as it came (not JSON,
    /// or refused): one output line per input line.
    pub sanitized: String,
}

impl Check {
    /// Checks `lines`, whole lines of a capture (each ending in `\n`, but
    /// perhaps the last of the capture), numbering them on from
    /// `counts.lines`, adding what they held to `counts` and what to print
    /// and write to `printed`. A capture read in pieces that end at line
    /// ends comes to what it would read whole: the native and npm commands
    /// hand over large pieces, one crossing for thousands of lines.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Check, Counts, Filter, FilterOptions, Printed};
    ///
    /// let check = Check { filter: Filter::new(FilterOptions::default())?, json: true, field: None, sanitize: true };
    /// let (mut counts, mut printed) = (Counts::default(), Printed::default());
    /// check.lines(b"{\"id\":1,\"method\":\"ping\"}\n", &mut counts, &mut printed);
    /// check.lines(b"{not json", &mut counts, &mut printed);
    /// assert_eq!(printed.out, "{\"line\":1,\"valid\":true,\"diagnostics\":[]}\n{\"line\":2,\"unparseable\":true}\n");
    /// assert_eq!(printed.sanitized, "{\"id\":1,\"method\":\"ping\"}\n\n");
    /// assert_eq!((counts.lines, counts.unparseable), (2, 1));
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn lines(&self, lines: &[u8], counts: &mut Counts, printed: &mut Printed) {
        for line in super::scan::lines(lines) {
            counts.lines += 1;
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let went_on = self.line(counts.lines, line, counts, &mut printed.out);
            if self.sanitize {
                printed
                    .sanitized
                    .push_str(went_on.as_deref().unwrap_or_default());
                printed.sanitized.push('\n');
            }
        }
    }

    /// Checks line `number`, adding to `counts` and `out`; the line as it
    /// goes on, when it does.
    fn line<'l>(
        &self,
        number: u64,
        line: &'l [u8],
        counts: &mut Counts,
        out: &mut String,
    ) -> Option<Cow<'l, str>> {
        let blank = line
            .iter()
            .all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n'));
        if blank {
            return None;
        }
        let message = match &self.field {
            None => Ok(Some(line)),
            Some(field) => self.filter.member(line, field),
        };
        let message = match message {
            Ok(Some(message)) => message,
            Ok(None) => {
                counts.skipped += 1;
                return None;
            }
            Err(()) => {
                self.unparseable(number, counts, out);
                return None;
            }
        };
        let outcome = self.filter.judge(message, &FilterContext::default(), false);
        match &outcome.refusal {
            Some(refusal) if refusal.code == Code::ParseError => {
                self.unparseable(number, counts, out)
            }
            Some(refusal) => {
                counts.errors += 1;
                self.print(number, None, std::slice::from_ref(refusal), out);
            }
            None => {}
        }
        for seen in &outcome.messages {
            counts.messages += 1;
            for diagnostic in &seen.diagnostics {
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
                super::line::diagnostics(&seen.diagnostics, out);
                out.push_str("}\n");
            } else {
                self.print(number, seen.index, &seen.diagnostics, out);
            }
        }
        match outcome.verdict {
            Verdict::Forward { body, .. } => Some(body),
            Verdict::Reject { .. } => None,
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
            ..
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FilterOptions, Policy};

    /// Without records, each message's findings are the ones its record
    /// holds where records are made.
    #[test]
    fn check_finds_what_the_records_hold() {
        let filter = Filter::new(FilterOptions {
            policy: Some(Policy::default()),
            invocation_keys: vec!["com.example/ai".into()],
            ..FilterOptions::default()
        })
        .expect("a filter");
        let bodies: [&[u8]; 4] = [
            br#"{"id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":7,"userIntent":{"text":"a\r\nb"}},"com.example/ai":{"model":{}}}}}"#,
            br#"[{"method":"notifications/x","params":{"_meta":{"turnId":"t"}}},{"id":2,"method":"ping"}]"#,
            br#"{"id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/ui":{"initiator":"view"}}}}"#,
            br#"{"id":4,"result":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t","model":{"name":"m"}}}}}"#,
        ];
        for body in bodies {
            let context = FilterContext::default();
            let recorded = filter.judge(body, &context, true);
            let checked = filter.judge(body, &context, false);
            assert_eq!(recorded.messages.len(), checked.messages.len());
            for (with, without) in recorded.messages.iter().zip(&checked.messages) {
                let found = with
                    .record
                    .as_ref()
                    .map_or(&with.diagnostics, |r| &r.diagnostics);
                assert_eq!(found, &without.diagnostics);
                assert!(without.record.is_none());
                assert_eq!(
                    (with.valid, &with.changes),
                    (without.valid, &without.changes)
                );
            }
            assert!(recorded.messages.iter().any(|seen| {
                !seen.diagnostics.is_empty()
                    || seen
                        .record
                        .as_ref()
                        .is_some_and(|r| !r.diagnostics.is_empty())
            }));
        }
    }
}
