// The gateway: forwards every MCP request to one upstream server, with the
// package's HTTP middleware (mcp-provenance/http) in front of it. By default
// it keeps the audit envelope and the ui entry exactly as they came (AI-12,
// UI-8), and forwards the upstream's answer as it is (no echo: an
// intermediary passes the server's answer on); with --redact-intent it
// removes userIntent.text on the way, and with --keep-unknown its policy
// keeps unknown envelope fields (made safe) instead of dropping them. It
// lifts legacy user_query / invocation_reason arguments into the envelope
// (AI-17) and writes one JSON line per message as it forwards it; the last
// line of each HTTP exchange has its `outcome` (with timings, or why the
// exchange was refused). A request's session is recorded as witnessed only
// when the upstream issued it (AI-10): the middleware remembers the
// Mcp-Session-Id of the upstream's answers, and a client's header naming any
// other goes on, but is the client's word alone.
//
// It fails closed, message by message: what it cannot process (a body that
// is not JSON, a message the library refuses) is never forwarded as it
// came. A request gets a JSON-RPC error from the middleware, a notification
// is dropped, and the log says why without quoting a value. An invalid
// envelope is forwarded as sanitize repairs it. When the upstream fails or
// does not answer, each request gets a JSON-RPC error.
//
// What only a proxy does is left here. It guards against DNS rebinding, as
// the Streamable HTTP transport asks of a server: a request whose Host is not
// in --allowed-hosts, or whose Origin (when it has one) is not in
// --allowed-origins, is answered 403 and not forwarded. Both default to
// loopback: the hosts 127.0.0.1, localhost and [::1], the origins http(s)://
// on them; an entry without a port allows any. What the upstream needs to
// check for itself goes along: the Origin as received, and the client's Host
// in X-Forwarded-Host, X-Forwarded-Proto and Forwarded (the upstream's own
// Host stays its own).
//
// Every wait is bounded, except one the client chooses: a body past
// --max-body-bytes is answered 413 by the middleware, unread; the upstream
// has --upstream-timeout-ms (10 s) to send its answer's headers, and as long
// again between two pieces of a JSON answer. No answer is held whole: the
// filter's own replies to the refused requests of a batch join the
// upstream's JSON answer as it streams through, or come as events of its
// event stream (the middleware joins them). An SSE answer (a POST's or a
// GET's) reaches the client as it comes, its status and headers at once, and
// lasts as long as the client holds it: the server may be waiting on the
// client, e.g. an elicitation on a person. --stream-idle-ms bounds the time
// between two of its pieces. HTTP methods other than GET, POST and DELETE are
// answered 405.
//
// With --otlp <url> it also exports one span per request it forwards, its
// attributes those of mcp-provenance/otel, to an OpenTelemetry collector
// over OTLP/HTTP (e.g. http://127.0.0.1:4318/v1/traces).
//
//   node examples/prototype/gateway.mjs --upstream <url> --log <file> [--redact-intent] [--keep-unknown]
//     [--allowed-hosts <host[:port],...>] [--allowed-origins <scheme://host[:port],...>]
//     [--max-body-bytes <n>] [--upstream-timeout-ms <n>] [--stream-idle-ms <n>] [--otlp <url>]
// prints "listening on http://127.0.0.1:<port>/mcp" once it is ready.

import { appendFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

import { exchangeOf, provenanceMiddleware } from "mcp-provenance/http";
import { otelAttributes, parentSpanContext } from "mcp-provenance/otel";
import { MAX_BODY_BYTES } from "./http.mjs";
/** The hosts a local server answers to: loopback, by any name. */
const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

const { values: options } = parseArgs({
  options: {
    upstream: { type: "string" },
    log: { type: "string" },
    "redact-intent": { type: "boolean", default: false },
    "keep-unknown": { type: "boolean", default: false },
    "max-body-bytes": { type: "string", default: String(MAX_BODY_BYTES) },
    "upstream-timeout-ms": { type: "string", default: "10000" },
    "stream-idle-ms": { type: "string" },
    "allowed-hosts": { type: "string", default: LOOPBACK.join(",") },
    "allowed-origins": { type: "string", default: LOOPBACK.flatMap((host) => [`http://${host}`, `https://${host}`]).join(",") },
    otlp: { type: "string" },
  },
});
const maxBodyBytes = Number(options["max-body-bytes"]);
const upstreamTimeoutMs = Number(options["upstream-timeout-ms"]);
/** The longest wait between two pieces of an SSE answer; undefined: as long as the client holds it. */
const streamIdleMs = options["stream-idle-ms"] === undefined ? undefined : Number(options["stream-idle-ms"]);
const upstreamUrl = new URL(options.upstream);
const policy = { ...(options["redact-intent"] && { userIntent: "redact" }), ...(options["keep-unknown"] && { unknownFields: "keep" }) };
// What the gateway does to each body: the package's filter, failing closed message by message, in
// the package's middleware; the upstream's answer goes back as it came (AI-12).
const provenance = provenanceMiddleware({ policy: Object.keys(policy).length ? policy : undefined, liftLegacy: true, maxBodyBytes, echo: false });
/** JSON-RPC error codes the gateway answers with itself. */
const INVALID_REQUEST = -32600;
const UPSTREAM_FAILED = -32603;

/** The HTTP methods of the Streamable HTTP transport; any other is answered 405. */
const ALLOWED = ["GET", "POST", "DELETE"];

/** The headers of a Streamable HTTP request the upstream reads, passed on as they came. */
const REQUEST_HEADERS = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization", "origin"];
/** The headers of its answer the client reads, passed back as they came. */
const ANSWER_HEADERS = ["content-type", "mcp-session-id", "mcp-protocol-version", "cache-control", "www-authenticate", "allow", "retry-after"];
const pick = (headers, names = ANSWER_HEADERS) => Object.fromEntries(names.flatMap((name) => (headers.get?.(name) ?? headers[name]) ? [[name, headers.get?.(name) ?? headers[name]]] : []));

/** A host (name, IPv4 or [IPv6]) and an optional port, as a Host header or an allow-list entry has them. */
const HOST = /^(\[[0-9a-f:.]+\]|[^\s:/?#@[\]]+)(?::(\d{1,5}))?$/i;
/** A serialized origin: scheme://host[:port], as an Origin header or an allow-list entry has it. */
const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/(\[[0-9a-f:.]+\]|[^\s:/?#@[\]]+)(?::(\d{1,5}))?\/?$/i;
const DEFAULT_PORTS = { http: "80", https: "443" };

/** The entries of a comma list, each parsed by `pattern`; a malformed entry stops the gateway. */
function allowList(option, pattern) {
  return options[option].split(",").map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const match = pattern.exec(entry);
    if (!match) throw new Error(`--${option}: ${JSON.stringify(entry)} is not ${pattern === HOST ? "host[:port]" : "scheme://host[:port]"}`);
    return match.slice(1).map((part) => part?.toLowerCase());
  });
}
const allowedHosts = allowList("allowed-hosts", HOST);
const allowedOrigins = allowList("allowed-origins", ORIGIN);

/** Whether a Host header names an allowed host (on an allowed port, where the entry has one). */
function hostAllowed(value) {
  const [, host, port] = HOST.exec(value ?? "")?.map((part) => part?.toLowerCase()) ?? [];
  return host !== undefined && allowedHosts.some(([name, only]) => name === host && (only === undefined || only === (port ?? "80")));
}

/** Whether an Origin header is an allowed origin (its port compared where the entry has one). */
function originAllowed(value) {
  const [, scheme, host, port] = ORIGIN.exec(value)?.map((part) => part?.toLowerCase()) ?? [];
  return scheme !== undefined && allowedOrigins.some(([s, name, only]) => s === scheme && name === host && (only === undefined || only === (port ?? DEFAULT_PORTS[scheme])));
}

/** A value of a Forwarded parameter: a token as it is, anything else quoted (RFC 7239). */
const forwardedValue = (value) => (/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(value) ? value : `"${value.replace(/["\\]/g, "\\$&")}"`);

/** The headers the upstream is asked with: the client's it reads, and who the client asked as. */
function upstreamHeaders(req) {
  const address = req.socket.remoteAddress ?? "unknown";
  return {
    ...pick(req.headers, REQUEST_HEADERS),
    "x-forwarded-host": req.headers.host,
    "x-forwarded-proto": "http",
    forwarded: `for=${forwardedValue(address.includes(":") ? `[${address}]` : address)};host=${forwardedValue(req.headers.host)};proto=http`,
  };
}

/**
 * Asks the upstream; resolves once its answer's headers came, with its status,
 * headers and body (a Readable), or rejects with the signal's reason once it
 * aborts. node:http rather than fetch: fetch cuts a body after 300 s without
 * a byte, and the SSE answer of a server waiting on a person must not be cut.
 * A kept-alive connection that the upstream closed (its keep-alive timeout)
 * just as it was reused fails before any answer: the request is sent once
 * more, on a new connection.
 */
function ask(method, headers, body, signal, retried = false) {
  return new Promise((resolve, reject) => {
    const send = upstreamUrl.protocol === "https:" ? httpsRequest : httpRequest;
    const length = body === undefined ? {} : { "content-length": Buffer.byteLength(body) };
    let answered = false;
    const req = send(upstreamUrl, { method, headers: { ...headers, ...length }, signal }, (answer) => {
      answered = true;
      const entries = Object.entries(answer.headers).flatMap(([name, value]) => [value].flat().map((one) => [name, one]));
      resolve({ status: answer.statusCode, headers: new Headers(entries), body: answer });
    });
    req.on("error", (failure) => {
      if (signal.aborted) reject(signal.reason);
      else if (!answered && req.reusedSocket && failure.code === "ECONNRESET" && !retried) resolve(ask(method, headers, body, signal, true));
      else reject(failure);
    });
    req.end(body);
  });
}

const error = (id, code, message, data) => ({ jsonrpc: "2.0", id: id ?? null, error: { code, message, ...(data && { data }) } });
const log = (entry) => appendFileSync(options.log, `${JSON.stringify(entry)}\n`);
/** A message's line from the filter (its account, and the message as forwarded), with the session: written as it came. */
const logLine = (session, line) => appendFileSync(options.log, `{"session":${JSON.stringify(session)},${line.slice(1)}\n`);
const traces = options.otlp ? await tracing(options.otlp) : undefined;

/** A tracer exporting in batches to `url` over OTLP/HTTP, and its provider (to flush at exit). */
async function tracing(url) {
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace: api } = await import("@opentelemetry/api");
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "mcp-provenance-gateway" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  return { provider, tracer: provider.getTracer("mcp-provenance-gateway"), ROOT_CONTEXT, SpanKind, SpanStatusCode, api };
}

/**
 * One span per forwarded request, over the exchange: named as the MCP
 * conventions ask, and the child of the caller's span when the request's
 * `traceparent` (checked by the core, COR-4) names one.
 */
function trace(accounts, startTime, outcome) {
  for (const { record } of accounts) {
    const parent = parentSpanContext(record);
    const span = traces.tracer.startSpan(record.tool ? `${record.method} ${record.tool}` : record.method, {
      kind: traces.SpanKind.SERVER, // the gateway receives the request
      startTime,
      attributes: { ...otelAttributes(record), "network.protocol.name": "http", "network.transport": "tcp" },
    }, parent && traces.api.setSpanContext(traces.ROOT_CONTEXT, parent));
    if (outcome !== "answered") {
      span.setAttribute("error.type", outcome);
      span.setStatus({ code: traces.SpanStatusCode.ERROR, message: outcome });
    }
    span.end();
  }
}

/** Answers the client with the gateway's own JSON. */
function answer(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

/**
 * The chunks of an upstream body (a Readable), until it ends, `idleMs` pass
 * without one (never, when undefined), or the exchange is aborted; the last
 * value returned says which: "answered", "upstream-idle" or "aborted".
 */
async function* pieces(body, idleMs) {
  if (!body) return "answered";
  const chunks = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer;
      const idle = idleMs === undefined ? new Promise(() => {}) : new Promise((resolve) => { timer = setTimeout(resolve, idleMs, "idle"); });
      const next = await Promise.race([chunks.next(), idle]).finally(() => clearTimeout(timer));
      if (next === "idle") return "upstream-idle";
      if (next.done) return "answered";
      yield next.value;
    }
  } catch {
    return "aborted";
  } finally {
    body.destroy();
  }
}

/** Drains `pieces` into `res` as they come, minding backpressure; the outcome. */
async function relay(chunks, res) {
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) return value;
    if (!res.write(value)) await drained(res);
  }
}

