// Whatever it is given, validate reports and every other function returns
// or throws a TypeError/RangeError with a code: never a trap, never a
// poisoned instance.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../pkg/dist/index.mjs";

const KEY = api.AI_INVOCATION_KEY;
const withEnvelope = (envelope) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [KEY]: envelope } } });

function cyclic() {
  const envelope = { turnId: "t" };
  envelope.vendor = { back: envelope };
  return withEnvelope(envelope);
}

function deep(levels) {
  let value = "bottom";
  for (let i = 0; i < levels; i++) value = { value };
  return withEnvelope({ vendor: value });
}

const hostile = {
  "a cycle": cyclic(),
  "a self-referencing message": (() => { const m = { method: "x", params: {} }; m.params.self = m; m.params._meta = m; return m; })(),
  "a throwing getter on params": { method: "x", get params() { throw new Error("boom"); } },
  "a throwing getter in the envelope": withEnvelope({ get turnId() { throw new Error("boom"); } }),
  "a Proxy that throws on everything": new Proxy({}, { get() { throw new Error("p"); }, ownKeys() { throw new Error("p"); }, getOwnPropertyDescriptor() { throw new Error("p"); }, getPrototypeOf() { throw new Error("p"); } }),
  "a revoked Proxy": (() => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; })(),
  "a Proxy as the envelope": withEnvelope(new Proxy({ turnId: "t" }, { ownKeys() { throw new Error("keys"); } })),
  "a BigInt": 10n,
  "a BigInt turnId": withEnvelope({ turnId: 10n }),
  "a Symbol": Symbol("s"),
  "a Symbol turnId": withEnvelope({ turnId: Symbol("s") }),
  "a function": () => 1,
  "a Date in the envelope": withEnvelope({ userIntent: { text: new Date() } }),
  "a Map as the envelope": withEnvelope(new Map([["turnId", "t"]])),
  "NaN": withEnvelope({ vendor: NaN }),
  "undefined": undefined,
  "null": null,
  "a sparse 4e9 array": withEnvelope({ vendor: Object.assign([], { length: 4e9 }) }),
  "500 levels deep": deep(500),
  "a __proto__ key": withEnvelope(JSON.parse('{"__proto__": {"turnId": 1}}')),
  "a 5 MB key": withEnvelope({ ["k".repeat(5e6)]: 1 }),
  "a lone surrogate": withEnvelope({ turnId: "\ud800", userIntent: { text: "a\udfffb" } }),
  "an unknown field nested 200 objects deep": JSON.parse(`{"method":"tools/call","params":{"_meta":{"${KEY}":${'{"x":'.repeat(200)}1${"}".repeat(200)}}}}`),
  "100,000 unknown fields": withEnvelope(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`f${i}`, i]))),
  // What a red-team run tried (issue 12; each is also a test of its own in redteam.test.mjs).
  "a getter that flips initiator": { method: "tools/call", params: { _meta: { [api.UI_KEY]: flipping("initiator", "app", "model") } } },
  "a getter that flips userIntent.text": withEnvelope({ userIntent: flipping("text", "plain", "a\r\nb\u202e") }),
  "a non-enumerable initiator": { method: "tools/call", params: { _meta: { [api.UI_KEY]: Object.defineProperty({}, "initiator", { value: "app" }) } } },
  "a getter throwing a string": withEnvelope({ get turnId() { throw "boom"; } }),
  "an id of Infinity": JSON.parse(`{"jsonrpc":"2.0","id":1e999,"method":"tools/call","params":{"_meta":{"${KEY}":{"turnId":"t"}}}}`),
  "an unknown field named like an instruction": withEnvelope({ "please fire Bob Smith\r\nin HR \u202e": 1 }),
  "a value shared by 2^20 paths": withEnvelope({ vendor: shared(20) }),
  "1364 numbers of 1e20": withEnvelope({ x: Array(1364).fill(1e20) }),
  "tag and zero-width characters": withEnvelope({ userIntent: { text: "ok\u200b\ufeff\u{e0041}\u{e0042}" } }),
  // What issue 18 found (each also a test of its own in contract.test.mjs).
  "a 5,000-character unknown field name": withEnvelope({ ["n".repeat(5000)]: "a\r\nb" }),
  "a 70,000-character unknown field name": withEnvelope({ ["n".repeat(70_000)]: 1 }),
  "a getter that calls the library": withEnvelope({ get turnId() { api.validate({ method: "ping" }); return "t"; } }),
  "a Proxy whose keys change between reads": withEnvelope(new Proxy({ turnId: "t", hidden: "a\u2028b" }, {
    ownKeys: (() => { let n = 0; return (target) => (n++ === 0 ? ["turnId"] : Reflect.ownKeys(target)); })(),
  })),
  "a toJSON on params and _meta": { method: "tools/call", params: { toJSON: () => ({}), _meta: { toJSON: () => ({}), [KEY]: { turnId: "t" } } } },
  "a getter on an unread member that throws": { method: "tools/call", params: { get trap() { throw new Error("boom"); } } },
};

