// The SEP-2817 and MCP Apps initiator scenarios written for the official
// conformance suite (upstream/conformance), run as its CLI runs scenarios,
// with the suite's own connection and mock server (runner/run.mjs): the
// server scenarios against the prototype's server, a server that echoes the
// whole envelope and one with no tool they may call; the client scenarios
// with the prototype's host, two flawed hosts and a client that makes no
// call. Each check's status is asserted, nothing testable fails, and
// `mcp-provenance probe` must report the same checks, by the same ids, with
// the same statuses. The checks are held to the suite's sep-2817.yaml, their
// levels to the core's table, and sep-2817.patch to the files here.
//
// The prototype's server and host speak the SDK 1.x wire (initialize), not
// the stateless one of 2026-07-28 the suite runs a draft scenario at, so they
// are run at 2025-11-25.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";

import { modules, runClient, runServer, SUITE_COMMIT } from "../upstream/conformance/runner/run.mjs";
import { start, stop } from "../examples/prototype/http.mjs";
import { table } from "../pkg/dist/table.mjs";
import { RULES } from "../pkg/dist/lib/cli/probe.mjs";
import { SERVER_CHECKS } from "../pkg/dist/lib/cli/scenarios.mjs";
import { root } from "./user.mjs";

const PROBE = join(root, "pkg/dist/bin/mcp-provenance.mjs");
const RUN = join(root, "upstream/conformance/runner/run.mjs");
const HOST = "node examples/prototype/host.mjs";
const FLAWED = "node js-tests/fixtures/flawed-host.mjs";
const HOSTILE = join(root, "js-tests/fixtures/hostile-server.mjs");
const STATEFUL = "2025-11-25";
const KEY = "io.modelcontextprotocol/aiInvocation";

/** A check the runner adds to every scenario's own, as the suite's CLI does. */
const wire = (check) => check.id.startsWith("wire-schema-");
/** Each check's id and status, by scenario. */
const statuses = (results) => Object.fromEntries(Object.entries(results).map(([name, checks]) => [name, Object.fromEntries(checks.map((c) => [c.id, c.status]))]));
/** The same, of the scenarios' own checks. */
const own = (results) => statuses(Object.fromEntries(Object.entries(results).map(([name, checks]) => [name, checks.filter((c) => !wire(c))])));

/** Runs `node <script> ...args` from the repository: exit code, output, error. */
async function node(script, ...args) {
  const run = await promisify(execFile)(process.execPath, [script, ...args], { cwd: root, maxBuffer: 2 ** 26 }).catch((failed) => failed);
  return { code: run.code ?? 0, out: run.stdout, err: run.stderr };
}

/** The checks `mcp-provenance probe --format json ...args` reports, by scenario, and its exit code. */
async function probed(...args) {
  const run = await node(PROBE, "probe", ...args, "--format", "json");
  const results = {};
  for (const check of JSON.parse(run.out).checks) (results[check.scenario] ??= []).push(check);
  return { code: run.code, results };
}

const SERVER_IDS = {
  "sep-2817-audit-context": [
    "sep-2817-server-same-answer-with-envelope",
    "sep-2817-server-same-answer-empty-intent",
    "sep-2817-server-same-answer-any-turn-id",
    "sep-2817-server-same-answer-repeated-turn",
    "sep-2817-server-no-echo",
  ],
  "apps-initiator-server": ["apps-initiator-server-same-answer-any-initiator", "apps-initiator-server-absent-same-as-unknown"],
};
const CLIENT_IDS = {
  "sep-2817-client-audit-context": ["sep-2817-client-reason-has-text", "sep-2817-client-model-has-name", "ai-invocation-turn-id-per-turn"],
  "apps-initiator-host": [
    "apps-initiator-host-stamps-view-calls",
    "apps-initiator-host-overwrites-view-claim",
    "apps-initiator-host-model-calls-not-app",
    "apps-initiator-host-stamps-only-initiator",
  ],
};
/** Every check of `ids` SUCCESS but those `broken` names, by scenario. */
const expected = (ids, broken = {}) => Object.fromEntries(Object.entries(ids).map(([name, list]) => [name, Object.fromEntries(list.map((id) => [id, broken[id] ?? "SUCCESS"]))]));

