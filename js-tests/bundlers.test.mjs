// The package in a user's build, with no configuration: a small app that
// imports it is bundled by esbuild, webpack 5, Vite and Rollup, for browsers
// and for Node, and run (the browser builds in Chromium, the Node builds in
// Node), and runs unbundled in Deno and Bun. Rollup resolves npm packages
// only with its node-resolve plugin: the one line of configuration the npm
// README shows, used here as written there.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { nodeResolve } from "@rollup/plugin-node-resolve";
import { rollup } from "rollup";
import { build as vite } from "vite";
import webpack from "webpack";

import { exec, root, runInChromium, userProject } from "./user.mjs";

/** The app: each function's result, printed (Node) or left on the page (browsers). */
const APP = `
import { AI_INVOCATION_KEY, UI_KEY, createProvenance, sanitize, stampInitiator, validate } from "mcp-provenance";

const request = { jsonrpc: "2.0", id: 1, method: "tools/call",
  params: { name: "q", _meta: { [AI_INVOCATION_KEY]: { userIntent: { text: "a\\nb" }, turnId: "t-1" } } } };
const result = {
  valid: validate(request).valid,
  changes: sanitize(request).changes.map((change) => change.action),
  initiator: stampInitiator(request).params._meta[UI_KEY].initiator,
  vendor: createProvenance({ uiKey: "com.example/ui" }).stampInitiator(request).params._meta["com.example/ui"].initiator,
};
globalThis.document?.body.setAttribute("data-result", JSON.stringify(result));
console.log(JSON.stringify(result));
`;
const EXPECTED = { valid: true, changes: ["neutralized"], initiator: "app", vendor: "app" };

let project;
const out = (name) => join(project, "out", name);

before(() => {
  project = userProject("bundlers");
  writeFileSync(join(project, "app.mjs"), APP);
  writeFileSync(join(project, "index.html"), '<!doctype html><body><script type="module" src="./app.mjs"></script>');
});

after(() => rmSync(project, { recursive: true, force: true }));

/** Runs a Node build; what the app printed. */
const runInNode = (file) => JSON.parse(exec("node", [file], project));

/** A page that loads one script. */
function page(dir, script, type) {
  writeFileSync(join(dir, "index.html"), `<!doctype html><body><script ${type === "module" ? 'type="module" ' : ""}src="./${script}"></script>`);
  return "index.html";
}

const esbuild = (platform, file) =>
  exec(join(root, "node_modules", ".bin", "esbuild"), ["app.mjs", "--bundle", "--format=esm", `--platform=${platform}`, `--outfile=${file}`, "--log-level=warning"], project);

const pack = (config) => new Promise((resolve, reject) => {
  webpack({ mode: "production", context: project, entry: "./app.mjs", ...config }, (error, stats) => {
    if (error || stats.hasErrors()) reject(error ?? new Error(stats.toString("errors-only")));
    else resolve();
  });
});

async function rollupTo(file) {
  const bundle = await rollup({ input: join(project, "app.mjs"), plugins: [nodeResolve()] });
  await bundle.write({ file, format: "es" });
}

test("esbuild, for Node and for browsers", async () => {
  esbuild("node", out("esbuild-node/app.mjs"));
  assert.deepEqual(runInNode(out("esbuild-node/app.mjs")), EXPECTED);
  esbuild("browser", out("esbuild-browser/app.mjs"));
  assert.deepEqual(await runInChromium(out("esbuild-browser"), page(out("esbuild-browser"), "app.mjs", "module")), EXPECTED);
});

test("webpack 5, for Node and for browsers", async () => {
  await pack({ target: "node", output: { path: out("webpack-node"), filename: "app.cjs" } });
  assert.deepEqual(runInNode(out("webpack-node/app.cjs")), EXPECTED);
  await pack({ target: "web", output: { path: out("webpack-browser"), filename: "app.js" } });
  assert.deepEqual(await runInChromium(out("webpack-browser"), page(out("webpack-browser"), "app.js", "classic")), EXPECTED);
});

test("Vite, for Node (SSR, the package bundled in) and for browsers", async () => {
  await vite({ root: project, logLevel: "warn", ssr: { noExternal: true }, build: { ssr: "app.mjs", outDir: out("vite-node") } });
  assert.deepEqual(runInNode(out("vite-node/app.js")), EXPECTED);
  await vite({ root: project, logLevel: "warn", build: { outDir: out("vite-browser") } });
  assert.deepEqual(await runInChromium(out("vite-browser"), "index.html"), EXPECTED);
});

test("Rollup with nodeResolve(), for Node and for browsers", async () => {
  await rollupTo(out("rollup-node/app.mjs"));
  assert.deepEqual(runInNode(out("rollup-node/app.mjs")), EXPECTED);
  await rollupTo(out("rollup-browser/app.mjs"));
  assert.deepEqual(await runInChromium(out("rollup-browser"), page(out("rollup-browser"), "app.mjs", "module")), EXPECTED);
});

test("Deno and Bun run the app as it is", () => {
  assert.deepEqual(JSON.parse(exec(join(root, "node_modules", ".bin", "deno"), ["run", "--quiet", "app.mjs"], project)), EXPECTED);
  assert.deepEqual(JSON.parse(exec(join(root, "node_modules", ".bin", "bun"), ["app.mjs"], project)), EXPECTED);
});
