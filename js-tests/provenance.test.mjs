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
