// Runs the scenarios of ../src as the conformance suite's CLI runs its own
// (src/runner/server.ts and client.ts at v0.1.16). The published package,
// @modelcontextprotocol/conformance 0.1.16, is its CLI alone (one bundle
// that exports nothing), so it cannot load scenarios it does not hold; this
// does what its `server` and `client` commands do with them:
//
//   server: connect to the server's URL, run the scenario, its checks;
//   client: start the scenario's server, run the client command with
//           MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT and the URL as
//           its last argument (split on spaces, as the suite does), then
//           read the scenario's checks and stop it.
//
//   node upstream/conformance/runner/run.mjs server --url <url> [--scenario <name>]
//   node upstream/conformance/runner/run.mjs client --command "<command>" --scenario <name>
//
// It prints each check's id, status and why, and exits 1 when one is a
// FAILURE (as the suite's CLI does). The TypeScript is compiled by esbuild
// into target/conformance/, with the suite's client helper as
// runner/client-helper.mjs.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const out = join(root, "target", "conformance");

/** The scenarios, compiled once per process: `{ server, client }`, each a map by name. */
let loaded;

/** The scenario modules, compiled from ../src. */
export async function scenarios() {
  loaded ??= (async () => {
    const helper = { name: "client-helper", setup: (b) => b.onResolve({ filter: /^\.\/client-helper$/ }, () => ({ path: join(here, "client-helper.mjs") })) };
    await build({
      entryPoints: { server: join(here, "..", "src/scenarios/server/sep-2817.ts"), client: join(here, "..", "src/scenarios/client/sep-2817.ts") },
      outdir: out,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      plugins: [helper],
      logLevel: "error",
    });
    const byName = (module) => new Map(Object.entries(module).filter(([name]) => name.endsWith("Scenario")).map(([, Scenario]) => new Scenario()).map((s) => [s.name, s]));
    const [server, client] = await Promise.all(["server", "client"].map((name) => import(pathToFileURL(join(out, `${name}.mjs`)).href)));
    return { server: byName(server), client: byName(client) };
  })();
  return loaded;
}

/** The checks of server scenario `name` (each, when no name) against `url`, by scenario. */
export async function runServer(url, name) {
  const { server } = await scenarios();
  const chosen = name === undefined ? [...server.values()] : [server.get(name) ?? unknown(name, server)];
  const results = {};
  for (const scenario of chosen) results[scenario.name] = await scenario.run(url);
  return results;
}

/**
 * The checks of client scenario `name` with `command` as the client under
 * test, and what the client wrote; it is stopped after `timeout` ms.
 */
export async function runClient(command, name, timeout = 30_000) {
  const { client } = await scenarios();
  const scenario = client.get(name) ?? unknown(name, client);
  const urls = await scenario.start();
  try {
    const [executable, ...args] = command.split(" ");
    const env = {
      ...process.env,
      MCP_CONFORMANCE_SCENARIO: name,
      ...(urls.context && { MCP_CONFORMANCE_CONTEXT: JSON.stringify({ name, ...urls.context }) }),
    };
    const output = await new Promise((resolve) => {
      const child = spawn(executable, [...args, urls.serverUrl], { env, stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (chunk) => (text += chunk));
      child.stderr.on("data", (chunk) => (text += chunk));
      const timer = setTimeout(() => child.kill(), timeout);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, text });
      });
      child.on("error", (error) => {
        clearTimeout(timer);
        resolve({ code: -1, text: `${text}\n${error.message}` });
      });
    });
    return { checks: scenario.getChecks(), output };
  } finally {
    await scenario.stop();
  }
}

function unknown(name, map) {
  throw new Error(`no scenario ${JSON.stringify(name)}; there are: ${[...map.keys()].join(", ")}`);
}

/** One line a check: its id, status and why. */
const lines = (checks) => checks.map((c) => `  ${c.id.padEnd(28)} ${c.status.padEnd(8)}${c.errorMessage ? ` ${c.errorMessage}` : ""}`).join("\n");

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { positionals: [mode], values } = parseArgs({
    allowPositionals: true,
    options: { url: { type: "string" }, command: { type: "string" }, scenario: { type: "string" }, output: { type: "string", short: "o" } },
  });
  let results;
  if (mode === "server" && values.url) results = await runServer(values.url, values.scenario);
  else if (mode === "client" && values.command && values.scenario) {
    const run = await runClient(values.command, values.scenario);
    if (run.output.code !== 0) console.error(`the client exited with ${run.output.code}:\n${run.output.text}`);
    results = { [values.scenario]: run.checks };
  } else {
    console.error('usage: run.mjs server --url <url> [--scenario <name>] | client --command "<command>" --scenario <name> [-o <dir>]');
    process.exit(2);
  }
  for (const [name, checks] of Object.entries(results)) {
    console.log(`${name}\n${lines(checks)}`);
    if (values.output) {
      mkdirSync(join(values.output, name), { recursive: true });
      writeFileSync(join(values.output, name, "checks.json"), JSON.stringify(checks, null, 2));
    }
  }
  process.exit(Object.values(results).flat().some((c) => c.status === "FAILURE") ? 1 : 0);
}
