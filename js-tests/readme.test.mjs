// The npm README's examples, as a user copies them into a project with the
// package installed from its tarball: all of them pass `tsc --strict` as
// written (TypeScript as TypeScript, JavaScript with checkJs), and each
// program runs in Node (TypeScript once esbuild strips its types) with its
// assertions holding. Its rule links name every rule of the core and point
// into the repository package.json names.
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { table } from "../pkg/dist/table.mjs";
import { exec, linkScope, root, userProject } from "./user.mjs";

const readme = readFileSync(join(root, "pkg", "README.md"), "utf8");
/** Each example: its file name (by language) and source. */
const examples = [...readme.matchAll(/```(ts|js)\n([\s\S]*?)```/g)].map(([, language, source], index) => ({
  file: `example-${index + 1}.${language === "ts" ? "mts" : "mjs"}`,
  source,
}));
let project;

before(() => {
  project = userProject("readme");
  // The MCP packages the examples use beside this one, as their users have them.
  linkScope(project, "@modelcontextprotocol");
  linkScope(project, "@rollup");
  // OpenTelemetry's metrics SDK and Prometheus exporter, which the metrics example feeds.
  linkScope(project, "@opentelemetry");
  // console.assert, made to throw, so that a failed assertion fails the example.
  writeFileSync(join(project, "strict-assert.mjs"), 'console.assert = (ok, ...why) => { if (!ok) throw new Error(`assertion failed ${why.join(" ")}`); };\n');
  for (const { file, source } of examples) writeFileSync(join(project, file), source);
});

after(() => rmSync(project, { recursive: true, force: true }));

test("the README has an example for each role", () => assert.ok(examples.length >= 5));

test("the README's Rust excerpt is examples/rmcp.rs's own code, which tests/rmcp.rs runs", () => {
  const [, excerpt] = /```rust\n([\s\S]*?)```/.exec(readme);
  const example = readFileSync(join(root, "examples", "rmcp.rs"), "utf8");
  const normalized = (text) => text.split("\n").map((line) => line.trim()).filter(Boolean).join("\n");
  assert.ok(normalized(example).includes(normalized(excerpt)), "the excerpt appears in examples/rmcp.rs, line for line");
});

for (const { file, source } of examples) {
  // A bundler's configuration is a module to export, not a program to run.
  if (source.includes("export default")) continue;
  test(`README example ${file} runs and its assertions hold`, () => {
    const program = file.replace(/\.mts$/, ".run.mjs");
    if (program !== file) exec(join(root, "node_modules", ".bin", "esbuild"), [file, `--outfile=${program}`, "--log-level=warning"], project);
    exec("node", ["--import", "./strict-assert.mjs", program], project);
  });
}

test("every README example passes tsc --strict as written", () => {
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    // As a project that also uses the MCP SDKs and Rollup has it: their
    // own declarations want Node's types, which this one leaves out.
    compilerOptions: { strict: true, allowJs: true, checkJs: true, noEmit: true, skipLibCheck: true, module: "nodenext", moduleResolution: "nodenext", target: "esnext", types: [], lib: ["esnext", "dom"] },
    files: examples.map(({ file }) => file),
  }));
  exec(join(root, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], project);
});

test("the README links every rule to its text in the repository", () => {
  const { repository } = JSON.parse(readFileSync(join(root, "pkg", "package.json"), "utf8"));
  const base = `${repository.url.replace(/^git\+/, "").replace(/\.git$/, "")}/blob/main/docs/rules.md#`;
  const linked = [...readme.matchAll(/\[([A-Z]+-\d+)\]\(([^)]+)\)/g)].map(([, id, url]) => {
    assert.equal(url, `${base}${id.toLowerCase()}`);
    return id;
  });
  assert.deepEqual(linked, table.rules);
  const rules = readFileSync(join(root, "docs", "rules.md"), "utf8");
  for (const id of table.rules) assert.ok(rules.includes(`<a id="${id.toLowerCase()}"></a>**${id}**`), `docs/rules.md anchors ${id}`);
});
