//! The tower middleware (src/tower.rs) in front of rmcp's Streamable HTTP
//! service on an axum `Router`, driven in process through a whole MCP
//! session: examples/rmcp_http.rs's own code, every answer checked.

#![cfg(not(target_arch = "wasm32"))]

/// The example, whose `main` these tests leave alone.
#[path = "../examples/rmcp_http.rs"]
#[allow(dead_code)]
mod example;

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{Request, Response, StatusCode};
use axum::{Extension, Router};
use example::{Answer, CALL, INITIALIZE, INITIALIZED, Orders, app, lock, options, send};
use mcp_provenance::{Account, AuditError, Provenance, ProvenanceLayer};
use serde_json::{Value, json};
use tower::{Layer, ServiceExt};

/// Each account the audit sink got (as JSON) with its line.
type Kept = Arc<Mutex<Vec<(Value, String)>>>;

/// Where a router's sink keeps what it gets: the messages' accounts, and
/// the exchanges' outcomes apart.
#[derive(Clone, Default)]
struct Sunk {
    kept: Kept,
    outcomes: Kept,
}

/// The user an authentication layer found, as an extension of the request.
#[derive(Clone)]
struct User(&'static str);

/// The example's router, its layer's sink keeping each message's account
/// in `sunk.kept` and each outcome in `sunk.outcomes` unless `failing` (then
/// it fails with `store-down`), its principal the `User` an outer layer put
/// in each request.
fn router(orders: Orders, sunk: Sunk, failing: Arc<AtomicBool>) -> Router {
    let layer = ProvenanceLayer::from_value(&options())
        .unwrap()
        .audit(move |account, line| {
            if failing.load(Ordering::SeqCst) {
                return Err(AuditError::new("store-down"));
            }
            let kept = match account {
                Account::Message(_) => &sunk.kept,
                Account::Outcome(_) => &sunk.outcomes,
                _ => return Ok(()),
            };
            let account = serde_json::to_value(account).map_err(|_| AuditError::default())?;
            lock(kept).push((account, line.to_owned()));
            Ok(())
        })
        .principal(|parts| parts.extensions.get::<User>().map(|user| user.0.to_owned()));
    app(layer, orders).layer(Extension(User("alice@example.com")))
}

/// The one `data:` of an event stream's events that is JSON.
fn data(answer: &Answer) -> Value {
    let data = (answer.body.lines())
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| data.starts_with('{'))
        .unwrap_or_else(|| panic!("no message in {:?}", answer.body));
    serde_json::from_str(data).unwrap()
}

/// The accounts kept since `from`.
fn since(kept: &Kept, from: usize) -> Vec<(Value, String)> {
    lock(kept)[from..].to_vec()
}

/// The exact error the middleware answers a request `id` with.
fn error(id: &str, rpc: i32, message: &str, code: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{rpc},"message":"{message}","data":{{"code":"{code}"}}}}}}"#
    )
}

