/**
 * mcp-provenance/otel: an audit record as OpenTelemetry span attributes,
 * following the semantic conventions for MCP where they name a fact
 * (`mcp.method.name`, `mcp.session.id`, `jsonrpc.request.id`,
 * `gen_ai.operation.name`, `gen_ai.tool.name`) and the `mcp_provenance.`
 * namespace where they do not yet. Needs no OpenTelemetry package.
 */
import type { AuditRecord } from "./index.js";

/**
 * The attributes of one record; a fact the record lacks is left out. A type, not an interface, so
 * that it is assignable to OpenTelemetry's `Attributes` (an index signature).
 */
export type ProvenanceAttributes = {
  "mcp.method.name": string;
  "mcp.session.id"?: string;
  /** The JSON-RPC id, as a string (as the conventions ask). */
  "jsonrpc.request.id"?: string;
  /** `"execute_tool"` for a `tools/call`. */
  "gen_ai.operation.name"?: "execute_tool";
  "gen_ai.tool.name"?: string;
  /** The client's claims, made safe: recorded, never authorization evidence (AI-10). */
  "mcp_provenance.client_asserted.turn_id"?: string;
  "mcp_provenance.client_asserted.model"?: string;
  "mcp_provenance.client_asserted.invocation_reason"?: string;
  "mcp_provenance.client_asserted.user_intent"?: string;
  "mcp_provenance.client_asserted.user_intent_redacted"?: boolean;
  /** The Host's claim, not verified (UI-6); absent means unknown (UI-4). */
  "mcp_provenance.host_attested.initiator"?: string;
  "mcp_provenance.witnessed.principal"?: string;
  /** Whether no diagnostic is an error. */
  "mcp_provenance.valid": boolean;
  /** Each diagnostic as `"<rule> <code>"`, e.g. `"AI-13 control-character"`. */
  "mcp_provenance.diagnostics": string[];
};

/**
 * The span attributes of one audit record, for `span.setAttributes`.
 * @example
 * const span = tracer.startSpan(`tools/call ${record.tool}`, { attributes: otelAttributes(record) });
 */
export declare function otelAttributes(record: AuditRecord): ProvenanceAttributes;
