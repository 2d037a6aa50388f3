// SEP-2817's specification page and its traceability yaml hold each other:
//
// - upstream/spec/docs/specification/draft/basic/ai-invocation.mdx is the page
//   the SEP's PR adds to modelcontextprotocol/modelcontextprotocol;
// - upstream/conformance/src/seps/sep-2817.yaml is the conformance suite's
//   traceability file for it (SEP-2484), one row per MUST/SHOULD sentence.
//
// Every requirement sentence of the page is exactly one row's `text`, and no
// row quotes anything else. The suite's `new-sep` command does not read the
// page (it derives `spec_url` from its path and writes TODO rows); its skill
// (.claude/skills/new-sep/SKILL.md, step 4) says how a reader fills the rows.
// `requirements()` below is those rules written down, so the suite has no
// function to import: every sentence with MUST, SHOULD, SHALL, REQUIRED or
// RECOMMENDED (NOT forms included) is quoted whole, as plain text; MAY and
// OPTIONAL alone give no row; a requirement that ends in ":" and leads a list
// gives one row per item, lead-in and item together; rows merged by hand are
// joined with " / ".
//
// The page is also implementation-neutral: no name this repository's npm or
// Python packages export, no link to this repository, none of its rule IDs,
// and its examples are JSON-RPC messages in JSON.
//
// `yaml` is not a direct devDependency: it is the conformance suite's own
// parser, installed with @modelcontextprotocol/conformance (and the inspector).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SPEC_ROOT = "upstream/spec";
/** The page, as its path in the specification repository. */
const SPEC_PATH = "docs/specification/draft/basic/ai-invocation.mdx";
const YAML_PATH = "upstream/conformance/src/seps/sep-2817.yaml";

// SPEC_CHAPTER_PAGE / SPEC_CHAPTER_YAML point the test at other copies (to see each assertion
// fail on a broken copy without touching the files others read).
const page = readFileSync(process.env.SPEC_CHAPTER_PAGE ?? join(ROOT, SPEC_ROOT, SPEC_PATH), "utf8");
const sep = parseYaml(readFileSync(process.env.SPEC_CHAPTER_YAML ?? join(ROOT, YAML_PATH), "utf8"));

// ---- the extraction rules ---------------------------------------------------

const KEYWORD = /\b(?:MUST|SHOULD|SHALL|REQUIRED|RECOMMENDED)\b/;
const MUST_LEVEL = /\b(?:MUST|SHALL|REQUIRED)\b/;
const ALL_KEYWORDS = /\b(?:MUST|SHOULD|SHALL|REQUIRED|RECOMMENDED|MAY|OPTIONAL)\b/;

/** The anchor Mintlify gives a heading. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s+/g, "-");

/** The text a reader quotes: inline Markdown and MDX markup removed, whitespace collapsed. */
export function plain(markdown) {
  const spans = [];
  let text = markdown.replace(/`([^`]*)`/g, (_, code) => `\u0000${spans.push(code) - 1}\u0000`);
  text = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<\/?[A-Za-z][^>]*>/g, "")
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/__([^_]+)__/g, "$1")
    .replace(/(^|[^\w*])\*([^*\s][^*]*)\*(?!\w)/g, "$1$2")
    .replace(/(^|[^\w])_([^_\s][^_]*)_(?!\w)/g, "$1$2")
    .replace(/\\([\\`*_{}[\]()#+\-.!|<>])/g, "$1");
  text = text.replace(/\u0000(\d+)\u0000/g, (_, i) => spans[Number(i)]);
  return text.replace(/\s+/g, " ").trim();
}

