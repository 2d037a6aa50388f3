// The middleware for Node's http server, and Express and Connect on it:
// `(req, res, next)`, before any body parser. A POST's body is read (up to a
// bound), filtered and audited before the app sees anything; then `req`
// reads as if the forwarded bytes were the body that came, whoever reads it
// (`for await`, `req.on("data")`, raw-body and express.json(), the SDK's
// transports through @hono/node-server, which takes `req.rawBody`), and
// `res` carries the app's answer through the core's way back, a step at a
// time (exchange.mjs); once `res` closes (its answer sent, or the client
// gone first), the exchange's outcome goes to the audit sink.
import { admit, begin, ended, failedHere, settingsOf } from "./exchange.mjs";

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
    let exchange;
    /** A fault of the middleware's own (a `principal` that threw, say): the app is not run. */
    const failed = (failure) => {
      const own = failedHere(failure, exchange?.core);
      if (res.headersSent) res.destroy();
      else answer(res, own);
    };
    try {
      exchange = begin(settings, req, req.method, pathOf(req.url), req.rawHeaders);
    } catch (failure) {
      return failed(failure);
    }
    return serve(settings, exchange, req, res, next).catch(failed);
  };
}

/** The path the app routes `url` (a request target, `req.url`: Express strips its mount) by: without scheme and host, query or fragment. */
function pathOf(url = "") {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "");
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