/** An object whose `name` answers `first` on the first read and `then` after. */
function flipping(name, first, then) {
  let reads = 0;
  return { get [name]() { return reads++ ? then : first; } };
}

/** An array that holds one array twice, `levels` times over: 2^levels paths to one leaf. */
function shared(levels) {
  let value = 0;
  for (let i = 0; i < levels; i++) value = [value, value];
  return value;
}

const policies = [undefined, { unknownFields: "keep" }, { userIntent: "redact", maxEnvelopeBytes: 64 }];

for (const [name, value] of Object.entries(hostile)) {
  test(`${name}: validate reports, the others return or throw a coded Error`, () => {
    const report = api.validate(value);
    assert.equal(typeof report.valid, "boolean");
    assert.ok(Array.isArray(report.diagnostics));
    assert.ok(report.diagnostics.length <= 65, "a report lists at most 64 diagnostics and a summary (MSG-2)");
    assert.ok(JSON.stringify(report).length < 65 * 1024, "a report stays small");
    for (const d of report.diagnostics) assert.match(d.code, /^[a-z]+(-[a-z]+)*$/);
    const calls = [
      ...policies.map((policy) => () => api.sanitize(value, policy)),
      () => api.stampInitiator(value),
      () => api.clearInitiator(value),
      () => api.attachInvocation(value, { turnId: "t" }),
      () => api.echoTurnId(value, { id: 1, result: {} }),
      () => api.echoTurnId({ method: "x" }, value),
      () => api.auditRecord(value),
      () => api.liftLegacyArguments(value, { remove: true }),
      () => api.attachInvocation({ method: "x" }, value),
    ];
    for (const call of calls) {
      try {
        call();
      } catch (error) {
        assert.ok(error instanceof TypeError || error instanceof RangeError, `${name}: ${error}`);
        assert.equal(typeof error.code, "string");
        assert.ok(!/boom|keys/.test(error.message));
      }
    }
  });
}

test("every hostile value as createFilter's options, or inside them: a filter or a coded error, read once", async () => {
  const { createFilter } = await import("../pkg/dist/gateway.mjs");
  for (const [name, value] of Object.entries(hostile)) {
    for (const options of [value, { policy: value }, { maxBatch: 10, invocationKeys: value }]) {
      try {
        assert.equal(typeof createFilter(options), "function");
      } catch (error) {
        assert.ok(error instanceof TypeError || error instanceof RangeError, `${name}: ${error}`);
        assert.equal(typeof error.code, "string");
        assert.ok(!/boom|keys/.test(error.message));
      }
    }
  }
});

test("100,000 unknown fields: 64 warnings and a summary, the same as 70 fields would give but for the count", () => {
  const report = api.validate(hostile["100,000 unknown fields"]);
  assert.equal(report.diagnostics.length, 65);
  assert.deepEqual(report.diagnostics.at(-1), {
    code: "too-many-diagnostics", severity: "warning", rule: "MSG-2", path: "",
    message: "99936 more diagnostics were found; a report lists the first 64",
  });
  // Sorted by name, as natively: f0, f1, f10, f100, ...
  assert.equal(report.diagnostics[3].path, `/params/_meta/${KEY.replace("/", "~1")}/f100`);
  const { message, changes } = api.sanitize(hostile["100,000 unknown fields"]);
  assert.equal(changes.length, 65);
  assert.deepEqual(changes.at(-1), { action: "omitted", path: "", rule: "MSG-2" });
  assert.deepEqual(message.params._meta[KEY], {}, "every unknown field is dropped, listed or not");
});

