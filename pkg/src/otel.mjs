// mcp-provenance/otel: an audit record as OpenTelemetry span attributes, and
// the caller's span a server's span continues. The semantic conventions for
// MCP (open-telemetry/semantic-conventions-genai, docs/gen-ai/mcp.md) name
// the method, session, request id and tool; what they have no name for lives
// under `mcp_provenance.`, split as the record splits it: `client_asserted.`
// for the client's claims (never authorization evidence, AI-10, COR-1) and
// `host_attested.` for the Host's initiator (UI-6). Free text a user or a
// model wrote (the intent, the reason) goes to a trace backend only when the
// operator asks for it: traces are kept and shown more widely than audit
// records. And the HTTP middleware's counters as OpenTelemetry metrics, on
// the caller's meter: this module imports no OpenTelemetry package.

/** The namespace of the attributes the semantic conventions do not define. */
const NS = "mcp_provenance";
/** The correlation kinds exported as attributes (a trace is the span's parent instead). */
const ID_KINDS = ["conversation", "turn", "request", "user", "organization"];

/**
 * The span attributes of one audit record; absent facts are left out. With
 * `{ freeText: true }`, the intent and the reason too (made safe, as the
 * record keeps them).
 *
 * ```js
 * import { auditRecord } from "mcp-provenance";
 * import { otelAttributes } from "mcp-provenance/otel";
 * const record = auditRecord({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "q" } });
 * console.assert(otelAttributes(record)["gen_ai.tool.name"] === "q");
 * ```
 */
export function otelAttributes(record, { freeText = false } = {}) {
  const { clientAsserted: asserted = {}, hostAttested: attested = {}, witnessed = {} } = record;
  const ids = asserted.correlation ?? [];
  const attributes = {
    "mcp.method.name": record.method,
    "mcp.session.id": witnessed.sessionId,
    "jsonrpc.request.id": record.requestId === undefined ? undefined : String(record.requestId),
    "gen_ai.operation.name": record.method === "tools/call" ? "execute_tool" : undefined,
    "gen_ai.tool.name": record.tool,
    [`${NS}.client_asserted.turn_id`]: asserted.turnId,
    [`${NS}.client_asserted.model`]: asserted.model,
    [`${NS}.client_asserted.invocation_reason`]: freeText ? asserted.invocationReason : undefined,
    [`${NS}.client_asserted.user_intent`]: freeText ? asserted.userIntent : undefined,
    [`${NS}.client_asserted.user_intent_redacted`]: asserted.userIntentRedacted,
    [`${NS}.host_attested.initiator`]: attested.initiator,
    [`${NS}.witnessed.principal`]: witnessed.principal,
    [`${NS}.valid`]: record.valid,
    [`${NS}.diagnostics`]: record.diagnostics.map((d) => `${d.rule} ${d.code}`),
  };
  for (const kind of ID_KINDS) {
    const values = ids.filter((id) => id.kind === kind).map((id) => id.value);
    if (values.length > 0) attributes[`${NS}.client_asserted.${kind}_ids`] = values;
  }
  const sources = [...new Set(ids.filter((id) => ID_KINDS.includes(id.kind)).map((id) => id.key))];
  if (sources.length > 0) attributes[`${NS}.client_asserted.correlation_keys`] = sources;
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));
}

/**
 * The span the client says the request was made in, from the `traceparent`
 * the core checked (COR-4) and kept in the record: an OpenTelemetry
 * `SpanContext` to start the server's span under (`trace.setSpanContext`),
 * or `undefined` when the request carried none, or an invalid one.
 *
 * ```js
 * import { auditRecord } from "mcp-provenance";
 * import { parentSpanContext } from "mcp-provenance/otel";
 * const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
 * const record = auditRecord({ method: "tools/call", params: { name: "q", _meta: { traceparent } } });
 * console.assert(parentSpanContext(record).spanId === "00f067aa0ba902b7");
 * ```
 */
