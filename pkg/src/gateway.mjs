// mcp-provenance/gateway: the wire filter. A body's bytes (or text) go into
// the core in one call, and what comes back is what the gateway does: the
// bytes to forward (the very input when nothing changed), or the status and
// body to refuse with; the filter's own answers to refused requests of a
// batch; and one JSON line per message for the log. Every decision is the
// core's (src/wire/); this file only moves data.
import { Answer } from "./lib/answer.mjs";
import { accountsIn, echoedOf, outcomeOf, ownOf as readOwn, stepOf as readStep } from "./lib/outcome.mjs";
import { call, instance } from "./lib/filter.mjs";
import { table } from "./table.mjs";

/**
 * The layout of a store a gateway's processes share the sessions they
 * witnessed through (Redis): for each session the app issued, the key
 * `prefix` followed by the SHA-256 of its id in lowercase hex, kept
 * `ttlSeconds`; the core's (src/wire/store.rs). See `SESSION_STORE` in
 * gateway.d.ts.
 *
 * ```js
 * import { SESSION_STORE } from "mcp-provenance/gateway";
 * console.assert(SESSION_STORE.prefix === "mcp-provenance:session:" && SESSION_STORE.ttlSeconds === 86400);
 * ```
 */
export const SESSION_STORE = Object.freeze({ prefix: table.sessions.prefix, ttlSeconds: table.sessions.ttlSeconds });

/** A log line's first members for a message's JSON text: on one line (AI-13), its arguments left out (WIRE-9); the core's, asked only when a line is read. */
const lineHead = (text, kind) => call((glue) => glue.lineHead(text, kind));

const encoder = new TextEncoder();
/** The module's room for a body, as a view (binding/src/filter.rs `bodyRoom`). */
let room = new Uint8Array(0);
let roomIn;
/**
 * Writes a body into the module's room for it, as UTF-8 (binding/src/filter.rs
 * `bodyRoom`); how many bytes. A string that is not well-formed UTF-16 has
 * no UTF-8 form: it goes over as one byte no UTF-8 text holds, and the core
 * refuses it as it refuses any body that is not UTF-8 (no silent U+FFFD).
 */
function write(glue, body) {
  const length = typeof body === "string" ? 3 * body.length : body.length;
  // The view kept from the last call, while it has the room (a detached one
  // has none) and the module is the one it views.
  if (room.byteLength < length || roomIn !== instance()) {
    room = glue.bodyRoom(length);
    roomIn = instance();
  }
  if (typeof body !== "string") {
    room.set(body);
    return body.length;
  }
  const { written } = encoder.encodeInto(body, room);
  // A byte a code unit: all ASCII, well-formed.
  if (written === body.length || body.isWellFormed()) return written;
  room[0] = 0xff;
  return 1;
}

/**
 * Bytes past this are filtered with their records made at once: a copy, to make the records later,
 * costs by the byte and the records by the message (decoding 4 KiB takes 0.7 µs, about what one
 * message's records cost; a one-message body of 60 KB, copied, filtered 1.05–1.07× slower).
 */
const COPIED_AT_MOST = 4 * 1024;

/** UTF-8 read exactly: what is not UTF-8 is refused, a byte-order mark kept. */
const exact = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * What the records of `body` are made of later: the text, or a copy of the bytes, which the caller
 * may reuse meanwhile; undefined for bytes past {@link COPIED_AT_MOST}, whose records are made now.
 * UTF-8 is copied as the text it holds, which the module is given as the very same bytes: a string
 * costs V8 a seventh of what a new `ArrayBuffer` does (122 against 900 ns for the SEP example).
 */
function kept(body) {
  if (typeof body === "string") return body;
  if (body.length > COPIED_AT_MOST) return undefined;
  try {
    return exact.decode(body);
  } catch {
    return body.slice();
  }
}

/** A `TypeError` with a code, for a body or answer that is neither text nor bytes. */
function notABody() {
  const error = new TypeError("a filter takes a body (and echo an answer, an exchange a piece) as a string or a Uint8Array");
  error.code = "invalid-type";
  return error;
}

/**
 * The filters made in the module, by their options as JSON, in the module
 * instance they were made in: a filter lives as long as the module, so one
 * made again with the same options (a filter made per request, say) is the
 * same filter, and the module's memory holds one per set of options.
 */
