// Failing closed, message by message: each class of input the prototype's
// gateway cannot process goes through the real gateway in front of an
// upstream that captures what reaches it; the assertions read what the
// upstream got, what the client got and what the gateway logged. Then the
// server refuses a request it cannot audit, rather than serve it. Every wait
// is bounded: bodies by size, the upstream by time, pending requests by
// their HTTP exchange.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import Database from "better-sqlite3";

import { AI_INVOCATION_KEY as KEY } from "../pkg/dist/index.mjs";
import { readBody, start, stop } from "../examples/prototype/http.mjs";
import { root } from "./user.mjs";

const gatewayScript = join(root, "examples/prototype/gateway.mjs");
const SECRET = "my salary is 123456";
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-failclosed-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** An upstream that records each body it gets and answers every request in it with an empty result. */
async function capturingUpstream() {
  const bodies = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    bodies.push(body);
    const messages = [JSON.parse(body)].flat().filter((m) => m.id !== undefined && typeof m.method === "string");
    res.writeHead(messages.length ? 200 : 202, { "content-type": "application/json", "mcp-session-id": "upstream-session" });
    const results = messages.map((m) => ({ jsonrpc: "2.0", id: m.id, result: {} }));
    res.end(messages.length ? JSON.stringify(Array.isArray(JSON.parse(body)) ? results : results[0]) : undefined);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, bodies, close: () => server.close() };
}

/** Sends one HTTP request with node:http (fetch refuses some methods); its status, headers and body. */
function send(url, method, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk) => { text += chunk; }).on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The log's lines as they are now. */
const linesOf = (file) => readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));

/**
 * The log's lines once it has more than `seen` and `until` holds for them:
 * the gateway is another process, whose line may come after its answer.
 */
async function linesAfter(file, seen, until = () => true) {
  for (let waited = 0; waited < 5000; waited += 10) {
    const lines = linesOf(file);
    if (lines.length > seen && until(lines.slice(seen))) return lines;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${file} has no new line`);
}

/** Whether the lines hold the last of an exchange: the one with its `outcome`. */
const timed = (lines) => lines.some((line) => "outcome" in line);

const call = (id, envelope, extra = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "q", ...extra, _meta: { [KEY]: envelope } } });
/** An unknown envelope field nested 200 objects deep: deeper than the filter reads (WIRE-4). */
const tooDeep = (id) => JSON.parse(JSON.stringify(call(id, { userIntent: { text: SECRET }, x: 0 })).replace('"x":0', `"x":${'{"x":'.repeat(200)}0${"}".repeat(200)}`));

describe("the gateway, redacting intents and keeping unknown fields", () => {
  let upstream;
  let gateway;
  const logFile = join(dir, "gateway.jsonl");
  const post = async (body) => {
    const response = await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body });
    return { status: response.status, body: await response.text(), session: response.headers.get("mcp-session-id") };
  };
  let lines = 0;
  /** The log's lines, once the last request's are there. */
  const logged = async () => {
    const all = await linesAfter(logFile, lines, timed);
    lines = all.length;
    return all;
  };

  before(async () => {
    upstream = await capturingUpstream();
    writeFileSync(logFile, "");
    gateway = await start(gatewayScript, ["--upstream", upstream.url, "--log", logFile, "--redact-intent", "--keep-unknown"]);
  });
  after(async () => {
    await stop(gateway.child);
    upstream.close();
  });

  test("a body that is not JSON: a parse error from the gateway, nothing upstream, a log line", async () => {
    const before = upstream.bodies.length;
    const { status, body } = await post(`{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": {"${KEY}": {"userIntent": {"text": "${SECRET}"`);
    assert.equal(status, 400);
    assert.deepEqual(JSON.parse(body), { jsonrpc: "2.0", id: null, error: { code: -32700, message: "the body is not JSON", data: { code: "parse-error" } } });
    assert.equal(upstream.bodies.length, before);
    assert.equal((await logged()).at(-1).outcome, "refused");
  });

  test("a request the library refuses: a JSON-RPC error with its code, nothing of it upstream", async () => {
    const before = upstream.bodies.length;
    const { body } = await post(JSON.stringify(tooDeep(7)));
    assert.deepEqual(JSON.parse(body), { jsonrpc: "2.0", id: 7, error: { code: -32600, message: "the message nests deeper than the gateway reads", data: { code: "too-deep" } } });
    assert.equal(upstream.bodies.length, before);
    const refused = (await logged()).findLast((line) => "refused" in line && "kind" in line);
    assert.deepEqual(refused, {
      session: null, kind: "request", id: 7, refused: "too-deep", valid: false, changes: [],
      diagnostics: [{ code: "too-deep", severity: "error", rule: "WIRE-4", path: "", message: "the message nests deeper than the gateway reads" }],
    });
  });

  test("a batch with one such request: the others go on, the one is refused", async () => {
    const batch = [call(1, { turnId: "t-1", userIntent: { text: SECRET } }), tooDeep(2), call(3, { model: { name: "m" } })];
    const { body, session } = await post(JSON.stringify(batch));
    // The filter's answer joins the upstream's, which keeps its headers: the session goes on.
    assert.equal(session, "upstream-session");
    const answers = JSON.parse(body);
    // The filter's first: the upstream's answer streams on after them.
    assert.deepEqual(answers.map((a) => [a.id, "result" in a ? "result" : a.error.data.code]), [[2, "too-deep"], [1, "result"], [3, "result"]]);
    const reached = JSON.parse(upstream.bodies.at(-1));
    assert.deepEqual(reached.map((m) => m.id), [1, 3]);
    assert.deepEqual(reached[0].params._meta[KEY].userIntent, { redacted: true });
  });

  test("a notification the library refuses is dropped; a bare userIntent is refused while redacting", async () => {
    const before = upstream.bodies.length;
    const { id, ...notification } = tooDeep(0);
    await post(JSON.stringify(notification));
    assert.equal(upstream.bodies.length, before);
    const bare = { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "q", _meta: { userIntent: { text: SECRET } } } };
    const { body } = await post(JSON.stringify(bare));
    assert.equal(JSON.parse(body).error.data.code, "bare-user-intent");
    assert.equal(upstream.bodies.length, before);
  });

  test("no byte of any userIntent.text reached the upstream, and the log quotes none", () => {
    assert.ok(upstream.bodies.length > 0);
    for (const body of upstream.bodies) assert.ok(!body.includes(SECRET), body);
    assert.ok(!readFileSync(logFile, "utf8").includes(SECRET));
  });
});

