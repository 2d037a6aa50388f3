// The prototype gateway's HTTP layer, a proxy that hides nothing the server
// relies on. It guards against DNS rebinding itself (a hostile Host or
// Origin is answered 403 and nothing reaches the upstream) and passes on what
// an upstream needs to check for itself; an SSE answer reaches the client as
// it comes, its status and headers at once; and a stream the server holds
// open, waiting on the client, is not cut by the upstream's timeout.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
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

/** A gateway in front of the upstream at `url`, logging to `logFile` (emptied first), with `args` besides. */
function gatewayTo(url, logFile, args = []) {
  writeFileSync(logFile, "");
  return start(gatewayScript, ["--upstream", url, "--log", logFile, ...args]);
}

/** A gateway in front of `upstream`, a node:http server listened to here, logging to `logFile`, with `args` besides. */
async function inFrontOf(upstream, logFile, args = []) {
  await new Promise((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  return gatewayTo(`http://127.0.0.1:${upstream.address().port}/mcp`, logFile, args);
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
    gateway = await gatewayTo(upstream.url, logFile);
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

describe("the gateway, forwarding only bodies a server reads as the filter did (issue 30, 1)", () => {
  let upstream;
  let gateway;
  const logFile = join(dir, "charset.jsonl");

  before(async () => {
    upstream = await capturingUpstream();
    gateway = await gatewayTo(upstream.url, logFile, ["--redact-intent"]);
  });
  after(async () => {
    await stop(gateway.child);
    upstream.close();
  });

  // As UTF-8 one harmless string argument; as UTF-7 (which express.json() decodes)
  // `params._meta.userIntent`, the bare intent a redacting gateway refuses (WIRE-6).
  const smuggled = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"s":"'
    + '+ACIAfQ-,+ACIAXw-meta+ACI-:+AHsAIg-userIntent+ACI-:+ACI-secret+ACI-,+ACI-x+ACI-:+ACI-"}}}';

  for (const [headers, code] of [
    [{ "content-type": "application/json; charset=utf-7" }, "unsupported-charset"],
    [{ "content-type": "application/json", "content-encoding": "gzip" }, "unsupported-encoding"],
    [{ "content-type": "text/plain" }, "unsupported-media-type"],
  ]) {
    test(`${JSON.stringify(headers)} is refused with 415 and nothing reaches the upstream`, async () => {
      const reached = upstream.requests.length;
      const seen = ended(logFile);
      const { status, body } = await send(gateway.url, "POST", smuggled, headers);
      assert.equal(status, 415);
      assert.equal(JSON.parse(body).error.data.code, code);
      assert.equal(upstream.requests.length, reached, "nothing reached the upstream");
      assert.deepEqual((await exchangeAfter(logFile, seen)).at(-1).refused, code);
    });
  }

  test("UTF-8 JSON, however its headers spell it, goes on byte for byte", async () => {
    const reached = upstream.requests.length;
    const { status } = await send(gateway.url, "POST", smuggled, { "content-type": "Application/JSON; Charset=\"UTF-8\"" });
    assert.equal(status, 200);
    assert.equal(upstream.requests.length, reached + 1);
    assert.equal(upstream.requests.at(-1).body, smuggled);
  });
});

describe("the gateway, with allow-lists of its own", () => {
  test("--allowed-hosts and --allowed-origins replace loopback; an entry with a port allows that port only", async () => {
    const upstream = await capturingUpstream();
    const logFile = join(dir, "lists.jsonl");
    const gateway = await gatewayTo(upstream.url, logFile,
      ["--allowed-hosts", "mcp.internal.test, 127.0.0.1", "--allowed-origins", "https://app.example:8443,http://127.0.0.1"]);
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
    // The upstream's timeout is short, and no --stream-idle-ms: an SSE answer may wait as long as it likes.
    gateway = await inFrontOf(upstream, logFile, ["--upstream-timeout-ms", "200"]);
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

/** The gateway's peak resident memory so far, in KiB, as the kernel counts it. */
const peakKib = (child) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]);

/** A request the filter refuses (it nests deeper than the gateway reads, WIRE-4), with `id`. */
const tooDeep = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"arguments":${"[".repeat(200)}${"]".repeat(200)}}}`;

/** Writes the pieces of `pieces` (an iterator) to `res` as fast as it takes them, then ends it. */
function pour(res, pieces) {
  for (let piece = pieces.next(); !piece.done; piece = pieces.next()) {
    if (!res.write(piece.value)) return res.once("drain", () => pour(res, pieces));
  }
  res.end();
}

describe("the gateway, joining its replies to an answer as it streams (issue 30, 10)", () => {
  let gateway;
  const logFile = join(dir, "joined.jsonl");
  /** What the upstream does with the next request. */
  let next;
  const upstream = createServer(async (req, res) => {
    await readBody(req);
    next(req, res);
  });
  /** A batch of a request that goes on (id 1) and one the filter refuses (id 2). */
  const batch = `[{"jsonrpc":"2.0","id":1,"method":"ping"},${tooDeep(2)}]`;
  /** The filter's reply to request 2, parsed. */
  const refusal = { jsonrpc: "2.0", id: 2, error: { code: -32600, message: "the message nests deeper than the gateway reads", data: { code: "too-deep" } } };

  before(async () => {
    gateway = await inFrontOf(upstream, logFile);
  });
  after(async () => {
    await stop(gateway.child);
    upstream.close();
  });

  test("the upstream's answer, in any form, is joined by the filter's reply as valid JSON", async () => {
    const result = '{"jsonrpc":"2.0","id":1,"result":{}}';
    const failed = { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "the upstream server did not answer" } };
    const cases = [
      // The upstream's answer, in the pieces it writes it in; what the client gets, by id; the exchange's outcome.
      { pieces: ["  \n", "[", " \r\n", `${result} `, "]\n"], answers: [JSON.parse(result), refusal], outcome: "answered" },
      { pieces: [`[${result},`, `${result.replace('"id":1', '"id":3')}]`], answers: [JSON.parse(result), refusal, { ...JSON.parse(result), id: 3 }], outcome: "answered" },
      { pieces: [" ", result], answers: [JSON.parse(result), refusal], outcome: "answered" },
      { pieces: ["[", "  ]"], answers: [refusal], outcome: "answered" },
      { pieces: [], status: 202, answers: [refusal], outcome: "answered" },
      { pieces: ["<html>busy</html>"], status: 503, answers: [failed, refusal], outcome: "upstream-not-json" },
    ];
    for (const { pieces, status = 200, answers, outcome } of cases) {
      const seen = ended(logFile);
      next = (req, res) => {
        res.writeHead(status, { "content-type": "application/json", "mcp-session-id": "s-1" });
        pour(res, pieces.values());
      };
      const response = await send(gateway.url, "POST", batch);
      assert.equal(response.status, 200, response.body);
      assert.equal(response.headers["mcp-session-id"], "s-1");
      assert.deepEqual(JSON.parse(response.body).sort((a, b) => a.id - b.id), answers, response.body);
      assert.equal(await outcomeAfter(logFile, seen), outcome);
    }
  });

  test("an event-stream answer gets the reply as an event of its own", async () => {
    const event = `event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n`;
    next = (req, res) => res.writeHead(200, { "content-type": "text/event-stream" }).end(event);
    const { body } = await send(gateway.url, "POST", batch);
    const events = body.split("\n\n").filter(Boolean).map((text) => JSON.parse(text.replace("event: message\ndata: ", "")));
    assert.deepEqual(events, [refusal, { jsonrpc: "2.0", id: 1, result: {} }]);
  });

  test("a 200 MB answer streams through, joined by the reply: the gateway's memory grows by far less than the answer", async (t) => {
    const MB = Buffer.alloc(1 << 20, "x");
    const head = '[{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"';
    /** An answer of `mb` MiB and a little, a piece at a time, made as it goes: never whole in memory. */
    function* answer(mb) {
      yield head;
      for (let i = 0; i < mb; i++) yield MB;
      yield '"}]}}]';
    }
    let size = 200;
    next = (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      pour(res, answer(size));
    };
    // Warmed up on a 50 MB answer, so that what is measured grows with the answer, not with the heap's first sizing.
    size = 50;
    await send(gateway.url, "POST", batch);
    size = 200;
    const before = peakKib(gateway.child);
    const received = await new Promise((resolve, reject) => {
      const req = request(gateway.url, { method: "POST", headers: { "content-type": "application/json", accept: ACCEPT } }, (res) => {
        const hash = createHash("sha256");
        let start = Buffer.alloc(0);
        let size = 0;
        res.on("data", (chunk) => {
          hash.update(chunk);
          size += chunk.length;
          if (start.length < 4096) start = Buffer.concat([start, chunk]).subarray(0, 4096);
        }).on("end", () => resolve({ hash: hash.digest("hex"), size, start: start.toString("utf8") }));
      });
      req.on("error", reject);
      req.end(batch);
    });
    const grew = peakKib(gateway.child) - before;
    t.diagnostic(`the gateway's peak grew by ${grew} KiB for a 200 MB answer`);
    assert.ok(grew < 40 * 1024, `the gateway's peak grew by ${grew} KiB for a 200 MB answer: a fifth of it at most`);
    // The client got the filter's reply, then the upstream's array's items byte for byte: valid JSON.
    const reply = received.start.slice(1, received.start.indexOf(`,${head.slice(1)}`));
    assert.deepEqual(JSON.parse(reply), refusal);
    const expected = createHash("sha256").update(`[${reply},`);
    let bytes = 1 + reply.length + 1;
    for (const piece of answer(200)) {
      const part = piece === head ? head.slice(1) : piece; // the upstream's `[` is the client's
      expected.update(part);
      bytes += part.length;
    }
    assert.equal(received.size, bytes);
    assert.equal(received.hash, expected.digest("hex"));
  });
});

