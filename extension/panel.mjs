// The MCP panel: every JSON-RPC message the inspected page exchanges with
// MCP servers over HTTP, checked by the package (the same .wasm as npm's),
// filtered, searched, exported as a capture `mcp-provenance check` reads,
// and a paste box for one message. Every string from the wire is shown
// with textContent: as text, never as markup (AI-16).

import * as api from "./mcp-provenance/index.mjs";
import { capture, check, claimWarning, messagesIn, messagesOf, turnOf } from "./traffic.mjs";

const $ = (selector) => document.querySelector(selector);
const json = (value) => JSON.stringify(value, null, 2);

/** Every message kept, in order, with what the package says of it: the last MAX_KEPT. */
const seen = [];
/** How many messages the panel keeps; older ones are dropped, and counted. */
const MAX_KEPT = 5000;
let dropped = 0;
let selected;
/** Each kept row's element, made when it is first listed. */
const elements = new WeakMap();
/** How many rows are listed, and the last one's group: a new row is appended under it, or under a heading of its own. */
let listed = 0;
let lastGroup;

/** A new element holding `text` as text. */
function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

/**
 * A filter's choices: an option for each value the kept messages have, with
 * how many have it, so that keeping or dropping a message costs O(1) and a
 * value goes with its last message (or, when it is the one chosen, once
 * another is). The first option, "every …", is always there.
 */
class Choices {
  /** value → { option, count } */
  #values = new Map();

