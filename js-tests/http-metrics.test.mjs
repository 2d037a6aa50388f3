// The HTTP middleware's metrics: the four calls it makes on its `metrics`
// (`observe`, `refused`, `failed`, `filtered`), and `otelMetrics(meter)`
// from mcp-provenance/otel as OpenTelemetry instruments, scraped through
// OpenTelemetry's own Prometheus exporter (its request handler, over HTTP)
// from a MeterProvider of @opentelemetry/sdk-metrics: exactly the series
// `mcp_provenance_messages_total{kind,verdict}`,
// `mcp_provenance_refusals_total{code}`, `mcp_provenance_redactions_total`,
// `mcp_provenance_audit_failures_total` and `mcp_provenance_filter_seconds`,
// with exactly the counts of what went through, for the node:http middleware
// and the Fetch handler.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, test } from "node:test";

import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";

import { provenanceFetch, provenanceMiddleware } from "../pkg/dist/http.mjs";
import { otelMetrics } from "../pkg/dist/otel.mjs";
import { metricsVectors } from "./conformance.mjs";
import { CALL, JSON_TYPE, NOTIFICATION, auditError, send } from "./http-stacks.mjs";

/**
 * The app behind the middleware in these tests: a result for each request
 * of the body it reads (a batch for a batch), 202 with none; text that is
 * not JSON-RPC for a call of the tool `break`; 405 for anything but a POST.
 */
function answerTo(method, body) {
  if (method !== "POST") return { status: 405, headers: [], pieces: [] };
  const parsed = JSON.parse(body);
  const messages = [parsed].flat();
  if (messages.some((message) => message.params?.name === "break")) return { status: 200, headers: [["content-type", "application/json"]], pieces: ["not JSON-RPC"] };
  const results = messages.filter((message) => message.method !== undefined && message.id !== undefined)
    .map((message) => ({ jsonrpc: "2.0", id: message.id, result: {} }));
  if (results.length === 0) return { status: 202, headers: [], pieces: [] };
  return { status: 200, headers: [["content-type", "application/json"]], pieces: [JSON.stringify(Array.isArray(parsed) ? results : results[0])] };
}

/**
 * The two stacks, by name: each makes the middleware with `options`, in
 * front of `app` (`app(method, body)` gives the answer: its `status`,
 * `headers` as `[name, value]` pairs, and `pieces`, written one at a time),
 * and a `call({ method, path, headers, body })` that resolves once the
 * exchange is over for the middleware too (its answer sent and read, and,
 * on node:http, the response closed), with its status and body.
 */
const STACKS = {
  "node:http": async (options, app) => {
    const provenance = provenanceMiddleware(options);
    /** What to tell once each answer has closed. */
    const over = new WeakMap();
    const server = createServer((req, res) => {
      // Listening before the middleware does: once this hears the close, the middleware has heard it too.
      res.on("close", () => setImmediate(() => over.get(res)?.()));
      provenance(req, res, async () => {
        let body = "";
        for await (const chunk of req) body += chunk;
        const { status, headers, pieces } = app(req.method, body);
        res.writeHead(status, headers.flat());
        for (const piece of pieces) res.write(piece);
        res.end();
      });
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${server.address().port}`;
    let closed = [];
    server.on("request", (_req, res) => over.set(res, closed.shift()));
    return {
      async call({ method = "POST", path = "/mcp", headers = [["content-type", "application/json"]], body }) {
        const ended = new Promise((resolve) => closed.push(resolve));
        const answer = await send(`${origin}${path}`, { method, body, headers: Object.fromEntries(headers) });
        await ended;
        return answer;
      },
      close: () => new Promise((resolve) => {
        closed = [];
        server.closeAllConnections();
        server.close(resolve);
      }),
    };
  },
  "a Fetch handler": async (options, app) => {
    const handler = provenanceFetch(async (request) => {
      const { status, headers, pieces } = app(request.method, await request.text());
      const body = pieces.length === 0 ? null : new ReadableStream({
        pull(controller) {
          const piece = pieces.shift();
          if (piece === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(piece));
        },
      });
      return new Response(body, { status, headers });
    }, options);
    return {
      async call({ method = "POST", path = "/mcp", headers = [["content-type", "application/json"]], body }) {
        const answer = await handler(new Request(`http://localhost${path}`, { method, headers, body }));
        return { status: answer.status, body: await answer.text() };
      },
      close: async () => {},
    };
  },
};

