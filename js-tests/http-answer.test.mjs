// mcp-provenance/http on the way back, and what it records as witnessed,
// in the three stacks of http-stacks.mjs: only `turnId` echoed into each
// result (a JSON answer whole, an event stream event by event as it comes),
// the filter's replies joined to the app's answer whatever its form, nothing
// passed on that could not be read, a session or principal recorded only
// when the server established it (AI-10), and once the answer is over, the
// exchange's outcome: what each request got, as the client got it.
import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import { hostname } from "node:os";
import { describe, test } from "node:test";

import { provenanceMiddleware } from "../pkg/dist/http.mjs";

import {
  EVENTS_TYPE, JSON_TYPE, KEY, STACKS, TOO_DEEP,
  accounts, event, notJson, recorder, result, send, tooDeep,
} from "./http-stacks.mjs";

/** Runs `check(url)` against `app` behind the middleware made with `options` in `stack`, then closes it. */
async function behind(stack, options, app, check, auth) {
  const server = await stack(options, app, auth);
  try {
    return await check(server.url);
  } finally {
    await server.close();
  }
}

/** A call whose request carried `turnId` t-1. */
const CALLED = `{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"q","_meta":{"${KEY}":{"turnId":"t-1"}}}}`;
/** An answer whose handler put the whole envelope, another turn's, in its result. */
const CARELESS = `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"n":1e400,"_meta":{"${KEY}":{"turnId":"other","userIntent":{"text":"leak"}},"x":1}}}`;
/** The same answer as the client gets it: the request's turnId, and nothing else of the envelope (AI-11). */
const ECHOED = `{"jsonrpc":"2.0","id":12345678901234567890,"result":{"n":1e400,"_meta":{"${KEY}":{"turnId":"t-1"},"x":1}}}`;
const PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
/** A call whose request carried turnId t-1 and an intent, and the call as a redacting filter forwards it. */
const SECRET_CALL = CALLED.replace('{"turnId":"t-1"}', '{"turnId":"t-1","userIntent":{"text":"secret"}}');
const REDACTED_CALL = CALLED.replace('{"turnId":"t-1"}', '{"turnId":"t-1","userIntent":{"redacted":true}}');

/**
 * POSTs `body` and reads the answer as it comes, resolving `seen` once
 * `awaited` has arrived; the whole answer.
 */
function streamed(url, body, awaited, seen) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { ...JSON_TYPE, accept: "application/json, text/event-stream" } }, (res) => {
      let received = "";
      res.setEncoding("utf8").on("data", (chunk) => {
        received += chunk;
        if (received.includes(awaited)) seen();
      }).on("end", () => resolve(received));
    });
    req.on("error", reject);
    req.end(body);
  });
}

