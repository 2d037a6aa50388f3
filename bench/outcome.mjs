// What the outcome account adds to provenanceMiddleware with an audit sink,
// in one process and one run (issue 42's aim: at most 5% of what the
// middleware adds). A node:http server on 127.0.0.1 answers each MCP
// request (the SEP-2817 example of docs/reference.md) with a result, alone
// and behind provenanceMiddleware redacting intents with a sink that keeps
// the last accounts as a log's buffer does, three times: the package of the
// commit before the outcome account (built once by tools/baseline.mjs), this
// one, and this one with OpenTelemetry metrics (mcp-provenance/otel's
// otelMetrics, read by a Prometheus exporter). A client on a kept-alive connection sends one request to each server
// in turn, the order turning each time, so that whatever else the machine
// runs weighs on all of them alike (round-robin by the request: the noise of
// the package against itself is within 2% here, where blocks of requests
// drift by 10% and more).
//
// Prints p50 per request, what each middleware adds over the server alone,
// the outcome's share (what this package adds beyond the older one, against
// what the older one adds) and the metrics' (against what it adds without). It asserts nothing about time.
//
//   make bench   (or: make build && node bench/outcome.mjs [--requests N])

import { readFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";

import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";

import { baseline } from "../tools/baseline.mjs";

/** The last commit before the outcome account (issue 42, point 2). */
const BEFORE = "2e5f950";
const requests = Number(process.argv[process.argv.indexOf("--requests") + 1]) || 10_000;
const reference = readFileSync(new URL("../docs/reference.md", import.meta.url), "utf8");
const example = Buffer.from(reference.match(/A request a model made[^]*?```json\n([^]*?)```/)[1].trim());
const POLICY = { userIntent: "redact" };

const { pkg } = baseline(BEFORE);
const before = await import(`${pkg}/dist/http.mjs`);
const now = await import("../pkg/dist/http.mjs");
const { otelMetrics } = await import("../pkg/dist/otel.mjs");
// The metrics as an operator scrapes them: a Prometheus exporter's reader, its server not started.
const meter = new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] }).getMeter("bench");

/** The body of `req`, whole. */
async function bodyOf(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** An MCP server at its smallest: reads the body, answers its request with a result. */
async function server(req, res) {
  const { id } = JSON.parse(await bodyOf(req));
  const answer = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } });
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) }).end(answer);
}

/** A sink as a log's buffer is: the last accounts and their lines, the older ones let go. */
function buffer() {
  const kept = [];
  return (account, line) => {
    kept.push([account, line]);
    if (kept.length > 100) kept.shift();
  };
}

/** `server` behind the middleware `made` makes. */
const behind = (made) => (req, res) => made(req, res, (error) => (error ? res.destroy(error) : server(req, res)));
const servers = {
  "server alone": server,
  [`provenanceMiddleware at ${BEFORE} (no outcome)`]: behind(before.provenanceMiddleware({ policy: POLICY, audit: buffer() })),
  "provenanceMiddleware (with the outcome)": behind(now.provenanceMiddleware({ policy: POLICY, audit: buffer() })),
  "provenanceMiddleware, OpenTelemetry metrics": behind(now.provenanceMiddleware({ policy: POLICY, audit: buffer(), metrics: otelMetrics(meter) })),
};

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** One POST of `body` to `port`, its answer read whole. */
function post(port, body) {
  return new Promise((resolve, reject) => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": body.length };
    const req = request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", agent, headers }, (res) => {
      res.resume().on("end", resolve).on("error", reject);
    });
    req.on("error", reject).end(body);
  });
}

const names = Object.keys(servers);
const ports = {};
for (const name of names) {
  const http = createServer(servers[name]);
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  ports[name] = { http, port: http.address().port };
}
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (const name of names) for (let n = 0; n < 500; n++) await post(ports[name].port, example);
for (let n = 0; n < requests; n++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(n + k) % names.length];
    const started = process.hrtime.bigint();
    await post(ports[name].port, example);
    samples[name].push(Number(process.hrtime.bigint() - started) / 1000);
  }
}
agent.destroy();
for (const { http } of Object.values(ports)) http.close();

const p50 = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const alone = p50(samples["server alone"]);
console.log(`provenanceMiddleware with an audit sink, the SEP example, ${requests} requests a server round-robin; p50 µs:`);
const added = {};
for (const name of names) {
  added[name] = p50(samples[name]) - alone;
  console.log(`  ${name.padEnd(48)} ${p50(samples[name]).toFixed(1).padStart(8)}   adds ${added[name].toFixed(1).padStart(7)}`);
}
const [older, newer, metered] = names.slice(1).map((name) => added[name]);
console.log(`  the outcome account adds ${(newer - older).toFixed(1)} µs: ${(((newer - older) / older) * 100).toFixed(1)}% of what the middleware adds without it (the aim: at most 5%)`);
console.log(`  the metrics add ${(metered - newer).toFixed(1)} µs: ${(((metered - newer) / newer) * 100).toFixed(1)}% of what the middleware adds without them`);
