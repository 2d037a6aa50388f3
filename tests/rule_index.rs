//! docs/rules.md is a rule index: under each rule, one line names the code
//! that decides it and the conformance vector files that show it:
//!
//! ```text
//!   - Decided by [src/a.rs](../src/a.rs) `f()`, `Type::g()`; [src/b.rs](../src/b.rs) `NAME` · vectors: [x.json](../conformance/x.json), …
//! ```
//!
//! (`vectors: none (why)` for a rule no vector can show). These tests hold
//! those lines to the tree, so that the index cannot rot: the rules the docs
//! state are the core's, each has one line, what a line names exists, and
//! the vector files it names are exactly those that cite its rule.
// Native only: it reads the tree from the file system.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use mcp_provenance::Rule;
use serde_json::Value;

/// How an index line begins, after its indentation.
const INDEX: &str = "- Decided by ";
/// What parts its code from its vectors.
const VECTORS: &str = " · vectors: ";
/// What stands for the vectors of a rule no vector can show.
const NONE: &str = "none";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// Fails with every problem found, one a line.
#[track_caller]
fn assert_none(problems: &[String], what: &str) {
    assert!(
        problems.is_empty(),
        "{what}: {} problem(s)\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// One rule's line of the index, as written.
struct Line {
    rule: String,
    /// 1-based, in docs/rules.md.
    number: usize,
    /// Each file named, with the symbols named in it.
    code: Vec<(String, Vec<String>)>,
    /// The vector files named; `None` for `none`.
    vectors: Option<Vec<String>>,
    /// Every relative link of the line, as written (`../…`).
    links: Vec<String>,
}

/// What docs/rules.md states: its rules (by anchor) and its index lines,
/// and what is wrong with their form.
struct Docs {
    /// Rule IDs in the order of their anchors.
    anchors: Vec<String>,
    lines: Vec<Line>,
    problems: Vec<String>,
}

/// `[text](href)` at the start of `text`: the text, the href, and what follows.
fn link(text: &str) -> Option<(&str, &str, &str)> {
    let rest = text.strip_prefix('[')?;
    let (shown, rest) = rest.split_once("](")?;
    let (href, rest) = rest.split_once(')')?;
    Some((shown, href, rest))
}

/// Every `](../…)` target of `text`.
fn relative_links(text: &str) -> Vec<String> {
    text.match_indices("](../")
        .filter_map(|(at, _)| {
            let target = text.get(at + 2..)?;
            Some(target.get(..target.find(')')?)?.to_owned())
        })
        .collect()
}

/// Parses one index line (`rest`: after [`INDEX`]) of rule `rule`.
fn parse_line(rule: &str, number: usize, rest: &str, problems: &mut Vec<String>) -> Option<Line> {
    let mut wrong = |what: String| problems.push(format!("{rule}: line {number}: {what}"));
    let Some((code_part, vectors_part)) = rest.split_once(VECTORS) else {
        wrong(format!("an index line needs `{}`", VECTORS.trim()));
        return None;
    };
    let mut code = Vec::new();
    for group in code_part.split("; ") {
        let Some((file, href, symbols)) = link(group) else {
            wrong(format!(
                "`{group}` is not `[path](../path) `symbol`, …`: code is named by a link to its file"
            ));
            continue;
        };
        if href != format!("../{file}") {
            wrong(format!("the link to {file} goes to {href}, not ../{file}"));
        }
        let mut names = Vec::new();
        for symbol in symbols.strip_prefix(' ').unwrap_or_default().split(", ") {
            match symbol.strip_prefix('`').and_then(|s| s.strip_suffix('`')) {
                Some(name) if !name.is_empty() && !name.contains('`') => {
                    names.push(name.to_owned())
                }
                _ => wrong(format!(
                    "after {file}, `{symbol}` is not a symbol in backticks (`name()`, `Type::name()`, `Name`)"
                )),
            }
        }
        code.push((file.to_owned(), names));
    }
    let vectors = if vectors_part == NONE || vectors_part.starts_with(&format!("{NONE} (")) {
        None
    } else {
        let mut files = Vec::new();
        for item in vectors_part.split(", ") {
            match link(item) {
                Some((file, href, "")) => {
                    if href != format!("../conformance/{file}") {
                        wrong(format!(
                            "the link to vector file {file} goes to {href}, not ../conformance/{file}"
                        ));
                    }
                    files.push(file.to_owned());
                }
                _ => wrong(format!(
                    "`{item}` is not `[file.json](../conformance/file.json)`"
                )),
            }
        }
        let mut sorted = files.clone();
        sorted.sort();
        sorted.dedup();
        if sorted != files {
            wrong(format!(
                "the vector files are to be named once each, in order: {}",
                sorted.join(", ")
            ));
        }
        Some(files)
    };
    Some(Line {
        rule: rule.to_owned(),
        number,
        code,
        vectors,
        links: relative_links(rest),
    })
}

fn docs() -> Docs {
    let text = read("docs/rules.md");
    let mut docs = Docs {
        anchors: Vec::new(),
        lines: Vec::new(),
        problems: Vec::new(),
    };
    // The rule whose text a line is in: from its anchor to the next anchor
    // or heading.
    let mut current: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.starts_with('#') {
            current = None;
        } else if let Some(rest) = line.strip_prefix("- <a id=\"") {
            let parsed = rest
                .split_once("\"></a>**")
                .and_then(|(id, rest)| Some((id, rest.split_once("**")?.0)));
            match parsed {
                Some((id, rule)) if id == rule.to_ascii_lowercase() => {
                    docs.anchors.push(rule.to_owned());
                    current = Some(rule.to_owned());
                }
                _ => {
                    docs.problems.push(format!(
                        "line {number}: a rule is stated as `- <a id=\"ai-5\"></a>**AI-5** …`, its id the rule's in lower case"
                    ));
                    current = None;
                }
            }
        } else if let Some(rest) = line.trim_start().strip_prefix(INDEX) {
            match &current {
                Some(rule) => {
                    if let Some(parsed) = parse_line(rule, number, rest, &mut docs.problems) {
                        docs.lines.push(parsed);
                    }
                }
                None => docs
                    .problems
                    .push(format!("line {number}: an index line under no rule")),
            }
        }
    }
    // An anchor anywhere else would be a rule the index does not see.
    let stated = text.matches("\"></a>**").count();
    if stated != docs.anchors.len() {
        docs.problems.push(format!(
            "{stated} rule anchors in docs/rules.md, {} of them at the start of a rule's item `- <a id=…`",
            docs.anchors.len()
        ));
    }
    docs
}

/// The rule IDs of `pub enum Rule` in src/diagnostics.rs, read from its text.
fn core_rules() -> Vec<String> {
    let source = read("src/diagnostics.rs");
    let body = source
        .split_once("pub enum Rule {")
        .map(|(_, body)| body)
        .expect("src/diagnostics.rs declares `pub enum Rule {`");
    body.lines()
        .take_while(|line| line.trim() != "}")
        .filter_map(|line| line.split_once("=> \"")?.1.split_once('"'))
        .map(|(id, _)| id.to_owned())
        .collect()
}

/// Each vector file of conformance/ with the rules its vectors cite: in a
/// vector's `rules`, or as the `rule` of a diagnostic or change anywhere in
/// its `expect`.
fn citations() -> BTreeMap<String, BTreeSet<String>> {
    fn walk(value: &Value, found: &mut BTreeSet<String>) {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(rule)) = object.get("rule") {
                    found.insert(rule.clone());
                }
                object.values().for_each(|item| walk(item, found));
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, found)),
            _ => {}
        }
    }
    let dir = root().join("conformance");
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(&dir).expect("conformance/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|ext| ext != "json") {
            continue;
        }
        let name = path
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let vectors: Vec<Value> = serde_json::from_str(&without_lone_surrogates(&text))
            .unwrap_or_else(|e| panic!("{name}: an array: {e}"));
        let mut cited = BTreeSet::new();
        for vector in &vectors {
            if let Some(Value::Array(rules)) = vector.get("rules") {
                cited.extend(rules.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            if let Some(expect) = vector.get("expect") {
                walk(expect, &mut cited);
            }
        }
        out.insert(name, cited);
    }
    out
}