const made = new Map();
let madeIn;

/** The most a copy holds (the core's bounds on a value read whole): deeper, or more values, is refused. */
const { depth: MAX_DEPTH, values: MAX_VALUES } = table.limits;

/** The JSON text of a plain copy the module reads (it reads no JS value), or undefined. */
const jsonOf = (copy) => (copy === undefined ? undefined : JSON.stringify(copy));

/** What JSON cannot hold, by its name in the core's table (`what`), met while copying. */
class NotJson {
  constructor(what) {
    this.what = what;
  }
}

/**
 * `value` read once: a copy of plain JSON data (each getter and Proxy trap
 * run once, here). What the core reads is the copy; where
 * no copy can be faithful, the core's `unreadable` error says where and why:
 * a value JSON has none for (a function, a symbol, a BigInt, a number that
 * is not finite, an object that is not plain), a cycle, a getter that
 * throws, more than the bounds. A member that is undefined stays so: the
 * core reads it as absent, as JSON does.
 */
function copied(value) {
  const left = { values: MAX_VALUES, ancestors: [], path: [] };
  let copy;
  try {
    copy = plainCopy(value, left);
  } catch (thrown) {
    const path = left.path.map((name) => `/${String(name).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
    throw call((glue) => glue.unreadable(path, thrown instanceof NotJson ? thrown.what : "threw"));
  }
  return copy;
}

/** What a scalar is that JSON cannot hold, by its type. */
const NOT_JSON = { bigint: "bigint", symbol: "symbol", function: "function", number: "notFinite" };

/** A plain copy of `value`, within what is `left` of the bounds; throws a NotJson, `left.path` where. */
function plainCopy(value, left) {
  if (--left.values < 0) throw new NotJson("tooMany");
  if (typeof value !== "object" || value === null) {
    if (value === undefined || value === null || typeof value === "string" || typeof value === "boolean" || Number.isFinite(value)) return value;
    throw new NotJson(NOT_JSON[typeof value]);
  }
  const prototype = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && prototype !== null && Object.getPrototypeOf(prototype) !== null) throw new NotJson("notPlain");
  if (left.ancestors.includes(value)) throw new NotJson("cycle");
  if (left.ancestors.length >= MAX_DEPTH) throw new NotJson("tooDeep");
  left.ancestors.push(value);
  let copy;
  if (Array.isArray(value)) {
    const { length } = value;
    if (length > left.values) throw new NotJson("tooMany");
    copy = new Array(length);
    for (let i = 0; i < length; i++) {
      left.path.push(i);
      copy[i] = plainCopy(value[i], left);
      left.path.pop();
    }
  } else {
    copy = {};
    for (const name of Object.keys(value)) {
      left.path.push(name);
      const item = plainCopy(value[name], left);
      if (item !== undefined) copy[name] = item;
      left.path.pop();
    }
  }
  left.ancestors.pop();
  return copy;
}

/**
 * Makes a filter in the module from options read once (or finds it made):
 * the filter, and the copy of the options it was made from.
 */
function make(options) {
  if (madeIn !== instance()) made.clear();
  madeIn = instance();
  const copy = copied(options);
  const json = jsonOf(copy);
  const key = String(json);
  let filter = made.get(key);
  if (filter === undefined) {
    filter = call((glue) => new glue.Filter(json));
    made.set(key, filter);
  }
  return { filter, copy };
}

/**
 * A filter for the bodies of HTTP requests on their way to an MCP server,
 * its options checked now. See `createFilter` in gateway.d.ts.
 *
 * ```js
 * import { createFilter } from "mcp-provenance/gateway";
 * const filter = createFilter({ policy: { userIntent: "redact" } });
 * const out = filter('{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * console.assert(out.forward === '{"jsonrpc":"2.0","id":1,"method":"ping"}');
 * ```
 */
export function createFilter(options) {
  let { filter: inModule, copy } = make(options);
  let madeFor = instance();
  /** The filter in the module as it is now (made again, from the copy, after a restart). */
  const current = () => {
    if (instance() !== madeFor) {
      inModule = make(copy).filter;
      madeFor = instance();
    }
    return inModule;
  };
  // Whether this filter's outcomes are read: of its recent outcomes (halved every 64), how many had their accounts read.
  let outcomes = 0;
  let reads = 0;
  function filter(body, context) {
    if (typeof body !== "string" && !(body instanceof Uint8Array)) throw notABody();
    const given = context === undefined ? undefined : jsonOf(copied(context));
    const made = current();
    const utf16 = typeof body === "string";
    // The records are made with the outcome while at least half of the recent outcomes' accounts were
    // read (a gateway that logs them); else only when read, by filtering again what `later` kept.
    const later = outcomes > 0 && 2 * reads >= outcomes ? undefined : kept(body);
    if (++outcomes === 64) [outcomes, reads] = [32, reads >> 1];
    // The module's answer is read where it stands, before the next call.
    return call((glue) => outcomeOf(new Answer(made.filter(write(glue, body), utf16, given, later === undefined), 0), body, lineHead, (read) => {
      reads++;
      if (read !== undefined) return read;
      const again = current();
      return call((glue) => accountsIn(new Answer(again.accounts(write(glue, later), utf16, given), 0)));
    }));
  }
  filter.echo = function echo(answer, forwarded) {
    if (typeof answer !== "string" && !(answer instanceof Uint8Array)) throw notABody();
    const turns = forwarded?.turns;
    if (!Array.isArray(turns)) throw notAnOutcome();
    const notes = turns.filter((turn) => typeof turn === "string");
    const made = current();
    return echoedOf(new Answer(call((glue) => made.echo(write(glue, answer), notes)), 0), answer);
  };
  return filter;
}

/** A `TypeError` with a code, for an echo given no outcome of the filter's. */
function notAnOutcome() {
  const error = new TypeError("echo takes the outcome the filter returned for the request body");
  error.code = "invalid-type";
  return error;
}

/** No bytes: what a step's ranges are of when no piece was given. */
const NOTHING = new Uint8Array(0);

/** A step of the way back (its compact form), its ranges of `given` made the bytes they stand for. */
const stepOf = (step, given) => readStep(new Answer(step, 0), given);

/** An answer of the middleware's own (its compact form): `{status, headers, body}`. */
const ownOf = (answer) => readOwn(new Answer(answer, 0));

/**
 * `headers`, a flat `[name, value, ...]` list of strings, as the module takes
 * it: joined by NUL, which no header holds (one string crosses in once); a
 * `TypeError` with a code for anything else.
 */
function flat(headers) {
  if (!Array.isArray(headers) || !headers.every((item) => typeof item === "string" && !item.includes("\0"))) {
    throw coded(TypeError, "invalid-type", "headers are a flat list of strings without NUL: [name, value, ...]");
  }
  return headers.join("\0");
}

/** A context's text, or undefined. */
const text = (value) => (typeof value === "string" ? value : undefined);

/**
 * One request's exchange through a gateway, each call a call of the core's
 * exchange (binding/src/gateway.rs) in the module it was made in: see
 * `GatewayExchange` in gateway.d.ts.
 */
class Exchange {
  #inner;
  #madeIn;
  #deferred = false;

  constructor(inner, madeIn) {
    this.#inner = inner;
    this.#madeIn = madeIn;
  }

  /** `work(exchange, glue)`; refused once the module started afresh, the exchange gone with the old one. */
  #call(work) {
    if (instance() !== this.#madeIn) {
      throw coded(RangeError, "resource-exhausted", "the WebAssembly module started afresh since this exchange began: it is gone");
    }
    const inner = this.#inner;
    return call((glue) => work(inner, glue));
  }

  get start() { return this.#call((inner) => inner.start); }
  get declaredTooLarge() { return this.#call((inner) => inner.declaredTooLarge); }
  get maxBodyBytes() { return this.#call((inner) => inner.maxBodyBytes); }
  get session() { return this.#call((inner) => inner.session); }
  get refused() { return this.#call((inner) => inner.refused); }
  get unknownSession() { return this.#call((inner) => inner.unknownSession); }
  get sessionNews() { return this.#call((inner) => inner.sessionNews); }
  get waiting() { return this.#call((inner) => inner.waiting); }
  get batch() { return this.#call((inner) => inner.batch); }

  /** A store the gateway shares says the app issued the session the request names (see `unknownSession`). */
  issuedElsewhere() { this.#call((inner) => inner.issuedElsewhere()); }

  /** The answer to a body past the bound. */
  tooLarge() { return ownOf(this.#call((inner) => inner.tooLarge())); }

  /** The answer when the middleware cannot go on (`"body-already-read"`, `"middleware-failed"`). */
  failed(code) { return ownOf(this.#call((inner) => inner.failed(String(code)))); }

  /** The filter's outcome for `body`, recording the context's `receivedAt` and `principal`. */
  admit(body, context) {
    if (typeof body !== "string" && !(body instanceof Uint8Array)) throw notABody();
    const { receivedAt, principal } = context ?? {};
    const utf16 = typeof body === "string";
    const later = this.#deferred ? kept(body) : undefined;
    return this.#call((inner, glue) => outcomeOf(
      new Answer(inner.admit(write(glue, body), utf16, text(receivedAt), text(principal), later !== undefined), 0), body, lineHead,
      (read) => read ?? this.#call((again, glue) => accountsIn(new Answer(again.accounts(write(glue, later), utf16), 0)))));
  }

  /** Makes no audit record as `admit` filters the body: its outcome's `accounts` are made when first read. */
  deferRecords() {
    this.#deferred = true;
  }

  /** The answer to a body the filter refused; undefined when it went on. */
  rejected() {
    const answer = this.#call((inner) => inner.rejected());
    return answer === undefined ? undefined : ownOf(answer);
  }

  /** The answer when the audit sink failed with `code`. */
  auditFailed(code) { return ownOf(this.#call((inner) => inner.auditFailed(String(code)))); }

  /** The app's answer begins: its status and headers (`[name, value, ...]`). */
  head(status, headers) { return stepOf(this.#call((inner) => inner.head(status, flat(headers))), NOTHING); }

  /** A piece of the app's answer (bytes, or text as UTF-8), written into the module's room: one crossing. */
  piece(piece) { return this.#given(piece, (inner, length) => inner.piece(length)); }

  /** The last piece of the app's answer and its end: `piece` then `end`, in one crossing. */
  finish(piece) { return this.#given(piece, (inner, length) => inner.finish(length)); }

  /** `step(exchange, length)` once `piece` (bytes, or text as UTF-8) is in the module's room; its step, its ranges made bytes. */
  #given(piece, step) {
    if (typeof piece !== "string" && !(piece instanceof Uint8Array)) throw notABody();
    const bytes = typeof piece === "string" ? encoder.encode(piece) : piece;
    return stepOf(this.#call((inner, glue) => step(inner, write(glue, bytes))), bytes);
  }

  /** The app's answer has ended. */
  end() { return stepOf(this.#call((inner) => inner.end()), NOTHING); }

  /** Keeps what the client gets for each request that goes on, for `outcome`: before `admit`, with an audit sink. */
  keepOutcome() { this.#call((inner) => inner.keepOutcome()); }

  /**
   * The exchange's outcome account, its JSON line, once the answer is over: `ms` how long it took,
   * `pid` and `host` the worker's (each left out when not a process id, or not text); undefined
   * unless `keepOutcome` was called.
   */
  outcome(ms, pid, host) {
    const id = Number.isInteger(pid) && pid >= 0 && pid <= 0xffff_ffff ? pid : undefined;
    return this.#call((inner) => inner.outcome(Number(ms), id, text(host)));
  }
}

/**
 * The core of an HTTP middleware, its options (the filter's and its own)
 * read once and checked now: an exchange for each request, which a
 * middleware drives, moving bytes. See `createGateway` in gateway.d.ts.
 *
 * ```js
 * import { createGateway } from "mcp-provenance/gateway";
 * const gateway = createGateway({ paths: ["/mcp"] });
 * const exchange = gateway.begin("POST", "/mcp", ["content-type", "application/json"]);
 * console.assert(exchange.start === "read" && "forward" in exchange.admit('{"jsonrpc":"2.0","id":1,"method":"ping"}'));
 * ```
 */
export function createGateway(options) {
  const copy = copied(options);
  let made;
  let madeFor;
  /** The gateway in the module as it is now (made again, its sessions forgotten, after a restart). */
  const current = () => {
    if (madeFor !== instance()) {
      made = call((glue) => new glue.Gateway(jsonOf(copy)));
      madeFor = instance();
    }
    return made;
  };
  current();
  return {
    begin(method, path, headers) {
      const gateway = current();
      return new Exchange(call(() => gateway.begin(String(method), String(path), flat(headers))), madeFor);
    },
  };
}
