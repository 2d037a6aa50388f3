//! Runs every vector of `conformance/*.json` through the Rust API and
//! compares the whole output with the vector's `expect`: natively, and
//! inside wasm under wasm-bindgen-test-runner (`make test-wasm`), where the
//! same tests read the same vectors, compiled in.

mod common;
use common::js_class;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use std::collections::{BTreeMap, HashSet};

use mcp_provenance::__bindings::json::Slot;
use mcp_provenance::__bindings::validate as validating;
use mcp_provenance::__bindings::wire::{Answer, Exchange, Piece, Start, Step};
use mcp_provenance::Gateway;
use mcp_provenance::{
    AuditContext, Error, Filter, FilterContext, Initiator, KeyOptions, Level, LiftOptions, Outcome,
    Policy, Rule, ValidateOptions, Verdict, attach_invocation, audit_record, clear_initiator,
    echo_turn_id, is_reserved_meta_key, is_valid_meta_key, lift_legacy_arguments, sanitize,
    stamp_initiator,
};
use serde_json::{Value, json};

/// The rules no vector can show here: AI-16 is for viewers, tested in the
/// browser; MSG-3 is about lone UTF-16 surrogates, which no Rust string
/// holds (its vectors are in UTF16_ONLY).
const NOT_VECTOR_RULES: [Rule; 2] = [Rule::Ai16, Rule::Msg3];
/// The vectors whose input holds a lone surrogate: JSON text may escape one
/// (`"\ud800"`), JavaScript reads it, serde_json refuses it.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
const UTF16_ONLY: &str = "utf16.json";
/// The middlewares' metrics (a middleware with its metrics, through which
/// exchanges go): the core has none; js-tests/http-metrics.test.mjs and
/// python/tests/test_metrics.py run them.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
const MIDDLEWARES_ONLY: &str = "metrics.json";
const MIN_VECTORS: usize = 120;

/// Each vector file but UTF16_ONLY and MIDDLEWARES_ONLY, by name, with its
/// text compiled in: wasm has no files to read. A native test holds the list
/// to the folder.
macro_rules! vector_files {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../conformance/", $name)))),*]
    };
}
const VECTOR_FILES: &[(&str, &str)] = vector_files![
    "attach.json",
    "audit-arguments.json",
    "audit.json",
    "bounds.json",
    "correlation.json",
    "echo.json",
    "exchange.json",
    "filter.json",
    "initiator.json",
    "keys.json",
    "legacy.json",
    "options.json",
    "sanitize.json",
    "text.json",
    "validate-envelope.json",
    "validate-messages.json",
    "wire-echo.json",
];

struct Vector {
    file: String,
    value: Value,
}

impl Vector {
    fn field(&self, name: &str) -> &Value {
        self.value.get(name).unwrap_or(&Value::Null)
    }

    fn id(&self) -> &str {
        self.field("id").as_str().unwrap_or("<no id>")
    }
}

fn load() -> Vec<Vector> {
    let mut vectors = Vec::new();
    for (file, text) in VECTOR_FILES {
        let parsed: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let Value::Array(items) = parsed else {
            panic!("{file}: a vector file is a JSON array")
        };
        vectors.extend(items.into_iter().map(|value| Vector {
            file: (*file).to_owned(),
            value,
        }));
    }
    vectors
}

/// The compiled-in files are every vector file of conformance/ (natively:
/// wasm has no folder to list).
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn every_vector_file_is_compiled_in() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("conformance/ exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .filter_map(|path| Some(path.file_name()?.to_str()?.to_owned()))
        .filter(|name| name != UTF16_ONLY && name != MIDDLEWARES_ONLY)
        .collect();
    files.sort();
    let listed: Vec<&str> = VECTOR_FILES.iter().map(|(name, _)| *name).collect();
    assert_eq!(listed, files, "VECTOR_FILES lists conformance/*.json");
}

fn error(error: Error) -> Value {
    json!({"error": {"code": error.code().as_str(), "name": js_class(&error)}})
}

fn output(result: Result<Value, Error>) -> Value {
    result.unwrap_or_else(error)
}

fn keys(options: &Value) -> Result<KeyOptions, Error> {
    KeyOptions::from_value(options)
}