const KEY = "io.modelcontextprotocol/aiInvocation";
const DUPLICATE = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"q","_meta":{"${KEY}":{"turnId":"a","turnId":"b"}}}}`;
const call = (id, name) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

/**
 * What goes through, and what each adds: a call whose intent is redacted; a
 * batch of a request, a malformed message, a notification, a response and a
 * request refused for a duplicated member; a body that is not JSON; one
 * that says it is text; one past `maxBodyBytes`; a call the audit sink
 * fails to keep; one whose outcome it fails to keep; one whose answer is
 * not JSON-RPC; and a GET, which the middleware does not count.
 */
const BODIES = [
  { body: CALL, status: 200 },
  { body: `[{"jsonrpc":"2.0","id":3,"method":"ping"},1,${NOTIFICATION},{"jsonrpc":"2.0","id":9,"result":{}},${DUPLICATE}]`, status: 200 },
  { body: "not JSON", status: 400 },
  { body: call(5, "q"), headers: [["content-type", "text/plain"]], status: 415 },
  { body: `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"${"x".repeat(5000)}"}}`, status: 413 },
  { body: call(7, "fail-audit"), status: 200, answer: auditError(7) },
  { body: call("fail-outcome", "q"), status: 200 },
  { body: call(8, "break"), status: 200 },
  { method: "GET", status: 405 },
];

/** The samples of the series the scrape holds, by name and labels (in name order), without the `_bucket`s and `_sum`. */
const EXPECTED = {
  'mcp_provenance_messages_total{kind="request",verdict="forwarded"}': 5,
  'mcp_provenance_messages_total{kind="request",verdict="refused"}': 1,
  'mcp_provenance_messages_total{kind="malformed",verdict="refused"}': 1,
  'mcp_provenance_messages_total{kind="notification",verdict="forwarded"}': 1,
  'mcp_provenance_messages_total{kind="response",verdict="forwarded"}': 1,
  'mcp_provenance_refusals_total{code="invalid-request"}': 1,
  'mcp_provenance_refusals_total{code="duplicate-member"}': 1,
  'mcp_provenance_refusals_total{code="parse-error"}': 1,
  'mcp_provenance_refusals_total{code="unsupported-media-type"}': 1,
  'mcp_provenance_refusals_total{code="body-too-large"}': 1,
  'mcp_provenance_refusals_total{code="audit-failed"}': 1,
  'mcp_provenance_refusals_total{code="answer-not-json"}': 1,
  mcp_provenance_redactions_total: 1,
  mcp_provenance_audit_failures_total: 2,
  // Every body the filter ran on: all but the one past the bound, and the GET.
  mcp_provenance_filter_seconds_count: 7,
};
/** The bounds of the filter's buckets, as the exporter writes them. */
const BOUNDS = ["0.00001", "0.000025", "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "+Inf"];

/** A sink that fails to keep the call of the tool `fail-audit`, and the outcome of the request `"fail-outcome"`. */
function failingSink(account) {
  if (account.kind === "outcome" ? account.requests.some((got) => got.id === "fail-outcome") : account.record?.tool === "fail-audit") {
    throw new Error("the disk is full");
  }
}

/** A scrape of `exporter` (its own request handler, served over HTTP), as a map of each sample (labels in name order) to its value. */
async function scrape(exporter) {
  const server = createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const answer = await fetch(`http://127.0.0.1:${server.address().port}/metrics`);
    assert.equal(answer.status, 200);
    const samples = new Map();
    for (const line of (await answer.text()).split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const [, name, labels = "", value] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line) ?? assert.fail(`not a sample: ${line}`);
      const pairs = [...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, label, text]) => `${label}="${text}"`).sort();
      samples.set(pairs.length ? `${name}{${pairs.join(",")}}` : name, Number(value));
    }
    return samples;
  } finally {
    server.close();
  }
}

