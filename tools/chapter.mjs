// The reference chapter as a page of the MCP specification's docs (Mintlify
// MDX), made from its one source, docs/reference.md:
//
//   node tools/chapter.mjs           writes upstream/spec/docs/specification/draft/basic/provenance.mdx
//   node tools/chapter.mjs --check   exits 1 when that file is not what the source makes
//
// What it does to the Markdown: the H1 becomes the frontmatter's `title` and
// the paragraph under it its `description`; GitHub alerts (`> [!NOTE]`,
// `> [!WARNING]`, ...) become <Note>, <Warning>, <Info>, <Tip>; a section
// whose heading follows a line `<!-- upstream: omit -->` is left out (this
// library's own API and commands); links into this repository become absolute
// GitHub links, and links to modelcontextprotocol.io become the site's own
// paths; link reference definitions go at the end, those still used. The
// result is checked to be MDX-safe: outside code, no `{`, `}`, HTML comment or
// `<` other than the few tags the page uses, so that a stray one fails here
// rather than in Mintlify's build. No dependencies.

import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The chapter's source, from the root. */
export const SOURCE = "docs/reference.md";
/** The page, from the root: upstream/spec/ mirrors the specification repository's tree. */
export const TARGET = "upstream/spec/docs/specification/draft/basic/provenance.mdx";

/** The repository's GitHub address, from the npm package's `repository`. */
export function repositoryUrl(root = ROOT) {
  const pkg = JSON.parse(readFileSync(join(root, "pkg/package.json"), "utf8"));
  const url = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  if (!url) throw new Error("pkg/package.json names no repository");
  return url.replace(/^git\+/, "").replace(/\.git$/, "");
}

