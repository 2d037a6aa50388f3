// mcp-provenance/gateway: the wire filter. A body's bytes (or text) go into
// the core in one call, and what comes back is what the gateway does: the
// bytes to forward (the very input when nothing changed), or the status and
// body to refuse with; the filter's own answers to refused requests of a
// batch; and one JSON line per message for the log. Every decision is the
// core's (src/wire/); this file only moves data.
import { table } from "./table.mjs";
import { call, instance } from "./lib/filter.mjs";

/** How the core shows a text (binding/src/answer.rs `Shown`): here, JSON text on one line. */
const ON_ONE_LINE = table.shown.indexOf("line");

/** A message's JSON text on one line, as a log line holds it: the core's (AI-13), asked only when a line is read. */
function oneLine(text) {
  return call("Visible", (w) => {
    w.whole(ON_ONE_LINE);
    w.whole(w.body(text));
  }, (answer) => answer.str());
}

/** A `TypeError` with a code, for a body or answer that is neither text nor bytes. */
function notABody() {
  const error = new TypeError("a filter takes a body (and echo an answer) as a string or a Uint8Array");
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

/** The most a snapshot of options holds; past it, the core reads the options (bounding its own reading). */
const SNAPSHOT_BOUNDS = { depth: 64, values: 10_000 };

/**
 * `options` read once: a copy of plain JSON data (each getter and Proxy trap
 * run once, here), and its JSON text, the key of the filter made from it.
 * Undefined when no copy can be faithful, its JSON text saying all the core
 * would read: a value JSON has none for (a function, a symbol, a BigInt, a
 * number that is not finite, an object that is not plain), a cycle, a getter
 * that throws, more than the bounds. A member that is undefined stays so: the
 * core reads it as absent, as JSON does.
 */
function snapshot(options) {
  try {
    const copy = plainCopy(options, { ...SNAPSHOT_BOUNDS, ancestors: [] });
    return { copy, key: String(JSON.stringify(copy)) };
  } catch {
    return undefined;
  }
}

/** A plain copy of `value`, within what is `left` of the bounds; throws on what JSON cannot hold. */
function plainCopy(value, left) {
  if (--left.values < 0) throw new RangeError("too many values");
  if (typeof value !== "object" || value === null) {
    if (value === undefined || value === null || typeof value === "string" || typeof value === "boolean" || Number.isFinite(value)) return value;
    throw new TypeError("not JSON");
  }
  const prototype = Object.getPrototypeOf(value);
  const plain = Array.isArray(value) || prototype === null || Object.getPrototypeOf(prototype) === null;
  if (!plain || left.ancestors.includes(value) || left.ancestors.length >= left.depth) throw new TypeError("not plain JSON");
  left.ancestors.push(value);
  let copy;
  if (Array.isArray(value)) {
    const { length } = value;
    if (length > left.values) throw new RangeError("too many values");
    copy = Array.from({ length }, (_, i) => plainCopy(value[i], left));
  } else {
    copy = Object.fromEntries(Object.keys(value).map((name) => [name, plainCopy(value[name], left)]));
  }
  left.ancestors.pop();
  return copy;
}

/**
 * Makes a filter in the module from options read once (or finds it made);
 * its handle, and the options it was made from.
 */
function make(options) {
  if (madeIn !== instance()) made.clear();
  madeIn = instance();
  const read = snapshot(options);
  // Without a faithful copy, the core reads the options themselves and says what is wrong with them.
  const from = read === undefined ? options : read.copy;
  const found = read === undefined ? undefined : made.get(read.key);
  if (found !== undefined) return { handle: found, from };
  const handle = call("CreateFilter", (w) => w.options(from), (_, created) => created);
  if (read !== undefined) made.set(read.key, handle);
  return { handle, from };
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
  const first = make(options);
  let handle = first.handle;
  let madeFor = instance();
  // What was read and checked, kept to make the filter again in a module
  // that restarted after a trap (the caller's object may have changed since).
  const kept = first.from;
  /** The filter's handle in the module as it is now (made again after a restart). */
  const current = () => {
    if (instance() !== madeFor) {
      handle = make(kept).handle;
      madeFor = instance();
    }
    return handle;
  };
  function filter(body, context) {
    if (typeof body !== "string" && !(body instanceof Uint8Array)) throw notABody();
    return call("Filter", (w) => {
      w.whole(current());
      w.whole(w.body(body));
      w.whole(typeof body === "string");
      w.whole(context);
    }, (answer) => answer.outcome(body, oneLine));
  }
  filter.echo = function echo(answer, forwarded) {
    if (typeof answer !== "string" && !(answer instanceof Uint8Array)) throw notABody();
    const turns = forwarded?.turns;
    if (!Array.isArray(turns)) throw notAnOutcome();
    return call("Echo", (w) => {
      w.whole(current());
      w.whole(w.body(answer));
      w.whole(turns.filter((turn) => typeof turn === "string"));
    }, (reply) => reply.echoed(answer));
  };
  return filter;
}

/** A `TypeError` with a code, for an echo given no outcome of the filter's. */
function notAnOutcome() {
  const error = new TypeError("echo takes the outcome the filter returned for the request body");
  error.code = "invalid-type";
  return error;
}