describe("server scenarios", () => {
  let data;
  let prototype;
  let leaky;
  let hostile;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), "scenarios-"));
    prototype = await start(join(root, "examples/prototype/server.mjs"), ["--data", data, "--port", "0"]);
    leaky = await start(join(root, "js-tests/fixtures/leaky-server.mjs"));
    hostile = await start(HOSTILE, ["--token", "sesame"]);
  });
  after(() => {
    stop(prototype.child);
    stop(leaky.child);
    stop(hostile.child);
    rmSync(data, { recursive: true, force: true });
  });

  test("the prototype's server passes every check, its messages valid on the wire, and probe reports the same", async () => {
    const results = await runServer(prototype.url, { specVersion: STATEFUL });
    assert.deepEqual(own(results), expected(SERVER_IDS));
    for (const checks of Object.values(results)) assert.deepEqual(checks.filter(wire).map((c) => [c.id, c.status]), [["wire-schema-valid", "SUCCESS"]]);
    const probe = await probed("--url", prototype.url);
    assert.equal(probe.code, 0);
    assert.deepEqual(statuses(probe.results), expected(SERVER_IDS));
  });

  test("a server that echoes the whole envelope warns on sep-2817-server-no-echo alone (a SHOULD NOT), and probe reports the same", async () => {
    const want = expected(SERVER_IDS, { "sep-2817-server-no-echo": "WARNING" });
    const results = await runServer(leaky.url, { specVersion: STATEFUL });
    assert.deepEqual(own(results), want);
    const echo = results["sep-2817-audit-context"].find((c) => c.id === "sep-2817-server-no-echo");
    assert.equal(echo.errorMessage, `tools/call "ping" with a full envelope: echoed ["userIntent","invocationReason","model"] in result._meta["${KEY}"]`);
    assert.deepEqual(echo.details.echoed, [{ call: 'tools/call "ping" with a full envelope', members: ["userIntent", "invocationReason", "model"], in: `result._meta["${KEY}"]` }]);
    const probe = await probed("--url", leaky.url);
    assert.deepEqual(statuses(probe.results), want);
  });

  test("a scenario alone, as the suite's --scenario runs it", async () => {
    assert.deepEqual(Object.keys(await runServer(leaky.url, { scenario: "apps-initiator-server", specVersion: STATEFUL })), ["apps-initiator-server"]);
    await assert.rejects(runServer(leaky.url, { scenario: "sep-2817-echo" }), /no scenario "sep-2817-echo"; there are: /);
  });

  test("with no tool it may call, nothing is tested: every check fails as untestable, the runner and probe exit 1", async () => {
    const header = ["--header", "Authorization: Bearer sesame"];
    const run = await node(RUN, "server", "--url", hostile.url, "--spec-version", STATEFUL, ...header);
    assert.equal(run.code, 1, run.out + run.err);
    for (const [name, ids] of Object.entries(SERVER_IDS)) {
      assert.ok(run.out.includes(`${name}\n`), run.out);
      for (const id of ids) assert.match(run.out, new RegExp(`^  ${id} +(FAILURE|WARNING) +Not testable: no tool was named, none is named test_simple_text and none is annotated readOnlyHint: true`, "m"));
    }
    assert.equal(run.out.match(/^  nothing could be tested: /gm).length, 2);
    const probe = await probed("--url", hostile.url, ...header);
    assert.equal(probe.code, 1);
    const results = await runServer(hostile.url, { specVersion: STATEFUL, headers: ["Authorization: Bearer sesame"] });
    assert.deepEqual(statuses(probe.results), own(results));
    assert.ok(Object.values(probe.results).flat().every((c) => c.details.untestable === true));
  });

  test("--header goes with every request and --tool names the tool to call, as probe takes them", async () => {
    const named = ["--tool", "leaky-content", "--spec-version", STATEFUL];
    const without = await node(RUN, "server", "--url", hostile.url, ...named);
    assert.equal(without.code, 1);
    assert.match(without.out, /^  sep-2817-server-no-echo +WARNING +Not testable: cannot reach the server: .*a token is needed$/m);
    const header = ["--header", "Authorization: Bearer sesame", "--header", "X-Other: 1"];
    const withIt = await node(RUN, "server", "--url", hostile.url, ...named, ...header);
    assert.equal(withIt.code, 0, withIt.out + withIt.err);
    assert.match(withIt.out, /^  sep-2817-server-no-echo +WARNING +tools\/call "leaky-content" with a full envelope: echoed \["model"\] in result\._meta/m);
    const results = await runServer(hostile.url, { specVersion: STATEFUL, tool: "leaky-content", headers: header.filter((word) => word !== "--header") });
    const probe = await probed("--url", hostile.url, "--tool", "leaky-content", ...header);
    assert.deepEqual(statuses(probe.results), own(results));
    assert.deepEqual(own(results), expected(SERVER_IDS, { "sep-2817-server-no-echo": "WARNING" }));
    const bad = await node(RUN, "server", "--url", hostile.url, "--header", "no colon");
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /--header takes "Name: value", not "no colon"/);
  });
});

