/**
 * mcp-provenance/otel: an audit record as OpenTelemetry span attributes,
 * following the semantic conventions for MCP where they name a fact
 * (`mcp.method.name`, `mcp.session.id`, `jsonrpc.request.id`,
 * `gen_ai.operation.name`, `gen_ai.tool.name`) and the `mcp_provenance.`
 * namespace where they do not yet; and the span a request's `traceparent`
 * names, for the server's span to continue the caller's trace; and the HTTP
 * middleware's metrics as instruments of your meter. Needs no OpenTelemetry
 * package.
 */
import type { MetricsHooks } from "./http.js";
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

/**
 * What `otelMetrics` needs of an OpenTelemetry `Meter` (`metrics.getMeter(name)` of
 * @opentelemetry/api, or a `MeterProvider`'s): one is assignable to it.
 */
export interface MeterLike {
  createCounter(name: string, options?: { description?: string; unit?: string }): {
    add(value: number, attributes?: { [name: string]: string }): void;
  };
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): { record(value: number, attributes?: { [name: string]: string }): void };
}

/**
 * The HTTP middleware's metrics (mcp-provenance/http's `metrics` option) as instruments of
 * `meter`, made now. Through OpenTelemetry's Prometheus exporter they read as these series (the
 * Python package's prometheus_client metrics read the same):
 * - `mcp_provenance_messages_total{kind, verdict}` (counter `mcp_provenance.messages`): each
 *   message's account, `kind` `request`, `notification`, `response` or `malformed`, `verdict`
 *   `refused` when the filter refused it, else `forwarded`;
 * - `mcp_provenance_refusals_total{code}` (`mcp_provenance.refusals`): each refused message by its
 *   code, and each exchange the middleware answered in the app's stead (or whose answer it
 *   replaced) by the outcome's code (`body-too-large`, `unsupported-media-type`, `parse-error`,
 *   `audit-failed`, `answer-not-json`, …);
 * - `mcp_provenance_redactions_total` (`mcp_provenance.redactions`): each `redacted` change;
 * - `mcp_provenance_audit_failures_total` (`mcp_provenance.audit_failures`): each body whose
 *   accounts, and each outcome, the audit sink failed to keep;
 * - `mcp_provenance_filter_seconds` (histogram `mcp_provenance.filter_seconds`, unit `s`): the
 *   filter's time on each body, in buckets from 10 µs to 0.1 s (0.00001, 0.000025, 0.00005, 0.0001,
 *   …, 0.05, 0.1).
 *
 * The two counters without labels are added 0 at once, so that they read 0 before anything
 * happened. Labels hold codes and kinds, never what a client sent.
 * @throws {import("./index.js").ProvenanceError} `invalid-type` (TypeError): `meter` is not a Meter.
 * @example
 * import { MeterProvider } from "@opentelemetry/sdk-metrics";
 * import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
 * const meter = new MeterProvider({ readers: [new PrometheusExporter({ port: 9464 })] }).getMeter("mcp-provenance");
 * app.use("/mcp", provenanceMiddleware({ audit: "audit.jsonl", metrics: otelMetrics(meter) }));
 */
export declare function otelMetrics(meter: MeterLike): MetricsHooks;
