// mcp-provenance/otel: otelAttributes, an audit record as OpenTelemetry span
// attributes (lib/otel.mjs). It needs no OpenTelemetry package itself.
export { otelAttributes } from "./lib/otel.mjs";