/** The samples of the middleware's series alone (the exporter adds `target_info`), less the label `added` to each. */
function ours(samples, added) {
  const kept = new Map();
  for (const [sample, value] of samples) {
    if (!sample.startsWith("mcp_provenance_")) continue;
    if (added === undefined) {
      kept.set(sample, value);
      continue;
    }
    assert.ok(sample.includes(added), `${sample} has ${added}`);
    kept.set(sample.replace(`{${added}}`, "").replace(`,${added}`, "").replace(`${added},`, ""), value);
  }
  return kept;
}

/** Checks the scrape's samples of the middleware's series: the counts EXPECTED, and the histogram's buckets, sum and count. */
function check(samples) {
  const names = new Set([...samples.keys()].map((sample) => sample.replace(/\{.*/, "")));
  assert.deepEqual([...names].sort(), [
    "mcp_provenance_audit_failures_total", "mcp_provenance_filter_seconds_bucket", "mcp_provenance_filter_seconds_count",
    "mcp_provenance_filter_seconds_sum", "mcp_provenance_messages_total", "mcp_provenance_redactions_total", "mcp_provenance_refusals_total",
  ]);
  const counts = Object.fromEntries([...samples].filter(([sample]) => !/_bucket|_sum/.test(sample)));
  assert.deepEqual(counts, Object.fromEntries(Object.entries(EXPECTED).map(([sample, value]) => [sample, value])));
  const buckets = [...samples].filter(([sample]) => sample.includes("_bucket"));
  assert.deepEqual(buckets.map(([sample]) => /le="([^"]+)"/.exec(sample)[1]), BOUNDS);
  const cumulative = buckets.map(([, value]) => value);
  assert.ok(cumulative.every((value, at) => at === 0 || value >= cumulative[at - 1]), "the buckets are cumulative");
  assert.equal(cumulative.at(-1), EXPECTED.mcp_provenance_filter_seconds_count);
  assert.ok(samples.get("mcp_provenance_filter_seconds_sum") > 0);
}

for (const [name, stack] of Object.entries(STACKS)) {
  describe(name, () => {
    test("otelMetrics through OpenTelemetry's Prometheus exporter: exactly the series, with exactly the counts", async () => {
      // As operators mostly run it (each series labelled with the meter, otel_scope_name), and without the scope's labels.
      const exporters = [new PrometheusExporter({ preventServerStart: true }), new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true })];
      const provider = new MeterProvider({ readers: exporters });
      const metrics = otelMetrics(provider.getMeter("mcp-provenance"));
      const { call: through, close } = await stack({ policy: { userIntent: "redact" }, maxBodyBytes: 4096, audit: failingSink, metrics }, answerTo);
      try {
        for (const { body, method, headers, status, answer } of BODIES) {
          const got = await through({ body, method, headers });
          assert.equal(got.status, status, body);
          if (answer !== undefined) assert.equal(got.body, answer);
        }
      } finally {
        await close();
      }
      check(ours(await scrape(exporters[0]), 'otel_scope_name="mcp-provenance"'));
      check(ours(await scrape(exporters[1])));
      await provider.shutdown();
    });

    test("metrics without an audit sink: the accounts are made and counted all the same", async () => {
      const calls = [];
      const metrics = {
        observe: (account) => calls.push(["observe", account.kind, account.refused, account.changes.map((change) => change.action)]),
        refused: (code) => calls.push(["refused", code]),
        failed: () => calls.push(["failed"]),
        filtered: (seconds) => calls.push(["filtered", typeof seconds === "number" && seconds >= 0 && seconds < 60]),
      };
      const { call: through, close } = await stack({ policy: { userIntent: "redact" }, metrics }, answerTo);
      try {
        await through({ body: CALL });
        await through({ body: `[${DUPLICATE},${NOTIFICATION}]` });
        await through({ body: "not JSON" });
        await through({ body: call(8, "break") });
      } finally {
        await close();
      }
      assert.deepEqual(calls, [
        ["filtered", true], ["observe", "request", undefined, ["redacted"]],
        ["filtered", true], ["observe", "request", "duplicate-member", []], ["observe", "notification", undefined, []],
        ["filtered", true], ["refused", "parse-error"],
        ["filtered", true], ["observe", "request", undefined, []], ["refused", "answer-not-json"],
      ]);
    });
  });
}

