// What the page's MCP Apps host needs from the official packages, bundled
// by `make build` (tools/build-browser.mjs) into vendor/apps-host.js: the
// page itself has no build step.
export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
export { Client } from "@modelcontextprotocol/client";
export { InMemoryTransport, McpServer } from "@modelcontextprotocol/server";
