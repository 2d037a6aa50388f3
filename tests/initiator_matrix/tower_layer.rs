//! Cells 3 and 5 through `ProvenanceLayer`, in front of a service that
//! records the bodies it reads.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::http::{Request, Response};
use mcp_provenance::{Account, ProvenanceLayer};
use serde_json::{Value, json};
use tower::{Layer, ServiceExt, service_fn};

use super::decisions::{
    Body as Marked, Decision, apart, assert_same, bodies, call, markers, options,
};
use super::{SPELLINGS, UI, VENDOR, call_with, check_record};

type Kept = Arc<Mutex<Vec<Value>>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The layer with `options` and a sink keeping each account, in front of
/// a service keeping each body it reads; one request through it.
struct Stack {
    layer: ProvenanceLayer,
    accounts: Kept,
    reached: Arc<Mutex<Vec<String>>>,
}

impl Stack {
    fn new(options: &Value) -> Self {
        let accounts = Kept::default();
        let sink = accounts.clone();
        let layer = ProvenanceLayer::from_value(options)
            .unwrap()
            .audit(move |account, _line| {
                // The messages' accounts: the cells are about what the filter decided.
                if let Account::Message(seen) = account {
                    lock(&sink).push(serde_json::to_value(seen).unwrap());
                }
                Ok(())
            })
            .principal(|_| Some("alice".into()));
        Stack {
            layer,
            accounts,
            reached: Arc::default(),
        }
    }

    async fn send(&self, body: &str, content_type: &str) -> Decision {
        let reached = self.reached.clone();
        let app = service_fn(move |request: Request<Body>| {
            let reached = reached.clone();
            async move {
                let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
                    .await
                    .unwrap();
                lock(&reached).push(String::from_utf8(bytes.to_vec()).unwrap());
                let answer = Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#))
                    .unwrap();
                Ok::<_, Infallible>(answer)
            }
        });
        let (from, seen) = (lock(&self.accounts).len(), lock(&self.reached).len());
        let request = Request::post("/mcp")
            .header("content-type", content_type)
            .header("accept", "application/json, text/event-stream")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let answer = self
            .layer
            .clone()
            .layer(app)
            .oneshot(request)
            .await
            .unwrap();
        let status = answer.status().as_u16();
        let kind = answer
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned());
        let text = axum::body::to_bytes(Body::new(answer.into_body()), usize::MAX)
            .await
            .unwrap();
        let accounts: Vec<Value> = lock(&self.accounts)[from..]
            .iter()
            .cloned()
            .map(apart)
            .collect();
        let answer = json!({"status": status, "type": kind, "body": String::from_utf8_lossy(&text), "accounts": accounts});
        (lock(&self.reached)[seen..].to_vec(), answer)
    }
}

#[tokio::test]
async fn cell_3_the_layer_passes_every_initiator_on_byte_for_byte() {
    let stack = Stack::new(&json!({"uiKeys": [VENDOR]}));
    for key in [UI, VENDOR] {
        let cases = SPELLINGS
            .iter()
            .map(|&(label, text)| (label, Some(text)))
            .chain([("absent", None)]);
        for (label, text) in cases {
            let meta = text.map_or(String::new(), |text| {
                format!(r#""{key}":{{"initiator" : {text}}},"#)
            });
            let body = call_with(&meta);
            let from = lock(&stack.accounts).len();
            let (reached, answer) = stack.send(&body, "application/json").await;
            assert_eq!(answer["status"], json!(200));
            assert_eq!(reached, [body], "{key}: {label}");
            let account = lock(&stack.accounts)[from].clone();
            check_record(&account["record"], text, &format!("{key}: {label}"));
            assert_eq!(account["record"]["witnessed"]["principal"], json!("alice"));
        }
    }
}

#[tokio::test]
async fn cell_5_the_layer_decides_the_same_with_any_marker_or_none() {
    let mut options = options();
    options["maxBodyBytes"] = json!(4096);
    let stack = Stack::new(&options);
    let markers = markers();
    let oversize: Marked = |m| {
        call(
            15,
            m,
            &format!(r#","arguments":{{"s":"{}"}}"#, "x".repeat(5000)),
        )
    };
    let all = bodies()
        .into_iter()
        .map(|(label, body, _)| (label, body))
        .chain([("a body past maxBodyBytes (413)", oversize)]);
    for (label, body) in all {
        let bare = stack.send(&body(""), "application/json").await;
        for marker in &markers[1..] {
            let marked = stack.send(&body(marker), "application/json").await;
            assert_same(marked, &bare, marker, &format!("{label} with {marker}"));
        }
    }
    let notification = bodies()[8].1;
    let typed = stack.send(&notification(""), "text/plain").await;
    assert_eq!(typed.1["status"], json!(415));
    for marker in &markers[1..] {
        assert_same(
            stack.send(&notification(marker), "text/plain").await,
            &typed,
            marker,
            marker,
        );
    }
}
