/**
 * mcp-provenance: carry, check and record why and by whom an MCP request was
 * made. SEP-2817 AI invocation audit context and MCP Apps initiator
 * provenance, as one Rust core compiled to WebAssembly.
 *
 * Every function returns new objects and never changes its input. A copy
 * is made of what the call read, once: each object on the way to a place a
 * rule reads is a new plain object holding the values read (no getter, no
 * function, no `toJSON`), so what was checked is what is returned; parts no
 * rule reads (`params.arguments` above all) are the very same objects.
 * What is wrong with a message is data ({@link validate} never throws on
 * what it is given); only a call that cannot run throws a `TypeError`
 * (wrong input) or a `RangeError` (bad option; `wasm-unavailable` where
 * WebAssembly cannot be compiled, as under a Content-Security-Policy
 * without `'wasm-unsafe-eval'`; `reentrant-call` for a call made from a
 * getter while another is at work) with a stable {@link ProvenanceError.code}.
 */

/** The SEP-2817 envelope key: `_meta["io.modelcontextprotocol/aiInvocation"]`. */
export declare const AI_INVOCATION_KEY: "io.modelcontextprotocol/aiInvocation";
/** The MCP Apps key whose entry carries `initiator`: `_meta["io.modelcontextprotocol/ui"]`. */
export declare const UI_KEY: "io.modelcontextprotocol/ui";

/** Who initiated a request, as the Host attests it (UI-7). */
export type Initiator = "app" | "model" | "user" | "host";

/** A rule of the rules chapter, by its stable ID. */
export type RuleId =
  | "MSG-1" | "MSG-2" | "MSG-3"
  | "KEY-1" | "KEY-2" | "KEY-3"
  | "AI-1" | "AI-2" | "AI-3" | "AI-4" | "AI-5" | "AI-6" | "AI-7" | "AI-8" | "AI-9"
  | "AI-10" | "AI-11" | "AI-12" | "AI-13" | "AI-14" | "AI-15" | "AI-16" | "AI-17"
  | "UI-1" | "UI-2" | "UI-3" | "UI-4" | "UI-5" | "UI-6" | "UI-7" | "UI-8"
  | "TXT-1"
  | "COR-1" | "COR-2" | "COR-3" | "COR-4" | "COR-5"
  | "WIRE-1" | "WIRE-2" | "WIRE-3" | "WIRE-4" | "WIRE-5" | "WIRE-6" | "WIRE-7" | "WIRE-8" | "WIRE-9";

/** The stable code of a diagnostic. */
export type DiagnosticCode =
  | "not-a-message" | "unreadable" | "invalid-type" | "missing-field" | "unknown-field" | "bare-key"
  | "control-character" | "over-limit" | "echo-leak" | "turn-id-mismatch" | "unknown-initiator"
  | "invalid-key" | "reserved-key" | "conflicting-keys" | "invalid-option" | "unknown-option"
  | "too-many-diagnostics" | "lone-surrogate" | "invisible-character" | "invalid-request"
  | "invalid-correlation" | "invalid-traceparent" | "correlation-conflict" | "conflicting-initiator";

/** The stable code of a thrown error. */
export type ErrorCode =
  | "not-a-message" | "not-a-request" | "not-a-response" | "unreadable" | "invalid-type" | "invalid-invocation"
  | "invalid-key" | "reserved-key" | "conflicting-keys" | "invalid-limit" | "invalid-option" | "unknown-option"
  | "invalid-initiator" | "resource-exhausted" | "internal-error" | "reentrant-call" | "wasm-unavailable";

/**
 * Why the wire filter (`mcp-provenance/gateway`) refused a body or a message
 * (WIRE-2..WIRE-6), beside the thrown errors' codes it may also give.
 */
export type WireCode = "parse-error" | "duplicate-member" | "too-deep" | "batch-too-large" | "bare-user-intent"
  | "unsupported-media-type" | "unsupported-charset" | "unsupported-encoding";

/** What every thrown error carries besides its message (which never quotes a value sent). */
export interface ProvenanceError extends Error {
  readonly name: "TypeError" | "RangeError";
  readonly code: ErrorCode;
}

/** Which `_meta` keys carry the two entries (KEY-3); the defaults are the proposals' own. */
export interface KeyOptions<I extends string = string, U extends string = string> {
  /** The envelope's key; must be a valid, non-reserved key, e.g. `"com.example/aiInvocation"`. */
  invocationKey?: I;
  /** The key of the entry holding `initiator`. */
  uiKey?: U;
}