/// What the API gives for one vector, in the JS shape.
fn run(vector: &Vector) -> Value {
    let input = vector.field("input").clone();
    let options = vector.field("options");
    let op = vector.field("op").as_str().unwrap_or_default();
    match op {
        "validate" => {
            // The JS options hold the key options and `request`; an error
            // reading them is, in JS, the report's one KEY-3 diagnostic.
            // JS's `validate` reads its keys unchecked and reports each
            // problem with them by their JS names: the door's, as the
            // bindings run it (Rust's names its fields).
            let mut key_options = options.clone();
            if let Some(members) = key_options.as_object_mut() {
                members.remove("request");
            }
            let keys = match validating::keys(Slot::of(&key_options)) {
                Ok(keys) => keys,
                Err(e) => {
                    return json!({"valid": false, "diagnostics": [{
                        "code": e.code().as_str(), "severity": "error", "rule": "KEY-3",
                        "path": "", "message": e.to_string()}]});
                }
            };
            let options = ValidateOptions {
                keys,
                request: options.get("request"),
            };
            let report = validating::validate(&input, &options);
            serde_json::to_value(report).expect("a report serializes")
        }
        "sanitize" => output(
            Policy::from_value(options)
                .and_then(|policy| sanitize(input, &policy))
                .map(|out| serde_json::to_value(out).expect("serializes")),
        ),
        "attachInvocation" => {
            output(keys(options).and_then(|keys| {
                attach_invocation(input, vector.field("invocation").clone(), &keys)
            }))
        }
        "stampInitiator" => output(keys(options).and_then(|keys| {
            let initiator = match vector.field("initiator") {
                Value::Null => Initiator::default(),
                Value::String(name) => name.parse()?,
                other => panic!("{}: initiator must be a string, not {other}", vector.id()),
            };
            stamp_initiator(input, initiator, &keys)
        })),
        "clearInitiator" => output(keys(options).and_then(|keys| clear_initiator(input, &keys))),
        "echoTurnId" => output(
            keys(options).and_then(|keys| echo_turn_id(vector.field("request"), input, &keys)),
        ),
        "auditRecord" => output(
            AuditContext::from_value(options)
                .and_then(|context| audit_record(&input, &context))
                .map(|record| serde_json::to_value(record).expect("serializes")),
        ),
        "liftLegacyArguments" => output(
            LiftOptions::from_value(options)
                .and_then(|options| lift_legacy_arguments(input, &options)),
        ),
        "filter" => output(Filter::from_value(options).map(|filter| {
            let body = input
                .as_str()
                .expect("a filter vector's input is a body's text");
            let context = FilterContext::from_value(vector.field("context")).expect("a context");
            let outcome = filter.filter(body.as_bytes(), &context);
            same_without_records(&filter, body.as_bytes(), &context, &outcome);
            let mut out = match &outcome.verdict {
                Verdict::Forward { body, replies } => json!({"forward": body, "replies": replies}),
                Verdict::Reject { status, body } => json!({"reject": body, "status": status}),
                other => panic!("a verdict no vector knows: {other:?}"),
            };
            out["messages"] = serde_json::to_value(&outcome.messages).expect("serializes");
            out["lines"] = json!(outcome.lines());
            out
        })),
        "filterEcho" => output(Filter::from_value(options).map(|filter| {
            let body = input
                .as_str()
                .expect("an echo vector's input is a body's text");
            let answer = vector
                .field("answer")
                .as_str()
                .expect("and its answer a text");
            let outcome = filter.filter(body.as_bytes(), &FilterContext::default());
            same_without_records(
                &filter,
                body.as_bytes(),
                &FilterContext::default(),
                &outcome,
            );
            let turns = outcome
                .messages
                .iter()
                .filter_map(|seen| seen.turn.as_deref());
            json!({"answer": filter.echo(answer.as_bytes(), turns)})
        })),
        "exchange" => {
            let exchanges = input
                .as_array()
                .expect("an exchange vector's input is a list");
            // Each way a middleware ends an answer, through a gateway of its
            // own, the records made as the body is admitted or deferred: they agree.
            let [(pieces, made), (finished, deferred)] = [false, true].map(|finish| {
                let mut records = Vec::new();
                let out = output(Gateway::from_value(options).map(|gateway| {
                    Value::Array(
                        exchanges
                            .iter()
                            .map(|given| exchange(&gateway, given, finish, &mut records))
                            .collect(),
                    )
                }));
                (out, records)
            });
            assert_eq!(made, deferred, "{}: records made later differ", vector.id());
            if pieces == finished {
                pieces
            } else {
                json!({"pieces then end": pieces, "finish": finished})
            }
        }
        "isValidMetaKey" => json!(is_valid_meta_key(
            input.as_str().expect("a key vector's input is a string")
        )),
        "isReservedMetaKey" => json!(is_reserved_meta_key(
            input.as_str().expect("a key vector's input is a string")
        )),
        other => panic!("{}: unknown op {other:?}", vector.id()),
    }
}

