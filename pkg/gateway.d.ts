/**
 * mcp-provenance/gateway: what a gateway does to each HTTP request body on
 * its way to an MCP server, framework-free (Node `http`, Express, Hono, a
 * worker). It fails closed, message by message: anything it cannot process
 * is answered by the filter and never passed on as it came.
 */
import type { AuditContext, AuditRecord, Change, ErrorCode, KeyOptions, Policy } from "./index.js";

/** How a filter treats each request. */
export interface FilterOptions extends KeyOptions {
  /**
   * Sanitize every request's envelope under this policy before it goes on (redact intents, keep
   * unknown fields, tighter limits). Without one, a valid envelope goes on untouched (AI-12) and an
   * invalid one as `sanitize` repairs it.
   */
  policy?: Omit<Policy, keyof KeyOptions>;
  /** Lift legacy `user_query` / `invocation_reason` arguments into the envelope, removing them (AI-17). */
  liftLegacy?: boolean;
}

/** Why the filter answered a message itself. */
export type RefusalCode = ErrorCode | "parse-error" | "bare-user-intent";

/** A request the filter passed on: as it went, its audit record, and what sanitize changed. */
export interface FilteredRequest {
  readonly message: { method: string; [member: string]: unknown };
  readonly record: AuditRecord;
  readonly changes: Change[];
}

/** A message the filter answered itself; notifications (id `null`) get no answer. */
export interface Refusal {
  readonly id: string | number | null;
  readonly code: RefusalCode;
}

/** A JSON-RPC error the filter answers with. */
export interface FilterReply {
  readonly jsonrpc: "2.0";
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string; readonly data?: { readonly code: RefusalCode } };
}

/** Something goes on: send `forward` upstream, and add `replies` to the upstream's answer. */
export interface Forward {
  /** The body to send upstream (a batch when the input was one). */
  readonly forward: string;
  readonly records: FilteredRequest[];
  readonly refused: Refusal[];
  /** The filter's answers to requests of the batch it refused. */
  readonly replies: FilterReply[];
}

/** Nothing goes on: answer the client with `reject` (empty for 202) and `status`. */
export interface Reject {
  /** A JSON-RPC error body, or `""` when only notifications came and were refused (status 202). */
  readonly reject: string;
  readonly status: 400 | 200 | 202;
  readonly records: FilteredRequest[];
  readonly refused: Refusal[];
}

/** Filters one HTTP request body (text); `context` is what the gateway knows (session, principal). */
export type Filter = (body: string, context?: Omit<AuditContext, "policy">) => Forward | Reject;

/**
 * A filter for the request bodies a gateway passes on, with the keys and the policy bound once;
 * options are checked now (a `RangeError` with a code for a bad one).
 * @example
 * const filter = createFilter({ policy: { userIntent: "redact" }, liftLegacy: true });
 * const out = filter(body, { sessionId });
 * if ("reject" in out) reply(out.status, out.reject);
 * else forward(out.forward); // then add out.replies to the upstream's answer
 */
export declare function createFilter(options?: FilterOptions): Filter;
