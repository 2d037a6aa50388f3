// The conformance matrix of ext-apps#738 (initiator provenance), in Node:
// each cell, the tests that show it. Every test runs the real code (the
// built package, the real ext-apps AppBridge and App, the middlewares in
// three HTTP stacks), and each asserts the value a correct implementation
// gives, so that a broken one fails it.
//
// 1. The Host replaces any inbound `initiator` with "app" on View calls
//    (UI-1, UI-3, UI-5), whatever the View put there: "model", "app",
//    "user", "host", an unknown string, a number, a boolean, an object, an
//    array, null, absent, the ui entry missing or not an object, no `_meta`,
//    no params; under the standard key and a vendor key (KEY-3):
//    - "1. stampInitiator: every View claim, every View request, both keys"
//    - "1. stampAppCalls on a real AppBridge: a real View's every claim arrives as app"
//    - "1. stampAppCalls: every request a View sends towards the server, and a vendor key"
//    - "1. stampAppCalls: a _meta that is not an object is never forwarded"
//    (and conformance/initiator.json `stamp-*`, run by conformance.test.mjs;
//    ext-apps.test.mjs; browser.test.mjs from a View in Chromium)
// 2. Never "app" for model calls (UI-2):
//    - "2. clearInitiator: whatever a model call arrives with, no initiator leaves"
//    - "2. attachInvocation adds no initiator; the model path (attach, then clear) never carries app"
//    - "2. provenanceTransport's invocation adds no initiator to a model call"
//    (and prototype.test.mjs "App clicks carry initiator app, ... model calls carry none",
//    examples/prototype/host.mjs's model path; conformance-scenarios.test.mjs `UI-2-model-not-app`)
// 3. A gateway preserves the value without raising its trust (UI-6, UI-8):
//    - "3. the filter forwards every initiator byte for byte and records it host-attested only"
//    - "3. <stack>: every initiator reaches the app byte for byte, recorded host-attested only"
//      (node:http, Express, a Fetch handler)
//    (and conformance/filter.json `filter-initiators-that-disagree-are-not-recorded`, in
//    every runtime: a View's claim under a key its Host does not stamp, beside the Host's
//    "app" under a vendor key, is never recorded as the Host's)
// 4. A missing value is recorded as unknown (UI-4): `hostAttested` without `initiator`
//    (`{}`), never "model", no diagnostic:
//    - "4. auditRecord: an absent initiator is recorded as unknown, under both keys"
//    - "4. the filter and provenanceTransport's audit record an absent initiator as unknown"
//    - "3. <stack>: ..." (the same sink records the absent case)
// 5. The marker alone changes no decision (AI-10, UI-6): the same forward or
//    refusal, replies, changes and diagnostics with and without it, apart
//    from the initiator itself, over a table of bodies with refused ones:
//    - "5. the filter decides the same with any marker or none"
//    - "5. <stack>: the middleware decides the same with any marker or none"
//    - "5. a duplicated initiator member is refused as any duplicated member is, whatever its values"
//      (a member duplicated where a rule reads is refused, WIRE-3: the ambiguity decides, not the value)
// The matrix's Python and Rust halves: python/tests/test_initiator_matrix.py, tests/initiator_matrix/.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { stampAppCalls } from "../pkg/dist/ext-apps.mjs";
import { createFilter } from "../pkg/dist/gateway.mjs";
import { AI_INVOCATION_KEY as KEY, UI_KEY as UI, attachInvocation, auditRecord, clearInitiator, createProvenance, stampInitiator } from "../pkg/dist/index.mjs";
import { provenanceTransport } from "../pkg/dist/sdk.mjs";
import { table } from "../pkg/dist/table.mjs";
import { SECRET, STACKS, accounts, send } from "./http-stacks.mjs";

const VENDOR = "com.example/ui";
/** Every kind of value a View may put in `initiator`. */
const VALUES = { '"model"': "model", '"app"': "app", '"user"': "user", '"host"': "host", '"admin"': "admin", '"APP"': "APP", '""': "", 42: 42, 0: 0, true: true, null: null, "an object": { value: "app", trusted: true }, "an array": ["app"] };
/** Every ui entry that is not an object. */
const ENTRIES = { '"app"': "app", null: null, '["model"]': ["model"], 7: 7, false: false };

