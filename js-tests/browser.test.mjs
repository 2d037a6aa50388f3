// The package and the example page in real headless Chromium (Debian's,
// driven by playwright-core): every vector gives the same output as in Node
// and Rust, the devtools API works, hostile text stays text, and an MCP Apps
// View's calls reach the server stamped initiator "app". Screenshots go to
// target/screenshots for a person to look at.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { serve } from "../examples/browser/serve.mjs";
import { launchChromium } from "./user.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const shots = join(root, "target", "screenshots");
// The core's vectors: the `metrics` ones are the middlewares' (js-tests/http-metrics.test.mjs).
const vectors = readdirSync(join(root, "conformance"))
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => JSON.parse(readFileSync(join(root, "conformance", name), "utf8")))
  .filter((vector) => vector.op !== "metrics");

let server;
let browser;
let page;
const dialogs = [];
const errors = [];
const consoleInfo = [];
/** Warnings and errors the page logs. */
const consoleProblems = [];

before(async () => {
  mkdirSync(shots, { recursive: true });
  server = await serve();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("dialog", (dialog) => { dialogs.push(dialog.message()); dialog.dismiss(); });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "info") consoleInfo.push(message.text());
    if (message.type() === "warning" || message.type() === "error") consoleProblems.push(message.text());
  });
  await page.goto(`http://127.0.0.1:${server.address().port}/examples/browser/`);
  await page.waitForSelector("body[data-ready=true]");
});

after(async () => {
  await browser?.close();
  server?.close();
});

test("the page loads without errors or warnings and prints one hint for the console", async () => {
  await page.screenshot({ path: join(shots, "page.png"), fullPage: true });
  assert.deepEqual(errors, []);
  assert.deepEqual(consoleProblems, []);
  assert.equal(consoleInfo.filter((text) => text.includes("mcpProvenance")).length, 1);
});

test("text that is not JSON clears the verdict, the diagnostics and the results", async () => {
  await page.fill("#message", JSON.stringify({ method: "tools/call", params: { _meta: { "io.modelcontextprotocol/aiInvocation": { turnId: 7 } } } }));
  await page.waitForFunction(() => document.querySelector("#verdict").textContent === "not valid");
  await page.fill("#message", '{"method": "tools/call",');
  const shown = await page.evaluate(() => ({
    verdict: document.querySelector("#verdict").textContent,
    parseError: document.querySelector("#parse-error").textContent,
    diagnostics: document.querySelectorAll("#diagnostics tbody tr").length,
    results: document.querySelector("#results").children.length,
  }));
  assert.equal(shown.verdict, "no message to check");
  assert.match(shown.parseError, /^not JSON: /);
  assert.equal(shown.diagnostics, 0);
  assert.equal(shown.results, 0);
});

test(`all ${vectors.length} conformance vectors give the same output in the browser build`, async () => {
  const outputs = await page.evaluate(async (all) => {
    const { runVector } = await import("/js-tests/vectors.mjs");
    const api = { ...globalThis.mcpProvenance, ...(await import("/pkg/dist/gateway.mjs")) };
    return all.map((vector) => runVector(api, vector));
  }, vectors);
  const failures = vectors.filter((vector, index) => {
    try {
      assert.deepStrictEqual(outputs[index], vector.expect);
      return false;
    } catch {
      return true;
    }
  });
  assert.deepEqual(failures.map((vector) => vector.id), []);
});

test("mcpProvenance works from the console, as a devtools user would call it", async () => {
  const seen = await page.evaluate(() => {
    const request = { method: "tools/call", params: { _meta: { "io.modelcontextprotocol/aiInvocation": { turnId: 7 } } } };
    let thrown;
    try {
      mcpProvenance.sanitize(request, { maxIntentBytes: 1 });
    } catch (error) {
      thrown = { name: error.name, code: error.code, isError: error instanceof RangeError };
    }
    return {
      report: mcpProvenance.validate(request),
      stamped: mcpProvenance.stampInitiator({ method: "tools/call" }).params._meta[mcpProvenance.UI_KEY],
      thrown,
      names: Object.keys(mcpProvenance).sort(),
    };
  });
  assert.equal(seen.report.valid, false);
  assert.deepEqual(seen.report.diagnostics.map((d) => [d.code, d.rule]), [["invalid-type", "AI-7"]]);
  assert.deepEqual(seen.stamped, { initiator: "app" });
  assert.deepEqual(seen.thrown, { name: "RangeError", code: "invalid-limit", isError: true });
  assert.ok(seen.names.includes("validate") && seen.names.includes("AI_INVOCATION_KEY"));
});

