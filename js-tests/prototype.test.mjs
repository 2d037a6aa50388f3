// The whole prototype over real MCP: the host replays the transcript through
// the gateway to the employees server, and the assertions read the server's
// audit store, as an auditor would.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import Database from "better-sqlite3";

const root = fileURLToPath(new URL("..", import.meta.url));
const transcript = JSON.parse(readFileSync(join(root, "examples/prototype/data/transcript.json"), "utf8"));
const AI13 = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
const dirs = [];
/** Every call the host makes, in order: the rows of tools/call come in this order. */
const sentCalls = transcript.turns.flatMap((turn) => turn.calls.map((call) => ({ turn, call })));

/** Runs the prototype into a fresh folder; its output and its audit rows. */
function runPrototype(...flags) {
  const out = mkdtempSync(join(tmpdir(), "mcp-provenance-prototype-"));
  dirs.push(out);
  const stdout = execFileSync(process.execPath, ["examples/prototype/run.mjs", "--out", out, ...flags], { cwd: root, encoding: "utf8" });
  const db = new Database(join(out, "audit.db"), { readonly: true });
  const rows = db.prepare("SELECT * FROM audit ORDER BY seq").all();
  db.close();
  return { out, stdout, rows, calls: rows.filter((row) => row.method === "tools/call") };
}