describe("client scenarios", () => {
  const cases = [
    [HOST, "sep-2817-client-audit-context", {}],
    [HOST, "apps-initiator-host", {}],
    [`${FLAWED} --reuse-turn`, "sep-2817-client-audit-context", { "ai-invocation-turn-id-per-turn": "WARNING" }],
    [`${FLAWED} --forward-view-initiator`, "apps-initiator-host", { "apps-initiator-host-overwrites-view-claim": "FAILURE" }],
  ];
  for (const [command, scenario, broken] of cases) {
    test(`${scenario} with ${command}`, async () => {
      const { checks, output } = await runClient(command, { scenario, specVersion: STATEFUL });
      assert.equal(output.code, 0, output.text);
      assert.deepEqual(own({ [scenario]: checks }), expected({ [scenario]: CLIENT_IDS[scenario] }, broken));
      assert.deepEqual(checks.filter(wire).map((c) => [c.id, c.status]), [["wire-schema-valid", "SUCCESS"]]);
    });
  }

  test("the flaws are named: a turnId reused across turns, the View's own initiator forwarded", async () => {
    const reused = (await runClient(`${FLAWED} --reuse-turn`, { scenario: "sep-2817-client-audit-context", specVersion: STATEFUL })).checks.find((c) => c.id === "ai-invocation-turn-id-per-turn");
    assert.match(reused.errorMessage, /^turns 1, 2, 3 carry the same turnId "[0-9a-f-]{36}"$/);
    const forwarded = (await runClient(`${FLAWED} --forward-view-initiator`, { scenario: "apps-initiator-host", specVersion: STATEFUL })).checks.find((c) => c.id === "apps-initiator-host-overwrites-view-claim");
    const claims = ["model", "user", "host", "conformance-unknown"];
    assert.equal(forwarded.errorMessage, claims.map((claim) => `view-claims-${claim}: a View call arrived with initiator "${claim}" (the View claimed "${claim}")`).join("; "));
  });

  test("a client that makes none of the scripted calls has nothing tested: every check fails as untestable, and the runner exits 1", async () => {
    for (const [scenario, ids] of Object.entries(CLIENT_IDS)) {
      const { checks } = await runClient("node --version", { scenario });
      assert.deepEqual(checks.filter((c) => !wire(c)).map((c) => [c.id, c.details?.untestable]), ids.map((id) => [id, true]));
      const run = await node(RUN, "client", "--command", "node --version", "--scenario", scenario);
      assert.equal(run.code, 1, run.out);
      assert.match(run.out, /^  nothing could be tested: Not testable: the client made none of the scripted tool calls \(0 requests arrived\)$/m);
    }
  });
});