describe("the gateway, forwarding by default", () => {
  let upstream;
  let gateway;
  const logFile = join(dir, "default.jsonl");

  before(async () => {
    upstream = await capturingUpstream();
    writeFileSync(logFile, "");
    gateway = await start(gatewayScript, ["--upstream", upstream.url, "--log", logFile, "--max-body-bytes", String(4 << 20)]);
  });
  after(async () => {
    await stop(gateway.child);
    upstream.close();
  });

  test("a valid envelope goes upstream as it came (AI-12); an invalid one as sanitize repairs it", async () => {
    const post = (message) => fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(message) });
    const valid = call(1, { turnId: "t-1", userIntent: { text: "line\nbreak" }, vendor: 1 });
    await post(valid);
    assert.deepEqual(JSON.parse(upstream.bodies.at(-1)), valid);
    await post(call(2, { turnId: 7, userIntent: { text: "hi" } }));
    assert.deepEqual(JSON.parse(upstream.bodies.at(-1)).params._meta[KEY], { userIntent: { text: "hi" } });
  });

  test("an envelope of 100,000 unknown fields logs one bounded line", async () => {
    const envelope = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`f${i}`, i]));
    const seen = linesOf(logFile).length;
    await (await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(call(3, envelope)) })).text();
    const entry = (await linesAfter(logFile, seen)).findLast((line) => line.message);
    assert.equal(entry.record.diagnostics.length, 65);
    assert.ok(JSON.stringify(entry.record.diagnostics).length < 20_000);
  });

  test("an upstream that is gone: each request gets a JSON-RPC error, and the gateway lives on", async () => {
    upstream.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const body = JSON.stringify([call(4, {}), call(5, {})]).replace('"id":5', '"id":12345678901234567890');
    const response = await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await response.text();
    assert.deepEqual(JSON.parse(text).map((a) => a.error.code), [-32603, -32603]);
    // The answers name the ids as the client sent them, a 20-digit one included.
    assert.match(text, /"id":4,/);
    assert.match(text, /"id":12345678901234567890,/);
    assert.equal(gateway.child.exitCode, null);
  });
});

