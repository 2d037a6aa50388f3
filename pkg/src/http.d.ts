/**
 * mcp-provenance/http: the wire filter as HTTP middleware, in front of an MCP app (a server, or a
 * gateway's upstream side) in the stacks people run: Node's `http` server, Express and Connect
 * (`provenanceMiddleware`), and Fetch-API servers such as Hono, Deno, Bun and workers
 * (`provenanceFetch`). For each POST: the body read up to a bound, filtered with its headers (a
 * body a server could decode as anything but UTF-8 JSON is refused with 415), each message's
 * account handed to `audit` (a function, or a JSON-lines file: `jsonLinesSink`) and counted by
 * `metrics` (`otelMetrics` in mcp-provenance/otel), and the app handed exactly the bytes the
 * filter returned; on the way back, only `turnId` echoed into each result (AI-11), and the
 * filter's replies to the refused messages of a batch joined to the answer. What cannot be read or
 * audited is answered by the middleware, never passed on as it came. GET streams (which resume a
 * POST's) and DELETEs go to the app as they came, their answers echoed; the client's `Host` and
 * `Origin` are the app's to judge.
 * Every decision is the core's (`createGateway` in mcp-provenance/gateway); the middlewares move bytes.
 */
import type { Account, Forward, GatewayOptions, MessageAccount, Reject, RefusalCode } from "./gateway.js";

/**
 * Why the middleware answered in the app's stead (the body past `maxBodyBytes`, read before the
 * middleware could, not audited, or the middleware's own fault), or put its errors in place of the
 * app's answer (not JSON-RPC, past `maxAnswerBytes`, or in a form a client may read otherwise: another
 * JSON media type, a charset, a `Content-Encoding`); a JSON-RPC error's `data.code`.
 */
export type MiddlewareCode =
  | "body-too-large"
  | "body-already-read"
  | "audit-failed"
  | "middleware-failed"
  | "answer-not-json"
  | "answer-too-large"
  | "answer-unreadable";

/**
 * Called with each message's account (its kind, id, record, changes, why it was refused) and its
 * line (the account with the message as forwarded, one line of JSON, for a log), in order, before
 * the app sees the body; each waits for the one before when it returns a promise. A line holds
 * the message, arguments and all, and costs what they weigh: it is made only for a sink that
 * declares it, a second parameter (as Express tells an error handler by its four). When it throws
 * or rejects, nothing goes to the app: each request is answered with a JSON-RPC error `-32603`,
 * `data.code` the error's own `code` (a string) or `"audit-failed"`, and stderr says so once,
 * without the error's text. Then, once the answer to a body the middleware read is over (sent, or
 * the client gone, or the app failed), it is called once more with the exchange's outcome
 * (`kind: "outcome"`, an `OutcomeAccount`): the status sent, and what each request got as the
 * client got it, so that a call the app refused never reads as served. What it throws then
 * changes nothing of the answer: stderr says so once. `account.kind` tells the two apart.
 */
export type AccountSink = (account: Account, line: string) => void | Promise<void>;

/**
 * An {@link AccountSink} that appends each line it is handed, and a newline, to a JSON-lines file:
 * what `jsonLinesSink(path)` makes, and what `audit: path` stands for.
 */
export type JsonLinesSink = (account: Account, line: string) => Promise<void>;

/**
 * What the middleware calls on its `metrics` (`otelMetrics(meter)` from mcp-provenance/otel makes
 * one; any object of these four functions will do), each at once, with nothing computed for it when
 * `metrics` is not given. What one throws never reaches the exchange: stderr says so.
 */
export interface MetricsHooks {
  /**
   * Each message's account of a body the filter read, in order, before the audit sink gets it
   * (whether or not the sink then keeps it): its `kind`, its `refused` code, its `changes`.
   */
  observe(account: MessageAccount): void;
  /**
   * Once the answer to a body the middleware read is over, when the middleware answered in the
   * app's stead or put its errors in place of the app's answer: the outcome's `refused`
   * (`body-too-large`, `unsupported-media-type`, `parse-error`, `audit-failed` or the sink's own
   * code, `answer-not-json`, …). Never a message's refusal (a body whose messages the filter
   * refused one by one has none): `observe` has those.
   */
  refused(code: MiddlewareCode | RefusalCode | (string & {})): void;
  /** The audit sink failed to keep a body's accounts, or an exchange's outcome. */
  failed(): void;
  /** How long the filter took on one body, in seconds. */
  filtered(seconds: number): void;
}

