// The gateway: forwards every MCP request to one upstream server. By default
// it keeps the audit envelope and the ui entry exactly as they came (AI-12,
// UI-8); with --redact-intent it removes userIntent.text on the way, and
// with --keep-unknown its policy keeps unknown envelope fields (made safe)
// instead of dropping them. It lifts legacy user_query / invocation_reason
// arguments into the envelope (AI-17) and writes one JSON line per message
// as it forwards it; the last line of each HTTP exchange has its `outcome`
// (with timings, or why the exchange was refused).
//
// It fails closed, message by message: what it cannot process (a body that
// is not JSON, a message the library refuses) is never forwarded as it
// came. A request gets a JSON-RPC error from the gateway itself, a
// notification is dropped, and the log says why without quoting a value.
// An invalid envelope is forwarded as sanitize repairs it. When the
// upstream fails or does not answer, each request gets a JSON-RPC error.
//
// Every wait is bounded: a body past --max-body-bytes is answered 413
// unread; the upstream has --upstream-timeout-ms to answer a request, and
// as long again between two pieces of its answer's body. A GET stream (the
// server's own messages) lasts as long as the client holds it. HTTP methods
// other than GET, POST and DELETE are answered 405.
//
// With --otlp <url> it also exports one span per request it forwards, its
// attributes those of mcp-provenance/otel, to an OpenTelemetry collector
// over OTLP/HTTP (e.g. http://127.0.0.1:4318/v1/traces).
//
//   node examples/prototype/gateway.mjs --upstream <url> --log <file> [--redact-intent] [--keep-unknown]
//     [--max-body-bytes <n>] [--upstream-timeout-ms <n>] [--otlp <url>]
// prints "listening on http://127.0.0.1:<port>/mcp" once it is ready.

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

import { createFilter } from "../../pkg/gateway.mjs";
import { otelAttributes } from "../../pkg/otel.mjs";
import { MAX_BODY_BYTES, readBody } from "./http.mjs";

const { values: options } = parseArgs({
  options: {
    upstream: { type: "string" },
    log: { type: "string" },
    "redact-intent": { type: "boolean", default: false },
    "keep-unknown": { type: "boolean", default: false },
    "max-body-bytes": { type: "string", default: String(MAX_BODY_BYTES) },
    "upstream-timeout-ms": { type: "string", default: "10000" },
    otlp: { type: "string" },
  },
});
const maxBodyBytes = Number(options["max-body-bytes"]);
const upstreamTimeoutMs = Number(options["upstream-timeout-ms"]);
const policy = { ...(options["redact-intent"] && { userIntent: "redact" }), ...(options["keep-unknown"] && { unknownFields: "keep" }) };
// What the gateway does to each body: the package's filter, failing closed message by message.
const filter = createFilter({ policy: Object.keys(policy).length ? policy : undefined, liftLegacy: true });

/** JSON-RPC error codes the gateway answers with itself. */
const INVALID_REQUEST = -32600;
const UPSTREAM_FAILED = -32603;

/** The HTTP methods of the Streamable HTTP transport; any other is answered 405. */
const ALLOWED = ["GET", "POST", "DELETE"];

/** The headers a Streamable HTTP exchange needs, passed on in either direction. */
const PASSED = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization"];
const pick = (headers) => Object.fromEntries(PASSED.flatMap((name) => (headers.get?.(name) ?? headers[name]) ? [[name, headers.get?.(name) ?? headers[name]]] : []));

const error = (id, code, message, data) => ({ jsonrpc: "2.0", id: id ?? null, error: { code, message, ...(data && { data }) } });
const log = (entry) => appendFileSync(options.log, `${JSON.stringify(entry)}\n`);
const traces = options.otlp ? await tracing(options.otlp) : undefined;

/** A tracer exporting in batches to `url` over OTLP/HTTP, and its provider (to flush at exit). */
async function tracing(url) {
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { SpanKind, SpanStatusCode } = await import("@opentelemetry/api");
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "mcp-provenance-gateway" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  return { provider, tracer: provider.getTracer("mcp-provenance-gateway"), SpanKind, SpanStatusCode };
}

/** One span per forwarded request, over the exchange: named as the MCP conventions ask. */
function trace(records, startTime, outcome) {
  for (const { record } of records) {
    const span = traces.tracer.startSpan(record.tool ? `${record.method} ${record.tool}` : record.method, {
      kind: traces.SpanKind.SERVER, // the gateway receives the request
      startTime,
      attributes: otelAttributes(record),
    });
    if (outcome !== "answered") span.setStatus({ code: traces.SpanStatusCode.ERROR, message: outcome });
    span.end();
  }
}

/** Answers the client with the gateway's own JSON. */
function answer(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

/**
 * The chunks of an upstream body, until it ends, `idleMs` pass without one,
 * or the exchange is aborted; the last value returned says which:
 * "answered", "upstream-idle" or "aborted".
 */
async function* pieces(body, idleMs) {
  if (!body) return "answered";
  const reader = body.getReader();
  try {
    for (;;) {
      let timer;
      const idle = idleMs === undefined ? new Promise(() => {}) : new Promise((resolve) => { timer = setTimeout(resolve, idleMs, "idle"); });
      const next = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
      if (next === "idle") return "upstream-idle";
      if (next.done) return "answered";
      yield next.value;
    }
  } catch {
    return "aborted";
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** Drains `pieces` into `res` as they come, minding backpressure; the outcome. */
async function relay(chunks, res) {
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) return value;
    if (!res.write(value)) await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
  }
}

/** Collects `pieces` whole; the text and the outcome. */
async function collect(chunks) {
  const parts = [];
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) return { text: Buffer.concat(parts).toString("utf8"), outcome: value };
    parts.push(value);
  }
}

