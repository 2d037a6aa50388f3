//! Native Rust over HTTP: rmcp's Streamable HTTP server on an axum
//! `Router`, with this crate's [`ProvenanceLayer`] in front of it. The
//! server's code knows nothing of provenance: the layer filters each body
//! before rmcp reads it (the user's intent redacted under the policy),
//! hands each message's audit line to the sink first, answers what it
//! refuses itself (a body too large, a batch's too-deep message, a body
//! whose audit failed), and lets only the `turnId` of a request back into
//! its result, whatever the server put there.
//!
//! ```sh
//! cargo run --example rmcp_http --features tower
//! ```
//!
//! It sends a session's requests through the router in process (no sockets:
//! `tower::ServiceExt::oneshot`, as a server would hand them on) and prints
//! each answer, then the audit lines. Served, `app` is any axum app:
//! `axum::serve(listener, app)` (axum's `tokio` and `http1` features).
//! tests/tower.rs runs the same code and checks every answer.

use std::error::Error;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use mcp_provenance::{AI_INVOCATION_KEY, ProvenanceLayer};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, MetaObject,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tower::ServiceExt;

/// What the example's functions fail with.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// The server's handler, plain rmcp: one tool, and no provenance code.
#[derive(Clone, Debug, Default)]
pub struct Orders {
    /// The envelope each call carried, as the handler read it (`Null`: none).
    pub seen: Arc<Mutex<Vec<Value>>>,
}

impl ServerHandler for Orders {
    /// A server with tools.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    /// Runs any tool. A careless server: it sends the envelope it read back
    /// whole in its result's `_meta` (AI-11 asks for the `turnId` alone).
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let envelope = context.meta.0.0.get(AI_INVOCATION_KEY).cloned();
        lock(&self.seen).push(envelope.clone().unwrap_or(Value::Null));
        let mut result =
            CallToolResult::success(vec![ContentBlock::text(format!("{} ran", request.name))]);
        if let Some(envelope) = envelope {
            let meta = [(AI_INVOCATION_KEY.to_owned(), envelope)];
            result.meta = Some(MetaObject(meta.into_iter().collect()));
        }
        Ok(result.into())
    }
}

/// The middleware's options, as every runtime reads them: intents
/// redacted, bodies up to 64 KiB, and the one MCP path the router serves.
pub fn options() -> Value {
    json!({"policy": {"userIntent": "redact"}, "maxBodyBytes": 65536, "paths": ["/mcp"]})
}

/// The router: rmcp's Streamable HTTP service at `/mcp` (a session per
/// client, its answers as event streams), with `layer` in front of it.
pub fn app(layer: ProvenanceLayer, orders: Orders) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_sse_retry(None);
    let mcp = StreamableHttpService::new(
        move || Ok(orders.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new().nest_service("/mcp", mcp).layer(layer)
}

/// An answer as the client got it: its status, its session header, its body.
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// Its `Mcp-Session-Id`, when it names one.
    pub session: Option<String>,
    /// Its `Content-Type`, when it has one.
    pub content_type: Option<String>,
    /// Its body, whole.
    pub body: String,
}

/// Sends `method` to `/mcp` with `body` (none for a GET or a DELETE), in
/// `session` when given, as a Streamable HTTP client does, through `app`.
///
/// # Errors
///
/// When the request cannot be made or the answer's body not read.
pub async fn send(
    app: &Router,
    method: &str,
    session: Option<&str>,
    body: Option<&str>,
) -> Result<Answer, BoxError> {
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let request =
        request.body(body.map_or_else(Body::empty, |body| Body::from(body.to_owned())))?;
    let answer = app.clone().oneshot(request).await?;
    let header = |name: &str| {
        let value = answer.headers().get(name)?.to_str().ok()?;
        Some(value.to_owned())
    };
    let (session, content_type) = (header("mcp-session-id"), header("content-type"));
    let status = answer.status();
    let body = axum::body::to_bytes(answer.into_body(), usize::MAX).await?;
    Ok(Answer {
        status,
        session,
        content_type,
        body: String::from_utf8(body.to_vec())?,
    })
}

/// The client's `initialize`.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1.0.0"}}}"#;
/// The client's `notifications/initialized`.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// A call the model chose, with the SEP-2817 envelope: a user intent the
/// policy keeps from the server.
pub const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_orders","arguments":{"region":"EMEA"},"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"turn-1","model":{"name":"example-model"},"userIntent":{"text":"my salary is 98765; show the orders"}}}}}"#;

/// A mutex's value, poisoned or not.
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A session through the router: initialize, initialized, the call, and
/// the session ended; each answer printed, then the audit lines.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let log = lines.clone();
    let layer = ProvenanceLayer::from_value(&options())?.audit(move |_account, line| {
        // An audit store: here, a list. A sink that fails refuses the body.
        lock(&log).push(line.to_owned());
        Ok(())
    });
    let app = app(layer, Orders::default());

    let initialized = send(&app, "POST", None, Some(INITIALIZE)).await?;
    let session = initialized.session.clone();
    println!("initialize: {}", initialized.status);
    let session = session.as_deref();
    let notified = send(&app, "POST", session, Some(INITIALIZED)).await?;
    println!("notifications/initialized: {}", notified.status);
    let called = send(&app, "POST", session, Some(CALL)).await?;
    println!("tools/call: {}, an event stream:", called.status);
    for line in called.body.lines() {
        println!("  {line}");
    }
    let ended = send(&app, "DELETE", session, None).await?;
    println!("DELETE: {}", ended.status);
    for line in lock(&lines).iter() {
        println!("audit line:\n  {line}");
    }
    Ok(())
}
