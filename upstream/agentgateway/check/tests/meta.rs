//! On rmcp 3.1.2, the version agentgateway 75b4e6c locks: where `_meta` is
//! lost on the way to an ExtMcp processor (as agentgateway's handler does it
//! at that commit), that keep-meta.patch's logic keeps it, and that the
//! processor core in src/lib.rs, behind that logic, redacts, refuses,
//! records and echoes as upstream/agentgateway/README.md says; and that the
//! same logic serves the methods PR 2995 adds to the request phase.

use agentgateway_meta_check::{Decision, check_request, check_response};
use mcp_provenance::{Filter, FilterContext, FilterOptions, IntentPolicy, Policy};
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, Request, RequestMetaObject,
    RequestParamsMeta,
};
use serde_json::{Value, json};

const INTENT: &str = "show me the salaries";

fn client_meta() -> Value {
    json!({
        "io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "userIntent": {"text": INTENT}},
        "com.example/ticket": "T-7"
    })
}

/// A `tools/call` as agentgateway's session handler holds it: parsed by rmcp.
fn client_call() -> ClientJsonRpcMessage {
    serde_json::from_value(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "query", "arguments": {"q": 1}, "_meta": client_meta()}
    }))
    .unwrap()
}

fn call_of(message: &mut ClientJsonRpcMessage) -> &mut CallToolRequest {
    let ClientJsonRpcMessage::Request(request) = message else {
        panic!("a request")
    };
    let ClientRequest::CallToolRequest(call) = &mut request.request else {
        panic!("tools/call")
    };
    call
}

/// What goes upstream: the message as rmcp serializes it.
fn forwarded(message: &ClientJsonRpcMessage) -> Value {
    serde_json::to_value(message).unwrap()["params"].clone()
}

// ---- keep-meta.patch, handler.rs: the two helpers as the patch has them ----

fn take_request_meta<M, P: RequestParamsMeta>(
    request: &mut Request<M, P>,
) -> Option<RequestMetaObject> {
    let extension = request.extensions.remove::<RequestMetaObject>();
    match (request.params.meta_mut().take(), extension) {
        (Some(mut meta), Some(extension)) => {
            meta.0.0.extend(extension.0.0);
            Some(meta)
        }
        (meta, extension) => meta.or(extension),
    }
}

fn restore_request_meta<M, P>(request: &mut Request<M, P>, meta: Option<RequestMetaObject>) {
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
}

/// The patched `maybe_run_guardrails_call_request`, the gRPC round trip
/// replaced by `processor` (params bytes in; `Some(bytes)` for `mutated`,
/// `None` for `Pass`).
fn patched<M, P>(request: &mut Request<M, P>, processor: impl FnOnce(&[u8]) -> Option<Vec<u8>>)
where
    P: serde::Serialize + serde::de::DeserializeOwned + RequestParamsMeta,
{
    let meta = take_request_meta(request);
    *request.params.meta_mut() = meta;
    let params = serde_json::to_vec(&request.params).unwrap();
    let meta = request.params.meta_mut().take();
    let meta = match processor(&params) {
        Some(mutated) => {
            let mut p: P = serde_json::from_slice(&mutated).unwrap();
            let returned = p.meta_mut().take();
            request.params = p;
            returned.or(meta)
        }
        None => meta,
    };
    restore_request_meta(request, meta);
}

#[test]
fn at_the_commit_the_processor_gets_params_without_meta() {
    // handler.rs:691 `serde_json::to_vec(&*params)`, params = `&mut ctr.params`.
    let mut message = client_call();
    let sent = serde_json::to_value(&call_of(&mut message).params).unwrap();
    assert_eq!(sent, json!({"name": "query", "arguments": {"q": 1}}));
    // The `_meta` is still in the request's extensions and goes upstream.
    assert_eq!(forwarded(&message)["_meta"], client_meta());
}

