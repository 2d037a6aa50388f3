// Cost follows the envelope: arguments and other _meta keys are never
// read, converted or copied; what is returned is new along the changed
// path and shares every untouched subtree; inputs are never changed.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../pkg/dist/index.mjs";

const KEY = api.AI_INVOCATION_KEY;

/** An object that throws on any access at all: proof it is never read. */
function untouchable(name) {
  const trap = () => { throw new Error(`${name} was read`); };
  return new Proxy({}, {
    get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap,
    set: trap, defineProperty: trap, deleteProperty: trap,
  });
}

function request() {
  return {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: {
      name: "execute_query",
      arguments: untouchable("arguments"),
      _meta: {
        [KEY]: { invocationReason: { text: "why\r\nforged" }, model: { name: "m" }, turnId: "t-1" },
        [api.UI_KEY]: { initiator: "model", theme: { dark: true } },
        progressToken: untouchable("another _meta key"),
      },
    },
  };
}

/** A deep snapshot that skips the untouchable parts. */
function snapshot(message) {
  const { arguments: _a, _meta: { progressToken: _p, ...meta }, ...params } = message.params;
  return structuredClone({ ...message, params: { ...params, _meta: meta } });
}

const calls = {
  validate: (r) => api.validate(r),
  sanitize: (r) => api.sanitize(r, { userIntent: "redact" }).message,
  stampInitiator: (r) => api.stampInitiator(r),
  clearInitiator: (r) => api.clearInitiator(r),
  attachInvocation: (r) => api.attachInvocation(r, { turnId: "t-2" }),
  auditRecord: (r) => api.auditRecord(r, { sessionId: "s" }),
  echoTurnId: (r) => api.echoTurnId(r, { jsonrpc: "2.0", id: 7, result: { content: untouchable("result content") } }),
};

for (const [name, call] of Object.entries(calls)) {
  test(`${name} never reads arguments or other _meta keys, and never changes its input`, () => {
    const input = request();
    const before = snapshot(input);
    call(input);
    assert.deepEqual(snapshot(input), before);
  });
}

test("a new object along the changed path, the same objects everywhere else", () => {
  const input = request();
  const stamped = api.stampInitiator(input);
  assert.notEqual(stamped, input);
  assert.notEqual(stamped.params, input.params);
  assert.notEqual(stamped.params._meta, input.params._meta);
  assert.equal(stamped.params.arguments, input.params.arguments);
  assert.equal(stamped.params._meta.progressToken, input.params._meta.progressToken);
  assert.equal(stamped.params._meta[KEY], input.params._meta[KEY]);
  assert.equal(stamped.params._meta[api.UI_KEY].theme, input.params._meta[api.UI_KEY].theme);
  assert.equal(stamped.params._meta[api.UI_KEY].initiator, "app");
  assert.equal(input.params._meta[api.UI_KEY].initiator, "model");

  const { message } = api.sanitize(input);
  assert.equal(message.params.arguments, input.params.arguments);
  assert.equal(message.params._meta[api.UI_KEY], input.params._meta[api.UI_KEY]);
  assert.equal(message.params._meta[KEY].invocationReason.text, "why  forged");
  assert.equal(input.params._meta[KEY].invocationReason.text, "why\r\nforged");

  const response = { jsonrpc: "2.0", id: 7, result: { content: untouchable("result content") } };
  const echoed = api.echoTurnId(input, response);
  assert.equal(echoed.result.content, response.result.content);
  assert.deepEqual(echoed.result._meta, { [KEY]: { turnId: "t-1" } });
  assert.equal(response.result._meta, undefined);
});

test("a clean envelope passes sanitize unchanged (AI-12), as plain data copied once", () => {
  const envelope = { model: { name: "m" }, turnId: "t" };
  const input = { method: "tools/call", params: { _meta: { [KEY]: envelope, other: { x: 1 } } } };
  const { message, changes } = api.sanitize(input);
  assert.deepEqual(changes, []);
  assert.deepEqual(message, input);
  // The objects the rules read are copies holding what was read; the rest is shared.
  assert.notEqual(message.params._meta[KEY], envelope);
  assert.equal(message.params._meta.other, input.params._meta.other);
});

test("liftLegacyArguments copies arguments shallowly, and only with remove", () => {
  const big = { rows: [1, 2, 3] };
  const input = { method: "tools/call", params: { arguments: { user_query: "q", big } } };
  const kept = api.liftLegacyArguments(input);
  assert.equal(kept.params.arguments, input.params.arguments);
  const removed = api.liftLegacyArguments(input, { remove: true });
  assert.notEqual(removed.params.arguments, input.params.arguments);
  assert.equal(removed.params.arguments.big, big);
  assert.deepEqual(Object.keys(removed.params.arguments), ["big"]);
  assert.deepEqual(input.params.arguments, { user_query: "q", big });
});

test("objects built here are plain, and a __proto__ key never becomes a prototype", () => {
  const envelope = JSON.parse('{"__proto__": {"polluted": true}, "turnId": "a\\nb"}');
  const input = { method: "tools/call", params: { _meta: { [KEY]: envelope } } };
  const { message } = api.sanitize(input, { unknownFields: "keep" });
  const out = message.params._meta[KEY];
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(Object.hasOwn(out, "__proto__"));
  assert.equal(out.polluted, undefined);
  assert.equal({}.polluted, undefined);
  const stamped = api.stampInitiator({ method: "x" });
  for (const object of [stamped, stamped.params, stamped.params._meta, stamped.params._meta[api.UI_KEY]]) {
    assert.equal(Object.getPrototypeOf(object), Object.prototype);
  }
});