/// JSON text with each escaped UTF-16 surrogate (`\ud800`) written as
/// `\ufffd`, so that serde_json, which refuses a lone one, reads a file
/// such as utf16.json (MSG-3); only the rules it cites are read from it.
fn without_lone_surrogates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c != '\\' {
            continue;
        }
        match chars.next() {
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let surrogate = u32::from_str_radix(&hex, 16)
                    .is_ok_and(|unit| (0xD800..=0xDFFF).contains(&unit));
                out.push('u');
                out.push_str(if surrogate { "fffd" } else { &hex });
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn is_ident(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !text.starts_with(|c: char| c.is_ascii_digit())
}

/// `line` with a visibility (`pub`, `pub(crate)`, …) taken off its start.
fn without_visibility(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("pub") else {
        return line;
    };
    if let Some(rest) = rest.strip_prefix(' ') {
        return rest.trim_start();
    }
    match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
        Some((_, rest)) => rest.trim_start(),
        None => line,
    }
}

/// Whether `text` starts with `keyword`, a space and `name`, the name whole.
fn declares(text: &str, keyword: &str, name: &str) -> bool {
    text.strip_prefix(keyword)
        .and_then(|rest| rest.strip_prefix(' '))
        .and_then(|rest| rest.strip_prefix(name))
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// Whether `line` (indentation taken off) defines the function `name`.
fn defines_fn(line: &str, name: &str) -> bool {
    let mut text = without_visibility(line.trim_start());
    loop {
        let before = text;
        for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" "] {
            text = text.strip_prefix(qualifier).unwrap_or(text);
        }
        if before == text {
            break;
        }
    }
    declares(text, "fn", name)
}

