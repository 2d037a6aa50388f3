// mcp-provenance/ext-apps: stampAppCalls on the real ext-apps AppBridge
// (2.x). The browser test drives it from a View in Chromium; here the
// bridge's handlers are called as the bridge calls them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { stampAppCalls } from "../pkg/dist/ext-apps.mjs";
import { UI_KEY } from "../pkg/dist/index.mjs";
import { table } from "../pkg/dist/table.mjs";

/** A real AppBridge with every View request stamped; what reached `forward`. */
async function bridged() {
  const { AppBridge } = await import("@modelcontextprotocol/ext-apps/app-bridge");
  const forwarded = [];
  const bridge = stampAppCalls(new AppBridge(null, { name: "host", version: "1.0.0" }, { serverTools: {}, serverResources: {}, serverPrompts: {} }), async (request, extra) => {
    forwarded.push({ request, extra });
    return {};
  });
  return { bridge, forwarded };
}

test("each View call is forwarded stamped initiator app, the View's claim overwritten and the rest kept", async () => {
  const { bridge, forwarded } = await bridged();
  const extra = { mcpReq: { id: 1 } };
  await bridge.oncalltool({ name: "refresh", arguments: { a: 1 }, _meta: { [UI_KEY]: { initiator: "model", visibility: ["app"] }, other: 1 } }, extra);
  await bridge.oncalltool({ name: "refresh" }, extra);
  assert.deepEqual(forwarded.map((f) => f.request), [
    { method: "tools/call", params: { name: "refresh", arguments: { a: 1 }, _meta: { [UI_KEY]: { initiator: "app", visibility: ["app"] }, other: 1 } } },
    { method: "tools/call", params: { name: "refresh", _meta: { [UI_KEY]: { initiator: "app" } } } },
  ]);
  assert.equal(forwarded[0].extra, extra);
});

test("every request a View sends towards the server is stamped, not only tools/call (UI-1)", async () => {
  const { bridge, forwarded } = await bridged();
  const claimed = { _meta: { [UI_KEY]: { initiator: "model" } } };
  await bridge.onreadresource({ uri: "ui://dashboard", ...claimed }, {});
  await bridge.onlistresources(claimed, {});
  await bridge.onlistresourcetemplates({ cursor: "c" }, {});
  await bridge.onlistprompts(undefined, {});
  await bridge.oncalltool({ name: "q" }, {});
  assert.deepEqual(forwarded.map(({ request }) => [request.method, request.params._meta[UI_KEY].initiator]).sort(),
    table.viewRequests.map((method) => [method, "app"]).sort());
  assert.equal(forwarded[0].request.params.uri, "ui://dashboard");
  // docs/rules.md names the same requests as the core.
  const rules = readFileSync(new URL("../docs/rules.md", import.meta.url), "utf8");
  const named = rules.match(/<a id="ui-1"><\/a>[^]*?(?=\n- <a id)/)[0].match(/`[a-z/]+`/g).map((name) => name.slice(1, -1));
  assert.deepEqual(named.sort(), [...table.viewRequests].sort());
});

test("a vendor ui key, and a forward that is not a function", () => {
  const bridge = stampAppCalls({}, async (request) => request, { uiKey: "com.example/ui" });
  return bridge.oncalltool({ name: "q" }, {}).then((request) => {
    assert.deepEqual(request.params._meta, { "com.example/ui": { initiator: "app" } });
    assert.throws(() => stampAppCalls({}, "client"), (e) => e instanceof TypeError && e.code === "invalid-type");
  });
});
