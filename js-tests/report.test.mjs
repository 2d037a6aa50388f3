// upstream/report.md, the implementation report for the SEP-2817 discussion,
// held to the repository: every relative link names a file that exists (and
// an anchor that exists in it), every finding cites evidence, and every name
// an evidence link quotes is found in the linked file.
//
// The convention the report states: in a finding's **Evidence** list, each
// item is a link to a file of the repository followed by backticked names,
// which belong to the link before them: a vector `id` when the file is a
// conformance vector file (a JSON array of vectors), else a test's name (a
// string literal in a JS test, `def name(` in Python, `fn name(` in Rust or
// in a patch) or, in any other file, its text.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { anchors } from "./anchors.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const REPORT = join(root, "upstream/report.md");

const LINK = /\[([^\]]*)\]\(([^)\s]+)\)/g;
const NAME = /`([^`]+)`/g;

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `name` is found in the file at `path`, as the convention says for its kind. */
function holdsName(path, name) {
  const text = readFileSync(path, "utf8");
  const ext = extname(path);
  if (ext === ".json") {
    let vectors;
    try {
      vectors = JSON.parse(text);
    } catch {
      return false;
    }
    if (Array.isArray(vectors)) return vectors.some((vector) => vector?.id === name);
    return text.includes(name);
  }
  const n = escape(name);
  if (ext === ".py") return new RegExp(`\\b(def|class)\\s+${n}\\b`).test(text);
  if (ext === ".rs") return new RegExp(`\\b(fn|const|static|struct|enum|mod)\\s+${n}\\b`).test(text);
  if (ext === ".patch") return new RegExp(`\\b(fn|def)\\s+${n}\\s*\\(`).test(text);
  if (ext === ".mjs" || ext === ".js" || ext === ".cjs") return [`"${name}"`, `'${name}'`, `\`${name}\``].some((quoted) => text.includes(quoted));
  return text.includes(name);
}

/** Whether the file at `path` has the anchor `anchor`. */
function holdsAnchor(path, anchor) {
  return extname(path) === ".md" ? anchors(path).has(anchor) : readFileSync(path, "utf8").includes(anchor);
}

/** The relative links of a line: { target, anchor, path, index, end }, in order. */
function linksOf(line, base) {
  const links = [];
  for (const match of line.matchAll(LINK)) {
    const href = match[2];
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("#")) continue;
    const [target, anchor] = href.split("#");
    links.push({ href, target, anchor, path: resolve(base, target), index: match.index, end: match.index + match[0].length });
  }
  return links;
}

/**
 * Checks a report's text, its links resolved from `base` (its folder). Returns every problem found,
 * and the findings: { id, title, evidence: [{ path, names }] }.
 */
function checkReport(text, base) {
  const errors = [];
  const lines = text.split("\n");

  // Every relative link, anywhere: a file of the repository, and its anchor in it.
  lines.forEach((line, i) => {
    for (const link of linksOf(line, base)) {
      const where = `line ${i + 1}: ${link.href}`;
      if (relative(root, link.path).startsWith("..")) errors.push(`${where} leaves the repository`);
      else if (!existsSync(link.path) || !statSync(link.path).isFile()) errors.push(`${where} names no file`);
      else if (link.anchor !== undefined && !holdsAnchor(link.path, link.anchor)) errors.push(`${where}: no anchor #${link.anchor} in ${link.target}`);
    }
  });

  // The findings, each with its evidence list.
  const findings = [];
  let finding;
  let inEvidence = false;
  let item;
  const closeItem = () => {
    if (item) finding.evidenceLines.push(item);
    item = undefined;
  };
  lines.forEach((line, i) => {
    const heading = /^### (F\d+)\. (.+)$/.exec(line);
    if (heading || /^#{1,3} /.test(line)) {
      closeItem();
      inEvidence = false;
      finding = heading ? { id: heading[1], title: heading[2], line: i + 1, evidenceLines: [], evidenceHeadings: 0 } : undefined;
      if (finding) findings.push(finding);
      return;
    }
    if (!finding) return;
    if (/^\*\*Evidence\*\*/.test(line)) {
      closeItem();
      inEvidence = true;
      finding.evidenceHeadings++;
      return;
    }
    if (!inEvidence) return;
    if (line.startsWith("- ")) {
      closeItem();
      item = { text: line, line: i + 1 };
    } else if (line.startsWith("  ") && item) {
      item.text += ` ${line.trim()}`;
    } else {
      closeItem();
      inEvidence = false;
    }
  });
  closeItem();

  for (const f of findings) {
    f.evidence = [];
    if (f.evidenceHeadings === 0) errors.push(`${f.id} (line ${f.line}) has no **Evidence** list`);
    for (const { text: itemText, line } of f.evidenceLines) {
      const links = linksOf(itemText, base);
      if (links.length === 0) errors.push(`${f.id}, line ${line}: an evidence item without a link to a file of the repository`);
      links.forEach((link, k) => {
        const until = k + 1 < links.length ? links[k + 1].index : itemText.length;
        const names = [...itemText.slice(link.end, until).matchAll(NAME)].map((m) => m[1]);
        f.evidence.push({ path: link.path, names });
        if (!existsSync(link.path) || !statSync(link.path).isFile()) return; // reported above
        for (const name of names) {
          if (!holdsName(link.path, name)) errors.push(`${f.id}, line ${line}: \`${name}\` is not found in ${link.target}`);
        }
      });
    }
    if (!f.evidence.some((e) => existsSync(e.path))) errors.push(`${f.id} (line ${f.line}) cites no evidence file that exists`);
  }

  // The table of findings lists each finding once, in order, and no other.
  const table = lines.map((line) => /^\|\s*(F\d+)\s*\|/.exec(line)?.[1]).filter(Boolean);
  const ids = findings.map((f) => f.id);
  if (JSON.stringify(table) !== JSON.stringify(ids)) errors.push(`the table lists ${table.join(", ") || "nothing"}; the sections are ${ids.join(", ") || "none"}`);
  if (new Set(ids).size !== ids.length) errors.push(`a finding's id is used twice: ${ids.join(", ")}`);

  return { errors, findings };
}

