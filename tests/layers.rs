//! The layers of the core (src/), stated once, and the code held to them: a
//! module imports only from the layers below its own (the files of a
//! directory module also from each other), and no files import each other
//! in a circle. src/lib.rs shows the same map, line for line.
//!
//! An import is a path into another file of src/ (tests/imports/ reads them):
//! `use crate::x::…` or a `crate::x::` path in code, grouped, `super::` or
//! `self::`, and, in a `mod.rs` or lib.rs, a path from a child module (`pub
//! use filter::Filter`): a directory module depends on the children it
//! re-exports, so they must not import it back. Test-only items are not
//! read: a test may use anything. The bindings (binding/, python/) are
//! crates of their own that depend on the core, and are not read here.
#![cfg(not(target_arch = "wasm32"))]

mod imports;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use imports::{module, paths};

/// The layers, lowest first: the modules of each, then what it holds.
const LAYERS: &[&str] = &[
    "diagnostics, text        the vocabulary of results; AI-13/AI-14 on one string",
    "error, json              the one error type; JSON values as read, borrowed",
    "options, schema          options read by their Rust or JS names; the one table of a message",
    "keys                     `_meta` key names and the two configurable keys (KEY-1..3)",
    "path                     JSON Pointers to the places of the table",
    "view, edit               a message read through the table; what a call changes",
    "message                  what a call needs a message to be",
    "correlation, echo, initiator, invocation, legacy  the rules that read views and make edits",
    "policy                   what sanitize keeps, and which ids a record reads",
    "sanitize                 an envelope made safe under a policy (AI-8, AI-12..15)",
    "validate                 every rule's findings on a message",
    "audit                    the audit record of a request",
    "wire                     the filter: bytes in, the rules run, bytes out",
    "tower                    the middleware for tower's HTTP stack, over the exchange",
    "bindings                 the one door for the workspace's bindings, not the API",
    "lib                      the crate root: the modules, and the public API",
];

/// Each file of src/ (relative to it), with the files it imports, each with
/// the line that first names it.
type Graph = BTreeMap<String, BTreeMap<String, usize>>;

/// The core's sources.
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The modules a layer names.
fn modules_of(layer: &str) -> Vec<&str> {
    layer.split("  ").next().unwrap_or("").split(", ").collect()
}

/// The top module of a file, and the index of its layer in `LAYERS`.
fn layer(file: &str) -> (String, Option<usize>) {
    let top = module(file).into_iter().next().unwrap_or("lib".into());
    let holds = |layer: &&str| modules_of(layer).contains(&top.as_str());
    let at = LAYERS.iter().position(holds);
    (top, at)
}

/// The imports of every .rs file of src/ but those of src/bin/.
fn graph() -> Graph {
    let (src, mut files, mut dirs) = (Path::new(SRC), Vec::new(), vec![SRC.into()]);
    while let Some(dir) = dirs.pop() {
        let entries = fs::read_dir(dir).expect("a folder of src/");
        for path in entries.map(|entry| entry.expect("a file").path()) {
            if path.is_dir() && path != src.join("bin") {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let name = path.strip_prefix(src).expect("in src/").to_string_lossy();
                files.push(name.replace('\\', "/"));
            }
        }
    }
    let modules: Vec<Vec<String>> = files.iter().map(|file| module(file)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let imports = graph.entry(file.clone()).or_default();
        let source = fs::read_to_string(src.join(file)).expect("readable");
        for (line, path) in paths(&source, file, &modules) {
            // The file a path lands in: the deepest module it names.
            let named = files
                .iter()
                .zip(&modules)
                .filter(|(_, m)| path.starts_with(m));
            let (to, _) = named.max_by_key(|(_, m)| m.len()).expect("the crate root");
            if to != file {
                imports.entry(to.clone()).or_insert(line);
            }
        }
    }
    graph
}

