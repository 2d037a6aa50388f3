//! No slow input: the filter's work grows with a body no faster than the
//! body does. Each dimension of a body an attacker controls (members,
//! depth, batch, string escapes, ids, correlation ids, unknown envelope
//! fields) is grown 4×, and the work is counted, not timed: the
//! instructions the filter runs, as Valgrind's cachegrind counts them, the
//! same on every run and every machine. A quadratic step shows as 16×.
//!
//! The way back too: each dimension of an answer a server controls (how many
//! pieces it comes in, how large an event is, how many events a stream
//! holds, how many requests a body forwarded) is grown 4×.
//!
//! The test runs this very test binary under Valgrind, with the body to
//! filter in `GROWTH_BODY` (and the options in `GROWTH_OPTIONS`), where
//! [`filter_the_body_in_growth_body`] filters it, and, with an answer in
//! `GROWTH_ANSWER`, takes it through the exchange; run alone, that test does nothing.
#![cfg(all(feature = "value", not(target_arch = "wasm32")))]

use std::path::PathBuf;
use std::process::Command;

use mcp_provenance::{Filter, FilterContext, Gateway};

const KEY: &str = "io.modelcontextprotocol/aiInvocation";

/// A growth of at most this over a 4× larger input passes (4× plus room for
/// a sort's log factor and the fixed costs the difference does not cancel).
const MOST: f64 = 5.0;

/// Filters the body in `GROWTH_BODY` with the options in `GROWTH_OPTIONS`,
/// when they are set (by [`growth`], under Valgrind).
#[test]
fn filter_the_body_in_growth_body() {
    let Some(path) = std::env::var_os("GROWTH_BODY") else {
        return;
    };
    let body = std::fs::read(path).expect("the body");
    let options = std::env::var("GROWTH_OPTIONS").unwrap_or_else(|_| "null".into());
    let options: serde_json::Value = serde_json::from_str(&options).expect("options");
    if let Some(answer) = std::env::var_os("GROWTH_ANSWER") {
        let answer: serde_json::Value =
            serde_json::from_slice(&std::fs::read(answer).expect("the answer")).expect("JSON");
        let gateway = Gateway::from_value(&options).expect("a gateway");
        let json = [("content-type", "application/json")];
        let mut exchange = gateway.begin("POST", "/mcp", &json);
        drop(exchange.admit(&body, None, None));
        let media = answer["type"].as_str().expect("a media type");
        let mut over = exchange.head(200, &[("content-type", media)]).over;
        for piece in answer["pieces"].as_array().expect("pieces") {
            let piece = piece.as_str().expect("text").as_bytes();
            over = over || exchange.piece(piece).over;
        }
        assert!(over || exchange.end().over);
        return;
    }
    let filter = Filter::from_value(&options).expect("a filter");
    let outcome = filter.filter(&body, &FilterContext::default());
    // The lines too: what a gateway writes of every body.
    assert!(!outcome.lines().is_empty() || outcome.refusal.is_some());
}

/// The instructions run filtering `body`, less those of a run with an empty one.
fn work(name: &str, body: &str, options: &str) -> f64 {
    counted(name, body, options, None) - counted(name, "{}", options, None)
}

/// The instructions run filtering `body` and taking `answer` (its media type
/// and pieces, as JSON) back, when given.
fn counted(name: &str, body: &str, options: &str, answer: Option<&str>) -> f64 {
    let count = |body: &str| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let path = dir.join(format!("growth-{name}.json"));
        std::fs::write(&path, body).expect("writes");
        let output = Command::new("valgrind")
            .args([
                "--tool=cachegrind",
                "--cache-sim=no",
                "--cachegrind-out-file=/dev/null",
            ])
            .arg(std::env::current_exe().expect("this test"))
            .args([
                "--exact",
                "filter_the_body_in_growth_body",
                "--test-threads=1",
            ])
            .env("GROWTH_BODY", &path)
            .env("GROWTH_OPTIONS", options)
            .envs(answer.map(|answer| {
                let path = dir.join(format!("growth-{name}-answer.json"));
                std::fs::write(&path, answer).expect("writes");
                ("GROWTH_ANSWER", path)
            }))
            .output()
            .expect("Valgrind runs: install it (`make setup-debian`, Debian's valgrind)");
        let report = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{report}");
        report
            .lines()
            .find_map(|line| line.split_once("I   refs:"))
            .map(|(_, count)| count.trim().replace(',', ""))
            .and_then(|count| count.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no instruction count in {report}"))
    };
    count(body)
}

