// The boundary between JS and the core (pkg/src/lib, binding): what is read of
// a value and how, where a value JSON cannot hold is reported, and the
// second reading the core asks for when a policy keeps more than the first
// one held.
import assert from "node:assert/strict";
import { test } from "node:test";

import * as api from "../pkg/dist/index.mjs";
import { start } from "../pkg/dist/lib/host.mjs";

const KEY = api.AI_INVOCATION_KEY;
const ENVELOPE = `/params/_meta/${KEY.replace("/", "~1")}`;
const withEnvelope = (envelope) => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [KEY]: envelope } } });
const envelopeOf = (message) => message.params._meta[KEY];

test("a string is cut before it crosses, never inside a surrogate pair", () => {
  const { message, changes } = api.sanitize(withEnvelope({ userIntent: { text: "😀".repeat(3000) } }));
  const text = envelopeOf(message).userIntent.text;
  assert.ok(text.isWellFormed());
  assert.equal(text, `${"😀".repeat(511)}…`);
  assert.deepEqual(changes.map((c) => c.action), ["truncated"]);
});

test("a lone surrogate reads as U+FFFD, and sanitize writes it so", () => {
  const { message } = api.sanitize(withEnvelope({ turnId: "a\ud800b" }));
  assert.equal(envelopeOf(message).turnId, "a\ufffdb");
});

test("what JSON cannot hold is reported where it stands", () => {
  const keep = { unknownFields: "keep" };
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  let deep = {};
  for (let i = 0; i < 200; i++) deep = { deep };
  const cases = [
    [{ x: cyclic }, `${ENVELOPE}/x/self`, "a cycle"],
    [{ x: deep }, null, "nesting deeper than 128 levels"],
    [{ x: Object.assign([], { length: 4e9 }) }, `${ENVELOPE}/x`, "an array of more than 1048576 items"],
    [{ x: [1, { get y() { throw new Error("getter"); } }] }, `${ENVELOPE}/x/1/y`, "a getter or Proxy trap threw"],
    [{ x: { y: 1n } }, `${ENVELOPE}/x/y`, "a BigInt"],
    [{ x: new Date() }, `${ENVELOPE}/x`, "an object that is not plain JSON (a class instance, a Date, a Map…)"],
    [{ userIntent: { text: NaN } }, `${ENVELOPE}/userIntent/text`, "a number JSON cannot hold"],
  ];
  for (const [envelope, path, what] of cases) {
    assert.throws(() => api.sanitize(withEnvelope(envelope), keep), (error) => {
      assert.equal(error.name, "TypeError");
      assert.equal(error.code, "unreadable");
      if (path === null) assert.ok(error.message.endsWith(`cannot be read as JSON: ${what}`), error.message);
      else assert.equal(error.message, `\`${path}\` cannot be read as JSON: ${what}`);
      return true;
    });
  }
});

test("an unreadable value is one MSG-1 diagnostic from validate and a TypeError elsewhere", () => {
  const message = withEnvelope({ userIntent: { get text() { throw new Error("getter"); } } });
  assert.deepEqual(api.validate(message), {
    valid: false,
    diagnostics: [{
      code: "unreadable",
      severity: "error",
      rule: "MSG-1",
      path: `${ENVELOPE}/userIntent/text`,
      message: `\`${ENVELOPE}/userIntent/text\` cannot be read as JSON: a getter or Proxy trap threw`,
    }],
  });
  assert.throws(() => api.sanitize(message), { name: "TypeError", code: "unreadable" });
  const options = { get invocationKey() { throw new Error("getter"); } };
  assert.equal(api.validate({ method: "ping" }, options).diagnostics[0].code, "unreadable");
  assert.throws(() => api.stampInitiator({ method: "ping" }, "app", options), { name: "TypeError", code: "unreadable" });
});

test("a policy that keeps more than the first reading held reads again: longer strings", () => {
  const text = "x".repeat(60_000);
  const { message, changes } = api.sanitize(withEnvelope({ userIntent: { text } }), { maxIntentBytes: 100_000, maxEnvelopeBytes: 1_048_576 });
  assert.equal(envelopeOf(message).userIntent.text, text);
  assert.deepEqual(changes, []);
  const record = api.auditRecord(withEnvelope({ userIntent: { text } }), { policy: { maxIntentBytes: 100_000, maxEnvelopeBytes: 1_048_576 } });
  assert.equal(record.clientAsserted.userIntent, text);
});

