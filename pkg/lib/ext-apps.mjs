// mcp-provenance/ext-apps: an MCP Apps AppBridge whose View calls are each
// stamped `initiator: "app"` (UI-1, UI-3), whatever the View put there, on
// their way to the server.
import { createProvenance } from "./api.mjs";

/**
 * Sets `bridge.oncalltool` to stamp each call and hand it to `forward`; see
 * ext-apps.d.ts.
 *
 * ```js
 * import { stampAppCalls } from "mcp-provenance/ext-apps";
 * const bridge = {};
 * stampAppCalls(bridge, async (params) => params);
 * const forwarded = await bridge.oncalltool({ name: "q", _meta: { "io.modelcontextprotocol/ui": { initiator: "model" } } }, {});
 * console.assert(forwarded._meta["io.modelcontextprotocol/ui"].initiator === "app");
 * ```
 */
export function stampAppCalls(bridge, forward, options) {
  if (typeof forward !== "function") throw Object.assign(new TypeError("forward must be a function"), { code: "invalid-type" });
  const mp = createProvenance(options);
  bridge.oncalltool = (params, extra) => forward(mp.stampInitiator({ method: "tools/call", params }).params, extra);
  return bridge;
}
