/**
 * mcp-provenance/ext-apps: for an MCP Apps host, an `AppBridge` (from
 * `@modelcontextprotocol/ext-apps`) whose View requests towards the server each go on stamped
 * `initiator: "app"`, overwriting whatever the View claimed (UI-1, UI-3).
 */
import type { KeyOptions } from "./index.js";

/** The requests a View sends that a Host forwards towards the server (UI-1). */
export type ViewRequestMethod = "tools/call" | "resources/read" | "resources/list" | "resources/templates/list" | "prompts/list";

/** A View's request, stamped, as `forward` gets it. */
export interface ViewRequest {
  method: ViewRequestMethod;
  params: { [member: string]: unknown; _meta: { [key: string]: unknown } };
}

/** The AppBridge handlers `stampAppCalls` sets, one for each {@link ViewRequestMethod}. */
export interface ViewRequestHandlers {
  oncalltool?: unknown;
  onreadresource?: unknown;
  onlistresources?: unknown;
  onlistresourcetemplates?: unknown;
  onlistprompts?: unknown;
}

/**
 * Sets the bridge's handler of each request a View sends towards the server (`oncalltool`,
 * `onreadresource`, `onlistresources`, `onlistresourcetemplates`, `onlistprompts`) so that each is
 * stamped `initiator: "app"` and handed to `forward` as `{ method, params }`, with the handler's
 * `extra`; returns the bridge. Create the bridge with `new AppBridge(null, …)`: a bridge given a
 * client installs its own handlers on `connect()`.
 * @throws {import("./index.js").ProvenanceError} `invalid-type` when `forward` is not a function; a bad option (RangeError).
 * @example
 * const bridge = stampAppCalls(new AppBridge(null, hostInfo, { serverTools: {} }),
 *   (request, extra) => client.request(request, { signal: extra.mcpReq.signal }));
 * await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
 */
/** The `extra` the bridge's handlers get (ext-apps' `RequestHandlerExtra`), read off its `oncalltool`. */
export type ExtraOf<B> = B extends { oncalltool?: ((params: never, extra: infer E) => unknown) | undefined } ? E : unknown;

export declare function stampAppCalls<B extends ViewRequestHandlers>(
  bridge: B,
  forward: (request: ViewRequest, extra: ExtraOf<B>) => Promise<unknown>,
  options?: Pick<KeyOptions, "uiKey">,
): B;