#[tokio::test]
async fn a_whole_session_through_the_layer() {
    let (orders, sunk, failing) = (Orders::default(), Sunk::default(), Arc::default());
    let app = router(orders.clone(), sunk.clone(), Arc::clone(&failing));
    let kept = sunk.kept;

    // initialize: rmcp issues a session; the record of the request that
    // asked for it cannot call it witnessed yet.
    let initialized = send(&app, "POST", None, Some(INITIALIZE)).await.unwrap();
    assert_eq!(initialized.status, StatusCode::OK);
    assert_eq!(
        initialized.content_type.as_deref(),
        Some("text/event-stream")
    );
    let issued = initialized.session.clone().expect("rmcp issues a session");
    let result = data(&initialized);
    assert_eq!(
        (
            result["id"].clone(),
            result["result"]["protocolVersion"].clone()
        ),
        (json!(1), json!("2025-06-18"))
    );
    let accounts = since(&kept, 0);
    assert_eq!(accounts.len(), 1);
    let witnessed = &accounts[0].0["record"]["witnessed"];
    assert_eq!(witnessed["principal"], "alice@example.com");
    assert_eq!(witnessed.get("sessionId"), None);
    let at = witnessed["receivedAt"].as_str().unwrap();
    assert!(
        at.len() == 24 && at.ends_with('Z') && at.as_bytes()[10] == b'T',
        "{at}"
    );

    // From now on, the session is the server's own: witnessed.
    let session = Some(issued.as_str());
    let notified = send(&app, "POST", session, Some(INITIALIZED))
        .await
        .unwrap();
    assert_eq!(
        (notified.status, notified.body.as_str()),
        (StatusCode::ACCEPTED, "")
    );
    let accounts = since(&kept, 1);
    assert_eq!(accounts[0].0["record"]["witnessed"]["sessionId"], issued);

    // The call: the handler reads the intent redacted; the careless
    // server's envelope comes back as its turnId alone.
    let called = send(&app, "POST", session, Some(CALL)).await.unwrap();
    assert_eq!(called.status, StatusCode::OK);
    assert_eq!(
        called.body,
        concat!(
            "data: \nid: 0/0\nretry: 3000\n\n",
            r#"data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"open_orders ran"}],"isError":false,"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"turn-1"}}}}"#,
            "\nid: 1/0\n\n"
        )
    );
    assert_eq!(
        *lock(&orders.seen),
        [
            json!({"turnId": "turn-1", "model": {"name": "example-model"}, "userIntent": {"redacted": true}})
        ]
    );
    let accounts = since(&kept, 2);
    let (account, line) = &accounts[0];
    assert_eq!(
        account["record"]["clientAsserted"],
        json!({"turnId": "turn-1", "model": "example-model", "userIntentRedacted": true,
               "correlation": [{"kind": "turn", "value": "turn-1", "key": "io.modelcontextprotocol/aiInvocation", "member": "turnId"}]})
    );
    assert_eq!(account["record"]["witnessed"]["sessionId"], issued);
    assert_eq!(
        account["changes"],
        json!([{"action": "redacted", "path": "/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text", "rule": "AI-15"}])
    );
    assert!(!line.contains("98765") && !line.contains('\n'), "{line}");

    // A batch with a message nested too deep: the filter refuses it and
    // forwards the rest; rmcp, which reads no batches (2025-06-18), answers
    // 415 in plain text, which no client takes a message from: the refusal
    // and an error for the request that went on are the answer.
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"q","arguments":{{"deep":{deep}}}}}}},{{"jsonrpc":"2.0","id":4,"method":"ping"}}]"#
    );
    let answered = send(&app, "POST", session, Some(&batch)).await.unwrap();
    assert_eq!(
        (answered.status, answered.content_type.as_deref()),
        (StatusCode::OK, Some("application/json"))
    );
    assert_eq!(
        answered.body,
        format!(
            "[{},{}]",
            error(
                "3",
                -32600,
                "the message nests deeper than the gateway reads",
                "too-deep"
            ),
            error(
                "4",
                -32603,
                "the server's answer is not JSON-RPC",
                "answer-not-json"
            )
        )
    );
    let refused: Vec<Value> = since(&kept, 3)
        .iter()
        .map(|(account, _)| account["refused"].clone())
        .collect();
    assert_eq!(refused, [json!("too-deep"), Value::Null]);

    // Past maxBodyBytes, as it streams or by its Content-Length: 413, the
    // connection closed, nothing read past the bound, nothing audited.
    let large = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    let too_large = error(
        "null",
        -32600,
        "the body is larger than 65536 bytes",
        "body-too-large",
    );
    let streamed = send(&app, "POST", session, Some(&large)).await.unwrap();
    assert_eq!(
        (streamed.status, streamed.body.as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, too_large.as_str())
    );
    let declared = Request::post("/mcp")
        .header("content-type", "application/json")
        .header("content-length", large.len())
        .body(Body::from(large.clone()))
        .unwrap();
    let declared = app.clone().oneshot(declared).await.unwrap();
    assert_eq!(declared.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let headers: Vec<(&str, &str)> = (declared.headers().iter())
        .map(|(name, value)| (name.as_str(), value.to_str().unwrap()))
        .collect();
    let length = too_large.len().to_string();
    assert_eq!(
        headers,
        [
            ("content-type", "application/json"),
            ("content-length", length.as_str()),
            ("connection", "close")
        ]
    );
    let body = axum::body::to_bytes(declared.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(body, too_large.as_bytes());
    assert_eq!(lock(&kept).len(), 5);

    // The audit sink fails: nothing reaches the server; each request is
    // answered -32603 with the sink's code, a body of none 500.
    failing.store(true, Ordering::SeqCst);
    let call = CALL.replace(r#""id":2"#, r#""id":6"#);
    let unaudited = send(&app, "POST", session, Some(&call)).await.unwrap();
    let store_down = |id: &str| error(id, -32603, "the request could not be audited", "store-down");
    assert_eq!(
        (unaudited.status, unaudited.body.clone()),
        (StatusCode::OK, store_down("6"))
    );
    let unaudited = send(&app, "POST", session, Some(INITIALIZED))
        .await
        .unwrap();
    assert_eq!(
        (unaudited.status, unaudited.body),
        (StatusCode::INTERNAL_SERVER_ERROR, store_down("null"))
    );
    assert_eq!(lock(&orders.seen).len(), 1);
    failing.store(false, Ordering::SeqCst);

    // A DELETE the server accepts ends the session: a request that still
    // names it is not witnessed in it, and rmcp's 404 goes on as it came.
    let ended = send(&app, "DELETE", session, None).await.unwrap();
    assert_eq!(ended.status, StatusCode::ACCEPTED);
    let stale = send(&app, "POST", session, Some(&call)).await.unwrap();
    assert_eq!(
        (stale.status, stale.body.as_str()),
        (StatusCode::NOT_FOUND, "Not Found: Session not found")
    );
    let accounts = since(&kept, 5);
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].0["record"]["witnessed"].get("sessionId"), None);
    assert_eq!(
        accounts[0].0["record"]["witnessed"]["principal"],
        "alice@example.com"
    );
}

