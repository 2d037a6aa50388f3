// mcp-provenance/ext-apps: stampAppCalls on the real ext-apps AppBridge
// (2.x). The browser test drives it from a View in Chromium; here the
// bridge's handler is called as the bridge calls it.
import assert from "node:assert/strict";
import { test } from "node:test";

import { stampAppCalls } from "../pkg/ext-apps.mjs";
import { UI_KEY } from "../pkg/index.mjs";

test("each View call is forwarded stamped initiator app, the View's claim overwritten and the rest kept", async () => {
  const { AppBridge } = await import("@modelcontextprotocol/ext-apps/app-bridge");
  const forwarded = [];
  const bridge = stampAppCalls(new AppBridge(null, { name: "host", version: "1.0.0" }, { serverTools: {} }), async (params, extra) => {
    forwarded.push({ params, extra });
    return { content: [] };
  });
  const extra = { mcpReq: { id: 1 } };
  await bridge.oncalltool({ name: "refresh", arguments: { a: 1 }, _meta: { [UI_KEY]: { initiator: "model", visibility: ["app"] }, other: 1 } }, extra);
  await bridge.oncalltool({ name: "refresh" }, extra);
  assert.deepEqual(forwarded.map((f) => f.params), [
    { name: "refresh", arguments: { a: 1 }, _meta: { [UI_KEY]: { initiator: "app", visibility: ["app"] }, other: 1 } },
    { name: "refresh", _meta: { [UI_KEY]: { initiator: "app" } } },
  ]);
  assert.equal(forwarded[0].extra, extra);
});

test("a vendor ui key, and a forward that is not a function", () => {
  const bridge = stampAppCalls({}, async (params) => params, { uiKey: "com.example/ui" });
  return bridge.oncalltool({ name: "q" }, {}).then((params) => {
    assert.deepEqual(params._meta, { "com.example/ui": { initiator: "app" } });
    assert.throws(() => stampAppCalls({}, "client"), (e) => e instanceof TypeError && e.code === "invalid-type");
  });
});
