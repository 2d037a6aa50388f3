// createProvenance: keys and policy configured in one place, checked once,
// and given to every function; a call's own options merge over them.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../pkg/dist/index.mjs";

const KEY = "com.example/aiInvocation";
const UI = "com.example/ui";
const request = { jsonrpc: "2.0", id: 1, method: "tools/call",
  params: { name: "q", _meta: { [KEY]: { userIntent: { text: "hi" }, turnId: "t-1" }, [UI]: { initiator: "model" } } } };
const mp = api.createProvenance({ invocationKey: KEY, uiKey: UI, userIntent: "redact" });

test("every function reads and writes the configured keys, with the configured policy", () => {
  assert.equal(mp.invocationKey, KEY);
  assert.equal(mp.uiKey, UI);
  assert.deepEqual(mp.stampInitiator(request).params._meta[UI], { initiator: "app" });
  assert.deepEqual(mp.clearInitiator(request).params._meta[UI], {});
  assert.deepEqual(mp.sanitize(request).message.params._meta[KEY].userIntent, { redacted: true });
  assert.deepEqual(mp.auditRecord(request, { sessionId: "s" }).clientAsserted, { turnId: "t-1", userIntentRedacted: true, correlation: [{ kind: "turn", value: "t-1", key: KEY, member: "turnId" }] });
  assert.deepEqual(mp.echoTurnId(request, { jsonrpc: "2.0", id: 1, result: {} }).result, { _meta: { [KEY]: { turnId: "t-1" } } });
  const bare = { method: "tools/call", params: { name: "q", arguments: { user_query: "rows" } } };
  assert.deepEqual(mp.liftLegacyArguments(bare).params._meta[KEY], { userIntent: { text: "rows" } });
  assert.deepEqual(mp.attachInvocation(bare, { turnId: "t-2" }).params._meta[KEY], { turnId: "t-2" });
  const broken = { method: "tools/call", params: { _meta: { [KEY]: { turnId: 7 } } } };
  assert.deepEqual(mp.validate(broken).diagnostics.map((d) => d.path), [`/params/_meta/com.example~1aiInvocation/turnId`]);
  assert.equal(mp.isValidMetaKey(KEY), true);
  // The plain functions, without the options, read the default keys: none of this is there.
  assert.equal(api.auditRecord(request).clientAsserted.turnId, undefined);
});

test("a call's own options merge over the bound ones", () => {
  assert.deepEqual(mp.sanitize(request, { userIntent: "keep" }).message.params._meta[KEY].userIntent, { text: "hi" });
  assert.deepEqual(mp.auditRecord(request, { policy: { maxTurnIdBytes: 16, userIntent: "keep" } }).clientAsserted, { turnId: "t-1", userIntent: "hi", userIntentRedacted: false, correlation: [{ kind: "turn", value: "t-1", key: KEY, member: "turnId" }] });
  const response = { jsonrpc: "2.0", id: 1, result: { _meta: { [KEY]: { turnId: "other" } } } };
  assert.deepEqual(mp.validate(response, { request }).diagnostics.map((d) => d.code), ["turn-id-mismatch"]);
});

test("the options are checked when the instance is made, and a call's own as strictly", () => {
  const refused = (call, name, code) => assert.throws(call, (error) => error instanceof RangeError && error.name === name && error.code === code);
  refused(() => api.createProvenance({ maxIntentByte: 100 }), "RangeError", "unknown-option");
  refused(() => api.createProvenance({ uiKey: "io.modelcontextprotocol/x" }), "RangeError", "reserved-key");
  refused(() => api.createProvenance({ maxEnvelopeBytes: 1 }), "RangeError", "invalid-limit");
  refused(() => api.createProvenance({ invocationKey: UI, uiKey: UI }), "RangeError", "conflicting-keys");
  refused(() => mp.sanitize(request, { colour: "red" }), "RangeError", "unknown-option");
  assert.equal(api.createProvenance().uiKey, api.UI_KEY);
  assert.ok(Object.isFrozen(mp));
});