after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("the prototype, as the gateway forwards by default", () => {
  let run;
  before(() => { run = runPrototype(); });

  test("its last line counts what was audited and says where", () => {
    const last = run.stdout.trim().split("\n").pop();
    assert.match(last, /^audited 11 requests in 6 turns: 0 errors, 4 warnings, 1 sanitized; database .*audit\.db, gateway log .*gateway\.jsonl$/);
  });

  test("the requests of one turn share its turnId, and each turn its own", () => {
    const turnIds = sentCalls.map(({ turn }, index) => [transcript.turns.indexOf(turn), run.calls[index].turn_id]);
    for (const [turn, turnId] of turnIds) {
      const same = turnIds.filter(([other]) => other === turn).map(([, id]) => id);
      assert.ok(same.every((id) => id === turnId), `turn ${turn} has one turnId`);
      assert.ok(turnIds.every(([other, id]) => other === turn || id !== turnId || id === null), `turn ${turn} has its own`);
    }
    assert.equal(new Set(run.calls.map((row) => row.turn_id).filter(Boolean)).size, transcript.turns.filter((turn) => !turn.legacy && !turn.today).length);
  });

  test("App clicks carry initiator app, the View's spoof overwritten; model calls carry none", () => {
    const clicks = run.calls.filter((row) => row.tool === "refresh_dashboard" && row.model === null);
    assert.equal(clicks.length, 2);
    assert.deepEqual(clicks.map((row) => row.initiator), ["app", "app"]);
    assert.ok(run.rows.every((row) => row.initiator !== "model"), "the View's initiator: model never reached the server");
    const strayMarker = run.calls.find((row) => row.tool === "refresh_dashboard" && row.model !== null);
    assert.equal(strayMarker.initiator, null, "clearInitiator removed the model call's stray app marker");
  });

  test("no stored field holds a log-forging or bidi character", () => {
    for (const row of run.rows) {
      for (const [column, value] of Object.entries(row)) {
        assert.ok(typeof value !== "string" || !AI13.test(value), `${column} of #${row.seq}`);
      }
    }
  });

  test("userIntentRedacted is true exactly where the text was changed", () => {
    sentCalls.forEach(({ turn, call }, index) => {
      const row = run.calls[index];
      const sent = turn.user !== undefined ? turn.user + "A".repeat(turn.pad ?? 0) : call.arguments.user_query ?? null;
      if (sent === null) {
        assert.equal(row.user_intent_redacted, null, `#${row.seq} carried no intent`);
      } else {
        assert.equal(Boolean(row.user_intent_redacted), row.user_intent !== sent, `#${row.seq}`);
      }
    });
    const hostile = run.calls.find((row) => row.user_intent_redacted);
    assert.equal(Buffer.byteLength(hostile.user_intent), 2048);
  });

  test("a client of today's own ids and every model call's trace are stored, each with its source", () => {
    const today = run.calls.find((row) => row.correlation?.includes("vscode.conversationId"));
    const meta = transcript.turns.find((turn) => turn.today).calls[0].meta;
    assert.deepEqual(JSON.parse(today.correlation).filter((id) => id.key.startsWith("vscode.")), [
      { kind: "conversation", value: meta["vscode.conversationId"], key: "vscode.conversationId" },
      { kind: "request", value: meta["vscode.requestId"], key: "vscode.requestId" },
    ]);
    assert.equal(today.trace_id, meta.traceparent.split("-")[1]);
    // The host traces each turn it runs: a model call's trace is its turn's, and each turn has its own.
    const modelCalls = run.calls.filter((row) => row.model !== null && row.turn_id !== null);
    assert.ok(modelCalls.every((row) => /^[0-9a-f]{32}$/.test(row.trace_id)));
    const traceOf = new Map(modelCalls.map((row) => [row.turn_id, row.trace_id]));
    assert.ok(modelCalls.every((row) => traceOf.get(row.turn_id) === row.trace_id));
    assert.equal(new Set(traceOf.values()).size, traceOf.size);
  });

  test("the legacy client's arguments were lifted into the envelope by the gateway", () => {
    const legacy = run.calls.find((row) => row.turn_id === null && row.tool === "execute_query");
    assert.equal(legacy.user_intent, "How many people work here?");
    assert.equal(legacy.invocation_reason, "Count the rows of the employees table.");
    const forwarded = readFileSync(join(run.out, "gateway.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const lifted = forwarded.find((entry) => entry.message?.params?.arguments?.query?.startsWith("SELECT count"));
    assert.deepEqual(Object.keys(lifted.message.params.arguments), ["query"]);
  });

  test("the Rust core, natively, computes the very records the server stored through wasm", () => {
    const lines = execFileSync("cargo", ["run", "--quiet", "--example", "audit_jsonl", "--", join(run.out, "gateway.jsonl")], { cwd: root, encoding: "utf8" })
      .trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(lines.length, run.rows.length);
    lines.forEach(({ record, changes }, index) => {
      const row = run.rows[index];
      const stored = {
        method: row.method,
        tool: row.tool ?? undefined,
        requestId: row.request_id === null ? undefined : JSON.parse(row.request_id),
        clientAsserted: {
          turnId: row.turn_id ?? undefined,
          model: row.model ?? undefined,
          invocationReason: row.invocation_reason ?? undefined,
          userIntent: row.user_intent ?? undefined,
          userIntentRedacted: row.user_intent_redacted === null ? undefined : Boolean(row.user_intent_redacted),
          correlation: row.correlation === null ? undefined : JSON.parse(row.correlation),
        },
        hostAttested: { initiator: row.initiator ?? undefined },
        // The gateway logs an initialize as it forwards it, before the server has named its session.
        witnessed: { sessionId: row.method === "initialize" ? undefined : row.session_id },
        diagnostics: JSON.parse(row.diagnostics),
        valid: Boolean(row.valid),
      };
      const strip = (value) => JSON.parse(JSON.stringify(value));
      // receivedAt is the one fact each side witnesses for itself.
      assert.deepEqual(strip(stored), strip({ ...record, witnessed: { sessionId: record.witnessed.sessionId } }), `record #${row.seq}`);
      assert.deepEqual(JSON.parse(row.changes), changes, `changes of #${row.seq}`);
    });
  });
});

describe("the prototype with the gateway's --redact-intent", () => {
  test("no intent text reaches the store, and every intent is marked redacted", () => {
    const run = runPrototype("--redact-intent");
    const intents = run.calls.filter((row) => row.user_intent_redacted !== null);
    assert.ok(intents.length >= 5);
    assert.ok(run.rows.every((row) => row.user_intent === null));
    assert.ok(intents.every((row) => row.user_intent_redacted === 1));
  });
});

describe("the prototype under load and faults, small", () => {
  test("every call answered and audited once; killed and restarted, no committed row lost", () => {
    const out = mkdtempSync(join(tmpdir(), "mcp-provenance-load-"));
    dirs.push(out);
    // The script asserts its counts and exits non-zero when one fails.
    const printed = execFileSync(process.execPath, ["examples/prototype/loadtest.mjs", "--clients", "4", "--calls", "40", "--out", out], { cwd: root, encoding: "utf8" });
    assert.match(printed, /answered 160, failed 0; audit rows 160 \(160 distinct calls\)/);
    assert.match(printed, /after the restart, a new client's calls: 10 of 10 answered/);
  });
});
