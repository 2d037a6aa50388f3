// What the HTTP middleware does with a request before the app behind it
// sees anything, whatever the stack (node:http and Express, or a Fetch
// handler): its options read once, the filter on the body with what the
// server witnessed, each message's account to the audit sink, and the
// exchange the app and the operator can read. Every decision is the
// filter's (the core's); this file moves the body and the answers.
import { createFilter } from "../../gateway.mjs";
import { pastWhitespace } from "./answer.mjs";
import { composed, notAudited } from "./refusals.mjs";

/** How many bytes of a request body are read, unless told otherwise (nginx's default, and the prototype gateway's). */
export const MAX_BODY_BYTES = 1 << 20;
/** How many bytes of a JSON answer, or of one event of a stream, are held to echo into. */
export const MAX_ANSWER_BYTES = 16 << 20;
/** How many session ids are remembered; past it, the one named longest ago is forgotten. */
export const MAX_SESSIONS = 10_000;

/** The exchanges under way, by the request the app was handed (and the one that came): see `exchangeOf`. */
export const exchanges = new WeakMap();

/** A bad option: a `RangeError` with a code, as the filter's own are. */
const badOption = (message, code) => Object.assign(new RangeError(message), { code });

/** A limit option: a positive integer. */
function limit(name, value) {
  if (!Number.isSafeInteger(value) || value < 1) throw badOption(`options.${name} must be a positive integer`, "invalid-limit");
  return value;
}

/** An option that is a function when given. */
function callback(name, value) {
  if (value !== undefined && typeof value !== "function") throw badOption(`options.${name} must be a function`, "invalid-option");
  return value;
}

/**
 * The middleware's options, each read once (a getter runs once), checked
 * now: its own, and the rest the filter's (`createFilter` checks those, and
 * names one it does not know).
 */
export function settingsOf(options) {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw Object.assign(new TypeError("the middleware's options are an object"), { code: "invalid-type" });
  }
  const {
    maxBodyBytes = MAX_BODY_BYTES, maxAnswerBytes = MAX_ANSWER_BYTES, maxSessions = MAX_SESSIONS,
    echo = true, audit, principal, ...filterOptions
  } = options ?? {};
  if (typeof echo !== "boolean") throw badOption("options.echo must be a boolean", "invalid-option");
  return {
    filter: createFilter(filterOptions),
    audit: callback("audit", audit),
    principal: callback("principal", principal),
    echo,
    maxBodyBytes: limit("maxBodyBytes", maxBodyBytes),
    maxAnswerBytes: limit("maxAnswerBytes", maxAnswerBytes),
    sessions: new Sessions(limit("maxSessions", maxSessions)),
  };
}

/**
 * The session ids the app issued, as the `Mcp-Session-Id` of its successful
 * answers named them, the one named longest ago first. A request's session
 * is witnessed only when it is one of these (AI-10): an id a client's header
 * alone names is the client's word, and the app decides what it is.
 */
export class Sessions {
  #issued = new Set();
  #limit;

  constructor(limit) {
    this.#limit = limit;
  }

  /** The session a request names (its `Mcp-Session-Id`), when the app issued it. */
  witnessed(asked) {
    return typeof asked === "string" && this.#issued.has(asked) ? asked : undefined;
  }

  /**
   * What the app's answer (its `status`, the `Mcp-Session-Id` it `named`) to
   * a request (`method`, the session it `asked` for) says of sessions: the one
   * it names was issued (returned), and one it ended (a DELETE it accepted) is
   * forgotten. Nothing else forgets one: a 404 may come of any path or method,
   * and would let anyone who knows a session id strip it from its owner's records.
   */
  learn(method, asked, status, named) {
    if (typeof asked === "string" && method === "DELETE" && status >= 200 && status < 300) {
      this.#issued.delete(asked);
      return undefined;
    }
    if (typeof named !== "string" || status >= 400) return undefined;
    this.#issued.delete(named); // named again: the last to forget
    this.#issued.add(named);
    if (this.#issued.size > this.#limit) this.#issued.delete(this.#issued.values().next().value);
    return named;
  }
}

/** What the middleware made of one HTTP exchange, as it goes: see `Exchange` in http.d.ts. */
export class Exchange {
  #accounts;
  #awaiting;

