//! The imports of a Rust file of the crate, read from its source with no
//! parser crate: each path that may name a module of the crate, made
//! absolute. tests/layers.rs holds the files of src/ to the layers with them.
//!
//! A path is `crate::…` (in a `use` or in code), grouped (`use
//! crate::{a, b::c}`), `super::…` or `self::…` (inside an inline module
//! too), and, in a `mod.rs` or lib.rs, a path from a child module (`pub use
//! filter::Filter`). Comments, strings, characters and test-only items
//! (`#[cfg(test)]`, `#[cfg(all(test, …))]`) are not read.

/// The tokens of a file, each with its line.
type Tokens = [(usize, String)];

/// The module a file holds: `wire/filter.rs` is `wire::filter`, `json/mod.rs` is `json`.
pub fn module(file: &str) -> Vec<String> {
    let names = file.trim_end_matches(".rs").split('/');
    let names = names.filter(|name| !["mod", "lib"].contains(name));
    names.map(String::from).collect()
}

/// The tokens of Rust source: words, `::` and single characters, each with
/// its line. Comments, strings and characters are left out.
fn tokens(source: &str) -> Vec<(usize, String)> {
    let s: Vec<char> = source.chars().collect();
    let at = |i: usize| s.get(i).copied().unwrap_or(' ');
    let ident = |c: &&char| c.is_alphanumeric() || **c == '_';
    let past = |from: usize, end: &[char]| {
        let found = (from..s.len()).find(|k| s[*k..].starts_with(end));
        found.map_or(s.len(), |k| k + end.len())
    };
    // The end of the raw string at `i` (`r"…"`, `r#"…"#`), if one starts there.
    let raw = |i: usize| {
        let hashes = s.iter().skip(i + 1).take_while(|c| **c == '#').count();
        let end: Vec<char> = format!("\"{}", "#".repeat(hashes)).chars().collect();
        (at(i) == 'r' && at(i + 1 + hashes) == '"').then(|| past(i + 2 + hashes, &end))
    };
    let (mut tokens, mut line, mut i) = (Vec::new(), 1, 0);
    while i < s.len() {
        let start = i;
        i = match (at(i), at(i + 1), at(i + 2), raw(i)) {
            (.., Some(end)) => end,
            ('b', '"' | '\'', ..) => i + 1,
            ('b', ..) if raw(i + 1).is_some() => i + 1,
            ('/', '/', ..) => past(i, &['\n']),
            ('/', '*', ..) => past(i + 2, &['*', '/']),
            ('"', ..) => {
                let mut end = i + 1;
                while end < s.len() && at(end) != '"' {
                    end += if at(end) == '\\' { 2 } else { 1 };
                }
                end + 1
            }
            ('\'', '\\', ..) => past(i + 3, &['\'']),
            ('\'', _, '\'', _) => i + 3,
            (':', ':', ..) => {
                tokens.push((line, "::".to_owned()));
                i + 2
            }
            (c, ..) => {
                let len = s[i..].iter().take_while(ident).count().max(1);
                if !c.is_whitespace() {
                    tokens.push((line, s[i..i + len].iter().collect()));
                }
                i + len
            }
        };
        let passed = s[start..i.min(s.len())].iter();
        line += passed.filter(|c| **c == '\n').count();
    }
    tokens
}

/// Each path of `file` (`source`, in a crate of `modules`) that may name
/// another module, made absolute (`super::parse::Fault` in wire/scan.rs is
/// `wire::parse::Fault`), with its line.
pub fn paths(source: &str, file: &str, modules: &[Vec<String>]) -> Vec<(usize, Vec<String>)> {
    let tokens = &tokens(source);
    let token = |at: usize| tokens.get(at).map_or("", |t| t.1.as_str());
    let words = |at: usize, words: &[&str]| (0..words.len()).all(|n| token(at + n) == words[n]);
    let own = module(file);
    let directory = file == "lib.rs" || file.ends_with("mod.rs");
    let child = |name: &str| modules.contains(&[own.clone(), vec![name.into()]].concat());
    // The braces open, each with the inline module it opens (`mod apply {`), if any.
    let (mut found, mut braces, mut i) = (Vec::new(), Vec::<Option<String>>::new(), 0);
    while i < tokens.len() {
        let cfg = ["#", "[", "cfg", "("];
        if words(i, &cfg) && (words(i + 4, &["test"]) || words(i + 4, &["all", "(", "test"])) {
            i = end_of_item(tokens, i + 1);
            continue;
        }
        match token(i) {
            "{" => braces.push(words(i.wrapping_sub(2), &["mod"]).then(|| token(i - 1).to_owned())),
            "}" => drop(braces.pop()),
            _ => {}
        }
        let inline: Vec<String> = braces.iter().flatten().cloned().collect();
        let base = match token(i) {
            "crate" => Some(Vec::new()),
            "self" | "super" => Some([own.clone(), inline.clone()].concat()),
            name if directory && inline.is_empty() && child(name) => Some(own.clone()),
            _ => None,
        };
        let starts = token(i + 1) == "::" && !["::", "."].contains(&token(i.wrapping_sub(1)));
        let Some(base) = base.filter(|_| starts) else {
            i += 1;
            continue;
        };
        let mut leaves = Vec::new();
        let end = tree(tokens, i, &[], &mut leaves);
        for leaf in leaves {
            let mut path = base.clone();
            for segment in leaf.iter().skip(usize::from(token(i) == "crate")) {
                match segment.as_str() {
                    "super" => drop(path.pop()),
                    "self" | "*" => {}
                    name => path.push(name.to_owned()),
                }
            }
            found.push((tokens[i].0, path));
        }
        i = end;
    }
    found
}

/// Where the item whose attributes start at `tokens[at]` ends: past its `;`,
/// or past the brace that closes it.
fn end_of_item(tokens: &Tokens, mut at: usize) -> usize {
    let mut nested = 0;
    while let Some((_, token)) = tokens.get(at) {
        at += 1;
        nested += match token.as_str() {
            ";" if nested == 0 => break,
            "}" if nested == 1 => break,
            "(" | "[" | "{" => 1,
            ")" | "]" | "}" => -1,
            _ => 0,
        };
    }
    at
}

/// The paths that the use tree (or path in code) at `tokens[at]` names,
/// each after `prefix`, into `out`; where it ends.
fn tree(tokens: &Tokens, mut at: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    while let Some((_, token)) = tokens.get(at) {
        if token == "{" {
            while tokens.get(at).is_some_and(|t| t.1 != "}") {
                at = tree(tokens, at + 1, &path, out);
            }
            return at + 1;
        }
        if !(token == "*" || token.chars().all(|c| c.is_alphanumeric() || c == '_')) {
            break;
        }
        path.push(token.clone());
        at += 1;
        if tokens.get(at).is_none_or(|t| t.1 != "::") {
            break;
        }
        at += 1;
    }
    if path.len() > prefix.len() {
        out.push(path);
    }
    at
}
