//! `mcp-provenance check`: a capture (one JSON-RPC message or batch per
//! line) through the wire filter, line by line, and what the command prints
//! of each. The npm command and the native one both print what this writes,
//! so their outputs agree by construction.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::filter::{Filter, Wants};
use super::options::FilterContext;
use super::outcome::Verdict;
use crate::diagnostics::{Code, Diagnostic, Rule, Severity};

/// The longest line `check` reads by default: 4 MiB, the largest message
/// the MCP TypeScript SDK's SSE server transport accepts
/// (`MAXIMUM_MESSAGE_SIZE`). A longer line is reported and skipped, never
/// held: memory stays bounded by this whatever the capture holds.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// The longest line `--max-line-bytes` can ask `check` to read: 1 GiB.
pub const MAX_LINE_BOUND: usize = 1 << 30;

/// What `check` says, on standard error, when a capture held no message.
pub const NOTHING_CHECKED: &str = "no line held a JSON-RPC message: a capture is one message (or batch) a line, JSONL; a pretty-printed JSON file is not one";

/// How `check` reads and prints a capture.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Capture, Check, Filter, FilterOptions, Printed};
///
/// let mut capture = Capture::new(Check::new(Filter::new(FilterOptions::default())?));
/// let mut printed = Printed::default();
/// capture.read(b"{\"method\":\"tools/call\",\"params\":{\"_meta\":{\"turnId\":\"t\"}}}\n", &mut printed);
/// capture.end(&mut printed);
/// assert_eq!(printed.out, "line 1: warning AI-9 bare-key /params/_meta/turnId a bare `_meta.turnId` is not SEP-2817's convention; put `turnId` inside the envelope\n");
/// assert_eq!(capture.summary(), "checked 1 messages: 0 errors, 1 warnings, 0 unparseable\n");
/// assert_eq!(capture.exit_code(), 0);
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
    /// The longest line checked, in bytes ([`MAX_LINE_BYTES`] by default).
    pub max_line: usize,
    /// Warnings fail the check too (exit code 1).
    pub strict: bool,
}

impl Check {
    /// A check through `filter` with the defaults: text, no field, no
    /// sanitized copy, lines up to [`MAX_LINE_BYTES`], warnings allowed.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::{Check, Filter, FilterOptions, MAX_LINE_BYTES};
    ///
    /// let check = Check::new(Filter::new(FilterOptions::default())?);
    /// assert_eq!((check.json, check.max_line, check.strict), (false, MAX_LINE_BYTES, false));
    /// # Ok::<(), mcp_provenance::Error>(())
    /// ```
    pub fn new(filter: Filter) -> Self {
        Check {
            filter,
            json: false,
            field: None,
            sanitize: false,
            max_line: MAX_LINE_BYTES,
            strict: false,
        }
    }
}

/// What a capture held, as the summary line gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Lines read: the number of the last one.
    pub lines: u64,
    /// Messages read.
    pub messages: u64,
    /// Error findings and refusals, over-limit lines and lines that are
    /// not JSON (WIRE-2) among them.
    pub errors: u64,
    /// Warning findings.
    pub warnings: u64,
    /// Lines that are not JSON.
    pub unparseable: u64,
    /// Lines without the `field` taken.
    pub skipped: u64,
    /// Lines longer than [`Check::max_line`], not checked.
    pub over_limit: u64,
}

impl Counts {
    /// The counts a summary reports, by the names the JSON summary gives
    /// them, in its order (the npm command reads them in this order too).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcp_provenance::Counts;
    ///
    /// let mut counts = Counts::default();
    /// (counts.messages, counts.errors) = (3, 1);
    /// assert_eq!(counts.reported()[..2], [("messages", 3), ("errors", 1)]);
    /// ```
    pub fn reported(&self) -> [(&'static str, u64); 6] {
        [
            ("messages", self.messages),
            ("errors", self.errors),
            ("warnings", self.warnings),
            ("unparseable", self.unparseable),
            ("skipped", self.skipped),
            ("overLimit", self.over_limit),
        ]
    }
}

/// What lines of a capture come to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Printed {
    /// What `check` prints of them (each line ending in `\n`; nothing for a clean line of text).
    pub out: String,
    /// With [`Check::sanitize`], each line as it goes on under the filter's
    /// policy, or an empty line where it cannot go on as it came (blank, not
    /// JSON, over the line bound, refused): one output line per input line.
    pub sanitized: String,
}