describe("the gateway, bounded in every wait", () => {
  let gateway;
  const logFile = join(dir, "bounded.jsonl");
  const bodies = [];
  const held = [];
  /** What the upstream does with the next request: "answer", "stream-forever" or "never-answer". */
  let mode = "answer";
  const upstream = createServer(async (req, res) => {
    bodies.push(await readBody(req));
    held.push(res);
    if (mode === "answer") res.writeHead(202).end();
    if (mode === "stream-forever") res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
  });

  before(async () => {
    await new Promise((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    writeFileSync(logFile, "");
    const url = `http://127.0.0.1:${upstream.address().port}/mcp`;
    gateway = await start(gatewayScript, ["--upstream", url, "--log", logFile, "--max-body-bytes", "65536", "--upstream-timeout-ms", "300", "--stream-idle-ms", "300"]);
  });
  after(async () => {
    await stop(gateway.child);
    for (const res of held) res.destroy();
    upstream.close();
  });
  /** The gateway still answers a plain notification (and has logged it, once this returns). */
  const serving = async () => {
    mode = "answer";
    const seen = linesOf(logFile).length;
    const { status } = await send(gateway.url, "POST", JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    assert.equal(status, 202);
    await linesAfter(logFile, seen, timed);
    assert.equal(gateway.child.exitCode, null);
  };

  test("TRACE, PUT and PATCH are answered 405 with Allow, and the gateway serves on", async () => {
    const seen = bodies.length;
    const logged = linesOf(logFile).length;
    for (const method of ["TRACE", "PUT", "PATCH"]) {
      const { status, headers, body } = await send(gateway.url, method);
      assert.equal(status, 405);
      assert.equal(headers.allow, "GET, POST, DELETE");
      assert.equal(JSON.parse(body).error.code, -32600);
    }
    assert.equal(bodies.length, seen);
    await serving();
    const refused = (await linesAfter(logFile, logged, timed)).filter((line) => line.refused === "method-not-allowed");
    assert.deepEqual(refused.map((line) => line.httpMethod), ["TRACE", "PUT", "PATCH"]);
  });

  test("a body past --max-body-bytes is answered 413, whether it says its length or not, and never forwarded", async () => {
    const seen = bodies.length;
    const logged = linesOf(logFile).length;
    const big = JSON.stringify(call(1, { userIntent: { text: "x".repeat(70_000) } }));
    for (const headers of [{}, { "transfer-encoding": "chunked" }]) {
      const { status, body } = await send(gateway.url, "POST", big, headers);
      assert.equal(status, 413);
      assert.deepEqual(JSON.parse(body), { jsonrpc: "2.0", id: null, error: { code: -32600, message: "the body is larger than 65536 bytes", data: { code: "body-too-large" } } });
    }
    assert.equal(bodies.length, seen);
    const lines = await linesAfter(logFile, logged, (added) => added.length >= 2);
    assert.deepEqual(lines.filter((line) => line.refused === "body-too-large"), Array(2).fill({ outcome: "refused", refused: "body-too-large", limit: 65536 }));
    await serving();
  });

  test("a batch whose answer never ends: logged as forwarded, ended after --stream-idle-ms", async () => {
    const seen = linesOf(logFile).length;
    mode = "stream-forever";
    const batch = [call(777, { turnId: "t-777" }), { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 777 } }];
    const { status, body } = await send(gateway.url, "POST", JSON.stringify(batch));
    assert.equal(status, 200);
    assert.equal(body, "");
    assert.deepEqual(JSON.parse(bodies.at(-1)).map((m) => m.method), ["tools/call", "notifications/cancelled"]);
    const lines = (await linesAfter(logFile, seen, timed)).slice(seen);
    assert.equal(lines[0].message.id, 777);
    const timing = lines.find((line) => "outcome" in line);
    assert.equal(timing.outcome, "upstream-idle");
    assert.deepEqual(timing.methods, ["tools/call", "notifications/cancelled"]);
    await serving();
  });

  test("an upstream that never answers: each request gets a JSON-RPC error after the timeout", async () => {
    mode = "never-answer";
    const seen = linesOf(logFile).length;
    const { body } = await send(gateway.url, "POST", JSON.stringify([call(5, {}), call(6, {})]));
    assert.deepEqual(JSON.parse(body).map((a) => [a.id, a.error.code]), [[5, -32603], [6, -32603]]);
    assert.equal((await linesAfter(logFile, seen, timed)).at(-1).outcome, "upstream-timeout");
    await serving();
  });
});

describe("the gateway, its log unwritable", () => {
  test("nothing is forwarded unlogged: each request is answered 500, and the gateway serves on", async () => {
    const upstream = await capturingUpstream();
    const gateway = await start(gatewayScript, ["--upstream", upstream.url, "--log", dir]);
    try {
      for (const id of [1, 2]) {
        const { status, body } = await send(gateway.url, "POST", JSON.stringify(call(id, { turnId: "t" })));
        assert.equal(status, 500);
        assert.equal(JSON.parse(body).error.code, -32603);
      }
      assert.equal(upstream.bodies.length, 0);
      assert.equal(gateway.child.exitCode, null);
    } finally {
      await stop(gateway.child);
      upstream.close();
    }
  });
});

describe("the server", () => {
  let server;
  const data = join(dir, "server");

  before(async () => {
    mkdirSync(data, { recursive: true });
    server = await start(join(root, "examples/prototype/server.mjs"), ["--data", data]);
  });
  after(async () => stop(server.child));

  test("refuses a request it cannot audit, and serves the next", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    // The audit store refuses records of one tool, as a full disk or a broken store would refuse any.
    const audit = new Database(join(data, "audit.db"));
    audit.exec("CREATE TRIGGER refuse BEFORE INSERT ON audit WHEN NEW.tool = 'list_tables' BEGIN SELECT RAISE(ABORT, 'store refuses'); END");
    audit.close();
    await assert.rejects(client.callTool({ name: "list_tables", arguments: {} }), /could not be audited/);
    const served = await client.callTool({ name: "refresh_dashboard", arguments: {} });
    assert.ok(served.content.length > 0);
    const rows = new Database(join(data, "audit.db"), { readonly: true }).prepare("SELECT tool FROM audit WHERE method = 'tools/call'").all();
    assert.deepEqual(rows.map((row) => row.tool), ["refresh_dashboard"]);
    await client.close();
  });

  test("a cancelled request ends its HTTP answer and stays pending nowhere", async () => {
    const headers = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
    const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const opened = await send(server.url, "POST", JSON.stringify(init), headers);
    headers["mcp-session-id"] = opened.headers["mcp-session-id"];
    await send(server.url, "POST", JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), headers);
    const health = async () => JSON.parse((await send(new URL("/health", server.url), "GET")).body);
    const padding = "x".repeat(100_000);
    for (let id = 1; id <= 50; id++) {
      const batch = [
        { jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_query", arguments: { query: `SELECT '${padding}'` } } },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } },
      ];
      const { status, body } = await send(server.url, "POST", JSON.stringify(batch), headers);
      assert.equal(status, 200);
      assert.doesNotMatch(body, /"result"/);
    }
    // A batch with one request answered and one cancelled ends once both are settled.
    const mixed = [
      { jsonrpc: "2.0", id: 51, method: "tools/call", params: { name: "refresh_dashboard", arguments: {} } },
      { jsonrpc: "2.0", id: 52, method: "tools/call", params: { name: "refresh_dashboard", arguments: {} } },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 52 } },
    ];
    const { body } = await send(server.url, "POST", JSON.stringify(mixed), headers);
    assert.match(body, /"id":51/);
    assert.doesNotMatch(body, /"id":52/);
    assert.equal((await health()).pending, 0);
  });

  test("a body past --max-body-bytes is answered 413", async () => {
    const { status, body } = await send(server.url, "POST", JSON.stringify({ padding: "x".repeat(1 << 20) }));
    assert.equal(status, 413);
    assert.equal(JSON.parse(body).error.code, -32600);
  });
});
