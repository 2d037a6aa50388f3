// mcp-provenance/gateway: the wire filter as a gateway calls it, one body at
// a time, each item of issue 17's "Why" as the attack or mistake it was:
// what goes on is exactly what came but for what a rule changed; the
// decisions are the core's, whatever the diagnostics list holds; every key
// and every message is accounted for; and nothing hostile makes it throw.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, test } from "node:test";

import { createFilter } from "../pkg/dist/gateway.mjs";
import { start } from "../pkg/dist/lib/filter.mjs";
import * as glue from "../pkg/dist/lib/glue-filter.mjs";
import { AI_INVOCATION_KEY as KEY, UI_KEY } from "../pkg/dist/index.mjs";

const accounts = (out) => out.lines.map((line) => JSON.parse(line));
const envelope = (fields) => `"_meta": {"${KEY}": ${JSON.stringify(fields)}}`;

test("a valid body goes on byte for byte: big integers, 1e400, 1.10, escapes, spacing, member order", () => {
  const body = `{"jsonrpc": "2.0",  "id": 1234567890123456789, "method": "tools/call",
    "params": {"arguments": {"message_id": 1234567890123456789, "n": 1e400, "price": 1.10, "s": "caf\\u00e9\\ud800", "z": 1, "a": 2},
    ${envelope({ turnId: "t-1", userIntent: { text: "line\nbreak" } })}}}`;
  const filter = createFilter();
  const out = filter(body, { sessionId: "s-1" });
  assert.equal(out.forward, body, "the very string");
  const bytes = new TextEncoder().encode(body);
  assert.equal(filter(bytes).forward, bytes, "the very bytes");
  const [account] = accounts(out);
  assert.equal(account.kind, "request");
  assert.equal(account.record.clientAsserted.userIntent, "line break");
  assert.equal(account.record.witnessed.sessionId, "s-1");
  assert.deepEqual(account.changes, []);
  assert.ok(out.lines[0].includes('"message_id": 1234567890123456789'), "the log line holds the message as forwarded");
});

test("a repair rewrites the envelope alone: every byte before and after it stays", () => {
  const head = `{"id": 100, "method": "tools/call", "params": {"arguments": {"big": 12345678901234567890}, "_meta": {"${KEY}": `;
  const tail = `, "x": [1.10]}}}`;
  const out = createFilter()(`${head}{ "turnId": 7, "model": {"name": "m"} }${tail}`);
  assert.equal(out.forward, `${head}{"model": {"name": "m"}}${tail}`);
  assert.deepEqual(accounts(out)[0].changes.map((c) => [c.action, c.rule]), [["dropped", "AI-7"]]);
});

test("bytes in, bytes out; bytes that are not UTF-8, or text with a lone surrogate, are refused whole", () => {
  const filter = createFilter({ policy: { userIntent: "redact" } });
  const out = filter(new TextEncoder().encode(`{"id":1,"method":"m","params":{${envelope({ userIntent: { text: "secret" } })}}}`));
  assert.ok(out.forward instanceof Uint8Array);
  assert.equal(new TextDecoder().decode(out.forward), `{"id":1,"method":"m","params":{"_meta": {"${KEY}": {"userIntent":{"redacted":true}}}}}`);
  for (const body of [new Uint8Array([0x7b, 0xff, 0x7d]), '{"id":1,"method":"\ud800"}']) {
    const refused = filter(body);
    assert.equal(refused.status, 400);
    assert.equal(JSON.parse(refused.reject).error.data.code, "parse-error");
  }
  assert.throws(() => filter({ id: 1 }), (error) => error instanceof TypeError && error.code === "invalid-type");
});

