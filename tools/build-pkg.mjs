// Builds the npm package in pkg/dist, all that it ships, from its sources
// in pkg/src and what wasm-bindgen (`--target web`) made of the two .wasm
// cargo built from the one crate: the host module (the object API, without
// the crate's feature `filter`) and the filter module (with the wire ops
// too, for the gateway, http and the command), each with the JS glue that
// instantiates it and wraps its exports. <module> is host or filter.
//   pkg/dist/*.mjs, lib/, bin/    pkg/src's modules and command, as written
//   pkg/dist/lib/{boundary,object,held,host,outgoing,filter,writer,answer,report,outcome}.mjs
//                                 the JS side of the boundary, from binding/:
//                                 host.mjs and filter.mjs each make one
//                                 module's boundary (lib/api.mjs imports the
//                                 host's, so the main entry never loads the filter)
//   pkg/dist/wasm-<module>.mjs    the module's bytes, shrunk by wasm-opt,
//                                 base64, in JS: every bundler and runtime
//                                 loads it as it loads any module, with no
//                                 asset to copy or fetch
//   pkg/dist/lib/glue-<module>.mjs wasm-bindgen's glue less its default export,
//                                 an async init fetching the .wasm from beside
//                                 it (`new URL(..., import.meta.url)`: an asset
//                                 for bundlers to find, and no CommonJS): the
//                                 package calls initSync with wasm-<module>.mjs's bytes
//   pkg/dist/table.mjs            the core's table and vocabulary, as
//                                 binding/table.json describes them, and the reader
//                                 generated from the table: plain property
//                                 reads of exactly the places the core names
//   pkg/dist/usage.txt            the command's help, shared with the native one
//   pkg/dist/lib/cli/scenarios.mjs the probe's checks: the server scenarios of
//                                 upstream/conformance, from TypeScript
//   pkg/dist/LICENSE-*            the licenses, copied from the repository's root
//   pkg/dist/index.cjs            index.mjs and all it imports bundled as
//                                 CommonJS, for `require`
//   pkg/dist/gateway.cjs, ...     each subpath (gateway, http, otel, sdk, ext-apps) likewise, requiring
//                                 index.cjs for the functions and gateway.cjs
//                                 for the filter, so that one instance of
//                                 each module serves every entry
//   pkg/dist/*.d.mts, *.d.cts     pkg/src/*.d.ts, once for each module kind
// Usage: node tools/build-pkg.mjs <host's wasm-bindgen --out-dir> <filter's>
// (each made with --out-name mcp_provenance)

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

import { build } from "esbuild";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
/** wasm-bindgen's out dir of each module. */
const inputs = { host: process.argv[2], filter: process.argv[3], outgoing: process.argv[4] };
assert.ok(inputs.host && inputs.filter && inputs.outgoing, "usage: node tools/build-pkg.mjs <host's wasm-bindgen out dir> <filter's> <outgoing's>");
const dist = join(root, "pkg", "dist");
/** The package's hand-written sources: its modules, declarations and command. */
const src = join(root, "pkg", "src");
const bin = (name) => join(root, "node_modules", ".bin", name);

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
// The modules as they are written; what they import from beside them is generated below.
cpSync(src, dist, { recursive: true, filter: (from) => !from.endsWith(".d.ts") });
// The JS side of the boundary, from the folder it shares with the Rust side.
for (const side of ["writer.mjs", "answer.mjs", "report.mjs", "outcome.mjs", "boundary.mjs", "object.mjs", "held.mjs", "host.mjs", "outgoing.mjs", "filter.mjs"]) copyFileSync(join(root, "binding", side), join(dist, "lib", side));
/**
 * How wasm-opt shrinks each module: the outgoing module, which a front end
 * ships, as small as it goes (-Oz, run until it shrinks no more: 850 bytes
 * smaller as it ships, base64 and gzipped, than -Os); the others -O3, which
 * binaryen 132 makes smaller than -Os as they ship (the host module 396
 * bytes, base64 and gzipped; the filter module 89 bytes gzipped) and the
 * filter 3% faster (the SEP example and 0.7 MB of rows, interleaved in one
 * process); the object API's calls ran within the noise of -Os.
 */
