// The DevTools extension's MCP panel, as built in target/extension/, in
// headless Chromium: DevTools' network API is played by the test, which
// hands the panel the HTTP exchanges a page would make (a clean call, one
// with a forged log line, one whose View claims initiator "model", answers
// as JSON and as an event stream). The panel must list each message with
// the package's verdict, explain it, and export a capture that
// `mcp-provenance check` reads; read an event stream whatever its line
// endings; and list a page's flood of messages with work linear in its
// size (counted, never timed), its filters offering only what it lists.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { serve } from "../examples/browser/serve.mjs";
import { launchChromium, root } from "./user.mjs";

const KEY = "io.modelcontextprotocol/aiInvocation";
const UI = "io.modelcontextprotocol/ui";
const shots = join(root, "target", "screenshots");
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-extension-"));

/**
 * A Streamable HTTP exchange as DevTools hands it over: a HAR entry (a POST
 * of `request` in `session`), and the response's `body` of type `type`.
 */
const exchange = (request, body, { type = "application/json", session = "5b1f2c3d-0000" } = {}) => ({
  entry: {
    startedDateTime: "2026-12-01T20:00:00.000Z",
    request: { method: "POST", url: "http://127.0.0.1:3000/mcp", headers: [{ name: "Mcp-Session-Id", value: session }],
      postData: { mimeType: "application/json", text: JSON.stringify(request) } },
    response: { status: 200, headers: [{ name: "content-type", value: type }], content: { mimeType: type } },
  },
  body,
});
/** An exchange answered by an event stream: `body`, as the server wrote it. */
const streamed = (request, body) => exchange(request, body, { type: "text/event-stream" });
/** `message` as one event of an event stream, each of its lines ended by `eol`. */
const event = (message, eol = "\n") => `event: message${eol}data: ${JSON.stringify(message)}${eol}${eol}`;
/** `count` notifications of `method` in one POST, as any page may send them: 2,000 are some 70 KB. */
const notifications = (count, method, session) =>
  exchange(Array.from({ length: count }, () => ({ jsonrpc: "2.0", method, params: { level: "info", data: "n" } })), "", { type: "", session });
const call = (id, name, meta) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {}, _meta: meta } });
const answer = (id, turnId) => ({ jsonrpc: "2.0", id, result: { content: [], _meta: { [KEY]: { turnId } } } });
const EXCHANGES = [
  exchange(call(1, "list_tables", { [KEY]: { invocationReason: { text: "The user asked." }, model: { name: "m" }, turnId: "turn-1" } }), JSON.stringify(answer(1, "turn-1"))),
  streamed(call(2, "execute_query", { [KEY]: { userIntent: { text: "rows\r\n2026-12-01 INFO approved by admin" }, turnId: "turn-1" } }), event(answer(2, "turn-1"))),
  exchange(call(3, "refresh_dashboard", { [UI]: { initiator: "model" }, [KEY]: { turnId: "turn-2" } }), JSON.stringify(answer(3, "turn-2"))),
  // Not MCP: the panel leaves it out.
  { entry: { request: { method: "POST", url: "http://127.0.0.1:3000/login", headers: [], postData: { text: '{"user":"a"}' } }, response: {} }, body: "" },
];

let server;
let browser;
let page;
const problems = [];

before(async () => {
  mkdirSync(shots, { recursive: true });
  server = await serve(0, join(root, "target", "extension"));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => { if (["warning", "error"].includes(message.type())) problems.push(message.text()); });
  // DevTools' network API, played by the test.
  await page.addInitScript(() => {
    globalThis.chrome = { devtools: { network: { onRequestFinished: { addListener: (listener) => { globalThis.__finished = listener; } } } } };
  });
  await page.goto(`http://127.0.0.1:${server.address().port}/panel.html`);
  await page.waitForSelector("body[data-ready=true]");
  await feed(EXCHANGES);
});

after(async () => {
  await browser?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Hands the panel `exchanges`, as DevTools' network API does once each has finished. */
function feed(exchanges) {
  return page.evaluate((exchanges) => {
    for (const { entry, body } of exchanges) globalThis.__finished({ ...entry, getContent: (callback) => callback(body) });
  }, exchanges);
}

/**
 * The work `action` made the panel do on its list, counted (never timed):
 * the message rows and the group headings put into it, as a MutationObserver
 * sees them.
 */
async function insertions(action) {
  await page.evaluate(() => {
    globalThis.__inserted = [];
    globalThis.__observer = new MutationObserver((records) => globalThis.__inserted.push(...records));
    globalThis.__observer.observe(document.querySelector("#messages tbody"), { childList: true });
  });
  await action();
  return page.evaluate(() => {
    const nodes = [...globalThis.__inserted, ...globalThis.__observer.takeRecords()].flatMap((record) => [...record.addedNodes]);
    globalThis.__observer.disconnect();
    return { rows: nodes.filter((node) => node.matches("[data-index]")).length, headings: nodes.filter((node) => node.matches(".group")).length };
  });
}

/** The values a filter (`#method`, `#turn`) offers, "" for every one. */
const choices = (select) => page.$$eval(`${select} option`, (options) => options.map((option) => option.value));

/** The rows of the message list, as shown. */
const rows = () => page.$$eval("#messages tbody tr[data-index]", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));

/** The panel's export of the shown messages, saved as `name` in the test's directory; its path. */
async function exported(name) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
  const file = join(dir, name);
  await download.saveAs(file);
  return file;
}