/// Asserts that filtering `make(4 * n)` costs at most [`MOST`] times
/// filtering `make(n)`.
fn grows_linearly(name: &str, options: &str, n: usize, make: impl Fn(usize) -> String) {
    let small = work(name, &make(n), options);
    let large = work(name, &make(4 * n), options);
    let ratio = large / small;
    println!("{name}: {small} -> {large} instructions, {ratio:.2}x");
    assert!(
        ratio <= MOST,
        "{name}: 4x the input took {ratio:.2}x the work"
    );
}

/// A `tools/call` request with `meta` as its `_meta` members and `arguments`.
fn call(id: &str, meta: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"q","arguments":{arguments},"_meta":{{{meta}}}}}}}"#
    )
}

fn repeat(n: usize, item: impl Fn(usize) -> String) -> String {
    (0..n).map(item).collect::<Vec<_>>().join(",")
}

const REDACT: &str = r#"{"policy":{"userIntent":"redact"}}"#;

#[test]
fn members_of_meta() {
    grows_linearly("members", "null", 4_000, |n| {
        call("1", &repeat(n, |i| format!(r#""m{i}":{i}"#)), "{}")
    });
}

#[test]
fn members_of_an_envelope_kept_under_a_policy() {
    let options = r#"{"policy":{"unknownFields":"keep","maxEnvelopeBytes":1048576}}"#;
    grows_linearly("unknown", options, 2_000, |n| {
        let fields = repeat(n, |i| format!(r#""x{i}":"v{i}""#));
        call("1", &format!(r#""{KEY}":{{"turnId":"t",{fields}}}"#), "{}")
    });
}

#[test]
fn unknown_fields_dropped_to_fit() {
    let options = r#"{"policy":{"unknownFields":"keep"}}"#;
    grows_linearly("fit", options, 2_000, |n| {
        let fields = repeat(n, |i| format!(r#""x{i}":"v{i}""#));
        call("1", &format!(r#""{KEY}":{{"turnId":"t",{fields}}}"#), "{}")
    });
}

#[test]
fn depth() {
    let options = r#"{"maxDepth":4096}"#;
    grows_linearly("depth", options, 800, |n| {
        let deep = format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let ui = format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        call(
            "1",
            &format!(r#""io.modelcontextprotocol/ui":{{"x":{ui}}}"#),
            &deep,
        )
    });
}

#[test]
fn batch() {
    let options = r#"{"maxBatch":100000,"policy":{"userIntent":"redact"}}"#;
    grows_linearly("batch", options, 1_000, |n| {
        let message = |i: usize| {
            let envelope = format!(r#""{KEY}":{{"turnId":"t{i}","userIntent":{{"text":"i{i}"}}}}"#);
            call(&i.to_string(), &envelope, "{}")
        };
        format!("[{}]", repeat(n, message))
    });
}

#[test]
fn string_escapes() {
    grows_linearly("escapes", REDACT, 4_000, |n| {
        let text = "\\u00e9\\n".repeat(n);
        let envelope = format!(r#""{KEY}":{{"turnId":"{text}","userIntent":{{"text":"{text}"}}}}"#);
        call("1", &envelope, &format!(r#"{{"s":"{text}"}}"#))
    });
}

#[test]
fn ids() {
    grows_linearly("ids", "null", 4_000, |n| {
        let id = format!(r#""{}""#, "\\u0031".repeat(n));
        // A message refused (a duplicate `method`) is answered with its id.
        format!(
            r#"[{},{{"id":{id},"method":"a","method":"b"}}]"#,
            call(&id, "", "{}")
        )
    });
}

#[test]
fn correlation_ids() {
    grows_linearly("correlation", "null", 2_000, |n| {
        let codex = repeat(n, |i| format!(r#""k{i}":"v{i}""#));
        let meta = format!(
            r#""x-codex-turn-metadata":{{"turn_id":"t","session_id":"s",{codex}}},"vscode.conversationId":"{}""#,
            "c".repeat(n)
        );
        call("1", &meta, "{}")
    });
}

/// Asserts that taking `make(4 * n)` back costs at most [`MOST`] times
/// taking `make(n)` back, each an answer (its pieces, as the JSON of the
/// spec `{"type", "pieces"}`) to the request `request(n)` (or `4 * n`).
fn way_back_grows_linearly(
    name: &str,
    n: usize,
    request: impl Fn(usize) -> String,
    media: &str,
    make: impl Fn(usize) -> Vec<String>,
) {
    let options = r#"{"maxBatch":100000,"maxAnswerBytes":67108864}"#;
    let work = |n: usize| {
        let spec =
            |pieces: Vec<String>| serde_json::json!({"type": media, "pieces": pieces}).to_string();
        counted(name, &request(n), options, Some(&spec(make(n))))
            - counted(name, &request(n), options, Some(&spec(Vec::new())))
    };
    let (small, large) = (work(n), work(4 * n));
    let ratio = large / small;
    println!("{name}: {small} -> {large} instructions, {ratio:.2}x");
    assert!(
        ratio <= MOST,
        "{name}: 4x the answer took {ratio:.2}x the work"
    );
}

/// One request carrying a `turnId`, and the result answering it with the
/// server's whole envelope (`padding` bytes of text in it).
fn one_call(_: usize) -> String {
    call("1", &format!(r#""{KEY}":{{"turnId":"t-1"}}"#), "{}")
}

fn careless(id: usize, padding: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"text":"{}","_meta":{{"{KEY}":{{"turnId":"x","userIntent":{{"text":"leak"}}}}}}}}}}"#,
        "p".repeat(padding)
    )
}

#[test]
fn way_back_pieces_of_one_event() {
    // One event, 64 KiB then 256 KiB, in pieces of 1 KiB: the pieces grow 4x.
    way_back_grows_linearly("back-pieces", 64, one_call, "text/event-stream", |n| {
        let event = format!("data: {}\n\n", careless(1, n * 1024));
        event
            .as_bytes()
            .chunks(1024)
            .map(|piece| String::from_utf8_lossy(piece).into_owned())
            .collect()
    });
}

#[test]
fn way_back_event_size() {
    way_back_grows_linearly("back-event", 16_000, one_call, "text/event-stream", |n| {
        vec![format!("data: {}\n\n", careless(1, n))]
    });
}

#[test]
fn way_back_events_per_stream() {
    way_back_grows_linearly("back-events", 500, one_call, "text/event-stream", |n| {
        vec![
            (0..n)
                .map(|_| format!("data: {}\n\n", careless(1, 10)))
                .collect::<String>(),
        ]
    });
}

#[test]
fn way_back_requests_per_body() {
    let request = |n: usize| {
        let message = |i: usize| {
            call(
                &i.to_string(),
                &format!(r#""{KEY}":{{"turnId":"t{i}"}}"#),
                "{}",
            )
        };
        format!("[{}]", repeat(n, message))
    };
    // Every result of a JSON answer, and of as many events, echoed against every request.
    way_back_grows_linearly(
        "back-requests-json",
        500,
        request,
        "application/json",
        |n| vec![format!("[{}]", repeat(n, |i| careless(i, 10)))],
    );
    way_back_grows_linearly(
        "back-requests-events",
        500,
        request,
        "text/event-stream",
        |n| {
            vec![
                (0..n)
                    .map(|i| format!("data: {}\n\n", careless(i, 10)))
                    .collect::<String>(),
            ]
        },
    );
}