test("options cross once: a getter of the bound options runs when the instance is made, never at a call", () => {
  let reads = 0;
  const options = { invocationKey: KEY, get userIntent() { reads++; return "drop"; } };
  const bound = api.createProvenance(options);
  const first = reads;
  for (let i = 0; i < 3; i++) assert.deepEqual(bound.sanitize(request).message.params._meta[KEY], { turnId: "t-1" });
  bound.auditRecord(request);
  bound.validate(request);
  assert.equal(reads, first, "no call read the options again");
});

test("the bound options are read once: a call's own merge over what the handle was made from", () => {
  // Getters that answer differently each time they are read, at the top and nested.
  let reads = 0;
  const intents = ["drop", "keep"];
  const kinds = ["conversation", "user"];
  const options = {
    invocationKey: KEY,
    get userIntent() { return intents[reads++]; },
    correlationKeys: { get "com.example/c"() { return kinds[reads++ - 1]; } },
  };
  const bound = api.createProvenance(options);
  assert.equal(reads, 2, "each member read once, when the instance is made");
  // With options of its own, a call reads the bound ones as first read: the intent dropped, never kept.
  for (const own of [{ maxReasonBytes: 100 }, {}]) {
    assert.equal(bound.sanitize(request, own).message.params._meta[KEY].userIntent, undefined, JSON.stringify(own));
  }
  const sent = { ...request, params: { ...request.params, _meta: { ...request.params._meta, "com.example/c": "c-1" } } };
  const record = bound.auditRecord(sent, { policy: { maxReasonBytes: 100 } });
  const found = record.clientAsserted.correlation.filter(({ key }) => key === "com.example/c");
  assert.deepEqual(found, [{ kind: "conversation", value: "c-1", key: "com.example/c" }]);
  assert.equal(reads, 2, "no call read the bound options again");
});

test("a handle outlives a restart of the module: it is made again from the options as first read", async () => {
  const { start } = await import("../pkg/dist/lib/host.mjs");
  const options = { invocationKey: KEY, userIntent: "redact" };
  const bound = api.createProvenance(options);
  const before = bound.sanitize(request);
  options.userIntent = "keep";
  start();
  assert.deepEqual(bound.sanitize(request), before);
  assert.deepEqual(api.sanitize(request, { invocationKey: KEY }).message.params._meta[KEY].userIntent, { text: "hi" });
});

test("a call's own options are found by what they hold: changed between calls, the change is read; many, each is its own", () => {
  const policy = { invocationKey: KEY, userIntent: "redact" };
  assert.deepEqual(api.sanitize(request, policy).message.params._meta[KEY].userIntent, { redacted: true });
  policy.userIntent = "drop";
  assert.equal(api.sanitize(request, policy).message.params._meta[KEY].userIntent, undefined);
  // More options than the module keeps handles of: each call under its own.
  const long = { ...request, params: { ...request.params, _meta: { [KEY]: { userIntent: { text: "x".repeat(400) } } } } };
  for (let round = 0; round < 2; round++) {
    for (let limit = 16; limit < 16 + 40 * 8; limit += 8) {
      const text = api.sanitize(long, { invocationKey: KEY, maxIntentBytes: limit }).message.params._meta[KEY].userIntent.text;
      assert.ok(text.length <= limit && text.length > limit - 4, `${limit}: ${text.length}`);
    }
  }
  // A bound instance keeps its own through all of it.
  assert.deepEqual(mp.sanitize(request).message.params._meta[KEY].userIntent, { redacted: true });
});

