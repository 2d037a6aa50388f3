/**
 * mcp-provenance/ext-apps: for an MCP Apps host, an `AppBridge` (from
 * `@modelcontextprotocol/ext-apps`) whose View calls each go on stamped
 * `initiator: "app"`, overwriting whatever the View claimed (UI-1, UI-3).
 */
import type { KeyOptions } from "./index.js";

/**
 * Sets `bridge.oncalltool` so that each call a View makes is stamped `initiator: "app"` and handed
 * to `forward` (which has `oncalltool`'s own signature); returns the bridge. Create the bridge
 * with `new AppBridge(null, …)`: a bridge given a client installs its own `oncalltool` on `connect()`.
 * @throws {import("./index.js").ProvenanceError} `invalid-type` when `forward` is not a function; a bad option (RangeError).
 * @example
 * const bridge = stampAppCalls(new AppBridge(null, hostInfo, { serverTools: {} }),
 *   (params, extra) => client.request({ method: "tools/call", params }, { signal: extra.mcpReq.signal }));
 * await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
 */
export declare function stampAppCalls<B extends { oncalltool?: unknown }>(
  bridge: B,
  forward: NonNullable<B["oncalltool"]>,
  options?: Pick<KeyOptions, "uiKey">,
): B;