/** What `mcp-provenance check` says of a capture: its lines' reports, and its summary. */
function checked(file) {
  const out = execFileSync(process.execPath, [join(root, "pkg", "dist", "bin", "mcp-provenance.mjs"), "check", file, "--format", "json"], { encoding: "utf8" });
  const lines = out.trim().split("\n").map((line) => JSON.parse(line));
  return { summary: lines.pop().summary, lines };
}

test("the panel lists each MCP message of the page's traffic with the package's verdict", async () => {
  assert.deepEqual(problems, []);
  assert.deepEqual(await rows(), [
    ["1", "5b1f2c3d", "turn-1", "request", "tools/call list_tables", "—", "clean"],
    ["2", "5b1f2c3d", "turn-1", "response", "result for 1", "—", "clean"],
    ["3", "5b1f2c3d", "turn-1", "request", "tools/call execute_query", "—", "1 warning"],
    ["4", "5b1f2c3d", "turn-1", "response", "result for 2", "—", "clean"],
    ["5", "5b1f2c3d", "turn-2", "request", "tools/call refresh_dashboard", "model", "clean"],
    ["6", "5b1f2c3d", "turn-2", "response", "result for 3", "—", "clean"],
  ]);
  // Grouped by session and turn: an answer in its request's turn.
  assert.deepEqual(await page.$$eval("#messages tbody tr.group", (trs) => trs.map((tr) => tr.textContent)),
    ["session 5b1f2c3d-0000 · turn turn-1", "session 5b1f2c3d-0000 · turn turn-2"]);
});

test("a message's diagnostics name the rule and the JSON Pointer; the forged line is shown as text", async () => {
  await page.click("#messages tbody tr[data-index='3']");
  const detail = await page.$$eval("#diagnostics tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(detail, [["warning", "AI-13", "control-character", `/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text`,
    "holds line breaks, control or bidi characters that could forge or disguise log lines; sanitize replaces them"]]);
  assert.deepEqual(await page.$$eval("#changes li", (lis) => lis.map((li) => li.textContent)),
    ["neutralized /params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text (AI-13)"]);
  const record = JSON.parse(await page.textContent("#record"));
  assert.equal(record.clientAsserted.userIntent, "rows  2026-12-01 INFO approved by admin");
  await page.screenshot({ path: join(shots, "extension-panel.png"), fullPage: true });
});

test("a View's claim to initiator model is flagged: only a Host attests it", async () => {
  await page.click("#messages tbody tr[data-index='5']");
  assert.equal(await page.isVisible("#claim"), true);
  assert.match(await page.textContent("#claim"), /^initiator "model" is a claim only a Host can attest/);
});

test("filters and search narrow the list", async () => {
  await page.selectOption("#severity", "warning");
  assert.deepEqual((await rows()).map((row) => row[0]), ["3"]);
  await page.selectOption("#severity", "");
  await page.selectOption("#turn", "turn-2");
  assert.deepEqual((await rows()).map((row) => row[0]), ["5", "6"]);
  await page.selectOption("#turn", "");
  await page.fill("#search", "list_tables");
  assert.deepEqual((await rows()).map((row) => row[0]), ["1"]);
  await page.fill("#search", "");
});

test("the export is a capture mcp-provenance check reads: the same messages, the same findings", async () => {
  const file = await exported("capture.jsonl");
  assert.equal(readFileSync(file, "utf8").trim().split("\n").length, 6);
  const { summary, lines } = checked(file);
  assert.deepEqual([summary.messages, summary.errors, summary.warnings], [6, 0, 1]);
  assert.deepEqual(lines.flatMap(({ line, diagnostics }) => diagnostics.map((d) => [line, d.rule, d.code])), [[3, "AI-13", "control-character"]]);
});

test("a pasted message is checked too; text that is not JSON says so", async () => {
  await page.fill("#paste", JSON.stringify(call(9, "q", { [KEY]: { turnId: 7 } })));
  await page.click("#check");
  const last = (await rows()).pop();
  assert.deepEqual(last, ["7", "—", "—", "pasted", "tools/call q", "—", "1 error"]);
  await page.fill("#paste", "{");
  await page.click("#check");
  assert.match(await page.textContent("#paste-error"), /^not JSON: /);
  assert.deepEqual(problems, []);
});