  constructor(settings, asked, principal) {
    this.receivedAt = new Date().toISOString();
    this.sessionId = settings.sessions.witnessed(asked);
    this.principal = typeof principal === "string" ? principal : undefined;
    this.filtered = undefined;
    this.filterMs = undefined;
    this.refused = undefined;
  }

  /** Each message's account, parsed once, when first asked for. */
  get accounts() {
    this.#accounts ??= (this.filtered?.accounts ?? []).map((account) => JSON.parse(account));
    return this.#accounts;
  }

  /** The ids (JSON texts, as sent) of the requests that went on: the filter notes a turn for each. */
  get awaiting() {
    const { filtered } = this;
    this.#awaiting ??= filtered === undefined || "reject" in filtered ? [] : filtered.ids.filter((_, index) => filtered.turns[index] !== undefined);
    return this.#awaiting;
  }

  /** Whether the body forwarded was a batch: its first byte past JSON whitespace is `[`. */
  get batch() {
    const forward = this.filtered?.forward;
    return forward !== undefined && forward[pastWhitespace(forward)] === 0x5b; // [
  }
}

/**
 * Runs the filter on a POST's `body` (bytes) with what the server witnessed
 * and the request's `headers` (Node's form), and hands each message's account
 * and line to `audit`, in order, before anything goes on. What the client is
 * answered in the app's stead, `{ status, body }`; undefined when the body
 * goes on: `exchange.filtered.forward`, then, is what the app reads.
 */
export async function admit(settings, exchange, body, headers) {
  const started = performance.now();
  const filtered = settings.filter(body, { headers, receivedAt: exchange.receivedAt, sessionId: exchange.sessionId, principal: exchange.principal });
  exchange.filterMs = performance.now() - started;
  exchange.filtered = filtered;
  const unkept = settings.audit === undefined ? undefined : await audited(settings.audit, exchange);
  if ("reject" in filtered) {
    // A body refused whole (its headers, not JSON, a batch too large) has no account: its answer says why.
    exchange.refused = unkept ?? (filtered.accounts.length === 0 ? JSON.parse(filtered.reject).error?.data?.code : undefined);
    return { status: filtered.status, body: filtered.reject };
  }
  if (unkept === undefined) return undefined;
  exchange.refused = unkept;
  // The refused messages keep the filter's replies; each request that would have gone on gets the error.
  const parts = [...filtered.replies, ...exchange.awaiting.map((id) => notAudited(id, unkept))];
  return parts.length ? { status: 200, body: composed(parts, exchange.batch) } : { status: 500, body: notAudited("null", unkept) };
}

/**
 * Hands each message's account and line (when `audit` takes a second
 * parameter) to `audit` (sync or async), in order, each waiting for the one
 * before: undefined
 * when it kept them all, else the code of its failure (`audit-failed` unless
 * it has a `code` of its own), said once on stderr without the failure's
 * text, which may quote what the client sent.
 */
async function audited(audit, exchange) {
  const { accounts } = exchange;
  // A line holds its message, arguments and all, and costs what they weigh: made only for a sink that takes one.
  const lines = audit.length >= 2 ? exchange.filtered.lines : [];
  try {
    for (let index = 0; index < accounts.length; index++) {
      const kept = audit(accounts[index], lines[index]);
      if (typeof kept?.then === "function") await kept;
    }
    return undefined;
  } catch (failure) {
    const code = typeof failure?.code === "string" ? failure.code.slice(0, 64) : "audit-failed";
    const kind = failure?.constructor?.name ?? typeof failure;
    console.error(`mcp-provenance: a body of ${accounts.length} message(s) refused: its audit failed (${kind}, code ${JSON.stringify(code)})`);
    return code;
  }
}

/**
 * Marks `exchange` (when there is one yet) as answered by the middleware
 * because it failed itself, and says so once on stderr: the failure's kind
 * and code, not its text.
 */
export function failedHere(failure, exchange) {
  if (exchange !== undefined) exchange.refused = "middleware-failed";
  const code = typeof failure?.code === "string" ? failure.code.slice(0, 64) : "none";
  console.error(`mcp-provenance: the middleware failed (${failure?.constructor?.name ?? typeof failure}, code ${JSON.stringify(code)})`);
}
