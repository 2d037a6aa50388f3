//! Native Rust on the official Rust SDK: an `rmcp` client and an `rmcp`
//! server, in one process over an in-memory duplex, carry, record and echo
//! the SEP-2817 envelope with this crate's API, on the wire.
//!
//! - The client's transport is wrapped in [`Invoking`]: each outgoing request
//!   the host's model chose gets the envelope (`attach_invocation`) before it
//!   is written, so the envelope crosses as JSON-RPC, not as a Rust value.
//! - The server's transport is wrapped in [`Auditing`]: each incoming request
//!   is recorded (`audit_record`) before rmcp's handler sees it, and each
//!   response echoes the request's `turnId` and nothing else of the envelope
//!   (`echo_turn_id`). The handler ([`Database`]) knows nothing of either.
//!
//! The same rules as the npm package's `provenanceTransport`
//! (mcp-provenance/sdk), natively. The call below carries a forged log line
//! in its user intent ("\r\n"); the record shows it neutralized.
//!
//! ```sh
//! cargo run --example rmcp
//! ```
//!
//! It prints the `tools/call` as it crossed the duplex, the server's audit
//! record of it (one JSON line, as an audit store would keep it), the
//! response as it crossed back, and the `_meta` of the result the client got.
//! tests/rmcp.rs runs the same code and checks what it prints.
//!
//! Over HTTP, none of this is code of your own: examples/rmcp_http.rs puts
//! the crate's `ProvenanceLayer` (the `tower` feature) in front of rmcp's
//! Streamable HTTP service, and what it refuses (a body too large, one whose
//! audit failed) it answers itself, in the words of every runtime's middleware.

use std::collections::HashMap;
use std::error::Error;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_provenance::{
    AuditContext, AuditRecord, KeyOptions, attach_invocation, audit_record, echo_turn_id,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage,
    ClientNotification, ContentBlock, ErrorData, JsonRpcMessage, RequestId, ServerCapabilities,
    ServerConfig, ServerJsonRpcMessage,
};
use rmcp::service::{RequestContext, RoleClient, RoleServer};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// What the example's functions fail with.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// The client side: an rmcp transport whose outgoing requests carry the
/// envelope `invocation` returns for them (`None`: the call is sent as it is,
/// as when the user, not the model, chose it).
///
/// A request whose envelope breaks the schema (AI-2..AI-7) is not sent: its
/// call fails with the transport error, as `attachInvocation` throws in JS.
pub struct Invoking<T, F> {
    /// The transport the messages go out on.
    inner: T,
    /// The envelope for an outgoing request, given the request as JSON.
    invocation: F,
    /// The `_meta` key the envelope goes under (the default unless configured).
    keys: KeyOptions,
}

impl<T, F> Invoking<T, F> {
    /// Wraps `inner`, attaching what `invocation` returns to each request.
    pub fn new(inner: T, invocation: F) -> Self {
        Invoking {
            inner,
            invocation,
            keys: KeyOptions::default(),
        }
    }
}

impl<T, F> Transport<RoleClient> for Invoking<T, F>
where
    T: Transport<RoleClient>,
    F: FnMut(&Value) -> Option<Value> + Send + 'static,
{
    type Error = io::Error;

    /// rmcp hands over a typed message; it goes out as the JSON the
    /// envelope was attached to. `_meta` survives the typed round trip:
    /// rmcp 3.x keeps a request's `params._meta` in its params' `meta` and
    /// writes it back when it serializes the request (a server's handler
    /// then finds it in its request context's `meta`).
    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let item = match &item {
            JsonRpcMessage::Request(_) => serde_json::to_value(&item)
                .map_err(io::Error::other)
                .and_then(|request| match (self.invocation)(&request) {
                    None => Ok(item),
                    Some(invocation) => attach_invocation(request, invocation, &self.keys)
                        .map_err(io::Error::other)
                        .and_then(|sent| serde_json::from_value(sent).map_err(io::Error::other)),
                }),
            _ => Ok(item),
        };
        let send = item.map(|item| self.inner.send(item));
        async move { send?.await.map_err(io::Error::other) }
    }

    /// What the server sends comes in as it is.
    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.inner.receive()
    }

    /// Closes the inner transport.
    async fn close(&mut self) -> Result<(), io::Error> {
        self.inner.close().await.map_err(io::Error::other)
    }
}

