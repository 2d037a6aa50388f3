// The page: check a message with the package, as a person debugging would,
// and an MCP Apps host that stamps its View's calls. Every string that came
// from a message is shown with textContent: as text, never as markup (AI-16).

import * as mcpProvenance from "mcp-provenance";
import { startAppsHost } from "./apps.mjs";
import { differences, lines } from "./diff.mjs";
import { samples } from "./samples.mjs";

globalThis.mcpProvenance = mcpProvenance;
console.info("mcp-provenance is loaded as `mcpProvenance`: try mcpProvenance.validate({ method: \"tools/call\", params: {} })");

const $ = (selector) => document.querySelector(selector);

/** A new element holding `text` as text. */
function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

const json = (value) => JSON.stringify(value, null, 2);

function showReport(report) {
  const verdict = $("#verdict");
  verdict.textContent = report.valid ? `valid, ${report.diagnostics.length} warnings` : "not valid";
  verdict.className = report.valid ? "valid" : "invalid";
  const rows = report.diagnostics.map((d) => {
    const row = element("tr", undefined, d.severity);
    for (const cell of [d.severity, d.rule, d.code, d.path, d.message]) row.append(element("td", cell));
    return row;
  });
  if (!rows.length) {
    const cell = element("td", "no diagnostics");
    cell.colSpan = 5;
    rows.push(element("tr"));
    rows[0].append(cell);
  }
  $("#diagnostics tbody").replaceChildren(...rows);
}

/** A value as JSON for a table cell, cut to what a cell can show. */
const brief = (value) => {
  const text = value === undefined ? "" : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
};

/**
 * What one function made of the message: the members it added, removed or
 * changed (JSON Pointers, before and after), then the message it returned
 * with those members' lines marked. Without `before` (an audit record) or
 * for an error, the result is shown as it is.
 */
function result(name, before, after, notes = []) {
  const box = element("div", undefined, "result");
  box.dataset.function = name;
  box.append(element("h4", name));
  const found = before === undefined || typeof after === "string" ? undefined : differences(before, after);
  if (found) {
    const table = element("table", undefined, "changes");
    const head = element("tr");
    head.append(...["change", "path (JSON Pointer)", "before", "after"].map((title) => element("th", title)));
    const rows = found.map(({ path, kind, before: was, after: now }) => {
      const row = element("tr", undefined, kind);
      row.append(element("td", kind), element("td", path), element("td", brief(was)), element("td", brief(now)));
      return row;
    });
    if (!rows.length) rows.push(element("tr"));
    if (!found.length) rows[0].append(Object.assign(element("td", "unchanged"), { colSpan: 4 }));
    table.append(element("thead"), element("tbody"));
    table.tHead.append(head);
    table.tBodies[0].append(...rows);
    box.append(table);
  }
  const shown = element("pre");
  if (typeof after === "string") shown.textContent = after;
  else shown.append(...lines(after, new Map((found ?? []).map(({ path, kind }) => [path, kind]))));
  box.append(shown);
  if (notes.length) {
    const list = element("ul");
    list.append(...notes.map((note) => element("li", note)));
    box.append(list);
  }
  return box;
}

/** What each function makes of the message; a thrown error shows as its code. */
function attempt(call) {
  try {
    return { value: call() };
  } catch (error) {
    return { value: `${error.name} ${error.code}: ${error.message}`, error };
  }
}

function check() {
  let message;
  try {
    message = JSON.parse($("#message").value);
    $("#parse-error").textContent = "";
  } catch (error) {
    // No verdict on text that is no message: what was shown belonged to the text before.
    $("#parse-error").textContent = `not JSON: ${error.message}`;
    $("#verdict").textContent = "no message to check";
    $("#verdict").className = "";
    $("#diagnostics tbody").replaceChildren();
    $("#results").replaceChildren();
    return;
  }
  showReport(mcpProvenance.validate(message));
  const sanitized = attempt(() => mcpProvenance.sanitize(message));
  const stamped = attempt(() => mcpProvenance.stampInitiator(message));
  const record = attempt(() => mcpProvenance.auditRecord(message));
  $("#results").replaceChildren(
    result("sanitize", message, sanitized.error ? sanitized.value : sanitized.value.message,
      sanitized.error ? [] : sanitized.value.changes.map((c) => `sanitize: ${c.action} ${c.path} (${c.rule})`)),
    result("stampInitiator", message, stamped.value),
    result("auditRecord", undefined, record.value),
  );
}

const picker = $("#sample");
picker.append(...Object.keys(samples).map((name) => element("option", name)));
picker.addEventListener("change", () => {
  $("#message").value = json(samples[picker.value]);
  check();
});
$("#message").addEventListener("input", check);
$("#message").value = json(samples[picker.value]);
check();

/** The Apps host: one row per call the in-page server received. */
const serverLog = $("#server-log tbody");
await startAppsHost({
  iframe: $("#view"),
  onCall: ({ tool, sent, seen }) => {
    const row = element("tr");
    row.dataset.sent = sent ?? "";
    row.dataset.seen = seen ?? "";
    for (const cell of [String(serverLog.children.length + 1), tool, sent ?? "(none)", seen ?? "(none)"]) row.append(element("td", cell));
    serverLog.append(row);
  },
});
document.body.dataset.ready = "true";