test("redacting, a bare _meta.userIntent is refused however many diagnostics come first", () => {
  const unknown = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`u${i}`, i]));
  const body = JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { _meta: { [KEY]: unknown, userIntent: { text: "secret" } } } });
  const out = createFilter({ policy: { userIntent: "redact" } })(body);
  assert.equal(out.status, 200);
  assert.deepEqual(JSON.parse(out.reject).error.data, { code: "bare-user-intent" });
  assert.ok(!out.reject.includes("secret") && !out.lines.join("").includes("secret"));
  assert.equal(createFilter()(body).forward, body, "not redacting, it goes on");
});

test("a vendor key and the standard key are both redacted and recorded", () => {
  const vendor = "com.example/aiInvocation";
  const body = JSON.stringify({ id: 1, method: "tools/call", params: { _meta: { [KEY]: { userIntent: { text: "one" } }, [vendor]: { turnId: "t", userIntent: { text: "two" } } } } });
  for (const invocationKeys of [[vendor], [vendor, KEY]]) {
    const out = createFilter({ invocationKeys, policy: { userIntent: "redact" } })(body);
    assert.ok(!out.forward.includes("one") && !out.forward.includes("two"), out.forward);
    assert.deepEqual(accounts(out)[0].changes.map((c) => c.path), [
      `/params/_meta/${KEY.replace("/", "~1")}/userIntent/text`,
      "/params/_meta/com.example~1aiInvocation/userIntent/text",
    ]);
  }
});

test("a misplaced or misspelt option is a RangeError with a code, never a policy silently not in force", () => {
  const refused = (options, code) => assert.throws(() => createFilter(options), (error) => error instanceof RangeError && error.code === code);
  refused({ userIntent: "redact" }, "unknown-option");
  refused({ policy: { invocationKey: "com.example/ai" } }, "unknown-option");
  refused({ polcy: {} }, "unknown-option");
  refused({ policy: { userIntent: "hide" } }, "invalid-option");
  refused({ invocationKeys: ["io.mcp/x"] }, "reserved-key");
  refused({ invocationKeys: ["com.example/x"], uiKeys: ["com.example/x"] }, "conflicting-keys");
  refused({ maxBatch: 0 }, "invalid-limit");
  assert.throws(() => createFilter({ userIntent: "redact" }), { message: "filter options have no option `userIntent`: policy options go in `policy`" });
});

test("responses and malformed messages are accounted for: a response's envelope keeps turnId alone when redacting", () => {
  const body = JSON.stringify([
    { jsonrpc: "2.0", id: "srv-1", result: { action: "accept", _meta: { [KEY]: { turnId: "t", userIntent: { text: "secret" } } } } },
    { jsonrpc: "2.0", id: 2, method: 5 },
    { jsonrpc: "2.0", id: 3, method: "ping" },
  ]);
  const out = createFilter({ policy: { userIntent: "redact" } })(body);
  const [response, malformed, request] = accounts(out);
  assert.equal(response.kind, "response");
  assert.deepEqual(response.message.result._meta[KEY], { turnId: "t" });
  assert.deepEqual(malformed, { index: 1, kind: "malformed", id: 2, refused: "invalid-request", valid: false, diagnostics: [{ code: "invalid-type", severity: "error", rule: "MSG-1", path: "/method", message: "`method` must be a string" }], changes: [] });
  assert.equal(request.record.method, "ping");
  assert.deepEqual(JSON.parse(out.forward).map((m) => m.id), ["srv-1", 3]);
  assert.deepEqual(out.replies.map((reply) => JSON.parse(reply)), [{ jsonrpc: "2.0", id: 2, error: { code: -32600, message: "not a JSON-RPC request, notification or response", data: { code: "invalid-request" } } }]);
});

