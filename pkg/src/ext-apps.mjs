// mcp-provenance/ext-apps: stampAppCalls, for an MCP Apps host's AppBridge
// (lib/ext-apps.mjs). It needs no ext-apps package itself.
export { stampAppCalls } from "./lib/ext-apps.mjs";
