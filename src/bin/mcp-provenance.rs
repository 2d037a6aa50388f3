//! `mcp-provenance check`, natively: the npm package's `check` command for
//! captures of many gigabytes. One JSON-RPC message (or batch) per line
//! through [`validate`], streaming in constant memory, with the same output,
//! flags and exit codes as `npx mcp-provenance check`, and a progress bar on
//! a terminal. Built only with the `cli` feature, so the library pulls in
//! nothing for it:
//!
//! ```sh
//! cargo install --path . --features cli
//! mcp-provenance check capture.jsonl
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_provenance::{IntentPolicy, Policy, Severity, ValidateOptions, sanitize, validate};
use serde_json::{Value, json};

const USAGE: &str = "usage: mcp-provenance check <file.jsonl | -> [options]

Checks each line (one JSON-RPC message or batch) against every rule.
  --format text|json         diagnostics as lines of text (default) or JSON records
  --key <key>                the envelope's _meta key (e.g. com.example/aiInvocation)
  --ui-key <key>             the ui entry's _meta key
  --field <name>             take each line's message from this member; lines without it are skipped
  --sanitize <out.jsonl>     write each message, sanitized, to this file
  --redact-intent            with --sanitize: remove userIntent.text
  --max-intent-bytes <n>, --max-reason-bytes <n>, --max-model-bytes <n>,
  --max-turn-id-bytes <n>, --max-envelope-bytes <n>   with --sanitize: the limits
Exit: 0 clean, 1 a message has an error, 2 bad usage or an unreadable file.";

/// What the command line asked for.
struct Options {
    file: String,
    json: bool,
    field: Option<String>,
    sanitize: Option<String>,
    policy: Policy,
}

/// Reads the arguments after `check`; a message for the user when they are wrong.
fn options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut files = Vec::new();
    let mut json = false;
    let (mut field, mut out) = (None, None);
    let mut policy = Policy::default();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--format" => match value()?.as_str() {
                "json" => json = true,
                "text" => json = false,
                _ => return Err("--format is text or json".into()),
            },
            "--key" => policy.keys.invocation_key = Some(value()?),
            "--ui-key" => policy.keys.ui_key = Some(value()?),
            "--field" => field = Some(value()?),
            "--sanitize" => out = Some(value()?),
            "--redact-intent" => policy.user_intent = IntentPolicy::Redact,
            "--max-intent-bytes" => policy.max_intent_bytes = bytes(&arg, &value()?)?,
            "--max-reason-bytes" => policy.max_reason_bytes = bytes(&arg, &value()?)?,
            "--max-model-bytes" => policy.max_model_bytes = bytes(&arg, &value()?)?,
            "--max-turn-id-bytes" => policy.max_turn_id_bytes = bytes(&arg, &value()?)?,
            "--max-envelope-bytes" => policy.max_envelope_bytes = bytes(&arg, &value()?)?,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => files.push(arg),
        }
    }
    policy
        .check()
        .map_err(|error| format!("{error} ({})", error.code()))?;
    let [file] = <[String; 1]>::try_from(files)
        .map_err(|_| "check takes one file (or - for standard input)".to_string())?;
    Ok(Options {
        file,
        json,
        field,
        sanitize: out,
        policy,
    })
}

/// A byte limit given on the command line.
fn bytes(flag: &str, text: &str) -> Result<u32, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a whole number of bytes"))
}

/// The counts the summary line gives.
#[derive(Default)]
struct Counts {
    messages: u64,
    errors: u64,
    warnings: u64,
    unparseable: u64,
    skipped: u64,
}

/// A progress bar on standard error, redrawn at most four times a second.
struct Progress {
    total: u64,
    drawn: Instant,
}

impl Progress {
    /// Draws the bar for `read` bytes of `total`.
    fn draw(&mut self, read: u64, messages: u64) {
        if self.drawn.elapsed() < Duration::from_millis(250) {
            return;
        }
        self.drawn = Instant::now();
        let done = (read as f64 / self.total.max(1) as f64).min(1.0);
        let filled = (done * 30.0) as usize;
        eprint!(
            "\r[{}{}] {:3.0}% {} of {} MB, {messages} messages",
            "#".repeat(filled),
            ".".repeat(30 - filled),
            done * 100.0,
            read >> 20,
            self.total >> 20
        );
    }
}