/** What both middlewares take: the filter's options and their own, all checked by the core when the middleware is made. */
export interface HttpOptions extends GatewayOptions {
  /** The most bytes of a request body read (default 1 MiB): past it, 413, and nothing more kept. */
  maxBodyBytes?: number;
  /**
   * The most bytes of a JSON answer held to echo into, or of one event of an event stream
   * (default 16 MiB): past it, the app's answer is not passed on and each request gets a -32603
   * error, `answer-too-large`.
   */
  maxAnswerBytes?: number;
  /** The most session ids remembered as issued (default 10,000); past it, the one named longest ago is forgotten. */
  maxSessions?: number;
  /**
   * Whether each result carries its request's `turnId` in `_meta[key]`, and nothing else of the
   * envelope (AI-11). Default `true`; a gateway, which forwards the server's answer as it is
   * (AI-12), turns it off.
   */
  echo?: boolean;
  /**
   * The MCP endpoints, as the app routes them (default: every path): only requests to these paths
   * are the middleware's, every other goes on unfiltered. Each begins with `/`; `*` stands for one
   * segment, a trailing slash is the same path, and every path below one is the endpoint's too (a
   * mount serves it). Matched against the path the app routes by: `req.url`'s, from which Express
   * strips its mount (under `app.use("/mcp", ...)` the endpoint is `"/"`), or a `Request`'s URL.
   */
  paths?: string[];
  /**
   * Each message's account, before the app sees the body; then the exchange's outcome, once its
   * answer is over. A path (a string) is `jsonLinesSink(path)`: the file opened once when the
   * middleware is made (an error, `unwritable-audit`, when it cannot be), refused (`invalid-option`)
   * where the runtime has no `node:fs`.
   */
  audit?: AccountSink | string;
  /** Counts of what the middleware did, for an operator's dashboards: see {@link MetricsHooks}. */
  metrics?: MetricsHooks;
  /**
   * The Redis the gateway's processes and hosts share the sessions they witnessed through, so that
   * a session the app issued through one is witnessed through another (`witnessed.sessionId`):
   * `"redis://[[user]:password@]host[:port][/db]"` (`rediss://` for TLS), or with a key `prefix`
   * of its own (default `"mcp-provenance:session:"`) and a bound on each operation (`timeoutMs`,
   * default 500). Needs the npm package `redis` (an optional peer: `npm install redis`; an `Error`
   * with code `missing-dependency` when the middleware is made without it), loaded with the first
   * request that needs it. Redis keeps each session's key (the SHA-256 of its id, never the id)
   * for a day, until the app accepts a DELETE of it. Redis down or slower than `timeoutMs`: a
   * record names a session only when its process saw the app issue it, the request is filtered,
   * audited and forwarded as ever, and stderr says so once an outage. A bad URL is a `RangeError`
   * with code `invalid-option`, which never quotes it.
   */
  sessions?: string | { url: string; prefix?: string; timeoutMs?: number };
}

/** A request as the middleware reads it: Node's `IncomingMessage` (Express's and Connect's `req` are one). */
export interface NodeRequest {
  method?: string | undefined;
  url?: string | undefined;
  headers: { [name: string]: string | string[] | undefined };
  rawHeaders: string[];
  /** What the MCP SDK's bearer authentication (`requireBearerAuth`) sets: the token's `clientId` is the principal. */
  auth?: { clientId?: string | undefined } | undefined;
  readonly readableDidRead?: boolean;
  readonly readableEnded?: boolean;
}

/** An answer as the middleware writes it: Node's `ServerResponse` (Express's `res` is one). */
export interface NodeResponse {
  statusCode: number;
  readonly headersSent: boolean;
  writeHead(statusCode: number, ...rest: unknown[]): unknown;
  write(chunk: unknown, ...rest: unknown[]): boolean;
  end(...rest: unknown[]): unknown;
  flushHeaders(): void;
  getHeader(name: string): number | string | string[] | undefined;
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  removeHeader(name: string): void;
  destroy(error?: Error): unknown;
}

/** What `provenanceMiddleware` takes. */
export interface MiddlewareOptions extends HttpOptions {
  /**
   * The identity the stack authenticated, recorded as `witnessed.principal`: by default
   * `req.auth.clientId`, as the MCP SDK's bearer authentication sets it (mount the middleware
   * after it). Never read it from a header the client sets.
   */
  principal?: (req: NodeRequest) => string | undefined;
}

/** What `provenanceFetch` takes, for a handler taking `Rest` beside the request. */
export interface FetchOptions<Rest extends unknown[] = unknown[]> extends HttpOptions {
  /**
   * The identity the stack authenticated, recorded as `witnessed.principal`: by default the
   * `clientId` of the `authInfo` given beside the request (`handler(request, { authInfo })`, as the
   * MCP SDK's web-standard handlers take it). Never read it from a header the client sets.
   */
  principal?: (request: Request, ...rest: Rest) => string | undefined;
}

/** Connect's and Express's `next`. */
export type Next = (error?: unknown) => void;

/**
 * What the middleware made of one HTTP exchange, as it goes (`exchangeOf(request)`): for the app
 * behind it (the ids it must answer) and the operator (a log line when the exchange ends).
 */
