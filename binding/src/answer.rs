//! The answer: what the core says back to JS, in one compact form.
//!
//! ```text
//! report  := valid:u8 diagnostics
//! changes := count:u32 (action:u8 path:str rule:u8){count}
//! edits   := count:u32 (target put){count}
//! target  := place:u8 field:u8 member:u8 name:opt      (NONE: no field, no member)
//! put     := Remove | Text str | Bool bool:u8 | Object | Json json:str
//!            | Copy input:u8 target        (PutKind; Object: an empty one)
//! record  := json:str                                   (the record as the filter's lines hold it)
//! plan    := flags:u8{ops} cut:u32 invocation:str ui:str count:u32 str{count}
//!            (a handle's: how to read for each op, where to cut strings, the
//!            keys in force, the members of `_meta` that may hold correlation ids)
//! diagnostics := count:u32 (code:u8 severity:u8 rule:u8 path:str message:str){count}
//! outcome := (AsItCame | Rewritten body:str | Rejected status:u32 body:str)
//!            replies messages             (VerdictKind)
//! replies := count:u32 str{count}
//! messages := size:u32 count:u32 (account:str id:opt (Refused | line start:u32 tail:u32)){count}
//!            (size: the bytes after it, so that JS can keep them and read them when asked;
//!            where the message stands in what goes on, units from its start and after its
//!            end, and whether that text is a line's as it is, or how the core makes the
//!            line's of it: LineKind)
//! own     := status:u32 count:u32 (name:str value:str){count} body:str
//! step    := (0 | 1 status:u32 count:u32 (name:str value:opt){count} passes:u8)
//!            count:u32 (Given start:u32 end:u32 | Made bytes){count} over:u8  (PieceKind)
//! line    := out:str sanitized:bytes count:u32 (name:str value:f64){count} exit:u8 hint:opt
//! opt     := 0 | 1 str
//! str     := len:u32 utf8[len]
//! bytes   := len:u32 byte[len]
//! ```
//!
//! A choice's first byte is one of the `kinds!` below, which the JS side
//! reads by name from the table; every other number is as written here.
//! The host module writes reports, changes, edits, records and plans (feature
//! `host`; the outgoing module edits and plans), the filter module outcomes, echoes, the middleware's own
//! answers, the steps of the way back and the lines of `check` (feature
//! `filter`).

#[cfg(feature = "outgoing")]
use mcp_provenance::__bindings::edit::{Edit, Put, Target};
#[cfg(feature = "filter")]
use mcp_provenance::__bindings::json;
#[cfg(feature = "filter")]
use mcp_provenance::__bindings::wire::{self, Piece, Step};
#[cfg(feature = "outgoing")]
use mcp_provenance::KeyOptions;
#[cfg(feature = "filter")]
use mcp_provenance::{AuditArguments, Outcome, Seen, Verdict};
#[cfg(feature = "host")]
use mcp_provenance::{Change, Diagnostic, Report};
#[cfg(feature = "filter")]
use std::borrow::Cow;

/// Where each message that goes on stands in `text`: units from the start
/// to it, and from its end to the end, counted as JS counts a string
/// (UTF-16 code units) when `utf16`, else in bytes. One message alone is
/// framed by whitespace, the same in both; a batch's are counted in one pass.
#[cfg(feature = "filter")]
fn places(text: &str, messages: &[Seen], utf16: bool) -> Vec<Option<(usize, usize)>> {
    let bytes = |at: &std::ops::Range<usize>| (at.start, text.len() - at.end.min(text.len()));
    if !utf16 || messages.len() < 2 {
        return messages
            .iter()
            .map(|seen| seen.forwarded.as_ref().map(bytes))
            .collect();
    }
    // UTF-16 units of a run of UTF-8: a unit per character, two past U+FFFF.
    let units = |run: &[u8]| {
        run.iter()
            .map(|byte| usize::from(byte & 0xC0 != 0x80) + usize::from(*byte >= 0xF0))
            .sum::<usize>()
    };
    let all = units(text.as_bytes());
    let (mut at, mut counted) = (0, 0);
    let mut unit = |to: usize| {
        counted += units(text.as_bytes().get(at..to).unwrap_or_default());
        at = to;
        counted
    };
    messages
        .iter()
        .map(|seen| {
            let range = seen.forwarded.as_ref()?;
            let start = unit(range.start);
            let end = unit(range.end);
            Some((start, all - end))
        })
        .collect()
}

