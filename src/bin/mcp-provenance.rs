//! `mcp-provenance check`, natively: the npm package's `check` command for
//! captures of many gigabytes. One JSON-RPC message (or batch) per line
//! through the wire filter, streaming in memory bounded by the longest line
//! it reads, with the same words, output and exit codes as
//! `npx mcp-provenance check` (both read their command line and print
//! through the core), and a progress bar on a terminal. Built only with the
//! `cli` feature, so the library pulls in nothing for it:
//!
//! ```sh
//! cargo install --path . --features cli
//! mcp-provenance check capture.jsonl
//! ```

use std::fs::{File, Metadata};
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mcp_provenance::{CHECK_USAGE, Capture, CheckCommand, Printed, SAME_FILE, USAGE};

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
/// lines where they stand.
const PIECE: usize = 1 << 20;

/// Why a check stopped before its end.
enum Failed {
    /// The capture could not be read.
    Read(io::Error),
    /// The output, or the sanitized copy, could not be written.
    Write(io::Error),
}

impl From<io::Error> for Failed {
    fn from(error: io::Error) -> Self {
        Failed::Write(error)
    }
}

/// Reads all of `input` through `capture`, printing as it goes and writing
/// the sanitized copy to `sanitized` when asked.
fn read_all(
    mut input: impl Read,
    capture: &mut Capture,
    sanitized: Option<&str>,
    total: Option<u64>,
) -> Result<(), Failed> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut sanitized = match sanitized {
        Some(path) => Some(BufWriter::new(File::create(path)?)),
        None => None,
    };
    let mut progress = total
        .filter(|_| io::stderr().is_terminal())
        .map(|total| Progress {
            total,
            drawn: Instant::now(),
        });
    let mut printed = Printed::default();
    let mut buffer = vec![0; PIECE];
    let mut read = 0u64;
    loop {
        let got = match input.read(&mut buffer) {
            Ok(got) => got,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(Failed::Read(error)),
        };
        read += got as u64;
        if got == 0 {
            capture.end(&mut printed);
        } else {
            capture.read(&buffer[..got], &mut printed);
        }
        out.write_all(printed.out.as_bytes())?;
        if let Some(file) = sanitized.as_mut() {
            file.write_all(printed.sanitized.as_bytes())?;
        }
        printed.out.clear();
        printed.sanitized = String::new();
        if let Some(bar) = progress.as_mut() {
            bar.draw(read, capture.counts().messages);
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
    out.write_all(capture.summary().as_bytes())?;
    Ok(out.flush()?)
}

/// `mcp-provenance check` with the words after it.
fn run_check(args: &[String]) -> ExitCode {
    let (file, sanitize, check) = match CheckCommand::parse(args) {
        Ok(CheckCommand::Help) => {
            print!("{CHECK_USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(CheckCommand::Run {
            file,
            sanitize,
            check,
        }) => (file, sanitize, check),
        Err(why) => return usage_error(" check", &why),
    };
    let mut capture = Capture::new(*check);
    let checked = if file == "-" {
        if sanitize
            .as_deref()
            .is_some_and(|out| is_input(stdin_metadata().as_ref(), out))
        {
            return same_file();
        }
        read_all(io::stdin().lock(), &mut capture, sanitize.as_deref(), None)
    } else {
        match File::open(&file) {
            Ok(input) => {
                let metadata = input.metadata().ok();
                if sanitize
                    .as_deref()
                    .is_some_and(|out| is_input(metadata.as_ref(), out))
                {
                    return same_file();
                }
                let total = metadata.map(|m| m.len());
                read_all(input, &mut capture, sanitize.as_deref(), total)
            }
            Err(error) => {
                eprintln!("mcp-provenance check: cannot read {file}: {}", code(&error));
                return ExitCode::from(2);
            }
        }
    };
    match checked {
        Ok(()) => {}
        Err(Failed::Read(error)) => {
            eprintln!("mcp-provenance check: cannot read {file}: {}", code(&error));
            return ExitCode::from(2);
        }
        Err(Failed::Write(error)) => {
            eprintln!("mcp-provenance check: cannot write: {}", code(&error));
            return ExitCode::from(2);
        }
    }
    if let Some(hint) = capture.hint() {
        eprintln!("mcp-provenance check: {hint}");
    }
    ExitCode::from(capture.exit_code())
}

/// Refuses a `--sanitize` file that is the capture itself ([`SAME_FILE`]):
/// exit 2, nothing opened to write.
fn same_file() -> ExitCode {
    eprintln!("mcp-provenance check: {SAME_FILE}");
    ExitCode::from(2)
}

/// Whether the file at `out`, if there is one yet, is the input of
/// `metadata` (taken from the open input): the same device and inode, so
/// through any path or link. Not known (no metadata, or `out` not there, or
/// not to be read): not the input, and opening `out` says what is wrong.
#[cfg(unix)]
fn is_input(metadata: Option<&Metadata>, out: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (metadata, std::fs::metadata(out)) {
        (Some(input), Ok(out)) => (input.dev(), input.ino()) == (out.dev(), out.ino()),
        _ => false,
    }
}

/// Whether the file at `out` is the input: where devices and inodes are not
/// to be had, never known, so never refused.
#[cfg(not(unix))]
fn is_input(_: Option<&Metadata>, _: &str) -> bool {
    false
}

/// What standard input is (a file redirected into it, a pipe, a terminal),
/// from its descriptor, through a copy of it closed again here.
#[cfg(unix)]
fn stdin_metadata() -> Option<Metadata> {
    use std::os::fd::AsFd;
    let copy = io::stdin().as_fd().try_clone_to_owned().ok()?;
    File::from(copy).metadata().ok()
}

/// What standard input is: not to be had here.
#[cfg(not(unix))]
fn stdin_metadata() -> Option<Metadata> {
    None
}

/// A usage error of `mcp-provenance` (or of its `command`, with a space
/// before it): one line and where to read more; exit 2.
fn usage_error(command: &str, why: &str) -> ExitCode {
    eprintln!("mcp-provenance{command}: {why}\nTry 'mcp-provenance{command} --help'.");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("-v" | "--version") => {
            println!("mcp-provenance {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("check") => run_check(&args[1..]),
        Some("probe") => usage_error(
            "",
            "probe is in the npm command only: npx mcp-provenance probe",
        ),
        Some(other) => usage_error("", &format!("no such command {other}")),
        None => usage_error("", "a command is needed"),
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
