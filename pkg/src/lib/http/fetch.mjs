// The middleware for Fetch-API servers (Hono, Deno, Bun, workers, the MCP
// SDK's web-standard transport): a handler, `Request` in and `Response` out,
// wrapped. A POST's body is read (up to a bound), filtered and audited
// before the handler is called; it is handed a `Request` whose body is the
// forwarded bytes, and its `Response` goes back through the core's way back
// (exchange.mjs); once its body has been read to its end or cancelled (or
// the middleware answered itself), the exchange's outcome goes to the audit
// sink. Nothing here needs Node.
import { admit, begin, ended, exchanges, failedHere, settingsOf } from "./exchange.mjs";

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
    let exchange;
    let handedOn;
    /** The exchange is over: its outcome to the sink, while `response` goes on. */
    const over = (response) => {
      if (exchange?.began !== undefined) ended(settings, exchange);
      return response;
    };
    try {
      exchange = begin(settings, request, request.method, new URL(request.url).pathname, [...request.headers].flat());
      handedOn = await admitted(settings, exchange, request, rest);
    } catch (failure) {
      // A fault of the middleware's own (a `principal` that threw, say): the handler is not called.
      return over(answer(failedHere(failure, exchange?.core)));
    }
    if (handedOn instanceof Response) return over(handedOn);
    let response;
    try {
      response = await handler(handedOn, ...rest);
    } catch (failure) {
      over();
      throw failure;
    }
    return exchange.start === "pass" ? response : passedBack(exchange.core, response, over, settings.sessions);
  };
}

/**
 * What goes to the handler of `request`: itself, but for a POST the
 * middleware reads, a `Request` whose body is the forwarded bytes (its
 * `content-length` made right, no `accept-encoding`: the middleware reads
 * the answer); or the `Response` the middleware answers with in the
 * handler's stead.
 */
async function admitted(settings, exchange, request, rest) {
  const { core, start, record } = exchange;
  // A session its process did not see issued, witnessed when the store its peers share holds it.
  if (start !== "pass" && settings.sessions !== undefined) await settings.sessions.recall(core);
  if (start !== "read") return request;
  const body = core.declaredTooLarge ? undefined : await readBody(request, core.maxBodyBytes);
  if (body === undefined) {
    request.body?.cancel().catch(() => {});
    return answer(core.tooLarge());
  }
  // The principal: by default what the MCP SDK's web-standard handlers take beside the request (`handler(request, { authInfo })`).
  const refusal = await admit(settings, exchange, body, [request, ...rest], rest[0]?.authInfo);
  if (refusal !== undefined) return answer(refusal);
  const { forward } = record.filtered;
  const headers = new Headers(request.headers);
  for (const name of ["transfer-encoding", "accept-encoding"]) headers.delete(name);
  headers.set("content-length", String(forward.length));
  const forwarded = new Request(request, { body: forward, headers });
  exchanges.set(forwarded, record);
  return forwarded;
}

/** A request's body as bytes; undefined once it is past `limit` bytes as it comes (nothing more is read). */
async function readBody(request, limit) {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const pieces = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      reader.cancel().catch(() => {});
      return undefined;
    }
    pieces.push(value);
  }
  const body = new Uint8Array(size);
  pieces.reduce((at, piece) => (body.set(piece, at), at + piece.length), 0);
  return body;
}

/** An answer of the core's, `{ status, headers, body }`, as a `Response`; a bare 500 when there is none. */
const answer = ({ status, headers, body } = { status: 500, headers: [], body: "" }) => new Response(body || null, { status, headers });

/** Statuses whose `Response` has no body. */
const NULL_BODY = new Set([204, 205, 304]);

/**
 * The handler's `response` as the client gets it, a step of the core's way
 * back at a time (what its head taught of sessions in `sessions`, the store,
 * first): the very response when it goes on as it came; else its
 * head as the exchange makes it (once a JSON answer held whole has ended)
 * and a body that reads the handler's as the client reads it. `over` is
 * told when the exchange is over: the response handed back as it came, or
 * with no body; its body read to its end, cancelled, or broken.
 */
async function passedBack(core, response, over, sessions) {
  let reader;
  /** The exchange's next step: the handler's next piece through it, or its end; once over, the rest is not read. */
  const next = async () => {
    reader ??= response.body?.getReader();
    const { done, value } = reader === undefined ? { done: true } : await reader.read();
    const step = done ? core.end() : core.piece(value);
    if (step.over && !done) reader.cancel().catch(() => {});
    return step;
  };
  let step = core.head(response.status, [...response.headers].flat());
  // A session issued (or ended): in the store before the client has the head, and may ask another process.
  if (sessions !== undefined && core.sessionNews !== undefined) await sessions.learn(core);
  try {
    while (step.head === undefined && !step.over) step = await next();
  } catch (failure) {
    over();
    throw failure;
  }
  const { status, edits, passes } = step.head;
  if (passes) return over(response);
  const headers = new Headers(response.headers);
  for (const [name, value] of edits) {
    if (value === undefined) headers.delete(name);
    else headers.set(name, value);
  }
  const body = new ReadableStream({
    // A pull that enqueues nothing is not pulled again: it reads on until it has a piece, or the end.
    async pull(controller) {
      try {
        for (let given = false; !given;) {
          const { pieces, over: done } = step ?? (await next());
          step = undefined;
          for (const piece of pieces.filter((piece) => piece.length > 0)) {
            controller.enqueue(piece);
            given = true;
          }
          if (done) {
            controller.close();
            return over();
          }
        }
      } catch (failure) {
        over();
        throw failure;
      }
      return undefined;
    },
    cancel: (reason) => {
      over();
      return reader?.cancel(reason);
    },
  });
  const bodiless = NULL_BODY.has(status);
  const handed = new Response(bodiless ? null : body, { status, statusText: status === response.status ? response.statusText : "", headers });
  return bodiless ? over(handed) : handed;
}