/// Header pairs as a vector gives them: `[[name, value], ...]`.
fn pairs(value: &Value) -> Vec<(String, String)> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|pair| {
            (
                pair[0].as_str().expect("a name").to_owned(),
                pair[1].as_str().expect("a value").to_owned(),
            )
        })
        .collect()
}

/// One exchange of an `exchange` vector through `gateway`, as a middleware
/// runs it (the answer's last piece given with its end, when `finish`):
/// what the app was handed, and what the client got; with its outcome
/// account, parsed from its line, when the vector gives the outcome's
/// `ms`, `pid` and `host` (a middleware with an audit sink keeps it). The
/// body's records go to `records`: made as it is admitted, or, when
/// `finish`, deferred and made after.
fn exchange(gateway: &Gateway, given: &Value, finish: bool, records: &mut Vec<Value>) -> Value {
    let method = given["method"].as_str().unwrap_or("POST");
    let path = given["path"].as_str().unwrap_or("/mcp");
    let mut exchange = gateway.begin(method, path, &pairs(&given["headers"]));
    let worker = &given["outcome"];
    if worker.is_object() {
        exchange.keep_outcome();
    }
    if finish {
        exchange.defer_records();
    }
    let mut out = exchanged(&mut exchange, given, finish, records);
    if worker.is_object() {
        let pid = worker["pid"].as_u64().map(|pid| pid as u32);
        let outcome = exchange
            .outcome(
                worker["ms"].as_f64().expect("ms"),
                pid,
                worker["host"].as_str(),
            )
            .expect("kept");
        out["outcome"] = serde_json::from_str(&outcome.json()).expect("a JSON line");
    }
    out
}