/// Declares what the bytes of one choice in an answer stand for: an enum
/// whose variants are the bytes 0, 1, ... in order, and, for the
/// description, `NAMES`, which the JS table carries under `$table` (each
/// variant's name with a lower-case first letter, e.g. `PutKind::Copy` is
/// `table.puts` entry `"copy"`). JS reads the byte by that name, so the
/// two sides cannot disagree on a number.
macro_rules! kinds {
    ($(#[$doc:meta])* $name:ident as $table:literal { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub(super) enum $name { $($variant),+ }

        impl $name {
            /// Where the JS table lists the names, and the names in the order of their bytes.
            #[cfg(test)]
            pub(super) const NAMES: (&'static str, &'static [&'static str]) =
                ($table, &[$(stringify!($variant)),+]);
        }
    };
}

#[cfg(feature = "outgoing")]
kinds! {
    /// How an edit's put is written, by its first byte.
    PutKind as "puts" { Remove, Text, Bool, Object, Json, Copy }
}

#[cfg(feature = "filter")]
kinds! {
    /// What a filter does with the body, by the outcome's first byte:
    /// forward it as it came, forward the text that follows, or reject.
    VerdictKind as "verdicts" { AsItCame, Rewritten, Rejected }
}

#[cfg(feature = "filter")]
kinds! {
    /// What a message's log line is made of: none (the message was refused),
    /// its text as it goes on (one line already), or what the core makes
    /// of that text (`lineHead`), only when the line is read: put on one
    /// line, or that and its arguments digested or dropped (WIRE-9).
    LineKind as "lineKinds" { Refused, OneLine, Spread, Digest, Drop }
}

#[cfg(feature = "filter")]
kinds! {
    /// A piece of a step of the way back: a range of the piece given, or
    /// bytes of the exchange's own.
    PieceKind as "pieces" { Given, Made }
}

#[cfg(feature = "filter")]
impl LineKind {
    /// What a line of the kind `byte` holds of its message's arguments.
    pub(super) fn arguments(byte: u8) -> AuditArguments {
        match byte {
            b if b == LineKind::Digest as u8 => AuditArguments::Digest,
            b if b == LineKind::Drop as u8 => AuditArguments::Drop,
            _ => AuditArguments::Keep,
        }
    }
}

/// Every kind an answer's bytes stand for, for the description.
#[cfg(test)]
pub(super) const KINDS: [(&str, &[&str]); 4] = [
    PutKind::NAMES,
    VerdictKind::NAMES,
    LineKind::NAMES,
    PieceKind::NAMES,
];

/// An answer being written.
pub(super) struct Answer<'a>(pub &'a mut Vec<u8>);

impl Answer<'_> {
    fn u8(&mut self, byte: u8) {
        self.0.push(byte);
    }

    fn u32(&mut self, value: u32) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    pub(super) fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.place(bytes.len());
        self.0.extend_from_slice(bytes);
    }

    /// A count, a length or a place in a text: `u32`, as every one the
    /// boundary carries fits (JS strings and the module's memory are smaller).
    fn place(&mut self, value: usize) {
        self.u32(u32::try_from(value).unwrap_or(u32::MAX));
    }

    fn opt(&mut self, text: Option<&str>) {
        match text {
            Some(text) => {
                self.u8(1);
                self.str(text);
            }
            None => self.u8(0),
        }
    }
}