/** What a View may send under `key`: label → its `_meta` (undefined: none), with a member beside the entry and one inside it. */
function claims(key) {
  return [
    ...Object.entries(VALUES).map(([label, value]) => [`initiator ${label}`, { [key]: { initiator: value, theme: "dark" }, other: 1 }]),
    ["initiator absent", { [key]: { theme: "dark" }, other: 1 }],
    ["an empty ui entry", { [key]: {}, other: 1 }],
    ...Object.entries(ENTRIES).map(([label, entry]) => [`the ui entry ${label}`, { [key]: entry, other: 1 }]),
    ["no ui entry", { other: 1 }],
    ["no _meta", undefined],
  ];
}

/** The `_meta` a stamp must give for a View's `meta`: only `initiator` set, over an object entry's members. */
function stamped(meta, key) {
  const entry = meta?.[key];
  const kept = entry !== null && typeof entry === "object" && !Array.isArray(entry) ? entry : {};
  return { ...meta, [key]: { ...kept, initiator: "app" } };
}

const request = (method, meta) => ({ jsonrpc: "2.0", id: 1, method, params: { name: "q", arguments: { a: 1 }, ...(meta !== undefined && { _meta: meta }) } });

describe("cell 1: the Host replaces whatever a View put in initiator with app", () => {
  test("1. stampInitiator: every View claim, every View request, both keys", () => {
    for (const key of [UI, VENDOR]) {
      const mp = createProvenance({ uiKey: key });
      for (const method of table.viewRequests) {
        for (const [label, meta] of claims(key)) {
          const input = request(method, meta);
          const copy = structuredClone(input);
          const out = key === UI ? stampInitiator(input) : mp.stampInitiator(input);
          assert.deepEqual(out, { ...input, params: { ...input.params, _meta: stamped(meta, key) } }, `${key} ${method}: ${label}`);
          assert.deepEqual(input, copy, "the input is left as it was");
        }
      }
      assert.deepEqual(mp.stampInitiator({ method: "prompts/list" }).params, { _meta: { [key]: { initiator: "app" } } }, "no params");
    }
  });

  /** A real AppBridge, its View requests stamped by stampAppCalls, a real View (App) linked to it in memory. */
  async function viewAndHost(options) {
    const { App } = await import("@modelcontextprotocol/ext-apps");
    const { AppBridge } = await import("@modelcontextprotocol/ext-apps/app-bridge");
    const forwarded = [];
    const results = { "tools/call": { content: [] }, "resources/read": { contents: [] }, "resources/list": { resources: [] }, "resources/templates/list": { resourceTemplates: [] }, "prompts/list": { prompts: [] } };
    const bridge = new AppBridge(null, { name: "host", version: "1.0.0" }, { serverTools: {}, serverResources: {}, serverPrompts: {} });
    stampAppCalls(bridge, async (request) => {
      forwarded.push(request);
      return results[request.method];
    }, options);
    const [viewSide, hostSide] = linkedPair();
    await bridge.connect(hostSide);
    const app = new App({ name: "view", version: "1.0.0" }, {}, { autoResize: false });
    await app.connect(viewSide);
    return { app, bridge, forwarded, close: async () => { await app.close(); await bridge.close(); } };
  }

  test("1. stampAppCalls on a real AppBridge: a real View's every claim arrives as app", async () => {
    for (const key of [UI, VENDOR]) {
      const { app, forwarded, close } = await viewAndHost(key === UI ? undefined : { uiKey: key });
      try {
        for (const [label, meta] of claims(key)) {
          await app.callServerTool({ name: "q", arguments: { a: 1 }, ...(meta !== undefined && { _meta: meta }) });
          const { method, params } = forwarded.at(-1);
          assert.equal(method, "tools/call");
          assert.deepEqual(params.arguments, { a: 1 });
          // The SDK adds its own progressToken; the rest is the View's, the entry stamped.
          const { progressToken, ...sent } = params._meta;
          assert.deepEqual(sent, stamped(meta, key), `${key}: ${label}`);
        }
        assert.equal(forwarded.length, claims(key).length);
      } finally {
        await close();
      }
    }
  });

  test("1. stampAppCalls: every request a View sends towards the server, and a vendor key", async () => {
    for (const key of [UI, VENDOR]) {
      const { app, forwarded, close } = await viewAndHost(key === UI ? undefined : { uiKey: key });
      try {
        for (const value of ["model", 42, null, { value: "app" }]) {
          const _meta = { [key]: { initiator: value } };
          forwarded.length = 0;
          await app.callServerTool({ name: "q", _meta });
          await app.readServerResource({ uri: "ui://dashboard", _meta });
          await app.listServerResources({ _meta });
          await app.request({ method: "resources/templates/list", params: { _meta } });
          await app.request({ method: "prompts/list", params: { _meta } });
          assert.deepEqual(forwarded.map(({ method, params }) => [method, params._meta[key]]).sort(),
            table.viewRequests.map((method) => [method, { initiator: "app" }]).sort(), `${key}: ${JSON.stringify(value)}`);
        }
      } finally {
        await close();
      }
    }
  });

  test("1. stampAppCalls: a _meta that is not an object is never forwarded", async () => {
    // The SDK drops such a request before any handler; a Host calling the handler itself is refused.
    const forwarded = [];
    const bridge = stampAppCalls({}, async (request) => forwarded.push(request));
    for (const _meta of ["app", 1, ["model"]]) {
      await assert.rejects(async () => bridge.oncalltool({ name: "q", _meta }, {}), (error) => error instanceof TypeError && error.code === "invalid-type");
    }
    assert.deepEqual(forwarded, []);
  });
});

