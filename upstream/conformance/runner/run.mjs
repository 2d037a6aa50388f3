// Runs the scenarios of ../src as the conformance suite's CLI runs its own
// (src/runner/server.ts and client.ts), with the suite's own connection,
// mock server and wire-schema validation: the published package is its CLI
// alone (one bundle that exports nothing), so it cannot load scenarios it
// does not hold. This compiles them with esbuild where they sit in the
// suite's source at SUITE_COMMIT (the pieces it needs are in ./suite):
//
//   server: connect to the server's URL at the run's wire version, run the
//           scenario, then the wire-schema checks;
//   client: start the scenario's mock server, run the client command with
//           MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION,
//           MCP_CONFORMANCE_CONTEXT and the URL as its last argument (the
//           command split on spaces, as the suite does), read the checks.
//
// The wire version is the suite's default for the scenario (its draft for a
// draft or extension server scenario) unless --spec-version names one; unlike
// the suite, this runs a scenario at any version it is given.
//
//   node upstream/conformance/runner/run.mjs server --url <url> [--scenario <name>]
//        [--spec-version <v>] [--tool <name>] [--header "Name: value"]... [-o <dir>]
//   node upstream/conformance/runner/run.mjs client --command "<command>" --scenario <name>
//        [--spec-version <v>] [-o <dir>]
//
// It prints each check's id, status and why, and exits 1 when one is a
// FAILURE (as the suite's CLI does), and so when nothing could be tested:
// every check is then untestable, a MUST's a FAILURE. CONFORMANCE_SUITE,
// when set, names a git copy of the suite (a clone or a bare git dir) to
// take those pieces from at SUITE_COMMIT instead of ./suite.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import { build } from "esbuild";

// --header is read as probe reads it.
import { headersOf } from "../../../pkg/dist/lib/cli/probe.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
/** The suite's commit the scenarios are written for: 0.2.0-alpha.11. */
export const SUITE_COMMIT = "c321dd3";
const SUITE = process.env.CONFORMANCE_SUITE;
/** What of the suite's source the scenarios and this runner use. */
const SUITE_PATHS = ["src/types.ts", "src/schemas.ts", "src/connection", "src/mock-server", "src/validation", "src/spec-types", "src/scenarios/untestable.ts"];
const out = join(root, "target", "conformance");

/** The suite's source at SUITE_COMMIT: ./suite, or what CONFORMANCE_SUITE holds, extracted once into target/conformance/suite-<commit>; its path. */
function suiteSource() {
  if (SUITE === undefined) return join(here, "suite");
  const tree = join(out, `suite-${SUITE_COMMIT}`);
  if (existsSync(tree)) return tree;
  const partial = `${tree}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    const archive = execFileSync("git", ["-C", SUITE, "archive", SUITE_COMMIT, ...SUITE_PATHS], { maxBuffer: 64 << 20 });
    execFileSync("tar", ["-x", "-C", partial], { input: archive });
  } catch (error) {
    throw new Error(`the conformance suite's source at ${SUITE_COMMIT} is needed, from a git copy of modelcontextprotocol/conformance (CONFORMANCE_SUITE=${SUITE}): ${error.message}`);
  }
  renameSync(partial, tree);
  return tree;
}

/** The files of ../src the runner compiles (not the tests, not the vendored untestable.ts), relative to it. */
function ours() {
  return readdirSync(join(here, "..", "src", "scenarios"), { recursive: true })
    .filter((path) => /^(server|client)\/[^/]+\.ts$/.test(path) && !path.endsWith(".test.ts"))
    .map((path) => join("src", "scenarios", path));
}

/** The modules, compiled once per process: the scenarios, and the suite's runner pieces. */
let loaded;

/** The compiled modules: `{ server, client, host, connection, mockServer, wire, types }`. */
export async function modules() {
  loaded ??= (async () => {
    const tree = suiteSource();
    const overlay = join(out, "source");
    rmSync(overlay, { recursive: true, force: true });
    cpSync(tree, overlay, { recursive: true });
    for (const path of ours()) cpSync(join(here, "..", path), join(overlay, path));
    const entries = {
      server: "src/scenarios/server/sep-2817.ts",
      client: "src/scenarios/client/sep-2817.ts",
      host: "src/scenarios/client/apps-initiator.ts",
      connection: "src/connection/index.ts",
      mockServer: "src/mock-server/index.ts",
      wire: "src/validation/wire-schema.ts",
      types: "src/types.ts",
    };
    const bundle = join(out, "bundle");
    rmSync(bundle, { recursive: true, force: true });
    // One build with shared chunks: the scenarios and the runner share one
    // JsonRpcError class and one wire-violation recorder.
    await build({
      entryPoints: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(overlay, path)])),
      outdir: bundle,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      splitting: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "error",
    });
    const imported = await Promise.all(Object.keys(entries).map((name) => import(pathToFileURL(join(bundle, `${name}.mjs`)).href)));
    return Object.fromEntries(Object.keys(entries).map((name, i) => [name, imported[i]]));
  })();
  return loaded;
}

/** The scenarios a module exports, by name; `options` go to each constructor. */
function scenariosOf(module, options) {
  return new Map(Object.entries(module).filter(([name]) => name.endsWith("Scenario")).map(([, Scenario]) => new Scenario(options)).map((s) => [s.name, s]));
}