#[test]
fn every_file_of_src_is_in_a_layer() {
    let graph = graph();
    // A reader that finds nothing passes everything: it must find what src/ holds.
    let imports: usize = graph.values().map(BTreeMap::len).sum();
    let read = format!("{} files of src/ and {imports} imports", graph.len());
    let enough = graph.len() >= 40 && imports >= 200;
    assert!(enough, "only {read}: the reader is broken");
    for (from, to) in [
        ("sanitize/mod.rs", "message.rs"), // `crate::message::message(view)?`
        ("path.rs", "schema.rs"),          // `use crate::schema::{self, Key, Place}`
        ("sanitize/fit.rs", "sanitize/mod.rs"), // `use super::{Cleaned, Fate}`
        ("wire/mod.rs", "wire/filter.rs"), // `pub use filter::Filter`
        ("lib.rs", "audit.rs"),            // `pub use audit::audit_record`
    ] {
        let found = graph[from].contains_key(to);
        assert!(found, "{read}, but not src/{from} -> src/{to}");
    }
    let to_do = "add it to LAYERS (tests/layers.rs) and to the map in src/lib.rs, in the lowest layer above all it imports";
    for file in graph.keys() {
        let (module, layer) = layer(file);
        assert!(
            layer.is_some(),
            "src/{file}: `{module}` is in no layer; {to_do}"
        );
    }
    for module in LAYERS.iter().flat_map(|layer| modules_of(layer)) {
        let held = graph.keys().any(|file| layer(file).0 == module);
        assert!(held, "LAYERS names `{module}`, which src/ does not hold");
    }
}

#[test]
fn no_module_imports_from_its_own_layer_or_above() {
    let mut wrong = Vec::new();
    for (file, imports) in &graph() {
        for (to, line) in imports {
            let [(module, Some(from)), (other, Some(into))] = [layer(file), layer(to)] else {
                continue;
            };
            if module != other && into >= from {
                let [from, into] = [from, into]
                    .map(|at| format!("layer {} ({})", at + 1, modules_of(LAYERS[at]).join(", ")));
                wrong.push(format!("src/{file}:{line} imports src/{to}: `{module}` is in {from}, `{other}` in {into}"));
            }
        }
    }
    let wrong = wrong.join("\n");
    assert!(
        wrong.is_empty(),
        "a module imports only from the layers below its own (LAYERS, lowest first):\n{wrong}"
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    /// The circles found depth first from the last file of `open` (the files on the way to it).
    fn circles<'g>(
        graph: &'g Graph,
        open: &mut Vec<&'g str>,
        seen: &mut BTreeSet<&'g str>,
    ) -> Vec<String> {
        let (file, mut found) = (open.last().copied().unwrap_or_default(), Vec::new());
        let first = open.iter().position(|f| *f == file);
        if let Some(at) = first.filter(|at| at + 1 < open.len()) {
            let mut circle = String::new();
            for hop in open[at..].windows(2) {
                circle += &format!("src/{}:{} -> ", hop[0], graph[hop[0]][hop[1]]);
            }
            found.push(format!("{circle}src/{file}"));
        } else if seen.insert(file) {
            for to in graph[file].keys() {
                open.push(to);
                found.extend(circles(graph, open, seen));
                open.pop();
            }
        }
        found
    }
    let (graph, mut seen, mut found) = (graph(), BTreeSet::new(), Vec::new());
    for file in graph.keys() {
        found.extend(circles(&graph, &mut vec![file.as_str()], &mut seen));
    }
    // The shortest first: the one to break is most likely among them.
    found.sort_by_key(|circle| (circle.matches(" -> ").count(), circle.clone()));
    let count = found.len();
    let shown = found.into_iter().take(5).collect::<Vec<_>>().join("\n");
    assert!(
        count == 0,
        "{count} circles of files that import each other (file:line of each import), the shortest:\n{shown}"
    );
}

#[test]
fn src_lib_rs_shows_these_layers() {
    let lib = fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("src/lib.rs");
    let map: String = LAYERS
        .iter()
        .map(|layer| format!("//   {layer}\n"))
        .collect();
    let shown = lib.contains(&format!("\n//\n{map}//\n"));
    assert!(
        shown,
        "src/lib.rs must show the layers as LAYERS states them, between two `//` lines:\n{map}"
    );
}