/// The server side: an rmcp transport that gives `audit` the record of each
/// incoming request before rmcp dispatches it, and makes each response echo
/// its request's `turnId`, and only that (AI-11).
///
/// A request that cannot be audited is refused with a JSON-RPC error, never
/// served, as `provenanceTransport` does in JS.
pub struct Auditing<T, A> {
    /// The transport the messages come in and go out on.
    inner: T,
    /// Where each record goes: an audit store.
    audit: A,
    /// What the server itself knows of this connection (`witnessed`). A real
    /// server would also stamp `received_at` per request from its clock.
    context: AuditContext,
    /// The `_meta` keys (the defaults unless configured).
    keys: KeyOptions,
    /// Each request as it came, by id, until its response goes out or it is
    /// cancelled: what `echo_turn_id` echoes from.
    answering: HashMap<RequestId, Value>,
}

impl<T, A> Auditing<T, A> {
    /// Wraps `inner`, recording each request into `audit` with `context`.
    pub fn new(inner: T, audit: A, context: AuditContext) -> Self {
        Auditing {
            inner,
            audit,
            context,
            keys: KeyOptions::default(),
            answering: HashMap::new(),
        }
    }
}

impl<T, A> Transport<RoleServer> for Auditing<T, A>
where
    T: Transport<RoleServer>,
    A: FnMut(AuditRecord) + Send + 'static,
{
    type Error = io::Error;

    /// A response goes out echoing its request's `turnId`: the request as it
    /// came and the response as rmcp made it, both as JSON, through
    /// `echo_turn_id`, and back to rmcp's type for the inner transport.
    /// `ServerResult` is an untagged union, so the reply is read back as
    /// the client's rmcp will read it off the wire; `CallToolResult::meta`
    /// is its `_meta`, kept whole.
    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let request = match &item {
            JsonRpcMessage::Response(response) => self.answering.remove(&response.id),
            JsonRpcMessage::Error(error) => {
                error.id.as_ref().and_then(|id| self.answering.remove(id));
                None
            }
            _ => None,
        };
        let item = match request {
            None => Ok(item),
            Some(request) => serde_json::to_value(&item)
                .map_err(io::Error::other)
                .and_then(|response| {
                    echo_turn_id(&request, response, &self.keys).map_err(io::Error::other)
                })
                .and_then(|reply| serde_json::from_value(reply).map_err(io::Error::other)),
        };
        let send = item.map(|item| self.inner.send(item));
        async move { send?.await.map_err(io::Error::other) }
    }

    /// Each request is audited as soon as it is read, with no await between
    /// reading and returning it: rmcp polls `receive` in a `select!` and may
    /// drop the future, which must then lose nothing.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let message = self.inner.receive().await?;
            let id = match &message {
                JsonRpcMessage::Request(request) => request.id.clone(),
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancelled) =
                        &notification.notification
                        && let Some(id) = &cancelled.params.request_id
                    {
                        self.answering.remove(id);
                    }
                    return Some(message);
                }
                _ => return Some(message),
            };
            let audited = match serde_json::to_value(&message) {
                Ok(request) => audit_record(&request, &self.context)
                    .map(|record| (request, record))
                    .map_err(|failure| failure.code().as_str()),
                Err(_) => Err("audit-failed"),
            };
            match audited {
                Ok((request, record)) => {
                    (self.audit)(record);
                    self.answering.insert(id, request);
                    return Some(message);
                }
                Err(code) => {
                    // The JS refusal: -32603, with the failure's code.
                    let refusal = ServerJsonRpcMessage::error(
                        ErrorData::internal_error(
                            "the request could not be audited",
                            Some(json!({"code": code})),
                        ),
                        Some(id),
                    );
                    tokio::spawn(self.inner.send(refusal));
                }
            }
        }
    }

    /// Forgets the requests still unanswered and closes the inner transport.
    async fn close(&mut self) -> Result<(), io::Error> {
        self.answering.clear();
        self.inner.close().await.map_err(io::Error::other)
    }
}

/// The server's handler, plain rmcp: one tool, and no provenance code.
#[derive(Clone, Debug)]
pub struct Database;