test("a record is the JSON the filter's lines carry: a numeric id the very number sent", async () => {
  const { createFilter } = await import("../pkg/dist/gateway.mjs");
  for (const id of [7, -3, 1.5, 0.1, 2 ** 53 + 2, 1e21, 5e-324, 123456.789]) {
    const sent = { jsonrpc: "2.0", id, method: "tools/call", params: { name: "q", _meta: { [api.AI_INVOCATION_KEY]: { turnId: "t" } } } };
    const record = api.auditRecord(sent, { sessionId: "s-1" });
    assert.ok(Object.is(record.requestId, id), String(id));
    // What the filter records of the same request (it refuses an id written with a fraction or an exponent, MSG-2).
    const line = JSON.parse(createFilter()(JSON.stringify(sent)).lines[0]);
    if (/^-?\d+$/.test(JSON.stringify(id))) assert.deepEqual(record, { ...line.record, witnessed: { sessionId: "s-1" } }, String(id));
    else assert.equal(line.record, undefined, String(id));
  }
});

test("a createProvenance no longer reachable lets its handle go: the module keeps no more than it needs", async () => {
  const { execFileSync } = await import("node:child_process");
  // In a process of its own, whose collector the test can run.
  const script = `
    import * as api from ${JSON.stringify(new URL("../pkg/dist/index.mjs", import.meta.url).href)};
    import { guard, handle } from ${JSON.stringify(new URL("../pkg/dist/lib/host.mjs", import.meta.url).href)};
    const numbers = (from, count) => Array.from({ length: count }, (_, i) => guard(() => handle("Policy", { maxIntentBytes: from + i })).number);
    let held = Array.from({ length: 100 }, (_, i) => api.createProvenance({ maxReasonBytes: 100 + i }));
    const before = Math.max(...numbers(1000, 20));
    held = undefined;
    for (let i = 0; i < 10 && globalThis.gc; i++) { gc(); await new Promise((resolve) => setTimeout(resolve, 10)); }
    const after = Math.max(...numbers(2000, 40));
    console.log(JSON.stringify({ before, after }));
  `;
  const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" });
  const { before, after } = JSON.parse(out);
  // Held, the 100 take numbers the 20 made next cannot have; let go of, their numbers are made again.
  assert.ok(before > 100, `before: ${before}`);
  assert.ok(after < 100, `after: ${after}`);
});

test("options written longer than a handle is found again by are read each call, and give the same", () => {
  const long = (n) => `com.example/${String(n).repeat(40_000)}`;
  const policy = { correlationKeys: { [long(1)]: "conversation", [long(2)]: "user" } };
  const sent = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q", _meta: { [long(2)]: "u-7" } } };
  const records = [1, 2, 3].map(() => api.auditRecord(sent, { policy }).clientAsserted.correlation);
  assert.deepEqual(records, Array(3).fill([{ kind: "user", value: "u-7", key: long(2) }]));
});

test("an audit context's policy is read once, and its other members once", () => {
  const reads = { policy: 0, sessionId: 0 };
  const context = {
    get policy() { reads.policy++; return { userIntent: "drop" }; },
    get sessionId() { reads.sessionId++; return "s-1"; },
  };
  const record = api.auditRecord(request, context);
  assert.equal(record.witnessed.sessionId, "s-1");
  assert.deepEqual(reads, { policy: 1, sessionId: 1 });
});

test("a policy an audit context only inherits is none of its own", () => {
  const inherited = Object.create({ policy: { userIntent: "drop" } });
  inherited.sessionId = "s-1";
  Object.defineProperty(inherited, "hidden", { value: 1, enumerable: false });
  const sent = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q", _meta: { [api.AI_INVOCATION_KEY]: { userIntent: { text: "why" } } } } };
  // Not a plain object: refused as the context it is, whatever its prototype offers.
  assert.throws(() => api.auditRecord(sent, inherited), (error) => error.code === "unreadable");
  Object.prototype.policy = { userIntent: "drop" };
  try {
    assert.equal(api.auditRecord(sent, { sessionId: "s-1" }).clientAsserted.userIntent, "why");
  } finally {
    delete Object.prototype.policy;
  }
});
