// The MCP panel: every JSON-RPC message the inspected page exchanges with
// MCP servers over HTTP, checked by the package (the same .wasm as npm's),
// filtered, searched, exported as a capture `mcp-provenance check` reads,
// and a paste box for one message. Every string from the wire is shown
// with textContent: as text, never as markup (AI-16).

import * as api from "./mcp-provenance/index.mjs";
import { capture, check, claimWarning, messagesIn, messagesOf, turnOf } from "./traffic.mjs";

const $ = (selector) => document.querySelector(selector);
const json = (value) => JSON.stringify(value, null, 2);

/** Every message seen, in order, with what the package says of it: the last MAX_KEPT. */
const seen = [];
/** How many messages the panel keeps; older ones are dropped, and counted. */
const MAX_KEPT = 5000;
let dropped = 0;
let selected;

/** A new element holding `text` as text. */
function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** `error`, `warning` or `clean`: the worst of a report's diagnostics. */
function verdictOf(report) {
  if (report.diagnostics.some((d) => d.severity === "error")) return "error";
  return report.diagnostics.length > 0 ? "warning" : "clean";
}

/** A message's one-line name: its method and tool, or what it answers. */
function nameOf({ message }) {
  if (typeof message !== "object" || message === null) return JSON.stringify(message);
  if (typeof message.method === "string") return message.params?.name === undefined ? message.method : `${message.method} ${message.params.name}`;
  return `${"error" in message ? "error" : "result"} for ${JSON.stringify(message.id)}`;
}

/** The turn of each request by session and id, for its answer to be listed in it. */
const turns = new Map();
const exchangeKey = (item) => `${item.session ?? ""} ${JSON.stringify(item.message?.id)}`;

/** Adds a message to the list: checks it, and shows it when the filters let it through. */
function add(item) {
  const checked = check(api, item.message);
  // A request's turn is its own (COR-1); an answer's, its request's.
  const turn = checked.record ? turnOf(checked.record) : turns.get(exchangeKey(item));
  if (checked.record && item.message?.id !== undefined) turns.set(exchangeKey(item), turn);
  const row = { ...item, ...checked, index: seen.length + dropped + 1, turn, verdict: verdictOf(checked.report), claim: claimWarning(checked.record) };
  row.name = nameOf(row);
  seen.push(row);
  if (seen.length > MAX_KEPT) {
    seen.shift();
    dropped++;
  }
  if (turns.size > MAX_KEPT) turns.delete(turns.keys().next().value);
  offer($("#method"), row.message?.method);
  offer($("#turn"), row.turn);
  render();
}

/** Adds `value` to a filter's choices, once. */
function offer(select, value) {
  if (typeof value !== "string" || [...select.options].some((option) => option.value === value)) return;
  select.append(Object.assign(element("option", value), { value }));
}

/** The messages the filters and the search let through. */
function shown() {
  const method = $("#method").value;
  const verdict = $("#severity").value;
  const turn = $("#turn").value;
  const search = $("#search").value;
  return seen.filter((row) => (!method || row.message?.method === method) && (!verdict || row.verdict === verdict)
    && (!turn || row.turn === turn) && (!search || row.unit.text.includes(search)));
}

/**
 * The list, grouped: a heading row wherever the session or the turn
 * changes from the row before, then the messages.
 */
function render() {
  const list = shown();
  let group;
  const rows = list.flatMap((row) => {
    const heading = `session ${row.session ?? "(none)"} · turn ${row.turn ?? "(none)"}`;
    if (heading === group) return [messageRow(row)];
    group = heading;
    const tr = element("tr", undefined, "group");
    tr.append(Object.assign(element("td", heading), { colSpan: 7 }));
    return [tr, messageRow(row)];
  });
  $("#messages tbody").replaceChildren(...rows);
  $("#count").textContent = `${list.length} of ${seen.length} messages${dropped > 0 ? ` (${dropped} older ones dropped)` : ""}`;
}

/** One message's row: it is shown in full when clicked. */
function messageRow(row) {
  const tr = element("tr", undefined, row === selected ? "selected" : undefined);
  tr.dataset.index = String(row.index);
  const count = row.report.diagnostics.length;
  const verdict = row.verdict === "clean" ? "clean" : `${count} ${row.verdict}${count === 1 ? "" : "s"}`;
  const cells = [String(row.index), row.session?.slice(0, 8) ?? "—", row.turn ?? "—", row.direction, row.name,
    row.record?.hostAttested?.initiator ?? "—", verdict];
  tr.append(...cells.map((text, at) => element("td", text, at === 6 ? row.verdict : at === 5 && row.claim ? "warning" : undefined)));
  tr.addEventListener("click", () => select(row));
  return tr;
}

/** Shows one message: its diagnostics, what sanitize would change, its record, itself. */
function select(row) {
  selected = row;
  render();
  $("#detail").hidden = false;
  $("#detail-title").textContent = `#${row.index} ${row.direction}: ${row.name}`;
  $("#claim").hidden = row.claim === undefined;
  $("#claim").textContent = row.claim ?? "";
  $("#diagnostics tbody").replaceChildren(...row.report.diagnostics.map((d) => {
    const tr = element("tr");
    tr.append(element("td", d.severity, d.severity), ...[d.rule, d.code, d.path, d.message].map((text) => element("td", text)));
    return tr;
  }));
  const changes = row.sanitized?.changes ?? [];
  $("#changes").replaceChildren(...(row.sanitized?.error ? [element("li", row.sanitized.error, "error")]
    : changes.length > 0 ? changes.map((c) => element("li", `${c.action} ${c.path} (${c.rule})`)) : [element("li", "nothing")]));
  $("#record").textContent = row.record === undefined ? "(a response: no record)" : json(row.record);
  $("#raw").textContent = row.unit.text;
}

for (const id of ["#method", "#severity", "#turn", "#search"]) $(id).addEventListener("input", render);

$("#clear").addEventListener("click", () => {
  seen.length = 0;
  turns.clear();
  dropped = 0;
  selected = undefined;
  $("#detail").hidden = true;
  render();
});

// The shown messages as a capture, one JSON-RPC message a line: `mcp-provenance check` reads it.
$("#export").addEventListener("click", () => {
  // A batch is one line, written once, when any of its messages is shown.
  const lines = capture([...new Set(shown().map((row) => row.unit))]);
  const link = element("a");
  link.href = URL.createObjectURL(new Blob(lines, { type: "application/jsonl" }));
  link.download = "mcp-capture.jsonl";
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
});

$("#check").addEventListener("click", () => {
  const text = $("#paste").value;
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    $("#paste-error").textContent = `not JSON: ${error.message}`;
    return;
  }
  $("#paste-error").textContent = "";
  // A pasted value is checked whatever it is: validate says what is not a message.
  const items = messagesIn(text, value);
  for (const item of items.length > 0 ? items : [{ message: value, unit: { text } }]) add({ ...item, direction: "pasted" });
});

// The inspected page's traffic, as DevTools' Network panel sees it.
chrome.devtools.network.onRequestFinished.addListener((entry) => {
  entry.getContent((body) => {
    for (const item of messagesOf(entry, body ?? "")) add(item);
  });
});
render();
document.body.dataset.ready = "true";