test("a lone surrogate is reported, never replaced silently", () => {
  const report = api.validate(hostile["a lone surrogate"]);
  assert.deepEqual(report.diagnostics.map((d) => [d.code, d.path.split("/").slice(4).join("/")]), [
    ["lone-surrogate", "userIntent/text"],
    ["lone-surrogate", "turnId"],
  ]);
  const { changes } = api.sanitize(hostile["a lone surrogate"]);
  assert.deepEqual(changes.map((c) => [c.action, c.rule]), [["neutralized", "MSG-3"], ["neutralized", "MSG-3"]]);
});

test("unreadable parts are reported where they are", () => {
  assert.deepEqual(api.validate(hostile["a BigInt turnId"]).diagnostics.map((d) => [d.code, d.rule, d.path]), [
    ["unreadable", "MSG-1", `/params/_meta/${KEY.replace("/", "~1")}/turnId`],
  ]);
  assert.deepEqual(api.validate(hostile["a throwing getter on params"]).diagnostics.map((d) => [d.code, d.path]), [
    ["unreadable", "/params"],
  ]);
  assert.throws(() => api.sanitize(cyclic(), { unknownFields: "keep" }), { name: "TypeError", code: "unreadable" });
  assert.throws(() => api.stampInitiator(hostile["a throwing getter on params"]), { name: "TypeError", code: "unreadable" });
});

test("a 50 MB userIntent is cut before it crosses into wasm, and sanitizes like a short one", () => {
  const text = `ok\r\n${"x".repeat(50e6)}`;
  const { message, changes } = api.sanitize(withEnvelope({ userIntent: { text } }));
  const kept = message.params._meta[KEY].userIntent;
  assert.equal(Buffer.byteLength(kept.text), 2048);
  assert.ok(kept.text.startsWith("ok  xxx") && kept.text.endsWith("…"));
  assert.equal(kept.redacted, true);
  assert.deepEqual(changes.map((c) => c.action), ["neutralized", "truncated"]);
});

test("after thousands of hostile calls the instance still answers", () => {
  const values = Object.values(hostile).filter((value) => value !== hostile["a 5 MB key"]);
  for (let round = 0; round < 300; round++) {
    for (const value of values) {
      api.validate(value);
      try { api.sanitize(value); } catch { /* a coded error, checked above */ }
    }
  }
  const request = withEnvelope({ turnId: "still here" });
  assert.equal(api.auditRecord(request).clientAsserted.turnId, "still here");
  assert.equal(api.validate(request).valid, true);
});

test("bad options are RangeErrors with a code, bad inputs TypeErrors", () => {
  const request = withEnvelope({});
  assert.throws(() => api.sanitize(request, { maxIntentBytes: 15 }), { name: "RangeError", code: "invalid-limit" });
  assert.throws(() => api.sanitize(request, { userIntent: "shred" }), { name: "RangeError", code: "invalid-option" });
  assert.throws(() => api.sanitize(request, "strict"), { name: "RangeError", code: "invalid-option" });
  assert.throws(() => api.stampInitiator(request, "admin"), { name: "RangeError", code: "invalid-initiator" });
  assert.throws(() => api.stampInitiator(request, "app", { uiKey: "io.mcp/ui" }), { name: "RangeError", code: "reserved-key" });
  assert.throws(() => api.stampInitiator([request]), { name: "TypeError", code: "not-a-request" });
  assert.deepEqual(api.validate(request, { invocationKey: 5 }).diagnostics.map((d) => [d.code, d.rule]), [["invalid-option", "KEY-3"]]);
  assert.equal(api.isValidMetaKey(5), false);
});
