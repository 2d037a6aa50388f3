/**
 * mcp-provenance/gateway: the wire filter. What a gateway does to each HTTP
 * request body on its way to an MCP server, framework-free (Node `http`,
 * Express, Hono, a worker): the body's bytes (or text) go in, and what comes
 * out is what to do. What no rule changed goes on byte for byte (ids, numbers
 * such as `12345678901234567890` and `1e400`, whitespace, member order); a
 * body or message that cannot be processed is refused, never passed on as it
 * came. Every decision is the Rust core's, in one call.
 */
import type { AuditRecord, Change, Diagnostic, ErrorCode, KeyOptions, Policy, WireCode } from "./index.js";

export type { WireCode };

/** How a filter treats each body; checked when the filter is made. */
export interface FilterOptions {
  /**
   * Sanitize every envelope under this policy before it goes on (redact or drop intents, keep
   * unknown fields, tighter limits). Without one, a valid envelope goes on untouched (AI-12) and an
   * invalid one as `sanitize` repairs it. Its keys are not here: see `invocationKeys` and `uiKeys`.
   */
  policy?: Omit<Policy, keyof KeyOptions>;
  /** Lift legacy `user_query` / `invocation_reason` arguments into the standard envelope, removing them (AI-17). */
  liftLegacy?: boolean;
  /** Vendor envelope keys read besides `io.modelcontextprotocol/aiInvocation` (KEY-3), e.g. `["com.example/aiInvocation"]`. */
  invocationKeys?: string[];
  /** Vendor `ui` entry keys read besides `io.modelcontextprotocol/ui` (KEY-3). */
  uiKeys?: string[];
  /** The most messages a batch may hold (WIRE-4): 1 to 100,000, default 1,000. */
  maxBatch?: number;
  /** The deepest a message may nest (WIRE-4): 8 to 4,096, default 128. */
  maxDepth?: number;
}

/** What the gateway knows of a body: recorded as witnessed. */
export interface FilterContext {
  receivedAt?: string;
  principal?: string;
  /** A session id the server issued (its answer's `Mcp-Session-Id`), never one a client's header alone names (AI-10). */
  sessionId?: string;
  /**
   * The request's HTTP headers, as Node's `req.headers` has them (names in any case). Given, the
   * body is refused with 415 unless they say UTF-8 JSON: one `Content-Type: application/json`, no
   * `charset` but utf-8, no `Content-Encoding` but identity (WIRE-2), so that the server reads the
   * very text the filter checked. No other header is read.
   */
  headers?: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/** Why the filter refused a body or a message. */
export type RefusalCode = WireCode | "invalid-request" | ErrorCode;

/** A body, as text or as the bytes that came. */
export type Body = string | Uint8Array;

/** One message of a body, as the filter saw it: `JSON.parse` of one of an outcome's `lines` (or, without `message`, of its `accounts`). */
export interface MessageAccount {
  /** The message as it goes on (absent when refused). Parsed from the exact text: `JSON.parse` may round big numbers. */
  readonly message?: unknown;
  /** Its place in a batch. */
  readonly index?: number;
  readonly kind: "request" | "notification" | "response" | "malformed";
  readonly id?: string | number;
  /** Why the filter refused it; a refused message never goes on. */
  readonly refused?: RefusalCode;
  /** A request's or notification's audit record (not of a refused one). */
  readonly record?: AuditRecord;
  /** What `validate` found in a response or a malformed message. */
  readonly diagnostics?: Diagnostic[];
  /** What the filter changed in it. */
  readonly changes: Change[];
}

/** What every outcome carries. */
interface Accounted {
  /** The filter's JSON-RPC answers to the requests of a batch it refused, one JSON text each. */
  readonly replies: string[];
  /** One JSON line per message, ready for a log (see {@link MessageAccount}). */
  readonly lines: string[];
  /**
   * Each message's account as JSON, its line less the message: as large as its envelope allows
   * whatever its `arguments`, so that `JSON.parse` of it costs what the account holds.
   */
  readonly accounts: string[];
  /**
   * Each message's id as it came, its JSON text (`12345678901234567890`, `"r-1"`), where it is a
   * string or a number and not in doubt: what a gateway's own answer to it names, exactly.
   */
  readonly ids: (string | undefined)[];
  /**
   * For each request that goes on, a note (JSON text) of its id and the `turnId` it carried: what
   * {@link Filter.echo} writes into the answer to it. Undefined for every other message.
   */
  readonly turns: (string | undefined)[];
}

/** Something goes on: send `forward` upstream, and add `replies` to the upstream's answer. */
export interface Forward<B extends Body = Body> extends Accounted {
  /** The body to send upstream: of the type given, and the very value given when nothing changed. */
  readonly forward: B;
}

/** Nothing goes on: answer the client with `status` and `reject` (empty for 202). */
export interface Reject extends Accounted {
  /** A JSON-RPC error body (a batch of them for a batch), or `""` when only refused notifications came. */
  readonly reject: string;
  /** 400: not JSON, or an empty batch; 413: a batch too large; 415: headers saying the body is not UTF-8 JSON; 200: the filter's answers; 202: nothing to answer. */
  readonly status: 400 | 413 | 415 | 200 | 202;
}

/** A filter, made by {@link createFilter}. */
export interface Filter {
  /**
   * Filters one HTTP request body; never throws on what the body holds (a `TypeError` with code
   * `invalid-type` when `body` is neither a string nor a `Uint8Array`).
   */
  <B extends Body>(body: B, context?: FilterContext): Forward<B> | Reject;
  /**
   * The server's answer to a forwarded body (a JSON body, or the `data` of one event of an event
   * stream: a message or a batch) with each result carrying the `turnId` of the request it answers
   * in `result._meta[key]`, and nothing else of the envelope (AI-11); the member removed where the
   * request carried no `turnId`. Of the type given, and the very value when nothing changed (answers
   * to other requests, errors, notifications). Undefined when the answer is not JSON the echo can
   * read: never pass that on, answer the requests yourself. Every other byte stays as it came.
   * @example
   * const out = filter(body);
   * if ("forward" in out) {
   *   const answer = await upstream(out.forward);
   *   const echoed = filter.echo(answer, out) ?? failed(out.ids);
   * }
   */
  echo<A extends Body>(answer: A, forwarded: Forward): A | undefined;
}

/**
 * A filter for the request bodies a gateway passes on, its options bound and checked once (a
 * `RangeError` with a code for a bad one, `unknown-option` for a policy option outside `policy`).
 * The options are read once, each getter run once, and the filter is made from that reading.
 * Make it once: it lives in the module as long as the module does (filters made with the same
 * options, as JSON, are one filter there).
 * @example
 * const filter = createFilter({ policy: { userIntent: "redact" }, liftLegacy: true });
 * const out = filter(body, { sessionId });
 * for (const line of out.lines) log.write(line + "\n");
 * if ("reject" in out) reply(out.status, out.reject);
 * else forward(out.forward); // then add out.replies to the upstream's answer
 */
export declare function createFilter(options?: FilterOptions): Filter;