test("a 20 KB message nested 10,000 deep is refused with too-deep; the good messages of its batch go on", () => {
  const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`;
  const good = '{"jsonrpc":"2.0","id":2,"method":"ping"}';
  const out = createFilter()(`[${deep},${good}]`);
  assert.equal(out.forward, `[${good}]`);
  assert.deepEqual(accounts(out).map((a) => a.refused), ["too-deep", undefined]);
  assert.deepEqual(JSON.parse(out.replies[0]).error.data, { code: "too-deep" });
  const alone = createFilter()(deep);
  assert.equal(alone.status, 200);
  assert.equal(JSON.parse(alone.reject).id, 1);
});

test("a 1 MB batch of 70,000 requests is refused whole with batch-too-large, and writes no line per message", () => {
  const body = `[${Array.from({ length: 70_000 }, (_, i) => `{"id":${i},"method":"m"}`).join(",")}]`;
  assert.ok(body.length > 1_000_000);
  const out = createFilter()(body);
  assert.equal(out.status, 413);
  assert.deepEqual(JSON.parse(out.reject).error.data, { code: "batch-too-large" });
  assert.deepEqual(out.lines, []);
  const bounded = `[${Array.from({ length: 1000 }, (_, i) => `{"id":${i},"method":"m"}`).join(",")}]`;
  assert.equal(createFilter()(bounded).forward, bounded, "1,000 (the default bound) go on");
});

test("duplicated members where a rule reads refuse the message: the filter and the server cannot disagree", () => {
  const filter = createFilter({ policy: { userIntent: "redact" } });
  const body = `{"id":1,"method":"tools/call","params":{"_meta":{"${KEY}":{"userIntent":{"text":"a","text":"secret"}}}}}`;
  const out = filter(body);
  assert.deepEqual(JSON.parse(out.reject).error.data, { code: "duplicate-member" });
  assert.equal(JSON.parse(out.reject).id, 1);
});

test("require gives the same filter; in CommonJS one filter module instance serves the gateway and http", () => {
  const require = createRequire(import.meta.url);
  const { createFilter: required } = require("../pkg/dist/gateway.cjs");
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [UI_KEY]: { initiator: "app" } } } });
  const plain = (out) => ({ ...out, lines: out.lines });
  assert.deepEqual(plain(required()(body)), plain(createFilter()(body)));
  // gateway.cjs carries the filter module's boundary; http.cjs requires it rather than a copy of the module.
  const carried = require("../pkg/dist/gateway.cjs")[Symbol.for("mcp-provenance.boundary")];
  assert.equal(typeof carried.call, "function");
  const read = (file) => require("node:fs").readFileSync(new URL(`../pkg/dist/${file}`, import.meta.url), "utf8");
  const base64 = (file) => /export const wasm = "([^"]+)"/.exec(read(file))[1];
  const exported = (file) => WebAssembly.Module.exports(new WebAssembly.Module(Buffer.from(base64(file), "base64"))).map((e) => e.name);
  // The filter module has the filter's class, the host module has not.
  assert.ok(exported("wasm-filter.mjs").includes("filter_new"));
  assert.ok(!exported("wasm-host.mjs").includes("filter_new"));
  const filterBytes = base64("wasm-filter.mjs");
  assert.match(read("http.cjs"), /require\("\.\/gateway\.cjs"\)/);
  assert.ok(!read("http.cjs").includes(filterBytes));
  assert.ok(!read("index.cjs").includes(filterBytes), "the main entry's CommonJS carries the host module only");
});

test("a filter made again with the same options is the same filter: the module holds one per set of options", () => {
  // A module of this test's own, to measure its memory.
  const { memory } = start();
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
  createFilter({ policy: { userIntent: "redact" } })(body);
  const before = memory.buffer.byteLength;
  for (let i = 0; i < 20_000; i++) createFilter({ policy: { userIntent: "redact" } })(body);
  assert.equal(memory.buffer.byteLength, before);
});

test("what a filter call allocates is taken back when the next begins: large and small bodies, errors between, memory steady", () => {
  const { memory } = start();
  const filter = createFilter({ policy: { userIntent: "redact" } });
  const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}`, note: "é".repeat(10) }));
  const large = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", arguments: { rows }, _meta: { [KEY]: { turnId: "t-1", userIntent: { text: "secret" } } } } });
  const small = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "t", _meta: { [KEY]: { userIntent: { text: "secret" } } } } });
  const plain = (out) => ({ ...out, lines: out.lines });
  const first = [plain(filter(large)), plain(filter(small))];
  assert.ok(!first[0].forward.includes("secret") && !first[1].forward.includes("secret"));
  // Each allocation of a call is the next one's: a refused context between leaves no trace.
  const refused = () => filter(small, { policy: {} });
  assert.throws(refused, (error) => error instanceof RangeError && error.code === "unknown-option");
  const held = memory.buffer.byteLength;
  for (let n = 0; n < 20; n++) {
    assert.deepEqual([plain(filter(large)), plain(filter(small))], first);
    assert.throws(refused, { code: "unknown-option" });
  }
  assert.equal(memory.buffer.byteLength, held);
});