/// A capture read in pieces of any size, as they come from a file or a
/// pipe: each whole line is checked where it stands in its piece, the start
/// of a line that goes on into the next piece is held, and a line past
/// [`Check::max_line`] is counted, never held, and reported when it ends.
/// Cut anywhere, a capture comes to what it would whole.
///
/// # Examples
///
/// ```
/// use mcp_provenance::{Capture, Check, Filter, FilterOptions, Printed};
///
/// let mut check = Check::new(Filter::new(FilterOptions::default())?);
/// check.max_line = 40;
/// let mut capture = Capture::new(check);
/// let mut printed = Printed::default();
/// capture.read(b"{\"id\":1,\"me", &mut printed);
/// capture.read(b"thod\":\"ping\"}\n{\"id\":2,\"method\":\"ping\",\"params\":{\"pad\":\"......\"}}\n", &mut printed);
/// capture.end(&mut printed);
/// assert_eq!(printed.out, "line 2: error WIRE-4 over-limit / the line is 50 bytes, over the bound of 40 (--max-line-bytes); it was not checked\n");
/// assert_eq!(capture.summary(), "checked 1 messages: 1 errors, 0 warnings, 0 unparseable (1 lines over --max-line-bytes)\n");
/// assert_eq!(capture.exit_code(), 1);
/// # Ok::<(), mcp_provenance::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Capture {
    check: Check,
    counts: Counts,
    /// The start of the line the last piece ended in.
    held: Vec<u8>,
    /// The length so far of a line past the bound, which is not held.
    long: Option<u64>,
}

impl Capture {
    /// A capture to read through `check`.
    pub fn new(check: Check) -> Self {
        // Room for the longest line held, made once: a line that goes on is
        // held without growing, its memory never moved from piece to piece
        // (the command line keeps the bound within MAX_LINE_BOUND).
        let room = check.max_line.min(MAX_LINE_BOUND) + 1;
        Capture {
            held: Vec::with_capacity(room),
            check,
            counts: Counts::default(),
            long: None,
        }
    }

    /// What it held so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Reads the next `piece`, adding what to print and write to `printed`.
    pub fn read(&mut self, piece: &[u8], printed: &mut Printed) {
        // The end of the line the last piece ended in.
        let first = super::scan::lines(piece).next().unwrap_or_default();
        if !first.ends_with(b"\n") {
            return self.go_on(piece);
        }
        let (rest, after) = piece.split_at(first.len());
        if let Some(long) = self.long.take() {
            self.over_limit(long + rest.len() as u64 - 1, printed);
        } else if self.held.is_empty() {
            self.check.lines(rest, &mut self.counts, printed);
        } else if self.held.len() + rest.len() - 1 > self.check.max_line {
            let length = self.held.len() + rest.len() - 1;
            self.held.clear();
            self.over_limit(length as u64, printed);
        } else {
            // The line ends within the room made for it.
            self.held.extend_from_slice(rest);
            self.check_held(printed);
        }
        let whole = super::scan::last_line_feed(after).map_or(0, |at| at + 1);
        let (whole, start) = after.split_at(whole);
        self.check.lines(whole, &mut self.counts, printed);
        self.go_on(start);
    }

    /// Ends the capture: its last line, when it does not end in a line feed.
    pub fn end(&mut self, printed: &mut Printed) {
        if let Some(long) = self.long.take() {
            self.over_limit(long, printed);
        } else {
            self.check_held(printed);
        }
    }

    /// Checks the line held, and holds nothing.
    fn check_held(&mut self, printed: &mut Printed) {
        let Capture {
            check,
            counts,
            held,
            ..
        } = self;
        check.lines(held, counts, printed);
        held.clear();
    }

    /// The summary line.
    pub fn summary(&self) -> String {
        self.check.summary(&self.counts)
    }

