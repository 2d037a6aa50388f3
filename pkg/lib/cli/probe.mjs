// `mcp-provenance probe`: what SEP-2817 and the MCP Apps initiator proposal
// make visible on the wire, checked against a running MCP server over
// Streamable HTTP with the official SDK client. Scenarios are shaped as the
// official conformance suite shapes its own (a scenario runs and returns
// checks, each with an ID, a status and its spec references), so they can be
// proposed there: MUST → FAILURE, SHOULD → WARNING, MAY → INFO.
import { parseArgs } from "node:util";

import { AI_INVOCATION_KEY, UI_KEY } from "../api.mjs";
import { UsageError } from "./check.mjs";

export const PROBE_USAGE = `usage: mcp-provenance probe --url <http://host/mcp> [options]

Runs the wire scenarios of SEP-2817 and the Apps initiator proposal against a server.
  --tool <name>          the tool to call (default: the first tool whose required
                         arguments the probe can fill)
  --arguments <json>     the arguments to call it with
  --format text|json     a table (default) or JSON checks
Exit: 0 no failure, 1 a MUST check failed, 2 bad usage or no server to probe.`;

const VENDOR_KEY = "com.example/aiInvocation";
/** Strings that exist only in the envelopes the probe sends: seen anywhere in an answer, they leaked. */
const MARKS = { intent: "probe-intent-7d1f", reason: "probe-reason-7d1f", model: "probe-model-7d1f" };
const REFS = {
  sep: { id: "SEP-2817", url: "https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2817" },
  apps: { id: "ext-apps#738", url: "https://github.com/modelcontextprotocol/ext-apps/issues/738" },
};

/** A full envelope whose strings carry the marks. */
const envelope = (turnId, extra = {}) => ({
  invocationReason: { text: MARKS.reason },
  model: { name: MARKS.model },
  userIntent: { text: MARKS.intent },
  turnId,
  ...extra,
});

/** A check as the conformance suite reports one. */
function verdict(id, rule, level, description, passed, details) {
  return {
    id, rule, level, description,
    status: passed === undefined ? "SKIPPED" : passed ? "SUCCESS" : { MUST: "FAILURE", SHOULD: "WARNING", MAY: "INFO" }[level],
    timestamp: new Date().toISOString(),
    specReferences: [rule.startsWith("UI") ? REFS.apps : REFS.sep],
    ...(details !== undefined && { details }),
  };
}

/** Arguments that satisfy a tool's required inputs, as far as their types say. */
function argumentsFor(tool) {
  const schema = tool.inputSchema ?? {};
  const filled = {};
  for (const name of schema.required ?? []) {
    const type = schema.properties?.[name]?.type;
    const value = { string: "probe", number: 1, integer: 1, boolean: false, array: [], object: {} }[type];
    if (value === undefined) return undefined;
    filled[name] = value;
  }
  return filled;
}

/** What a call came back as: a result, or the JSON-RPC error it was refused with. */
async function attempt(ctx, meta, name = ctx.tool, args = ctx.arguments) {
  try {
    const result = await ctx.client.request({ method: "tools/call", params: { name, arguments: args, ...(meta && { _meta: meta }) } });
    return { result };
  } catch (error) {
    return { error: { code: error.code, message: error.message, data: error.data } };
  }
}

const accepted = (outcome) => "result" in outcome;
/** Which marks appear anywhere in what came back. */
const leaked = (outcome) => Object.entries(MARKS).filter(([, mark]) => JSON.stringify(outcome).includes(mark)).map(([field]) => field);
/** The entry under `key` in a result's _meta, as echoed. */
const echoed = (outcome, key) => outcome.result?._meta?.[key];
const onlyTurnId = (entry, turnId) => entry === undefined || (Object.keys(entry).length === 1 && entry.turnId === turnId);