/** One finding about a message. */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  /** `"error"` breaks a MUST or the schema; `"warning"` a SHOULD, or something `sanitize` would change. */
  readonly severity: "error" | "warning";
  readonly rule: RuleId;
  /** RFC 6901 JSON Pointer from the message root (`""` for the call's options). */
  readonly path: string;
  /** For a person; names the place and the expected type, never the value. */
  readonly message: string;
}

/** What {@link validate} found: `valid` is true exactly when no diagnostic is an error. */
export interface Report {
  readonly valid: boolean;
  readonly diagnostics: Diagnostic[];
}

/** One thing {@link sanitize} changed. */
export interface Change {
  readonly action: "neutralized" | "truncated" | "redacted" | "dropped" | "omitted" | "lifted";
  /** RFC 6901 JSON Pointer from the message root. */
  readonly path: string;
  readonly rule: RuleId;
}

/** The SEP-2817 envelope: every field optional, every field the client's word. */
export interface AiInvocation {
  /** Why the client made this request; `text` is required when present (AI-3). */
  invocationReason?: { text: string };
  /** The model that produced the request; `name` is required when present (AI-4). */
  model?: { name: string };
  /** The user intent behind it; `{ redacted: true }` without text says it was withheld (AI-5). */
  userIntent?: { text?: string; redacted?: boolean };
  /** Groups the requests of one user turn; opaque (AI-7). */
  turnId?: string;
}

/** How {@link sanitize} and {@link auditRecord} make an envelope safe. Limits are UTF-8 bytes. */
export interface Policy<I extends string = string, U extends string = string> extends KeyOptions<I, U> {
  /** Limit of `invocationReason.text` (and of each string of a kept unknown field); 16 to 1,048,576, default 1024. */
  maxReasonBytes?: number;
  /** Limit of `userIntent.text`; 16 to 1,048,576, default 2048. */
  maxIntentBytes?: number;
  /** Limit of `model.name`; 16 to 1,048,576, default 256. */
  maxModelBytes?: number;
  /** Limit of `turnId`; 16 to 1,048,576, default 128. */
  maxTurnIdBytes?: number;
  /** Limit of the whole envelope as compact JSON; 64 to 1,048,576, default 8192. */
  maxEnvelopeBytes?: number;
  /** Keep the intent (default), remove its text and mark it redacted, or drop it whole. */
  userIntent?: "keep" | "redact" | "drop";
  /** Keep (default) or drop `model`. */
  model?: "keep" | "drop";
  /** Keep (default) or drop `invocationReason`. */
  invocationReason?: "keep" | "drop";
  /** Fields the envelope does not define: dropped by default (AI-8). */
  unknownFields?: "keep" | "drop";
  /**
   * `_meta` keys an audit record reads correlation ids from beside the known ones (COR-2): vendor
   * keys to the kind of id each holds, at most 64.
   * @example
   * auditRecord(request, { policy: { correlationKeys: { "logicle/conversationId": "conversation" } } })
   */
  correlationKeys?: { [key: string]: "conversation" | "turn" | "request" | "user" | "organization" };
}

/** What a correlation id identifies (COR-1). */
export type CorrelationKind = "conversation" | "turn" | "request" | "user" | "organization" | "trace" | "parentSpan" | "traceFlags";

/** One correlation id a record keeps: the client's word, labelled with where it came from (COR-1). */
export interface Correlation {
  readonly kind: CorrelationKind;
  /** The id, neutralized (AI-13, TXT-1), at most 256 bytes. */
  readonly value: string;
  /** The `_meta` key it came from: `vscode.conversationId`, `traceparent`, the envelope's key... */
  readonly key: string;
  /** The member of that key's object it came from (`turnId`, `turn_id`), if any. */
  readonly member?: string;
}

/** Any JSON-RPC request or notification: an SDK type, your own interface, a literal (whose `method` keeps its literal type). */
export type JsonRpcRequest<M extends string = string> = { method: M };

/** What the server itself knows about a request. */
export interface AuditContext {
  receivedAt?: string;
  principal?: string;
  sessionId?: string;
  /** How the envelope is made safe before it is recorded, keys included; default policy when absent. */
  policy?: Policy;
}