test("a policy that keeps more than the first reading held reads again: unknown members whole", () => {
  const { message, changes } = api.sanitize(withEnvelope({ turnId: "t", vendor: { note: "a\nb", n: 1e21, list: [true, null] } }), { unknownFields: "keep" });
  assert.deepEqual(envelopeOf(message).vendor, { note: "a b", n: 1e21, list: [true, null] });
  assert.deepEqual(changes, [{ action: "neutralized", path: `${ENVELOPE}/vendor/note`, rule: "AI-13" }]);
});

test("an echoed turnId is compared on its first 4,098 code units, and echoed whole", () => {
  const head = "t".repeat(4000);
  const sent = `${head}a${"x".repeat(200)}`;
  const request = withEnvelope({ turnId: sent });
  const echo = (turnId) => ({ jsonrpc: "2.0", id: 1, result: { _meta: { [KEY]: { turnId } } } });
  assert.deepEqual(api.validate(echo(`${head}b${"x".repeat(200)}`), { request }).diagnostics.map((d) => d.code), ["turn-id-mismatch"]);
  assert.deepEqual(api.validate(echo(sent), { request }).diagnostics, []);
  assert.deepEqual(api.validate(echo(`${head}a${"x".repeat(150)}${"y".repeat(50)}`), { request }).diagnostics, [], "past what is read, not compared");
  assert.equal(api.echoTurnId(request, { id: 1, result: {} }).result._meta[KEY].turnId, sent);
});

test("the module's memory grows for a large value, and calls go on working", () => {
  const big = { vendor: { notes: Array.from({ length: 500 }, (_, i) => `note ${i} `.repeat(100)) } };
  const { message } = api.sanitize(withEnvelope(big), { unknownFields: "keep", maxEnvelopeBytes: 1_048_576 });
  assert.deepEqual(envelopeOf(message).vendor, big.vendor);
  assert.deepEqual(api.validate(withEnvelope({ turnId: "still here" })), { valid: true, diagnostics: [] });
});

test("what a call allocates is taken back when the next begins: memory holds steady", () => {
  // A module of its own, to read its memory.
  const { memory } = start();
  const big = withEnvelope({ vendor: { notes: Array.from({ length: 200 }, (_, i) => `note ${i} `.repeat(100)) } });
  const policy = { unknownFields: "keep", maxEnvelopeBytes: 1_048_576 };
  const small = withEnvelope({ turnId: "t-1", userIntent: { text: "line\nbreak" } });
  const first = [api.sanitize(big, policy), api.sanitize(small)];
  const held = memory.buffer.byteLength;
  for (let n = 0; n < 50; n++) {
    assert.deepEqual([api.sanitize(big, policy), api.sanitize(small)], first);
  }
  assert.equal(memory.buffer.byteLength, held);
});

test("errors thrown between calls that take their memory back leave the module whole", () => {
  // What wasm-bindgen keeps of the JS values Rust makes (the errors) is
  // allocated as the module starts, not in the call that first throws.
  start();
  for (let n = 0; n < 300; n++) {
    assert.throws(() => api.stampInitiator([n]), { name: "TypeError", code: "not-a-request" });
    assert.equal(api.validate(withEnvelope({ userIntent: { text: "y".repeat((n * 997) % 5000) } })).valid, true);
    assert.throws(() => api.sanitize({ method: "x" }, { maxIntentBytes: 3 }), { name: "RangeError", code: "invalid-limit" });
  }
});

test("an option named like a member of Object.prototype reads only own members", () => {
  const message = { method: "tools/call", params: { _meta: { toString: { turnId: "t" } } } };
  const report = api.validate({ method: "tools/call", params: { _meta: {} } }, { invocationKey: "toString" });
  assert.deepEqual(report, { valid: true, diagnostics: [] });
  assert.equal(api.auditRecord(message, { policy: { invocationKey: "toString" } }).clientAsserted.turnId, "t");
});