describe("the middleware's metrics option", () => {
  test("a hook that throws changes nothing of the exchange", async () => {
    const metrics = { observe: () => { throw Object.assign(new Error("broken"), { code: "E_BROKEN" }); }, refused() {}, failed() {}, filtered() {} };
    const handler = provenanceFetch(async () => Response.json({ jsonrpc: "2.0", id: 1, result: {} }), { metrics });
    const answer = await handler(new Request("http://localhost/mcp", { method: "POST", headers: JSON_TYPE, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }));
    assert.equal(await answer.text(), '{"jsonrpc":"2.0","id":1,"result":{}}');
  });

  test("otelMetrics takes a meter; its counters without labels read 0 at once", async () => {
    assert.throws(() => otelMetrics({}), { name: "TypeError", code: "invalid-type" });
    assert.throws(() => otelMetrics(undefined), { name: "TypeError", code: "invalid-type" });
    const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
    const provider = new MeterProvider({ readers: [exporter] });
    otelMetrics(provider.getMeter("mcp-provenance"));
    assert.deepEqual(Object.fromEntries(ours(await scrape(exporter))), { mcp_provenance_audit_failures_total: 0, mcp_provenance_redactions_total: 0 });
    await provider.shutdown();
  });
});

/**
 * What the exchanges of a `metrics` vector made grow: the samples of a
 * scrape after them less those of one before (the counters without labels
 * read 0 from the start), but the filter's `_sum` and buckets, which are
 * times; those that grew, by how much.
 */
function grown(before, after) {
  const grew = {};
  for (const [sample, value] of after) {
    if (/_sum$|_bucket\{/.test(sample)) continue;
    const growth = value - (before.get(sample) ?? 0);
    if (growth !== 0) grew[sample] = growth;
  }
  return grew;
}

describe("conformance/metrics.json: the series the Python middleware's prometheus_client metrics make, through OpenTelemetry's", () => {
  test("there are vectors to run", () => assert.ok(metricsVectors.length >= 10));
  for (const [name, stack] of Object.entries(STACKS)) {
    for (const vector of metricsVectors) {
      test(`${name}: ${vector.id}`, async () => {
        const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
        const provider = new MeterProvider({ readers: [exporter] });
        const metrics = otelMetrics(provider.getMeter("mcp-provenance"));
        /** The exchange under way, which says how the sink behaves with it. */
        let item;
        const sink = (account) => {
          if (account.kind === "outcome" ? item.outcomeFails : item.auditFails !== undefined) {
            throw Object.assign(new Error("the store is down"), { code: item.auditFails ?? "outcome-store-down" });
          }
        };
        const unanswered = [];
        const app = (method, body) => {
          if (item.answer === undefined) unanswered.push(body);
          return item.answer === undefined ? { status: 500, headers: [], pieces: [] } : structuredClone(item.answer);
        };
        const before = ours(await scrape(exporter));
        const { call: through, close } = await stack({ ...vector.options, metrics, ...(vector.audit ? { audit: sink } : {}) }, app);
        try {
          for (item of vector.input) await through(item);
        } finally {
          await close();
        }
        assert.deepEqual(unanswered, [], "the middleware answered these itself");
        assert.deepEqual(grown(before, ours(await scrape(exporter))), vector.expect);
        await provider.shutdown();
      });
    }
  }
});