export interface Exchange {
  /** When the middleware received the request (ISO 8601): the records' `witnessed.receivedAt`. */
  readonly receivedAt: string;
  /**
   * The session the app issued that the request names (`witnessed.sessionId`); once the app has
   * answered, the one its answer names, when it names one.
   */
  readonly sessionId: string | undefined;
  /** The identity the stack authenticated (`witnessed.principal`). */
  readonly principal: string | undefined;
  /** The filter's outcome for a POST's body; undefined before it ran, and for other methods. */
  readonly filtered: Forward<Uint8Array> | Reject | undefined;
  /** How long the filter took, in milliseconds. */
  readonly filterMs: number | undefined;
  /**
   * Each message's account, parsed (those `audit` got). Without `audit` or `metrics` no record is
   * made as the body is filtered: they are made when this is first read, by filtering the body
   * again in the context it came in, and are the ones a sink would have got.
   */
  readonly accounts: readonly MessageAccount[];
  /** The ids (JSON texts, as sent: `12345678901234567890`, `"r-1"`) of the requests that went on to the app. */
  readonly awaiting: readonly string[];
  /** Whether the body that went on is a batch. */
  readonly batch: boolean;
  /**
   * Why the middleware answered in the app's stead, or put its errors in place of the app's
   * answer: its own code, or the code of the filter's refusal of the whole body (`parse-error`,
   * `unsupported-media-type`, …). Undefined when the filter refused messages one by one (see
   * `filtered`), and when the app's answer went on.
   */
  readonly refused: MiddlewareCode | RefusalCode | undefined;
}

/**
 * Node `http` / Express / Connect middleware, `(req, res, next)`: mount it before any body parser
 * (and after the stack's authentication, for `principal`). `req` then reads as the forwarded bytes
 * whoever reads it (a `for await` loop, `express.json()`, the MCP SDK's
 * `StreamableHTTPServerTransport.handleRequest(req, res)` in 1.x and the 2.x node transport, which
 * read `req.rawBody`), with its `content-length` made right. It filters every POST to its `paths`
 * (every path by default): mount it where MCP is served (`app.use("/mcp", ...)`), or name the
 * endpoints in `paths`. A body something read before it is refused (500, `body-already-read`): nothing it
 * could not check goes on.
 * @throws {import("./index.js").ProvenanceError} a bad option (RangeError), at once; an `audit` path that cannot be appended to (RangeError, `unwritable-audit`).
 * @example
 * const app = express();
 * app.use("/mcp", provenanceMiddleware({ policy: { userIntent: "redact" }, audit: (account) => store.insert(account) }));
 * app.use(express.json());
 * app.post("/mcp", (req, res) => transport.handleRequest(req, res, req.body));
 */
export declare function provenanceMiddleware(options?: MiddlewareOptions): (req: NodeRequest, res: NodeResponse, next: Next) => void;

/**
 * `handler` (a Fetch-API handler: `Request` in, `Response` out) with provenance in front of it: the
 * handler gets a `Request` whose body is the forwarded bytes, and its `Response` goes back echoed
 * and joined (an event stream event by event, as it comes); what it takes beside the request is
 * passed on. It filters every POST to its `paths` (every path by default): wrap the handler of the MCP
 * path, or name the endpoints in `paths`.
 * @throws {import("./index.js").ProvenanceError} a bad option (RangeError), at once; an `audit` path that cannot be appended to (RangeError, `unwritable-audit`); a handler that is not a function (TypeError).
 * @example
 * const mcp = provenanceFetch((request, options) => handler.fetch(request, options), { audit: (account) => store.insert(account) });
 * export default { fetch: (request) => mcp(request, { authInfo: undefined }) };
 */
export declare function provenanceFetch<Rest extends unknown[]>(
  handler: (request: Request, ...rest: Rest) => Response | Promise<Response>,
  // What the handler takes beside the request is the handler's to say, not `principal`'s.
  options?: FetchOptions<NoInfer<Rest>>,
): (request: Request, ...rest: Rest) => Promise<Response>;

/**
 * What the middleware made of `request` so far: the `req` `provenanceMiddleware` got, or a
 * `Request` `provenanceFetch` got or handed on. Undefined for one it did not see, and for one
 * outside its `paths`.
 */
export declare function exchangeOf(request: NodeRequest | Request): Exchange | undefined;

/**
 * An audit sink appending each line it is handed, and a newline, to the JSON-lines file at `path`
 * (resolved now, against the working directory): the file made owner-only (`0o600`) if missing,
 * opened anew for each line (so a file rotated by renaming it is made again) with `O_APPEND`, and
 * each line written in one write, so that several processes appending at once keep every line
 * whole. Opened once when made, so that a path it cannot append to fails now. A line not written
 * rejects (an `Error`, `code` `"audit-failed"`, the file system's error its `cause`), and the
 * middleware refuses the body. Needs `node:fs` (Node, Deno, Bun); no browser bundle loads it.
 * @throws {TypeError} `invalid-type`: `path` is not a non-empty string.
 * @throws {RangeError} `unwritable-audit`: the file cannot be opened to append (its `cause` says
 * why); `invalid-option`: the runtime has no `node:fs`.
 * @example
 * app.use("/mcp", provenanceMiddleware({ audit: jsonLinesSink("/var/log/mcp/audit.jsonl") }));
 */
export declare function jsonLinesSink(path: string): JsonLinesSink;