/// An outcome as the sink got it, less what changes from run to run: when
/// the request came, how long it took, which host served it (the process is
/// this one).
fn settled((outcome, line): &(Value, String)) -> Value {
    assert_eq!(&serde_json::from_str::<Value>(line).unwrap(), outcome);
    assert_eq!(outcome["pid"], std::process::id());
    assert!(outcome["ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{line}");
    let mut outcome = outcome.clone();
    for varying in ["receivedAt", "ms", "pid", "host"] {
        outcome.as_object_mut().unwrap().remove(varying);
    }
    outcome
}

#[tokio::test]
async fn each_exchange_has_its_outcome_once_its_answer_is_over() {
    let sunk = Sunk::default();
    let app = router(Orders::default(), sunk.clone(), Arc::default());
    let initialized = send(&app, "POST", None, Some(INITIALIZE)).await.unwrap();
    let issued = initialized.session.expect("rmcp issues a session");
    let session = Some(issued.as_str());
    send(&app, "POST", session, Some(INITIALIZED))
        .await
        .unwrap();
    // A call rmcp serves, and one it refuses: a prompt, which this server has none of.
    send(&app, "POST", session, Some(CALL)).await.unwrap();
    let unknown = r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"none"}}"#;
    let refused = send(&app, "POST", session, Some(unknown)).await.unwrap();
    let code = data(&refused)["error"]["code"].clone();
    assert!(code.is_i64(), "{}", refused.body);
    // A body past maxBodyBytes, answered by the layer itself.
    let large = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70_000)
    );
    send(&app, "POST", session, Some(&large)).await.unwrap();
    let outcomes: Vec<Value> = lock(&sunk.outcomes).iter().map(settled).collect();
    let outcome = |status: u16, requests: Value| json!({"kind": "outcome", "status": status, "requests": requests, "sessionId": issued});
    assert_eq!(
        outcomes,
        [
            outcome(200, json!([{"id": 1, "answer": "result"}])),
            outcome(202, json!([])),
            outcome(200, json!([{"id": 2, "answer": "result"}])),
            outcome(200, json!([{"id": 3, "answer": "error", "code": code}])),
            json!({"kind": "outcome", "status": 413, "refused": "body-too-large", "requests": [], "sessionId": issued}),
        ]
    );
    // Given once the answer is over, not while it is under way.
    let request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &issued)
        .body(Body::from(CALL.replace(r#""id":2"#, r#""id":4"#)))
        .unwrap();
    let answer = app.clone().oneshot(request).await.unwrap();
    assert_eq!(lock(&sunk.outcomes).len(), 5);
    axum::body::to_bytes(answer.into_body(), usize::MAX)
        .await
        .unwrap();
    let last = settled(&lock(&sunk.outcomes)[5]);
    assert_eq!(last, outcome(200, json!([{"id": 4, "answer": "result"}])));
}

#[tokio::test]
async fn a_sink_that_fails_on_an_outcome_changes_nothing_of_the_answer_sent() {
    let layer = ProvenanceLayer::from_value(&json!({}))
        .unwrap()
        .audit(|account, _line| match account {
            Account::Outcome(_) => Err(AuditError::new("store-down")),
            _ => Ok(()),
        });
    let answer = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no such tool"}}"#;
    let server = tower::service_fn(move |_: Request<Body>| async move {
        let response = Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(answer))
            .unwrap();
        Ok::<_, std::convert::Infallible>(response)
    });
    let request = Request::post("/mcp")
        .header("content-type", "application/json")
        .body(Body::from(CALL))
        .unwrap();
    let got = layer.layer(server).oneshot(request).await.unwrap();
    assert_eq!(got.status(), StatusCode::OK);
    let body = axum::body::to_bytes(Body::new(got.into_body()), usize::MAX)
        .await
        .unwrap();
    assert_eq!(body, answer.as_bytes());
}

/// A body that gives its first piece, then fails.
struct Broken(Option<Bytes>);

impl axum::body::HttpBody for Broken {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        Poll::Ready(Some(match self.0.take() {
            Some(piece) => Ok(http_body::Frame::data(piece)),
            None => Err(std::io::Error::other("the server's stream broke")),
        }))
    }
}

