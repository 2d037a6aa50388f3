// The package as a user meets it: npm pack, install the tarball into a fresh
// project, import it, require it, and type-check a strict TypeScript file
// that uses every function.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = join(root, "node_modules", ".bin", "tsc");
const exec = (command, args, cwd) => execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
let project;

before(() => {
  project = mkdtempSync(join(tmpdir(), "mcp-provenance-user-"));
  const tarball = exec("npm", ["pack", "--silent", "--pack-destination", project], join(root, "pkg")).trim().split("\n").pop();
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user", private: true, type: "module" }));
  exec("npm", ["install", "--no-audit", "--no-fund", "--offline", join(project, tarball)], project);
});

after(() => rmSync(project, { recursive: true, force: true }));

const declared = readFileSync(join(root, "pkg", "index.d.ts"), "utf8")
  .match(/^export declare (?:function|const) (\w+)/gm)
  .map((line) => line.split(" ").pop())
  .sort();

test("the tarball holds the entries and the generated files, and no sources", () => {
  const files = exec("npm", ["pack", "--dry-run", "--json"], join(root, "pkg"));
  const paths = JSON.parse(files)[0].files.map((file) => file.path).sort();
  assert.deepEqual(paths, [
    "README.md", "dist/index.cjs", "dist/index.d.cts", "dist/index.d.mts", "dist/table.mjs", "dist/wasm.mjs",
    "index.mjs", "lib/answer.mjs", "lib/api.mjs", "lib/boundary.mjs", "lib/writer.mjs", "package.json",
  ]);
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

test("a strict TypeScript file using every function type-checks", () => {
  cpSync(join(root, "js-tests", "fixtures", "usage.ts"), join(project, "usage.ts"));
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", types: [], lib: ["es2022", "dom"] },
    files: ["usage.ts"],
  }));
  exec(tsc, ["--strict", "--noEmit", "-p", "tsconfig.json"], project);
  const used = readFileSync(join(project, "usage.ts"), "utf8");
  for (const name of declared) assert.ok(used.includes(name), `usage.ts uses ${name}`);
});