/** One exchange: the body filtered and audited, then handed on to `next` with the answer watched; or answered here. */
async function serve(settings, exchange, req, res, next) {
  const { core, start, record } = exchange;
  if (start === "pass") return next();
  // A session its process did not see issued, witnessed when the store its peers share holds it.
  const { sessions } = settings;
  if (start === "watch") {
    if (sessions !== undefined) await sessions.recall(core);
    watch(res, core, sessions);
    return next();
  }
  // Once the answer is over (sent, or the connection closed first), what became of the exchange.
  if (exchange.began !== undefined) res.on("close", () => ended(settings, exchange));
  if (sessions !== undefined) await sessions.recall(core);
  if (req.readableDidRead || req.readableEnded || req.body !== undefined) return answer(res, core.failed("body-already-read"));
  // The rest of a body too large is not read: the connection cannot carry another request (the answer says so).
  if (core.declaredTooLarge) return answer(res, core.tooLarge());
  const body = await readBody(req, core.maxBodyBytes);
  // The client left before its body came whole: there is no one to answer.
  if (body === GONE) return undefined;
  if (body === undefined) return answer(res, core.tooLarge());
  // The principal: by default what the MCP SDK's bearer authentication (`requireBearerAuth`) sets.
  const refusal = await admit(settings, exchange, body, [req], req.auth);
  if (refusal !== undefined) return answer(res, refusal);
  rearm(req, record.filtered.forward);
  watch(res, core, sessions);
  return next();
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
 * past `limit` bytes as it comes (the rest then read and dropped, so that the
 * 413 reaches a client still sending); GONE when the client leaves first.
 */
async function readBody(req, limit) {
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

/** Answers with an answer of the core's, `{ status, headers, body }`; a bare 500 when there is none. */
function answer(res, { status, headers, body } = { status: 500, headers: [], body: "" }) {
  res.writeHead(status, headers.flat());
  res.end(body);
}

/**
 * Watches `res` for the app's answer and carries it through the core's way
 * back (`core`, the exchange): it takes the place of `writeHead`, `write`,
 * `end` and `flushHeaders`, each going on to the method it replaced, as a
 * compression middleware does. The app's head goes to the exchange once
 * (the headers given to `writeHead` put with those set before, as Node
 * does), then each piece and the end; what each step says is sent. An answer
 * that goes on as it comes costs a test on each call after its head.
 */
function watch(res, core, sessions) {
  const original = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
  /** "app" before the app's head; "held" until the client's head is known; then "sent", "pass" (as it comes) or "over". */
  let state = "app";
  let reason;
  /** While the sessions store learns what the answer's head taught: the steps (with their callbacks) that wait for it, in order. */
  let waiting;

  /** Sends a step of the exchange, or puts it after those waiting; whether the client takes more now. */
  function send(step, callback) {
    if (waiting === undefined) return sent(step, callback);
    waiting.push([step, callback]);
    return true;
  }

  /** The store knows: the steps that waited, sent in order; the head written when the rest passes (no call of the app's writes it now). */
  function learnt() {
    const steps = waiting;
    waiting = undefined;
    for (const [step, callback] of steps) {
      sent(step, callback);
      if (state === "pass" && !res.headersSent) original.writeHead.call(res, res.statusCode, reason);
    }
  }

  /** Sends a step of the exchange: its head, its pieces, and the end when it is over; whether the client takes more now. */
  function sent({ head, pieces, over }, callback) {
    // A head once the client's was sent (the middleware's own errors in a JSON answer that streams) is not sent again.
    if (head !== undefined && state === "held") {
      for (const [name, value] of head.edits) {
        if (value === undefined) res.removeHeader(name);
        else res.setHeader(name, value);
      }
      if (head.passes) {
        state = "pass";
        return true;
      }
      original.writeHead.call(res, head.status, head.status === res.statusCode ? reason : undefined);
      state = "sent";
    }
    let flowing = true;
    for (const piece of pieces) if (piece.length > 0) flowing = original.write.call(res, piece);
    if (over) {
      state = "over";
      original.end.call(res, callback);
    } else if (callback) {
      process.nextTick(callback);
    }
    return flowing;
  }

  /** The app's head to the exchange, its status set and the headers it gave to `writeHead` put with the others. */
  function headed(given) {
    if (given !== undefined) absorb(res, given);
    state = "held";
    const flat = [];
    for (const [name, value] of Object.entries(res.getHeaders())) for (const one of [value].flat()) flat.push(name, String(one));
    const step = core.head(res.statusCode, flat);
    if (sessions === undefined || core.sessionNews === undefined) return send(step);
    // A session issued (or ended): in the store before the client has the head, and may ask another process.
    waiting = [[step, undefined]];
    sessions.learn(core).then(learnt, learnt);
    return undefined;
  }

  res.writeHead = function writeHead(status, message, headers) {
    if (typeof message !== "string") [message, headers] = [undefined, message];
    if (state === "pass") return original.writeHead.call(this, status, message, headers);
    if (state !== "app") throw Object.assign(new Error("Cannot write headers after they are sent to the client"), { code: "ERR_HTTP_HEADERS_SENT" });
    this.statusCode = status;
    reason = message;
    headed(headers);
    return state === "pass" ? original.writeHead.call(this, status, message) : this;
  };

  res.write = function write(chunk, encoding, callback) {
    // Node writes a head the app did not through `writeHead`, which passes it on once the answer passes.
    if (state === "app") headed();
    if (state === "pass") return original.write.call(this, chunk, encoding, callback);
    if (typeof encoding === "function") [encoding, callback] = [undefined, encoding];
    if (state !== "over") return send(core.piece(bytesOf(chunk, encoding)), callback);
    if (callback) process.nextTick(callback);
    return true;
  };

  res.end = function end(chunk, encoding, callback) {
    if (state === "app") headed();
    if (state === "pass") return original.end.call(this, chunk, encoding, callback);
    if (typeof chunk === "function") [chunk, encoding, callback] = [undefined, undefined, chunk];
    else if (typeof encoding === "function") [encoding, callback] = [undefined, encoding];
    if (state === "over") {
      if (callback) process.nextTick(callback);
    } else if (chunk === undefined || chunk === null) {
      send(core.end(), callback);
    } else {
      send(core.finish(bytesOf(chunk, encoding)), callback);
    }
    return this;
  };

  res.flushHeaders = function flushHeaders() {
    if (state === "app") headed();
    // An answer held whole has no head to send before it is read.
    if (state === "sent" || state === "pass") original.flushHeaders.call(this);
  };
}

/** A chunk the app writes, as bytes: Node's `write` takes text (in an encoding) or bytes (the exchange refuses anything else). */
const bytesOf = (chunk, encoding) => (typeof chunk === "string" ? Buffer.from(chunk, encoding ?? "utf8") : chunk);

/**
 * Puts the headers given to `writeHead` with those set before, as Node's own
 * `writeHead` does: each given (an object's, but its undefined values; a raw
 * `[name, value, ...]` list's) set in place of that name's.
 */
function absorb(res, headers) {
  if (Array.isArray(headers)) {
    for (let at = 0; at < headers.length; at += 2) if (headers[at]) res.setHeader(headers[at], headers[at + 1]);
  } else {
    for (const name of Object.keys(headers)) if (name && headers[name] !== undefined) res.setHeader(name, headers[name]);
  }
}
