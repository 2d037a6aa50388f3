// The object API keeps its word (issue 18): what was checked is what is
// returned, in every runtime and policy. Each attack of the issue, by its
// number, as it was described; the CSP one (8) runs in Chromium
// (browser.test.mjs).
import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../pkg/dist/index.mjs";
import { start } from "../pkg/dist/lib/host.mjs";

const KEY = api.AI_INVOCATION_KEY;
const UI = api.UI_KEY;

/** Calls the library from inside a getter: the inner call is refused, with its code. */
function reenter(inner, refusals) {
  try {
    inner();
    refusals.push("went through");
  } catch (error) {
    refusals.push(`${error.name} ${error.code}`);
  }
}

test("3: a call made from a getter while another call reads is refused; the outer call is unharmed", () => {
  const refusals = [];
  const secret = { text: "my secret words" };
  const hostile = {
    jsonrpc: "2.0", id: 1, method: "tools/call",
    params: { name: "q", _meta: { [KEY]: { get userIntent() {
      reenter(() => api.validate({ method: "ping", params: { _meta: { [KEY]: { turnId: "inner" } } } }), refusals);
      reenter(() => api.stampInitiator({ method: "tools/call" }, "model"), refusals);
      return secret;
    } } } },
  };
  const { message } = api.sanitize(hostile, { userIntent: "redact" });
  assert.deepEqual(message.params._meta[KEY].userIntent, { redacted: true });

  const view = { method: "tools/call", params: { get _meta() {
    reenter(() => api.sanitize({ method: "x", params: { _meta: { [UI]: { initiator: "model" } } } }), refusals);
    return { [UI]: { initiator: "model" } };
  } } };
  assert.equal(api.stampInitiator(view, "app").params._meta[UI].initiator, "app");

  const recorded = api.auditRecord({ method: "tools/call", id: 7, params: { name: "q", get _meta() {
    reenter(() => api.auditRecord({ method: "other" }), refusals);
    return {};
  } } });
  assert.equal(recorded.method, "tools/call");
  assert.ok(refusals.length >= 4);
  assert.deepEqual(new Set(refusals), new Set(["RangeError reentrant-call"]));
});

test("3: getters nested in getters get no further than the first; the refusal rethrown makes the outer input unreadable", () => {
  const { memory } = start();
  const held = memory.buffer.byteLength;
  let depth = 0;
  const nested = () => ({ method: "tools/call", params: { get _meta() {
    if (++depth < 50) api.validate(nested());
    return {};
  } } });
  const report = api.validate(nested());
  assert.deepEqual(report.diagnostics.map((d) => [d.code, d.path]), [["unreadable", "/params/_meta"]]);
  assert.equal(depth, 1, "the inner call was refused before it read anything");
  // The next calls answer as always, in the module's memory as it was.
  assert.deepEqual(api.validate({ method: "ping" }), { valid: true, diagnostics: [] });
  assert.equal(memory.buffer.byteLength, held);
});

test("7: options that are not an object are refused by type, never copied into the module", () => {
  const { memory } = start();
  const held = memory.buffer.byteLength;
  const big = "x".repeat(100_000_000);
  for (const call of [() => api.sanitize({ method: "x" }, big), () => api.auditRecord({ method: "x" }, big), () => api.stampInitiator({ method: "x" }, "app", big)]) {
    assert.throws(call, (error) => error instanceof RangeError && error.code === "invalid-option" && error.message.endsWith("not a string"));
  }
  assert.throws(() => api.sanitize({ method: "x" }, new Array(5_000_000).fill(1)), (error) => error.code === "invalid-option" && error.message.endsWith("not an array"));
  assert.deepEqual(api.validate({ method: "x" }, big).diagnostics.map((d) => d.code), ["invalid-option"]);
  assert.equal(memory.buffer.byteLength, held);
});