#[cfg(feature = "outgoing")]
impl Answer<'_> {
    fn index(&mut self, index: Option<usize>) {
        self.u8(index
            .and_then(|index| u8::try_from(index).ok())
            .unwrap_or(crate::NONE));
    }

    fn target(&mut self, target: &Target) {
        self.u8(target.place as u8);
        // A field by its place in the envelope's order, which the JS side reads it by.
        self.index(target.field.map(|field| field as usize));
        self.index(target.member);
        self.opt(target.name.as_deref());
    }

    /// A handle's plan: the flags to read with for each op, the cut, the
    /// keys in force, and the members of `_meta` that may hold correlation ids.
    pub(super) fn plan(&mut self, flags: &[u8], cut: u32, keys: &KeyOptions, wanted: &[&str]) {
        self.0.extend_from_slice(flags);
        self.u32(cut);
        self.str(keys.invocation_key());
        self.str(keys.ui_key());
        self.place(wanted.len());
        for key in wanted {
            self.str(key);
        }
    }

    pub(super) fn edits(&mut self, edits: &[Edit]) {
        self.place(edits.len());
        for edit in edits {
            self.target(&edit.target);
            match &edit.put {
                Put::Remove => self.u8(PutKind::Remove as u8),
                Put::Text(text) => {
                    self.u8(PutKind::Text as u8);
                    self.str(text);
                }
                Put::Bool(flag) => {
                    self.u8(PutKind::Bool as u8);
                    self.u8(u8::from(*flag));
                }
                Put::Object => self.u8(PutKind::Object as u8),
                Put::Json(json) => {
                    self.u8(PutKind::Json as u8);
                    self.str(json);
                }
                Put::Copy { input, target } => {
                    self.u8(PutKind::Copy as u8);
                    self.index(Some(*input));
                    self.target(target);
                }
            }
        }
    }
}

#[cfg(feature = "host")]
impl Answer<'_> {
    pub(super) fn report(&mut self, report: &Report) {
        self.u8(u8::from(report.valid));
        self.diagnostics(&report.diagnostics);
    }

    fn diagnostics(&mut self, diagnostics: &[Diagnostic]) {
        self.place(diagnostics.len());
        for diagnostic in diagnostics {
            self.u8(diagnostic.code as u8);
            self.u8(diagnostic.severity as u8);
            self.u8(diagnostic.rule as u8);
            self.str(&diagnostic.path);
            self.str(&diagnostic.message);
        }
    }

    pub(super) fn changes(&mut self, changes: &[Change]) {
        self.place(changes.len());
        for change in changes {
            self.u8(change.action as u8);
            self.str(&change.path);
            self.u8(change.rule as u8);
        }
    }
}