const ALERTS = { NOTE: "Note", WARNING: "Warning", CAUTION: "Warning", IMPORTANT: "Info", TIP: "Tip" };
const OMIT = "<!-- upstream: omit -->";
const DEFINITION = /^\[([^\]]+)\]:\s+(\S+)\s*$/;
const HEADING = /^(#{1,6})\s/;
/** The tags the page may hold outside code. */
const TAGS = /<\/?(?:sup|sub|Note|Warning|Info|Tip)>|<div id="enable-section-numbers" \/>/g;
const SITE = "https://modelcontextprotocol.io/";

/** `line` with each stretch outside inline code passed through `change`. */
function outsideCode(line, change) {
  return line.split(/(`+[^`]*`+)/).map((part, index) => (index % 2 ? part : change(part))).join("");
}

/** The lines of `markdown`, each with whether it is inside (or fences) a code block. */
function scan(lines) {
  let fence = null;
  return lines.map((line) => {
    const mark = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence) {
      if (mark && mark[0] === fence[0] && mark.length >= fence.length && line.trim() === mark) fence = null;
      return { line, code: true };
    }
    if (mark) {
      fence = mark;
      return { line, code: true };
    }
    return { line, code: false };
  });
}

/** `target` (a link in `source`) as the page links it. */
function linkTarget(target, { root, source, repository }) {
  if (target.startsWith(SITE)) return "/" + target.slice(SITE.length);
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#") || target.startsWith("/")) return target;
  const [path, hash = ""] = target.split(/(?=#)/);
  const file = posix.normalize(posix.join(posix.dirname(source), path));
  if (file.startsWith("..")) throw new Error(`${source}: the link ${target} leaves the repository`);
  const full = join(root, file);
  if (!existsSync(full)) throw new Error(`${source}: the link ${target} names no file (${file})`);
  const kind = statSync(full).isDirectory() ? "tree" : "blob";
  return `${repository}/${kind}/main/${file.replace(/\/$/, "")}${hash}`;
}

/** A YAML scalar for `text`, quoted only when it must be. */
function yaml(text) {
  return /^[\w(][^:#]*$/.test(text) && !/[`'"]/.test(text) ? text : JSON.stringify(text);
}

/**
 * The MDX page made from `markdown` (the text of `source`, a path from `root`).
 * Throws when the Markdown holds what the page cannot: no title, a link to no
 * file, a stray `{` or `<`, an HTML comment other than the omit marker.
 */
export function render(markdown, { root = ROOT, source = SOURCE, repository = repositoryUrl(root) } = {}) {
  const context = { root, source, repository };
  let lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let scanned = scan(lines);

  // Title and description.
  const h1 = scanned.findIndex(({ line, code }) => !code && /^# /.test(line));
  if (h1 < 0) throw new Error(`${source}: no H1 to take the title from`);
  const title = lines[h1].slice(2).trim();
  let start = h1 + 1;
  while (start < lines.length && lines[start].trim() === "") start++;
  let end = start;
  while (end < lines.length && lines[end].trim() !== "") end++;
  const description = lines.slice(start, end).join(" ").trim();
  if (!description || /^[>#|`<-]/.test(description)) throw new Error(`${source}: the H1 must be followed by a one-paragraph description`);
  lines = [...lines.slice(0, h1), ...lines.slice(end)];

  // Link reference definitions, kept aside; sections left out.
  const definitions = new Map();
  const kept = [];
  scanned = scan(lines);
  for (let i = 0; i < scanned.length; i++) {
    const { line, code } = scanned[i];
    if (code) {
      kept.push(line);
      continue;
    }
    const definition = DEFINITION.exec(line);
    if (definition) {
      definitions.set(definition[1], definition[2]);
      continue;
    }
    if (line.trim() === OMIT) {
      const level = HEADING.exec(scanned[i + 1]?.line ?? "")?.[1].length;
      if (!level || scanned[i + 1].code) throw new Error(`${source}:${i + 1}: ${OMIT} must stand right above a heading`);
      let j = i + 2;
      for (; j < scanned.length; j++) {
        const next = scanned[j];
        if (next.code) continue;
        const heading = HEADING.exec(next.line);
        if ((heading && heading[1].length <= level) || next.line.trim() === OMIT) break;
        const definition = DEFINITION.exec(next.line);
        if (definition) definitions.set(definition[1], definition[2]);
      }
      i = j - 1;
      continue;
    }
    kept.push(line);
  }

  // Alerts, links, and the MDX-safety check.
  const out = [];
  scanned = scan(kept);
  for (let i = 0; i < scanned.length; i++) {
    const { line, code } = scanned[i];
    if (code) {
      out.push(line);
      continue;
    }
    const alert = /^>\s*\[!(\w+)\]\s*$/.exec(line);
    if (alert) {
      const tag = ALERTS[alert[1]];
      if (!tag) throw new Error(`${source}: unknown alert [!${alert[1]}]`);
      const body = [];
      while (i + 1 < scanned.length && /^>/.test(scanned[i + 1].line)) body.push(scanned[++i].line.replace(/^> ?/, ""));
      out.push(`<${tag}>`, "", ...body.map((text) => links(text, context)), "", `</${tag}>`);
      continue;
    }
    out.push(links(line, context));
  }

  alignTables(out);
  const used = [...definitions.keys()].filter((label) => out.some((line) => line.split(/`+[^`]*`+/).join(" ").includes(`[${label}]`)));
  const page = [
    "---",
    `title: ${yaml(title)}`,
    `description: ${yaml(description)}`,
    "---",
    "",
    '<div id="enable-section-numbers" />',
    ...out,
  ];
  if (used.length) page.push("", ...used.map((label) => `[${label}]: ${linkTarget(definitions.get(label), context)}`));
  const text = page.join("\n").replace(/\n{3,}/g, "\n\n").replace(/\n*$/, "\n");
  check(text, source);
  return text;
}

/** The cells of a table row: split at each `|` outside inline code, trimmed. */
function cells(row) {
  const found = [];
  let cell = "";
  let tick = 0;
  for (let i = 0; i < row.length; i++) {
    const c = row[i];
    if (c === "`") {
      let run = 1;
      while (row[i + run] === "`") run++;
      tick = tick === 0 ? run : tick === run ? 0 : tick;
      cell += row.slice(i, i + run);
      i += run - 1;
    } else if (c === "\\" && row[i + 1] === "|") {
      cell += "\\|";
      i++;
    } else if (c === "|" && tick === 0) {
      found.push(cell.trim());
      cell = "";
    } else cell += c;
  }
  found.push(cell.trim());
  return found.slice(1, -1);
}

/** Aligns, in place, each table of `lines` (none in code) as Prettier does: every column padded to its widest cell. */
function alignTables(lines) {
  const width = (text) => [...text].length;
  for (let i = 0; i < lines.length; i++) {
    if (!/^\|.*\|\s*$/.test(lines[i]) || !/^\|(\s*:?-+:?\s*\|)+\s*$/.test(lines[i + 1] ?? "")) continue;
    let end = i;
    while (end < lines.length && /^\|.*\|\s*$/.test(lines[end])) end++;
    const rows = lines.slice(i, end).map(cells);
    const columns = rows[0].length;
    const widths = Array.from({ length: columns }, (_, c) => Math.max(3, ...rows.filter((_, r) => r !== 1).map((row) => width(row[c] ?? ""))));
    rows.forEach((row, r) => {
      const padded = widths.map((w, c) => {
        const cell = row[c] ?? "";
        if (r !== 1) return cell + " ".repeat(w - width(cell));
        const left = cell.startsWith(":");
        const right = cell.endsWith(":");
        return (left ? ":" : "-") + "-".repeat(w - 2) + (right ? ":" : "-");
      });
      lines[i + r] = `| ${padded.join(" | ")} |`;
    });
    i = end - 1;
  }
}

/** `line` with its inline links' targets rewritten. */
function links(line, context) {
  return outsideCode(line, (text) => text.replace(/\]\(([^)\s]+)\)/g, (_, target) => `](${linkTarget(target, context)})`));
}

/** Throws when `page` holds, outside code and frontmatter, what MDX would read as code or a tag. */
function check(page, source) {
  const lines = page.split("\n");
  const body = lines.indexOf("---", 1) + 1;
  scan(lines).forEach(({ line, code }, index) => {
    if (code || index < body) return;
    const text = line.split(/`+[^`]*`+/).join(" ").replace(TAGS, "");
    const bad = /[{}<]/.exec(text);
    if (bad) throw new Error(`${source}: "${bad[0]}" outside code would break the MDX page: ${line.trim()}`);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const page = render(readFileSync(join(ROOT, SOURCE), "utf8"));
  const target = join(ROOT, TARGET);
  const name = relative(process.cwd(), target) || TARGET;
  if (process.argv.includes("--check")) {
    const current = existsSync(target) ? readFileSync(target, "utf8") : "";
    if (current !== page) {
      console.error(`${name} is not what ${SOURCE} makes: run node tools/chapter.mjs (make chapter)`);
      process.exit(1);
    }
  } else if (!existsSync(target) || readFileSync(target, "utf8") !== page) {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, page);
    console.log(`wrote ${name}`);
  }
}