const SHRINK = { host: ["-O3"], filter: ["-O3"], outgoing: ["-Oz", "--converge"] };
/** What each module came to: its sizes, printed at the end. */
const sizes = [];
for (const [name, input] of Object.entries(inputs)) {
  /** The module as wasm-bindgen made it, and shrunk beside it. */
  const [built, shrunk] = [join(input, "mcp_provenance_bg.wasm"), join(input, "mcp_provenance.wasm")];
  execFileSync(bin("wasm-opt"), [...SHRINK[name], "--strip-debug", "--strip-producers", built, "-o", shrunk], { stdio: "inherit" });
  const glue = join(dist, "lib", `glue-${name}.mjs`);
  // `export *` leaves the default export out, and esbuild everything only it used.
  await build({
    stdin: { contents: 'export * from "./mcp_provenance.js";', resolveDir: input },
    banner: { js: `// Generated by tools/build-pkg.mjs: wasm-bindgen's glue for the ${name} module.` },
    outfile: glue, bundle: true, format: "esm", logLevel: "warning",
  });
  const glueText = readFileSync(glue, "utf8");
  assert.ok(!glueText.includes("import.meta"), `lib/glue-${name}.mjs still looks for the .wasm beside it`);
  const bytes = readFileSync(shrunk);
  writeFileSync(join(dist, `wasm-${name}.mjs`), `// Generated by tools/build-pkg.mjs: the ${name} module, base64.\nexport const wasm = "${bytes.toString("base64")}";\n`);
  sizes.push(`${name} module: ${bytes.length} bytes (${statSync(built).size} before wasm-opt), ${gzipSync(bytes, { level: 9 }).length} gzipped;`
    + ` lib/glue-${name}.mjs ${glueText.length} bytes, ${gzipSync(glueText, { level: 9 }).length} gzipped`);
}
// The core's description of the boundary, checked in beside the Rust side (a test keeps it current).
const table = JSON.parse(readFileSync(join(root, "binding", "table.json"), "utf8"));
writeFileSync(join(dist, "table.mjs"), generate(table));
// `mcp-provenance --help`, the text the native command prints too.
copyFileSync(join(root, "src", "wire", "usage", "main.txt"), join(dist, "usage.txt"));
// The probe's checks: the server scenarios written for the conformance suite, as JavaScript.
await build({
  entryPoints: [join(root, "upstream", "conformance", "src", "scenarios", "server", "sep-2817-checks.ts")],
  banner: { js: "// Generated by tools/build-pkg.mjs from upstream/conformance/src/scenarios/server/sep-2817-checks.ts." },
  outfile: join(dist, "lib", "cli", "scenarios.mjs"), bundle: true, format: "esm", platform: "neutral", logLevel: "warning",
});
// The licenses the manifest names, as the crate carries them.
for (const license of ["LICENSE-MIT", "LICENSE-APACHE"]) copyFileSync(join(root, license), join(dist, license));
/** The package's subpath exports beside the main entry: pkg/<name>.mjs and pkg/<name>.d.ts each. */
const SUBPATHS = ["gateway", "http", "otel", "sdk", "ext-apps", "outgoing"];
// Node's own modules (the http middleware's node:stream, loaded with the first body it reads) stay the runtime's imports.
// `import.meta.resolve`, which CommonJS has not, is undefined there (lib/http/sessions.mjs asks `require.resolve` instead).
const cjs = { bundle: true, format: "cjs", platform: "neutral", external: ["node:*"], logLevel: "warning", define: { "import.meta.resolve": "undefined" } };
// index.cjs also carries the host module's boundary (call and instance), and
// gateway.cjs the filter module's, under a symbol no user meets (Object.keys
// does not list it), for the subpaths that cross into a module themselves:
// in CommonJS too, one instance of each module serves all entries.
const BOUNDARY = 'Symbol.for("mcp-provenance.boundary")';
/** An entry's .cjs: `entry` bundled, carrying the boundary of `carried` (lib/host.mjs or lib/filter.mjs). */
const carrying = (entry, carried) => [
  `const exported = require("${entry}");`,
  `const { call, instance } = require("${carried}");`,
  `Object.defineProperty(exported, ${BOUNDARY}, { value: { call, instance } });`,
  "module.exports = exported;",
].join("\n");
/**
 * Where a subpath imports the functions, or the host's boundary, its .cjs
 * requires index.cjs; where it imports the gateway, or the filter's
 * boundary, gateway.cjs (but gateway.cjs itself carries the filter module):
 * one instance of each module serves all entries.
 */
