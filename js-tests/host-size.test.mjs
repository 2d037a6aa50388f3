// What a browser app pays for the package: a Vite build (no configuration)
// of an app that imports `stampInitiator` from the main entry ships the
// host module (the object API) and never the filter module (the wire
// filter, its parser and patcher, `check`), which only the gateway entry
// brings. The gzipped size (zlib level 9) of every JS and wasm file the
// build emits is measured, printed, and held to a bound; the gateway
// entry's is measured and printed beside it.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { gzipSync } from "node:zlib";

import { build as vite } from "vite";

import { root, runInChromium, userProject } from "./user.mjs";

/**
 * The bound of the host entry, gzipped: the issue aimed at 45 KB, wasm and
 * JS. The split measured 94.0 KB (96,215 bytes), against 213.6 KB for the
 * gateway entry (the filter module). The host module is the floor: 144.3 KB
 * raw, 66.4 KB gzipped after wasm-opt -Os, but shipped base64 inside JS
 * (so that every bundler takes it with no asset to copy), which gzips to
 * 83.8 KB; the JS of the object API (table, writer, answer, boundary, API)
 * is some 10 KB more. What the host module holds is the object API's own
 * work: the tape's reader, the rules (validate, sanitize, audit, the
 * initiator, the envelope, correlation ids), the policy and options they
 * read, and their messages: 45 KB is out of reach under this design. The
 * bound is what the split achieves, rounded up to the next KB, with 2 KB of
 * headroom: it fails when the host entry grows, or when the filter module
 * (348 KB raw, 157 KB gzipped) leaks into it.
 */
const HOST_BOUND = 97 * 1024;

const HOST_APP = `
import { stampInitiator, UI_KEY } from "mcp-provenance";

const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q" } };
const result = { initiator: stampInitiator(request).params._meta[UI_KEY].initiator };
document.body.setAttribute("data-result", JSON.stringify(result));
`;
const GATEWAY_APP = `
import { createFilter } from "mcp-provenance/gateway";

const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q" } });
const result = { forwarded: typeof createFilter()(body).forward };
document.body.setAttribute("data-result", JSON.stringify(result));
`;

let project;

before(() => {
  project = userProject("host-size");
  for (const [name, app] of [["host", HOST_APP], ["gateway", GATEWAY_APP]]) {
    mkdirSync(join(project, name));
    writeFileSync(join(project, name, "app.mjs"), app);
    writeFileSync(join(project, name, "index.html"), '<!doctype html><body><script type="module" src="./app.mjs"></script>');
  }
});

after(() => rmSync(project, { recursive: true, force: true }));

/** The base64 of a module, as the package inlines it. */
const base64 = (name) => /export const wasm = "([^"]+)"/.exec(readFileSync(join(root, "pkg", "dist", `wasm-${name}.mjs`), "utf8"))[1];

/** Slices of `text` (a module's base64) found nowhere in `other`: marks only that module carries. */
function marks(text, other) {
  const found = [];
  for (let at = 1000; at + 64 < text.length && found.length < 8; at += Math.floor(text.length / 16)) {
    const mark = text.slice(at, at + 64);
    if (!other.includes(mark)) found.push(mark);
  }
  assert.ok(found.length >= 4, "the two modules share too much of their base64 to tell apart");
  return found;
}

/** Builds the app in `name` with Vite for browsers: its output's JS and wasm, each file's text. */
async function built(name) {
  const outDir = join(project, name, "dist");
  await vite({ root: join(project, name), logLevel: "warn", build: { outDir } });
  const files = readdirSync(outDir, { recursive: true }).filter((file) => /\.(m?js|wasm)$/.test(file));
  assert.ok(files.length > 0, `Vite emitted no JS for ${name}`);
  return { dir: outDir, files: files.map((file) => readFileSync(join(outDir, file))) };
}

/** The gzipped size of each file, summed. */
const gzipped = (files) => files.reduce((sum, file) => sum + gzipSync(file, { level: 9 }).length, 0);

test("the main entry in a Vite app ships the host module, never the filter module, within its bound", async () => {
  const [host, filter] = [base64("host"), base64("filter")];
  const { dir, files } = await built("host");
  const text = files.map((file) => file.toString("latin1")).join("\n");
  for (const mark of marks(host, filter)) assert.ok(text.includes(mark), "the host module is not in the build");
  for (const mark of marks(filter, host)) assert.ok(!text.includes(mark), "the filter module leaked into the host entry");
  // The gateway's own code, beside its module: none of it either.
  assert.ok(!text.includes("a filter takes a body"), "the gateway's code leaked into the host entry");
  const size = gzipped(files);
  console.log(`host entry (import { stampInitiator } from "mcp-provenance"), Vite: ${size} bytes gzipped (${(size / 1024).toFixed(1)} KB)`);
  assert.ok(size <= HOST_BOUND, `the host entry is ${size} bytes gzipped, over its bound of ${HOST_BOUND}`);
  assert.deepEqual(await runInChromium(dir, "index.html"), { initiator: "app" });
});

test("the gateway entry in a Vite app brings the filter module", async () => {
  const { dir, files } = await built("gateway");
  const text = files.map((file) => file.toString("latin1")).join("\n");
  for (const mark of marks(base64("filter"), base64("host"))) assert.ok(text.includes(mark), "the filter module is not in the gateway build");
  const size = gzipped(files);
  console.log(`gateway entry (import { createFilter } from "mcp-provenance/gateway"), Vite: ${size} bytes gzipped (${(size / 1024).toFixed(1)} KB)`);
  assert.deepEqual(await runInChromium(dir, "index.html"), { forwarded: "string" });
});
