// The package as a user meets it: npm pack, install the tarball into a fresh
// project, import it, require it, type-check strict TypeScript that pins
// what the declarations say (ESM and CommonJS), and run arethetypeswrong on
// the tarball.
import assert from "node:assert/strict";
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { exec, linkScope, root, userProject } from "./user.mjs";

const tsc = join(root, "node_modules", ".bin", "tsc");
let project;

before(() => {
  project = userProject("package");
});

after(() => rmSync(project, { recursive: true, force: true }));

const declared = readFileSync(join(root, "pkg", "src", "index.d.ts"), "utf8")
  .match(/^export declare (?:function|const) (\w+)/gm)
  .map((line) => line.split(" ").pop())
  .sort();

test("the tarball holds what was built (dist/) and the subpath folders, no sources and not the raw .wasm", () => {
  const files = exec("npm", ["pack", "--dry-run", "--json"], join(root, "pkg"));
  const paths = JSON.parse(files)[0].files.map((file) => file.path).sort();
  assert.deepEqual(paths, [
    "README.md", "dist/LICENSE-APACHE", "dist/LICENSE-MIT", "dist/bin/mcp-provenance.mjs",
    "dist/ext-apps.cjs", "dist/ext-apps.d.cts", "dist/ext-apps.d.mts", "dist/ext-apps.mjs",
    "dist/gateway.cjs", "dist/gateway.d.cts", "dist/gateway.d.mts", "dist/gateway.mjs",
    "dist/http.cjs", "dist/http.d.cts", "dist/http.d.mts", "dist/http.mjs",
    "dist/index.cjs", "dist/index.d.cts", "dist/index.d.mts", "dist/index.mjs",
    "dist/lib/answer.mjs", "dist/lib/api.mjs", "dist/lib/boundary.mjs", "dist/lib/cli/check.mjs", "dist/lib/cli/probe.mjs", "dist/lib/cli/scenarios.mjs", "dist/lib/cli/usage.mjs", "dist/lib/filter.mjs", "dist/lib/glue-filter.mjs", "dist/lib/glue-host.mjs", "dist/lib/glue-outgoing.mjs", "dist/lib/held.mjs", "dist/lib/host.mjs",
    "dist/lib/http/exchange.mjs", "dist/lib/http/fetch.mjs", "dist/lib/http/node.mjs", "dist/lib/http/sessions.mjs", "dist/lib/http/sinks.mjs",
    "dist/lib/object.mjs", "dist/lib/outcome.mjs", "dist/lib/outgoing.mjs", "dist/lib/report.mjs", "dist/lib/requests.mjs", "dist/lib/writer.mjs",
    "dist/otel.cjs", "dist/otel.d.cts", "dist/otel.d.mts", "dist/otel.mjs",
    "dist/outgoing.cjs", "dist/outgoing.d.cts", "dist/outgoing.d.mts", "dist/outgoing.mjs",
    "dist/sdk.cjs", "dist/sdk.d.cts", "dist/sdk.d.mts", "dist/sdk.mjs",
    "dist/table.mjs", "dist/usage.txt", "dist/wasm-filter.mjs", "dist/wasm-host.mjs", "dist/wasm-outgoing.mjs",
    "ext-apps/package.json", "gateway/package.json", "http/package.json", "otel/package.json", "outgoing/package.json", "package.json", "sdk/package.json",
  ]);
});

test("installing the tarball into an empty project adds one package, the library itself", () => {
  const installed = readdirSync(join(project, "node_modules")).filter((name) => !name.startsWith("."));
  assert.deepEqual(installed, ["mcp-provenance"]);
});

test("import (ESM) gives exactly the declared API, ready to use", () => {
  const out = exec("node", ["--input-type=module", "-e", `
    import * as api from "mcp-provenance";
    console.log(JSON.stringify({ names: Object.keys(api).sort(), stamped: api.stampInitiator({ method: "tools/call" }) }));
  `], project);
  const { names, stamped } = JSON.parse(out);
  assert.deepEqual(names, declared);
  assert.deepEqual(stamped, { method: "tools/call", params: { _meta: { "io.modelcontextprotocol/ui": { initiator: "app" } } } });
});

test("require (CommonJS) gives exactly the declared API, ready to use", () => {
  writeFileSync(join(project, "use.cjs"), `
    const api = require("mcp-provenance");
    console.log(JSON.stringify({ names: Object.keys(api).sort(), valid: api.validate({ method: "ping" }).valid }));
  `);
  const { names, valid } = JSON.parse(exec("node", ["use.cjs"], project));
  assert.deepEqual(names, declared);
  assert.equal(valid, true);
});

test("the subpaths import and require, on one module instance with the main entry", () => {
  writeFileSync(join(project, "gateway.cjs"), `
    const { createFilter } = require("mcp-provenance/gateway");
    console.log(createFilter()('{"jsonrpc":"2.0","id":1,"method":"ping"}').forward);
  `);
  assert.equal(exec("node", ["gateway.cjs"], project).trim(), '{"jsonrpc":"2.0","id":1,"method":"ping"}');
  const out = exec("node", ["--input-type=module", "-e", `
    import { createFilter } from "mcp-provenance/gateway";
    console.log(Object.keys(await import("mcp-provenance/gateway")).join(), createFilter()("[1]").status);
  `], project);
  assert.equal(out.trim(), "SESSION_STORE,createFilter,createGateway 200");
  writeFileSync(join(project, "otel.cjs"), `
    const { auditRecord } = require("mcp-provenance");
    console.log(require("mcp-provenance/otel").otelAttributes(auditRecord({ method: "ping" }))["mcp.method.name"]);
  `);
  assert.equal(exec("node", ["otel.cjs"], project).trim(), "ping");
  const subpaths = exec("node", ["--input-type=module", "-e", `
    import { createRequire } from "node:module";
    const require = createRequire(import.meta.url);
    const entries = ["sdk", "ext-apps", "outgoing"];
    const imported = await Promise.all(entries.map(async (entry) => Object.keys(await import("mcp-provenance/" + entry)).sort()));
    console.log(JSON.stringify([imported, entries.map((entry) => Object.keys(require("mcp-provenance/" + entry)).sort())]));
  `], project);
  const outgoing = ["AI_INVOCATION_KEY", "UI_KEY", "attachInvocation", "clearInitiator", "stampInitiator"];
  assert.deepEqual(JSON.parse(subpaths), [[["provenanceTransport"], ["stampAppCalls"], outgoing], [["provenanceTransport"], ["stampAppCalls"], outgoing]]);
});

test("strict TypeScript pins the declarations, for import and for require, with the SDK's types as input", () => {
  // The SDK's types, as a user of both packages has them.
  linkScope(project, "@modelcontextprotocol");
  for (const file of ["usage.ts", "usage.cts"]) cpSync(join(root, "js-tests", "fixtures", file), join(project, file));
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", types: [], lib: ["es2022", "dom"] },
    files: ["usage.ts", "usage.cts"],
  }));
  exec(tsc, ["-p", "tsconfig.json"], project);
  const used = readFileSync(join(project, "usage.ts"), "utf8");
  for (const name of declared) assert.ok(used.includes(name), `usage.ts uses ${name}`);
});

test("arethetypeswrong finds no problem in the tarball", () => {
  const report = JSON.parse(exec(join(root, "node_modules", ".bin", "attw"), ["--pack", ".", "--format", "json"], join(root, "pkg")));
  assert.deepEqual(report.analysis.problems, []);
});
