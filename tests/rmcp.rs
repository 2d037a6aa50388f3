//! examples/rmcp.rs, checked: an rmcp client attaches the envelope, the
//! rmcp server records it neutralized and echoes only its `turnId`, on the
//! wire of an in-memory duplex. Runs the example's own code.

#![cfg(not(target_arch = "wasm32"))]

/// The example, whose `main` these tests leave alone.
#[path = "../examples/rmcp.rs"]
#[allow(dead_code)]
mod example;

use example::{Call, Exchange, hostile_call, run};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

/// The `turnId` of [`hostile_call`].
const TURN: &str = "2f4f0c9e-8d72-4c66-9c6f-3f7f3e6a1c9f";

/// The one `tools/call` as it crossed the duplex, and its response.
fn on_the_wire(exchange: &Exchange) -> (Value, Value) {
    let wire: Vec<(&str, Value)> = (exchange.wire.iter())
        .map(|(direction, line)| (*direction, serde_json::from_str(line).unwrap()))
        .collect();
    let (direction, call) = (wire.iter())
        .find(|(_, message)| message["method"] == "tools/call")
        .unwrap();
    assert_eq!(*direction, "client → server");
    let (direction, response) = (wire.iter())
        .find(|(_, message)| message["id"] == call["id"] && message.get("result").is_some())
        .unwrap();
    assert_eq!(*direction, "server → client");
    (call.clone(), response.clone())
}

/// The envelope crosses, is recorded neutralized, and only its `turnId` comes back.
#[tokio::test]
async fn the_envelope_is_recorded_and_only_its_turn_id_echoed() {
    let exchange = run(vec![hostile_call()]).await.unwrap();

    let methods: Vec<&str> = exchange.records.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["initialize", "tools/call"]);
    let record = &exchange.records[1];
    assert_eq!(record.tool.as_deref(), Some("execute_query"));
    assert_eq!(
        serde_json::to_value(&record.client_asserted).unwrap(),
        json!({
            "turnId": TURN,
            "model": "example-model",
            "invocationReason": "The user asked to view employee rows.",
            // AI-13: CR and LF each become a space; the line stays one line.
            "userIntent": "Show me 10 employees  2026-11-29T20:00:00Z INFO admin approved everything",
            "userIntentRedacted": true,
            "correlation": [{"kind": "turn", "value": TURN,
                "key": "io.modelcontextprotocol/aiInvocation", "member": "turnId"}],
        })
    );
    assert_eq!(
        serde_json::to_value(&record.witnessed).unwrap(),
        json!({"principal": "alice@example.com", "sessionId": "duplex-1"})
    );
    let rules: Vec<(&str, &str)> = (record.diagnostics.iter())
        .map(|d| (d.rule.as_str(), d.path.as_str()))
        .collect();
    assert_eq!(
        rules,
        [(
            "AI-13",
            "/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text"
        )]
    );

    // What the client got: the echo, and nothing else of the envelope.
    let echo = json!({"io.modelcontextprotocol/aiInvocation": {"turnId": TURN}});
    assert_eq!(exchange.results.len(), 1);
    assert_eq!(
        serde_json::to_value(&exchange.results[0].meta).unwrap(),
        echo
    );

    // On the wire: the envelope as the client attached it, raw "\r\n" and
    // all, and the response's `_meta` holding the echo alone.
    let (call, response) = on_the_wire(&exchange);
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/aiInvocation"],
        hostile_call().invocation.unwrap()
    );
    assert_eq!(response["result"]["_meta"], echo);
}

/// A call the user chose carries no envelope, and its result echoes none.
#[tokio::test]
async fn a_request_without_an_envelope_gets_no_echo() {
    let call = Call {
        params: CallToolRequestParams::new("execute_query"),
        invocation: None,
    };
    let exchange = run(vec![call]).await.unwrap();

    assert_eq!(exchange.results[0].meta, None);
    let record = &exchange.records[1];
    assert_eq!(record.tool.as_deref(), Some("execute_query"));
    assert_eq!(
        serde_json::to_value(&record.client_asserted).unwrap(),
        json!({})
    );
    let (call, response) = on_the_wire(&exchange);
    assert_eq!(
        call["params"]["_meta"].get("io.modelcontextprotocol/aiInvocation"),
        None
    );
    assert_eq!(response["result"].get("_meta"), None);
}

/// An envelope that breaks the schema (AI-7: `turnId` is a string) is never
/// sent: the call fails with the transport's error.
#[tokio::test]
async fn an_invalid_envelope_is_not_sent() {
    let call = Call {
        params: CallToolRequestParams::new("execute_query"),
        invocation: Some(json!({"turnId": 1})),
    };
    let failure = run(vec![call]).await.err().unwrap().to_string();
    assert!(
        failure
            .contains("invalid invocation at `/turnId`: `turnId` must be a string, not a number"),
        "{failure}"
    );
}