describe("cell 2: a model call never carries app", () => {
  const noApp = (message, label) => assert.ok(!/"initiator":"app"/.test(JSON.stringify(message)), `${label}: ${JSON.stringify(message)}`);

  test("2. clearInitiator: whatever a model call arrives with, no initiator leaves", () => {
    for (const key of [UI, VENDOR]) {
      const mp = createProvenance({ uiKey: key });
      for (const [label, meta] of claims(key)) {
        const out = mp.clearInitiator(request("tools/call", meta));
        const entry = meta?.[key];
        const isObject = entry !== null && typeof entry === "object" && !Array.isArray(entry);
        // An object entry loses `initiator` alone; anything else has none to lose and stays.
        const expected = !isObject ? meta : { ...meta, [key]: Object.fromEntries(Object.entries(entry).filter(([name]) => name !== "initiator")) };
        assert.deepEqual(out.params._meta, expected, `${key}: ${label}`);
        noApp(out, label);
      }
    }
    // A Host that attests model calls says so: "model" over whatever came.
    assert.equal(stampInitiator(request("tools/call", { [UI]: { initiator: "app" } }), "model").params._meta[UI].initiator, "model");
  });

  test("2. attachInvocation adds no initiator; the model path (attach, then clear) never carries app", () => {
    const envelopes = [{ turnId: "t-1" }, { invocationReason: { text: "why" }, model: { name: "m" }, userIntent: { text: "hi", redacted: false }, turnId: "t-2" }];
    for (const key of [UI, VENDOR]) {
      const mp = createProvenance({ uiKey: key });
      for (const envelope of envelopes) {
        for (const [label, meta] of claims(key)) {
          const attached = mp.attachInvocation(request("tools/call", meta), envelope);
          // attachInvocation writes the envelope and nothing else: the ui entry is as it came, or absent.
          assert.deepEqual(attached.params._meta[key], meta?.[key], `${key}: ${label}`);
          assert.equal(Object.hasOwn(attached.params._meta, key), meta !== undefined && Object.hasOwn(meta, key));
          noApp(mp.clearInitiator(attached), label);
        }
      }
    }
    // The same through the default functions.
    noApp(clearInitiator(attachInvocation(request("tools/call", { [UI]: { initiator: "app" } }), { turnId: "t" })), "default keys");
  });

  test("2. provenanceTransport's invocation adds no initiator to a model call", async () => {
    const sent = [];
    const transport = provenanceTransport({ start: async () => {}, close: async () => {}, send: async (message) => { sent.push(message); } },
      { invocation: () => ({ turnId: "turn-1", model: { name: "m" } }) });
    await transport.send(request("tools/call", undefined));
    await transport.send(request("tools/call", { progressToken: 1 }));
    assert.deepEqual(sent.map((message) => Object.keys(message.params._meta).sort()), [[KEY], [KEY, "progressToken"]]);
  });
});