test("the sep-2817-* checks the scenarios declare are the rows of the suite's sep-2817.yaml, and the others are named for their extension", async () => {
  const { client, host } = await modules();
  const declared = [...SERVER_CHECKS.flatMap((s) => s.declared), ...client.CLIENT_AUDIT_CONTEXT_CHECKS, ...host.INITIATOR_HOST_CHECKS].map((c) => c.id);
  assert.deepEqual(declared.toSorted(), [...Object.values(SERVER_IDS), ...Object.values(CLIENT_IDS)].flat().toSorted());
  const yaml = parseYaml(readFileSync(join(root, "upstream/conformance/src/seps/sep-2817.yaml"), "utf8"));
  const rows = yaml.requirements.filter((row) => row.check !== undefined).map((row) => row.check);
  assert.deepEqual(declared.filter((id) => id.startsWith("sep-2817-")).toSorted(), rows.toSorted());
  assert.deepEqual(declared.filter((id) => !id.startsWith("sep-2817-")).filter((id) => !/^(apps-initiator|ai-invocation)-/.test(id)), []);
});

test("each check's level is its rule's in the core's table, but where the upstream text has no keyword for it (then a WARNING)", async () => {
  const { client, host } = await modules();
  /** The rule of docs/rules.md each client check tests; the server checks' are probe's (RULES). */
  const rules = {
    ...RULES,
    "sep-2817-client-reason-has-text": "AI-3",
    "sep-2817-client-model-has-name": "AI-4",
    "ai-invocation-turn-id-per-turn": "AI-7",
    "apps-initiator-host-stamps-view-calls": "UI-1",
    "apps-initiator-host-overwrites-view-claim": "UI-3",
    "apps-initiator-host-model-calls-not-app": "UI-2",
    "apps-initiator-host-stamps-only-initiator": "UI-5",
  };
  /** The page says what a turnId groups, and the Apps proposal how absence reads and what stamping leaves, with no keyword. */
  const unworded = ["ai-invocation-turn-id-per-turn", "apps-initiator-server-absent-same-as-unknown", "apps-initiator-host-stamps-only-initiator"];
  const declared = [...SERVER_CHECKS.flatMap((s) => s.declared), ...client.CLIENT_AUDIT_CONTEXT_CHECKS, ...host.INITIATOR_HOST_CHECKS];
  assert.deepEqual(Object.keys(rules).toSorted(), declared.map((c) => c.id).toSorted());
  for (const check of declared) {
    assert.equal(check.level, unworded.includes(check.id) ? "SHOULD" : table.levels[table.rules.indexOf(rules[check.id])], check.id);
  }
});

test("sep-2817.patch adds upstream/conformance's src/ and examples/ files byte for byte, and no others; untestable.ts is the suite's own", () => {
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
  const files = ["src", "examples"].flatMap((dir) =>
    readdirSync(join(here, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(here.length + 1)),
  );
  const VENDORED = "src/scenarios/untestable.ts";
  assert.deepEqual([...created.keys()].toSorted(), files.filter((path) => path !== VENDORED).toSorted());
  for (const [path, { text, blob }] of created) {
    const source = readFileSync(join(here, path));
    assert.ok(Buffer.from(text, "utf8").equals(source), `${path} in sep-2817.patch differs from upstream/conformance/${path}`);
    const id = createHash("sha1").update(`blob ${source.length}\0`).update(source).digest("hex");
    assert.ok(id.startsWith(blob), `${path}: the patch's index line names blob ${blob}, the source is ${id}`);
  }
  // The runner's pieces of the suite at SUITE_COMMIT (runner/suite) hold it too.
  const suite = readFileSync(join(here, "runner/suite", VENDORED));
  assert.ok(readFileSync(join(here, VENDORED)).equals(suite), `${VENDORED} is not the suite's at ${SUITE_COMMIT}`);
});