    /// The exit code of `check`: 0 clean (warnings allowed, unless
    /// [`Check::strict`]), 1 an error found (a line that is not JSON
    /// included; with `strict`, a warning too), 2 nothing checked and
    /// nothing found: no line held a message ([`NOTHING_CHECKED`]).
    pub fn exit_code(&self) -> u8 {
        let Counts {
            messages,
            errors,
            warnings,
            ..
        } = self.counts;
        if errors > 0 || (self.check.strict && warnings > 0) {
            1
        } else if messages == 0 {
            2
        } else {
            0
        }
    }

    /// What to say on standard error beside the exit code:
    /// [`NOTHING_CHECKED`] when no line held a message.
    pub fn hint(&self) -> Option<&'static str> {
        (self.counts.messages == 0).then_some(NOTHING_CHECKED)
    }

    /// Holds `start`, the start of a line that goes on, or counts it past the bound.
    fn go_on(&mut self, start: &[u8]) {
        if let Some(long) = &mut self.long {
            *long += start.len() as u64;
        } else if self.held.len() + start.len() > self.check.max_line {
            self.long = Some((self.held.len() + start.len()) as u64);
            self.held.clear();
        } else {
            self.held.extend_from_slice(start);
        }
    }

    /// Reports a line past the bound, `length` bytes long (its line feed not counted).
    fn over_limit(&mut self, length: u64, printed: &mut Printed) {
        self.counts.lines += 1;
        self.check
            .over_limit(self.counts.lines, length, &mut self.counts, printed);
    }
}

impl Check {
    /// Checks `lines`, whole lines of a capture (each ending in `\n`, but
    /// perhaps the last of the capture), numbering them on from
    /// `counts.lines`, adding what they held to `counts` and what to print
    /// and write to `printed`.
    fn lines(&self, lines: &[u8], counts: &mut Counts, printed: &mut Printed) {
        for line in super::scan::lines(lines) {
            counts.lines += 1;
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            if line.len() > self.max_line {
                self.over_limit(counts.lines, line.len() as u64, counts, printed);
                continue;
            }
            let went_on = self.line(counts.lines, line, counts, &mut printed.out);
            if self.sanitize {
                match went_on {
                    // A line the filter changed is not copied once more when it is the first.
                    Some(Cow::Owned(mut body)) if printed.sanitized.is_empty() => {
                        body.push('\n');
                        printed.sanitized = body;
                    }
                    went_on => {
                        printed
                            .sanitized
                            .push_str(went_on.as_deref().unwrap_or_default());
                        printed.sanitized.push('\n');
                    }
                }
            }
        }
    }

