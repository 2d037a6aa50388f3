// What the tests of mcp-provenance/http share: the same app behind the
// middleware in three stacks (node:http with a raw handler, Express with
// express.json(), a plain Fetch handler served by @hono/node-server), each
// reading the body as that stack's apps do; a client that sends any bytes
// with any headers; and the prototype gateway's hostile cases, as bytes.
import { createServer, request } from "node:http";

import { createAdaptorServer } from "@hono/node-server";
import express from "express";

import { AI_INVOCATION_KEY as KEY } from "../pkg/dist/index.mjs";
import { provenanceFetch, provenanceMiddleware } from "../pkg/dist/http.mjs";

export { KEY };
export const SECRET = "my salary is 123456";
/** A call as a client writes it, and what no rule may change: a 20-digit id, `1e400`, whitespace, member order (`params` before `method`). */
export const CALL = `{"jsonrpc":"2.0", "id":12345678901234567890,\n "params":{"arguments":{"n":1e400, "s":"x"},"name":"q","_meta":{"${KEY}":{"turnId":"t-1","userIntent":{"text":"${SECRET}"}}}},"method":"tools/call"}`;
/** The call as a redacting filter forwards it: only the intent's text changed. */
export const REDACTED = CALL.replace(`{"text":"${SECRET}"}`, '{"redacted":true}');
export const NOTIFICATION = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
/** A request the filter reads no deeper than (WIRE-4), with `id`. */
export const tooDeep = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"arguments":${"[".repeat(200)}${"]".repeat(200)}}}`;
/** What the filter answers `tooDeep(2)`. */
export const TOO_DEEP = '{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"the message nests deeper than the gateway reads","data":{"code":"too-deep"}}}';
export const result = (id) => `{"jsonrpc":"2.0","id":${id},"result":{}}`;
export const auditError = (id, code = "audit-failed") =>
  `{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":"the request could not be audited","data":{"code":"${code}"}}}`;
export const notJson = (id, what = "the server's answer") =>
  `{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":"${what} is not JSON-RPC","data":{"code":"answer-not-json"}}}`;
export const event = (data) => `event: message\ndata: ${data}\n\n`;
export const JSON_TYPE = { "content-type": "application/json" };
export const EVENTS_TYPE = { "content-type": "text/event-stream" };

/**
 * An app that records what reaches it (the body as its stack read it, and
 * the headers) and answers with `status`, `headers` and `pieces`, written
 * one at a time; a piece that is a function is awaited for the text to write.
 */
export function recorder({ status = 200, headers = JSON_TYPE, pieces = [result(1)] } = {}) {
  return { status, headers, pieces, reached: [] };
}

/** `piece` of an app's answer, as text. */
const text = async (piece) => (typeof piece === "function" ? piece() : piece);

/** Answers `res` (Node's) as `app` says, a piece at a time. */
async function answerWith(res, app) {
  res.writeHead(app.status, app.headers);
  for (const piece of app.pieces) res.write(await text(piece));
  res.end();
}

/** Listens on loopback; the URL of its /mcp and a way to close it. */
export async function listen(server) {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(resolve);
    }),
  };
}

/** Reads a Node request's body to its end, as text. */
async function readAll(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The three stacks, by name: each puts the middleware made with `options`
 * in front of `app` and listens; the app reads the body as that stack's apps
 * do: a `for await` loop; express.json() (its raw bytes, as its `verify`
 * sees them); `request.text()`. With `auth`, the stack authenticated the
 * client as the MCP SDK's bearer authentication says: `req.auth`, or the
 * `authInfo` handed to a Fetch handler beside the request.
 */
export const STACKS = {
  "node:http": (options, app, auth) => {
    const provenance = provenanceMiddleware(options);
    return listen(createServer((req, res) => {
      req.auth = auth;
      provenance(req, res, async () => {
        app.reached.push({ body: await readAll(req), headers: req.headers });
        await answerWith(res, app);
      });
    }));
  },
  "Express with express.json()": (options, app, auth) => {
    const server = express();
    server.use((req, _res, next) => {
      req.auth = auth;
      next();
    });
    server.use(provenanceMiddleware(options));
    server.use(express.json({ verify: (req, _res, raw) => { req.raw = raw.toString("utf8"); } }));
    server.all("/mcp", async (req, res) => {
      // What express.json() does not parse (another method, another type), the app reads itself.
      app.reached.push({ body: req.raw ?? (await readAll(req)), parsed: req.body, headers: req.headers });
      if (app.pieces.length === 1 && typeof app.pieces[0] === "string") res.status(app.status).set(app.headers).send(Buffer.from(app.pieces[0]));
      else await answerWith(res, app);
    });
    return listen(createServer(server));
  },
  "a Fetch handler": (options, app, auth) => {
    const handler = provenanceFetch(async (request) => {
      app.reached.push({ body: await request.text(), headers: Object.fromEntries(request.headers) });
      const pieces = app.pieces.values();
      const body = new ReadableStream({
        async pull(controller) {
          const { value, done } = pieces.next();
          if (done) controller.close();
          else controller.enqueue(new TextEncoder().encode(await text(value)));
        },
      });
      return new Response(app.pieces.length ? body : null, { status: app.status, headers: app.headers });
    }, options);
    return listen(createAdaptorServer({ fetch: (request) => handler(request, { authInfo: auth }) }));
  },
};

/**
 * Sends one HTTP request with node:http (fetch cannot set Host, nor send a
 * body in pieces): `body` whole with its Content-Length, or `chunks` one at a
 * time, chunked. Its status, headers and body (text).
 */
export function send(url, { method = "POST", body, chunks, headers = JSON_TYPE } = {}) {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { "content-length": Buffer.byteLength(body) };
    const req = request(url, { method, headers: { accept: "application/json, text/event-stream", ...length, ...headers } }, (res) => {
      let received = "";
      res.setEncoding("utf8").on("data", (chunk) => { received += chunk; }).on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: received }));
    });
    req.on("error", reject);
    for (const chunk of chunks ?? []) req.write(chunk);
    req.end(body);
  });
}

/**
 * A sink keeping each message's account and its line (`kept`), and each
 * exchange's outcome and its line apart (`outcomes`); `outcome(n)` waits
 * (a second at most) for the `n`th outcome (from 1), which comes once the
 * answer is over.
 */
export function accounts() {
  const [kept, outcomes] = [[], []];
  const sink = (account, line) => { (account.kind === "outcome" ? outcomes : kept).push({ account, line }); };
  sink.kept = kept;
  sink.outcomes = outcomes;
  sink.witnessed = () => kept.filter(({ account }) => account.record).map(({ account }) => account.record.witnessed);
  sink.outcome = async (n = outcomes.length + 1) => {
    for (const deadline = Date.now() + 1000; outcomes.length < n && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 5));
    return outcomes[n - 1];
  };
  return sink;
}
