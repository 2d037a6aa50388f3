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
  /**
   * What each of `lines` holds of its message's `params.arguments`, whatever the method
   * (`tools/call`, `prompts/get`, any other) (WIRE-9): `"keep"` (the default) the message whole;
   * `"digest"` the arguments replaced by `{"sha256": "<hex>", "bytes": <length>}` of their JSON
   * text as it goes on; `"drop"` left out. A line that left them out says so
   * (`auditArguments`). Accounts, records and what goes on are the same under every choice.
   */
  auditArguments?: "keep" | "digest" | "drop";
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
  /** In a line whose message's `params.arguments` were left out, how (the filter's `auditArguments`, WIRE-9). */
  readonly auditArguments?: "digest" | "drop";
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

/** What one request that went on got, as the client got it (in an {@link OutcomeAccount}). */
export interface RequestOutcome {
  /** Its JSON-RPC id, as its message's account has it. */
  readonly id: string | number;
  /**
   * A result; a JSON-RPC error (the app's, or the middleware's in its stead); or no answer seen
   * (the app ended without one, the client left first, or the answer went on unread: `echo:
   * false`, a media type no client reads a message from). A client takes the first answer to its
   * request: so does the outcome.
   */
  readonly answer: "result" | "error" | "unseen";
  /** The error's `code`, when it is an integer. */
  readonly code?: number;
}

/**
 * What became of one exchange, once its answer was over (sent, or the client gone, or the app
 * failed): the account an audit sink gets after those of the body's messages, `JSON.parse` of
 * its line. A call the app refused reads as its error, never as served. Only for a POST the
 * middleware read, and only with a sink.
 * @example
 * {"kind":"outcome","status":200,"requests":[{"id":1,"answer":"result"},{"id":2,"answer":"error","code":-32602}],"receivedAt":"2026-04-12T13:20:00.123Z","ms":4.217,"pid":4242,"host":"web-1"}
 */
export interface OutcomeAccount {
  readonly kind: "outcome";
  /** The HTTP status the client was sent; absent when nothing was (the client left, the app failed, first). */
  readonly status?: number;
  /**
   * Why the middleware answered in the app's stead, or put its errors in place of the app's answer:
   * its own code (`body-too-large`, `answer-unreadable`, …), the audit sink's, or the code of the
   * filter's refusal of the whole body (`parse-error`, …).
   */
  readonly refused?: string;
  /** Each request that went on, in the body's order (none when nothing went on). */
  readonly requests: RequestOutcome[];
  /** When the request was received, as its records say. */
  readonly receivedAt?: string;
  /** The session the app issued that the request named (or its answer issued). */
  readonly sessionId?: string;
  /** How long the exchange took, from the request to the answer's end, in milliseconds (to the microsecond). */
  readonly ms: number;
  /** The process that served it, and its host's name, where the runtime says (Node, Deno, Bun). */
  readonly pid?: number;
  readonly host?: string;
}

/** What an audit sink is handed: a message's account, or an exchange's outcome (`kind` tells which). */
export type Account = MessageAccount | OutcomeAccount;

