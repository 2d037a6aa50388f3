// mcp-provenance/http on the way in: the prototype gateway's hostile cases
// (exact bytes with a 20-digit id and 1e400, a bare intent under redaction,
// a batch with a refused message, a deep body, an oversize body, encodings,
// a failing sink), each through the same app behind the middleware in three
// stacks: node:http with a raw handler, Express with express.json(), and a
// plain Fetch handler. What reaches the app is what it read, as its stack
// reads it; what the client gets is compared byte for byte.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import express from "express";
import { createServer } from "node:http";

import { exchangeOf, provenanceFetch, provenanceMiddleware } from "../pkg/dist/http.mjs";
import {
  CALL, JSON_TYPE, KEY, NOTIFICATION, REDACTED, SECRET, STACKS, TOO_DEEP,
  accounts, auditError, listen, recorder, result, send, tooDeep,
} from "./http-stacks.mjs";

/** Runs `check(url)` against `app` behind the middleware made with `options` in `stack`, then closes it. */
async function behind(stack, options, app, check) {
  const server = await stack(options, app);
  try {
    return await check(server.url);
  } finally {
    await server.close();
  }
}

for (const [name, stack] of Object.entries(STACKS)) {
  describe(`the middleware in ${name}, on the way in`, () => {
    test("the app reads the bytes that came, but the span a rule changed, their length made right", async () => {
      for (const [policy, expected] of [[undefined, CALL], [{ userIntent: "redact" }, REDACTED]]) {
        const app = recorder();
        const headers = { host: "evil.example", origin: "http://evil.example", "content-type": "application/json", "accept-encoding": "gzip" };
        // Sent in two pieces, chunked: no Content-Length came.
        await behind(stack, { policy }, app, (url) => send(url, { chunks: [CALL.slice(0, 7), CALL.slice(7)], headers }));
        const [reached] = app.reached;
        assert.equal(reached.body, expected);
        assert.equal(reached.headers["content-length"], String(Buffer.byteLength(expected)));
        assert.equal(reached.headers["transfer-encoding"], undefined);
        // The answer is read on its way back: it is asked for as it can be read.
        assert.equal(reached.headers["accept-encoding"], undefined);
        // Host and Origin as they came, for the app to judge.
        assert.equal(reached.headers.host, "evil.example");
        assert.equal(reached.headers.origin, "http://evil.example");
      }
    });

    test("a bare intent is refused under a redacting policy, and never reaches the app", async () => {
      const app = recorder();
      const sink = accounts();
      const bare = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"q","_meta":{"userIntent":{"text":"${SECRET}"}}}}`;
      const answer = await behind(stack, { policy: { userIntent: "redact" }, audit: sink }, app, (url) => send(url, { body: bare }));
      assert.equal(answer.status, 200);
      assert.equal(answer.body, '{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"a bare _meta.userIntent, which a policy that redacts intents cannot reach","data":{"code":"bare-user-intent"}}}');
      assert.equal(answer.headers["content-type"], "application/json");
      assert.deepEqual(app.reached, []);
      const [{ account, line }] = sink.kept;
      assert.equal(account.refused, "bare-user-intent");
      assert.ok(!line.includes(SECRET));
    });

    test("a body too deep is refused, and never reaches the app", async () => {
      const app = recorder();
      const answer = await behind(stack, {}, app, (url) => send(url, { body: tooDeep(2) }));
      assert.deepEqual([answer.status, answer.body], [200, TOO_DEEP]);
      assert.deepEqual(app.reached, []);
    });

    test("a batch with a refused message: the others reach the app, audited first, and the reply joins its answer", async () => {
      const order = [];
      const sink = accounts();
      const app = recorder({ pieces: [() => { order.push("answered"); return `[${result("12345678901234567890")}]`; }] });
      const batch = `[${CALL}, ${NOTIFICATION}, ${tooDeep(2)}]`;
      const audit = async (account, line) => {
        await Promise.resolve();
        order.push(`audited ${account.kind}`);
        sink(account, line);
      };
      const answer = await behind(stack, { policy: { userIntent: "redact" }, audit }, app, (url) => send(url, { body: batch }));
      assert.deepEqual(app.reached.map((r) => r.body), [`[${REDACTED}, ${NOTIFICATION}]`]);
      // The exchange's outcome comes once the answer is over.
      await sink.outcome(1);
      assert.deepEqual(order, ["audited request", "audited notification", "audited request", "answered", "audited outcome"]);
      assert.deepEqual(sink.kept.map(({ account }) => account.refused), [undefined, undefined, "too-deep"]);
      const [{ account: first, line }] = sink.kept;
      assert.equal(first.record.clientAsserted.turnId, "t-1");
      assert.equal(first.record.clientAsserted.userIntentRedacted, true);
      assert.ok(line.includes('"n":1e400') && !line.includes(SECRET));
      // The result carries its request's turnId back (AI-11).
      const echoed = `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"_meta":{"${KEY}":{"turnId":"t-1"}}}}`;
      assert.deepEqual([answer.status, answer.body], [200, `[${TOO_DEEP},${echoed}]`]);
    });

    test("a body past maxBodyBytes is answered 413, whether it says its length or not, and never reaches the app", async () => {
      const tooLarge = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the body is larger than 4096 bytes","data":{"code":"body-too-large"}}}';
      const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q", arguments: { s: "x".repeat(10_000) } } });
      for (const request of [{ body: big }, { chunks: [big.slice(0, 3000), big.slice(3000)] }]) {
        const app = recorder();
        const answer = await behind(stack, { maxBodyBytes: 4096 }, app, (url) => send(url, request));
        assert.deepEqual([answer.status, answer.body], [413, tooLarge]);
        assert.deepEqual(app.reached, []);
      }
    });

    test("a body a server could read otherwise (a charset, an encoding, another type) is refused 415, and never reaches the app", async () => {
      // As UTF-8 one harmless argument; as UTF-7 (which express.json() decodes) a bare `_meta.userIntent` (WIRE-6).
      const smuggled = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"s":"'
        + '+ACIAfQ-,+ACIAXw-meta+ACI-:+AHsAIg-userIntent+ACI-:+ACI-secret+ACI-,+ACI-x+ACI-:+ACI-"}}}';
      for (const [headers, code] of [
        [{ "content-type": "application/json; charset=utf-7" }, "unsupported-charset"],
        [{ ...JSON_TYPE, "content-encoding": "gzip" }, "unsupported-encoding"],
        [{ "content-type": "text/plain" }, "unsupported-media-type"],
        [{}, "unsupported-media-type"],
      ]) {
        const app = recorder();
        const answer = await behind(stack, { policy: { userIntent: "redact" } }, app, (url) => send(url, { body: smuggled, headers }));
        assert.equal(answer.status, 415, code);
        assert.match(answer.body, new RegExp(`^\\{"jsonrpc":"2.0","id":null,"error":\\{"code":-32600,"message":"[^"]+","data":\\{"code":"${code}"\\}\\}\\}$`));
        assert.deepEqual(app.reached, []);
      }
      // UTF-8 JSON, however its headers spell it, goes on byte for byte.
      const app = recorder();
      await behind(stack, {}, app, (url) => send(url, { body: smuggled, headers: { "content-type": 'Application/JSON; Charset="UTF-8"' } }));
      assert.equal(app.reached[0].body, smuggled);
    });

    test("a failing sink refuses the body, answering each request with its id, and the app never sees it", async (t) => {
      // The operator is told on stderr, once a body, without the failure's text (it may quote an intent).
      const said = t.mock.method(console, "error", () => {});
      const failing = () => { throw new Error(`the audit store is full, could not keep ${SECRET}`); };
      const failingLater = async () => { await Promise.resolve(); failing(); };
      const cases = [
        [CALL, 200, auditError("12345678901234567890")],
        // The refused request keeps the filter's reply; the one that would go on gets the error.
        [`[${CALL},${NOTIFICATION},${tooDeep(2)}]`, 200, `[${TOO_DEEP},${auditError("12345678901234567890")}]`],
        // Nothing to answer a notification with: the client still learns.
        [NOTIFICATION, 500, auditError("null")],
      ];
      for (const audit of [failing, failingLater]) {
        for (const [body, status, expected] of cases) {
          const app = recorder();
          const answer = await behind(stack, { audit }, app, (url) => send(url, { body }));
          assert.deepEqual([answer.status, answer.body], [status, expected]);
          assert.deepEqual(app.reached, []);
        }
      }
      // A sink's own code is the answer's.
      const readOnly = () => { throw Object.assign(new Error("read-only"), { code: "store-read-only" }); };
      const answer = await behind(stack, { audit: readOnly }, recorder(), (url) => send(url, { body: CALL }));
      assert.equal(answer.body, auditError("12345678901234567890", "store-read-only"));
      // Each exchange's outcome goes to the sink too, once the answer is sent: its failure there is said apart.
      const bodies = said.mock.calls.map((call) => call.arguments.join(" ")).filter((line) => !line.includes("outcome"));
      assert.deepEqual(bodies, [
        ...Array(2).fill(["1", "3", "1"]).flat().map((n) => `mcp-provenance: a body of ${n} message(s) refused: its audit failed (Error, code "audit-failed")`),
        'mcp-provenance: a body of 1 message(s) refused: its audit failed (Error, code "store-read-only")',
      ]);
    });

    test("a middleware that fails itself (a principal that throws) answers 500, and the app never sees the body", async (t) => {
      const said = t.mock.method(console, "error", () => {});
      const app = recorder();
      const principal = () => { throw Object.assign(new TypeError(`no user in ${SECRET}`), { code: "no-user" }); };
      const answer = await behind(stack, { principal }, app, (url) => send(url, { body: CALL }));
      assert.deepEqual([answer.status, answer.body], [500, '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the provenance middleware failed","data":{"code":"middleware-failed"}}}']);
      assert.deepEqual(app.reached, []);
      assert.deepEqual(said.mock.calls.map((call) => call.arguments.join(" ")), ['mcp-provenance: the middleware failed (TypeError, code "no-user")']);
    });

    test("GET, DELETE and other methods reach the app as they came", async () => {
      const app = recorder({ headers: { "content-type": "text/plain" }, pieces: ["as it was"] });
      await behind(stack, {}, app, async (url) => {
        for (const [method, headers] of [["GET", { accept: "text/event-stream" }], ["DELETE", {}], ["PUT", { "content-type": "text/plain" }]]) {
          const answer = await send(url, { method, headers, body: method === "PUT" ? "not json" : undefined });
          assert.deepEqual([answer.status, answer.body], [200, "as it was"], method);
        }
      });
      assert.deepEqual(app.reached.map((r) => r.body), ["", "", "not json"]);
    });
  });
}

