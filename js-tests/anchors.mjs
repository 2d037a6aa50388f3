// The anchors GitHub gives a Markdown file, for the tests that hold links to
// them (docs.test.mjs, report.test.mjs).
import { readFileSync } from "node:fs";

/** GitHub's anchor for a heading's text. */
export const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");

/** The anchors of the Markdown file at `file`: its headings' outside code blocks, and its `<a id>`s and `<a name>`s. */
export function anchors(file) {
  const text = readFileSync(file, "utf8").replace(/^```[^]*?^```/gm, "");
  const headings = [...text.matchAll(/^#{1,6}\s+(.*)$/gm)].map((m) => slug(m[1]));
  return new Set([...headings, ...[...text.matchAll(/<a (?:id|name)="([^"]+)"/g)].map((m) => m[1])]);
}
