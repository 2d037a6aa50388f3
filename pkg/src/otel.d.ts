/**
 * mcp-provenance/otel: an audit record as OpenTelemetry span attributes,
 * following the semantic conventions for MCP where they name a fact
 * (`mcp.method.name`, `mcp.session.id`, `jsonrpc.request.id`,
 * `gen_ai.operation.name`, `gen_ai.tool.name`) and the `mcp_provenance.`
 * namespace where they do not yet; and the span a request's `traceparent`
 * names, for the server's span to continue the caller's trace. Needs no
 * OpenTelemetry package.
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
  /** Free text: only with `{ freeText: true }`. */
  "mcp_provenance.client_asserted.invocation_reason"?: string;
  /** Free text: only with `{ freeText: true }`. */
  "mcp_provenance.client_asserted.user_intent"?: string;
  "mcp_provenance.client_asserted.user_intent_redacted"?: boolean;
  /** The correlation ids of each kind the client sent (COR-1), in the record's order. */
  "mcp_provenance.client_asserted.conversation_ids"?: string[];
  "mcp_provenance.client_asserted.turn_ids"?: string[];
  "mcp_provenance.client_asserted.request_ids"?: string[];
  "mcp_provenance.client_asserted.user_ids"?: string[];
  "mcp_provenance.client_asserted.organization_ids"?: string[];
  /** The `_meta` keys those ids came from, each once (`vscode.conversationId`, ...). */
  "mcp_provenance.client_asserted.correlation_keys"?: string[];
  /** The Host's claim, not verified (UI-6); absent means unknown (UI-4). */
  "mcp_provenance.host_attested.initiator"?: string;
  "mcp_provenance.witnessed.principal"?: string;
  /** Whether no diagnostic is an error. */
  "mcp_provenance.valid": boolean;
  /** Each diagnostic as `"<rule> <code>"`, e.g. `"AI-13 control-character"`. */
  "mcp_provenance.diagnostics": string[];
};

/** What {@link otelAttributes} exports beyond the default. */
export interface AttributeOptions {
  /**
   * Also export the free text a user or model wrote (`userIntent`, `invocationReason`), made safe
   * as the record keeps it. Off by default: traces are kept and shown more widely than audit records.
   */
  freeText?: boolean;
}

/**
 * The span attributes of one audit record, for `span.setAttributes`.
 * @example
 * const span = tracer.startSpan(`tools/call ${record.tool}`, { attributes: otelAttributes(record) });
 */
export declare function otelAttributes(record: AuditRecord, options?: AttributeOptions): ProvenanceAttributes;

/** A remote span, as OpenTelemetry's `SpanContext` has it (assignable to it). */
export interface RemoteSpanContext {
  /** 32 lower-case hex digits. */
  traceId: string;
  /** 16 lower-case hex digits: the caller's span. */
  spanId: string;
  /** The W3C trace flags (1: sampled). */
  traceFlags: number;
  isRemote: true;
}

/**
 * The caller's span from the request's `traceparent`, as the core checked and recorded it (COR-4);
 * `undefined` without a valid one. Start the server's span under it to continue the caller's trace.
 * @example
 * import { ROOT_CONTEXT, trace } from "@opentelemetry/api";
 * const parent = parentSpanContext(record);
 * const span = tracer.startSpan(name, { attributes: otelAttributes(record) },
 *   parent && trace.setSpanContext(ROOT_CONTEXT, parent));
 */
export declare function parentSpanContext(record: AuditRecord): RemoteSpanContext | undefined;