#[test]
fn at_the_commit_a_returned_meta_loses_to_the_clients() {
    // handler.rs:705 `*params = p`: rmcp's serializer merges `params.meta`
    // under the extension's `_meta`, the extension winning on every key.
    let mut message = client_call();
    call_of(&mut message).params = serde_json::from_value(json!({
        "name": "query", "arguments": {"q": 1},
        "_meta": {"io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "userIntent": {"redacted": true}}}
    }))
    .unwrap();
    assert_eq!(forwarded(&message)["_meta"], client_meta());
}

#[test]
fn patched_the_processor_sees_meta_and_a_pass_changes_nothing() {
    let mut message = client_call();
    let mut seen = Value::Null;
    patched(call_of(&mut message), |params| {
        seen = serde_json::from_slice(params).unwrap();
        None
    });
    assert_eq!(
        seen,
        json!({"name": "query", "arguments": {"q": 1}, "_meta": client_meta()})
    );
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        serde_json::to_value(client_call()).unwrap()
    );
}

#[test]
fn patched_a_returned_meta_is_what_goes_upstream() {
    let mut message = client_call();
    patched(call_of(&mut message), |_| {
        Some(br#"{"name":"query","arguments":{"q":1},"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"redacted":true}}}}"#.to_vec())
    });
    assert_eq!(
        forwarded(&message),
        json!({"name": "query", "arguments": {"q": 1}, "_meta": {
            "io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "userIntent": {"redacted": true}}}})
    );
}

#[test]
fn patched_a_mutation_without_meta_keeps_the_requests() {
    let mut message = client_call();
    patched(call_of(&mut message), |_| {
        Some(br#"{"name":"query","arguments":{"r":2}}"#.to_vec())
    });
    assert_eq!(
        forwarded(&message),
        json!({"name": "query", "arguments": {"r": 2}, "_meta": client_meta()})
    );
}

/// PR 2995 (its merge ref, 3bc921ad) runs the request phase for five more
/// methods, each through `authorize_with_ctx`; keep-meta-pr2995.patch hands
/// their requests to the same logic. On rmcp 3.1.2 it keeps their `_meta` for
/// the processor and puts the processor's on the wire, as for `tools/call`.
#[test]
fn patched_the_methods_pr_2995_adds_keep_and_replace_meta_alike() {
    let redacted = json!({"io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "userIntent": {"redacted": true}}});
    for (method, params) in [
        ("resources/subscribe", json!({"uri": "file:///orders"})),
        ("resources/unsubscribe", json!({"uri": "file:///orders"})),
        ("tasks/get", json!({"taskId": "task-1"})),
        (
            "tasks/update",
            json!({"taskId": "task-1", "inputResponses": {"confirm": {"action": "accept"}}}),
        ),
        ("tasks/cancel", json!({"taskId": "task-1"})),
    ] {
        let mut with_meta = params.clone();
        with_meta["_meta"] = client_meta();
        let mut message: ClientJsonRpcMessage = serde_json::from_value(
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": with_meta}),
        )
        .unwrap();
        let mut seen = Value::Null;
        let processor = |sent: &[u8]| {
            seen = serde_json::from_slice(sent).unwrap();
            let mut returned = seen.clone();
            returned["_meta"] = redacted.clone();
            Some(serde_json::to_vec(&returned).unwrap())
        };
        let ClientJsonRpcMessage::Request(request) = &mut message else {
            panic!("{method}: a request")
        };
        match &mut request.request {
            ClientRequest::SubscribeRequest(r) => patched(r, processor),
            ClientRequest::UnsubscribeRequest(r) => patched(r, processor),
            ClientRequest::GetTaskRequest(r) => patched(r, processor),
            ClientRequest::UpdateTaskRequest(r) => patched(r, processor),
            ClientRequest::CancelTaskRequest(r) => patched(r, processor),
            other => panic!("{method}: parsed as {other:?}"),
        }
        assert_eq!(seen, with_meta, "{method}");
        let mut upstream = params.clone();
        upstream["_meta"] = redacted.clone();
        assert_eq!(forwarded(&message), upstream, "{method}");
    }
}

fn redacting() -> Filter {
    Filter::new(FilterOptions {
        policy: Some(Policy {
            user_intent: IntentPolicy::Redact,
            ..Policy::default()
        }),
        ..FilterOptions::default()
    })
    .unwrap()
}

#[test]
fn the_processor_redacts_and_records_behind_the_patch() {
    let filter = redacting();
    let context = FilterContext {
        principal: Some("alice".into()),
        ..FilterContext::default()
    };
    let mut records = Vec::new();
    let mut message = client_call();
    patched(call_of(&mut message), |params| {
        let decision = check_request(&filter, "tools/call", Some(params), &context, |record| {
            records.push(serde_json::to_value(record).unwrap());
            Ok(())
        });
        let Decision::Mutated(params) = decision else {
            panic!("{decision:?}")
        };
        Some(params)
    });
    let upstream = forwarded(&message);
    assert_eq!(
        upstream["_meta"]["io.modelcontextprotocol/aiInvocation"],
        json!({"turnId": "t-1", "userIntent": {"redacted": true}})
    );
    assert_eq!(upstream["_meta"]["com.example/ticket"], "T-7");
    assert_eq!(upstream["arguments"], json!({"q": 1}));
    assert!(!upstream.to_string().contains(INTENT));
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["clientAsserted"]["turnId"], "t-1");
    assert_eq!(records[0]["clientAsserted"]["userIntentRedacted"], true);
    assert_eq!(records[0]["witnessed"], json!({"principal": "alice"}));
    assert_eq!(records[0]["tool"], "query");
}

#[test]
fn a_clean_envelope_passes_untouched() {
    let filter = Filter::new(FilterOptions::default()).unwrap();
    let params =
        br#"{"name":"query","_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-2"}}}"#;
    let decision = check_request(
        &filter,
        "tools/call",
        Some(params),
        &FilterContext::default(),
        |_| Ok(()),
    );
    assert_eq!(decision, Decision::Pass);
}

#[test]
fn a_bare_intent_is_refused_without_its_text() {
    let params = br#"{"name":"query","_meta":{"userIntent":{"text":"show me the salaries"}}}"#;
    let decision = check_request(
        &redacting(),
        "tools/call",
        Some(params),
        &FilterContext::default(),
        |_| Ok(()),
    );
    let Decision::Reject { reason, data } = &decision else {
        panic!("{decision:?}")
    };
    assert_eq!(
        reason,
        "a bare _meta.userIntent, which a policy that redacts intents cannot reach"
    );
    assert_eq!(
        data.as_deref(),
        Some(&br#"{"code":"bare-user-intent"}"#[..])
    );
}

#[test]
fn a_failing_sink_refuses() {
    let params = serde_json::to_vec(&json!({"name": "query", "_meta": client_meta()})).unwrap();
    let decision = check_request(
        &redacting(),
        "tools/call",
        Some(&params),
        &FilterContext::default(),
        |_| Err("disk full".into()),
    );
    assert_eq!(
        decision,
        Decision::Reject {
            reason: "mcp-provenance: audit record not written".into(),
            data: None
        }
    );
}

#[test]
fn the_response_keeps_nothing_of_the_servers_envelope() {
    // The processor does not see the request a result answers: a `turnId`
    // in the result is the server's word, and goes with the rest (WIRE-7).
    let result = br#"{"content":[],"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"show me the salaries"}}}}"#;
    assert_eq!(
        check_response(&redacting(), result),
        Decision::Mutated(br#"{"content":[],"_meta":{}}"#.to_vec())
    );
    assert_eq!(
        check_response(&redacting(), br#"{"content":[]}"#),
        Decision::Pass
    );
}