/** Initiator values as a body spells them: label → JSON text. */
const SPELLINGS = {
  '"app"': '"app"', '"model"': '"model"', '"user"': '"user"', '"host"': '"host"', '"admin"': '"admin"', "an escaped \"app\"": '"\\u0061pp"',
  "a string with a line break": '"app\\r\\nforged"', "a string with a bidi override": '"a\\u202eb"', "a long string": `"${"x".repeat(100)}"`,
  42: "42", "1e400": "1e400", "-0.0": "-0.0", true: "true", null: "null", "an object": '{ "value" : "app", "trusted": true }', "an array": '["app"]',
};
const callWith = (meta) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"n":1e400},"_meta":{${meta}"progressToken":1}}}`;
const KNOWN = ["app", "model", "user", "host"];

/**
 * What the record of a call carrying `text` (a JSON text) as its initiator
 * must say: host-attested, a string as it was sent (neutralized, at most 64
 * bytes), flagged when unknown (UI-7); anything else not recorded, an error.
 */
function checkRecord(record, text, label) {
  const value = text === undefined ? undefined : JSON.parse(text);
  assert.deepEqual(Object.keys(record).sort(), ["clientAsserted", "diagnostics", "hostAttested", "method", "requestId", "tool", "valid", "witnessed"], label);
  assert.deepEqual(Object.keys(record.hostAttested), typeof value === "string" ? ["initiator"] : [], label);
  const ui = record.diagnostics.filter((d) => d.rule.startsWith("UI-"));
  if (value === undefined) assert.deepEqual(ui, [], label);
  else if (typeof value !== "string") assert.deepEqual(ui.map((d) => [d.rule, d.code, d.severity]), [["UI-7", "invalid-type", "error"]], label);
  else if (KNOWN.includes(value)) assert.deepEqual([record.hostAttested.initiator, ui], [value, []], label);
  else {
    assert.deepEqual(ui.map((d) => [d.rule, d.code, d.severity]), [["UI-7", "unknown-initiator", "warning"]], label);
    assert.ok(!/[\r\n\u202e]/.test(record.hostAttested.initiator) && Buffer.byteLength(record.hostAttested.initiator) <= 64, label);
  }
  // Never a witnessed fact, never the client's: those say what they say without it.
  assert.deepEqual(record.clientAsserted, {}, label);
  assert.ok(Object.keys(record.witnessed).every((name) => ["receivedAt", "principal", "sessionId"].includes(name)), label);
}

describe("cells 3 and 4: a gateway forwards the value as it came and records it host-attested, or unknown", () => {
  test("3. the filter forwards every initiator byte for byte and records it host-attested only", () => {
    for (const [options, key] of [[{}, UI], [{ uiKeys: [VENDOR] }, VENDOR], [{ policy: { userIntent: "drop", unknownFields: "keep", maxEnvelopeBytes: 64 } }, UI]]) {
      const filter = createFilter(options);
      for (const [label, text] of Object.entries(SPELLINGS)) {
        const body = callWith(`"${key}" : {"initiator" :  ${text} , "theme":"dark"},`);
        const context = { receivedAt: "2026-01-01T00:00:00Z", principal: "alice", sessionId: "s-1" };
        const out = filter(body, context);
        assert.equal(out.forward, body, `${key}: ${label}`);
        const account = JSON.parse(out.accounts[0]);
        checkRecord(account.record, text, `${key}: ${label}`);
        assert.deepEqual(account.record.witnessed, context);
        assert.deepEqual(account.changes, []);
      }
    }
  });

  test("4. auditRecord: an absent initiator is recorded as unknown, under both keys", () => {
    for (const key of [UI, VENDOR]) {
      const mp = createProvenance({ uiKey: key });
      const absent = claims(key).filter(([label]) => ["initiator absent", "an empty ui entry", "no ui entry", "no _meta"].includes(label));
      for (const [label, meta] of [...absent, ["no params", null]]) {
        const record = mp.auditRecord(meta === null ? { method: "tools/call" } : request("tools/call", meta), { receivedAt: "2026-01-01T00:00:00Z" });
        assert.deepEqual(record.hostAttested, {}, `${key}: ${label}`);
        assert.deepEqual(record.diagnostics, [], `${key}: ${label}`);
        assert.equal(record.valid, true);
        assert.ok(!JSON.stringify(record).includes("model"), "absence is never read as model");
      }
    }
    // A value that is not a string is not recorded either: unknown, with its error.
    const record = auditRecord(request("tools/call", { [UI]: { initiator: 42 } }));
    assert.deepEqual([record.hostAttested, record.diagnostics.map((d) => d.rule)], [{}, ["UI-7"]]);
  });

  test("4. the filter and provenanceTransport's audit record an absent initiator as unknown", async () => {
    const filter = createFilter({ uiKeys: [VENDOR] });
    for (const meta of ["", `"${UI}":{},`, `"${UI}":{"theme":"dark"},`, `"${VENDOR}":{},`]) {
      const account = JSON.parse(filter(callWith(meta)).accounts[0]);
      checkRecord(account.record, undefined, meta);
    }
    const records = [];
    const inner = { start: async () => {}, close: async () => {}, send: async () => {} };
    const transport = provenanceTransport(inner, { audit: (record) => { records.push(record); } });
    transport.onmessage = () => {};
    inner.onmessage(request("tools/call", { progressToken: 1 }));
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(records.map((record) => record.hostAttested), [{}]);
  });

  for (const [name, stack] of Object.entries(STACKS)) {
    test(`3. ${name}: every initiator reaches the app byte for byte, recorded host-attested only`, async () => {
      const app = { status: 200, headers: { "content-type": "application/json" }, pieces: ['{"jsonrpc":"2.0","id":1,"result":{}}'], reached: [] };
      const sink = accounts();
      const server = await stack({ audit: sink, uiKeys: [VENDOR] }, app, { clientId: "alice" });
      try {
        for (const key of [UI, VENDOR]) {
          for (const [label, text] of [...Object.entries(SPELLINGS), ["absent", undefined]]) {
            const body = callWith(text === undefined ? "" : `"${key}":{"initiator" : ${text}},`);
            const from = sink.kept.length;
            const answer = await send(server.url, { body });
            assert.equal(answer.status, 200);
            assert.equal(app.reached.at(-1).body, body, `${key}: ${label}`);
            const [{ account }] = sink.kept.slice(from);
            checkRecord(account.record, text, `${key}: ${label}`);
            assert.equal(account.record.witnessed.principal, "alice");
          }
        }
      } finally {
        await server.close();
      }
    });
  }
});

/** Where a marker goes: each body has `_meta` objects that begin with `${m}`. */
const ENVELOPE = `"${KEY}":{"turnId":"t-1","userIntent":{"text":"${SECRET}"}}`;
const CALL = (id, m, rest = "") => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"q","_meta":{${m}${ENVELOPE}}${rest}}}`;
const DEEP = (id, m) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"_meta":{${m}"progressToken":1},"arguments":${"[".repeat(200)}${"]".repeat(200)}}}`;
const BODIES = {
  "a call with an envelope (its intent redacted)": (m) => CALL(1, m, ',"arguments":{"n":1e400}'),
  "a call whose envelope breaks its schema (repaired)": (m) => `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{${m}"${KEY}":{"turnId":7,"model":{},"extra":1}}}}`,
  "a call with legacy arguments (lifted)": (m) => `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"user_query":"q","invocation_reason":"r"},"_meta":{${m}"progressToken":1}}}`,
  "a bare intent under a redacting policy (refused)": (m) => `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{${m}"userIntent":{"text":"${SECRET}"}}}}`,
  "a duplicated turnId (refused)": (m) => `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{${m}"${KEY}":{"turnId":"a","turnId":"b"}}}}`,
  "a call nested too deep (refused)": (m) => DEEP(6, m),
  "a batch with a refused message": (m) => `[${CALL(7, m)}, ${DEEP(8, m)}]`,
  "a batch past maxBatch (refused whole)": (m) => `[${[9, 10, 11, 12].map((id) => CALL(id, m)).join(",")}]`,
  "a notification": (m) => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{${m}"progressToken":1},"progress":1}}`,
  "a response to the server": (m) => `{"jsonrpc":"2.0","id":"s-1","result":{"_meta":{${m}"x":1}}}`,
  "an envelope past maxEnvelopeBytes": (m) => `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"_meta":{${m}"${KEY}":{"turnId":"t","model":{"name":"${"m".repeat(200)}"},"invocationReason":{"text":"${"r".repeat(900)}"}}}}}`,
  "not JSON (refused whole)": (m) => `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"_meta":{${m}"x":1}}`,
};
const OPTIONS = { policy: { userIntent: "redact", maxEnvelopeBytes: 512 }, liftLegacy: true, maxBatch: 3, uiKeys: [VENDOR] };
/** The markers a body may carry, as `_meta` members (the first: none). */
const MARKERS = ["", ...["app", "model", 42, null, { value: "app" }].map((value) => `"${UI}":{"initiator":${JSON.stringify(value)}},`),
  `"${UI}":"app",`, `"${UI}":{},`, `"${VENDOR}":{"initiator":"app"},`];