/** Resolves once `res` drains or closes, leaving no listener behind: a long answer waits thousands of times. */
function drained(res) {
  return new Promise((resolve) => {
    const settle = () => {
      res.off("drain", settle).off("close", settle);
      resolve();
    };
    res.on("drain", settle).on("close", settle);
  });
}

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;

/** Where the first byte of `bytes` past JSON whitespace is; -1 when there is none. */
function pastWhitespace(bytes) {
  return bytes.findIndex((byte) => byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d);
}

/**
 * Reads `chunks` to the first byte past JSON whitespace: the piece that
 * holds it, from it on (the whitespace before it dropped), or, when they end
 * first, their outcome.
 */
async function pastWhitespaceIn(chunks) {
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) return { outcome: value };
    const at = pastWhitespace(value);
    if (at >= 0) return { piece: value.subarray(at) };
  }
}

/** Yields `piece`, then the rest of `chunks` as they come; their outcome. */
async function* passOn(piece, chunks) {
  yield piece;
  for (;;) {
    const { value, done } = await chunks.next();
    if (done) return value;
    yield value;
  }
}

/** The gateway's own messages (texts) as one JSON answer: a batch when the request was one, or when there are several. */
const asAnswer = (messages, batch) => (batch || messages.length !== 1 ? `[${messages.join(",")}]` : messages[0]);