/// What the app was handed, and what the client got, through `exchange`;
/// the body's records to `records`.
fn exchanged(
    exchange: &mut Exchange,
    given: &Value,
    finish: bool,
    records: &mut Vec<Value>,
) -> Value {
    let own = |answer: Answer| {
        let headers: Vec<Value> = answer
            .headers()
            .into_iter()
            .map(|(name, value)| json!([name, value]))
            .collect();
        json!({"status": answer.status, "headers": headers, "body": answer.body})
    };
    let mut out = json!({});
    if exchange.start() == Start::Read {
        if exchange.declared_too_large() {
            let mut out = own(exchange.too_large());
            out["refused"] = json!(exchange.refused());
            return out;
        }
        let body = given["body"].as_str().expect("a POST has a body");
        let outcome = exchange.admit(body.as_bytes(), None, None);
        let recorded = exchange.accounts(body.as_bytes());
        assert_eq!(
            recorded.is_some(),
            finish,
            "records are made later when deferred"
        );
        if let Some(recorded) = &recorded {
            agree_but_records(&outcome, recorded);
        }
        let made = recorded.as_ref().unwrap_or(&outcome).messages.iter();
        records.extend(made.map(|seen| serde_json::to_value(&seen.record).expect("serializes")));
        if let Verdict::Reject { status, body } = &outcome.verdict {
            let mut out = own(Answer {
                status: *status,
                body: body.clone(),
                close: false,
            });
            out["refused"] = json!(exchange.refused());
            return out;
        }
        let Verdict::Forward {
            body: forwarded, ..
        } = &outcome.verdict
        else {
            unreachable!()
        };
        out["forwarded"] = json!(forwarded);
        if let Some(code) = given["auditFails"].as_str() {
            let mut out = own(exchange.audit_failed(code));
            out["refused"] = json!(exchange.refused());
            return out;
        }
    } else {
        out["forwarded"] = json!(exchange.start() == Start::Watch);
    }
    let answer = &given["answer"];
    let mut headers = pairs(&answer["headers"]);
    let mut status = answer["status"].as_u64().unwrap_or(200) as u16;
    let mut body: Vec<u8> = Vec::new();
    let mut apply =
        |step: Step, piece: &[u8], headers: &mut Vec<(String, String)>, status: &mut u16| {
            if let Some(head) = step.head {
                *status = head.status;
                *headers = head.edited(headers);
            }
            for piece_out in step.pieces {
                match piece_out {
                    Piece::Given(range) => body.extend_from_slice(&piece[range]),
                    Piece::Made(bytes) => body.extend_from_slice(&bytes),
                }
            }
            step.over
        };
    if exchange.start() == Start::Pass {
        body = answer["pieces"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|p| p.as_str().unwrap_or_default().bytes())
            .collect();
    } else {
        let mut over = apply(
            exchange.head(status, &headers.clone()),
            &[],
            &mut headers,
            &mut status,
        );
        let pieces: Vec<&[u8]> = answer["pieces"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|piece| piece.as_str().expect("a piece is text").as_bytes())
            .collect();
        let last = pieces.len().checked_sub(1).filter(|_| finish);
        for (at, piece) in pieces.into_iter().enumerate() {
            if !over {
                let step = if Some(at) == last {
                    exchange.finish(piece)
                } else {
                    exchange.piece(piece)
                };
                over = apply(step, piece, &mut headers, &mut status);
            }
        }
        if !over && last.is_none() {
            apply(exchange.end(), &[], &mut headers, &mut status);
        }
    }
    let headers: Vec<Value> = headers
        .into_iter()
        .map(|(name, value)| json!([name, value]))
        .collect();
    out["status"] = json!(status);
    out["headers"] = Value::Array(headers);
    out["body"] = json!(String::from_utf8_lossy(&body));
    out["refused"] = json!(exchange.refused());
    out["session"] = json!(exchange.session());
    out
}

