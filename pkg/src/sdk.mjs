// mcp-provenance/sdk: provenanceTransport, provenance on any MCP SDK
// transport (lib/sdk.mjs). It needs no SDK package itself.
export { provenanceTransport } from "./lib/sdk.mjs";
