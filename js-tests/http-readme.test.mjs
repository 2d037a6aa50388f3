// The README's "In your HTTP server" section, its JavaScript as a user
// copies it: the program (Express, in front of SDK 1.x's transport) is run
// and served, the module (a Fetch handler over SDK 2.x's createMcpHandler)
// is imported and served; each is called by the SDK's own client with the
// SEP-2817 envelope. The client gets its turnId and nothing else back, and
// the audit lines the code writes hold the call's record, redacted.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";

import { createAdaptorServer } from "@hono/node-server";

import { stop } from "../examples/prototype/http.mjs";
import { KEY, SECRET } from "./http-stacks.mjs";
import { root } from "./user.mjs";

const readme = readFileSync(join(root, "README.md"), "utf8");
const section = /^## In your HTTP server\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1] ?? "";
/** The section's JavaScript: a program to run, and a module whose default export is a Fetch handler. */
const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map(([, source]) => source);
const META = { [KEY]: { turnId: "turn-7", model: { name: "example-model" }, userIntent: { text: SECRET } } };
let dir;

before(() => {
  // Inside the repository, so that the package and the SDKs resolve as a user's project has them.
  mkdirSync(join(root, "target"), { recursive: true });
  dir = mkdtempSync(join(root, "target", "http-readme-"));
});

after(() => rmSync(dir, { recursive: true, force: true }));

test("the section has the program and the module", () => {
  assert.equal(blocks.length, 2, "README.md's 'In your HTTP server' has two js blocks");
  assert.ok(!blocks[0].includes("export default") && blocks[1].includes("export default"));
});

/** Calls the tool with the envelope through `Client` (of either SDK) over Streamable HTTP at `url`; the result. */
async function called(Client, Transport, url) {
  const client = new Client({ name: "host", version: "1.0.0" });
  await client.connect(new Transport(new URL(url)));
  try {
    return await client.callTool({ name: "open_orders", arguments: {}, _meta: META });
  } finally {
    await client.close();
  }
}

/** Checks the audit `lines` a block wrote: the call's record, redacted, and no byte of the intent. */
function audited(lines) {
  const accounts = lines.map((line) => JSON.parse(line));
  const call = accounts.find((account) => account.record?.method === "tools/call");
  assert.equal(call.record.clientAsserted.turnId, "turn-7");
  assert.equal(call.record.clientAsserted.userIntentRedacted, true);
  assert.ok(!lines.join("\n").includes(SECRET));
}

test("the program serves Express with the middleware in front of the SDK's transport", async () => {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const program = join(dir, "server.mjs");
  writeFileSync(program, blocks[0]);
  const child = spawn(process.execPath, [program], { env: { ...process.env, PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => { out += chunk; });
  try {
    const url = await new Promise((resolve, reject) => {
      let seen = "";
      child.stderr.on("data", (chunk) => {
        seen += chunk;
        const listening = /listening on (\S+)/.exec(seen);
        if (listening) resolve(listening[1]);
      });
      child.on("exit", (code) => reject(new Error(`the program exited with ${code}: ${seen}`)));
    });
    const result = await called(Client, StreamableHTTPClientTransport, url);
    assert.match(JSON.stringify(result.content), /3 open orders/);
    assert.deepEqual(result._meta, { [KEY]: { turnId: "turn-7" } });
    audited(out.trim().split("\n"));
  } finally {
    await stop(child);
  }
});

test("the module's Fetch handler serves the SDK 2.x handler with the middleware in front", async (t) => {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const module = join(dir, "handler.mjs");
  writeFileSync(module, blocks[1]);
  const { default: { fetch } } = await import(pathToFileURL(module).href);
  const written = t.mock.method(console, "log", () => {});
  const server = createAdaptorServer({ fetch });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const result = await called(Client, StreamableHTTPClientTransport, `http://127.0.0.1:${server.address().port}/mcp`);
    assert.match(JSON.stringify(result.content), /3 open orders/);
    assert.deepEqual(result._meta?.[KEY], { turnId: "turn-7" });
    audited(written.mock.calls.map((call) => call.arguments[0]));
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
