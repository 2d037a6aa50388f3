//! The middleware for tower's HTTP stack (axum, hyper, tonic's neighbours,
//! rmcp's Streamable HTTP service): [`ProvenanceLayer`], the same
//! middleware as `mcp-provenance/http` in Node and `mcp_provenance.asgi` in
//! Python, over the same exchange as theirs (WIRE-7, WIRE-8). It only moves bytes
//! between `http`'s types and the exchange; every decision is the core's.
//!
//! A POST to an MCP path is read up to `maxBodyBytes` (past it, 413 and the
//! connection closed) and filtered before the service behind reads it: the
//! service gets exactly the bytes the filter forwarded (its
//! `content-length` made right, and no `accept-encoding`, since the answer
//! is read). Each message's account and its JSON log line go to the audit
//! sink first; when the sink fails, nothing goes on and each request is
//! answered -32603 with the sink's code. The service's answer comes back
//! as the clients read it: each result echoing only its request's
//! `turnId`, an event stream event by event, the filter's replies to the
//! refused messages of a batch joined, and what cannot be read never passed
//! on. A session is recorded as witnessed once the service issued it.
//!
//! Put the layer where the app routes: on an axum `Router` (`.layer(...)`),
//! so that the path it sees (and matches against `paths`) is the one the
//! router matches, not the rest a `nest_service` hands its service. Its
//! waits are the stack's to bound, as every other layer's: a timeout layer
//! outside it (tower-http's `TimeoutLayer`, `RequestBodyTimeoutLayer`)
//! bounds the time a client may take to send its body.
//!
//! Once the answer to a body is over (sent, or dropped: the client gone),
//! the sink gets one more account, the exchange's outcome
//! ([`Account::Outcome`]): the status sent, and for each request that went
//! on whether it got a result or an error (its code), or no answer seen.
//!
//! This file only names the parts: the layer, what its audit sink is
//! handed and the error it fails with (`layer.rs`), the service and what it
//! does with a request and its answer (`service.rs`), the body of the
//! answers (`body.rs`), and the exchange that gives its outcome when it is
//! over (`ended.rs`).
//!
//! # Examples
//!
//! ```
//! use axum::{Router, body::Body, http::Request, routing::post};
//! use mcp_provenance::{AuditError, ProvenanceLayer};
//! use serde_json::json;
//! use std::sync::{Arc, Mutex};
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let lines = Arc::new(Mutex::new(Vec::new()));
//! let log = lines.clone();
//! let layer = ProvenanceLayer::from_value(&json!({"policy": {"userIntent": "redact"}, "paths": ["/mcp"]}))?
//!     .audit(move |_account, line| {
//!         log.lock().map_err(|_| AuditError::new("log-poisoned"))?.push(line.to_owned());
//!         Ok(())
//!     });
//! // Any MCP server: this one shows what it read, as its result's `text`.
//! let app = Router::new()
//!     .route("/mcp", post(|body: String| async move {
//!         let text = json!({"jsonrpc": "2.0", "id": 1, "result": {"text": body,
//!             "_meta": {"io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "model": {"name": "m"}}}}});
//!         ([("content-type", "application/json")], text.to_string())
//!     }))
//!     .layer(layer);
//!
//! let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":
//!   {"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"my salary"}}}}}"#;
//! let request = Request::post("/mcp").header("content-type", "application/json").body(Body::from(call))?;
//! let answer = app.oneshot(request).await?;
//! let answer = axum::body::to_bytes(answer.into_body(), usize::MAX).await?;
//! let answer: serde_json::Value = serde_json::from_slice(&answer)?;
//! // The server read the intent redacted; the client gets back the turnId alone.
//! assert!(!answer["result"]["text"].as_str().unwrap_or_default().contains("salary"));
//! assert_eq!(answer["result"]["_meta"], json!({"io.modelcontextprotocol/aiInvocation": {"turnId": "t-1"}}));
//! assert!(lines.lock().unwrap()[0].contains(r#""userIntentRedacted":true"#));
//! # Ok(())
//! # }
//! ```

mod body;
mod ended;
mod layer;
mod service;

pub use body::{BoxError, ProvenanceBody};
pub use layer::{Account, AuditError, ProvenanceLayer};
pub use service::Provenance;
