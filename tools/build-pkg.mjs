// Assembles the npm package in pkg/dist from the wasm cargo built:
//   pkg/dist/mcp_provenance.js        wasm-bindgen's `web` glue (ESM): browsers,
//                                     bundlers and, through pkg/node.mjs, Node ESM
//   pkg/dist/mcp_provenance_bg.wasm   the one .wasm, shrunk by wasm-opt
//   pkg/dist/cjs/mcp_provenance.js    wasm-bindgen's `nodejs` glue (CommonJS) for
//                                     pkg/node.cjs, loading that same .wasm
// Usage: node tools/build-pkg.mjs <path to mcp_provenance.wasm>

import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const input = process.argv[2];
const dist = join(root, "pkg", "dist");
const cjs = join(dist, "cjs");
const run = (command, args) => execFileSync(command, args, { stdio: "inherit" });

rmSync(dist, { recursive: true, force: true });
run("wasm-bindgen", [input, "--target", "web", "--no-typescript", "--out-dir", dist]);

// The web glue and its helpers are ES modules; say so, as the CommonJS
// folder says it is CommonJS, whatever the package around them declares.
writeFileSync(join(dist, "package.json"), '{ "type": "module" }\n');

const node = mkdtempSync(join(tmpdir(), "mcp-provenance-nodejs-"));
run("wasm-bindgen", [input, "--target", "nodejs", "--no-typescript", "--out-dir", node]);
if (!readFileSync(join(node, "mcp_provenance_bg.wasm")).equals(readFileSync(join(dist, "mcp_provenance_bg.wasm")))) {
  throw new Error("the web and nodejs outputs of wasm-bindgen no longer share one .wasm");
}
mkdirSync(cjs, { recursive: true });
writeFileSync(join(cjs, "package.json"), '{ "type": "commonjs" }\n');
writeFileSync(join(cjs, "mcp_provenance.js"), replaceOnce(
  readFileSync(join(node, "mcp_provenance.js"), "utf8"),
  "const wasmPath = `${__dirname}/mcp_provenance_bg.wasm`;",
  "const wasmPath = `${__dirname}/../mcp_provenance_bg.wasm`;",
));
// The glue require()s the inline JS helpers, which wasm-bindgen writes as
// ES modules; give the CommonJS glue a CommonJS copy of each.
for (const file of walk(join(node, "snippets"))) {
  const source = readFileSync(file, "utf8");
  const names = [...source.matchAll(/^export function (\w+)/gm)].map((match) => match[1]);
  const target = join(cjs, "snippets", file.slice(join(node, "snippets").length));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${source.replace(/^export function /gm, "function ")}\nmodule.exports = { ${names.join(", ")} };\n`);
}
rmSync(node, { recursive: true, force: true });

const wasm = join(dist, "mcp_provenance_bg.wasm");
const raw = statSync(wasm).size;
run(join(root, "node_modules", ".bin", "wasm-opt"), ["-Os", "--strip-debug", wasm, "-o", wasm]);
const bytes = readFileSync(wasm);
console.log(`pkg/dist/mcp_provenance_bg.wasm: ${bytes.length} bytes (${raw} before wasm-opt), ${gzipSync(bytes, { level: 9 }).length} gzipped`);

function replaceOnce(text, from, to) {
  if (text.split(from).length !== 2) throw new Error(`expected exactly one ${JSON.stringify(from)} in the generated glue`);
  return text.replace(from, to);
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