/** An account less what the initiator itself is: its host-attested record, its UI-* diagnostics, the validity they decide. */
function apart(account) {
  const { valid, ...rest } = account;
  const without = (list) => list?.filter((d) => !d.rule.startsWith("UI-"));
  const out = { ...rest, diagnostics: without(rest.diagnostics) };
  if (rest.record) {
    const { hostAttested, valid: recordValid, ...record } = rest.record;
    // A middleware's own clock is witnessed: that it was recorded, not when.
    out.record = { ...record, witnessed: { ...record.witnessed, receivedAt: typeof record.witnessed.receivedAt }, diagnostics: without(record.diagnostics) };
  }
  return out;
}

/** A filter outcome as a decision. */
const decision = (out) => ({ forward: out.forward, status: out.status, reject: out.reject, replies: out.replies, ids: out.ids, turns: out.turns, accounts: out.accounts.map((a) => apart(JSON.parse(a))) });

/**
 * Asserts that `marked` (the decision for a body whose every `_meta` begins
 * with `marker`) is `bare`'s: what goes on holds the marker once per `_meta`,
 * as it came, and is otherwise the same; so are the answers and accounts.
 */
function assertSame(marked, bare, marker, label) {
  const sent = (d) => [d.forward, ...(d.got ?? [])].filter((text) => text !== undefined);
  assert.equal(sent(marked).length, sent(bare).length, label);
  sent(marked).forEach((text, i) => assert.equal(text.split(marker).length, sent(bare)[i].split('"_meta":{').length, `${label}: the marker goes on as it came`));
  const strip = (text) => text.replaceAll(marker, "");
  const { forward, got, ...rest } = marked;
  assert.deepEqual({ ...rest, ...(forward !== undefined && { forward: strip(forward) }), ...(got && { got: got.map(strip) }) },
    Object.fromEntries(Object.entries(bare).filter(([name, value]) => name !== "forward" || value !== undefined)), label);
}

