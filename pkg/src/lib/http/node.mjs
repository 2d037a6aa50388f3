// The middleware for Node's http server, and Express and Connect on it:
// `(req, res, next)`, before any body parser. A POST's body is read (up to a
// bound), filtered and audited before the app sees anything; then `req`
// reads as if the forwarded bytes were the body that came, whoever reads it
// (`for await`, `req.on("data")`, raw-body and express.json(), the SDK's
// transports through @hono/node-server, which takes `req.rawBody`), and
// `res` carries the app's answer through the way back (answer.mjs).
import { Answer } from "./answer.mjs";
import { admit, Exchange, exchanges, failedHere, settingsOf } from "./exchange.mjs";
import { alreadyRead, failed, tooLarge } from "./refusals.mjs";

/**
 * Provenance in front of an MCP app on Node's http server: see
 * `provenanceMiddleware` in http.d.ts.
 *
 * ```js
 * import { createServer } from "node:http";
 * import { provenanceMiddleware } from "mcp-provenance/http";
 *
 * const provenance = provenanceMiddleware({ policy: { userIntent: "redact" } });
 * const server = createServer((req, res) => provenance(req, res, async () => {
 *   let body = "";
 *   for await (const chunk of req) body += chunk; // the forwarded bytes, as the app reads them
 *   res.writeHead(200, { "content-type": "application/json" }).end(`{"jsonrpc":"2.0","id":1,"result":{"read":${JSON.stringify(body)}}}`);
 * }));
 * await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
 * const answer = await fetch(`http://127.0.0.1:${server.address().port}/mcp`, {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"text":"secret"}}}}}',
 * });
 * console.assert(!(await answer.text()).includes("secret"));
 * server.close();
 * ```
 */
export function provenanceMiddleware(options) {
  const settings = settingsOf(options);
  return function provenance(req, res, next) {
    serve(settings, req, res, next).catch((failure) => {
      // A fault of the middleware's own (a `principal` that threw, say): the app is not run.
      failedHere(failure, exchanges.get(req));
      if (res.headersSent) res.destroy();
      else answer(res, 500, failed());
    });
  };
}

/** One exchange: the body filtered and audited, then handed on to `next` with the answer watched; or answered here. */
async function serve(settings, req, res, next) {
  const asked = req.headers["mcp-session-id"];
  const exchange = new Exchange(settings, asked, settings.principal ? settings.principal(req) : authenticated(req));
  exchanges.set(req, exchange);
  if (req.method !== "POST") {
    // A GET stream, a DELETE and any other method go to the app as they came.
    watch(res, settings, exchange, req.method, asked, false);
    return next();
  }
  if (req.readableDidRead || req.readableEnded || req.body !== undefined) {
    exchange.refused = "body-already-read";
    return answer(res, 500, alreadyRead());
  }
  const body = await readBody(req, settings.maxBodyBytes);
  // The client left before its body came whole: there is no one to answer.
  if (body === GONE) return undefined;
  if (body === undefined) {
    exchange.refused = "body-too-large";
    // The rest of the body is not kept: the connection cannot carry another request.
    return answer(res, 413, tooLarge(settings.maxBodyBytes), { connection: "close" });
  }
  const refusal = await admit(settings, exchange, body, req.headers);
  if (refusal !== undefined) return answer(res, refusal.status, refusal.body);
  rearm(req, exchange.filtered.forward);
  watch(res, settings, exchange, req.method, asked, true);
  return next();
}

/**
 * The identity the stack authenticated: `req.auth.clientId`, as the MCP
 * SDK's bearer authentication (`requireBearerAuth`) sets it. Never a header.
 */
function authenticated(req) {
  const clientId = req.auth?.clientId;
  return typeof clientId === "string" && clientId !== "" ? clientId : undefined;
}

/** What `readBody` gives for a request whose client left before its body came whole. */
const GONE = Symbol("gone");

/**
 * node:stream, loaded with the first body the middleware reads (a Fetch-only
 * user never loads it), and kept as the module once loaded: awaiting it on
 * every request would cost each one a turn of the microtask queue.
 */
let streams;
const stream = async () => (streams ??= await import("node:stream"));

/**
 * The body of `req` as the bytes that came (a Buffer), once its read side is
 * over (ended, and closed where it closes: see `rearm`); undefined once it is
 * past `limit` bytes, by its Content-Length (nothing read) or as it comes
 * (the rest then read and dropped, so that the 413 reaches a client still
 * sending); GONE when the client leaves first.
 */