/// Whether `line` (at the start of a line) defines the item `name`.
fn defines_item(line: &str, name: &str) -> bool {
    let text = without_visibility(line);
    [
        "struct", "enum", "trait", "type", "union", "const", "static", "mod",
    ]
    .iter()
    .any(|keyword| declares(text, keyword, name))
}

/// The type an `impl` header is for: `impl<'a> Cleaned<'a, '_>` and
/// `impl From<X> for Report` are for `Cleaned` and `Report`.
fn impl_self_type(header: &str) -> Option<&str> {
    let mut rest = header.strip_prefix("impl")?;
    if rest.starts_with('<') {
        let mut depth = 0;
        let end = rest.char_indices().find_map(|(at, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(at + 1)
        })?;
        rest = rest.get(end..)?;
    }
    let rest = rest
        .rsplit_once(" for ")
        .map_or(rest, |(_, after)| after)
        .trim();
    let path = rest
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .next()?;
    path.rsplit("::").next()
}

/// Whether `source` (a Rust file, as rustfmt writes it) defines `symbol`:
/// `name()` a free function, `Type::name()` a method in an `impl` block of
/// `Type`, `Name` a free type, trait, const, static or module, `Type::NAME`
/// an associated const. Free items are those at the start of a line.
fn defines(source: &str, symbol: &str) -> Result<(), String> {
    let (path, is_fn) = match symbol.strip_suffix("()") {
        Some(path) => (path, true),
        None => (symbol, false),
    };
    let (owner, name) = match path.split_once("::") {
        Some((owner, name)) => (Some(owner), name),
        None => (None, path),
    };
    if !is_ident(name) || owner.is_some_and(|owner| !is_ident(owner)) {
        return Err(format!(
            "`{symbol}` is not `name()`, `Type::name()`, `Name` or `Type::NAME`"
        ));
    }
    let lines: Vec<&str> = source.lines().collect();
    let found = match owner {
        None => lines.iter().any(|line| {
            !line.starts_with(char::is_whitespace)
                && if is_fn {
                    defines_fn(line, name)
                } else {
                    defines_item(line, name)
                }
        }),
        Some(owner) => lines.iter().enumerate().any(|(at, line)| {
            line.starts_with("impl")
                && impl_self_type(line) == Some(owner)
                && lines
                    .iter()
                    .skip(at + 1)
                    .take_while(|line| **line != "}")
                    .any(|line| {
                        if is_fn {
                            defines_fn(line, name)
                        } else {
                            declares(without_visibility(line.trim_start()), "const", name)
                        }
                    })
        }),
    };
    if found {
        Ok(())
    } else {
        let what = match (owner, is_fn) {
            (None, true) => format!("no `fn {name}` at the start of a line"),
            (None, false) => format!(
                "no `struct`/`enum`/`trait`/`type`/`const`/`static`/`mod` `{name}` at the start of a line"
            ),
            (Some(owner), true) => format!("no `fn {name}` in an `impl … {owner}` block"),
            (Some(owner), false) => format!("no `const {name}` in an `impl … {owner}` block"),
        };
        Err(what)
    }
}

/// The rules docs/rules.md states (its anchors) are those of the core's
/// `Rule` enum, read from the text of src/diagnostics.rs. (The levels the
/// docs list are held to the core by tests/conformance.rs.)
#[test]
fn the_rules_the_docs_state_are_the_cores() {
    let core = core_rules();
    let all: Vec<&str> = Rule::ALL.iter().map(|rule| rule.as_str()).collect();
    assert_eq!(
        core, all,
        "the IDs read from the text of `pub enum Rule` in src/diagnostics.rs are not Rule::ALL: the reading is out of date"
    );
    let docs = docs();
    let stated: BTreeSet<&str> = docs.anchors.iter().map(String::as_str).collect();
    let core: BTreeSet<&str> = core.iter().map(String::as_str).collect();
    let mut problems = Vec::new();
    for rule in core.difference(&stated) {
        problems.push(format!("{rule}: in src/diagnostics.rs `Rule`, but docs/rules.md has no anchor `<a id=\"{}\"></a>**{rule}**`", rule.to_ascii_lowercase()));
    }
    for rule in stated.difference(&core) {
        problems.push(format!(
            "{rule}: stated in docs/rules.md, but not in src/diagnostics.rs `Rule`"
        ));
    }
    let mut seen = BTreeSet::new();
    for rule in &docs.anchors {
        if !seen.insert(rule) {
            problems.push(format!("{rule}: stated twice in docs/rules.md"));
        }
    }
    assert_none(&problems, "docs/rules.md and the core's rules");
}

