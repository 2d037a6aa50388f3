// The SEP-2817 and MCP Apps initiator scenarios written for the official
// conformance suite (upstream/conformance), run as its CLI runs scenarios:
// the server scenarios against the prototype's server and a server that
// echoes the whole envelope; the client scenarios with the prototype's host
// and two flawed hosts as the client under test. Each check's status is
// asserted, and `mcp-provenance probe` must report the same checks, by the
// same names, with the same statuses; the patch that adds the scenarios to
// the suite's source holds them byte for byte.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";

import { runClient, runServer } from "../upstream/conformance/runner/run.mjs";
import { start, stop } from "../examples/prototype/http.mjs";
import { table } from "../pkg/dist/table.mjs";
import { root } from "./user.mjs";

const PROBE = join(root, "pkg/dist/bin/mcp-provenance.mjs");
const HOST = "node examples/prototype/host.mjs";
const FLAWED = "node js-tests/fixtures/flawed-host.mjs";

/** Each check's id and status, by scenario. */
const statuses = (results) => Object.fromEntries(Object.entries(results).map(([name, checks]) => [name, Object.fromEntries(checks.map((c) => [c.id, c.status]))]));

/** The checks `mcp-provenance probe --format json` reports against `url`, in the same form. */
async function probed(url) {
  const run = await promisify(execFile)(process.execPath, [PROBE, "probe", "--url", url, "--format", "json"], { cwd: root }).catch((failed) => failed);
  const { checks } = JSON.parse(run.stdout);
  const results = {};
  for (const check of checks) (results[check.scenario] ??= []).push(check);
  return statuses(results);
}

const ALL_PASS = {
  "sep-2817-envelope-accepted": {
    "AI-1-absent": "SUCCESS", "AI-2-valid": "SUCCESS", "AI-8-unknown-fields": "SUCCESS",
    "KEY-3-vendor-key": "SUCCESS", "AI-13-hostile": "SUCCESS", "AI-6-empty-intent": "SUCCESS",
  },
  "sep-2817-echo": {
    "AI-11-only-turnId": "SUCCESS", "AI-11-no-leak": "SUCCESS", "AI-11-no-leak-in-errors": "SUCCESS",
    "AI-11-vendor-key": "SUCCESS", "AI-11-echoes-turnId": "SUCCESS",
  },
  "apps-initiator-accepted": { "UI-1-stamped-accepted": "SUCCESS", "UI-7-unknown-value": "SUCCESS" },
};

describe("server scenarios", () => {
  let data;
  let prototype;
  let leaky;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), "scenarios-"));
    prototype = await start(join(root, "examples/prototype/server.mjs"), ["--data", data, "--port", "0"]);
    leaky = await start(join(root, "js-tests/fixtures/leaky-server.mjs"));
  });
  after(() => {
    stop(prototype.child);
    stop(leaky.child);
    rmSync(data, { recursive: true, force: true });
  });

  test("the prototype's server passes every check, and probe reports the same", async () => {
    assert.deepEqual(statuses(await runServer(prototype.url)), ALL_PASS);
    assert.deepEqual(await probed(prototype.url), ALL_PASS);
  });

  test("a server that echoes the whole envelope warns on the echo checks (SHOULD NOT), and probe reports the same", async () => {
    const expected = structuredClone(ALL_PASS);
    Object.assign(expected["sep-2817-echo"], { "AI-11-only-turnId": "WARNING", "AI-11-no-leak": "WARNING" });
    const results = await runServer(leaky.url);
    assert.deepEqual(statuses(results), expected);
    const onlyTurnId = results["sep-2817-echo"].find((c) => c.id === "AI-11-only-turnId");
    assert.match(onlyTurnId.errorMessage, /result\._meta\["io\.modelcontextprotocol\/aiInvocation"\] holds \["invocationReason","model","userIntent"\] besides turnId/);
    assert.deepEqual(await probed(leaky.url), expected);
  });

  test("a scenario alone, as the suite's --scenario runs it", async () => {
    assert.deepEqual(Object.keys(await runServer(leaky.url, "apps-initiator-accepted")), ["apps-initiator-accepted"]);
  });
});