const shared = (entry) => ({
  name: "shared",
  setup: (b) => {
    const from = { host: "./index.cjs", filter: "./gateway.cjs" };
    b.onResolve({ filter: /\/api\.mjs$|^\.\/index\.cjs$/ }, () => ({ path: "./index.cjs", external: true }));
    b.onResolve({ filter: /\/host\.mjs$/ }, () => ({ path: "host", namespace: "shared" }));
    if (entry !== "gateway") {
      b.onResolve({ filter: /\/gateway\.mjs$|^\.\/gateway\.cjs$/ }, () => ({ path: "./gateway.cjs", external: true }));
      b.onResolve({ filter: /\/filter\.mjs$/ }, () => ({ path: "filter", namespace: "shared" }));
    }
    b.onLoad({ filter: /^(host|filter)$/, namespace: "shared" }, (args) => ({
      contents: `const { call, instance } = require("${from[args.path]}")[${BOUNDARY}]; export { call, instance };`,
      loader: "js",
    }));
  },
});
const cjsIndex = carrying("./lib/api.mjs", "./lib/host.mjs");
await build({ ...cjs, stdin: { contents: cjsIndex, resolveDir: dist, sourcefile: "index.cjs.js" }, outfile: join(dist, "index.cjs") });
await build({
  ...cjs, stdin: { contents: carrying("./gateway.mjs", "./lib/filter.mjs"), resolveDir: dist, sourcefile: "gateway.cjs.js" },
  outfile: join(dist, "gateway.cjs"), plugins: [shared("gateway")],
});
for (const entry of SUBPATHS.filter((entry) => entry !== "gateway")) {
  await build({ ...cjs, entryPoints: [join(dist, `${entry}.mjs`)], outfile: join(dist, `${entry}.cjs`), plugins: [shared(entry)] });
}
/** An import of an entry's declarations beside it: `from "./index.js"`, `from "./gateway.js"`. */
const DECLARED = new RegExp(`from "\\./(${["index", ...SUBPATHS].join("|")})\\.js"`, "g");
for (const entry of ["index", ...SUBPATHS]) {
  const types = readFileSync(join(src, `${entry}.d.ts`), "utf8");
  // Each kind's declarations import the same kind's: "./index.js" names dist/index.d.mts or .d.cts, "./gateway.js" dist/gateway's.
  for (const kind of ["mts", "cts"]) writeFileSync(join(dist, `${entry}.d.${kind}`), types.replace(DECLARED, `from "./$1.${kind.slice(0, 1)}js"`));
}

for (const line of sizes) console.log(line);

/** The member names from `node` down to each place under it, by place. */
function placeKeys(node, keys = [], out = []) {
  out[node.place] = keys;
  for (const child of node.children) placeKeys(child, [...keys, child.key], out);
  return out;
}