/** The gateway's own answer (text) to each request the upstream did not answer, by the id's text. */
const failed = (ids) => ids.map((id) => `{"jsonrpc":"2.0","id":${id},"error":{"code":${UPSTREAM_FAILED},"message":"the upstream server did not answer"}}`);

/**
 * Answers the client with the upstream's answer as it comes, through the
 * middleware, which joins the filter's replies to it (as events of an event
 * stream, or items of a JSON answer). With replies to join, a JSON answer
 * must begin as a JSON-RPC answer does: one that does not, or that ends
 * before it began, is no answer, and the gateway answers each request that
 * went on itself. The outcome.
 */
async function answerFrom(res, upstream, seen) {
  const stream = upstream.headers.get("content-type")?.startsWith("text/event-stream");
  // An SSE answer may rightly wait long (on a person, say); a JSON answer comes in one go.
  const chunks = pieces(upstream.body, stream ? streamIdleMs : upstreamTimeoutMs);
  res.writeHead(upstream.status, pick(upstream.headers));
  let outcome;
  if (stream) res.flushHeaders(); // the client learns of its stream now, not at its first event
  if (stream || !seen.filtered?.replies.length) {
    outcome = await relay(chunks, res);
  } else {
    const start = await pastWhitespaceIn(chunks);
    const begins = start.piece === undefined ? start.outcome === "answered" : start.piece[0] === OPEN_ARRAY || start.piece[0] === OPEN_OBJECT;
    if (begins) {
      outcome = start.piece === undefined ? start.outcome : await relay(passOn(start.piece, chunks), res);
    } else {
      await chunks.return();
      res.write(asAnswer(failed(seen.awaiting), seen.batch));
      outcome = start.piece === undefined ? start.outcome : "upstream-not-json";
    }
  }
  res.end();
  return outcome;
}

