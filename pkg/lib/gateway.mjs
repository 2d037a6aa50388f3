// mcp-provenance/gateway: what a gateway does to one HTTP request body, in
// one function any server framework can call. It fails closed, message by
// message: a message the library cannot process is answered by the filter
// and never passed on as it came; the rest of a batch goes on.
import { auditRecord, createProvenance } from "./api.mjs";

/** JSON-RPC error codes of the filter's own answers. */
const PARSE_ERROR = -32700;
const REFUSED = -32602;

const isRequest = (message) => typeof message === "object" && message !== null && typeof message.method === "string";
const failure = (id, code, message, data) => ({ jsonrpc: "2.0", id: id ?? null, error: { code, message, ...(data && { data }) } });

/**
 * A filter for the bodies of HTTP requests on their way to an MCP server.
 * See `createFilter` in index.d.ts for the contract.
 *
 * ```js
 * import { createFilter } from "mcp-provenance/gateway";
 * const filter = createFilter({ policy: { userIntent: "redact" } });
 * const out = filter('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * console.assert(out.forward === '{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * ```
 */
export function createFilter(options = {}) {
  const { policy, liftLegacy = false, ...keys } = options ?? {};
  const mp = createProvenance({ ...keys, ...policy });
  const repairAlways = policy !== undefined && Object.keys(policy).some((name) => name !== "invocationKey" && name !== "uiKey");
  const redacting = policy?.userIntent === "redact" || policy?.userIntent === "drop";

  /** A message the filter answers itself (a notification gets no answer). */
  const refuse = (message, code) => ({
    refused: { id: message.id ?? null, code },
    reply: message.id === undefined ? undefined : failure(message.id, REFUSED, "the request's metadata cannot be processed", { code }),
  });

  /** One message: what goes on, or the refusal. */
  function examine(message, context) {
    if (!isRequest(message)) return { forward: message };
    try {
      const lifted = liftLegacy ? mp.liftLegacyArguments(message, { remove: true }) : message;
      // The record carries validate's diagnostics: one pass of the rules serves both.
      const record = auditRecord(lifted, { ...context, policy: { ...keys, ...policy } });
      const { diagnostics } = record;
      // A bare userIntent is no envelope field (AI-9): a filter that removes intents cannot vouch for it.
      if (redacting && diagnostics.some((d) => d.code === "bare-key" && d.path.endsWith("/userIntent"))) {
        return refuse(message, "bare-user-intent");
      }
      const valid = !diagnostics.some((d) => d.severity === "error");
      const { message: forward, changes } = repairAlways || !valid ? mp.sanitize(lifted) : { message: lifted, changes: [] };
      return { forward, filtered: { message: forward, record, changes } };
    } catch (thrown) {
      return refuse(message, typeof thrown?.code === "string" ? thrown.code : "internal-error");
    }
  }

  return function filter(body, context = {}) {
    let parsed;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { reject: JSON.stringify(failure(null, PARSE_ERROR, "the body is not JSON")), status: 400, records: [], refused: [{ id: null, code: "parse-error" }] };
    }
    const batch = Array.isArray(parsed);
    const seen = (batch ? parsed : [parsed]).map((message) => examine(message, context));
    const forwarded = seen.filter((s) => "forward" in s).map((s) => s.forward);
    const records = seen.flatMap((s) => (s.filtered ? [s.filtered] : []));
    const refused = seen.flatMap((s) => (s.refused ? [s.refused] : []));
    const replies = seen.flatMap((s) => (s.reply ? [s.reply] : []));
    if (forwarded.length > 0 || seen.length === 0) return { forward: JSON.stringify(batch ? forwarded : forwarded[0]), records, refused, replies };
    if (replies.length === 0) return { reject: "", status: 202, records, refused };
    return { reject: JSON.stringify(batch ? replies : replies[0]), status: 200, records, refused };
  };
}