#[tokio::test]
async fn json_answers_are_held_whole_and_a_broken_one_is_not_passed_on() {
    // A server that answers JSON, whole: its result echoed, its length made right.
    let layer = ProvenanceLayer::from_value(&json!({"policy": {"userIntent": "drop"}})).unwrap();
    let json_server = tower::service_fn(|request: Request<Body>| async move {
        let read = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .unwrap();
        assert!(!String::from_utf8_lossy(&read).contains("98765"));
        let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"turn-1","model":{"name":"m"}}}}}"#;
        Ok::<_, std::convert::Infallible>(
            Response::builder()
                .header("content-type", "application/json")
                .header("content-length", answer.len())
                .body(Body::from(answer))
                .unwrap(),
        )
    });
    let service: Provenance<_> = layer.layer(json_server);
    let request = || {
        Request::post("/mcp")
            .header("content-type", "application/json")
            .body(Body::from(CALL))
            .unwrap()
    };
    let answer = service.clone().oneshot(request()).await.unwrap();
    let echoed = r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"turn-1"}}}}"#;
    assert_eq!(
        answer.headers()["content-length"],
        echoed.len().to_string().as_str()
    );
    let body = axum::body::to_bytes(Body::new(answer.into_body()), usize::MAX)
        .await
        .unwrap();
    assert_eq!(body, echoed.as_bytes());

    // A server whose answer breaks before it is whole: the client's breaks
    // too, with nothing of it sent.
    let broken_server = tower::service_fn(|_: Request<Body>| async {
        let body = Broken(Some(Bytes::from_static(br#"{"jsonrpc":"2.0","id":2,"#)));
        let response = Response::builder()
            .header("content-type", "application/json")
            .body(body)
            .unwrap();
        Ok::<_, std::convert::Infallible>(response)
    });
    let layer = ProvenanceLayer::from_value(&json!({})).unwrap();
    let answer = layer.layer(broken_server).oneshot(request()).await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let failure = axum::body::to_bytes(Body::new(answer.into_body()), usize::MAX)
        .await
        .unwrap_err();
    assert!(
        failure.to_string().contains("the server's stream broke"),
        "{failure}"
    );
}

#[tokio::test]
async fn what_the_layer_does_not_watch_passes_as_it_came() {
    let app = router(Orders::default(), Sunk::default(), Arc::default());
    let request = Request::post("/token")
        .body(Body::from("grant_type=x"))
        .unwrap();
    let answer = app.oneshot(request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
}

#[test]
fn the_public_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<ProvenanceLayer>();
    both::<Provenance<axum::routing::Route>>();
    both::<AuditError>();
    // A body is Send (what a server needs), and Sync when the service's is.
    fn send<T: Send>() {}
    send::<mcp_provenance::ProvenanceBody<Body>>();
    both::<mcp_provenance::ProvenanceBody<String>>();
}