/** The wire version a scenario runs at: `specVersion`, else the suite's default for it (as src/runner/server.ts and client.ts choose). */
function wireVersion(types, scenario, specVersion, leg) {
  if (specVersion !== undefined) return specVersion === "draft" ? types.DRAFT_PROTOCOL_VERSION : specVersion;
  const draft = "introducedIn" in scenario.source ? scenario.source.introducedIn === types.DRAFT_PROTOCOL_VERSION : leg === "server";
  return draft ? types.DRAFT_PROTOCOL_VERSION : types.LATEST_SPEC_VERSION;
}

function unknown(name, map) {
  throw new Error(`no scenario ${JSON.stringify(name)}; there are: ${[...map.keys()].join(", ")}`);
}

/**
 * Runs `run` with every fetch to `url`'s origin carrying `headers` (the
 * suite's connections fetch through the global fetch, the SDK's transport
 * included); a header the request sets itself is replaced.
 */
async function withHeaders(url, headers, run) {
  if ([...headers.keys()].length === 0) return run();
  const original = globalThis.fetch;
  const origin = new URL(url).origin;
  globalThis.fetch = (input, init = {}) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    if (target.origin !== origin) return original(input, init);
    const merged = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    for (const [name, value] of headers) merged.set(name, value);
    return original(input, { ...init, headers: merged });
  };
  try {
    return await run();
  } finally {
    globalThis.fetch = original;
  }
}

/**
 * The checks of server scenario `scenario` (each, when none is named)
 * against `url`, by scenario: the scenario's own, then the wire-schema
 * checks. `tool` is the tool to call (else the scenario's default choice);
 * `headers` go with every request.
 */
export async function runServer(url, { scenario: name, specVersion, tool, headers = [] } = {}) {
  const { server, connection, wire, types } = await modules();
  const all = scenariosOf(server, tool === undefined ? undefined : { tool });
  const chosen = name === undefined ? [...all.values()] : [all.get(name) ?? unknown(name, all)];
  const extra = headersOf(headers);
  const results = {};
  for (const scenario of chosen) {
    const version = wireVersion(types, scenario, specVersion, "server");
    const ctx = { serverUrl: url, specVersion: version, connect: (opts) => connection.connectFor(version)(url, opts) };
    wire.resetWireValidation();
    const checks = await withHeaders(url, extra, () => scenario.run(ctx));
    results[scenario.name] = [...checks, ...wire.wireSchemaChecks(version)];
  }
  return results;
}

/**
 * The checks of client scenario `scenario` with `command` as the client
 * under test, and what the client wrote; it is stopped after `timeout` ms.
 */
export async function runClient(command, { scenario: name, specVersion, timeout = 30_000 } = {}) {
  const { client, host, mockServer, wire, types } = await modules();
  const all = new Map([...scenariosOf(client), ...scenariosOf(host)]);
  const scenario = all.get(name) ?? unknown(name, all);
  const version = wireVersion(types, scenario, specVersion, "client");
  wire.resetWireValidation();
  const urls = await scenario.start({ specVersion: version, createServer: mockServer.createServerFor(version) });
  try {
    const [executable, ...args] = command.split(" ");
    const env = {
      ...process.env,
      MCP_CONFORMANCE_SCENARIO: name,
      MCP_CONFORMANCE_PROTOCOL_VERSION: version,
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
    return { checks: [...scenario.getChecks(), ...wire.wireSchemaChecks(version)], output };
  } finally {
    await scenario.stop();
  }
}

/** Whether nothing of `checks` could be tested: every check of the scenario's own is untestable. */
const nothingTested = (checks) => checks.filter((c) => !c.id.startsWith("wire-schema-")).every((c) => c.details?.untestable === true);

/** One line a check: its id, status and why. */
const lines = (checks) => checks.map((c) => `  ${c.id.padEnd(48)} ${c.status.padEnd(8)}${c.errorMessage ? ` ${c.errorMessage}` : ""}`).join("\n");

const USAGE = `usage: run.mjs server --url <url> [--scenario <name>] [--spec-version <v>] [--tool <name>] [--header "Name: value"]... [-o <dir>]
       run.mjs client --command "<command>" --scenario <name> [--spec-version <v>] [-o <dir>]`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { positionals: [mode], values } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: "string" },
      command: { type: "string" },
      scenario: { type: "string" },
      "spec-version": { type: "string" },
      tool: { type: "string" },
      header: { type: "string", multiple: true, default: [] },
      output: { type: "string", short: "o" },
    },
  });
  const specVersion = values["spec-version"];
  let results;
  if (mode === "server" && values.url) {
    results = await runServer(values.url, { scenario: values.scenario, specVersion, tool: values.tool, headers: values.header });
  } else if (mode === "client" && values.command && values.scenario && values.tool === undefined && values.header.length === 0) {
    const run = await runClient(values.command, { scenario: values.scenario, specVersion });
    if (run.output.code !== 0) console.error(`the client exited with ${run.output.code}:\n${run.output.text}`);
    results = { [values.scenario]: run.checks };
  } else {
    console.error(USAGE);
    process.exit(2);
  }
  for (const [name, checks] of Object.entries(results)) {
    console.log(`${name}\n${lines(checks)}`);
    if (nothingTested(checks)) console.log(`  nothing could be tested: ${checks[0]?.errorMessage ?? "no check"}`);
    if (values.output) {
      mkdirSync(join(values.output, name), { recursive: true });
      writeFileSync(join(values.output, name, "checks.json"), JSON.stringify(checks, null, 2));
    }
  }
  const checks = Object.values(results).flat();
  process.exit(checks.some((c) => c.status === "FAILURE") || Object.values(results).some(nothingTested) ? 1 : 0);
}