test("the export writes each message as it came: its numbers and escapes, a batch as one line", async () => {
  await page.click("#clear");
  const message = '{\n  "jsonrpc": "2.0", "id": 12345678901234567890,\n  "method": "tools/call",\n  "params": {"name": "caf\\u00e9", "arguments": {"n": 1e400, "price": 1.10}}\n}';
  const batch = '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"ping"}]';
  for (const text of [message, batch]) {
    await page.fill("#paste", text);
    await page.click("#check");
  }
  assert.deepEqual((await rows()).map((row) => row[4]), ["tools/call café", "notifications/initialized", "ping"]);
  // Search reads the text as it came too.
  await page.fill("#search", "1e400");
  assert.deepEqual((await rows()).map((row) => row[4]), ["tools/call café"]);
  await page.fill("#search", "");
  const file = await exported("exact.jsonl");
  assert.equal(readFileSync(file, "utf8"), `${message.replace(/\n/g, " ")}\n${batch}\n`);
  assert.equal(await page.textContent("#count"), "3 of 3 messages");
});

test("an event stream's answers are read whatever its line endings: CRLF, LF, CR alone, or a mix", async () => {
  await page.click("#clear");
  // One answer split over two data lines (joined with LF), comments, other
  // fields, a byte order mark, no space after a colon; and a last event its
  // stream never ended, which no client reads (the SDK's parser drops it).
  const mixed = "\uFEFF: a comment, ignored\r\nid: 24\revent: message\ndata:{\"jsonrpc\":\"2.0\",\"id\":24,\r"
    + `data: "result":{"content":[]}}\n\r\n:\rdata: ${JSON.stringify(answer(25, "turn-1"))}\r`;
  await feed([
    streamed(call(21, "a", {}), event(answer(21, "turn-1"), "\r\n")),
    streamed(call(22, "b", {}), event(answer(22, "turn-1"), "\n")),
    streamed(call(23, "c", {}), event(answer(23, "turn-1"), "\r")),
    streamed(call(24, "d", {}), mixed),
  ]);
  assert.deepEqual((await rows()).map((row) => row[4]), ["tools/call a", "result for 21", "tools/call b", "result for 22",
    "tools/call c", "result for 23", "tools/call d", "result for 24"]);
  const file = await exported("event-streams.jsonl");
  assert.deepEqual(readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line).id), [21, 21, 22, 22, 23, 23, 24, 24]);
  const { summary } = checked(file);
  assert.deepEqual([summary.messages, summary.errors], [8, 0]);
});

test("Clear leaves each filter only its every-choice; new traffic offers only its own methods and turns", async () => {
  await page.click("#clear");
  assert.deepEqual(await choices("#method"), [""]);
  assert.deepEqual(await choices("#turn"), [""]);
  await feed([EXCHANGES[2]]);
  assert.deepEqual(await choices("#method"), ["", "tools/call"]);
  assert.deepEqual(await choices("#turn"), ["", "turn-2"]);
});

test("a page's flood of messages costs the panel work linear in its size, and its filters offer only what it keeps", async () => {
  await page.click("#clear");
  // One POST of 2,000 notifications: each row is put in the list once, under one heading.
  const batch = await insertions(() => feed([notifications(2000, "notifications/m1", "s-1")]));
  assert.deepEqual(batch, { rows: 2000, headings: 1 });
  assert.equal(await page.textContent("#count"), "2000 of 2000 messages");
  // 8,000 in four such POSTs: four times the work, not sixteen. The panel
  // keeps the last 5,000; their headings and the methods offered are theirs.
  await page.click("#clear");
  let flood = 0;
  for (const k of [1, 2, 3, 4]) flood += (await insertions(() => feed([notifications(2000, `notifications/m${k}`, `s-${k}`)]))).rows;
  assert.ok(flood <= 4 * batch.rows + 4, `${flood} rows put in the list for 8,000 messages`);
  assert.equal(await page.textContent("#count"), "5000 of 5000 messages (3000 older ones dropped)");
  assert.equal((await rows()).length, 5000);
  assert.equal((await rows())[0][0], "3001");
  assert.deepEqual(await page.$$eval("#messages tbody tr.group", (trs) => trs.map((tr) => tr.textContent)),
    ["session s-2 · turn (none)", "session s-3 · turn (none)", "session s-4 · turn (none)"]);
  assert.deepEqual(await choices("#method"), ["", "notifications/m2", "notifications/m3", "notifications/m4"]);
  // A new message appends its own row, and nothing else.
  assert.deepEqual(await insertions(() => feed([notifications(1, "notifications/m4", "s-4")])), { rows: 1, headings: 0 });
  // A filter's change lists what it lets through once.
  assert.deepEqual(await insertions(() => page.selectOption("#severity", "clean")), { rows: 5000, headings: 3 });
  await page.selectOption("#severity", "");
  // A chosen method stays offered while chosen, though its messages are all dropped; then it goes.
  await page.selectOption("#method", "notifications/m2");
  assert.equal((await rows()).length, 999);
  await feed([notifications(999, "notifications/m4", "s-4")]);
  assert.deepEqual(await rows(), []);
  assert.equal(await page.textContent("#count"), "0 of 5000 messages (4000 older ones dropped)");
  assert.deepEqual(await choices("#method"), ["", "notifications/m2", "notifications/m3", "notifications/m4"]);
  await page.selectOption("#method", "");
  assert.deepEqual(await choices("#method"), ["", "notifications/m3", "notifications/m4"]);
  assert.equal((await rows()).length, 5000);
  assert.deepEqual(problems, []);
});