/** One request as an audit store keeps it; no string in it holds a log-forging character. */
export interface AuditRecord {
  readonly method: string;
  /** `params.name` of a `tools/call`. */
  readonly tool?: string;
  readonly requestId?: string | number;
  /** The client's claims: recorded, never authorization evidence (AI-10). */
  readonly clientAsserted: {
    readonly turnId?: string;
    readonly model?: string;
    readonly invocationReason?: string;
    readonly userIntent?: string;
    /** Present when the request carried a `userIntent`. */
    readonly userIntentRedacted?: boolean;
    /** The request's correlation ids, each with its source (COR-1..COR-5); absent when none. */
    readonly correlation?: readonly Correlation[];
  };
  /** The Host's claim, not verified (UI-6); absent means unknown (UI-4). */
  readonly hostAttested: { readonly initiator?: string };
  /** The server's own facts. */
  readonly witnessed: { readonly receivedAt?: string; readonly principal?: string; readonly sessionId?: string };
  readonly diagnostics: Diagnostic[];
  /** No diagnostic is an error: the request is valid, as `validate` says. */
  readonly valid: boolean;
}

// --- What each function adds, as types -----------------------------------

/** `T` without the members `K` (index signatures kept, unlike `Omit`). */
type Without<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };
/** `T` with member `K` of type `V`, whatever it held. */
type With<T, K extends PropertyKey, V> = Without<T, K> & { [P in K]: V };
/** The object a member holds, or `{}`. */
type Inner<T, K extends PropertyKey> = T extends { [P in K]?: infer V } ? (NonNullable<V> extends object ? NonNullable<V> : {}) : {};
type Params<R> = Inner<R, "params">;
type Meta<R> = Inner<Params<R>, "_meta">;

/** `R` whose `params._meta[K]` is `E`. */
export type WithEntry<R, K extends string, E> = With<R, "params", With<Params<R>, "_meta", With<Meta<R>, K, E>>>;
/** `R` after {@link stampInitiator}: its `ui` entry (key `K`) has `initiator: I`, and keeps its other members. */
export type Stamped<R, I extends Initiator = "app", K extends string = typeof UI_KEY> = WithEntry<R, K, With<Inner<Meta<R>, K>, "initiator", I>>;
/** `R` after {@link clearInitiator}: its `ui` entry, if any, has no `initiator`. */
export type Cleared<R, K extends string = typeof UI_KEY> = K extends keyof Meta<R> ? WithEntry<R, K, Without<Inner<Meta<R>, K>, "initiator">> : R;
/** `R` after {@link attachInvocation}: `A` is its envelope (key `K`). */
export type Attached<R, A extends AiInvocation = AiInvocation, K extends string = typeof AI_INVOCATION_KEY> = WithEntry<R, K, A>;
/** `M` as {@link sanitize} leaves it: where it has an envelope (key `K`), the envelope has the SEP's shape. */
export type Sanitized<M, K extends string = typeof AI_INVOCATION_KEY> = M & { params?: { _meta?: { [P in K]?: AiInvocation } } };
/** `R` after {@link liftLegacyArguments}: it may have gained an envelope (key `K`). */
export type Lifted<R, K extends string = typeof AI_INVOCATION_KEY> = R & { params?: { _meta?: { [P in K]?: AiInvocation } } };
/** `S` after {@link echoTurnId}: a result's `_meta[K]` holds at most the request's `turnId`. */
export type Echoed<S, K extends string = typeof AI_INVOCATION_KEY> = S extends { result: object }
  ? With<S, "result", With<Inner<S, "result">, "_meta", Without<Inner<Inner<S, "result">, "_meta">, K> & { [P in K]?: { turnId: string } }>>
  : S;

// --- The functions --------------------------------------------------------

/**
 * Checks any value against every rule; never throws, whatever it is given (it throws only where it
 * cannot run at all: `wasm-unavailable` under a Content-Security-Policy without
 * `'wasm-unsafe-eval'`, `reentrant-call` when called from a getter of a value another call reads).
 * @param options.request for a response, the request it answers, to check the `turnId` echo (AI-11).
 * @example
 * validate({ method: "tools/call", params: { _meta: { [AI_INVOCATION_KEY]: { turnId: 7 } } } }).valid // false
 */
export declare function validate(message: unknown, options?: KeyOptions & { request?: object }): Report;

/**
 * Makes a message's envelope safe to persist or forward; a clean one passes unchanged (AI-12).
 * @throws {ProvenanceError} `not-a-message` (TypeError); a bad policy (RangeError).
 */
export declare function sanitize<M extends object, K extends string = typeof AI_INVOCATION_KEY>(
  message: M,
  policy?: Policy<K>,
): { message: Sanitized<M, K>; changes: Change[] };

/**
 * Puts `invocation` as the request's envelope, for a call the host's model chose.
 * @throws {ProvenanceError} `invalid-invocation` when it breaks the envelope's schema (TypeError).
 */