/// Checks every line of `input`; the counts.
fn check(input: impl BufRead, options: &Options, total: Option<u64>) -> io::Result<Counts> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut sanitized = match &options.sanitize {
        Some(path) => Some(BufWriter::new(File::create(path)?)),
        None => None,
    };
    let validating = ValidateOptions {
        keys: options.policy.keys.clone(),
        request: None,
    };
    let mut progress = total
        .filter(|_| io::stderr().is_terminal())
        .map(|total| Progress {
            total,
            drawn: Instant::now(),
        });
    let mut counts = Counts::default();
    let (mut read, mut line) = (0u64, 0u64);
    for text in input.split(b'\n') {
        let text = text?;
        line += 1;
        read += text.len() as u64 + 1;
        if let Some(bar) = progress.as_mut() {
            bar.draw(read, counts.messages);
        }
        let text = String::from_utf8_lossy(&text);
        if text.trim().is_empty() {
            continue;
        }
        let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
            counts.unparseable += 1;
            if options.json {
                writeln!(out, "{}", json!({"line": line, "unparseable": true}))?;
            } else {
                writeln!(out, "line {line}: not JSON")?;
            }
            continue;
        };
        if let Some(field) = &options.field {
            match value.get_mut(field).map(Value::take) {
                Some(inner) => value = inner,
                None => {
                    counts.skipped += 1;
                    continue;
                }
            }
        }
        let batch = value.is_array();
        let messages = match value {
            Value::Array(items) => items,
            single => vec![single],
        };
        let mut written = Vec::new();
        for (index, message) in messages.into_iter().enumerate() {
            counts.messages += 1;
            let at = if batch {
                format!("[{index}]")
            } else {
                String::new()
            };
            let report = validate(&message, &validating);
            for d in &report.diagnostics {
                match d.severity {
                    Severity::Error => counts.errors += 1,
                    Severity::Warning => counts.warnings += 1,
                }
            }
            if options.json {
                let mut record =
                    json!({"line": line, "valid": report.valid, "diagnostics": report.diagnostics});
                if batch {
                    record["index"] = json!(index);
                }
                writeln!(out, "{record}")?;
            } else {
                for d in &report.diagnostics {
                    let path = if d.path.is_empty() { "/" } else { &d.path };
                    writeln!(
                        out,
                        "line {line}{at}: {} {} {} {path} {}",
                        d.severity, d.rule, d.code, d.message
                    )?;
                }
            }
            if sanitized.is_some() {
                match sanitize(message, &options.policy) {
                    Ok(clean) => written.push(clean.message),
                    // What cannot be sanitized is not written as it came.
                    Err(error) if options.json => {
                        let mut record =
                            json!({"line": line, "notSanitized": error.code().as_str()});
                        if batch {
                            record["index"] = json!(index);
                        }
                        writeln!(out, "{record}")?;
                    }
                    Err(error) => {
                        let path = options.sanitize.as_deref().unwrap_or_default();
                        writeln!(
                            out,
                            "line {line}{at}: not written to {path}: {}",
                            error.code()
                        )?;
                    }
                }
            }
        }
        if let (Some(file), false) = (sanitized.as_mut(), written.is_empty()) {
            let value = if batch {
                Value::Array(written)
            } else {
                written.remove(0)
            };
            writeln!(file, "{value}")?;
        }
    }
    if progress.is_some() {
        eprintln!();
    }
    if let Some(mut file) = sanitized {
        file.flush()?;
    }
    let Counts {
        messages,
        errors,
        warnings,
        unparseable,
        skipped,
    } = counts;
    if options.json {
        writeln!(
            out,
            "{}",
            json!({"summary": {"messages": messages, "errors": errors, "warnings": warnings, "unparseable": unparseable, "skipped": skipped}})
        )?;
    } else {
        let skipped_note = match (&options.field, skipped) {
            (Some(field), 1..) => format!(" ({skipped} lines without {field} skipped)"),
            _ => String::new(),
        };
        writeln!(
            out,
            "checked {messages} messages: {errors} errors, {warnings} warnings, {unparseable} unparseable{skipped_note}"
        )?;
    }
    out.flush()?;
    Ok(counts)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("check") => {}
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("mcp-provenance: the native command has one subcommand, check\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let options = match options(args) {
        Ok(options) => options,
        Err(why) => {
            eprintln!("mcp-provenance: {why}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let checked = if options.file == "-" {
        check(io::stdin().lock(), &options, None)
    } else {
        match File::open(&options.file) {
            Ok(file) => {
                let total = file.metadata().ok().map(|m| m.len());
                check(BufReader::with_capacity(1 << 20, file), &options, total)
            }
            Err(error) => {
                eprintln!(
                    "mcp-provenance check: cannot read {}: {}",
                    options.file,
                    code(&error)
                );
                return ExitCode::from(2);
            }
        }
    };
    match checked {
        Ok(counts) if counts.errors > 0 => ExitCode::from(1),
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-provenance check: {}: {error}", code(&error));
            ExitCode::from(2)
        }
    }
}

/// An I/O error's name as Node gives it (ENOENT…), for the same messages in both tools.
fn code(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::NotFound => "ENOENT",
        io::ErrorKind::PermissionDenied => "EACCES",
        io::ErrorKind::IsADirectory => "EISDIR",
        _ => "EIO",
    }
}
