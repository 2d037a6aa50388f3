/**
 * mcp-provenance/outgoing: what a host does to the requests it sends, for a
 * front end that ships nothing else of the package. The same functions as
 * the main entry's (declared, with examples, in index.d.ts), in a
 * WebAssembly module of their own that holds only what they need.
 *
 * ```js
 * import { stampInitiator, UI_KEY } from "mcp-provenance/outgoing";
 * const stamped = stampInitiator({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q" } });
 * console.assert(stamped.params._meta[UI_KEY].initiator === "app");
 * ```
 */

export {
  AI_INVOCATION_KEY,
  UI_KEY,
  attachInvocation,
  clearInitiator,
  stampInitiator,
} from "./index.js";
export type {
  AiInvocation,
  Attached,
  Cleared,
  ErrorCode,
  Initiator,
  JsonRpcRequest,
  KeyOptions,
  ProvenanceError,
  Stamped,
} from "./index.js";