#[test]
fn every_vector_gives_exactly_its_expected_output() {
    let vectors = load();
    let mut failures = Vec::new();
    for vector in &vectors {
        let got = run(vector);
        if &got != vector.field("expect") {
            failures.push(format!(
                "{} ({}): {}\n  expected: {}\n  got:      {}",
                vector.id(),
                vector.file,
                vector.field("description").as_str().unwrap_or_default(),
                vector.field("expect"),
                got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

#[test]
fn vectors_are_well_formed_and_cover_every_rule() {
    let vectors = load();
    assert!(
        vectors.len() >= MIN_VECTORS,
        "only {} vectors; at least {MIN_VECTORS} are required",
        vectors.len()
    );
    let mut ids = HashSet::new();
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for vector in &vectors {
        assert!(
            ids.insert(vector.id().to_owned()),
            "duplicate vector id {}",
            vector.id()
        );
        for field in ["id", "description", "op"] {
            assert!(
                vector.field(field).is_string(),
                "{}: `{field}` must be a string",
                vector.id()
            );
        }
        assert!(
            vector.value.get("expect").is_some(),
            "{}: no `expect`",
            vector.id()
        );
        let rules = vector
            .field("rules")
            .as_array()
            .unwrap_or_else(|| panic!("{}: no `rules`", vector.id()));
        assert!(!rules.is_empty(), "{}: cites no rule", vector.id());
        for rule in rules {
            let rule: Rule = serde_json::from_value(rule.clone())
                .unwrap_or_else(|_| panic!("{}: {rule} is not a rule ID", vector.id()));
            *per_rule.entry(rule.as_str()).or_default() += 1;
        }
    }
    let uncited: Vec<&str> = Rule::ALL
        .iter()
        .filter(|rule| !NOT_VECTOR_RULES.contains(rule) && !per_rule.contains_key(rule.as_str()))
        .map(|rule| rule.as_str())
        .collect();
    assert!(uncited.is_empty(), "rules no vector cites: {uncited:?}");
    println!("{} vectors; per rule: {per_rule:?}", vectors.len());
}

/// Every diagnostic a vector expects is as serious as its rule's level:
/// no warning cites a MUST, and an error cites a MUST unless it is a schema
/// or option error (MSG-2's summary takes the severity of what it sums up).
#[test]
fn severities_follow_the_levels_of_the_rules() {
    const SCHEMA_OR_OPTION: [&str; 9] = [
        "invalid-type",
        "missing-field",
        "not-a-message",
        "invalid-key",
        "reserved-key",
        "conflicting-keys",
        "invalid-limit",
        "invalid-option",
        "unknown-option",
    ];
    fn walk(value: &Value, found: &mut Vec<(String, String, String)>) {
        match value {
            Value::Object(object) => {
                if let (
                    Some(Value::String(code)),
                    Some(Value::String(severity)),
                    Some(Value::String(rule)),
                ) = (
                    object.get("code"),
                    object.get("severity"),
                    object.get("rule"),
                ) {
                    found.push((code.clone(), severity.clone(), rule.clone()));
                }
                object.values().for_each(|item| walk(item, found));
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    for vector in load() {
        walk(vector.field("expect"), &mut found);
    }
    assert!(
        found.len() > 100,
        "only {} diagnostics in the vectors",
        found.len()
    );
    for (code, severity, rule) in &found {
        let rule: Rule = serde_json::from_value(json!(rule)).expect("a rule");
        if rule == Rule::Msg2 {
            continue;
        }
        match (severity.as_str(), rule.level()) {
            ("warning", Level::Must) => panic!("a warning {code} cites {rule}, a MUST"),
            ("error", Level::Should | Level::May) => assert!(
                SCHEMA_OR_OPTION.contains(&code.as_str()),
                "an error {code} cites {rule}, a {}",
                rule.level()
            ),
            _ => {}
        }
    }
}

/// docs/rules.md lists each rule under the level the core gives it.
#[test]
fn the_levels_in_the_docs_are_the_cores() {
    let docs = include_str!("../docs/rules.md");
    let listed: String = docs
        .split("\n\n")
        .filter(|block| block.starts_with("- **MUST**"))
        .collect();
    for level in Level::ALL {
        let line = listed
            .split("- **")
            .find(|line| line.starts_with(&format!("{level}**:")))
            .unwrap_or_else(|| panic!("no line for {level}"));
        let ids: Vec<&str> = line
            .split(':')
            .nth(1)
            .expect("a list")
            .split(',')
            .map(str::trim)
            .collect();
        let expected: Vec<&str> = Rule::ALL
            .iter()
            .filter(|rule| rule.level() == *level)
            .map(|rule| rule.as_str())
            .collect();
        assert_eq!(ids, expected, "{level}");
    }
}

/// The filter without records agrees with `recorded`, the outcome with them,
/// on all but the records: the verdict, each message's id, turn, validity,
/// changes, and findings (a record's, where one was made).
fn same_without_records(filter: &Filter, body: &[u8], context: &FilterContext, recorded: &Outcome) {
    agree_but_records(&filter.filter_without_records(body, context), recorded);
}

/// `forwarded`, an outcome made without records, agrees with `recorded` on
/// all but them.
fn agree_but_records(forwarded: &Outcome, recorded: &Outcome) {
    assert_eq!(forwarded.verdict, recorded.verdict);
    assert_eq!(forwarded.messages.len(), recorded.messages.len());
    for (without, with) in forwarded.messages.iter().zip(&recorded.messages) {
        assert!(without.record.is_none());
        let findings = with
            .record
            .as_ref()
            .map_or(&with.diagnostics, |record| &record.diagnostics);
        assert_eq!(&without.diagnostics, findings);
        assert_eq!(
            (
                &without.id_text,
                &without.turn,
                without.valid,
                &without.changes,
                without.refused
            ),
            (
                &with.id_text,
                &with.turn,
                with.valid,
                &with.changes,
                with.refused
            )
        );
    }
}
