// The prototype gateway's HTTP layer, a proxy that hides nothing the server
// relies on. It guards against DNS rebinding itself (a hostile Host or
// Origin is answered 403 and nothing reaches the upstream) and passes on what
// an upstream needs to check for itself; an SSE answer reaches the client as
// it comes, its status and headers at once; and a stream the server holds
// open, waiting on the client, is not cut by the upstream's timeout.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { readBody, start, stop } from "../examples/prototype/http.mjs";
import { root } from "./user.mjs";

const gatewayScript = join(root, "examples/prototype/gateway.mjs");
const dir = mkdtempSync(join(tmpdir(), "mcp-provenance-gateway-http-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const ping = (id) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
const ACCEPT = "application/json, text/event-stream";

/** An upstream that records each request it gets (method, headers, body) and answers a JSON-RPC request with an empty result. */
async function capturingUpstream() {
  const requests = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    requests.push({ method: req.method, headers: req.headers, body });
    const id = body ? JSON.parse(body).id : undefined;
    if (id === undefined) return res.writeHead(202).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result: {} }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, port: server.address().port, requests, close: () => server.close() };
}

/** Sends one HTTP request with node:http (fetch cannot set Host); its status, headers and body. */
function send(url, method, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { "content-type": "application/json", accept: ACCEPT, ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk) => { text += chunk; }).on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The log's lines as they are now. */
const linesOf = (file) => readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));

/** How many exchanges the log has ended: the last line of each has its `outcome`. */
const ended = (file) => linesOf(file).filter((line) => "outcome" in line).length;

/**
 * The lines of the exchange after the first `seen` ended ones, its `outcome`
 * line last, once the gateway (another process) has logged it.
 */
async function exchangeAfter(file, seen) {
  for (let waited = 0; waited < 5000; waited += 10) {
    const lines = linesOf(file);
    const ends = lines.flatMap((line, index) => ("outcome" in line ? [index] : []));
    if (ends.length > seen) return lines.slice(seen === 0 ? 0 : ends[seen - 1] + 1, ends[seen] + 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${file} has no exchange past ${seen}`);
}
/** The outcome of the exchange after the first `seen` ended ones. */
const outcomeAfter = async (file, seen) => (await exchangeAfter(file, seen)).at(-1).outcome;

describe("the gateway, guarding against DNS rebinding", () => {
  let upstream;
  let gateway;
  let port;
  const logFile = join(dir, "rebinding.jsonl");

  before(async () => {
    upstream = await capturingUpstream();
    writeFileSync(logFile, "");
    gateway = await start(gatewayScript, ["--upstream", upstream.url, "--log", logFile]);
    port = new URL(gateway.url).port;
  });
  after(async () => {
    await stop(gateway.child);
    upstream.close();
  });

  /** Sends `method` with `headers` and checks the gateway refused it with `refused`, forwarding nothing. */
  async function refuses(method, headers, refused) {
    const reached = upstream.requests.length;
    const seen = ended(logFile);
    const { status, body } = await send(gateway.url, method, method === "POST" ? ping(1) : undefined, headers);
    assert.equal(status, 403);
    const answer = JSON.parse(body);
    assert.deepEqual(answer, { jsonrpc: "2.0", id: null, error: { code: -32600, message: answer.error.message } });
    assert.doesNotMatch(answer.error.message, /evil/, "the answer does not quote the header");
    assert.equal(upstream.requests.length, reached, "nothing reached the upstream");
    assert.deepEqual(await exchangeAfter(logFile, seen), [{ outcome: "refused", refused }]);
  }

  test("a hostile Origin is answered 403, whatever the method, and nothing is forwarded", async () => {
    for (const method of ["POST", "GET", "DELETE"]) await refuses(method, { origin: "http://evil.example" }, "origin-not-allowed");
    // Loopback names on another scheme, or an opaque origin, are not loopback origins.
    await refuses("POST", { origin: "null" }, "origin-not-allowed");
    await refuses("POST", { origin: "ftp://localhost" }, "origin-not-allowed");
  });

  test("a hostile Host (a name rebound to 127.0.0.1) is answered 403, and nothing is forwarded", async () => {
    await refuses("POST", { host: `evil.example:${port}` }, "host-not-allowed");
    await refuses("POST", { host: "evil.example", origin: "http://evil.example" }, "host-not-allowed");
    await refuses("GET", { host: `localhost.evil.example:${port}` }, "host-not-allowed");
  });

  test("loopback origins and hosts pass, on any port", async () => {
    const cases = [
      { origin: `http://127.0.0.1:${port}` },
      { origin: "http://localhost:6274" },
      { origin: "https://[::1]:8443" },
      { origin: "http://LOCALHOST" },
      { host: `localhost:${port}` },
      { host: `[::1]:${port}`, origin: "http://[::1]" },
      {},
    ];
    for (const [index, headers] of cases.entries()) {
      const { status, body } = await send(gateway.url, "POST", ping(index), headers);
      assert.equal(status, 200, JSON.stringify(headers));
      assert.deepEqual(JSON.parse(body), { jsonrpc: "2.0", id: index, result: {} });
    }
  });

  test("the upstream gets the Origin as received and the client's Host as forwarded; its own Host stays its own", async () => {
    await send(gateway.url, "POST", ping(20), { origin: "http://localhost:6274", host: `localhost:${port}` });
    const { headers } = upstream.requests.at(-1);
    assert.equal(headers.origin, "http://localhost:6274");
    assert.equal(headers["x-forwarded-host"], `localhost:${port}`);
    assert.equal(headers["x-forwarded-proto"], "http");
    assert.equal(headers.forwarded, `for=127.0.0.1;host="localhost:${port}";proto=http`);
    assert.equal(headers.host, `127.0.0.1:${upstream.port}`);
    // A request without an Origin (not from a browser) goes on without one.
    await send(gateway.url, "POST", ping(21));
    assert.equal(upstream.requests.at(-1).headers.origin, undefined);
    assert.equal(upstream.requests.at(-1).headers["x-forwarded-host"], `127.0.0.1:${port}`);
  });

  test("a forwarding header the client sent is not passed on as if the gateway had seen it", async () => {
    await send(gateway.url, "POST", ping(22), { "x-forwarded-host": "evil.example", forwarded: "host=evil.example" });
    const { headers } = upstream.requests.at(-1);
    assert.equal(headers["x-forwarded-host"], `127.0.0.1:${port}`);
    assert.doesNotMatch(headers.forwarded, /evil/);
  });
});