describe("the gateway, witnessing only the sessions its upstream issued (issue 30, 6)", () => {
  let gateway;
  const logFile = join(dir, "sessions.jsonl");
  const ISSUED = "session-the-upstream-issued";
  /** The session header of each request the upstream got. */
  const reached = [];
  /** An upstream that issues ISSUED at initialize, and answers an unknown session 404, as the SDK's does. */
  const upstream = createServer(async (req, res) => {
    const body = await readBody(req);
    const session = req.headers["mcp-session-id"];
    reached.push(session);
    const { id, method } = body ? JSON.parse(body) : {};
    if (method === "initialize") return res.writeHead(200, { "content-type": "application/json", "mcp-session-id": ISSUED }).end(JSON.stringify({ jsonrpc: "2.0", id, result: {} }));
    if (session !== ISSUED) return res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": ISSUED }).end(req.method === "DELETE" ? undefined : JSON.stringify({ jsonrpc: "2.0", id, result: {} }));
  });

  before(async () => {
    gateway = await inFrontOf(upstream, logFile);
  });
  after(async () => {
    await stop(gateway.child);
    upstream.close();
  });

  /** Sends `message` with the session header `session` (none when undefined); the lines its exchange logged: the message's, and the outcome's. */
  async function sent(message, session, method = "POST") {
    const seen = ended(logFile);
    await send(gateway.url, method, message && JSON.stringify(message), session === undefined ? {} : { "mcp-session-id": session });
    const lines = await exchangeAfter(logFile, seen);
    return { message: lines.find((line) => "record" in line), outcome: lines.at(-1) };
  }
  const call = (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "q" } });

  test("a session id the client chose is forwarded, but not recorded as witnessed; the one the upstream issued is", async () => {
    const initialize = await sent({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} });
    assert.equal(initialize.message.record.witnessed.sessionId, undefined, "logged before the upstream named it");
    assert.equal(initialize.outcome.session, ISSUED, "the exchange's last line has the session the upstream issued");

    const chosen = await sent(call(1), "a-session-the-client-made-up");
    assert.equal(reached.at(-1), "a-session-the-client-made-up", "still forwarded: the upstream decides");
    assert.equal(chosen.message.record.witnessed.sessionId, undefined);
    assert.equal(chosen.message.session, null);
    assert.equal(chosen.outcome.session, null);

    const issued = await sent(call(2), ISSUED);
    assert.equal(issued.message.record.witnessed.sessionId, ISSUED);
    assert.equal(issued.message.session, ISSUED);
  });

  test("a session the upstream ended (a DELETE it accepted) is witnessed no more", async () => {
    await sent(undefined, ISSUED, "DELETE");
    const after = await sent(call(3), ISSUED);
    assert.equal(after.message.record.witnessed.sessionId, undefined);
    assert.equal(after.message.session, null);
  });
});