/** The scenarios: each runs against a connected client and returns its checks. */
export const SCENARIOS = [
  {
    name: "sep2817-envelope-accepted",
    description: "A server accepts a tools/call whatever its audit envelope: absent, valid, with unknown fields, under a vendor key, or hostile but valid JSON.",
    source: { extension: "SEP-2817" },
    async run(ctx) {
      const baseline = ctx.baseline;
      const same = (outcome) => (accepted(baseline) ? accepted(outcome) : undefined);
      const hostile = envelope("probe-turn-hostile", { userIntent: { text: `a\r\nINFO audit: approved\u202e ${"x".repeat(100_000)}` } });
      return [
        verdict("AI-1-absent", "AI-1", "MUST", "a call without the envelope is served", accepted(baseline), baseline.error),
        verdict("AI-2-valid", "AI-2", "MUST", "a call with a valid envelope is served as one without", same(await attempt(ctx, { [AI_INVOCATION_KEY]: envelope("probe-turn-valid") }))),
        verdict("AI-8-unknown-fields", "AI-8", "MUST", "unknown envelope fields are tolerated", same(await attempt(ctx, { [AI_INVOCATION_KEY]: envelope("probe-turn-unknown", { probeExtra: { nested: 1 } }) }))),
        verdict("KEY-3-vendor-key", "KEY-3", "SHOULD", "an envelope under a vendor key is served", same(await attempt(ctx, { [VENDOR_KEY]: envelope("probe-turn-vendor") }))),
        verdict("AI-13-hostile", "AI-13", "SHOULD", "CR/LF, a bidi override and a 100 KB intent do not fail the call (neutralize, do not refuse)", same(await attempt(ctx, { [AI_INVOCATION_KEY]: hostile }))),
        verdict("AI-6-empty-intent", "AI-6", "MUST", "an empty userIntent is not malformed", same(await attempt(ctx, { [AI_INVOCATION_KEY]: { userIntent: {}, turnId: "probe-turn-empty" } }))),
      ];
    },
  },
  {
    name: "sep2817-echo",
    description: "A server echoes nothing or only the request's turnId in result._meta[key], never the other fields, in results and errors alike.",
    source: { extension: "SEP-2817" },
    async run(ctx) {
      const valid = await attempt(ctx, { [AI_INVOCATION_KEY]: envelope("probe-turn-echo") });
      const vendor = await attempt(ctx, { [VENDOR_KEY]: envelope("probe-turn-echo-vendor") });
      const missing = await attempt(ctx, { [AI_INVOCATION_KEY]: envelope("probe-turn-error") }, "probe-no-such-tool-7d1f", {});
      const entry = echoed(valid, AI_INVOCATION_KEY);
      return [
        verdict("AI-11-only-turnId", "AI-11", "MUST", "result._meta[key] is absent or exactly { turnId } of the request", accepted(valid) ? onlyTurnId(entry, "probe-turn-echo") : undefined, entry),
        verdict("AI-11-no-leak", "AI-11", "MUST", "no userIntent, invocationReason or model text anywhere in the result", accepted(valid) ? leaked(valid).length === 0 : undefined, leaked(valid)),
        verdict("AI-11-no-leak-in-errors", "AI-11", "MUST", "no envelope text in the answer to a call that fails", leaked(missing).length === 0, leaked(missing)),
        verdict("AI-11-vendor-key", "AI-11", "MUST", "under a vendor key, the same: at most the turnId, no other text", accepted(vendor) ? onlyTurnId(echoed(vendor, VENDOR_KEY), "probe-turn-echo-vendor") && leaked(vendor).length === 0 : undefined),
        verdict("AI-11-echoes-turnId", "AI-11", "MAY", "the turnId is echoed, so the host can join the answer to its turn", accepted(valid) ? entry?.turnId === "probe-turn-echo" : undefined),
      ];
    },
  },
  {
    name: "apps-initiator",
    description: "A server accepts a tools/call a Host stamped initiator: \"app\", and one with no initiator (unknown).",
    source: { extension: "ext-apps#738" },
    async run(ctx) {
      const stamped = await attempt(ctx, { [UI_KEY]: { initiator: "app" } });
      return [
        verdict("UI-1-stamped-accepted", "UI-1", "SHOULD", "a call a Host stamped initiator app is served", accepted(ctx.baseline) ? accepted(stamped) : undefined, stamped.error),
        verdict("UI-7-unknown-value", "UI-7", "SHOULD", "an unknown initiator value does not fail the call", accepted(ctx.baseline) ? accepted(await attempt(ctx, { [UI_KEY]: { initiator: "probe-unknown" } })) : undefined),
      ];
    },
  },
];

/** The options of `probe`; throws UsageError. */
function options(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { url: { type: "string" }, tool: { type: "string" }, arguments: { type: "string" }, format: { type: "string", default: "text" } } });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values } = parsed;
  if (!values.url || !URL.canParse(values.url)) throw new UsageError("probe needs --url <http://host/mcp>");
  if (!["text", "json"].includes(values.format)) throw new UsageError("--format is text or json");
  let args;
  if (values.arguments !== undefined) {
    try {
      args = JSON.parse(values.arguments);
    } catch {
      throw new UsageError("--arguments takes a JSON object");
    }
  }
  return { ...values, arguments: args };
}

/** Connects, picks the tool, makes the baseline call: the context each scenario runs with. */
async function connect({ url, tool, arguments: args }) {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const client = new Client({ name: "mcp-provenance-probe", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const { tools } = await client.listTools();
  const chosen = tool !== undefined ? tools.find((t) => t.name === tool) : tools.find((t) => argumentsFor(t) !== undefined);
  const ctx = { client, tool: chosen?.name ?? tool, arguments: args ?? (chosen && argumentsFor(chosen)) ?? {} };
  ctx.baseline = await attempt(ctx, undefined);
  return ctx;
}

/** The checks as a table, and the last line. */
function table(checks) {
  const rows = [["ID", "rule", "level", "status", "what"], ...checks.map((c) => [c.id, c.rule, c.level, c.status, c.description])];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join("  ")).join("\n");
}

/** Runs `probe` with `argv`; the exit code. */
export async function probe(argv, io) {
  const chosen = options(argv);
  let ctx;
  try {
    ctx = await connect(chosen);
  } catch (error) {
    io.stderr.write(`mcp-provenance probe: cannot probe ${chosen.url}: ${error?.message}\n`);
    return 2;
  }
  const checks = [];
  try {
    for (const scenario of SCENARIOS) checks.push(...(await scenario.run(ctx)).map((check) => ({ scenario: scenario.name, ...check })));
  } finally {
    await ctx.client.close().catch(() => {});
  }
  const count = (status) => checks.filter((c) => c.status === status).length;
  const last = `${count("SUCCESS")} passed, ${count("FAILURE")} failed, ${count("WARNING")} warnings`;
  if (chosen.format === "json") io.stdout.write(`${JSON.stringify({ url: chosen.url, tool: ctx.tool, checks }, null, 2)}\n${last}\n`);
  else io.stdout.write(`probing ${chosen.url} with tool ${ctx.tool ?? "(none)"}\n\n${table(checks)}\n\n${last}\n`);
  return count("FAILURE") > 0 ? 1 : 0;
}