describe("the gateway, with allow-lists of its own", () => {
  test("--allowed-hosts and --allowed-origins replace loopback; an entry with a port allows that port only", async () => {
    const upstream = await capturingUpstream();
    const logFile = join(dir, "lists.jsonl");
    writeFileSync(logFile, "");
    const gateway = await start(gatewayScript, ["--upstream", upstream.url, "--log", logFile,
      "--allowed-hosts", "mcp.internal.test, 127.0.0.1", "--allowed-origins", "https://app.example:8443,http://127.0.0.1"]);
    try {
      const { port } = new URL(gateway.url);
      const status = async (headers) => (await send(gateway.url, "POST", ping(1), headers)).status;
      assert.equal(await status({ host: `mcp.internal.test:${port}`, origin: "https://app.example:8443" }), 200);
      assert.equal(await status({ origin: "http://127.0.0.1:3000" }), 200);
      assert.equal(await status({ origin: "https://app.example" }), 403, "port 443 is not 8443");
      assert.equal(await status({ origin: "http://localhost:3000" }), 403, "loopback names are no longer allowed");
      assert.equal(await status({ host: `localhost:${port}` }), 403);
      assert.equal(upstream.requests.length, 2);
    } finally {
      await stop(gateway.child);
      upstream.close();
    }
  });
});

describe("the gateway, relaying SSE answers", () => {
  let gateway;
  const logFile = join(dir, "sse.jsonl");
  /** What the upstream does with the next request, and the test's handle on it. */
  let next;
  const held = new Set();
  const upstream = createServer(async (req, res) => {
    await readBody(req);
    held.add(res);
    res.once("close", () => held.delete(res));
    next(req, res);
  });
  const event = (id) => `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, result: {} })}\n\n`;

  before(async () => {
    await new Promise((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    writeFileSync(logFile, "");
    // The upstream's timeout is short, and no --stream-idle-ms: an SSE answer may wait as long as it likes.
    gateway = await start(gatewayScript, ["--upstream", `http://127.0.0.1:${upstream.address().port}/mcp`, "--log", logFile, "--upstream-timeout-ms", "200"]);
  });
  after(async () => {
    await stop(gateway.child);
    for (const res of held) res.destroy();
    upstream.close();
  });

  test("status and headers reach the client at once, before the first event", async () => {
    const seen = ended(logFile);
    const order = [];
    let release;
    next = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "mcp-session-id": "s-1" }).flushHeaders();
      // It sends its first event once told, or after 1.5 s: whichever the client saw first, the order says.
      const send = () => {
        clearTimeout(timer);
        order.push("event sent");
        res.end(event(1));
      };
      const timer = setTimeout(send, 1500);
      release = send;
    };
    const response = await fetch(gateway.url, { method: "POST", headers: { "content-type": "application/json", accept: ACCEPT }, body: ping(1) });
    order.push("headers received");
    release();
    assert.deepEqual(order, ["headers received", "event sent"]);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    assert.equal(response.headers.get("cache-control"), "no-cache");
    assert.equal(response.headers.get("mcp-session-id"), "s-1");
    assert.equal(await response.text(), event(1));
    assert.equal(await outcomeAfter(logFile, seen), "answered");
  });

  test("an SSE answer idle for longer than --upstream-timeout-ms is not cut without --stream-idle-ms", async () => {
    const seen = ended(logFile);
    next = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      // A server waiting on the client (an elicitation waits on a person): five times the upstream's timeout.
      setTimeout(() => res.write(": still here\n\n"), 200);
      setTimeout(() => res.end(event(2)), 1000);
    };
    const { status, body } = await send(gateway.url, "POST", ping(2));
    assert.equal(status, 200);
    assert.equal(body, `: still here\n\n${event(2)}`);
    assert.equal(await outcomeAfter(logFile, seen), "answered");
  });

  test("a GET stream is not cut either, and ends when the client leaves", async () => {
    const seen = ended(logFile);
    let upstreamClosed;
    const closed = new Promise((resolve) => { upstreamClosed = resolve; });
    next = (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      setTimeout(() => res.write(event(3)), 700);
      res.once("close", upstreamClosed);
    };
    const abort = new AbortController();
    const response = await fetch(gateway.url, { headers: { accept: "text/event-stream" }, signal: abort.signal });
    const reader = response.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), event(3));
    abort.abort();
    await closed;
    assert.equal(await outcomeAfter(logFile, seen), "aborted");
  });

  test("a JSON answer is still bounded by --upstream-timeout-ms between two pieces", async () => {
    const seen = ended(logFile);
    next = (req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).flushHeaders();
      res.write('{"jsonrpc": "2.0",');
    };
    await send(gateway.url, "POST", ping(4)).catch(() => {});
    assert.equal(await outcomeAfter(logFile, seen), "upstream-idle");
  });
});
