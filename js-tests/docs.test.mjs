// The reference chapter, docs/reference.md, is what it says it is:
//
// - every JSON example (and every wire example that says so) is a conformance
//   vector, named on the line under it: "_Conformance vector [`ID`](../conformance/FILE):
//   the input|output|answer|request|outcome of `OP`[, which reports ...]._". The
//   example must equal that part of the vector, the vector must give its
//   expected output through the built package, and what the line says
//   `validate` reports must be what the vector expects, diagnostic by
//   diagnostic (severity, rule, path);
// - every link into the repository names a file that exists (and an anchor
//   that exists), and every rule cited has its link.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import * as gateway from "../pkg/dist/gateway.mjs";
import * as api from "../pkg/dist/index.mjs";
import { anchors } from "./anchors.mjs";
import { vectors } from "./conformance.mjs";
import { runVector } from "./vectors.mjs";

/** The repository's root. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The chapter, from the root. */
const SOURCE = "docs/reference.md";
const chapter = readFileSync(join(ROOT, SOURCE), "utf8");
const lines = chapter.split("\n");
const STATEMENT = /^_Conformance vector \[`([a-z0-9-]+)`\]\(\.\.\/conformance\/([a-z0-9-]+\.json)\): the (input|output|answer|request|outcome) of `(\w+)`(?:, which reports (.+))?\._$/;

/** The code blocks of the chapter: language, text, and the statement line under it (or null). */
function blocks() {
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    do i++;
    while (i < lines.length && lines[i] !== "```");
    let next = i + 1;
    while (lines[next] === "") next++;
    const statement = lines[next]?.startsWith("_Conformance vector") ? lines[next] : null;
    found.push({ language: open[1], text: lines.slice(start + 1, i).join("\n"), line: start + 1, statement });
  }
  return found;
}

/** The part of `vector` an example shows. */
function part(vector, which) {
  switch (which) {
    case "input": return vector.input;
    case "request": return vector.request;
    case "output": return vector.op === "sanitize" ? vector.expect.message : vector.op === "filter" ? vector.expect.forward : vector.expect;
    case "answer": return vector.expect.reject ?? vector.expect.replies?.[0];
    // An exchange's outcome account, the first exchange's.
    case "outcome": return vector.expect[0]?.outcome;
  }
}

/** What a statement says `validate` reports, one "severity rule path" string per diagnostic. */
function claimed(reports) {
  if (reports === "no diagnostics") return [];
  return reports.split(/, (?=an error|a warning)/).map((item) => {
    const match = /^(an error|a warning) citing ([A-Z]+-\d+) at `([^`]*)`$/.exec(item);
    assert.ok(match, `cannot read "${item}" (expected: an error|a warning citing RULE at \`PATH\`)`);
    return `${match[1] === "an error" ? "error" : "warning"} ${match[2]} ${match[3]}`;
  });
}

const examples = blocks().filter(({ language, statement }) => language === "json" || statement);

test("the chapter's examples are conformance vectors", () => {
  assert.ok(examples.length >= 20, `only ${examples.length} examples`);
  for (const { language, line, statement } of examples) {
    assert.ok(statement, `the ${language} example at docs/reference.md:${line} names no conformance vector under it`);
    assert.match(statement, STATEMENT, `docs/reference.md:${line}: the statement under the example does not read as one`);
  }
});