const report = readFileSync(REPORT, "utf8");
const base = dirname(REPORT);

test("every relative link of the report, names and anchors included, resolves in the repository", () => {
  const { errors } = checkReport(report, base);
  assert.deepEqual(errors, []);
});

test("the report has findings, each with evidence that names tests or vectors", () => {
  const { findings } = checkReport(report, base);
  assert.ok(findings.length >= 5, `${findings.length} findings`);
  for (const f of findings) {
    assert.ok(f.evidence.length > 0, `${f.id} has evidence`);
    assert.ok(f.evidence.some((e) => e.names.length > 0), `${f.id} names at least one test or vector`);
  }
});

test("the report stays short, with a summary and a proposed wording per finding", () => {
  const lines = report.split("\n").length;
  assert.ok(lines >= 150 && lines <= 400, `${lines} lines`);
  assert.match(report, /^## Summary\n\n\S/m);
  for (const section of report.split(/^### /m).slice(1)) {
    assert.match(section, /\*\*Proposed\*\*|\*\*Proposed\.\*\*/, section.split("\n")[0]);
    assert.match(section, /^> \S/m, `${section.split("\n")[0]}: the new wording, quoted`);
  }
});

test("the checker catches a broken link, a missing name, an unknown vector and a finding without evidence", () => {
  const broken = [
    "## Findings",
    "",
    "| # | Finding |",
    "| --- | --- |",
    "| F1 | one |",
    "| F2 | two |",
    "| F3 | three |",
    "",
    "### F1. A link to no file",
    "",
    "**Evidence**",
    "- [gone](../js-tests/no-such.test.mjs) `anything`",
    "",
    "### F2. Names the files do not hold",
    "",
    "**Evidence**",
    "- [sdk](../js-tests/sdk.test.mjs) `a test no one wrote`",
    "- [vectors](../conformance/filter.json) `filter-no-such-vector`",
    "- [rules](../docs/rules.md#no-such-anchor)",
    "",
    "### F3. No evidence at all",
    "",
    "Words only.",
  ].join("\n");
  const { errors } = checkReport(broken, base);
  const expected = [
    /no-such\.test\.mjs names no file/,
    /F2, line \d+: `a test no one wrote` is not found in \.\.\/js-tests\/sdk\.test\.mjs/,
    /F2, line \d+: `filter-no-such-vector` is not found in \.\.\/conformance\/filter\.json/,
    /no anchor #no-such-anchor in \.\.\/docs\/rules\.md/,
    /F1 \(line \d+\) cites no evidence file that exists/,
    /F3 \(line \d+\) has no \*\*Evidence\*\* list/,
  ];
  for (const pattern of expected) assert.ok(errors.some((error) => pattern.test(error)), `${pattern} in:\n${errors.join("\n")}`);
  // And a correct item passes: the same checker, on names the files do hold.
  const good = "| F1 | x |\n\n### F1. Fine\n\n**Evidence**\n- [sdk](../js-tests/sdk.test.mjs) `a bad option is a RangeError at once`\n- [v](../conformance/echo.json) `echo-sep-turn-id`\n\n**Proposed.**\n> x\n";
  assert.deepEqual(checkReport(good, base).errors, []);
});