test("a filter made before its module starts afresh (after a trap) is made again, from the options it read, and answers as before", () => {
  const filter = createFilter({ policy: { userIntent: "redact" } });
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", _meta: { [KEY]: { userIntent: { text: "secret" } } } } });
  const before = filter(body);
  assert.ok(!before.forward.includes("secret"));
  start();
  const after = filter(body);
  assert.equal(after.forward, before.forward);
  assert.equal(filter.echo('{"jsonrpc":"2.0","id":1,"result":{}}', after), '{"jsonrpc":"2.0","id":1,"result":{}}');
});

/** `run(made)`, each call of the module's `accounts` (a second filtering, for records made when read) pushed to `made`. */
function countingAccounts(run) {
  const made = [];
  const { accounts: makeAccounts } = glue.Filter.prototype;
  glue.Filter.prototype.accounts = function accounts(...given) {
    made.push(given);
    return makeAccounts.apply(this, given);
  };
  try {
    run(made);
  } finally {
    glue.Filter.prototype.accounts = makeAccounts;
  }
}

test("no record is made until an outcome's accounts are read: then once, of the bytes as they were filtered, even across a restart", () => {
  countingAccounts((made) => {
    const filter = createFilter({ policy: { userIntent: "redact" } });
    const text = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "q", _meta: { [KEY]: { turnId: "t-7", userIntent: { text: "mine" } } } } });
    const bytes = new TextEncoder().encode(text);
    const out = filter(bytes, { sessionId: "s-1" });
    assert.deepEqual([out.ids, out.turns.length, made.length], [["7"], 1, 0]);
    assert.equal(filter.echo('{"jsonrpc":"2.0","id":7,"result":{}}', out), `{"jsonrpc":"2.0","id":7,"result":{"_meta":{"${KEY}":{"turnId":"t-7"}}}}`);
    // The caller reuses its buffer, and the module starts afresh: the records are still of what was filtered.
    bytes.fill(0x20);
    start();
    const [account] = out.accounts.map((line) => JSON.parse(line));
    assert.equal(made.length, 1);
    assert.deepEqual([account.record.requestId, account.record.witnessed, account.record.clientAsserted.turnId], [7, { sessionId: "s-1" }, "t-7"]);
    assert.deepEqual(out.lines, createFilter({ policy: { userIntent: "redact" } })(text, { sessionId: "s-1" }).lines);
    assert.equal(out.accounts, out.accounts);
    assert.equal(made.length, 2, "the lines of the second outcome made its accounts; the first's are made once");
  });
});