for (const { language, text, line, statement } of examples) {
  const [, id, file, which, op, reports] = STATEMENT.exec(statement ?? "") ?? [];
  test(`example at docs/reference.md:${line} is ${which ?? "?"} of ${op ?? "?"} in vector ${id ?? "?"}`, () => {
    assert.ok(id, "no statement");
    const vector = vectors.find((v) => v.id === id && v.file === file);
    assert.ok(vector, `no vector ${id} in conformance/${file}`);
    assert.equal(vector.op, op, `vector ${id} calls ${vector.op}, not ${op}`);
    const shown = part(vector, which);
    assert.notEqual(shown, undefined, `vector ${id} has no ${which}`);
    if (language === "json") assert.deepStrictEqual(JSON.parse(text), shown, `the example is not the ${which} of vector ${id}`);
    else assert.equal(text, shown, `the example is not, byte for byte, the ${which} of vector ${id}`);
    // The vector holds for the built package: the example does what it says.
    assert.deepStrictEqual(runVector({ ...api, ...gateway }, structuredClone(vector)), vector.expect);
    if (op === "validate" && which === "input") {
      assert.ok(reports, "an input of validate says what validate reports");
      const report = api.validate(JSON.parse(text), vector.options);
      assert.deepStrictEqual(claimed(reports), report.diagnostics.map((d) => `${d.severity} ${d.rule} ${d.path}`));
      assert.equal(report.valid, !report.diagnostics.some((d) => d.severity === "error"));
    } else {
      assert.equal(reports, undefined, "only an input of validate says what validate reports");
    }
  });
}

test("the first example, which the benches read, is a whole JSON-RPC request", () => {
  // bench/*.mjs, bench/*.py and bench/native.rs take the first ```json block after this phrase.
  const example = JSON.parse(chapter.match(/A request a model made[^]*?```json\n([^]*?)```/)[1]);
  assert.equal(example.jsonrpc, "2.0");
  assert.equal(typeof example.id, "number");
  assert.equal(example.method, "tools/call");
  assert.ok(example.params._meta["io.modelcontextprotocol/aiInvocation"].userIntent.text);
});

/** The chapter's links outside code, inline and defined: [text, target]. */
function links() {
  const prose = chapter.replace(/^```[^]*?^```/gm, "").replace(/`[^`\n]*`/g, "code");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).concat([...prose.matchAll(/^\[[^\]]+\]:\s+(\S+)/gm)].map((m) => m[1]));
}

test("every link of the chapter into the repository names a file that exists, and its anchor", () => {
  const local = links().filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
  assert.ok(local.length >= 30);
  for (const target of local) {
    const [path, anchor] = target.split("#");
    const file = path ? join(ROOT, posix.normalize(posix.join(dirname(SOURCE), path))) : join(ROOT, SOURCE);
    assert.ok(existsSync(file), `${target}: no such file`);
    if (anchor !== undefined) {
      assert.ok(statSync(file).isFile() && file.endsWith(".md"), `${target}: an anchor into a file that is not Markdown`);
      assert.ok(anchors(file).has(anchor), `${target}: no such anchor`);
    }
  }
});

test("every rule the chapter cites links to that rule", () => {
  const prose = chapter.replace(/^```[^]*?^```/gm, "").replace(/`[^`\n]*`/g, "code");
  const defined = new Map([...prose.matchAll(/^\[([A-Z]+-\d+)\]:\s+(\S+)$/gm)].map((m) => [m[1], m[2]]));
  const cited = new Set([...prose.matchAll(/\[([A-Z]+-\d+)\](?![(:])/g)].map((m) => m[1]));
  assert.ok(cited.size >= 25);
  for (const rule of cited) assert.equal(defined.get(rule), `rules.md#${rule.toLowerCase()}`, `[${rule}] has no link to its rule`);
});

test("links into the chapter from elsewhere in the repository find their anchors", () => {
  const own = anchors(join(ROOT, SOURCE));
  for (const file of ["README.md", "python/README.md", "pkg/README.md", "conformance/README.md", "docs/rules.md"]) {
    if (!existsSync(join(ROOT, file))) continue;
    for (const [, anchor] of readFileSync(join(ROOT, file), "utf8").matchAll(/reference\.md#([\w-]+)/g)) {
      assert.ok(own.has(anchor), `${file} links to ${SOURCE}#${anchor}, which is gone`);
    }
  }
  assert.ok(own.has("testing-an-implementation"));
});