/** The page's prose as blocks (paragraphs, list items, table cells, headings), each with its section's anchor. */
export function blocks(mdx) {
  const out = [];
  let current = null;
  let fence = false;
  let section = "";
  const close = () => {
    if (current) out.push(current);
    current = null;
  };
  for (const line of mdx.replace(/^---\n[^]*?\n---\n/, "").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      close();
      fence = !fence;
      continue;
    }
    if (fence) continue;
    if (line.trim() === "" || /^\s*<\/?[A-Za-z][^>]*>\s*$/.test(line)) {
      close();
      continue;
    }
    if (/^#{1,6}\s/.test(line)) {
      close();
      section = slug(plain(line.replace(/^#+\s*/, "")));
      out.push({ kind: "heading", text: line.replace(/^#+\s*/, ""), section });
      continue;
    }
    if (/^\s*\|/.test(line)) {
      close();
      if (/^\s*\|[\s:|-]+\|\s*$/.test(line)) continue;
      for (const cell of line.trim().replace(/^\||\|$/g, "").split("|")) out.push({ kind: "cell", text: cell.trim(), section });
      continue;
    }
    const item = /^(\s*)(?:[-*+]|\d+\.)\s+(.*)$/.exec(line);
    if (item) {
      close();
      current = { kind: "item", text: item[2], section };
      continue;
    }
    if (current) current.text += " " + line.trim();
    else current = { kind: "paragraph", text: line.trim(), section };
  }
  close();
  return out;
}

/** A block's sentences, split on the raw Markdown (a sentence may open with code, a link or bold). */
export function sentences(text) {
  return text.split(/(?<=[.!?])\s+(?=[A-Z`*[_"(])/).map((s) => s.trim()).filter(Boolean);
}

/** The requirement rows a reader derives from `mdx`: { text, level, section }. */
export function requirements(mdx) {
  const rows = [];
  const all = blocks(mdx);
  const row = (text, section) => rows.push({ text, level: MUST_LEVEL.test(text) ? "MUST" : "SHOULD", section });
  for (let i = 0; i < all.length; i++) {
    const parts = sentences(all[i].text);
    for (let j = 0; j < parts.length; j++) {
      const sentence = plain(parts[j]);
      if (!KEYWORD.test(sentence)) continue;
      if (j === parts.length - 1 && sentence.endsWith(":") && all[i + 1]?.kind === "item") {
        for (let k = i + 1; k < all.length && all[k].kind === "item"; k++) row(`${sentence} ${plain(all[k].text)}`, all[i].section);
        continue;
      }
      row(sentence, all[i].section);
    }
  }
  return rows;
}

/** `items` as counts, to compare two lists whatever their order. */
function counts(items) {
  const map = new Map();
  for (const item of items) map.set(item, (map.get(item) ?? 0) + 1);
  return map;
}

// ---- the rules themselves ---------------------------------------------------

test("the extraction rules, on a page of the suite's own examples", () => {
  const fixture = [
    "---",
    "title: Fixture",
    "---",
    "",
    "Servers **MUST NOT** return an empty `contents` array for a non-existent resource. Clients",
    "**MAY** retry. A [server](/x) **MUST** answer; `ttlMs` is a hint.",
    "",
    "Servers **SHOULD** return standard JSON-RPC errors for common failure cases:",
    "",
    "- Resource not found: `-32602` (Invalid Params)",
    "- Internal errors: `-32603` (Internal error)",
    "",
    "If `model` is present, its `name` is **REQUIRED**. It is **RECOMMENDED** to send it.",
    "",
    "## Later Section",
    "",
    "| Value | Meaning |",
    "| ----- | ------- |",
    "| `\"private\"` | Shared caches **MUST NOT** serve it to a different user. |",
    "",
    "```json",
    '{ "note": "Clients MUST ignore this." }',
    "```",
    "",
    "<Warning>",
    "",
    "- `turnId` is opaque. It **SHOULD NOT** be parsed, and is **OPTIONAL**.",
    "",
    "</Warning>",
  ].join("\n");
  assert.deepStrictEqual(requirements(fixture), [
    { text: "Servers MUST NOT return an empty contents array for a non-existent resource.", level: "MUST", section: "" },
    { text: "A server MUST answer; ttlMs is a hint.", level: "MUST", section: "" },
    { text: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found: -32602 (Invalid Params)", level: "SHOULD", section: "" },
    { text: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Internal errors: -32603 (Internal error)", level: "SHOULD", section: "" },
    { text: "If model is present, its name is REQUIRED.", level: "MUST", section: "" },
    { text: "It is RECOMMENDED to send it.", level: "SHOULD", section: "" },
    { text: "Shared caches MUST NOT serve it to a different user.", level: "MUST", section: "later-section" },
    { text: "It SHOULD NOT be parsed, and is OPTIONAL.", level: "SHOULD", section: "later-section" },
  ]);
});

// ---- the yaml against the page ----------------------------------------------

const rows = requirements(page);
const SPEC_URL = `https://modelcontextprotocol.io/specification/draft/${SPEC_PATH.replace(/^docs\/specification\/draft\//, "").replace(/\.mdx$/, "")}`;

test("the yaml is SEP-2817's, for this page, in the suite's shape", () => {
  assert.equal(sep.sep, 2817);
  // new-sep's specPathToUrl, and the skill's "#anchor" when every row is in one section.
  assert.ok(sep.spec_url === SPEC_URL || sep.spec_url.startsWith(`${SPEC_URL}#`), `spec_url ${sep.spec_url} is not ${SPEC_URL}`);
  assert.ok(Array.isArray(sep.requirements) && sep.requirements.length > 0, "no requirements");
  const ids = [];
  let excludedSeen = false;
  for (const [i, row] of sep.requirements.entries()) {
    const where = `requirements[${i}]`;
    assert.equal(typeof row.text, "string", `${where}: no text`);
    assert.ok(!/TODO/.test(row.text), `${where}: still a TODO row`);
    assert.ok(("check" in row) !== ("excluded" in row), `${where}: has both check and excluded, or neither`);
    if ("check" in row) {
      assert.match(row.check, /^sep-2817-[a-z0-9]+(?:-[a-z0-9]+)*$/, `${where}: check id`);
      assert.ok(row.check.length <= "sep-2817-".length + 32, `${where}: a long slug (${row.check})`);
      assert.ok(!excludedSeen, `${where}: a check row after the excluded rows (checks first, then excluded)`);
      ids.push(row.check);
    } else {
      assert.ok(typeof row.excluded === "string" && row.excluded.trim() && !/TODO/.test(row.excluded), `${where}: excluded without a reason`);
      excludedSeen = true;
    }
    for (const key of Object.keys(row)) assert.ok(["check", "text", "excluded", "issue", "url"].includes(key), `${where}: unknown key ${key}`);
  }
  assert.equal(new Set(ids).size, ids.length, "a check id is used twice");
});

test("every MUST/SHOULD sentence of the page is exactly one requirement of the yaml, and nothing else is", () => {
  assert.ok(rows.length >= 10, `only ${rows.length} requirement sentences found on the page`);
  const quoted = sep.requirements.flatMap((row) => row.text.split(" / "));
  const want = counts(rows.map((r) => r.text));
  const have = counts(quoted);
  const missing = [...want].filter(([text, n]) => (have.get(text) ?? 0) < n).map(([text]) => text);
  const extra = [...have].filter(([text, n]) => (want.get(text) ?? 0) < n).map(([text]) => text);
  assert.deepStrictEqual({ missing, extra }, { missing: [], extra: [] }, "the yaml's texts and the page's requirement sentences differ");
});

test("a row's url, where it has one, is the page's section that states it", () => {
  const sections = new Set(blocks(page).filter((b) => b.kind === "heading").map((b) => b.section));
  for (const row of sep.requirements) {
    if (row.url === undefined) continue;
    const [base, anchor] = row.url.split("#");
    assert.equal(base, SPEC_URL, `${row.url}: not this page`);
    assert.ok(sections.has(anchor), `${row.url}: the page has no section #${anchor}`);
    const found = rows.filter((r) => row.text.split(" / ").includes(r.text)).map((r) => r.section);
    assert.ok(found.includes(anchor), `"${row.text}" is stated under #${found.join(", #")}, not #${anchor}`);
  }
});

// ---- the page is implementation-neutral ---------------------------------------

/** The names this repository's npm package and Python package export. */
function exportedNames() {
  const names = new Set();
  const pkg = join(ROOT, "pkg/src");
  for (const file of readdirSync(pkg).filter((f) => f.endsWith(".d.ts"))) {
    const text = readFileSync(join(pkg, file), "utf8");
    for (const m of text.matchAll(/^export (?:declare )?(?:async )?(?:function|const|let|class|interface|type|enum) ([A-Za-z_$][\w$]*)/gm)) names.add(m[1]);
    for (const m of text.matchAll(/^export \{([^}]*)\}/gm)) for (const part of m[1].split(",")) names.add(part.trim().split(/\s+as\s+/).pop());
  }
  const py = join(ROOT, "python/mcp_provenance");
  for (const entry of readdirSync(py, { recursive: true, encoding: "utf8" })) {
    if (!/\.pyi?$/.test(entry)) continue;
    const text = readFileSync(join(py, entry), "utf8");
    const all = /^__all__\s*=\s*[[(]([^\])]*)[\])]/m.exec(text);
    if (all) for (const m of all[1].matchAll(/["']([A-Za-z_]\w*)["']/g)) names.add(m[1]);
    if (entry.endsWith(".pyi")) for (const m of text.matchAll(/^(?:def|class) ([A-Za-z]\w*)/gm)) names.add(m[1]);
  }
  names.delete("");
  return names;
}

/** The page's code: fenced blocks and inline code spans. */
function code(mdx) {
  const fenced = [...mdx.matchAll(/^```[^\n]*\n([^]*?)^```/gm)].map((m) => m[1]);
  const prose = mdx.replace(/^```[^]*?^```/gm, "");
  return [...fenced, ...[...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1])];
}

const word = (name) => new RegExp(`(?<![\\w$])${name.replace(/[$]/g, "\\$")}(?![\\w$])`);

test("the page names nothing this repository's packages export", () => {
  const names = exportedNames();
  // The parse above found the API (a guard against a format change making this test vacuous).
  for (const known of ["validate", "sanitize", "echoTurnId", "attachInvocation", "stampInitiator", "echo_turn_id", "audit_record"]) assert.ok(names.has(known), `no export ${known} found`);
  // A compound name (camelCase, snake_case, CONSTANT) is ours wherever it appears; a plain word
  // (validate, Filter, Report) only where the page writes it as code.
  const compound = (name) => /[a-z][A-Z]|_|\d/.test(name) || /^[A-Z][a-z]+[A-Z]/.test(name);
  const spans = code(page);
  const found = [];
  for (const name of names) {
    if (compound(name) && word(name).test(page)) found.push(name);
    else if (spans.some((span) => word(name).test(span))) found.push(`\`${name}\``);
  }
  assert.deepStrictEqual(found, [], "the page names this library's API");
  assert.doesNotMatch(page, /mcp[-_]provenance/i, "the page names this library's package");
});

test("the page links nowhere in this repository", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "pkg/package.json"), "utf8"));
  const own = [pkg.homepage, pkg.repository?.url ?? pkg.repository, pkg.bugs?.url]
    .filter(Boolean)
    .map((url) => url.replace(/^git\+/, "").replace(/\.git$/, "").replace(/#.*$/, "").replace(/\/issues$/, ""));
  assert.ok(own.length > 0, "pkg/package.json names no repository");
  for (const url of own) assert.ok(!page.includes(url.replace(/^https?:\/\//, "")), `the page links to ${url}`);
  const prose = page.replace(/^```[^]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  const targets = [...prose.matchAll(/\]\(([^)\s]+)\)/g), ...prose.matchAll(/^\[[^\]]+\]:\s+(\S+)/gm), ...prose.matchAll(/\bhref="([^"]+)"/g)].map((m) => m[1]);
  for (const target of targets) {
    // The site's own paths, anchors on the page, or absolute links (checked above); never a relative file.
    assert.match(target, /^(?:\/specification\/|\/extensions\/|\/docs\/|#|https:\/\/)/, `${target}: a link that is neither a site path nor absolute`);
  }
});

test("the page cites none of this repository's rule IDs", () => {
  const rules = readFileSync(join(ROOT, "docs/rules.md"), "utf8");
  const ids = [...rules.matchAll(/<a id="([a-z]+-\d+)"/g)].map((m) => m[1].toUpperCase());
  assert.ok(ids.length >= 30, `only ${ids.length} rule IDs found in docs/rules.md`);
  const cited = ids.filter((id) => new RegExp(`\\b${id}\\b`).test(page));
  assert.deepStrictEqual(cited, [], "the page cites rule IDs");
});

test("the page's examples are JSON-RPC messages in JSON code blocks", () => {
  const fences = [...page.matchAll(/^```([^\n]*)\n([^]*?)^```/gm)];
  assert.ok(fences.length >= 3, `only ${fences.length} examples`);
  for (const [, language, body] of fences) {
    assert.equal(language.trim(), "json", `a \`\`\`${language} block: examples are JSON`);
    let message;
    assert.doesNotThrow(() => (message = JSON.parse(body)), `an example is not valid JSON:\n${body}`);
    assert.equal(message?.jsonrpc, "2.0", `an example is not a JSON-RPC message:\n${body}`);
    const request = typeof message.method === "string" && "id" in message;
    const response = "id" in message && ("result" in message) !== ("error" in message);
    assert.ok(request || response, `an example is neither a request nor a response:\n${body}`);
  }
  // Nothing between fences was left unclosed (an odd count would hide prose in "code").
  assert.equal((page.match(/^```/gm) ?? []).length % 2, 0, "an unclosed code fence");
});

test("the page writes RFC 2119 keywords in bold, as the specification's pages do", () => {
  const prose = page.replace(/^---\n[^]*?\n---\n/, "").replace(/^```[^]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  const bare = prose.replace(/\*\*(?:MUST NOT|SHOULD NOT|SHALL NOT|NOT RECOMMENDED|MUST|SHOULD|SHALL|REQUIRED|RECOMMENDED|MAY|OPTIONAL)\*\*/g, "");
  const left = bare.split("\n").filter((line) => ALL_KEYWORDS.test(line));
  assert.deepStrictEqual(left, [], "a keyword not in bold");
});