async function readBody(req, limit) {
  if (Number(req.headers["content-length"]) > limit) return undefined;
  const { finished } = streams ?? (await stream());
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    const data = (chunk) => {
      size += chunk.length;
      if (size <= limit) return chunks.push(chunk);
      chunks.length = 0;
      settle(undefined);
      req.resume();
    };
    const over = finished(req, { writable: false }, (failure) => settle(failure ? GONE : Buffer.concat(chunks, size)));
    const settle = (body) => {
      req.off("data", data);
      over();
      resolve(body);
    };
    req.on("data", data);
  });
}

/** The request headers the app reads differently once the body is the filter's: its length, and how it is sent. */
const RESTATED = new Set(["content-length", "transfer-encoding", "accept-encoding"]);

/**
 * Makes `req` read as if `forward` (the filter's bytes) were the body that
 * came: a read side of its own, holding them and ended, in place of the one
 * the middleware read to its end; `rawBody`, where frameworks look for a body
 * already read (@hono/node-server, under the MCP SDK's transports), the same
 * bytes; and headers that say so: their `content-length`, no
 * `transfer-encoding`, and no `accept-encoding` (the middleware reads the
 * answer, so it must come as it is). Node's streams keep a readable's state
 * in `_readableState`, which stream consumers (raw-body among them) read too;
 * the one read to its end is over (`readBody` waits for its close), so that
 * nothing Node still had to do to it lands on the new one.
 */
function rearm(req, forward) {
  // Loaded by `readBody`, which read the body before.
  const { Readable } = streams;
  const bytes = Buffer.isBuffer(forward) ? forward : Buffer.from(forward.buffer, forward.byteOffset, forward.byteLength);
  // Its state alone: what is pushed is pushed on `req`, so that what Node does next is done to `req`.
  req._readableState = new Readable({ highWaterMark: req.readableHighWaterMark })._readableState;
  req._read = () => {};
  if (bytes.length > 0) req.push(bytes);
  req.push(null);
  req.rawBody = bytes;
  const length = String(bytes.length);
  // Node makes `headers` and `headersDistinct` from the raw headers when first read, counting them as they came: read both first.
  const restated = [req.headers, req.headersDistinct];
  const raw = [];
  for (let at = 0; at < req.rawHeaders.length; at += 2) {
    if (!RESTATED.has(req.rawHeaders[at].toLowerCase())) raw.push(req.rawHeaders[at], req.rawHeaders[at + 1]);
  }
  req.rawHeaders = [...raw, "content-length", length];
  for (const headers of restated) {
    if (headers === undefined) continue;
    // Deleting a header drops V8's fast layout for the object the app reads next: only those that go are deleted.
    for (const name of RESTATED) if (name !== "content-length" && name in headers) delete headers[name];
    headers["content-length"] = headers === req.headers ? length : [length];
  }
}