/** The JSON-RPC messages of an upstream's JSON answer, or undefined when it is not JSON. */
function messagesOf(text) {
  try {
    return text ? [JSON.parse(text)].flat() : [];
  } catch {
    return undefined;
  }
}

async function exchange(req, res) {
  const started = performance.now();
  const startTime = Date.now();
  if (!ALLOWED.includes(req.method)) {
    log({ outcome: "refused", refused: "method-not-allowed", httpMethod: req.method });
    return answer(res, 405, error(null, INVALID_REQUEST, "the gateway answers GET, POST and DELETE"), { allow: ALLOWED.join(", ") });
  }
  let body;
  try {
    body = req.method === "POST" ? await readBody(req, maxBodyBytes) : undefined;
  } catch (failure) {
    if (failure?.code !== "body-too-large") throw failure;
    log({ outcome: "refused", refused: "body-too-large", limit: maxBodyBytes });
    return answer(res, 413, error(null, INVALID_REQUEST, failure.message, { code: failure.code }), { connection: "close" });
  }
  let session = req.headers["mcp-session-id"] ?? null;
  const filtering = performance.now();
  const filtered = body === undefined || body === "" ? { forward: body, records: [], refused: [], replies: [] } : filter(body, { sessionId: session ?? undefined });
  const filterMs = performance.now() - filtering;
  // Logged as forwarded, before the upstream is asked: an answer that never comes cannot lose a line.
  for (const { id, code } of filtered.refused) log({ session, refused: code, id });
  for (const { message, record, changes } of filtered.records) log({ session, message, diagnostics: record.diagnostics, changes });
  const methods = [...new Set(filtered.records.map((r) => r.message.method))];
  if ("reject" in filtered) {
    log({ session, outcome: "refused", methods, filterMs, roundTripMs: performance.now() - started });
    res.writeHead(filtered.status, { "content-type": "application/json" });
    return res.end(filtered.reject || undefined);
  }
  const { replies } = filtered;
  const requests = filtered.records.filter((r) => r.message.id !== undefined).map((r) => r.message);
  const batch = filtered.forward?.startsWith("[");

  let outcome = "answered";
  // The upstream's share of the round trip: from asking to the end of its answer.
  const sent = performance.now();
  // The upstream exchange ends with the client's: nothing is left waiting for a client that left.
  const abort = new AbortController();
  res.once("close", () => abort.abort("client-closed"));
  const timer = setTimeout(() => abort.abort("upstream-timeout"), upstreamTimeoutMs);
  let upstream;
  try {
    upstream = await fetch(options.upstream, { method: req.method, headers: pick(req.headers), body: filtered.forward, signal: abort.signal });
  } catch (failure) {
    outcome = typeof failure === "string" ? failure : "upstream-failed";
  } finally {
    clearTimeout(timer);
  }
  // An initialize request learns its session from the answer.
  session = upstream?.headers.get("mcp-session-id") ?? session;
  const idleMs = req.method === "GET" ? undefined : upstreamTimeoutMs;
  const stream = upstream?.headers.get("content-type")?.startsWith("text/event-stream");
  if (upstream && (replies.length === 0 || stream)) {
    // The upstream's answer as it comes; the gateway's refusals as events of the same stream.
    res.writeHead(upstream.status, pick(upstream.headers));
    for (const reply of replies) res.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
    outcome = await relay(pieces(upstream.body, idleMs), res);
    res.end();
  } else if (upstream) {
    // A JSON answer (or none, for notifications): the refusals join it.
    const { text, outcome: read } = await collect(pieces(upstream.body, idleMs));
    const answered = read === "answered" ? messagesOf(text) : undefined;
    outcome = answered ? read : read === "answered" ? "upstream-not-json" : read;
    const all = [...(answered ?? failed(requests)), ...replies];
    answer(res, 200, batch ? all : all.length === 1 ? all[0] : all);
  } else {
    const all = [...failed(requests), ...replies];
    answer(res, all.length ? 200 : 502, batch ? all : all[0]);
  }
  log({ session, outcome, methods, filterMs, upstreamMs: performance.now() - sent, roundTripMs: performance.now() - started });
  if (traces) trace(filtered.records, startTime, outcome);
}

/** The gateway's own answer to each request the upstream did not answer. */
const failed = (requests) => requests.map((m) => error(m.id, UPSTREAM_FAILED, "the upstream server did not answer"));

const http = createServer((req, res) => {
  exchange(req, res).catch((failure) => {
    // A fault of the gateway itself (its log unwritable, say): the client is answered, nothing
    // more is forwarded, and the gateway serves on.
    if (res.headersSent) res.destroy();
    else answer(res, 500, error(null, UPSTREAM_FAILED, "the gateway failed"));
    const why = failure?.code ?? failure?.name ?? "error";
    try {
      log({ outcome: "failed", failed: why });
    } catch {
      console.error(`gateway: an exchange failed (${why}) and could not be logged`);
    }
  });
});

http.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
process.on("SIGTERM", () => {
  http.closeAllConnections();
  // Spans still batched are sent before the gateway exits.
  http.close(() => Promise.resolve(traces?.provider.shutdown()).finally(() => process.exit(0)));
});