describe("cell 5: the marker alone changes no decision", () => {
  test("5. the filter decides the same with any marker or none", () => {
    const filter = createFilter(OPTIONS);
    const context = { receivedAt: "2026-01-01T00:00:00Z", principal: "alice", sessionId: "s-1", headers: { "content-type": "application/json" } };
    // What the table holds: bodies forwarded, changed, refused one message at a time and whole.
    const REFUSED = { "a bare intent under a redacting policy (refused)": [200, "bare-user-intent"], "a duplicated turnId (refused)": [200, "duplicate-member"],
      "a call nested too deep (refused)": [200, "too-deep"], "a batch with a refused message": ["forward", "-", "too-deep"], "a batch past maxBatch (refused whole)": [413], "not JSON (refused whole)": [400] };
    for (const [label, body] of Object.entries(BODIES)) {
      const bare = decision(filter(body(""), context));
      assert.deepEqual([bare.status ?? "forward", ...bare.accounts.map((a) => a.refused ?? "-")], REFUSED[label] ?? ["forward", "-"], label);
      for (const marker of MARKERS.slice(1)) assertSame(decision(filter(body(marker), context)), bare, marker, `${label} with ${marker}`);
    }
    // Headers that say the body is not UTF-8 JSON: refused whole, marker or none.
    const typed = (marker) => decision(filter(BODIES["a notification"](marker), { headers: { "content-type": "text/plain" } }));
    assert.equal(typed("").status, 415);
    for (const marker of MARKERS.slice(1)) assertSame(typed(marker), typed(""), marker, marker);
  });

  test("5. a duplicated initiator member is refused as any duplicated member is, whatever its values", () => {
    const filter = createFilter();
    const refusal = (meta) => filter(callWith(meta)).reject;
    const duplicated = refusal(`"${KEY}":{"turnId":"a","turnId":"a"},`);
    assert.match(duplicated, /duplicate-member/);
    for (const [a, b] of [["app", "app"], ["model", "app"], ["app", "model"], [1, null]]) {
      assert.equal(refusal(`"${UI}":{"initiator":${JSON.stringify(a)},"initiator":${JSON.stringify(b)}},`), duplicated, `${a}, ${b}`);
    }
  });

  for (const [name, stack] of Object.entries(STACKS)) {
    test(`5. ${name}: the middleware decides the same with any marker or none`, async () => {
      const app = { status: 200, headers: { "content-type": "application/json" }, pieces: ['{"jsonrpc":"2.0","id":1,"result":{}}'], reached: [] };
      const sink = accounts();
      const server = await stack({ ...OPTIONS, audit: sink, maxBodyBytes: 4096 }, app, { clientId: "alice" });
      const bodies = { ...BODIES, "a body past maxBodyBytes (413)": (m) => CALL(15, m, `,"arguments":{"s":"${"x".repeat(5000)}"}`) };
      /** What the client got, what reached the app and the accounts, for `body`. */
      const exchange = async (body, headers) => {
        const [from, reached] = [sink.kept.length, app.reached.length];
        const answer = await send(server.url, { body, ...(headers && { headers }) });
        const got = app.reached.slice(reached).map((r) => r.body);
        return { status: answer.status, type: answer.headers["content-type"], body: answer.body, got, accounts: sink.kept.slice(from).map(({ account }) => apart(account)) };
      };
      try {
        for (const [label, body] of Object.entries(bodies)) {
          const bare = await exchange(body(""));
          for (const marker of MARKERS.slice(1)) assertSame(await exchange(body(marker)), bare, marker, `${label} with ${marker}`);
        }
        const plain = { "content-type": "text/plain" };
        const typed = await exchange(BODIES["a notification"](""), plain);
        assert.equal(typed.status, 415);
        for (const marker of MARKERS.slice(1)) assertSame(await exchange(BODIES["a notification"](marker), plain), typed, marker, marker);
      } finally {
        await server.close();
      }
    });
  }
});

/** Two in-memory transports linked to each other, each message cloned as postMessage would. */
function linkedPair() {
  const make = () => ({
    async start() {},
    async close() { this.onclose?.(); },
    async send(message) {
      const peer = this.peer;
      queueMicrotask(() => peer.onmessage?.(structuredClone(message)));
    },
  });
  const [a, b] = [make(), make()];
  [a.peer, b.peer] = [b, a];
  return [a, b];
}
