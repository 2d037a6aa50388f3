// mcp-provenance/sdk: a real SDK Client and McpServer, each on a
// provenanceTransport: over InMemoryTransport with SDK 1.x, and over
// Streamable HTTP with the 2.x packages (whose server lifts reserved _meta
// keys before handlers run, so the record must be taken on the wire).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { test } from "node:test";

import { AI_INVOCATION_KEY as KEY, UI_KEY } from "../pkg/dist/index.mjs";
import { provenanceTransport } from "../pkg/dist/sdk.mjs";

const invocation = (turnId) => () => ({ turnId, model: { name: "example-model" }, userIntent: { text: "count\r\nINFO forged" }, invocationReason: { text: "asked" } });

/** A server with one tool; what its handler saw of `_meta`. */
function tool(McpServer, z, seen) {
  const server = new McpServer({ name: "s", version: "1.0.0" });
  server.registerTool("count", { description: "counts", inputSchema: { n: z.number().optional() } }, (_args, extra) => {
    seen.push(extra._meta ?? {});
    return { content: [{ type: "text", text: "3" }] };
  });
  return server;
}

/** SDK 1.x's Client and McpServer, and a linked pair of in-memory transports. */
async function inMemory() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
  const { z } = await import("zod");
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  return { Client, McpServer, z, clientSide, serverSide };
}

test("SDK 1.x over InMemoryTransport: attached by the client, audited and echoed by the server", async () => {
  const { Client, McpServer, z, clientSide, serverSide } = await inMemory();
  const records = [];
  const seen = [];
  await tool(McpServer, z, seen).connect(provenanceTransport(serverSide, { audit: (record) => { records.push(record); }, echo: true }));
  const client = new Client({ name: "c", version: "1.0.0" });
  await client.connect(provenanceTransport(clientSide, { invocation: invocation("turn-1") }));
  const result = await client.callTool({ name: "count", arguments: {} });

  assert.deepEqual(result._meta, { [KEY]: { turnId: "turn-1" } });
  const call = records.find((r) => r.method === "tools/call");
  assert.deepEqual(call.clientAsserted, { turnId: "turn-1", model: "example-model", invocationReason: "asked", userIntent: "count  INFO forged", userIntentRedacted: true,
    correlation: [{ kind: "turn", value: "turn-1", key: KEY, member: "turnId" }] });
  assert.equal(call.tool, "count");
  assert.deepEqual(records.map((r) => r.method), ["initialize", "notifications/initialized", "tools/call"]);
  // SDK 1.x handlers still see the key as it came; the audit saw it before them.
  assert.equal(seen[0][KEY].turnId, "turn-1");
  await client.close();
});

test("a request whose audit fails is answered with an error and never served", async () => {
  const { Client, McpServer, z, clientSide, serverSide } = await inMemory();
  const seen = [];
  const audit = async (record) => { if (record.method === "tools/call") throw new Error("store down"); };
  await tool(McpServer, z, seen).connect(provenanceTransport(serverSide, { audit }));
  const client = new Client({ name: "c", version: "1.0.0" });
  await client.connect(clientSide);
  await assert.rejects(client.callTool({ name: "count", arguments: {} }), /could not be audited/);
  assert.equal(seen.length, 0);
  await client.close();
});

test("a handler that throws is reported through onerror, and the messages after it still arrive in order", async () => {
  const transport = { start: async () => {}, send: async () => {}, close: async () => {} };
  const wrapped = provenanceTransport(transport, { audit: async () => {} });
  const errors = [];
  const seen = [];
  wrapped.onerror = (error) => errors.push(error.message);
  wrapped.onmessage = (message) => {
    if (message.id === 1) throw new Error("handler failed");
    seen.push(message.id);
  };
  for (const id of [1, 2, 3]) transport.onmessage({ jsonrpc: "2.0", id, method: "ping" });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(errors, ["handler failed"]);
  assert.deepEqual(seen, [2, 3]);
});

test("a bad option is a RangeError at once", () => {
  const transport = { start: async () => {}, send: async () => {}, close: async () => {} };
  assert.throws(() => provenanceTransport(transport, { audit: "yes" }), (e) => e instanceof RangeError && e.code === "invalid-option");
  assert.throws(() => provenanceTransport(transport, { echos: true }), (e) => e instanceof RangeError && e.code === "unknown-option");
});

/** A Node HTTP server in front of a web-standard transport's handleRequest. */
async function serve(handle) {
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
    const response = await handle(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) Readable.fromWeb(response.body).pipe(res);
    else res.end();
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: new URL(`http://127.0.0.1:${http.address().port}/mcp`), close: () => { http.closeAllConnections(); http.close(); } };
}

test("SDK 2.x over Streamable HTTP: the audit sees the keys the SDK lifts before handlers, the echo reaches the client", async () => {
  const { McpServer, WebStandardStreamableHTTPServerTransport } = await import("@modelcontextprotocol/server");
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const { z } = await import("zod");
  const records = [];
  const seen = [];
  const inner = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID() });
  await tool(McpServer, z, seen).connect(provenanceTransport(inner, { audit: (record) => { records.push(record); }, echo: true }));
  const http = await serve((request) => inner.handleRequest(request));
  try {
    const client = new Client({ name: "c", version: "1.0.0" });
    await client.connect(provenanceTransport(new StreamableHTTPClientTransport(http.url), { invocation: invocation("turn-2") }));
    const stamped = { [UI_KEY]: { initiator: "app" } };
    const result = await client.callTool({ name: "count", arguments: {}, _meta: stamped });
    assert.deepEqual(result._meta?.[KEY], { turnId: "turn-2" });
    const call = records.find((r) => r.method === "tools/call");
    assert.equal(call.clientAsserted.turnId, "turn-2");
    assert.equal(call.hostAttested.initiator, "app");
    assert.equal(call.witnessed.sessionId, inner.sessionId);
    // What the handler saw: SDK 2.x took the reserved keys away first.
    assert.equal(seen[0][KEY], undefined);
    await client.close();
  } finally {
    http.close();
  }
});
