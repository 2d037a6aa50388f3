// What mcp-provenance/http adds to each request, in one process and one
// run. A node:http server on 127.0.0.1 answers each MCP request with a
// result, and a client on a kept-alive connection sends one request at a
// time, the same body each time (the SEP-2817 example request of
// docs/reference.md, and the same request whose `arguments` hold ~0.7 MB of
// rows), to six servers, interleaved round by round:
//
// - the server alone;
// - the server behind a pass-through middleware that only reads the body
//   and hands it on (the floor: what any body-reading middleware costs);
// - the server behind a pass-through that does what provenanceMiddleware
//   must besides, with no filter: reads the body, hands the app a request
//   whose read side holds it anew, and holds the app's answer to send it
//   whole (the floor for a body-replacing middleware that reads answers);
//   and the same with the filter and its echo between (the floor for a
//   middleware that does the filter's work, and none of its refusals);
// - the server behind provenanceMiddleware (redacting intents, auditing
//   each message, echoing turnId);
// - and, in the same process, the filter and its echo alone: the work the
//   middleware cannot avoid; once as the bare calls, once as the middleware
//   makes them (a server's headers and `receivedAt` given, the accounts
//   parsed for the audit sink, the answer echoed as bytes).
//
// Prints p50 and p99 per request and what each middleware adds over the
// server alone, as a multiple of the filter's own cost (the aim:
// at most 1.5×), and what provenanceMiddleware adds as a multiple of what
// the filter in the pass-through adds: the same two calls, made where a
// request leaves the caches cold, cost several times what they cost in a
// loop. It asserts nothing about time.
//
//   make bench   (or: make build && node bench/http.mjs [--rounds N])

import { readFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { Readable } from "node:stream";

import { createFilter } from "../pkg/dist/gateway.mjs";
import { provenanceMiddleware } from "../pkg/dist/http.mjs";

const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1]) || 5;
const POLICY = { userIntent: "redact" };
const reference = readFileSync(new URL("../docs/reference.md", import.meta.url), "utf8");
const example = reference.match(/A request a model made[^]*?```json\n([^]*?)```/)[1].trim();
const sep = JSON.parse(example);
const rows = Array.from({ length: 5600 }, (_, id) => ({ id, name: `Employee ${id}`, department: ["Support", "Engineering", "Sales"][id % 3], title: "Engineer", salary: 50_000 + id, active: id % 2 === 0, tags: ["a", "b"] }));
const big = JSON.stringify({ ...sep, params: { ...sep.params, arguments: { ...sep.params.arguments, rows } } });
const bodies = [["the SEP example", Buffer.from(example)], ["0.7 MB of rows in arguments", Buffer.from(big)]];

/** The body of `req`, whole. */
async function bodyOf(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** An MCP server at its smallest: reads the body (unless a middleware read it), answers its request with a result. */
async function server(req, res, read) {
  const { id } = JSON.parse(read ?? (await bodyOf(req)));
  const answer = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } });
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) }).end(answer);
}

/** The request's read side made anew, holding `body` and ended; its length restated: what a body-replacing middleware does at least. */
function rearm(req, body) {
  req._readableState = new Readable()._readableState;
  req._read = () => {};
  req.push(body);
  req.push(null);
  req.headers["content-length"] = String(body.length);
}

/** The app's answer held and sent whole at its end (through `echo`), with its length: what a middleware that reads the answer does at least. */
function hold(res, echo = (body) => body) {
  const { writeHead, end } = res;
  const held = [];
  res.writeHead = function (status, headers) {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers ?? {})) this.setHeader(name, value);
    return this;
  };
  res.write = (chunk) => held.push(Buffer.from(chunk));
  res.end = function (chunk) {
    if (chunk) held.push(Buffer.from(chunk));
    const body = echo(Buffer.concat(held));
    this.setHeader("content-length", body.length);
    writeHead.call(this, this.statusCode);
    return end.call(this, body);
  };
}