export function parentSpanContext(record) {
  const ids = record.clientAsserted?.correlation ?? [];
  // Only `traceparent` gives these kinds (COR-2): the core holds them to it.
  const of = (kind) => ids.find((id) => id.kind === kind)?.value;
  const [traceId, spanId, flags] = [of("trace"), of("parentSpan"), of("traceFlags")];
  if (traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}

/**
 * The upper bounds (seconds) of the buckets the filter's time is counted
 * in, the Python package's `FILTER_SECONDS_BUCKETS`: the filter takes tens
 * of microseconds on a call with its envelope, milliseconds on a large batch.
 */
const FILTER_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

/**
 * The HTTP middleware's metrics as OpenTelemetry instruments of `meter`:
 * the object to give as `metrics` to `provenanceMiddleware` or
 * `provenanceFetch` (mcp-provenance/http). Through a Prometheus exporter
 * they read `mcp_provenance_messages_total{kind,verdict}`,
 * `mcp_provenance_refusals_total{code}`, `mcp_provenance_redactions_total`,
 * `mcp_provenance_audit_failures_total` and the histogram
 * `mcp_provenance_filter_seconds`; labels are codes and kinds, never
 * content. See `otelMetrics` in otel.d.ts.
 *
 * ```js
 * import { otelMetrics } from "mcp-provenance/otel";
 * const added = [];
 * const meter = {
 *   createCounter: (name) => ({ add: (value, attributes) => added.push([name, value, attributes]) }),
 *   createHistogram: (name) => ({ record: (value) => added.push([name, value]) }),
 * };
 * const metrics = otelMetrics(meter);
 * metrics.observe({ kind: "request", refused: "duplicate-member", changes: [] });
 * console.assert(JSON.stringify(added.at(-2)) === '["mcp_provenance.messages",1,{"kind":"request","verdict":"refused"}]');
 * console.assert(JSON.stringify(added.at(-1)) === '["mcp_provenance.refusals",1,{"code":"duplicate-member"}]');
 * ```
 */
export function otelMetrics(meter) {
  if (typeof meter?.createCounter !== "function" || typeof meter.createHistogram !== "function") {
    throw Object.assign(new TypeError("otelMetrics takes an OpenTelemetry Meter (metrics.getMeter(name))"), { code: "invalid-type" });
  }
  const messages = meter.createCounter(`${NS}.messages`, { description: "Messages the filter read, by kind and whether it refused them" });
  const refusals = meter.createCounter(`${NS}.refusals`, {
    description: "Refusals by code: of messages, and of exchanges the middleware answered in the app's stead",
  });
  const redactions = meter.createCounter(`${NS}.redactions`, { description: "Fields the filter redacted" });
  const auditFailures = meter.createCounter(`${NS}.audit_failures`, {
    description: "Bodies whose accounts, and exchanges whose outcome, the audit sink failed to keep",
  });
  const seconds = meter.createHistogram(`${NS}.filter_seconds`, {
    description: "The filter's time on one body",
    unit: "s",
    advice: { explicitBucketBoundaries: FILTER_BUCKETS },
  });
  // Counters without labels read 0 before anything happened, as prometheus_client shows them.
  redactions.add(0);
  auditFailures.add(0);
  /** The attributes of each kind and verdict, and of each code, made once. */
  const verdicts = new Map();
  const codes = new Map();
  const of = (map, key, make) => {
    let attributes = map.get(key);
    if (attributes === undefined) map.set(key, (attributes = make()));
    return attributes;
  };
  return {
    observe(account) {
      const { kind, refused, changes } = account;
      // An exchange's outcome is not a message: its refusal comes through `refused`.
      if (kind === "outcome") return;
      const verdict = refused === undefined ? "forwarded" : "refused";
      messages.add(1, of(verdicts, `${kind} ${verdict}`, () => ({ kind: String(kind), verdict })));
      if (refused !== undefined) refusals.add(1, of(codes, refused, () => ({ code: String(refused) })));
      let redacted = 0;
      for (const change of changes ?? []) if (change.action === "redacted") redacted++;
      if (redacted > 0) redactions.add(redacted);
    },
    refused(code) {
      refusals.add(1, of(codes, code, () => ({ code: String(code) })));
    },
    failed() {
      auditFailures.add(1);
    },
    filtered(time) {
      seconds.record(time);
    },
  };
}