    /// Reports line `number`, `length` bytes, past the bound: an error, and
    /// an empty line in the sanitized copy.
    fn over_limit(&self, number: u64, length: u64, counts: &mut Counts, printed: &mut Printed) {
        counts.over_limit += 1;
        counts.errors += 1;
        let bound = self.max_line;
        let found = Diagnostic::error(
            Code::OverLimit,
            Rule::Wire4,
            String::new(),
            format!(
                "the line is {length} bytes, over the bound of {bound} (--max-line-bytes); it was not checked"
            ),
        );
        self.print(number, None, &[found], &mut printed.out);
        if self.sanitize {
            printed.sanitized.push('\n');
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
        let wants = if self.sanitize {
            Wants::FindingsAndText
        } else {
            Wants::Findings
        };
        let outcome = self.filter.judge(message, &FilterContext::default(), wants);
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

    /// Reports line `number`, which is not JSON: an error, since a body
    /// must be JSON text (WIRE-2, a MUST), and nothing in it was checked.
    fn unparseable(&self, number: u64, counts: &mut Counts, out: &mut String) {
        counts.unparseable += 1;
        counts.errors += 1;
        if self.json {
            out.push_str(&format!("{{\"line\":{number},\"unparseable\":true}}\n"));
        } else {
            out.push_str(&format!(
                "line {number}: error WIRE-2 parse-error / not JSON\n"
            ));
        }
    }

    /// Diagnostics as lines of text, or, in JSON, a record for a refusal of the whole line.
    fn print(&self, number: u64, index: Option<usize>, found: &[Diagnostic], out: &mut String) {
        let at = index.map(|index| format!("[{index}]")).unwrap_or_default();
        for d in found {
            // Written in place: writing to a `String` cannot fail.
            if self.json {
                let _ = write!(out, "{{\"line\":{number},\"valid\":false,\"diagnostics\":");
                super::line::diagnostics(std::slice::from_ref(d), out);
                out.push_str("}\n");
                continue;
            }
            let path = if d.path.is_empty() { "/" } else { &d.path };
            let _ = writeln!(
                out,
                "line {number}{at}: {} {} {} {path} {}",
                d.severity, d.rule, d.code, d.message
            );
        }
    }

    /// The summary line.
    fn summary(&self, counts: &Counts) -> String {
        if self.json {
            let members: Vec<String> = counts
                .reported()
                .iter()
                .map(|(name, count)| format!("\"{name}\":{count}"))
                .collect();
            return format!("{{\"summary\":{{{}}}}}\n", members.join(","));
        }
        let Counts {
            messages,
            errors,
            warnings,
            unparseable,
            skipped,
            over_limit,
            ..
        } = counts;
        let mut note = String::new();
        if let (Some(field), 1..) = (&self.field, skipped) {
            note.push_str(&format!(" ({skipped} lines without "));
            note.push_str(field);
            note.push_str(" skipped)");
        }
        if *over_limit > 0 {
            note.push_str(&format!(" ({over_limit} lines over --max-line-bytes)"));
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
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Any bound is taken, the largest too: nothing overflows.
    #[test]
    fn a_capture_takes_any_bound() {
        let mut check = Check::new(Filter::new(FilterOptions::default()).expect("a filter"));
        check.max_line = usize::MAX;
        let mut capture = Capture::new(check);
        let mut printed = Printed::default();
        capture.read(b"{\"id\":1,\"method\":\"ping\"}\n{\"id\":2,", &mut printed);
        capture.read(b"\"method\":\"ping\"}", &mut printed);
        capture.end(&mut printed);
        assert_eq!((capture.counts().messages, capture.exit_code()), (2, 0));
    }

    /// `check --sanitize out.jsonl --redact-intent capture.jsonl`: a bare
    /// `_meta.userIntent`, which the policy cannot reach, refuses its
    /// message wherever it stands (a request, a client's response, an answer
    /// in a request's `inputResponses`), so the sanitized copy never holds
    /// it (WIRE-6); `check --redact-intent` finds the same without a copy.
    #[test]
    fn a_sanitized_capture_holds_no_bare_intent() {
        let lines = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":{"userIntent":{"text":"my words"}}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","_meta":{"userIntent":{"text":"my words"}}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"q","inputResponses":{"e1":{"action":"accept","_meta":{"userIntent":{"text":"my words"}}}}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"q","_meta":{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"text":"my words"}}}}}"#,
            "\n",
        );
        let refused = "error WIRE-6 bare-user-intent / a bare _meta.userIntent, which a policy that redacts intents cannot reach";
        let sanitized = concat!(
            "\n\n\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"q","_meta":{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"redacted":true}}}}}"#,
            "\n",
        );
        let with_copy = [
            "--sanitize",
            "out.jsonl",
            "--redact-intent",
            "capture.jsonl",
        ];
        for words in [&with_copy[..], &["--redact-intent", "capture.jsonl"]] {
            let Ok(crate::CheckCommand::Run { check, .. }) = crate::CheckCommand::parse(words)
            else {
                panic!("{words:?}: a check to run");
            };
            let copies = check.sanitize;
            let mut capture = Capture::new(*check);
            let mut printed = Printed::default();
            capture.read(lines.as_bytes(), &mut printed);
            capture.end(&mut printed);
            assert_eq!(
                printed.out,
                format!("line 1: {refused}\nline 2: {refused}\nline 3: {refused}\n"),
                "{words:?}"
            );
            assert_eq!(capture.exit_code(), 1);
            assert!(!printed.sanitized.contains("my words"), "{words:?}");
            assert_eq!(printed.sanitized, if copies { sanitized } else { "" });
        }
    }

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
            let recorded = filter.judge(body, &context, Wants::Everything);
            let checked = filter.judge(body, &context, Wants::FindingsAndText);
            let found = filter.judge(body, &context, Wants::Findings);
            for (checked, found) in checked.messages.iter().zip(&found.messages) {
                assert_eq!(
                    (checked.valid, &checked.diagnostics),
                    (found.valid, &found.diagnostics)
                );
            }
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