const filter = createFilter({ policy: POLICY });
const records = [];
const guarded = provenanceMiddleware({ policy: POLICY, audit: (account) => { records.push(account); } });
const servers = {
  "server alone": (req, res) => server(req, res),
  // The floor: what any middleware that reads the body before the server does costs.
  "behind a pass-through (floor)": (req, res) => bodyOf(req).then((body) => server(req, res, body)),
  "behind a re-arming, holding pass-through (floor)": (req, res) => bodyOf(req).then((body) => {
    rearm(req, body);
    hold(res);
    return server(req, res);
  }),
  "behind the filter in that pass-through (floor)": (req, res) => bodyOf(req).then((body) => {
    const out = filter(body, { headers: req.headers, receivedAt: new Date().toISOString() });
    rearm(req, out.forward);
    hold(res, (answer) => filter.echo(answer, out));
    return server(req, res);
  }),
  "behind provenanceMiddleware": (req, res) => guarded(req, res, (error) => (error ? res.destroy(error) : server(req, res))),
};

/** Listens with `handle`; the port. */
async function listen(handle) {
  const http = createServer(handle);
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { http, port: http.address().port };
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** One POST of `body` to `port`, its answer read whole. */
function post(port, body) {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", agent, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": body.length } }, (res) => {
      res.resume().on("end", resolve).on("error", reject);
    });
    req.on("error", reject).end(body);
  });
}

/** The time of each of `count` calls, in µs. */
async function timed(call, count) {
  const samples = [];
  for (let n = 0; n < count; n++) {
    const started = process.hrtime.bigint();
    await call();
    samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return samples;
}

const listening = Object.fromEntries(await Promise.all(Object.entries(servers).map(async ([name, handle]) => [name, await listen(handle)])));
/** The request headers a Node server has for the bench's POSTs, as the middleware hands them to the filter. */
const served = (body) => ({ "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": String(body.length), host: "127.0.0.1", connection: "keep-alive" });
const results = new Map();
const add = (key, samples) => results.set(key, [...(results.get(key) ?? []), ...samples]);
for (let round = 0; round < rounds; round++) {
  for (const [name, body] of bodies) {
    const count = body.length < 10_000 ? 2000 : 60;
    const answer = JSON.stringify({ jsonrpc: "2.0", id: sep.id, result: { content: [] } });
    for (const [server, { port }] of Object.entries(listening)) add(`${name}: ${server}`, await timed(() => post(port, body), count));
    add(`${name}: filter + echo alone`, await timed(async () => {
      const out = filter(body, { headers: { "content-type": "application/json" } });
      filter.echo(answer, out);
    }, count));
    const headers = served(body);
    add(`${name}: filter + echo as the middleware runs them`, await timed(async () => {
      const out = filter(body, { headers, receivedAt: new Date().toISOString(), sessionId: undefined, principal: undefined });
      records.push(...out.accounts.map((account) => JSON.parse(account)));
      filter.echo(Buffer.from(answer), out);
    }, count));
    records.length = 0;
  }
}
agent.destroy();
for (const { http } of Object.values(listening)) http.close();

const percentile = (samples, p) => [...samples].sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(samples.length * p))];
const tasks = [...Object.keys(servers), "filter + echo alone", "filter + echo as the middleware runs them"];
console.log(`mcp-provenance/http, ${rounds} rounds interleaved; per request, µs (p50 / p99):`);
for (const [name] of bodies) {
  const at = Object.fromEntries(tasks.map((task) => {
    const samples = results.get(`${name}: ${task}`);
    return [task, [percentile(samples, 0.5), percentile(samples, 0.99)]];
  }));
  for (const task of tasks) console.log(`  ${name}: ${task.padEnd(48)} ${at[task][0].toFixed(1).padStart(10)} / ${at[task][1].toFixed(1).padStart(10)}`);
  const own = at["filter + echo alone"][0];
  const run = at["filter + echo as the middleware runs them"][0];
  const alone = at["server alone"];
  for (const task of Object.keys(servers).slice(1)) {
    const added = at[task][0] - alone[0];
    console.log(`  ${name}: ${task} adds ${added.toFixed(1)} µs at p50 (${(at[task][1] - alone[1]).toFixed(1)} at p99): ${(added / own).toFixed(2)}× the filter's own ${own.toFixed(1)} µs, ${(added / run).toFixed(2)}× its ${run.toFixed(1)} µs as the middleware runs it`);
  }
  const inPath = at["behind the filter in that pass-through (floor)"][0] - alone[0];
  const middleware = at["behind provenanceMiddleware"][0] - alone[0];
  console.log(`  ${name}: provenanceMiddleware adds ${(middleware / inPath).toFixed(2)}× what the filter in the pass-through adds (the filter's work where a request runs it)`);
}