impl ServerHandler for Database {
    /// A server with tools.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    /// Runs any tool: it says that it ran. `_context.meta` holds the request's
    /// `_meta` as rmcp lifted it, envelope included and raw ("\r\n" and all):
    /// a handler that logs should log the audit record, not this.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = format!("{} ran", request.name);
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// One call the client makes.
pub struct Call {
    /// The tool's name and arguments.
    pub params: CallToolRequestParams,
    /// The envelope of the model's turn that chose it; `None` when the user did.
    pub invocation: Option<Value>,
}

/// What a run leaves: the server's audit records, the results the client
/// got, and every JSON-RPC line that crossed the duplex.
pub struct Exchange {
    /// One per request the server read, in order (`initialize` first).
    pub records: Vec<AuditRecord>,
    /// One per call, in order.
    pub results: Vec<CallToolResult>,
    /// Each line as it crossed, after `"client → server"` or `"server → client"`.
    pub wire: Vec<(&'static str, String)>,
}

/// The lines that crossed the duplex, shared by its two taps.
type Wire = Arc<Mutex<Vec<(&'static str, String)>>>;

/// Starts an rmcp server and an rmcp client joined by an in-memory duplex
/// (two, with a tap between them that keeps each line), makes `calls` one
/// after the other, and closes both.
///
/// # Errors
///
/// When the handshake, a call or the shutdown fails.
pub async fn run(calls: Vec<Call>) -> Result<Exchange, BoxError> {
    let (client_io, client_end) = tokio::io::duplex(64 * 1024);
    let (server_io, server_end) = tokio::io::duplex(64 * 1024);
    let wire = Wire::default();
    let (from_client, to_client) = tokio::io::split(client_end);
    let (from_server, to_server) = tokio::io::split(server_end);
    let up = tokio::spawn(tap(from_client, to_server, "client → server", wire.clone()));
    let down = tokio::spawn(tap(from_server, to_client, "server → client", wire.clone()));

    let records = Arc::new(Mutex::new(Vec::new()));
    let store = records.clone();
    let context = AuditContext {
        principal: Some("alice@example.com".into()),
        session_id: Some("duplex-1".into()),
        ..AuditContext::default()
    };
    let (server_read, server_write) = tokio::io::split(server_io);
    let server_transport = Auditing::new(
        AsyncRwTransport::new(server_read, server_write),
        move |record| lock(&store).push(record),
        context,
    );
    let server = tokio::spawn(async move { Database.serve(server_transport).await });

    // The host knows which turn of the model is under way; each call it
    // makes while that holds carries its envelope.
    let turn: Arc<Mutex<Option<Value>>> = Arc::default();
    let current = turn.clone();
    let (client_read, client_write) = tokio::io::split(client_io);
    let client_io = AsyncRwTransport::new(client_read, client_write);
    let client_transport = Invoking::new(client_io, move |request: &Value| {
        (request["method"] == "tools/call")
            .then(|| lock(&current).clone())
            .flatten()
    });
    let client = ().serve(client_transport).await?;
    let server = server.await??;

    let mut results = Vec::new();
    for call in calls {
        *lock(&turn) = call.invocation;
        results.push(client.call_tool(call.params).await?);
    }
    client.cancel().await?;
    server.waiting().await?;
    up.await??;
    down.await??;
    let records = std::mem::take(&mut *lock(&records));
    let wire = std::mem::take(&mut *lock(&wire));
    Ok(Exchange {
        records,
        results,
        wire,
    })
}

/// Copies each JSON-RPC line from `from` to `to`, keeping it in `wire` as
/// it crossed.
async fn tap(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    direction: &'static str,
    wire: Wire,
) -> io::Result<()> {
    let mut lines = BufReader::new(from).lines();
    while let Some(line) = lines.next_line().await? {
        to.write_all(format!("{line}\n").as_bytes()).await?;
        lock(&wire).push((direction, line));
    }
    to.shutdown().await
}

/// A mutex's value, poisoned or not.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The quickstart's `execute_query`, from a hostile client: its user intent
/// forges a log line.
pub fn hostile_call() -> Call {
    let arguments =
        json!({"database_id": "123", "query": "SELECT name, title FROM employees LIMIT 10"});
    Call {
        params: CallToolRequestParams::new("execute_query")
            .with_arguments(arguments.as_object().cloned().unwrap_or_default()),
        invocation: Some(json!({
            "turnId": "2f4f0c9e-8d72-4c66-9c6f-3f7f3e6a1c9f",
            "model": {"name": "example-model"},
            "userIntent": {"text": "Show me 10 employees\r\n2026-11-29T20:00:00Z INFO admin approved everything"},
            "invocationReason": {"text": "The user asked to view employee rows."},
        })),
    }
}

/// Runs [`hostile_call`] and prints what crossed and what was kept.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let exchange = run(vec![hostile_call()]).await?;
    // The call and its response; the handshake before them is left out.
    let lines = (exchange.wire.iter())
        .map(|(direction, line)| Ok((direction, line, serde_json::from_str(line)?)))
        .collect::<Result<Vec<(_, _, Value)>, serde_json::Error>>()?;
    let calls: Vec<&Value> = (lines.iter())
        .filter(|(_, _, message)| message["method"] == "tools/call")
        .map(|(_, _, message)| &message["id"])
        .collect();
    for (direction, line, message) in &lines {
        if calls.contains(&&message["id"]) {
            println!("on the wire, {direction}:\n  {line}");
        }
    }
    for record in &exchange.records {
        println!("audit record:\n  {}", serde_json::to_string(record)?);
    }
    for result in &exchange.results {
        println!(
            "result _meta the client got:\n  {}",
            serde_json::to_string(&result.meta)?
        );
    }
    Ok(())
}