describe("client scenarios", () => {
  const envelope = (fresh, limits) => ({
    "AI-2-well-formed": "SUCCESS", "AI-7-turnId-per-turn": "SUCCESS", "AI-7-turnId-fresh": fresh, "AI-14-within-limits": limits,
  });
  const initiator = (overwritten) => ({
    "UI-1-view-stamped": "SUCCESS", "UI-3-view-claim-overwritten": overwritten, "UI-5-only-initiator": "SUCCESS", "UI-2-model-not-app": "SUCCESS",
  });
  const cases = [
    [HOST, "sep-2817-client-envelope", envelope("SUCCESS", "SUCCESS")],
    [HOST, "apps-initiator-host", initiator("SUCCESS")],
    [`${FLAWED} --reuse-turn`, "sep-2817-client-envelope", envelope("WARNING", "WARNING")],
    [`${FLAWED} --forward-view-initiator`, "apps-initiator-host", initiator("FAILURE")],
  ];
  for (const [command, scenario, expected] of cases) {
    test(`${scenario} with ${command}`, async () => {
      const { checks, output } = await runClient(command, scenario);
      assert.equal(output.code, 0, output.text);
      assert.deepEqual(Object.fromEntries(checks.map((c) => [c.id, c.status])), expected);
    });
  }

  test("the flaws are named: a turnId reused across turns, the View's own initiator forwarded", async () => {
    const reused = (await runClient(`${FLAWED} --reuse-turn`, "sep-2817-client-envelope")).checks.find((c) => c.id === "AI-7-turnId-fresh");
    assert.match(reused.errorMessage, /^turn 2 carries turnId "[^"]+" of turn 1; turn 3 carries turnId "[^"]+" of turn 1$/);
    const forwarded = (await runClient(`${FLAWED} --forward-view-initiator`, "apps-initiator-host")).checks.find((c) => c.id === "UI-3-view-claim-overwritten");
    assert.equal(forwarded.errorMessage, 'view-claims-model: a View call arrived with initiator "model" (the View claimed "model")');
  });
});

test("each check's level is its rule's in the core's table, but where the SEP words the behaviour itself, and its keys are the core's", async () => {
  /** The SEP's own words: the echo and one turnId for a turn's calls are MAYs; a turnId of each turn's own follows from what a turnId is. */
  const worded = { "AI-11-echoes-turnId": "MAY", "AI-7-turnId-per-turn": "MAY", "AI-7-turnId-fresh": "SHOULD" };
  const { AI_INVOCATION_KEY, SERVER_CHECKS, UI_KEY } = await import("../pkg/dist/lib/cli/scenarios.mjs");
  // The scenarios stand alone in the suite, so they name the keys themselves: the core's keys.
  assert.deepEqual({ invocation: AI_INVOCATION_KEY, ui: UI_KEY }, { invocation: table.keys.invocation, ui: table.keys.ui });
  // A server none of whose tools may be called: every server check is made, and skipped.
  const none = { probe: { arguments: {}, listed: new Set(), send: () => assert.fail("no call") }, baseline: { what: "", tool: "", withheld: "none" } };
  const checks = (await Promise.all(SERVER_CHECKS.map((scenario) => scenario.checks(none)))).flat();
  assert.equal(checks.length, 13);
  assert.ok(checks.every((c) => c.status === "SKIPPED"));
  checks.push(...(await runClient(`${FLAWED} --reuse-turn`, "sep-2817-client-envelope")).checks, ...(await runClient(HOST, "apps-initiator-host")).checks);
  for (const check of checks) assert.equal(check.level, worded[check.id] ?? table.levels[table.rules.indexOf(check.rule)], check.id);
});

test("sep-2817.patch adds upstream/conformance/src's scenario files byte for byte, and no others but its tests", () => {
  const here = join(root, "upstream/conformance");
  const patch = readFileSync(join(here, "sep-2817.patch"), "utf8");
  /** Each file the patch creates: its path, its text as the hunk writes it, and the blob id its index line names. */
  const created = new Map();
  for (const diff of patch.split(/^(?=diff --git )/m)) {
    if (!/^new file mode /m.test(diff)) continue;
    const path = diff.match(/^\+\+\+ b\/(.+)$/m)[1];
    const [header, ...lines] = diff.slice(diff.search(/^@@ /m)).split("\n");
    assert.match(header, /^@@ -0,0 \+1(,\d+)? @@/, path);
    const body = lines.filter((line) => line.startsWith("+")).map((line) => line.slice(1));
    const noNewline = lines.some((line) => line.startsWith("\\ No newline at end of file"));
    created.set(path, { text: body.join("\n") + (noNewline ? "" : "\n"), blob: diff.match(/^index 0+\.\.([0-9a-f]+)/m)[1] });
  }
  const sources = readdirSync(join(here, "src"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(here.length + 1));
  assert.deepEqual(sources.sort(), ["src/scenarios/client/sep-2817.ts", "src/scenarios/server/sep-2817-checks.ts", "src/scenarios/server/sep-2817.ts"]);
  const added = [...created.keys()].filter((path) => path.startsWith("src/scenarios/") && !path.endsWith(".test.ts"));
  assert.deepEqual(added.sort(), sources);
  for (const path of sources) {
    const source = readFileSync(join(here, path));
    assert.ok(Buffer.from(created.get(path).text, "utf8").equals(source), `${path} in sep-2817.patch differs from upstream/conformance/${path}`);
    const blob = createHash("sha1").update(`blob ${source.length}\0`).update(source).digest("hex");
    assert.ok(blob.startsWith(created.get(path).blob), `${path}: the patch's index line names blob ${created.get(path).blob}, the source is ${blob}`);
  }
});
