// The gateway in front of a server nobody here wrote: the official reference
// server "everything". Tool calls carrying both envelopes succeed, and come
// back exactly as they do without the gateway: it forwards, it never rewrites
// a reply (the echo rule is the server's to follow).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

import { start, stop } from "../examples/prototype/http.mjs";
import { AI_INVOCATION_KEY, UI_KEY, attachInvocation, stampInitiator } from "../pkg/dist/index.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const everythingScript = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-everything-"));
const log = join(dir, "gateway.jsonl");
let everything;
let gateway;

const freePort = () => new Promise((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});

before(async () => {
  const port = await freePort();
  everything = spawn(process.execPath, [everythingScript, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise((resolve, reject) => {
    let seen = "";
    everything.stderr.on("data", (chunk) => { seen += chunk; if (/listening on port/i.test(seen)) resolve(); });
    everything.on("exit", (code) => reject(new Error(`server-everything exited with ${code}: ${seen}`)));
  });
  gateway = await start(join(root, "examples/prototype/gateway.mjs"), ["--upstream", `http://127.0.0.1:${port}/mcp`, "--log", log]);
  gateway.direct = `http://127.0.0.1:${port}/mcp`;
});

after(async () => {
  await stop(gateway.child);
  await stop(everything);
  rmSync(dir, { recursive: true, force: true });
});

async function call(url, request) {
  const client = new Client({ name: "everything-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return await client.request(request, CallToolResultSchema);
  } finally {
    await client.close();
  }
}

const request = stampInitiator(attachInvocation(
  { method: "tools/call", params: { name: "echo", arguments: { message: "hello through the gateway" } } },
  { invocationReason: { text: "Check the gateway." }, model: { name: "example-model" }, userIntent: { text: "say hello" }, turnId: "turn-everything" },
));

test("a tool call with both envelopes succeeds through the gateway, its reply untouched", async () => {
  const through = await call(gateway.url, request);
  const direct = await call(gateway.direct, request);
  assert.notEqual(through.isError, true);
  assert.match(JSON.stringify(through.content), /hello through the gateway/);
  assert.deepEqual(through, direct);
});

test("the gateway forwarded both envelopes exactly as the host sent them (AI-12, UI-8)", () => {
  const forwarded = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line))
    .filter((entry) => entry.message?.method === "tools/call");
  assert.ok(forwarded.length >= 1);
  for (const entry of forwarded) {
    assert.deepEqual(entry.message.params._meta, request.params._meta);
    assert.deepEqual(entry.changes, []);
  }
  assert.equal(request.params._meta[UI_KEY].initiator, "app");
  assert.equal(request.params._meta[AI_INVOCATION_KEY].turnId, "turn-everything");
});