test("markup in every text field is shown as text: no dialog, no script run, no element injected", async () => {
  await page.selectOption("#sample", { label: "A hostile request: markup and log forging in every field" });
  await page.waitForFunction(() => document.querySelector("#results pre")?.textContent.includes("onerror"));
  await page.fill("#message", JSON.stringify({
    method: "tools/call<script>window.__xss=1</script>",
    params: { name: "<svg onload=alert(1)>", _meta: { "io.modelcontextprotocol/aiInvocation": {
      invocationReason: { text: "<img src=x onerror=alert(1)>" }, model: { name: "<script>alert(2)</script>" },
      userIntent: { text: "<iframe src=javascript:alert(3)>" }, turnId: "<b onmouseover=alert(4)>t</b>" } } },
  }));
  await page.waitForFunction(() => document.querySelector("#results pre")?.textContent.includes("<iframe src=javascript"));
  await page.screenshot({ path: join(shots, "hostile.png"), fullPage: true });
  const state = await page.evaluate(() => ({
    xss: window.__xss,
    injected: document.querySelectorAll("#results *:not(div, pre, h4, ul, li, table, thead, tbody, tr, th, td, span), #diagnostics img, #diagnostics script, #diagnostics svg").length,
    text: document.querySelector("#results").textContent,
  }));
  assert.deepEqual(dialogs, []);
  assert.equal(state.xss, undefined);
  assert.equal(state.injected, 0);
  for (const payload of ["<img src=x onerror=alert(1)>", "<script>alert(2)</script>", "<iframe src=javascript:alert(3)>"]) {
    assert.ok(state.text.includes(payload), `shown as text: ${payload}`);
  }
});

test("each function's result lists what it changed by JSON Pointer, and marks those lines", async () => {
  await page.fill("#message", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q", _meta: {
    "io.modelcontextprotocol/ui": { initiator: "model" },
    "io.modelcontextprotocol/aiInvocation": { turnId: 7, userIntent: { text: "a\r\nb" } } } } }));
  await page.waitForFunction(() => document.querySelector("[data-function=stampInitiator] table.changes tbody tr"));
  const shown = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll("#results .result")].map((box) => [box.dataset.function, {
    changes: [...box.querySelectorAll("table.changes tbody tr")].map((row) => [...row.cells].map((cell) => cell.textContent)),
    marked: [...box.querySelectorAll("pre span.changed, pre span.added")].map((line) => line.textContent.trim()),
  }])));
  assert.deepEqual(shown.stampInitiator, {
    changes: [["changed", "/params/_meta/io.modelcontextprotocol~1ui/initiator", '"model"', '"app"']],
    marked: ['"initiator": "app"'],
  });
  assert.deepEqual(shown.sanitize.changes, [
    ["removed", "/params/_meta/io.modelcontextprotocol~1aiInvocation/turnId", "7", ""],
    ["changed", "/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text", '"a\\r\\nb"', '"a  b"'],
    ["added", "/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/redacted", "", "true"],
  ]);
  assert.deepEqual(shown.auditRecord, { changes: [], marked: [] });
  await page.locator("#results").screenshot({ path: join(shots, "changes.png") });
});