test("a filter whose outcomes are read makes their records with them, one whose are not only when read; bytes past 4 KiB, at once", () => {
  countingAccounts((made) => {
    const filter = createFilter();
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q"}}';
    const lines = filter(body).lines;
    for (let n = 0; n < 20; n++) assert.deepEqual(filter(body).lines, lines);
    assert.equal(made.length, 1, "only the first, of a filter with no outcomes before, made apart");
    for (let n = 0; n < 100; n++) filter(body);
    assert.deepEqual(filter(body).lines, lines);
    assert.equal(made.length, 2, "after many outcomes unread, made apart again");
    // Past 4 KiB, the records are made with the outcome, whatever is read: no copy to make them of.
    const big = new TextEncoder().encode(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"q","arguments":{"rows":"${"r".repeat(4096)}"}}}`);
    const fresh = createFilter();
    const out = fresh(big);
    const expected = fresh(new TextDecoder().decode(big)).accounts;
    big.fill(0x20);
    assert.deepEqual(out.accounts, expected);
    assert.equal(made.length, 3, "the text's, made apart; the bytes', with their outcome");
    // Bytes that are not UTF-8 are kept as they are, and refused whole again when read.
    const notUtf8 = createFilter()(new Uint8Array([0x7b, 0xff, 0x7d]));
    assert.deepEqual([notUtf8.status, notUtf8.accounts, made.length], [400, [], 4]);
  });
});

test("each message's id as it came, for the gateway's own answers: a 20-digit id stays exact", () => {
  const out = createFilter()('[{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}, {"id":"r\\u0031","method":"ping"}, {"method":"notifications/x"}, {"id":1,"id":2,"method":"m"}]');
  assert.deepEqual(out.ids, ["12345678901234567890", '"r\\u0031"', undefined, undefined]);
});

describe("options are read once: the filter made is the filter its key names (issue 30, 11)", () => {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [KEY]: { userIntent: { text: "secret" } } } } });
  /** Whether a filter made now with `options`, plain, redacts the intent of `body`. */
  const redacts = (options) => !createFilter(options)(body).forward.includes("secret");

  test("a getter answering a policy on its first read and none after: no policy-less filter under the policy's key", () => {
    // maxBatch makes these options of this test alone, so that no filter is made under their key before.
    let reads = 0;
    const flipping = { maxBatch: 301, get policy() { return reads++ === 0 ? { userIntent: "redact" } : undefined; } };
    assert.ok(!createFilter(flipping)(body).forward.includes("secret"), "made from its first reading");
    assert.equal(reads, 1, "read once");
    assert.ok(redacts({ maxBatch: 301, policy: { userIntent: "redact" } }), "a plain call with those options redacts");
    // And the other way about: a policy-less reading does not take the redacting filter.
    reads = 0;
    const late = { maxBatch: 302, get policy() { return reads++ === 0 ? undefined : { userIntent: "redact" }; } };
    assert.ok(createFilter(late)(body).forward.includes("secret"));
    assert.ok(redacts({ maxBatch: 302, policy: { userIntent: "redact" } }));
  });

  test("a Proxy whose answers change from read to read is read once, and files nothing under another key", () => {
    let reads = 0;
    const policy = { userIntent: "redact" };
    const proxy = new Proxy({ maxBatch: 303, policy }, {
      get(target, name) {
        if (name !== "policy") return Reflect.get(target, name);
        reads += 1;
        return reads === 1 ? policy : undefined;
      },
    });
    assert.ok(!createFilter(proxy)(body).forward.includes("secret"));
    assert.equal(reads, 1);
    assert.ok(redacts({ maxBatch: 303, policy: { userIntent: "redact" } }));
    assert.ok(!redacts({ maxBatch: 303 }), "and the plain options without the policy have their own filter");
  });

  test("options that are not JSON are not cached: each call is refused, whatever a filter made before with their JSON", () => {
    createFilter({ maxBatch: 304 });
    for (const options of [{ maxBatch: 304, liftLegacy: () => true }, { maxBatch: 304, policy: { userIntent: "redact", maxIntentBytes: 10n } }]) {
      for (let round = 0; round < 2; round++) {
        assert.throws(() => createFilter(options), (error) => (error instanceof TypeError || error instanceof RangeError) && typeof error.code === "string");
      }
    }
    // A member that is undefined is absent, to the key as to the core.
    assert.ok(redacts({ maxBatch: 305, policy: { userIntent: "redact" }, liftLegacy: undefined }));
    assert.ok(redacts({ maxBatch: 305, policy: { userIntent: "redact" } }));
  });
});