/** The methods of the messages of an exchange that were recorded. */
const methodsOf = (seen) => [...new Set(seen.accounts.flatMap((a) => (a.record ? [a.record.method] : [])))];

/** The last line of an exchange the middleware answered itself: why. */
function refused(seen, started) {
  if (seen.refused === "body-too-large") return log({ outcome: "refused", refused: "body-too-large", limit: maxBodyBytes });
  // Nothing filtered: the client left while its body came, or the middleware could not serve.
  if (seen.filtered === undefined) return log({ outcome: "failed", failed: seen.refused ?? "client-closed" });
  log({ session: seen.sessionId ?? null, outcome: "refused", refused: seen.refused, methods: methodsOf(seen), filterMs: seen.filterMs, roundTripMs: performance.now() - started });
}

/** Reads the body the middleware hands on: the filter's bytes. */
async function forwardedBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function exchange(req, res) {
  const started = performance.now();
  const startTime = Date.now();
  // Before anything else: a page that rebound its name to this address is answered, and nothing more.
  const unwelcome = !hostAllowed(req.headers.host) ? "host" : req.headers.origin !== undefined && !originAllowed(req.headers.origin) ? "origin" : undefined;
  if (unwelcome) {
    req.resume();
    log({ outcome: "refused", refused: `${unwelcome}-not-allowed` });
    return answer(res, 403, error(null, INVALID_REQUEST, `the request's ${unwelcome === "host" ? "Host" : "Origin"} is not allowed`));
  }
  if (!ALLOWED.includes(req.method)) {
    log({ outcome: "refused", refused: "method-not-allowed", httpMethod: req.method });
    return answer(res, 405, error(null, INVALID_REQUEST, "the gateway answers GET, POST and DELETE"), { allow: ALLOWED.join(", ") });
  }
  // The middleware reads, filters and hands on the body (with the headers that say how a server
  // would decode it: refused unless UTF-8 JSON, so the upstream reads what was checked), or
  // answers the client itself and ends the exchange.
  const handedOn = await new Promise((resolve) => {
    res.once("close", () => resolve(false));
    provenance(req, res, () => resolve(true));
  });
  const seen = exchangeOf(req);
  // Logged as forwarded (or refused), before the upstream is asked: an answer that never comes cannot lose a line.
  for (const line of seen.filtered?.lines ?? []) logLine(seen.sessionId ?? null, line);
  if (!handedOn) return refused(seen, started);
  const body = req.method === "POST" ? await forwardedBody(req) : undefined;

  let outcome = "answered";
  // The upstream's share of the round trip: from asking to the end of its answer.
  const sent = performance.now();
  // The upstream exchange ends with the client's: nothing is left waiting for a client that left.
  const abort = new AbortController();
  res.once("close", () => abort.abort("client-closed"));
  const timer = setTimeout(() => abort.abort("upstream-timeout"), upstreamTimeoutMs);
  let upstream;
  try {
    upstream = await ask(req.method, upstreamHeaders(req), body, abort.signal);
  } catch (failure) {
    outcome = typeof failure === "string" ? failure : "upstream-failed";
  } finally {
    clearTimeout(timer);
  }
  if (upstream) {
    outcome = await answerFrom(res, upstream, seen);
  } else {
    // The middleware joins the replies to the gateway's own answer, as to the upstream's.
    res.writeHead(seen.awaiting.length ? 200 : 502, { "content-type": "application/json" });
    res.end(seen.awaiting.length ? asAnswer(failed(seen.awaiting), seen.batch) : undefined);
  }
  // The session the upstream issued in its answer, or the one the request named that it issued.
  log({ session: seen.sessionId ?? null, outcome, methods: methodsOf(seen), filterMs: seen.filterMs ?? 0, upstreamMs: performance.now() - sent, roundTripMs: performance.now() - started });
  if (traces) trace(seen.accounts.filter((a) => a.record && a.refused === undefined), startTime, outcome);
}

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