/** Answers with `status` and `body` (JSON text, or none), and `headers` besides. */
function answer(res, status, body, headers = {}) {
  const typed = body ? { "content-type": "application/json" } : {};
  res.writeHead(status, { ...headers, ...typed, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** Statuses whose answer has no body, nor a length. */
const BODILESS = new Set([204, 304]);

/**
 * Watches `res` for the app's answer: what its head says of sessions (for
 * every method), and, for a body that went on (`forwarded`), its bytes on the
 * way back as an `Answer` makes them. It takes the place of `writeHead`,
 * `write`, `end` and `flushHeaders`, each going on to the method it replaced,
 * as a compression middleware does; an answer that goes on as it comes (no
 * echo, no replies) costs a test on each call.
 */
function watch(res, settings, exchange, method, asked, forwarded) {
  const original = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
  let decided = false;
  let answered;
  let mode = "pass";
  /** Whether the app gave its head (for an answer held, the client's is sent with the body). */
  let headed = false;
  let message;
  /** Whether the middleware answered in the app's stead: what the app still sends is dropped. */
  let over = false;

  /**
   * How the answer goes on, decided once from its status and headers (those
   * `given` to writeHead over those set before); what it says of sessions, learnt.
   */
  function decide(status, given) {
    decided = true;
    exchange.sessionId = settings.sessions.learn(method, asked, status, headerOf(res, "mcp-session-id", given)) ?? exchange.sessionId;
    if (!forwarded) return;
    answered = new Answer(settings, exchange);
    mode = answered.begin(status, headerOf(res, "content-type", given));
  }

  /**
   * Sends a step of the answer (answer.mjs), ending the exchange with it when
   * it is the last (`closing`) or the middleware's own; whether the client's
   * side takes more now.
   */
  function send({ pieces, over: ended, head }, callback, closing = false) {
    if (head !== undefined && mode === "held") {
      // An answer held whole goes in one write, its head with it.
      const [body] = pieces;
      if (head.own) for (const name of ["content-length", "content-type", "content-encoding"]) res.removeHeader(name);
      if (head.own && body.length > 0) res.setHeader("content-type", "application/json");
      if (!BODILESS.has(head.status)) res.setHeader("content-length", body.length);
      original.writeHead.call(res, head.status, head.own ? undefined : message);
      over = true;
      original.end.call(res, body.length > 0 ? body : undefined, callback);
      return true;
    }
    let flowing = true;
    for (const piece of pieces) if (piece.length > 0) flowing = original.write.call(res, piece);
    if (ended || closing) {
      over = true;
      original.end.call(res, callback);
    } else if (callback) {
      process.nextTick(callback);
    }
    return flowing;
  }

  res.writeHead = function writeHead(status, reason, headers) {
    if (typeof reason !== "string") [reason, headers] = [undefined, reason];
    if (!decided) decide(status, headers);
    if (mode === "pass") return original.writeHead.call(this, status, reason, headers);
    if (headers !== undefined) absorb(this, headers);
    if (headed) throw Object.assign(new Error("Cannot write headers after they are sent to the client"), { code: "ERR_HTTP_HEADERS_SENT" });
    headed = true;
    message = reason;
    if (mode === "held") {
      this.statusCode = status;
      return this;
    }
    this.removeHeader("content-length");
    if (mode === "join") this.setHeader("content-type", "application/json");
    original.writeHead.call(this, answered.status, reason);
    send({ pieces: answered.opening() });
    return this;
  };

  res.write = function write(chunk, encoding, callback) {
    if (!decided) decide(this.statusCode);
    if (mode === "pass") return original.write.call(this, chunk, encoding, callback);
    if (typeof encoding === "function") [encoding, callback] = [undefined, encoding];
    if (!headed) this.writeHead(this.statusCode);
    if (!over) return send(answered.write(bytesOf(chunk, encoding)), callback);
    if (callback) process.nextTick(callback);
    return true;
  };

  res.end = function end(chunk, encoding, callback) {
    if (!decided) decide(this.statusCode);
    if (mode === "pass") return original.end.call(this, chunk, encoding, callback);
    if (typeof chunk === "function") [chunk, encoding, callback] = [undefined, undefined, chunk];
    else if (typeof encoding === "function") [encoding, callback] = [undefined, encoding];
    if (!headed) this.writeHead(this.statusCode);
    if (!over && chunk !== undefined && chunk !== null) send(answered.write(bytesOf(chunk, encoding)));
    if (!over) send(answered.end(), callback, true);
    else if (callback) process.nextTick(callback);
    return this;
  };

  res.flushHeaders = function flushHeaders() {
    if (!decided) decide(this.statusCode);
    // An answer held whole has no head to send before it is read.
    if (mode !== "held") original.flushHeaders.call(this);
  };
}

/** A chunk the app writes, as bytes: Node's `write` takes text (in an encoding) or bytes. */
function bytesOf(chunk, encoding) {
  if (typeof chunk === "string") return Buffer.from(chunk, encoding ?? "utf8");
  if (chunk instanceof Uint8Array) return chunk;
  throw Object.assign(new TypeError("the chunk must be a string or a Uint8Array"), { code: "ERR_INVALID_ARG_TYPE" });
}

/**
 * Calls `visit(name, value)` for each header given to `writeHead`: an object
 * (its undefined values skipped), or raw `[name, value, ...]` or
 * `[[name, value], ...]` lists. A walk, not a list of pairs: it runs on every
 * answer's head, and the pairs would be made only to be dropped.
 */
function eachPair(headers, visit) {
  if (!Array.isArray(headers)) {
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      if (value !== undefined) visit(name, value);
    }
  } else if (Array.isArray(headers[0])) {
    for (const [name, value] of headers) visit(name, value);
  } else {
    for (let at = 0; at < headers.length; at += 2) visit(headers[at], headers[at + 1]);
  }
}

/**
 * The answer's header `name` (lowercase): as `given` to writeHead, over what
 * was set before; undefined when given twice (which would a reader believe?).
 */
function headerOf(res, name, given) {
  let count = 0;
  let found;
  if (given !== undefined) {
    eachPair(given, (key, value) => {
      if (String(key).toLowerCase() !== name) return;
      count += 1;
      found = value;
    });
  }
  if (count === 0) return res.getHeader(name);
  return count === 1 ? found : undefined;
}

/**
 * The headers given to `writeHead` put with those set before, as Node does
 * when both are given, so that the answer's head can be changed in one place.
 */
function absorb(res, headers) {
  const byName = new Map();
  eachPair(headers, (name, value) => {
    const key = String(name).toLowerCase();
    const entry = byName.get(key) ?? { name, values: [] };
    entry.values.push(value);
    byName.set(key, entry);
  });
  for (const { name, values } of byName.values()) res.setHeader(name, values.length === 1 ? values[0] : values);
}
