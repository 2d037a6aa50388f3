// The host: replays data/transcript.json against the gateway over real MCP,
// as a host with a model and an embedded App would, checks every reply, and
// at the end reads the server's audit trail back with SQL and prints it.
//
//   node examples/prototype/host.mjs --gateway <url> --audit <audit.db> --log <gateway.jsonl>
//
// Run by the conformance suite's client scenarios (upstream/conformance),
// it replays the scenario's script (MCP_CONFORMANCE_CONTEXT, turns of the
// transcript's shape) against the URL given as its last argument, and
// prints no trail.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { parseArgs } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import Database from "better-sqlite3";

import { stampAppCalls } from "mcp-provenance/ext-apps";
import { AI_INVOCATION_KEY, clearInitiator, sanitize } from "mcp-provenance";
import { provenanceTransport } from "mcp-provenance/sdk";

const { values: options, positionals } = parseArgs({
  options: { gateway: { type: "string" }, audit: { type: "string" }, log: { type: "string" } },
  allowPositionals: true,
});
const script = process.env.MCP_CONFORMANCE_CONTEXT;
/** The correlation ids a traceparent gives, shown as one trace id. */
const TRACE_KINDS = ["trace", "parentSpan", "traceFlags"];
const NO_TURN = "(none: session set-up, the client of today and the legacy client)";
const transcript = JSON.parse(script ?? readFileSync(new URL("data/transcript.json", import.meta.url), "utf8"));
const url = script ? positionals.at(-1) : options.gateway;

/** The envelope of the tool call being made, which the client's transport attaches (mcp-provenance/sdk). */
let envelope;
const client = new Client({ name: "prototype-host", version: "1.0.0" });
await client.connect(provenanceTransport(new StreamableHTTPClientTransport(new URL(url)), {
  invocation: (request) => (request.method === "tools/call" ? envelope : undefined),
}));
const callTool = (request) => client.request(request, CallToolResultSchema);

/**
 * What an MCP Apps host's AppBridge does with the requests a View sent
 * (mcp-provenance/ext-apps): the host stamps `initiator: "app"` over
 * whatever the View claimed (UI-1, UI-3). A click is a turn of its own.
 */
const bridge = stampAppCalls({}, (request) => callTool(request));

/** A W3C traceparent for a new span of `traceId`: the host traces each turn it runs (SEP-414). */
const traceparent = (traceId) => `00-${traceId}-${randomUUID().replaceAll("-", "").slice(0, 16)}-01`;

/**
 * The envelope as the host sends it: within the library's default limits, a
 * long intent cut and marked redacted (AI-14, AI-15).
 */
function bounded(written) {
  const request = { jsonrpc: "2.0", id: 0, method: "tools/call", params: { name: "", _meta: { [AI_INVOCATION_KEY]: written } } };
  return sanitize(request).message.params._meta[AI_INVOCATION_KEY];
}

/**
 * A call the model chose: its audit context, its turn's trace, and no App
 * marker (UI-2). A hostile turn's envelope goes as written, as a hostile
 * client would send it, for the gateway and server to neutralize.
 */
function fromModel(turn, call, turnId, traceId) {
  const written = {
    invocationReason: { text: call.reason },
    model: { name: turn.model ?? transcript.model },
    userIntent: { text: turn.user + "A".repeat(turn.pad ?? 0) },
    turnId,
  };
  envelope = turn.hostile ? written : bounded(written);
  const _meta = { traceparent: traceparent(traceId), ...call.meta };
  return callTool(clearInitiator({ method: "tools/call", params: { name: call.tool, arguments: call.arguments, _meta } }));
}

