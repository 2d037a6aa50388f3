// mcp-provenance/otel: an audit record as span attributes, exactly; then the
// prototype gateway's --otlp export, received by a collector of the test's
// own on 127.0.0.1, through the real OpenTelemetry SDK and OTLP/HTTP exporter.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { AI_INVOCATION_KEY as KEY, UI_KEY, auditRecord } from "../pkg/dist/index.mjs";
import { otelAttributes, parentSpanContext } from "../pkg/dist/otel.mjs";
import { start, stop } from "../examples/prototype/http.mjs";
import { collector } from "./otlp.mjs";
import { root } from "./user.mjs";

const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-otel-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The caller's span, as VS Code sends it beside its own ids. */
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const request = {
  jsonrpc: "2.0", id: 7, method: "tools/call",
  params: { name: "execute_query", _meta: {
    [KEY]: { turnId: "turn-1", model: { name: "m-1" }, invocationReason: { text: "count rows" }, userIntent: { text: "how many?\r\nINFO forged" } },
    [UI_KEY]: { initiator: "app" },
    "vscode.conversationId": "c-42",
    "vscode.requestId": "r-7",
    traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
  } },
};

test("a record's attributes: the conventions' names where they exist, mcp_provenance.* for the rest", () => {
  const record = auditRecord(request, { sessionId: "s-1", principal: "alice" });
  const attributes = {
    "mcp.method.name": "tools/call",
    "mcp.session.id": "s-1",
    "jsonrpc.request.id": "7",
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "execute_query",
    "mcp_provenance.client_asserted.turn_id": "turn-1",
    "mcp_provenance.client_asserted.model": "m-1",
    "mcp_provenance.client_asserted.user_intent_redacted": true,
    "mcp_provenance.client_asserted.conversation_ids": ["c-42"],
    "mcp_provenance.client_asserted.turn_ids": ["turn-1"],
    "mcp_provenance.client_asserted.request_ids": ["r-7"],
    "mcp_provenance.client_asserted.correlation_keys": [KEY, "vscode.conversationId", "vscode.requestId"],
    "mcp_provenance.host_attested.initiator": "app",
    "mcp_provenance.witnessed.principal": "alice",
    "mcp_provenance.valid": true,
    "mcp_provenance.diagnostics": ["AI-13 control-character"],
  };
  // What a user or a model wrote goes to traces only when the operator asks.
  assert.deepEqual(otelAttributes(record), attributes);
  assert.deepEqual(otelAttributes(record, { freeText: true }), {
    ...attributes,
    "mcp_provenance.client_asserted.invocation_reason": "count rows",
    "mcp_provenance.client_asserted.user_intent": "how many?  INFO forged",
  });
  assert.deepEqual(otelAttributes(auditRecord({ method: "ping" })), {
    "mcp.method.name": "ping", "mcp_provenance.valid": true, "mcp_provenance.diagnostics": [],
  });
});

test("the caller's span comes from the traceparent the core checked, and from nothing else", () => {
  assert.deepEqual(parentSpanContext(auditRecord(request)), { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: 1, isRemote: true });
  const withMeta = (meta) => auditRecord({ method: "tools/call", params: { name: "q", _meta: meta } });
  assert.equal(parentSpanContext(withMeta({})), undefined);
  // Invalid W3C Trace Context (an all-zero parent, upper case): no parent, and a warning in the record.
  for (const traceparent of [`00-${TRACE_ID}-0000000000000000-01`, `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`]) {
    const record = withMeta({ traceparent });
    assert.equal(parentSpanContext(record), undefined);
    assert.deepEqual(record.diagnostics.map((d) => d.code), ["invalid-traceparent"]);
  }
  // Not sampled: the flags go as they came.
  assert.equal(parentSpanContext(withMeta({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` })).traceFlags, 0);
});

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
  // No free text unless the operator asks for it.
  assert.equal(call.attributes["mcp_provenance.client_asserted.user_intent"], undefined);
  assert.equal(call.attributes["mcp_provenance.host_attested.initiator"], "app");
  assert.deepEqual(call.attributes["mcp_provenance.client_asserted.conversation_ids"], ["c-42"]);
  // The trace continues: the gateway's span is the child of the caller's.
  assert.equal(call.traceId, TRACE_ID);
  assert.equal(call.parentSpanId, PARENT_ID);
  // A request without a traceparent starts a trace of its own.
  const initialize = otlp.spans.find((span) => span.name === "initialize");
  assert.notEqual(initialize.traceId, TRACE_ID);
  assert.ok(!initialize.parentSpanId);
  assert.match(call.attributes["mcp.session.id"], /^[0-9a-f-]{36}$/);
  assert.deepEqual(otlp.spans.map((span) => span.name).sort(), ["initialize", "notifications/initialized", "tools/call refresh_dashboard"]);
});
