// mcp-provenance/ext-apps: an MCP Apps AppBridge whose View requests towards
// the server are each stamped `initiator: "app"` (UI-1, UI-3), whatever the
// View put there, on their way. Which requests those are is the core's list
// (VIEW_REQUESTS in src/initiator.rs); this file knows only which AppBridge
// handler receives each.
import { createProvenance } from "./lib/api.mjs";
import { table } from "./table.mjs";

/** The AppBridge handler each View request arrives at (ext-apps 2.x). */
const HANDLERS = {
  "tools/call": "oncalltool",
  "resources/read": "onreadresource",
  "resources/list": "onlistresources",
  "resources/templates/list": "onlistresourcetemplates",
  "prompts/list": "onlistprompts",
};

/**
 * Sets the bridge's handler of each request a View sends towards the
 * server, to stamp it and hand it to `forward`; see ext-apps.d.ts.
 *
 * ```js
 * import { stampAppCalls } from "mcp-provenance/ext-apps";
 * const bridge = {};
 * stampAppCalls(bridge, async (request) => request);
 * const forwarded = await bridge.onreadresource({ uri: "ui://x", _meta: { "io.modelcontextprotocol/ui": { initiator: "model" } } }, {});
 * console.assert(forwarded.method === "resources/read" && forwarded.params._meta["io.modelcontextprotocol/ui"].initiator === "app");
 * ```
 */
export function stampAppCalls(bridge, forward, options) {
  if (typeof forward !== "function") throw Object.assign(new TypeError("forward must be a function"), { code: "invalid-type" });
  const mp = createProvenance(options);
  for (const method of table.viewRequests) {
    bridge[HANDLERS[method]] = (params, extra) => forward(mp.stampInitiator({ method, params }), extra);
  }
  return bridge;
}
