// mcp-provenance/sdk: a Transport of the MCP TypeScript SDK (1.x and the 2.x
// packages alike: start, send, close, onmessage) that carries, records and
// echoes provenance on the wire, where SDK 2.x still shows the reserved
// `_meta` keys it lifts before handlers run.
import { createProvenance } from "./lib/api.mjs";

/** Whether a message awaits an answer: a request with an id (a notification awaits none). */
const awaitsAnswer = (message) => typeof message?.method === "string" && message.id !== undefined;
const isResponse = (message) => message?.id !== undefined && ("result" in message || "error" in message);

/**
 * `transport`, with provenance: see `provenanceTransport` in sdk.d.ts.
 *
 * ```js
 * import { provenanceTransport } from "mcp-provenance/sdk";
 * const sent = [];
 * const transport = provenanceTransport({ start: async () => {}, close: async () => {}, send: async (m) => { sent.push(m); } },
 *   { invocation: () => ({ turnId: "turn-1" }) });
 * await transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "q" } });
 * console.assert(sent[0].params._meta["io.modelcontextprotocol/aiInvocation"].turnId === "turn-1");
 * ```
 */
export function provenanceTransport(transport, options = {}) {
  const { invocation, audit, echo = false, ...policy } = options ?? {};
  for (const [name, value] of Object.entries({ invocation, audit })) {
    if (value !== undefined && typeof value !== "function") throw Object.assign(new RangeError(`options.${name} must be a function`), { code: "invalid-option" });
  }
  const mp = createProvenance(policy);
  // A policy of its own (beside the keys): every message sent goes on as it makes it.
  const policed = Object.keys(policy).some((name) => name !== "invocationKey" && name !== "uiKey");
  /** Request id → the request, until its response is sent, it is cancelled, or the transport closes. */
  const answering = new Map();
  /** Incoming messages wait here for the audit of those before them: the SDK sees them in order. */
  let audited = Promise.resolve();
  let handler;

  /** Whether the request's record is kept; a request that cannot be audited is refused, never served. */
  async function kept(request) {
    try {
      const record = mp.auditRecord(request, { receivedAt: new Date().toISOString(), sessionId: transport.sessionId });
      await audit(record, { valid: record.valid, diagnostics: record.diagnostics }, request);
      return true;
    } catch (failure) {
      if (request.id !== undefined) {
        const code = typeof failure?.code === "string" ? failure.code : "audit-failed";
        await transport.send({ jsonrpc: "2.0", id: request.id, error: { code: -32603, message: "the request could not be audited", data: { code } } }).catch(() => {});
      }
      return false;
    }
  }

  /** Each incoming message: audited (when asked) before the SDK sees it, in the order they came. */
  function receive(message, extra) {
    const pass = () => {
      if (echo && awaitsAnswer(message)) answering.set(message.id, message);
      if (message?.method === "notifications/cancelled") answering.delete(message.params?.requestId);
      handler?.(message, extra);
    };
    if (!audit) return pass();
    audited = audited
      .then(async () => {
        if (typeof message?.method !== "string" || (await kept(message))) pass();
      })
      // A handler that throws is the transport's error to report; the messages after it still pass.
      .catch((error) => transport.onerror?.(error instanceof Error ? error : new Error(String(error))));
    return undefined;
  }

  async function send(message, sendOptions) {
    let outgoing = message;
    if (invocation && awaitsAnswer(message)) {
      const envelope = await invocation(message);
      if (envelope !== undefined) outgoing = mp.attachInvocation(message, envelope);
    }
    if (echo && isResponse(message) && answering.has(message.id)) {
      outgoing = mp.echoTurnId(answering.get(message.id), message);
      answering.delete(message.id);
    }
    if (policed && typeof outgoing?.method === "string") outgoing = mp.sanitize(outgoing).message;
    return transport.send(outgoing, sendOptions);
  }

  return new Proxy(transport, {
    get(target, name) {
      if (name === "send") return send;
      if (name === "onmessage") return handler && receive;
      if (name === "close") return () => { answering.clear(); return target.close(); };
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
    set(target, name, value) {
      if (name !== "onmessage") return Reflect.set(target, name, value);
      handler = value;
      target.onmessage = echo || audit ? receive : value;
      return true;
    },
  });
}
