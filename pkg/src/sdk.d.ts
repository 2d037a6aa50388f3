/**
 * mcp-provenance/sdk: provenance on any MCP TypeScript SDK transport (the 1.x
 * `@modelcontextprotocol/sdk` and the 2.x packages alike), on the wire, where
 * SDK 2.x still shows the reserved `_meta` keys it lifts before handlers run.
 */
import type { AiInvocation, AuditRecord, Policy, Report } from "./index.js";

/** What `provenanceTransport` needs of a transport; every SDK `Transport` has it. */
export interface TransportLike {
  start(): Promise<void>;
  send(message: object, options?: object): Promise<void>;
  close(): Promise<void>;
  sessionId?: string | undefined;
}

/** An outgoing request, as the SDK sends it. */
export interface OutgoingRequest {
  jsonrpc: "2.0";
  id: string | number;
  method: string;
  params?: { [member: string]: unknown };
}

/** An incoming request or notification, as it arrived on the wire. */
export interface IncomingMessage {
  jsonrpc: "2.0";
  id?: string | number;
  method: string;
  params?: { [member: string]: unknown };
}

/**
 * What to carry, record and echo. The keys apply to every message; a policy given (`userIntent`,
 * a byte limit, `unknownFields`) applies to every request and notification sent, which goes on as
 * `sanitize` makes it (a client that drops or redacts intents never sends their text), and to each
 * record the server side makes.
 */
export interface ProvenanceTransportOptions extends Policy {
  /** Client side: the envelope to attach to an outgoing request, or `undefined` for none. */
  invocation?: (request: OutgoingRequest) => AiInvocation | undefined | Promise<AiInvocation | undefined>;
  /**
   * Server side: called with each incoming request's (or notification's) audit record, its
   * diagnostics, and the message as it came, before the SDK sees it; the messages after it wait
   * for a returned promise. A request whose audit throws or rejects is answered with a JSON-RPC
   * error and never served.
   */
  audit?: (record: AuditRecord, report: Report, message: IncomingMessage) => void | Promise<void>;
  /** Server side: each response carries its request's `turnId`, and only that (AI-11). */
  echo?: boolean;
}

/**
 * `transport` with provenance, for `client.connect(...)` or `server.connect(...)`.
 * @throws {import("./index.js").ProvenanceError} a bad option (RangeError), at once.
 * @example
 * await client.connect(provenanceTransport(new StreamableHTTPClientTransport(url), {
 *   invocation: () => ({ turnId: currentTurn, model: { name: "example-model" } }),
 * }));
 * await server.connect(provenanceTransport(transport, { audit: (record) => store.insert(record), echo: true }));
 */
export declare function provenanceTransport<T extends TransportLike>(transport: T, options?: ProvenanceTransportOptions): T;
