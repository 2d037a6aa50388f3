// mcp-provenance/otel: an audit record as span attributes, exactly; then the
// prototype gateway's --otlp export, received by a collector of the test's
// own on 127.0.0.1, through the real OpenTelemetry SDK and OTLP/HTTP exporter.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { AI_INVOCATION_KEY as KEY, UI_KEY, auditRecord } from "../pkg/dist/index.mjs";
import { otelAttributes } from "../pkg/dist/otel.mjs";
import { readBody, start, stop } from "../examples/prototype/http.mjs";
import { root } from "./user.mjs";

const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-otel-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const request = {
  jsonrpc: "2.0", id: 7, method: "tools/call",
  params: { name: "execute_query", _meta: {
    [KEY]: { turnId: "turn-1", model: { name: "m-1" }, invocationReason: { text: "count rows" }, userIntent: { text: "how many?\r\nINFO forged" } },
    [UI_KEY]: { initiator: "app" },
  } },
};

test("a record's attributes: the conventions' names where they exist, mcp_provenance.* for the rest", () => {
  const record = auditRecord(request, { sessionId: "s-1", principal: "alice" });
  assert.deepEqual(otelAttributes(record), {
    "mcp.method.name": "tools/call",
    "mcp.session.id": "s-1",
    "jsonrpc.request.id": "7",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "execute_query",
    "mcp_provenance.client_asserted.turn_id": "turn-1",
    "mcp_provenance.client_asserted.model": "m-1",
    "mcp_provenance.client_asserted.invocation_reason": "count rows",
    "mcp_provenance.client_asserted.user_intent": "how many?  INFO forged",
    "mcp_provenance.client_asserted.user_intent_redacted": true,
    "mcp_provenance.host_attested.initiator": "app",
    "mcp_provenance.witnessed.principal": "alice",
    "mcp_provenance.valid": true,
    "mcp_provenance.diagnostics": ["AI-13 control-character"],
  });
  assert.deepEqual(otelAttributes(auditRecord({ method: "ping" })), {
    "mcp.method.name": "ping", "mcp_provenance.valid": true, "mcp_provenance.diagnostics": [],
  });
});

/** An OTLP/HTTP collector on 127.0.0.1 that keeps each span it receives, its attributes flattened. */
async function collector() {
  const spans = [];
  const server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req));
    for (const { scopeSpans } of body.resourceSpans) {
      for (const { spans: received } of scopeSpans) {
        for (const span of received) {
          const value = (v) => v.stringValue ?? v.boolValue ?? v.intValue ?? v.arrayValue?.values.map(value);
          spans.push({ name: span.name, kind: span.kind, attributes: Object.fromEntries(span.attributes.map((a) => [a.key, value(a.value)])) });
        }
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1/traces`, spans, close: () => server.close() };
}

test("the gateway's --otlp exports a span per forwarded request, which a collector receives", async () => {
  const otlp = await collector();
  const data = join(dir, "server");
  mkdirSync(data);
  const server = await start(join(root, "examples/prototype/server.mjs"), ["--data", data]);
  const gateway = await start(join(root, "examples/prototype/gateway.mjs"), ["--upstream", server.url, "--log", join(dir, "gateway.jsonl"), "--otlp", otlp.url]);
  try {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client({ name: "otel-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    await client.callTool({ name: "refresh_dashboard", arguments: {}, _meta: request.params._meta });
    await client.close();
  } finally {
    await stop(gateway.child); // flushes the batch
    await stop(server.child);
    otlp.close();
  }
  const call = otlp.spans.find((span) => span.name === "tools/call refresh_dashboard");
  assert.ok(call, `spans: ${otlp.spans.map((span) => span.name)}`);
  assert.equal(call.kind, 2); // SPAN_KIND_SERVER on the wire
  assert.equal(call.attributes["mcp.method.name"], "tools/call");
  assert.equal(call.attributes["gen_ai.tool.name"], "refresh_dashboard");
  assert.equal(call.attributes["mcp_provenance.client_asserted.turn_id"], "turn-1");
  assert.equal(call.attributes["mcp_provenance.client_asserted.user_intent"], "how many?  INFO forged");
  assert.equal(call.attributes["mcp_provenance.host_attested.initiator"], "app");
  assert.match(call.attributes["mcp.session.id"], /^[0-9a-f-]{36}$/);
  assert.deepEqual(otlp.spans.map((span) => span.name).sort(), ["initialize", "notifications/initialized", "tools/call refresh_dashboard"]);
});
