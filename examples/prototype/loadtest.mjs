// The prototype under load and faults. CLIENTS MCP clients make CALLS tool
// calls each, at once, through the gateway to the employees server: every
// call must be answered and audited exactly once, and the gateway's log
// gives the latency it added. Then the server is killed in the middle of a
// second run: the gateway must answer each call with a JSON-RPC error (no
// hang, no crash), and once the server restarts on the same database every
// audit row committed before the kill must still be there. Prints figures;
// asserts the counts, never a time.
//
//   make loadtest      (or: node examples/prototype/loadtest.mjs [--clients 16] [--calls 500])

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Database from "better-sqlite3";

import { AI_INVOCATION_KEY } from "mcp-provenance";
import { start, stop } from "./http.mjs";

const { values: options } = parseArgs({
  options: { clients: { type: "string", default: "16" }, calls: { type: "string", default: "500" }, out: { type: "string", default: "target/loadtest" } },
});
const CLIENTS = Number(options.clients);
const CALLS = Number(options.calls);
const out = resolve(options.out);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const here = (file) => new URL(file, import.meta.url).pathname;
const logFile = join(out, "gateway.jsonl");
const auditFile = join(out, "audit.db");

/** Audit rows of tools/call: how many, and how many distinct (session, request id) pairs. */
function audited() {
  const db = new Database(auditFile, { readonly: true });
  const row = db.prepare("SELECT count(*) AS n, count(DISTINCT session_id || '/' || request_id) AS distinctCalls FROM audit WHERE method = 'tools/call'").get();
  db.close();
  return row;
}

/** One client making `calls` tool calls in a row; what became of each. */
async function client(gatewayUrl, index, calls, onCall = () => {}) {
  const mcp = new Client({ name: `load-${index}`, version: "1.0.0" });
  const outcome = { ok: 0, failed: 0, slowestFailureMs: 0 };
  try {
    await mcp.connect(new StreamableHTTPClientTransport(new URL(gatewayUrl)));
  } catch {
    outcome.failed = calls;
    return outcome;
  }
  for (let n = 0; n < calls; n++) {
    const started = performance.now();
    try {
      await mcp.callTool({
        name: n % 2 ? "list_tables" : "refresh_dashboard",
        arguments: {},
        _meta: { [AI_INVOCATION_KEY]: { invocationReason: { text: "load test" }, model: { name: "load" }, turnId: `c${index}-t${n >> 3}` } },
      });
      outcome.ok++;
    } catch {
      outcome.failed++;
      outcome.slowestFailureMs = Math.max(outcome.slowestFailureMs, performance.now() - started);
    }
    onCall();
  }
  await mcp.close().catch(() => {});
  return outcome;
}

/** The gateway's log lines, once `complete` holds for them or a few seconds have passed. */
async function logLines(complete) {
  for (let waited = 0; ; waited += 20) {
    const lines = readFileSync(logFile, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    if (complete(lines) || waited >= 5000) return lines;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sum = (outcomes, key) => outcomes.reduce((total, o) => total + o[key], 0);
const percentile = (values, p) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

let server = await start(here("server.mjs"), ["--data", out]);
const gateway = await start(here("gateway.mjs"), ["--upstream", server.url, "--log", logFile]);
try {
  // --- Load -----------------------------------------------------------------
  const began = performance.now();
  const outcomes = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(gateway.url, i, CALLS)));
  const seconds = (performance.now() - began) / 1000;
  const calls = CLIENTS * CALLS;
  const rows = audited();
  // One line per message as it is forwarded, then one timing line per exchange, written as its
  // answer leaves: the last may land a moment after the client has it.
  const all = await logLines((lines) => lines.filter((l) => l.methods?.includes("tools/call")).length >= calls);
  const lines = all.filter((l) => l.message?.method === "tools/call");
  const exchanges = all.filter((l) => l.methods?.includes("tools/call"));
  const added = exchanges.map((l) => l.roundTripMs - l.upstreamMs);
  const filtering = exchanges.map((l) => l.filterMs);
  console.log(`load: ${CLIENTS} clients x ${CALLS} calls = ${calls} tool calls in ${seconds.toFixed(1)} s (${(calls / seconds).toFixed(0)}/s)`);
  console.log(`  answered ${sum(outcomes, "ok")}, failed ${sum(outcomes, "failed")}; audit rows ${rows.n} (${rows.distinctCalls} distinct calls); gateway log lines ${lines.length}`);
  console.log(`  added by the gateway: p50 ${percentile(added, 50).toFixed(2)} ms, p99 ${percentile(added, 99).toFixed(2)} ms; of which the filter p50 ${percentile(filtering, 50).toFixed(3)} ms, p99 ${percentile(filtering, 99).toFixed(3)} ms`);
  assert.equal(sum(outcomes, "ok"), calls, "every call is answered");
  assert.equal(rows.n, calls, "every call is audited");
  assert.equal(rows.distinctCalls, calls, "and exactly once");
  assert.equal(lines.length, calls, "every call is logged as forwarded");
  assert.equal(added.length, calls, "and its exchange timed");

  // --- Faults -----------------------------------------------------------------
  const before = audited().n;
  let made = 0;
  let killed;
  const killAt = Math.floor((CLIENTS * CALLS) / 4);
  const faulted = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(gateway.url, 100 + i, CALLS / 2, () => {
    if (++made === killAt) {
      killed = { atCall: made };
      server.child.kill("SIGKILL");
    }
  })));
  const rowsAtKill = audited().n - before;
  assert.equal(gateway.child.exitCode, null, "the gateway lives on");
  server = await start(here("server.mjs"), ["--data", out, "--port", new URL(server.url).port]);
  const rowsAfterRestart = audited().n - before;
  const recovered = await client(gateway.url, 200, 10);
  console.log(`faults: the server was killed at call ${killed.atCall} of ${(CLIENTS * CALLS) / 2}`);
  console.log(`  answered ${sum(faulted, "ok")}, JSON-RPC errors ${sum(faulted, "failed")} (slowest error ${Math.max(...faulted.map((o) => o.slowestFailureMs)).toFixed(0)} ms); the gateway did not crash`);
  console.log(`  audit rows committed before the kill: ${rowsAtKill}; after the restart on the same database: ${rowsAfterRestart}`);
  console.log(`  after the restart, a new client's calls: ${recovered.ok} of 10 answered`);
  assert.ok(sum(faulted, "ok") <= rowsAtKill, "every answered call was audited before it was answered");
  assert.equal(rowsAfterRestart, rowsAtKill, "no committed row is lost");
  assert.equal(recovered.ok, 10, "the gateway serves again once the server is back");
} finally {
  await stop(gateway.child);
  await stop(server.child);
}