console.log(`replaying ${transcript.turns.length} turns through ${url}\n`);
for (const turn of transcript.turns) {
  const turnId = turn.legacy || turn.today ? undefined : randomUUID();
  const traceId = randomUUID().replaceAll("-", "");
  const who = turn.user !== undefined ? `user: ${JSON.stringify(turn.user.slice(0, 60))}${turn.pad ? ` + ${turn.pad} more characters` : ""}`
    : turn.click !== undefined ? `click in ${transcript.app}: ${turn.click}`
    : turn.today !== undefined ? `client of today: ${turn.today}` : `legacy client: ${turn.legacy}`;
  console.log(`turn ${turnId ?? "(none)"}  ${who}`);
  for (const call of turn.calls) {
    envelope = turnId === undefined ? undefined : { turnId };
    const result = await (turn.user !== undefined ? fromModel(turn, call, turnId, traceId)
      : turn.click !== undefined ? bridge.oncalltool({ name: call.tool, arguments: call.arguments, _meta: call.meta }, {})
      : callTool({ method: "tools/call", params: { name: call.tool, arguments: call.arguments, ...(call.meta && { _meta: call.meta }) } }));
    const echoed = result._meta?.[AI_INVOCATION_KEY];
    assert.deepEqual(echoed, turnId === undefined ? undefined : { turnId }, `the reply to ${call.tool} must echo this turn's turnId and nothing else`);
    const answer = result.content.map((part) => part.text).join(" ");
    console.log(`  ${call.tool} -> ${result.isError ? "tool error: " : ""}${answer.length > 90 ? `${answer.slice(0, 90)}…` : answer}`);
  }
}
await client.close();

if (!script) printTrail(options.audit, options.log);

/** The audit trail, read back from the server's store with SQL, grouped by turn. */
function printTrail(databasePath, logPath) {
  const db = new Database(databasePath, { readonly: true });
  const rows = db.prepare("SELECT * FROM audit ORDER BY seq").all();
  db.close();
  const turns = new Map();
  for (const row of rows) {
    const turn = row.turn_id ?? NO_TURN;
    turns.set(turn, [...(turns.get(turn) ?? []), row]);
  }
  const show = (text) => text === null ? "—" : JSON.stringify(text.length > 70 ? `${text.slice(0, 70)}…` : text) + (text.length > 70 ? ` (${Buffer.byteLength(text)} bytes)` : "");
  let errors = 0;
  let warnings = 0;
  let sanitized = 0;
  console.log(`\naudit trail, read back from ${relative(process.cwd(), databasePath)}:`);
  for (const [turn, requests] of turns) {
    console.log(`\nturn ${turn}`);
    for (const row of requests) {
      const diagnostics = JSON.parse(row.diagnostics);
      const changes = JSON.parse(row.changes);
      errors += diagnostics.filter((d) => d.severity === "error").length;
      warnings += diagnostics.filter((d) => d.severity === "warning").length;
      sanitized += changes.length > 0;
      console.log(`  #${row.seq} ${row.method}${row.tool ? ` ${row.tool}` : ""}  id ${row.request_id ?? "—"}`);
      console.log(`     host-attested    initiator ${row.initiator ?? "— (unknown)"}`);
      if (row.model ?? row.invocation_reason ?? row.user_intent ?? row.user_intent_redacted) {
        console.log(`     client-asserted  model ${show(row.model)}, reason ${show(row.invocation_reason)}`);
        console.log(`                      intent ${show(row.user_intent)}${row.user_intent_redacted ? " (redacted)" : ""}`);
      }
      // The ids the client sent under its own keys, and the trace the request belongs to (COR-1).
      // (The envelope's turnId heads its turn; the trace is shown by its id alone.)
      const ids = JSON.parse(row.correlation ?? "[]").filter((id) => !TRACE_KINDS.includes(id.kind) && id.member !== "turnId");
      if (ids.length > 0) console.log(`     client-asserted  ${ids.map((id) => `${id.kind} ${show(id.value)} (${id.key}${id.member ? `.${id.member}` : ""})`).join(", ")}`);
      if (row.trace_id) console.log(`     client-asserted  trace ${row.trace_id} (traceparent)`);
      console.log(`     witnessed        received ${row.received_at}, session ${row.session_id?.slice(0, 8) ?? "—"}…`);
      for (const d of diagnostics) console.log(`     ${d.severity.padEnd(7)} ${d.rule.padEnd(5)} ${d.code} at ${d.path}`);
    }
  }
  console.log(`\naudited ${rows.length} requests in ${turns.size - turns.has(NO_TURN)} turns: ${errors} errors, ${warnings} warnings, ${sanitized} sanitized; database ${relative(process.cwd(), databasePath)}, gateway log ${relative(process.cwd(), logPath)}`);
}
