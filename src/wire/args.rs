//! The command line of `check`, read here once for both commands (the
//! native binary, and the npm one through the module), so that they take
//! the same words, print the same help and answer bad words alike.

use super::check::{Check, MAX_LINE_BOUND, MAX_LINE_BYTES};
use super::filter::Filter;
use super::options::FilterOptions;
use crate::policy::{IntentPolicy, Policy};

/// The text of `mcp-provenance --help`, shared by both commands.
pub const USAGE: &str = include_str!("usage/main.txt");

/// The text of `mcp-provenance check --help`, shared by both commands.
pub const CHECK_USAGE: &str = include_str!("usage/check.txt");

/// What both commands print (after `mcp-provenance check: `), and exit 2,
/// when the file `--sanitize` names is the capture itself: the same file
/// through any path, a symbolic or a hard link (or the file standard input
/// was redirected from). They refuse it before opening anything to write,
/// since writing would empty the capture before a line of it was read.
///
/// # Examples
///
/// ```
/// use mcp_provenance::SAME_FILE;
///
/// assert_eq!(
///     format!("mcp-provenance check: {SAME_FILE}"),
///     "mcp-provenance check: --sanitize is the capture itself (writing it would empty it): name another file"
/// );
/// ```
pub const SAME_FILE: &str =
    "--sanitize is the capture itself (writing it would empty it): name another file";

/// What the words after `check` ask for.
///
/// # Examples
///
/// ```
/// use mcp_provenance::CheckCommand;
///
/// let Ok(CheckCommand::Run { file, sanitize, check }) =
///     CheckCommand::parse(&["capture.jsonl", "--format=json", "--strict"])
/// else {
///     panic!("a check to run")
/// };
/// assert_eq!((file.as_str(), sanitize, check.json, check.strict), ("capture.jsonl", None, true, true));
/// assert!(matches!(CheckCommand::parse(&["-h"]), Ok(CheckCommand::Help)));
/// assert_eq!(CheckCommand::parse(&["a", "--frob"]).unwrap_err(), "unknown option --frob");
/// ```
#[derive(Debug)]
// Exhaustive on purpose (src/lib.rs): a command must run each form, and a
// form it does not know of should stop its build, not fall into a `_` arm.
pub enum CheckCommand {
    /// `--help` or `-h`: print [`CHECK_USAGE`].
    Help,
    /// Check `file` (`-`: standard input), writing what goes on to `sanitize` when given.
    Run {
        /// The capture to read.
        file: String,
        /// Where to write each line as it goes on.
        sanitize: Option<String>,
        /// How to check it.
        check: Box<Check>,
    },
}

impl CheckCommand {
    /// Reads the words after `check`. What is wrong comes back as one line
    /// for the user, which the commands print with a hint and exit 2.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<CheckCommand, String> {
        let mut words = args.iter().map(AsRef::as_ref);
        let mut files = Vec::new();
        let (mut json, mut strict, mut only_files) = (false, false, false);
        let (mut field, mut out, mut max_line) = (None, None, MAX_LINE_BYTES);
        let mut policy = Policy::default();
        let mut options = FilterOptions::default();
        while let Some(word) = words.next() {
            if only_files || word == "-" || !word.starts_with('-') {
                files.push(word.to_owned());
                continue;
            }
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value)),
                _ => (word, None),
            };
            let mut value = || match inline {
                Some(value) => Ok(value.to_owned()),
                None => words
                    .next()
                    .map(str::to_owned)
                    .ok_or(format!("{flag} needs a value")),
            };
            let switch = || match inline {
                None => Ok(true),
                Some(_) => Err(format!("{flag} takes no value")),
            };
            match flag {
                "--" => only_files = true,
                "-h" | "--help" => return Ok(CheckCommand::Help),
                "--format" => {
                    json = match value()?.as_str() {
                        "json" => true,
                        "text" => false,
                        _ => return Err("--format is text or json".into()),
                    }
                }
                "--strict" => strict = switch()?,
                "--key" => options.invocation_keys.push(value()?),
                "--ui-key" => options.ui_keys.push(value()?),
                "--field" => field = Some(value()?),
                "--sanitize" => out = Some(value()?),
                "--redact-intent" => {
                    switch()?;
                    policy.user_intent = IntentPolicy::Redact;
                }
                "--max-line-bytes" => {
                    max_line = value()?
                        .parse()
                        .ok()
                        .filter(|bound| (1..=MAX_LINE_BOUND).contains(bound))
                        .ok_or(format!(
                            "--max-line-bytes takes a whole number of bytes, 1 to {MAX_LINE_BOUND}"
                        ))?;
                }
                "--max-intent-bytes" => policy.max_intent_bytes = bytes(flag, &value()?)?,
                "--max-reason-bytes" => policy.max_reason_bytes = bytes(flag, &value()?)?,
                "--max-model-bytes" => policy.max_model_bytes = bytes(flag, &value()?)?,
                "--max-turn-id-bytes" => policy.max_turn_id_bytes = bytes(flag, &value()?)?,
                "--max-envelope-bytes" => policy.max_envelope_bytes = bytes(flag, &value()?)?,
                _ => return Err(format!("unknown option {flag}")),
            }
        }
        let [file] = <[String; 1]>::try_from(files)
            .map_err(|_| "check takes one file (or - for standard input)".to_owned())?;
        // The copy written is sanitized under the policy, the default one
        // included; a policy given is checked either way.
        options.policy = (out.is_some() || policy != Policy::default()).then_some(policy);
        let filter = Filter::new(options).map_err(|error| format!("{error} ({})", error.code()))?;
        let check = Check {
            json,
            strict,
            field,
            sanitize: out.is_some(),
            max_line,
            ..Check::new(filter)
        };
        Ok(CheckCommand::Run {
            file,
            sanitize: out,
            check: Box::new(check),
        })
    }
}

/// A byte limit given on the command line.
fn bytes(flag: &str, text: &str) -> Result<u32, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a whole number of bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The help states the default line bound the code has.
    #[test]
    fn the_help_gives_the_bounds_in_force() {
        assert!(CHECK_USAGE.contains(&format!(
            "(default {MAX_LINE_BYTES}, at most {MAX_LINE_BOUND})"
        )));
    }

    #[test]
    fn bad_words_are_named() {
        let error = |args: &[&str]| CheckCommand::parse(args).unwrap_err();
        assert_eq!(error(&[]), "check takes one file (or - for standard input)");
        assert_eq!(
            error(&["a", "b"]),
            "check takes one file (or - for standard input)"
        );
        assert_eq!(error(&["a", "--format"]), "--format needs a value");
        assert_eq!(error(&["a", "--format", "xml"]), "--format is text or json");
        assert_eq!(error(&["a", "--strict=yes"]), "--strict takes no value");
        assert_eq!(
            error(&["a", "--max-line-bytes", "0"]),
            "--max-line-bytes takes a whole number of bytes, 1 to 1073741824"
        );
        assert_eq!(
            error(&["a", "--max-intent-bytes", "-1"]),
            "--max-intent-bytes takes a whole number of bytes"
        );
        assert!(error(&["a", "--max-intent-bytes", "1"]).ends_with("(invalid-limit)"));
        assert!(error(&["a", "--key", "io.modelcontextprotocol/x"]).ends_with("(reserved-key)"));
        assert!(
            matches!(CheckCommand::parse(&["--", "-h"]), Ok(CheckCommand::Run { file, .. }) if file == "-h")
        );
    }
}
