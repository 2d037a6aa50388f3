// mcp-provenance/otel: an audit record as OpenTelemetry span attributes.
// The OpenTelemetry semantic conventions for MCP name the method, session,
// request id and tool; what they have no name for yet lives under
// `mcp_provenance.`, split as the record splits it: `client_asserted.` for
// the client's claims (never authorization evidence, AI-10) and
// `host_attested.` for the Host's initiator (UI-6).

/** The namespace of the attributes the semantic conventions do not define. */
const NS = "mcp_provenance";

/**
 * The span attributes of one audit record; absent facts are left out.
 *
 * ```js
 * import { auditRecord } from "mcp-provenance";
 * import { otelAttributes } from "mcp-provenance/otel";
 * const record = auditRecord({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "q" } });
 * console.assert(otelAttributes(record)["gen_ai.tool.name"] === "q");
 * ```
 */
export function otelAttributes(record) {
  const { clientAsserted: asserted = {}, hostAttested: attested = {}, witnessed = {} } = record;
  const attributes = {
    "mcp.method.name": record.method,
    "mcp.session.id": witnessed.sessionId,
    "jsonrpc.request.id": record.requestId === undefined ? undefined : String(record.requestId),
    "gen_ai.operation.name": record.method === "tools/call" ? "execute_tool" : undefined,
    "gen_ai.tool.name": record.tool,
    [`${NS}.client_asserted.turn_id`]: asserted.turnId,
    [`${NS}.client_asserted.model`]: asserted.model,
    [`${NS}.client_asserted.invocation_reason`]: asserted.invocationReason,
    [`${NS}.client_asserted.user_intent`]: asserted.userIntent,
    [`${NS}.client_asserted.user_intent_redacted`]: asserted.userIntentRedacted,
    [`${NS}.host_attested.initiator`]: attested.initiator,
    [`${NS}.witnessed.principal`]: witnessed.principal,
    [`${NS}.valid`]: record.valid,
    [`${NS}.diagnostics`]: record.diagnostics.map((d) => `${d.rule} ${d.code}`),
  };
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));
}