describe("the middleware, mounted where it cannot see the body", () => {
  test("after a body parser: the body is refused, never passed on unchecked", async () => {
    const server = express();
    const reached = [];
    server.use(express.json());
    server.use(provenanceMiddleware());
    server.post("/mcp", (req, res) => { reached.push(req.body); res.json({}); });
    const http = createServer(server);
    await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const answer = await send(`http://127.0.0.1:${http.address().port}/mcp`, { body: CALL });
      assert.equal(answer.status, 500);
      assert.equal(answer.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the body was read before the provenance middleware: mount it before any body parser","data":{"code":"body-already-read"}}}');
      assert.deepEqual(reached, []);
    } finally {
      http.close();
    }
  });
});

describe("the middleware's options", () => {
  test("bad options fail when the middleware is made, each with a code", () => {
    for (const [options, code] of [
      [{ policy: { maxIntentBytes: 3 } }, "invalid-limit"],
      [{ maxBodyBytes: 0 }, "invalid-limit"],
      [{ maxAnswerBytes: 1.5 }, "invalid-limit"],
      // Not a number at all: the core says what type it must be.
      [{ maxSessions: true }, "invalid-option"],
      [{ maxDepth: 4 }, "invalid-limit"],
      [{ echo: "yes" }, "invalid-option"],
      // A path is a file sink; anything else not a function is refused.
      [{ audit: { write() {} } }, "invalid-option"],
      [{ audit: 7 }, "invalid-option"],
      [{ audit: "" }, "invalid-option"],
      [{ metrics: () => {} }, "invalid-option"],
      [{ metrics: { observe() {}, refused() {}, failed() {} } }, "invalid-option"],
      [{ principal: "alice" }, "invalid-option"],
      [{ maxBodyByte: 10 }, "unknown-option"],
      [{ userIntent: "redact" }, "unknown-option"],
    ]) {
      for (const make of [provenanceMiddleware, (given) => provenanceFetch(() => new Response(null), given)]) {
        assert.throws(() => make(options), (error) => error instanceof RangeError && error.code === code, JSON.stringify(options));
      }
    }
    assert.throws(() => provenanceMiddleware("redact"), { name: "TypeError", code: "invalid-type" });
    assert.throws(() => provenanceFetch({ fetch() {} }), { name: "TypeError", code: "invalid-type" });
  });

  test("a sink that declares no second parameter is given no line: a line costs what its message weighs", async () => {
    const given = [];
    const accountsOnly = function (account) {
      // What it was called with, beyond what it declares.
      given.push([account.kind, arguments.length, arguments[1]]);
    };
    await behind(STACKS["node:http"], { audit: accountsOnly }, recorder(), (url) => send(url, { body: `[${CALL},${NOTIFICATION}]` }));
    for (const deadline = Date.now() + 1000; given.length < 3 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(given, [["request", 2, undefined], ["notification", 2, undefined], ["outcome", 2, undefined]]);
  });

  test("without a sink or metrics, no record is made unless the app asks exchangeOf: then the records a sink is handed", async () => {
    const asked = [];
    const stack = (options) => listen(createServer((req, res) => provenanceMiddleware(options)(req, res, async () => {
      for await (const _ of req);
      const exchange = exchangeOf(req);
      asked.push({ receivedAt: exchange.receivedAt, accounts: exchange.accounts });
      res.writeHead(200, JSON_TYPE).end(result("12345678901234567890"));
    })));
    const body = `[${CALL},${NOTIFICATION}]`;
    await behind(stack, { policy: { userIntent: "redact" } }, undefined, (url) => send(url, { body, headers: { ...JSON_TYPE, "mcp-session-id": "unknown" } }));
    const sink = accounts();
    await behind(STACKS["node:http"], { policy: { userIntent: "redact" }, audit: sink }, recorder(), (url) => send(url, { body, headers: { ...JSON_TYPE, "mcp-session-id": "unknown" } }));
    const [{ receivedAt, accounts: made }] = asked;
    assert.deepEqual(made.map((account) => [account.kind, account.record?.clientAsserted.userIntentRedacted, account.record?.witnessed]),
      [["request", true, { receivedAt }], ["notification", undefined, { receivedAt }]]);
    const when = (account) => ({ ...account, record: { ...account.record, witnessed: {} } });
    assert.deepEqual(made.map(when), sink.kept.map(({ account }) => when(account)));
  });

  test("options are read once: a getter that changes its answer does not change the middleware made", async () => {
    let reads = 0;
    const options = { get policy() { return reads++ === 0 ? { userIntent: "redact" } : undefined; } };
    const app = recorder();
    await behind(STACKS["node:http"], options, app, (url) => send(url, { body: CALL }));
    assert.equal(reads, 1);
    assert.equal(app.reached[0].body, REDACTED);
  });
});