/** dist/table.mjs: the table (less the tree of places, which the reader is), and a reader of exactly its places. */
function generate(table) {
  let n = 0;
  /** A key as code: a configured one by its variable, else a string. */
  const keyOf = (key) => (typeof key !== "string" ? (key.configured === "invocation" ? "inv" : "ui") : JSON.stringify(key));
  const access = (object, key) => {
    if (typeof key !== "string") return `w.own(${object}, ${keyOf(key)})`;
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `${object}.${key}` : `${object}[${JSON.stringify(key)}]`;
  };
  /**
   * The lines that read `node`, whose value is `value`, member `key` of the
   * object read as `parent`. An object is read through what `w.object`
   * gives: itself, or, for a call that returns a copy, its snapshot.
   */
  const place = (node, value, indent, parent, key) => {
    const at = parent === undefined ? "" : `, ${parent}, ${keyOf(key)}`;
    if (node.read === "scalar") return [`${indent}w.value(${value}, ${node.place}); // ${node.name}`];
    if (node.read === "envelope") {
      return [`${indent}readEnvelope(w, ${value}, ${node.name === "Echo" ? "FIELDS" : "flags"}, ${node.place}${at}); // ${node.name}`];
    }
    const object = value.replace("v", "o");
    // The legacy arguments are the caller's, shared by the copy: read where they stand.
    const read = node.group === table.groups.Legacy ? `w.shared(${value})` : `w.object(${value}${at})`;
    const lines = [`${indent}const ${object} = ${read};`, `${indent}if (${object}) { // ${node.name}`];
    for (const child of node.children) {
      if (child.read === "others") {
        // The members no sibling names (src/schema.rs Read::Others): of
        // them, those the core may look for, `wanted`, whole. (Where one is
        // also a sibling's, the core leaves it to the sibling.)
        lines.push(`${indent}  if (flags & ${child.group}) w.others(${object}, undefined, WHOLE, wanted); // ${child.name}`);
        continue;
      }
      const name = `v${++n}`;
      let inner = `${indent}  `;
      if (child.group !== 0) {
        lines.push(`${inner}if (flags & ${child.group}) {`);
        inner += "  ";
      }
      lines.push(`${inner}const ${name} = ${access(object, child.key)};`, ...place(child, name, inner, object, child.key));
      if (child.group !== 0) lines.push(`${indent}  }`);
    }
    lines.push(`${indent}}`);
    return lines;
  };
  const fields = table.envelope.flatMap((field, index) => {
    const value = `f${index}`;
    const object = `g${index}`;
    if (field.members.length === 0) return [`  w.value(${access("o", field.name)}, place, ${index});`];
    return [
      `  const ${value} = ${access("o", field.name)};`,
      `  const ${object} = w.object(${value}, o, ${JSON.stringify(field.name)});`,
      `  if (${object}) {`,
      ...field.members.map((member, at) => `    w.value(${access(object, member)}, place, ${index}, ${at});`),
      `    w.others(${object}, MEMBERS[${index}], flags);`,
      "  }",
    ];
  });
  return `// Generated by tools/build-pkg.mjs from the module's description of its
// table (src/schema.rs) and vocabulary; do not edit. The reader reads the
// places of the table, in its order, with plain property reads, and writes
// them with a Writer (pkg/dist/lib/writer.mjs), naming the place of each value.

export const table = ${JSON.stringify({ ...table, message: undefined }, null, 2)};

/** The member names from a message down to each place, by place (a configured key as \`{ configured }\`). */
export const PLACE_KEYS = ${JSON.stringify(placeKeys(table.message))};

const { FIELDS, WHOLE } = table.flags;
const FIELD_NAMES = ${JSON.stringify(table.envelope.map((field) => field.name))};
const MEMBERS = ${JSON.stringify(table.envelope.map((field) => field.members))};

/**
 * Reads a message as a handle's \`plan\` says (binding/src/handle.rs): the
 * keys in force, \`wanted\` the other members of \`_meta\` to read
 * (correlation ids); \`flags\` how much to read. What it read the message
 * as: its snapshot, or the value.
 */
export function readMessage(w, v0, flags, plan) {
  const { invocation: inv, ui, wanted } = plan;
${place(table.message, "v0", "  ").join("\n")}
  return o0 ?? v0;
}

/**
 * Reads an envelope at \`place\` (member \`key\` of \`parent\`, when read in
 * one): its type, or with FIELDS its fields and other members. What it
 * read it as: its snapshot, or the value.
 */
export function readEnvelope(w, v, flags, place, parent, key) {
  if ((flags & FIELDS) === 0) {
    w.value(v);
    return v;
  }
  const o = w.object(v, parent, key);
  if (!o) return v;
${fields.join("\n")}
  w.others(o, FIELD_NAMES, flags);
  return o;
}
`;
}