#[cfg(feature = "filter")]
impl Answer<'_> {
    /// What `Filter::echo` made of an answer: the answer as it came, its new
    /// text, or (`Rejected`) no answer the echo could read.
    pub(super) fn echoed(&mut self, echoed: Option<&Cow<'_, str>>) {
        match echoed {
            Some(Cow::Borrowed(_)) => self.u8(VerdictKind::AsItCame as u8),
            Some(Cow::Owned(text)) => {
                self.u8(VerdictKind::Rewritten as u8);
                self.str(text);
            }
            None => self.u8(VerdictKind::Rejected as u8),
        }
    }

    /// A filter's outcome: what to do with the body, the filter's answers,
    /// and each message's id and turn. Its accounts are apart
    /// ([`Answer::accounts`]): after it, or made by a second filtering when
    /// JS first reads them.
    pub(super) fn outcome(&mut self, outcome: &Outcome) {
        match &outcome.verdict {
            Verdict::Forward { body, replies } => {
                match body {
                    Cow::Borrowed(_) => self.u8(VerdictKind::AsItCame as u8),
                    Cow::Owned(body) => {
                        self.u8(VerdictKind::Rewritten as u8);
                        self.str(body);
                    }
                }
                self.strs(replies);
            }
            Verdict::Reject { status, body } => {
                self.u8(VerdictKind::Rejected as u8);
                self.u32(u32::from(*status));
                self.str(body);
                self.strs(&[]);
            }
            // A verdict this build does not know of sends nothing on:
            // fail closed, with a 500 and no body.
            _ => {
                self.u8(VerdictKind::Rejected as u8);
                self.u32(500);
                self.str("");
                self.strs(&[]);
            }
        }
        self.place(outcome.messages.len());
        for seen in &outcome.messages {
            self.opt(seen.id_text.as_deref());
            self.opt(seen.turn.as_deref());
        }
    }

    /// Each message's account, with where it stands in what goes on, in
    /// UTF-16 code units when the body came as a JS string (`utf16`), else
    /// bytes, and how its log line is made of it.
    pub(super) fn accounts(&mut self, outcome: &Outcome, utf16: bool) {
        let forwarded = match &outcome.verdict {
            Verdict::Forward { body, .. } => body.as_ref(),
            _ => "",
        };
        let places = places(forwarded, &outcome.messages, utf16);
        self.place(outcome.messages.len());
        for (seen, place) in outcome.messages.iter().zip(places) {
            self.str(&seen.json());
            let text = seen.forwarded.clone().and_then(|at| forwarded.get(at));
            match place {
                Some((start, tail)) => {
                    // Whether the text is a log line's as it is, or the core
                    // makes the line's of it when JS asks for the line: put
                    // on one line, its arguments left out (WIRE-9).
                    let kind = match seen.audit_arguments {
                        AuditArguments::Digest => LineKind::Digest,
                        AuditArguments::Drop => LineKind::Drop,
                        AuditArguments::Keep if text.is_none_or(json::is_one_line) => {
                            LineKind::OneLine
                        }
                        AuditArguments::Keep => LineKind::Spread,
                        // A choice this build does not know of: a line
                        // that holds none of the arguments.
                        _ => LineKind::Drop,
                    };
                    self.u8(kind as u8);
                    self.place(start);
                    self.place(tail);
                }
                None => self.u8(LineKind::Refused as u8),
            }
        }
    }

    /// An answer of the middleware's own: its status, headers and body.
    pub(super) fn own(&mut self, answer: &wire::Answer) {
        self.u32(u32::from(answer.status));
        let headers = answer.headers();
        self.place(headers.len());
        for (name, value) in &headers {
            self.str(name);
            self.str(value);
        }
        self.str(&answer.body);
    }

    /// A step of the way back: the head when it is known (each header
    /// edit a value, or none for a header removed), its pieces, and
    /// whether the answer is over.
    pub(super) fn step(&mut self, step: &Step) {
        match &step.head {
            Some(head) => {
                self.u8(1);
                self.u32(u32::from(head.status));
                self.place(head.edits.len());
                for (name, value) in &head.edits {
                    self.str(name);
                    self.opt(value.as_deref());
                }
                self.u8(u8::from(head.passes));
            }
            None => self.u8(0),
        }
        self.place(step.pieces.len());
        for piece in &step.pieces {
            match piece {
                Piece::Given(range) => {
                    self.u8(PieceKind::Given as u8);
                    self.place(range.start);
                    self.place(range.end);
                }
                Piece::Made(bytes) => {
                    self.u8(PieceKind::Made as u8);
                    self.bytes(bytes);
                }
            }
        }
        self.u8(u8::from(step.over));
    }

    /// A piece of a capture `check` read, or its end: what to print, what
    /// to write to the sanitized copy, the counts so far by name, the exit
    /// code they make, and a hint for standard error.
    pub(super) fn line(
        &mut self,
        out: &str,
        sanitized: &[u8],
        counts: &[(&str, u64)],
        exit: u8,
        hint: Option<&str>,
    ) {
        self.str(out);
        self.bytes(sanitized);
        self.place(counts.len());
        for (name, count) in counts {
            self.str(name);
            // Exact below 2^53, which no capture reaches.
            self.0.extend_from_slice(&(*count as f64).to_le_bytes());
        }
        self.u8(exit);
        self.opt(hint);
    }

    fn strs(&mut self, texts: &[String]) {
        self.place(texts.len());
        for text in texts {
            self.str(text);
        }
    }
}