  constructor(select) {
    this.select = select;
    select.addEventListener("input", () => this.#values.forEach((choice, value) => this.#prune(value, choice)));
  }

  /** One more kept message has `value`. */
  add(value) {
    if (typeof value !== "string") return;
    let choice = this.#values.get(value);
    if (choice === undefined) {
      choice = { option: Object.assign(element("option", value), { value }), count: 0 };
      this.#values.set(value, choice);
      this.select.append(choice.option);
    }
    choice.count++;
  }

  /** One kept message less has `value`. */
  remove(value) {
    const choice = this.#values.get(value);
    if (choice === undefined) return;
    choice.count--;
    this.#prune(value, choice);
  }

  /** No message is kept: only "every …" is left, and chosen. */
  clear() {
    for (const { option } of this.#values.values()) option.remove();
    this.#values.clear();
  }

  /** Takes `value` off the choices when no kept message has it and it is not the one chosen. */
  #prune(value, choice) {
    if (choice.count > 0 || choice.option.selected) return;
    choice.option.remove();
    this.#values.delete(value);
  }
}

const methodChoices = new Choices($("#method"));
const turnChoices = new Choices($("#turn"));

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

/**
 * Adds messages to the list: checks and keeps each, drops the oldest beyond
 * MAX_KEPT, and appends the rows of those kept that the filters let through.
 * The work is O(1) per message, however many are listed.
 */
function add(items) {
  if (items.length === 0) return;
  const rows = items.map(keep);
  while (seen.length > MAX_KEPT) drop();
  // Those of `rows` dropped already were never listed.
  $("#messages tbody").append(...listing(rows.slice(-MAX_KEPT).filter(filters())));
  showCount();
}

/** Checks a message and keeps it, its method and turn offered by the filters; its row. */
function keep(item) {
  const checked = check(api, item.message);
  // A request's turn is its own (COR-1); an answer's, its request's.
  const turn = checked.record ? turnOf(checked.record) : turns.get(exchangeKey(item));
  if (checked.record && item.message?.id !== undefined) turns.set(exchangeKey(item), turn);
  if (turns.size > MAX_KEPT) turns.delete(turns.keys().next().value);
  const row = { ...item, ...checked, index: seen.length + dropped + 1, turn, verdict: verdictOf(checked.report), claim: claimWarning(checked.record) };
  row.name = nameOf(row);
  seen.push(row);
  methodChoices.add(row.message?.method);
  turnChoices.add(row.turn);
  return row;
}

/** Drops the oldest message kept: from the filters' choices and, when it is listed, from the list. */
function drop() {
  const row = seen.shift();
  dropped++;
  methodChoices.remove(row.message?.method);
  turnChoices.remove(row.turn);
  const tr = elements.get(row);
  if (tr?.isConnected) unlist(tr);
}

/**
 * Takes the first row listed off the list, and its heading when no row is
 * left under it.
 */
function unlist(tr) {
  const heading = tr.previousElementSibling;
  const next = tr.nextElementSibling;
  tr.remove();
  listed--;
  if (next === null || next.classList.contains("group")) heading.remove();
  if (next === null) lastGroup = undefined;
}

/** The filters and the search as they are now: whether a row passes them. */
function filters() {
  const method = $("#method").value;
  const verdict = $("#severity").value;
  const turn = $("#turn").value;
  const search = $("#search").value;
  // A batch's messages share their text: it is searched once.
  const found = new Map();
  const matches = (unit) => {
    if (!found.has(unit)) found.set(unit, unit.text.includes(search));
    return found.get(unit);
  };
  return (row) => (!method || row.message?.method === method) && (!verdict || row.verdict === verdict)
    && (!turn || row.turn === turn) && (!search || matches(row.unit));
}

/** The messages the filters and the search let through. */
const shown = () => seen.filter(filters());

/**
 * The elements that list `rows` after those listed: each row's, after a
 * heading wherever the session or the turn changes from the row before.
 */
function listing(rows) {
  const nodes = [];
  for (const row of rows) {
    const group = `session ${row.session ?? "(none)"} · turn ${row.turn ?? "(none)"}`;
    if (group !== lastGroup) nodes.push(heading(group));
    lastGroup = group;
    nodes.push(rowElement(row));
  }
  listed += rows.length;
  return nodes;
}

/** A group's heading row. */
function heading(group) {
  const tr = element("tr", undefined, "group");
  tr.append(Object.assign(element("td", group), { colSpan: 7 }));
  return tr;
}

/** A row's element, made when first listed: it is shown in full when clicked. */
function rowElement(row) {
  let tr = elements.get(row);
  if (tr !== undefined) return tr;
  tr = element("tr");
  tr.dataset.index = String(row.index);
  const count = row.report.diagnostics.length;
  const verdict = row.verdict === "clean" ? "clean" : `${count} ${row.verdict}${count === 1 ? "" : "s"}`;
  const cells = [String(row.index), row.session?.slice(0, 8) ?? "—", row.turn ?? "—", row.direction, row.name,
    row.record?.hostAttested?.initiator ?? "—", verdict];
  tr.append(...cells.map((text, at) => element("td", text, at === 6 ? row.verdict : at === 5 && row.claim ? "warning" : undefined)));
  tr.addEventListener("click", () => select(row));
  elements.set(row, tr);
  return tr;
}

/** Lists anew the messages the filters let through: once for each change of a filter. */
function render() {
  listed = 0;
  lastGroup = undefined;
  $("#messages tbody").replaceChildren(...listing(shown()));
  showCount();
}

/** Says how many messages are listed, of how many kept. */
function showCount() {
  $("#count").textContent = `${listed} of ${seen.length} messages${dropped > 0 ? ` (${dropped} older ones dropped)` : ""}`;
}

/** Shows one message: its diagnostics, what sanitize would change, its record, itself. */
function select(row) {
  if (selected !== undefined) elements.get(selected)?.classList.remove("selected");
  selected = row;
  elements.get(row).classList.add("selected");
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
  methodChoices.clear();
  turnChoices.clear();
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
  add((items.length > 0 ? items : [{ message: value, unit: { text } }]).map((item) => ({ ...item, direction: "pasted" })));
});

// The inspected page's traffic, as DevTools' Network panel sees it.
chrome.devtools.network.onRequestFinished.addListener((entry) => {
  entry.getContent((body) => {
    add(messagesOf(entry, body ?? ""));
  });
});
render();
document.body.dataset.ready = "true";
