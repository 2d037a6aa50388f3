// mcp-provenance/gateway: createFilter, message by message, as a gateway
// calls it on each HTTP body. What goes on, what the filter answers itself,
// and what it records; the same through require, sharing one module.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

import { createFilter } from "../pkg/gateway.mjs";
import { AI_INVOCATION_KEY as KEY, UI_KEY } from "../pkg/index.mjs";

const call = (id, envelope, args = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "q", arguments: args, _meta: { [KEY]: envelope } } });
/** An unknown field nested 200 objects deep: no policy that keeps unknown fields can read it. */
const tooDeep = (id) => JSON.parse(JSON.stringify(call(id, { x: 0 })).replace('"x":0', `"x":${'{"x":'.repeat(200)}0${"}".repeat(200)}`));

test("a valid envelope goes on byte for byte the same JSON, with its audit record (AI-12)", () => {
  const message = call(1, { turnId: "t-1", userIntent: { text: "line\nbreak" } });
  const out = createFilter()(JSON.stringify(message), { sessionId: "s-1" });
  assert.equal(out.forward, JSON.stringify(message));
  assert.deepEqual(out.refused, []);
  assert.deepEqual(out.replies, []);
  const [{ message: forwarded, record, changes }] = out.records;
  assert.deepEqual(forwarded, message);
  assert.deepEqual(changes, []);
  assert.equal(record.clientAsserted.userIntent, "line break");
  assert.equal(record.witnessed.sessionId, "s-1");
  assert.deepEqual(record.diagnostics.map((d) => d.code), ["control-character"]);
});

test("an invalid envelope goes on as sanitize repairs it", () => {
  const out = createFilter()(JSON.stringify(call(2, { turnId: 7, userIntent: { text: "hi" } })));
  assert.deepEqual(JSON.parse(out.forward).params._meta[KEY], { userIntent: { text: "hi" } });
  assert.deepEqual(out.records[0].changes.map((c) => [c.path, c.action]), [[`/params/_meta/${KEY.replace("/", "~1")}/turnId`, "dropped"]]);
});

test("with a policy every envelope is sanitized under it; legacy arguments are lifted when asked", () => {
  const filter = createFilter({ policy: { userIntent: "redact" }, liftLegacy: true });
  const out = filter(JSON.stringify(call(3, { turnId: "t" }, { query: "SELECT 1", user_query: "secret question" })));
  const forwarded = JSON.parse(out.forward);
  assert.deepEqual(forwarded.params.arguments, { query: "SELECT 1" });
  assert.deepEqual(forwarded.params._meta[KEY], { turnId: "t", userIntent: { redacted: true } });
  assert.ok(!out.forward.includes("secret question"));
});

test("a batch: each refused request answered, the rest forwarded, notifications dropped", () => {
  const { id, ...notification } = tooDeep(0);
  const batch = [call(1, { turnId: "t" }), tooDeep(2), notification, { jsonrpc: "2.0", id: 9, result: {} }];
  const out = createFilter({ policy: { unknownFields: "keep" } })(JSON.stringify(batch));
  assert.deepEqual(JSON.parse(out.forward).map((m) => m.id), [1, 9]);
  assert.deepEqual(out.refused, [{ id: 2, code: "unreadable" }, { id: null, code: "unreadable" }]);
  assert.deepEqual(out.replies, [{ jsonrpc: "2.0", id: 2, error: { code: -32602, message: "the request's metadata cannot be processed", data: { code: "unreadable" } } }]);
  assert.equal(out.records.length, 1);
});

test("nothing goes on: a parse error, a refused request, a refused notification", () => {
  const filter = createFilter({ policy: { unknownFields: "keep" } });
  assert.deepEqual(filter('{"jsonrpc": "2.0", "id": 1, "method": "tools/c'), {
    reject: JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "the body is not JSON" } }), status: 400, records: [], refused: [{ id: null, code: "parse-error" }],
  });
  const refused = filter(JSON.stringify(tooDeep(7)));
  assert.equal(refused.status, 200);
  assert.deepEqual(JSON.parse(refused.reject).error.data, { code: "unreadable" });
  const { id, ...notification } = tooDeep(0);
  assert.deepEqual(filter(JSON.stringify(notification)), { reject: "", status: 202, records: [], refused: [{ id: null, code: "unreadable" }] });
});

test("redacting, a bare _meta.userIntent is refused: the filter cannot vouch for it", () => {
  const bare = { jsonrpc: "2.0", id: 4, method: "tools/call", params: { _meta: { userIntent: { text: "secret" } } } };
  const out = createFilter({ policy: { userIntent: "redact" } })(JSON.stringify(bare));
  assert.deepEqual(JSON.parse(out.reject).error.data, { code: "bare-user-intent" });
  assert.equal(createFilter()(JSON.stringify(bare)).forward, JSON.stringify(bare));
});

test("a vendor key is configured once; a misspelt option is a RangeError now, not a silent default", () => {
  const vendor = "com.example/aiInvocation";
  const out = createFilter({ invocationKey: vendor, policy: { userIntent: "redact" } })(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [vendor]: { userIntent: { text: "x" } } } } }));
  assert.deepEqual(JSON.parse(out.forward).params._meta[vendor].userIntent, { redacted: true });
  assert.throws(() => createFilter({ polcy: {} }), (error) => error instanceof RangeError && error.code === "unknown-option");
  assert.throws(() => createFilter({ policy: { userIntent: "hide" } }), (error) => error instanceof RangeError && error.code === "invalid-option");
});

test("require gives the same filter, on the same module instance as the main entry", () => {
  const require = createRequire(import.meta.url);
  const { createFilter: required } = require("../pkg/dist/gateway.cjs");
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { [UI_KEY]: { initiator: "app" } } } });
  assert.deepEqual(required()(body), createFilter()(body));
  assert.match(require("node:fs").readFileSync(new URL("../pkg/dist/gateway.cjs", import.meta.url), "utf8"), /require\("\.\/index\.cjs"\)/);
});
