// The middleware for Fetch-API servers (Hono, Deno, Bun, workers, the MCP
// SDK's web-standard transport): a handler, `Request` in and `Response` out,
// wrapped. A POST's body is read (up to a bound), filtered and audited
// before the handler is called; it is handed a `Request` whose body is the
// forwarded bytes, and its `Response` goes back through the way back
// (answer.mjs). Nothing here needs Node.
import { Answer, concat } from "./answer.mjs";
import { admit, Exchange, exchanges, failedHere, settingsOf } from "./exchange.mjs";
import { failed, tooLarge } from "./refusals.mjs";

/**
 * `handler` with provenance in front of it: see `provenanceFetch` in
 * http.d.ts.
 *
 * ```js
 * import { provenanceFetch } from "mcp-provenance/http";
 *
 * const reached = [];
 * const handler = provenanceFetch(async (request) => {
 *   reached.push(await request.text());
 *   return Response.json({ jsonrpc: "2.0", id: 1, result: {} });
 * }, { policy: { userIntent: "redact" } });
 * const answer = await handler(new Request("http://localhost/mcp", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"secret"}}}}}',
 * }));
 * console.assert(!reached[0].includes("secret"));
 * console.assert((await answer.json()).result._meta["io.modelcontextprotocol/aiInvocation"].turnId === "t-1");
 * ```
 */
export function provenanceFetch(handler, options) {
  if (typeof handler !== "function") throw Object.assign(new TypeError("provenanceFetch wraps a handler: a function"), { code: "invalid-type" });
  const settings = settingsOf(options);
  return async function provenance(request, ...rest) {
    const asked = request.headers.get("mcp-session-id") ?? undefined;
    let exchange;
    let handedOn;
    try {
      exchange = new Exchange(settings, asked, settings.principal ? settings.principal(request, ...rest) : authenticated(rest[0]));
      exchanges.set(request, exchange);
      handedOn = await admitted(settings, exchange, request);
    } catch (failure) {
      // A fault of the middleware's own (a `principal` that threw, say): the handler is not called.
      failedHere(failure, exchange);
      return answer(500, failed());
    }
    if (handedOn instanceof Response) return handedOn;
    const response = await handler(handedOn, ...rest);
    const named = response.headers.get("mcp-session-id") ?? undefined;
    exchange.sessionId = settings.sessions.learn(request.method, asked, response.status, named) ?? exchange.sessionId;
    // A GET stream, a DELETE and any other method pass as they came, both ways.
    return request.method === "POST" ? passedBack(settings, exchange, response) : response;
  };
}

/**
 * What goes to the handler of `request`: itself, but for a POST, a `Request`
 * whose body is the forwarded bytes (its `content-length` made right, no
 * `accept-encoding`: the middleware reads the answer); or the `Response` the
 * middleware answers with in the handler's stead.
 */
async function admitted(settings, exchange, request) {
  if (request.method !== "POST") return request;
  const body = await readBody(request, settings.maxBodyBytes);
  if (body === undefined) {
    exchange.refused = "body-too-large";
    return answer(413, tooLarge(settings.maxBodyBytes));
  }
  const refusal = await admit(settings, exchange, body, Object.fromEntries(request.headers));
  if (refusal !== undefined) return answer(refusal.status, refusal.body);
  const { forward } = exchange.filtered;
  const headers = new Headers(request.headers);
  for (const name of ["transfer-encoding", "accept-encoding"]) headers.delete(name);
  headers.set("content-length", String(forward.length));
  const forwarded = new Request(request, { body: forward, headers });
  exchanges.set(forwarded, exchange);
  return forwarded;
}

/**
 * The identity the stack authenticated: the `authInfo` the MCP SDK's
 * web-standard handlers take beside the request (`handler(request,
 * { authInfo })`), its `clientId`. Never a header.
 */
function authenticated(given) {
  const clientId = given?.authInfo?.clientId;
  return typeof clientId === "string" && clientId !== "" ? clientId : undefined;
}

/** A request's body as bytes; undefined once it is past `limit` bytes, by its Content-Length or as it comes (nothing more is read). */
async function readBody(request, limit) {
  if (Number(request.headers.get("content-length")) > limit) {
    request.body?.cancel().catch(() => {});
    return undefined;
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const pieces = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(pieces);
    size += value.length;
    if (size > limit) {
      reader.cancel().catch(() => {});
      return undefined;
    }
    pieces.push(value);
  }
}

/** The middleware's own answer: `status`, and `body` (JSON text, or none). */
const answer = (status, body) => new Response(body || null, { status, headers: body ? { "content-type": "application/json" } : {} });

/** Statuses whose answer has no body, nor a length. */
const BODILESS = new Set([204, 304]);

/** The handler's `response` as the client gets it (answer.mjs): the very response when it goes on as it came. */
async function passedBack(settings, exchange, response) {
  const way = new Answer(settings, exchange);
  const mode = way.begin(response.status, response.headers.get("content-type") ?? undefined);
  if (mode === "pass") return response;
  const headers = new Headers(response.headers);
  const reader = response.body?.getReader();
  /** The next step of the way back, and whether the handler's answer ended with it. */
  const next = async () => {
    const { done, value } = reader === undefined ? { done: true } : await reader.read();
    return { step: done ? way.end() : way.write(value), done };
  };
  if (mode === "held") {
    let step = { pieces: [] };
    while (step.head === undefined) ({ step } = await next());
    if (step.over) reader?.cancel().catch(() => {});
    const [body] = step.pieces;
    const { status, own } = step.head;
    if (own) for (const name of ["content-length", "content-type", "content-encoding"]) headers.delete(name);
    if (own && body.length > 0) headers.set("content-type", "application/json");
    if (!BODILESS.has(status)) headers.set("content-length", String(body.length));
    return new Response(BODILESS.has(status) ? null : body, { status, statusText: own ? "" : response.statusText, headers });
  }
  headers.delete("content-length");
  if (mode === "join") headers.set("content-type", "application/json");
  const stream = new ReadableStream({
    start(controller) {
      for (const piece of way.opening()) controller.enqueue(piece);
    },
    // A pull that enqueues nothing is not pulled again: it reads on until it has a piece, or the end.
    async pull(controller) {
      for (let given = false; !given;) {
        const { step, done } = await next();
        for (const piece of step.pieces) {
          if (piece.length === 0) continue;
          controller.enqueue(piece);
          given = true;
        }
        if (step.over) reader?.cancel().catch(() => {});
        if (step.over || done) return controller.close();
      }
      return undefined;
    },
    cancel: (reason) => reader?.cancel(reason),
  });
  return new Response(stream, { status: way.status, statusText: response.statusText, headers });
}