export declare function attachInvocation<M extends string, R extends JsonRpcRequest<M>, A extends AiInvocation, K extends string = typeof AI_INVOCATION_KEY>(
  request: R,
  invocation: A,
  options?: KeyOptions<K>,
): Attached<R, A, K>;

/**
 * Adds or overwrites `initiator` (default `"app"`) in the request's `ui` entry, touching nothing else (UI-1, UI-3, UI-5).
 * @example
 * bridge.oncalltool = (params) => client.request(stampInitiator({ method: "tools/call", params }), CallToolResultSchema);
 */
export declare function stampInitiator<M extends string, R extends JsonRpcRequest<M>, I extends Initiator = "app", K extends string = typeof UI_KEY>(
  request: R,
  initiator?: I,
  options?: KeyOptions<string, K>,
): Stamped<R, I, K>;

/** Removes `initiator` from the request's `ui` entry, for a call the model chose (UI-2). */
export declare function clearInitiator<M extends string, R extends JsonRpcRequest<M>, K extends string = typeof UI_KEY>(
  request: R,
  options?: KeyOptions<string, K>,
): Cleared<R, K>;

/** Makes the response echo the request's `turnId` and nothing else (AI-11). */
export declare function echoTurnId<S extends object, K extends string = typeof AI_INVOCATION_KEY, R extends JsonRpcRequest = JsonRpcRequest>(
  request: R,
  response: S,
  options?: KeyOptions<K>,
): Echoed<S, K>;

/** The record a server keeps of a request, each fact labelled by who vouches for it (AI-10, UI-6). */
export declare function auditRecord<R extends JsonRpcRequest>(request: R, context?: AuditContext): AuditRecord;

/** Lifts the legacy arguments `user_query` and `invocation_reason` into the envelope (AI-17). */
export declare function liftLegacyArguments<M extends string, R extends JsonRpcRequest<M>, K extends string = typeof AI_INVOCATION_KEY>(
  request: R,
  options?: KeyOptions<K> & { remove?: boolean },
): Lifted<R, K>;

/** Whether `key` is a well-formed `_meta` key name (KEY-1); false for anything not a string. */
export declare function isValidMetaKey(key: unknown): boolean;

/** Whether `key` claims MCP's namespace: its prefix's second label is `modelcontextprotocol` or `mcp` (KEY-2). */
export declare function isReservedMetaKey(key: unknown): boolean;

/**
 * Every function with the keys and the policy given here bound once, for a deployment that uses a
 * vendor key or its own policy: configure one place. The options are read and checked now, once,
 * into the module (a `RangeError` for a bad one); no call reads them again. Options given to a
 * call are merged over them (and read once too: the module keeps them by what they hold).
 * @example
 * const mp = createProvenance({ invocationKey: "com.example/aiInvocation", userIntent: "redact" });
 * mp.sanitize(request).message; // the envelope at com.example/aiInvocation, its intent redacted
 */
export declare function createProvenance<I extends string = typeof AI_INVOCATION_KEY, U extends string = typeof UI_KEY>(
  options?: Policy<I, U>,
): Provenance<I, U>;

/** The functions of the package with keys `I` and `U` and a policy bound: see {@link createProvenance}. */
export interface Provenance<I extends string = typeof AI_INVOCATION_KEY, U extends string = typeof UI_KEY> {
  /** The envelope's key in force. */
  readonly invocationKey: I;
  /** The `ui` entry's key in force. */
  readonly uiKey: U;
  validate(message: unknown, options?: { request?: object }): Report;
  sanitize<M extends object>(message: M, policy?: Omit<Policy, keyof KeyOptions>): { message: Sanitized<M, I>; changes: Change[] };
  attachInvocation<M extends string, R extends JsonRpcRequest<M>, A extends AiInvocation>(request: R, invocation: A): Attached<R, A, I>;
  stampInitiator<M extends string, R extends JsonRpcRequest<M>, In extends Initiator = "app">(request: R, initiator?: In): Stamped<R, In, U>;
  clearInitiator<M extends string, R extends JsonRpcRequest<M>>(request: R): Cleared<R, U>;
  echoTurnId<S extends object, R extends JsonRpcRequest = JsonRpcRequest>(request: R, response: S): Echoed<S, I>;
  auditRecord<R extends JsonRpcRequest>(request: R, context?: Omit<AuditContext, "policy"> & { policy?: Omit<Policy, keyof KeyOptions> }): AuditRecord;
  liftLegacyArguments<M extends string, R extends JsonRpcRequest<M>>(request: R, options?: { remove?: boolean }): Lifted<R, I>;
  isValidMetaKey(key: unknown): boolean;
  isReservedMetaKey(key: unknown): boolean;
}