/** What every outcome carries. */
interface Accounted {
  /** The filter's JSON-RPC answers to the requests of a batch it refused, one JSON text each. */
  readonly replies: string[];
  /** One JSON line per message, ready for a log (see {@link MessageAccount}). */
  readonly lines: string[];
  /**
   * Each message's account as JSON, its line less the message: as large as its envelope allows
   * whatever its `arguments`, so that `JSON.parse` of it costs what the account holds. A filter
   * whose recent outcomes' accounts were mostly read (a gateway that logs them) makes them, audit
   * records and all, with the outcome, as it does for bytes past 4 KiB; any other makes them when
   * first read (with `lines`), by filtering the body again (a copy of its bytes, which the caller
   * may reuse meanwhile) in its context: a gateway that only forwards pays for no record. Either
   * way they are the same.
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

/**
 * What an HTTP middleware's core takes besides the filter's options (see `HttpOptions` in
 * mcp-provenance/http, which documents each for the middlewares built on it).
 */
export interface GatewayOptions extends FilterOptions {
  /** Whether each result carries its request's `turnId` back, and nothing else of the envelope (AI-11). Default `true`. */
  echo?: boolean;
  /** The most bytes of a request body read (default 1 MiB). */
  maxBodyBytes?: number;
  /** The most bytes of a JSON answer, or of one event of an event stream, held to echo into (default 16 MiB). */
  maxAnswerBytes?: number;
  /** The most session ids remembered as issued (default 10,000). */
  maxSessions?: number;
  /** The MCP endpoints, as the app routes them (default: every path). */
  paths?: string[];
}

/** An answer of the middleware's own, whole, in the app's stead. */
export interface OwnAnswer {
  readonly status: number;
  /** `[name, value]` pairs: JSON's media type when there is a body, its length, `connection: close` when the connection must close. */
  readonly headers: [string, string][];
  /** JSON text, or `""`. */
  readonly body: string;
}

/** What to send of the app's answer now (src/wire/exchange.rs `Step`). */
export interface Step {
  /** The head the client gets, once it is known: sent before the pieces. */
  readonly head?: {
    readonly status: number;
    /** Changes to the app's headers, in order: `[name, undefined]` removes every value of `name`, `[name, value]` sets it. */
    readonly edits: [string, string | undefined][];
    /** The rest of the app's answer goes on as it comes: no more calls. */
    readonly passes: boolean;
  };
  /** The bytes to send, in order: parts of the piece given, or the exchange's own. */
  readonly pieces: Uint8Array[];
  /** The answer is over: end it; what the app still sends is dropped. */
  readonly over: boolean;
}

/**
 * One request's exchange through a {@link Gateway}: the middleware gives it the request's body
 * (`admit`), then the app's answer (`head`, each `piece`, `end`, or the last piece with its end: `finish`), and sends what each step says.
 * Every decision is the core's: which requests are the middleware's, the witnessed session, how
 * the answer is read (WIRE-8) and echoed (WIRE-7), and the words of the middleware's own answers.
 */
export interface GatewayExchange {
  /** `"pass"`: not the middleware's, to the app as it came; `"watch"`: to the app as it came, its answer through `head`; `"read"`: read the body, then `admit` it. */
  readonly start: "pass" | "watch" | "read";
  /** Whether the body's `Content-Length` is past `maxBodyBytes` already: answer `tooLarge()` without reading it. */
  readonly declaredTooLarge: boolean;
  readonly maxBodyBytes: number;
  /** The session the app issued that the request names, or that its answer named (AI-10). */
  readonly session: string | undefined;
  /**
   * The key (SHA-256 of the id, hex) of the session the request names, when this gateway has not
   * seen the app issue it: for a middleware sharing a store with the gateway's other processes
   * ({@link SESSION_STORE}) to look up before `admit`; `issuedElsewhere()` when the store holds it.
   * Undefined once the body is admitted or the answer begins.
   */
  readonly unknownSession: string | undefined;
  /** The store says the app issued the session the request names: witnessed, by this exchange and the gateway's later ones. */
  issuedElsewhere(): void;
  /**
   * What the app's answer taught of sessions, once `head` was called: `["issued", key]` (a session
   * this gateway did not know of: keep the key, for {@link SESSION_STORE}'s `ttlSeconds`) or
   * `["ended", key]` (a DELETE the app accepted: remove it). Tell the store before sending the head,
   * so that the client's next request finds it wherever it goes.
   */
  readonly sessionNews: ["issued" | "ended", string] | undefined;
  /** Why the middleware answered in the app's stead, when it did. */
  readonly refused: string | undefined;
  /** The ids (JSON texts, as sent) of the requests that went on. */
  readonly waiting: string[];
  /** Whether the body that went on was a batch. */
  readonly batch: boolean;
  /** The answer to a body past `maxBodyBytes` (413, the connection closed). */
  tooLarge(): OwnAnswer;
  /** The answer when the middleware cannot go on (500). */
  failed(code: "body-already-read" | "middleware-failed"): OwnAnswer;
  /** Filters the body, recording what the middleware knows: the filter's outcome, the app reads `forward`. */
  admit<B extends Body>(body: B, context?: { receivedAt?: string; principal?: string }): Forward<B> | Reject;
  /** The answer to a body the filter refused; undefined when it went on. */
  rejected(): OwnAnswer | undefined;
  /** The answer when the audit sink could not keep the body's accounts (`code`: its own, or `"audit-failed"`). */
  auditFailed(code: string): OwnAnswer;
  /** The app's answer begins: its status and headers, `[name, value, ...]` (a header sent twice, twice; no NUL in any, as HTTP has none). */
  head(status: number, headers: readonly string[]): Step;
  /** A piece of the app's answer (text as UTF-8). */
  piece(piece: Body): Step;
  /** The last piece of the app's answer and its end, in one step: what `piece(piece)` then `end()` give, together. */
  finish(piece: Body): Step;
  /** The app's answer has ended. */
  end(): Step;
  /**
   * Makes no audit record as `admit` filters the body, for a middleware that keeps no audit (most
   * of what a request costs): the outcome's `accounts` and `lines` are made when first read, by
   * filtering the body again in the context it was admitted in, and agree with what `admit` would
   * have made. Call it before `admit`.
   * @example
   * exchange.deferRecords();
   * const out = exchange.admit(body); // out.forward, out.turns now; out.accounts only if read
   */
  deferRecords(): void;
  /** Keeps what the client gets for each request that goes on, for `outcome`: call it before `admit`, with an audit sink. */
  keepOutcome(): void;
  /**
   * The exchange's {@link OutcomeAccount} as its JSON line, once the answer is over: `ms` how long
   * it took, `pid` and `host` the worker's (left out when undefined); undefined unless `keepOutcome`
   * was called.
   */
  outcome(ms: number, pid?: number, host?: string): string | undefined;
}

/**
 * The layout of a store (Redis) a gateway's processes and hosts share the sessions they witnessed
 * through, so that a session the app issued through one is witnessed through another: for each,
 * the key `prefix` followed by the SHA-256 of its id in lowercase hex (the store never holds an
 * id, a bearer's secret), kept `ttlSeconds` (a day). `mcp-provenance/http` keeps it in Redis with
 * its `sessions` option; a middleware of another stack does with {@link GatewayExchange}'s
 * `unknownSession`, `issuedElsewhere` and `sessionNews`.
 * @example
 * const key = SESSION_STORE.prefix + exchange.unknownSession; // "mcp-provenance:session:6a84…"
 */
export declare const SESSION_STORE: { readonly prefix: string; readonly ttlSeconds: number };

/** The core of an HTTP middleware, made by {@link createGateway}. */
export interface Gateway {
  /**
   * The exchange of one request: its method, the path the app routes it by (without a mount's
   * prefix, query or fragment), its headers as `[name, value, ...]` (Node's `req.rawHeaders`; no NUL
   * in any, else a `TypeError` with code `invalid-type`).
   */
  begin(method: string, path: string, headers: readonly string[]): GatewayExchange;
}

/**
 * The core of an HTTP middleware (what mcp-provenance/http runs on), its options read once and
 * checked now (a `RangeError` with a code for a bad one): the filter, the sessions the app issued,
 * and an exchange for each request, which a middleware for another stack drives, moving bytes.
 * @example
 * const gateway = createGateway({ paths: ["/mcp"] });
 * const exchange = gateway.begin("POST", "/mcp", ["content-type", "application/json"]);
 * const out = exchange.admit(body);
 * const step = exchange.head(200, ["content-type", "application/json"]); // then piece(), end()
 */
export declare function createGateway(options?: GatewayOptions): Gateway;
