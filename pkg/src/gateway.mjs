// mcp-provenance/gateway: createFilter, for gateways (lib/gateway.mjs). It
// shares the package's module and functions with the main entry.
export { createFilter } from "./lib/gateway.mjs";
