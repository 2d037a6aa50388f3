//! `mcp-provenance check`, natively: the npm package's `check` command for
//! captures of many gigabytes. One JSON-RPC message (or batch) per line
//! through the wire filter, streaming in constant memory, with the same output,
//! flags and exit codes as `npx mcp-provenance check`, and a progress bar on
//! a terminal. Built only with the `cli` feature, so the library pulls in
//! nothing for it:
//!
//! ```sh
//! cargo install --path . --features cli
//! mcp-provenance check capture.jsonl
//! ```

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_provenance::{Check, Counts, Filter, FilterOptions, IntentPolicy, Policy, Printed};

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
    sanitize: Option<String>,
    check: Check,
}

/// Reads the arguments after `check`; a message for the user when they are wrong.
fn options(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut files = Vec::new();
    let mut json = false;
    let (mut field, mut out) = (None, None);
    let mut policy = Policy::default();
    let mut options = FilterOptions::default();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--format" => match value()?.as_str() {
                "json" => json = true,
                "text" => json = false,
                _ => return Err("--format is text or json".into()),
            },
            "--key" => options.invocation_keys.push(value()?),
            "--ui-key" => options.ui_keys.push(value()?),
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
    // The copy written is sanitized under the policy, the default one included; a
    // policy given is checked either way.
    options.policy = (out.is_some() || policy != Policy::default()).then_some(policy);
    let filter = Filter::new(options).map_err(|error| format!("{error} ({})", error.code()))?;
    let [file] = <[String; 1]>::try_from(files)
        .map_err(|_| "check takes one file (or - for standard input)".to_string())?;
    Ok(Options {
        file,
        check: Check {
            filter,
            json,
            sanitize: out.is_some(),
            field,
        },
        sanitize: out,
    })
}

/// A byte limit given on the command line.
fn bytes(flag: &str, text: &str) -> Result<u32, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a whole number of bytes"))
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

/// How much of the input is read at a time: the core checks a piece's whole
/// lines in one call.
const PIECE: usize = 1 << 20;

/// Checks every line of `input`; the counts.
fn check(mut input: impl Read, options: &Options, total: Option<u64>) -> io::Result<Counts> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut sanitized = match &options.sanitize {
        Some(path) => Some(BufWriter::new(File::create(path)?)),
        None => None,
    };
    let mut progress = total
        .filter(|_| io::stderr().is_terminal())
        .map(|total| Progress {
            total,
            drawn: Instant::now(),
        });
    let (mut counts, mut printed) = (Counts::default(), Printed::default());
    let mut read = 0u64;
    // The input read so far and not yet checked (`held` bytes: the start of
    // a line), in a buffer that grows only for a line longer than it.
    let mut buffer = vec![0; PIECE];
    let mut held = 0;
    loop {
        if held == buffer.len() {
            buffer.resize(2 * held, 0);
        }
        let got = match input.read(&mut buffer[held..]) {
            Ok(got) => got,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        held += got;
        read += got as u64;
        // Whole lines now, the rest of the input at its end.
        let whole = match got {
            0 => held,
            _ => buffer[..held]
                .iter()
                .rposition(|byte| *byte == b'\n')
                .map_or(0, |at| at + 1),
        };
        options
            .check
            .lines(&buffer[..whole], &mut counts, &mut printed);
        buffer.copy_within(whole..held, 0);
        held -= whole;
        out.write_all(printed.out.as_bytes())?;
        if let Some(file) = sanitized.as_mut() {
            file.write_all(printed.sanitized.as_bytes())?;
        }
        printed.out.clear();
        printed.sanitized.clear();
        if let Some(bar) = progress.as_mut() {
            bar.draw(read, counts.messages);
        }
        if got == 0 {
            break;
        }
    }
    if progress.is_some() {
        eprintln!();
    }
    if let Some(mut file) = sanitized {
        file.flush()?;
    }
    out.write_all(options.check.summary(&counts).as_bytes())?;
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
                check(file, &options, total)
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