/// Every rule docs/rules.md states has exactly one index line, of the form
/// the index uses.
#[test]
fn every_rule_has_one_index_line() {
    let docs = docs();
    let mut problems = docs.problems.clone();
    for rule in &docs.anchors {
        let lines: Vec<usize> = docs
            .lines
            .iter()
            .filter(|line| &line.rule == rule)
            .map(|line| line.number)
            .collect();
        match lines.as_slice() {
            [_] => {}
            [] if problems.iter().any(|p| p.starts_with(&format!("{rule}: "))) => {}
            [] => problems.push(format!(
                "{rule}: no index line (`  {INDEX}[src/….rs](../src/….rs) `symbol()`{VECTORS}…`) under its text"
            )),
            more => problems.push(format!("{rule}: {} index lines (lines {more:?}); one is due", more.len())),
        }
    }
    for line in &docs.lines {
        if line.code.is_empty() {
            problems.push(format!(
                "{}: line {}: names no code",
                line.rule, line.number
            ));
        }
    }
    assert_none(&problems, "the form of the rule index in docs/rules.md");
}

/// Every file an index line names exists, and defines every symbol named
/// in it; every other relative link of the line leads to a file too.
#[test]
fn the_code_the_index_names_exists() {
    let docs = docs();
    let mut problems = Vec::new();
    for line in &docs.lines {
        let rule = &line.rule;
        for (file, symbols) in &line.code {
            let path: PathBuf = root().join(file);
            if !file.ends_with(".rs") {
                problems.push(format!("{rule}: names {file}, which is not a Rust file"));
                continue;
            }
            let Ok(source) = fs::read_to_string(&path) else {
                problems.push(format!("{rule}: names {file}, which does not exist"));
                continue;
            };
            if symbols.is_empty() {
                problems.push(format!("{rule}: names {file} but nothing in it"));
            }
            for symbol in symbols {
                if let Err(why) = defines(&source, symbol) {
                    problems.push(format!(
                        "{rule}: names `{symbol}` in {file}, which has {why}"
                    ));
                }
            }
        }
        // Links to the code and the vectors are checked above and below.
        let checked = |target: &str| {
            line.code
                .iter()
                .any(|(file, _)| target == format!("../{file}"))
                || target.starts_with("../conformance/")
        };
        for target in line.links.iter().filter(|target| !checked(target)) {
            let relative = target.strip_prefix("../").unwrap_or(target);
            let relative = relative.split('#').next().unwrap_or_default();
            if !root().join(relative).is_file() {
                problems.push(format!("{rule}: links to {target}, which is no file"));
            }
        }
    }
    assert_none(
        &problems,
        "the code named by the rule index in docs/rules.md",
    );
}

/// The vector files an index line names are exactly those whose vectors
/// cite its rule: each named file exists and cites it, and each file that
/// cites it is named. `none` only where no file cites the rule.
#[test]
fn the_index_names_exactly_the_vector_files_that_cite_each_rule() {
    let docs = docs();
    let citations = citations();
    let known: BTreeSet<&str> = Rule::ALL.iter().map(|rule| rule.as_str()).collect();
    let mut problems = Vec::new();
    for (file, rules) in &citations {
        for rule in rules.iter().filter(|rule| !known.contains(rule.as_str())) {
            problems.push(format!("{file}: cites {rule}, which is no rule"));
        }
    }
    for line in &docs.lines {
        let rule = &line.rule;
        let citing: BTreeSet<&str> = citations
            .iter()
            .filter(|(_, rules)| rules.contains(rule))
            .map(|(file, _)| file.as_str())
            .collect();
        let named: BTreeSet<&str> = line.vectors.iter().flatten().map(String::as_str).collect();
        for file in &named {
            match citations.get(*file) {
                None => problems.push(format!(
                    "{rule}: names vector file {file}, which is not in conformance/"
                )),
                Some(rules) if !rules.contains(rule) => problems.push(format!(
                    "{rule}: names vector file {file}, but no vector in it cites {rule} (in `rules` or as the `rule` of an expected diagnostic or change)"
                )),
                Some(_) => {}
            }
        }
        for file in citing.difference(&named) {
            let said = if line.vectors.is_none() {
                "its index line says `vectors: none`"
            } else {
                "its index line does not name it"
            };
            problems.push(format!("{rule}: {file} cites {rule}, but {said}"));
        }
        if line.vectors.as_ref().is_some_and(Vec::is_empty) {
            problems.push(format!(
                "{rule}: names no vector file; say `vectors: none (why)`"
            ));
        }
    }
    assert_none(
        &problems,
        "the vectors named by the rule index in docs/rules.md",
    );
}
