//! The filter module's exports (feature `filter`): the gateway's filter and
//! echo, `mcp-provenance check`, and the text shown of the wire, as
//! wasm-bindgen classes and functions. A body is written by JS straight
//! into the module's memory ([`body_room`]) and its outcome is read by JS
//! where it stands ([`viewed`]: the compact form of [`Answer::outcome`],
//! its accounts made only when JS asks for them, so that a gateway that
//! only forwards pays for no record);
//! options and contexts, plain JSON copies JS made of them, as JSON text
//! read by the core's own parser ([`wire::filter_from_json`]): no
//! `serde_json::Value`, no serde in this module.

use std::cell::RefCell;
use std::convert::Infallible;

use mcp_provenance::__bindings::message::Unreadable;
use mcp_provenance::__bindings::{text, wire};
use mcp_provenance::{CHECK_USAGE, Capture, CheckCommand, Error, Printed, SAME_FILE};
use wasm_bindgen::prelude::*;

use crate::answer::{Answer, LineKind};
use crate::{WHAT, thrown, within};

thread_local! {
    /// Where JS writes the body a filter reads next ([`body_room`]).
    static BODY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last answer, until the next call: JS reads it where it stands ([`viewed`]).
    static ANSWER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Room for a body of at least `len` bytes in the module's memory, as a
/// view JS writes it into: a JS string with `TextEncoder.encodeInto`, bytes
/// with `set`. The room stays where it is until more is asked for, so JS
/// keeps the view until it is too small or detached (by the memory
/// growing). A string body written by wasm-bindgen's own `&str` (a loop over
/// its characters in JS) or encoded first and copied (`&[u8]`) made the
/// filter 1.18× slower on the SEP example and on 0.7 MB of rows (`make
/// bench`).
#[wasm_bindgen(js_name = bodyRoom)]
pub fn body_room(len: usize) -> js_sys::Uint8Array {
    BODY.with_borrow_mut(|body| {
        if body.len() < len {
            body.resize(len.next_power_of_two(), 0);
        }
        // SAFETY: the room moves only here, when it grows, and JS asks for
        // a view anew then; the module writes to it nowhere else, and a
        // view of memory that grew is detached, never stale.
        unsafe { js_sys::Uint8Array::view(body) }
    })
}

/// The first `len` bytes JS wrote into the body's room, to `read` (a body,
/// or a piece of an answer: see gateway.rs).
pub(crate) fn body<T>(len: usize, read: impl FnOnce(&[u8]) -> T) -> T {
    BODY.with_borrow(|body| read(body.get(..len).unwrap_or_default()))
}

/// `out`, kept until the next call, as a view JS reads it through before
/// then. What wasm-bindgen makes of a `Vec<u8>` is a copy, and a copy past
/// 64 bytes is a new `ArrayBuffer`, which V8 made in about 0.6 µs in a loop
/// of filter calls: more than a sixth of a call on the SEP example.
pub(crate) fn viewed(out: Vec<u8>) -> js_sys::Uint8Array {
    ANSWER.with_borrow_mut(|kept| {
        *kept = out;
        // SAFETY: JS reads the view before it calls into the module again,
        // and the answer is kept until then; a view of memory that grew is
        // detached, never stale.
        unsafe { js_sys::Uint8Array::view(kept) }
    })
}

/// `answer(out)` in a call of the hot path (`within`), its answer `out` as
/// a view ([`viewed`]). The last answer is let go of first, outside the
/// call: made in the chunk the call takes back, it is dropped before the
/// chunk is handed out again.
fn answering<E>(
    answer: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<js_sys::Uint8Array, E> {
    drop(ANSWER.take());
    within(|| {
        let mut out = Vec::new();
        answer(&mut out)?;
        Ok(viewed(out))
    })
}

pub(crate) fn or_thrown<T>(result: Result<T, Error>) -> Result<T, JsValue> {
    result.map_err(|error| thrown(&error))
}

/// What `createFilter` throws for options, or a filter for a context, that
/// JS could not copy as JSON: `what` (a name of the table's `what`) stood at
/// `path`, an RFC 6901 pointer.
#[wasm_bindgen]
pub fn unreadable(path: String, what: &str) -> JsValue {
    let what = WHAT
        .iter()
        .find(|(name, _)| *name == what)
        .map_or("a value JSON cannot hold", |(_, text)| text);
    thrown(
        &Unreadable {
            path,
            what: what.into(),
        }
        .error(),
    )
}

/// A filter for the bodies of HTTP requests on their way to an MCP server
/// (`createFilter` in gateway.d.ts, which JS wraps around it).
#[wasm_bindgen]
pub struct Filter(mcp_provenance::Filter);

#[wasm_bindgen]
impl Filter {
    /// A filter made from `options`, the JSON text of a plain copy
    /// (`undefined` for the defaults); the core's error, thrown, for
    /// options it refuses.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<String>) -> Result<Filter, JsValue> {
        or_thrown(wire::filter_from_json(options.as_deref())).map(Filter)
    }

    /// The outcome of the body of `len` bytes in its room (whose text came
    /// as a JS string when `utf16`, so that where each message stands is
    /// counted in UTF-16 code units) under `context`, the JSON text of a
    /// plain copy or `undefined`: the compact form `outcome` of answer.rs,
    /// and, with `records`, `accounts` after it. Without, no record is made
    /// ([`mcp_provenance::Filter::filter_without_records`]): what a gateway
    /// that reads no account never pays for.
    pub fn filter(
        &self,
        len: usize,
        utf16: bool,
        context: Option<String>,
        records: bool,
    ) -> Result<js_sys::Uint8Array, JsValue> {
        answering(|out| {
            let context = or_thrown(wire::context_from_json(context.as_deref()))?;
            body(len, |body| {
                let mut answer = Answer(out);
                if records {
                    let outcome = self.0.filter(body, &context);
                    answer.outcome(&outcome);
                    answer.accounts(&outcome, utf16);
                } else {
                    answer.outcome(&self.0.filter_without_records(body, &context));
                }
            });
            Ok(())
        })
    }

    /// The accounts of the body of `len` bytes in its room (whose text
    /// came as a JS string when `utf16`, so that where each message stands
    /// is counted in UTF-16 code units) under `context`, records and all:
    /// the compact form `accounts` of answer.rs, for the outcome `filter`
    /// gave of the same body, when JS first reads them. The filter is a
    /// function of the body and the context, so the second reading agrees
    /// with the first.
    pub fn accounts(
        &self,
        len: usize,
        utf16: bool,
        context: Option<String>,
    ) -> Result<js_sys::Uint8Array, JsValue> {
        answering(|out| {
            let context = or_thrown(wire::context_from_json(context.as_deref()))?;
            body(len, |body| {
                Answer(out).accounts(&self.0.filter(body, &context), utf16);
            });
            Ok(())
        })
    }

    /// `filter.echo(answer, forwarded)` on the answer of `len` bytes in the
    /// body's room: the answer as it came, rewritten, or unreadable, after
    /// the `turns` of the outcome it answers (the compact form `echoed` of
    /// answer.rs).
    pub fn echo(&self, len: usize, turns: Vec<String>) -> js_sys::Uint8Array {
        let Ok(view) = answering(|out| {
            body(len, |answer| {
                let echoed = self.0.echo(answer, turns.iter().map(String::as_str));
                Answer(out).echoed(echoed.as_ref());
            });
            Ok::<(), Infallible>(())
        });
        view
    }
}

/// `mcp-provenance check` with the words after `check`: the help to print,
/// what is wrong with the words, or the capture to read, a piece at a time.
#[wasm_bindgen]
pub struct Check {
    /// `--help`: the text to print.
    #[wasm_bindgen(getter_with_clone)]
    pub help: Option<String>,
    /// What is wrong with the words, one line.
    #[wasm_bindgen(getter_with_clone)]
    pub error: Option<String>,
    /// The capture to read (`-`: standard input).
    #[wasm_bindgen(getter_with_clone)]
    pub file: Option<String>,
    /// Where to write each line as it goes on.
    #[wasm_bindgen(getter_with_clone)]
    pub sanitize: Option<String>,
    capture: Option<Capture>,
}

#[wasm_bindgen]
impl Check {
    /// The command `words` ask for.
    #[wasm_bindgen(constructor)]
    pub fn new(words: Vec<String>) -> Check {
        let mut command = Check {
            help: None,
            error: None,
            file: None,
            sanitize: None,
            capture: None,
        };
        match CheckCommand::parse(&words) {
            Ok(CheckCommand::Help) => command.help = Some(CHECK_USAGE.to_string()),
            Err(why) => command.error = Some(why),
            Ok(CheckCommand::Run {
                file,
                sanitize,
                check,
            }) => {
                command.file = Some(file);
                command.sanitize = sanitize;
                command.capture = Some(Capture::new(*check));
            }
        }
        command
    }

    /// What to print when `sanitize` is the capture itself, which the
    /// command refuses before opening anything to write ([`SAME_FILE`]).
    #[wasm_bindgen(getter, js_name = sameFile)]
    pub fn same_file(&self) -> String {
        SAME_FILE.to_owned()
    }

    /// The next piece of the capture: the compact form `line` of
    /// answer.rs (empty for a command that reads no capture).
    pub fn read(&mut self, piece: &[u8]) -> js_sys::Uint8Array {
        self.line(|capture, printed| capture.read(piece, printed))
    }

    /// The end of the capture: its last lines and the summary.
    pub fn end(&mut self) -> js_sys::Uint8Array {
        self.line(|capture, printed| {
            capture.end(printed);
            printed.out.push_str(&capture.summary());
        })
    }

    fn line(&mut self, read: impl FnOnce(&mut Capture, &mut Printed)) -> js_sys::Uint8Array {
        let mut out = Vec::new();
        let Some(capture) = self.capture.as_mut() else {
            return viewed(out);
        };
        let mut printed = Printed::default();
        read(capture, &mut printed);
        Answer(&mut out).line(
            &printed.out,
            printed.sanitized.as_bytes(),
            &capture.counts().reported(),
            capture.exit_code(),
            capture.hint(),
        );
        viewed(out)
    }
}

/// Text from the wire as a person may be shown it (AI-16): for a terminal,
/// or inside JSON text when `json`.
#[wasm_bindgen]
pub fn visible(text: &str, json: bool) -> String {
    text::visible(text, json)
}

/// The members a message's log line opens with, made when JS reads the
/// line: `"message"`, its `text` as it goes on put on one line (AI-13), its
/// arguments left out as its line's `kind` (a byte of the outcome,
/// `LineKind`) says, and then `"auditArguments"` (WIRE-9).
#[wasm_bindgen(js_name = lineHead)]
pub fn line_head(text: &str, kind: u8) -> String {
    wire::line_head(text, LineKind::arguments(kind))
}