test("2: an SDK client on provenanceTransport sends what its policy makes of each request", async () => {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
  const { provenanceTransport } = await import("../pkg/dist/sdk.mjs");
  const envelope = { turnId: "t-1", userIntent: { text: "my private words, all of them" }, model: { name: "m" } };
  const sent = async (policy) => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const wire = [];
    const server = new McpServer({ name: "s", version: "1.0.0" });
    server.registerTool("count", { description: "counts" }, () => ({ content: [{ type: "text", text: "3" }] }));
    await server.connect(provenanceTransport(serverSide, { audit: (_record, _report, message) => { wire.push(message); } }));
    const client = new Client({ name: "c", version: "1.0.0" });
    await client.connect(provenanceTransport(clientSide, { invocation: () => envelope, ...policy }));
    await client.callTool({ name: "count", arguments: {} });
    await client.close();
    return wire.find((message) => message.method === "tools/call").params._meta[KEY];
  };
  assert.deepEqual(await sent({}), envelope);
  assert.deepEqual(await sent({ userIntent: "drop" }), { turnId: "t-1", model: { name: "m" } });
  assert.deepEqual(await sent({ userIntent: "redact" }), { turnId: "t-1", userIntent: { redacted: true }, model: { name: "m" } });
  const cut = api.sanitize({ method: "tools/call", params: { _meta: { [KEY]: envelope } } }, { maxIntentBytes: 16 }).message.params._meta[KEY];
  assert.ok(cut.userIntent.text.length <= 16);
  assert.deepEqual(await sent({ maxIntentBytes: 16 }), cut);
});

test("1: a member name is compared and edited whole, however long; past 65,536 characters it is refused", async () => {
  const { createFilter } = await import("../pkg/dist/gateway.mjs");
  const long = "n".repeat(5000);
  for (const policy of [{}, { userIntent: "redact" }, { userIntent: "drop" }, { unknownFields: "keep" }]) {
    const { message, changes } = api.sanitize({ method: "tools/call", params: { _meta: { [KEY]: { turnId: "t", [long]: { text: "my secret\r\nwords" } } } } }, policy);
    assert.deepEqual(message.params._meta[KEY], { turnId: "t" }, JSON.stringify(policy));
    assert.deepEqual(changes.map((c) => c.action), ["dropped"]);
  }
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [KEY]: { turnId: "t", [long]: { text: "my secret" } } } } });
  assert.ok(!createFilter({ policy: { userIntent: "redact" } })(body).forward.includes("secret"));

  assert.equal(api.isValidMetaKey(`a/${"b".repeat(5000)}/`), false, "an invalid key past the old cut");
  assert.equal(api.isValidMetaKey(`a/${"b".repeat(5000)}`), true, "a valid one, judged whole");
  assert.equal(api.isValidMetaKey(`a/${"b".repeat(70_000)}`), false, "past 65,536 characters: judged no key");
  assert.equal(api.isReservedMetaKey(`io.modelcontextprotocol/${"b".repeat(70_000)}`), true);

  const huge = { method: "tools/call", params: { _meta: { [KEY]: { ["n".repeat(70_000)]: 1 } } } };
  assert.throws(() => api.sanitize(huge), (error) => error instanceof TypeError && error.code === "unreadable" && error.message.endsWith("a member name of more than 65536 characters"));
  assert.deepEqual(api.validate(huge).diagnostics.map((d) => [d.code, d.message.endsWith("a member name of more than 65536 characters")]), [["unreadable", true]]);
});

/** A value whose getter answers `first` when read the first time and `then` after. */
function flipping(object, name, first, then) {
  let reads = 0;
  Object.defineProperty(object, name, { enumerable: true, get: () => (reads++ === 0 ? first : then) });
  return object;
}

/** Every object of `value` down to plain data: no accessors, no functions. */
function assertPlain(value, at = "") {
  if (typeof value !== "object" || value === null) return;
  for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(value))) {
    assert.ok("value" in descriptor, `${at}/${name} is an accessor`);
    assert.notEqual(typeof descriptor.value, "function", `${at}/${name} is a function`);
    assertPlain(descriptor.value, `${at}/${name}`);
  }
}