test("at 1280 px the diagnostics table's columns are wide enough to read, and no cell spills over", async () => {
  await page.selectOption("#sample", { label: "A hostile request: markup and log forging in every field" });
  await page.waitForFunction(() => document.querySelectorAll("#diagnostics tbody tr").length > 1);
  const layout = await page.evaluate(() => ({
    widths: [...document.querySelectorAll("#diagnostics th")].map((th) => Math.round(th.getBoundingClientRect().width)),
    spilled: [...document.querySelectorAll("#diagnostics td")].filter((td) => td.scrollWidth > td.clientWidth + 1).length,
    table: Math.round(document.querySelector("#diagnostics").getBoundingClientRect().width),
  }));
  const [severity, rule, code, path, message] = layout.widths;
  assert.ok(severity >= 70 && rule >= 50 && code >= 140 && path >= 350 && message >= 300, `column widths ${layout.widths}`);
  assert.ok(layout.table <= 1280, `table ${layout.table} px`);
  assert.equal(layout.spilled, 0);
});

test("the App's calls reach the server stamped initiator app, spoof or not", async () => {
  const view = page.frameLocator("#view");
  await view.locator("#refresh:not([disabled])").click();
  await view.locator("#spoof").click();
  await page.waitForFunction(() => document.querySelectorAll("#server-log tbody tr").length >= 2);
  await page.locator("#apps").screenshot({ path: join(shots, "apps.png") });
  const rows = await page.evaluate(() => [...document.querySelectorAll("#server-log tbody tr")].map((row) => ({ sent: row.dataset.sent, seen: row.dataset.seen })));
  assert.deepEqual(rows.slice(0, 2), [{ sent: "", seen: "app" }, { sent: "model", seen: "app" }]);
});

test("any page's console imports the package by URL, the one-liner the READMEs give", async () => {
  // Another app, on another origin, that knows nothing of the package.
  const other = createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>an MCP host</title>"));
  await new Promise((resolve) => other.listen(0, "127.0.0.1", resolve));
  const tab = await browser.newPage();
  try {
    await tab.goto(`http://127.0.0.1:${other.address().port}/`);
    const url = `http://127.0.0.1:${server.address().port}/pkg/dist/index.mjs`;
    const seen = await tab.evaluate(async (url) => {
      const mcpProvenance = await import(url);
      return mcpProvenance.validate({ method: "tools/call", params: { _meta: { "io.modelcontextprotocol/aiInvocation": { turnId: 7 } } } });
    }, url);
    assert.equal(seen.valid, false);
    assert.deepEqual(seen.diagnostics.map((d) => d.rule), ["AI-7"]);
  } finally {
    await tab.close();
    other.close();
  }
});

/** Serves the repository's `pkg/` and the CSP fixture, and a page that loads it under `policy`. */
function servedUnder(policy) {
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html", "content-security-policy": policy });
      res.end('<!doctype html><body><script type="module" src="/js-tests/fixtures/csp.mjs"></script></body>');
      return;
    }
    if (!/^\/(pkg\/[\w/.-]+|js-tests\/fixtures\/csp)\.mjs$/.test(path) || path.includes("..")) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/javascript", "content-security-policy": policy });
    res.end(readFileSync(join(root, path)));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

test("under a CSP without 'wasm-unsafe-eval' every call throws wasm-unavailable, naming it; with it, the package works", async () => {
  const results = {};
  for (const policy of ["script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'"]) {
    const cspServer = await servedUnder(policy);
    const cspPage = await browser.newPage();
    try {
      await cspPage.goto(`http://127.0.0.1:${cspServer.address().port}/`);
      await cspPage.waitForSelector("body[data-result]", { state: "attached" });
      results[policy] = JSON.parse(await cspPage.evaluate(() => document.body.dataset.result));
    } finally {
      await cspPage.close();
      cspServer.close();
    }
  }
  const refused = results["script-src 'self'"];
  for (const attempt of ["1", "2"]) {
    assert.equal(refused[attempt].name, "RangeError");
    assert.equal(refused[attempt].code, "wasm-unavailable");
    assert.match(refused[attempt].message, /'wasm-unsafe-eval'/);
  }
  assert.deepEqual(results["script-src 'self' 'wasm-unsafe-eval'"], { 1: { report: { valid: true, diagnostics: [] } }, 2: { report: { valid: true, diagnostics: [] } } });
});