for (const [name, stack] of Object.entries(STACKS)) {
  describe(`the middleware in ${name}, on the way back`, () => {
    test("a JSON answer carries only the request's turnId, its length made right; echo: false leaves it as the app made it", async () => {
      for (const pieces of [[CARELESS.slice(0, 20), CARELESS.slice(20)], [CARELESS]]) {
        const app = recorder({ headers: { ...JSON_TYPE, "content-length": String(CARELESS.length), "mcp-session-id": "s-1" }, pieces });
        const answer = await behind(stack, {}, app, (url) => send(url, { body: CALLED }));
        assert.deepEqual([answer.status, answer.body], [200, ECHOED]);
        assert.equal(answer.headers["content-length"], String(ECHOED.length));
        assert.equal(answer.headers["mcp-session-id"], "s-1");
        const asMade = await behind(stack, { echo: false }, app, (url) => send(url, { body: CALLED }));
        assert.equal(asMade.body, CARELESS);
      }
    });

    test("an event stream is echoed event by event, as it comes", { timeout: 10_000 }, async () => {
      let seen;
      const firstEventsSeen = new Promise((resolve) => { seen = resolve; });
      const [first, rest] = CARELESS.split(',"result"');
      const app = recorder({
        headers: EVENTS_TYPE,
        pieces: [
          // A priming event (an id, no data), a comment, then a notification, the answer cut mid-event.
          `id: 0\ndata:\r\n\r\n: keep-alive\n\nevent: message\nid: 1\ndata: ${PROGRESS}\n\nevent: mess`,
          // Not before the client has the events the stream held whole: were they held back, this would wait for ever.
          // The answer's data on two lines, split where JSON has whitespace; the event's end cut between a CR and its LF.
          () => firstEventsSeen.then(() => `age\nid: 2\nretry: 10\ndata: ${first}\ndata: ,"result"${rest}\r\n\r`),
          "\n",
        ],
      });
      const body = await behind(stack, {}, app, (url) => streamed(url, CALLED, `${PROGRESS}\n\n`, seen));
      const [echoedFirst, echoedRest] = ECHOED.split(',"result"');
      assert.equal(body, `id: 0\ndata:\r\n\r\n: keep-alive\n\nevent: message\nid: 1\ndata: ${PROGRESS}\n\n`
        // Its fields kept in their order, its data on the lines it came on, echoed.
        + `event: message\nid: 2\nretry: 10\ndata: ${echoedFirst}\ndata: ,"result"${echoedRest}\r\n\r\n`);
    });

    test("a batch's replies join the app's answer whatever its form, echoing or not", async () => {
      const batch = `[{"jsonrpc":"2.0","id":1,"method":"ping"},${tooDeep(2)}]`;
      const [one, three] = [result(1), result(3)];
      const cases = [
        [200, JSON_TYPE, ["  \n", "[", " \r\n", `${one} `, "]\n"], `[${TOO_DEEP},${one} ]\n`],
        [200, JSON_TYPE, [`[${one},`, `${three}]`], `[${TOO_DEEP},${one},${three}]`],
        [200, JSON_TYPE, [" ", one], `[${TOO_DEEP},${one}]`],
        [200, JSON_TYPE, ["[", "  ]"], `[${TOO_DEEP}]`],
        [202, {}, [], `[${TOO_DEEP}]`],
        [503, { "content-type": "text/html" }, ["<html>busy</html>"], `[${TOO_DEEP},${notJson(1)}]`],
      ];
      for (const [status, headers, pieces, expected] of cases) {
        for (const echo of [true, false]) {
          const app = recorder({ status, headers: { ...headers, "mcp-session-id": "s-1" }, pieces });
          const answer = await behind(stack, { echo }, app, (url) => send(url, { body: batch }));
          assert.deepEqual(app.reached.map((r) => r.body), ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]']);
          assert.deepEqual([answer.status, answer.body], [200, expected], JSON.stringify({ pieces, echo }));
          assert.equal(answer.headers["content-type"], "application/json");
          assert.equal(answer.headers["mcp-session-id"], "s-1");
        }
      }
      // An event stream gets the replies as events of their own, first.
      const app = recorder({ headers: EVENTS_TYPE, pieces: [event(one)] });
      const answer = await behind(stack, {}, app, (url) => send(url, { body: batch }));
      assert.equal(answer.body, event(TOO_DEEP) + event(one));
      assert.match(answer.headers["content-type"], /^text\/event-stream/);
    });

    test("an answer that cannot be read is not passed on: each request gets an error instead", async () => {
      const limit = '{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32603,"message":"the server\'s answer is larger than 64 bytes","data":{"code":"answer-too-large"}}}';
      const eventLimit = limit.replace("the server's answer", "an event of the server's answer");
      const eventNotJson = notJson("12345678901234567890", "an event of the server's answer");
      const cases = [
        [JSON_TYPE, ['{"jsonrpc":"2.0",', '"id":12345678901234567890,"result":{', `"text":"${"x".repeat(100)}"}}`], limit],
        [JSON_TYPE, ["<html>busy</html>"], notJson("12345678901234567890")],
        [JSON_TYPE, ['"a JSON string"'], notJson("12345678901234567890")],
        [EVENTS_TYPE, [event("{}"), `data: ${"x".repeat(100)}`, `\n\n${event("{}")}`], event("{}") + event(eventLimit)],
        [EVENTS_TYPE, [`${event("{}")}data: <html>\n\n${event("{}")}`], event("{}") + event(eventNotJson)],
      ];
      for (const [headers, pieces, expected] of cases) {
        const app = recorder({ headers, pieces });
        const answer = await behind(stack, { maxAnswerBytes: 64 }, app, (url) => send(url, { body: CALLED }));
        assert.deepEqual([answer.status, answer.body], [200, expected], JSON.stringify(pieces));
      }
    });
    test("an event stream opening with a byte-order mark is read as the clients read it: its event echoed", async () => {
      // A client's decoder drops the mark, and reads the first line as `data`: the envelope would reach it.
      const app = recorder({ headers: EVENTS_TYPE, pieces: [`\ufeffdata: ${CARELESS}\n\n`] });
      const answer = await behind(stack, {}, app, (url) => send(url, { body: CALLED }));
      assert.deepEqual([answer.status, answer.body], [200, `\ufeffdata: ${ECHOED}\n\n`]);
    });

    test("an answer a client may read otherwise (another charset, another JSON media type) is not passed on", async () => {
      const unreadable = '{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32603,"message":"the server\'s answer is in a form '
        + 'the middleware does not read (its Content-Type, charset or Content-Encoding)","data":{"code":"answer-unreadable"}}}';
      for (const type of ["application/json; charset=utf-16", "application/json-rpc"]) {
        const app = recorder({ headers: { "content-type": type }, pieces: [CARELESS] });
        const answer = await behind(stack, {}, app, (url) => send(url, { body: CALLED }));
        assert.deepEqual([answer.status, answer.headers["content-type"], answer.body], [200, "application/json", unreadable], type);
      }
    });

    test("a result is matched to its request as the clients match it: `1.0` and `\"1\"` answer request 1", async () => {
      const call = (id, turn) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"q","_meta":{"${KEY}":{"turnId":"${turn}"}}}}`;
      const answered = (id, turn) => `{"jsonrpc":"2.0","id":${id},"result":{"_meta":{"${KEY}":{"turnId":"${turn}"}}}}`;
      for (const id of ["1.0", '"1"']) {
        const app = recorder({ pieces: [`[${answered(id, "server")},${answered(2, "server")}]`] });
        const answer = await behind(stack, {}, app, (url) => send(url, { body: `[${call(1, "t-1")},${call(2, "t-2")}]` }));
        assert.equal(answer.body, `[${answered(id, "t-1")},${answered(2, "t-2")}]`, id);
      }
    });

    test("a GET stream that resumes a POST's in an issued session is echoed for the POST's requests", async () => {
      const app = recorder();
      const sent = await behind(stack, {}, app, async (url) => {
        /** Sends `method` with `body` in session s-1, the app answering `headers` and `pieces`. */
        const exchange = (method, body, headers, pieces) => {
          Object.assign(app, { headers: { ...headers, "mcp-session-id": "s-1" }, pieces });
          return send(url, { method, body, headers: { ...(body && JSON_TYPE), "mcp-session-id": "s-1" } });
        };
        await exchange("POST", '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}', JSON_TYPE, [result(0)]);
        // The POST's own stream ends after its priming event: the client resumes it with a GET.
        await exchange("POST", CALLED, EVENTS_TYPE, ["id: 1\ndata:\n\n"]);
        return exchange("GET", undefined, EVENTS_TYPE, [`id: 2\ndata: ${CARELESS}\n\n`]);
      });
      assert.equal(sent.body, `id: 2\ndata: ${ECHOED}\n\n`);
    });

    test("a request to a path outside `paths` goes on unfiltered, both ways", async () => {
      for (const [paths, reached, expected] of [[["/other"], SECRET_CALL, CARELESS], [["/mcp"], REDACTED_CALL, ECHOED]]) {
        const app = recorder({ pieces: [CARELESS] });
        const answer = await behind(stack, { paths, policy: { userIntent: "redact" } }, app, (url) => send(url, { body: SECRET_CALL }));
        assert.deepEqual([app.reached[0].body, answer.body], [reached, expected], JSON.stringify(paths));
      }
    });
  });

  describe(`the middleware in ${name}, the outcome`, () => {
    /** A call of the tool `tool`, its request `id`. */
    const call = (id, tool = "q") => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","_meta":{"${KEY}":{"turnId":"t-${id}"}}}}`;
    const unknown = (id, code = -32602) => `{"jsonrpc":"2.0","id":${id},"error":{"code":${code},"message":"Unknown tool"}}`;
    /** An outcome less what changes from run to run, checked: its line is the account; the worker is this process. */
    const settled = ({ account, line }) => {
      assert.deepEqual(JSON.parse(line), account);
      const { ms, pid, host, receivedAt, ...rest } = account;
      assert.ok(ms >= 0 && ms < 60_000, line);
      assert.deepEqual([pid, host], [process.pid, hostname()]);
      assert.match(receivedAt ?? "2000-01-01T00:00:00.000Z", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      return rest;
    };

    test("once the answer is over, the sink gets the exchange's outcome: a refused call reads as its error, never as served", async () => {
      const sink = accounts();
      const order = [];
      const audit = (account, line) => {
        order.push(account.kind);
        sink(account, line);
      };
      const app = recorder({ pieces: [() => { order.push("answered"); return `[${result(1)},${unknown(2, -32601)}]`; }] });
      const answer = await behind(stack, { audit }, app, (url) => send(url, { body: `[${call(1)},${call(2, "nope")}]` }));
      assert.equal(answer.status, 200);
      const outcome = await sink.outcome(1);
      assert.deepEqual(order, ["request", "request", "answered", "outcome"]);
      assert.deepEqual(settled(outcome), { kind: "outcome", status: 200, requests: [{ id: 1, answer: "result" }, { id: 2, answer: "error", code: -32601 }] });
      assert.equal(outcome.account.receivedAt, sink.kept[0].account.record.witnessed.receivedAt);
    });

    test("an event stream's answer, the middleware's own answer, a body of notifications: each its outcome", async () => {
      const sink = accounts();
      const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';
      const cases = [
        [{}, recorder({ headers: EVENTS_TYPE, pieces: [event(progress), event(unknown(3))] }), call(3),
          { kind: "outcome", status: 200, requests: [{ id: 3, answer: "error", code: -32602 }] }],
        // An answer no client reads a message from: the request's is unseen.
        [{}, recorder({ headers: { "content-type": "text/html" }, pieces: ["<html>busy</html>"] }), call(4),
          { kind: "outcome", status: 200, requests: [{ id: 4, answer: "unseen" }] }],
        [{}, recorder({ headers: { "content-type": "application/json; charset=utf-16" }, pieces: [result(5)] }), call(5),
          { kind: "outcome", status: 200, refused: "answer-unreadable", requests: [{ id: 5, answer: "error", code: -32603 }] }],
        [{ maxBodyBytes: 256 }, recorder(), call(6, "x".repeat(300)),
          { kind: "outcome", status: 413, refused: "body-too-large", requests: [] }],
        [{}, recorder({ status: 202, headers: {}, pieces: [] }), '{"jsonrpc":"2.0","method":"notifications/initialized"}',
          { kind: "outcome", status: 202, requests: [] }],
      ];
      for (const [[options, app, body, expected], n] of cases.map((each, at) => [each, at + 1])) {
        await behind(stack, { ...options, audit: sink }, app, (url) => send(url, { body }));
        assert.deepEqual(settled(await sink.outcome(n)), expected, body.slice(0, 60));
      }
    });

    test("a client gone before the answer's end: its outcome says what it got so far", { timeout: 10_000 }, async () => {
      const sink = accounts();
      let gone;
      const left = new Promise((resolve) => { gone = resolve; });
      // The app's stream waits, after a notification, until the client has left.
      const app = recorder({ headers: EVENTS_TYPE, pieces: [event('{"jsonrpc":"2.0","method":"notifications/progress"}'), () => left.then(() => event(result(7)))] });
      await behind(stack, { audit: sink }, app, (url) => new Promise((resolve) => {
        const req = request(url, { method: "POST", headers: { ...JSON_TYPE, accept: "application/json, text/event-stream" } }, (res) => {
          res.once("data", () => req.destroy());
        });
        req.on("close", () => sink.outcome(1).then(() => { gone(); resolve(); }));
        req.on("error", () => {});
        req.end(call(7));
      }));
      assert.deepEqual(settled(sink.outcomes[0]), { kind: "outcome", status: 200, requests: [{ id: 7, answer: "unseen" }] });
    });

    test("a sink that fails on an outcome changes nothing of the answer sent: stderr says so once", async (t) => {
      const said = t.mock.method(console, "error", () => {});
      const audit = (account) => {
        if (account.kind === "outcome") throw Object.assign(new Error(`could not keep ${SECRET_CALL}`), { code: "store-down" });
      };
      const app = recorder({ pieces: [unknown(8)] });
      const answer = await behind(stack, { audit }, app, (url) => send(url, { body: call(8) }));
      assert.deepEqual([answer.status, answer.body], [200, unknown(8)]);
      for (const deadline = Date.now() + 1000; said.mock.callCount() === 0 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.deepEqual(said.mock.calls.map((said) => said.arguments.join(" ")), [
        'mcp-provenance: an exchange\'s outcome was not kept: its audit failed (Error, code "store-down")',
      ]);
    });
  });

  describe(`the middleware in ${name}, witnessing`, () => {
    test("a session id is witnessed once the app issued it, and no more once it ended", async () => {
      const ISSUED = "session-the-app-issued";
      const sink = accounts();
      const app = recorder();
      const call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q"}}';
      await behind(stack, { audit: sink }, app, async (url) => {
        /** Sends `body` naming `session`, the app answering `status` and issuing `issues`. */
        const post = (body, session, status, issues, method = "POST") => {
          Object.assign(app, { status, headers: { ...JSON_TYPE, ...(issues && { "mcp-session-id": issues }) } });
          return send(url, { method, body, headers: { ...JSON_TYPE, ...(session && { "mcp-session-id": session }) } });
        };
        await post('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}', undefined, 200, ISSUED);
        await post(call, "a-session-the-client-made-up", 404);
        await post(call, ISSUED, 200, ISSUED);
        await post(undefined, ISSUED, 200, undefined, "DELETE");
        await post(call, ISSUED, 200, ISSUED);
      });
      // Every header went on: the app decides what a session is.
      assert.deepEqual(app.reached.map((r) => r.headers["mcp-session-id"]), [undefined, "a-session-the-client-made-up", ISSUED, ISSUED, ISSUED]);
      assert.deepEqual(sink.witnessed().map((w) => w.sessionId), [undefined, undefined, ISSUED, undefined]);
      assert.ok(sink.witnessed().every((w) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(w.receivedAt)));
    });

    test("a 404 forgets no session, and memory is bounded", async () => {
      const sink = accounts();
      const app = recorder();
      await behind(stack, { audit: sink, maxSessions: 2, echo: false }, app, async (url) => {
        /** Posts in `session`, the app answering `status` and issuing `issues`; the session the record witnessed. */
        const post = async (session, status = 200, issues = undefined) => {
          Object.assign(app, { status, headers: { ...JSON_TYPE, ...(issues && { "mcp-session-id": issues }) } });
          await send(url, { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}', headers: { ...JSON_TYPE, "mcp-session-id": session } });
          return sink.witnessed().at(-1).sessionId;
        };
        for (const issued of ["a", "b", "c"]) await post("-", 200, issued);
        // Two remembered: the one issued longest ago is forgotten.
        assert.deepEqual([await post("a"), await post("b"), await post("c")], [undefined, "b", "c"]);
        // Anyone who knows a session id can draw a 404 naming it: that ends nothing.
        await post("b", 404);
        assert.deepEqual([await post("b"), await post("c")], ["b", "c"]);
      });
    });

    test("the principal is the identity the stack authenticated, never a header", async () => {
      const sink = accounts();
      const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
      const headers = { ...JSON_TYPE, "x-user": "mallory", authorization: "Bearer mallory" };
      for (const auth of [{ clientId: "alice", token: "t", scopes: [] }, undefined]) {
        await behind(stack, { audit: sink }, recorder(), (url) => send(url, { body: ping, headers }), auth);
      }
      // Where the identity is not the token's client, a function finds it: here, the scopes it was granted.
      const principal = (request, given) => {
        const auth = given?.authInfo ?? request.auth;
        return auth && `${auth.clientId} (${auth.scopes.join(" ")})`;
      };
      const auth = { clientId: "bob", token: "t", scopes: ["mcp:read"] };
      await behind(stack, { audit: sink, principal }, recorder(), (url) => send(url, { body: ping, headers }), auth);
      assert.deepEqual(sink.witnessed().map((w) => w.principal), ["alice", undefined, "bob (mcp:read)"]);
    });
  });
}

describe("the middleware in node:http, an answer's head", () => {
  /** The headers a client gets from `answer(res)` on node:http, behind the middleware or not, but those of framing. */
  async function headersOf(answer, behindIt) {
    const provenance = provenanceMiddleware({});
    const server = createServer((req, res) => (behindIt ? provenance(req, res, () => answer(res)) : answer(res)));
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const got = await new Promise((resolve, reject) => {
        request(`http://127.0.0.1:${server.address().port}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
          res.resume().on("end", () => resolve(res.rawHeaders));
        }).on("error", reject).end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
      });
      const framing = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);
      return got.flatMap((item, at) => (at % 2 === 0 && !framing.has(item.toLowerCase()) ? [[item.toLowerCase(), got[at + 1]]] : []));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }

  test("the headers given to writeHead are put with those set before as Node puts them", async () => {
    const answers = [
      (res) => {
        res.setHeader("X-A", "1");
        res.setHeader("x-b", ["1", "2"]);
        res.writeHead(200, { "x-a": "2", "Content-Type": "application/json", "X-C": "3" }).end(result(1));
      },
      (res) => {
        res.setHeader("x-a", "1");
        res.setHeader("x-b", "1");
        res.writeHead(200, ["X-A", "2", "x-a", "3", "content-type", "application/json"]).end(result(1));
      },
    ];
    for (const answer of answers) {
      const alone = await headersOf(answer, false);
      assert.deepEqual(await headersOf(answer, true), alone);
      assert.ok(alone.length >= 3);
    }
  });
});