test("4: what a call returns is what it read, once: a getter or Proxy that changes its answer changes nothing", () => {
  const userIntent = flipping({ text: "show me" }, "note", "clean", "a\r\nINFO forged");
  const { message, changes } = api.sanitize({ method: "tools/call", params: { _meta: { [KEY]: { turnId: "t", userIntent } } } }, { unknownFields: "keep" });
  // Keeping unknown members, the call reads them whole, once (the handle's plan says so): the note it decided on is the one returned.
  assert.deepEqual(message.params._meta[KEY].userIntent, { text: "show me", note: "clean" });
  assert.deepEqual(changes, []);

  let listed = 0;
  const envelope = new Proxy({ turnId: "t", hidden: "a\u2028b" }, {
    ownKeys: (target) => (listed++ === 0 ? ["turnId"] : Reflect.ownKeys(target)),
  });
  const cleaned = api.sanitize({ method: "tools/call", params: { _meta: { [KEY]: envelope } } }, { unknownFields: "keep" });
  assert.deepEqual(cleaned.message.params._meta[KEY], { turnId: "t" });
  assert.deepEqual(cleaned.changes, []);

  const invocation = flipping({ model: { name: "m" } }, "turnId", "turn-1", 12345);
  const attached = api.attachInvocation({ method: "tools/call", params: { name: "q" } }, invocation);
  assert.deepEqual(attached.params._meta[KEY], { model: { name: "m" }, turnId: "turn-1" });
  assert.throws(() => api.attachInvocation({ method: "tools/call" }, { turnId: 12345 }), (error) => error.code === "invalid-invocation");

  const request = { method: "tools/call", params: { _meta: { [KEY]: flipping({}, "turnId", "turn-2", "turn-evil") } } };
  const echoed = api.echoTurnId(request, { jsonrpc: "2.0", id: 1, result: { content: [] } });
  assert.deepEqual(echoed.result._meta, { [KEY]: { turnId: "turn-2" } });

  const stamped = api.stampInitiator({ method: "tools/call", params: flipping({}, "_meta", { [UI]: { initiator: "model" } }, { [UI]: { initiator: "app", extra: "x" } }) });
  assert.deepEqual(stamped.params._meta, { [UI]: { initiator: "app" } });
  for (const value of [message, cleaned.message, attached, echoed, stamped]) assertPlain(value);
});

test("4: a member whose getter throws where no rule reads refuses the copy as unreadable", () => {
  const request = { method: "tools/call", params: { _meta: { [KEY]: { turnId: "t" } } } };
  Object.defineProperty(request.params, "trap", { enumerable: true, get() { throw new Error("boom"); } });
  assert.throws(() => api.sanitize(request), (error) => error instanceof TypeError && error.code === "unreadable");
});

test("5: a toJSON on params or _meta does not survive into the copy, nor decide what it serializes to", () => {
  const secret = { text: "my secret words" };
  const params = { name: "q", _meta: { [KEY]: { turnId: "t", userIntent: secret } } };
  params.toJSON = () => ({ _meta: { [KEY]: { userIntent: secret } } });
  params._meta.toJSON = () => ({ [KEY]: { userIntent: secret } });
  const { message } = api.sanitize({ method: "tools/call", params }, { userIntent: "redact" });
  assert.ok(!JSON.stringify(message).includes("secret"));
  assert.deepEqual(JSON.parse(JSON.stringify(message)), { method: "tools/call", params: { name: "q", _meta: { [KEY]: { turnId: "t", userIntent: { redacted: true } } } } });
  const view = { method: "tools/call", params: { _meta: { [UI]: { initiator: "model" }, toJSON: () => ({ [UI]: { initiator: "model" } }) } } };
  const stamped = api.stampInitiator(view, "app");
  assert.equal(JSON.parse(JSON.stringify(stamped)).params._meta[UI].initiator, "app");
  assertPlain(message);
  assertPlain(stamped);
});
