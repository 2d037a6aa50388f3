// mcp-provenance/gateway: the wire filter. A body's bytes (or text) go into
// the core in one call, and what comes back is what the gateway does: the
// bytes to forward (the very input when nothing changed), or the status and
// body to refuse with; the filter's own answers to refused requests of a
// batch; and one JSON line per message for the log. Every decision is the
// core's (src/wire/); this file only moves data.
import { call, instance } from "./lib/boundary.mjs";

/** A `TypeError` with a code, for a body that is neither text nor bytes. */
function notABody() {
  const error = new TypeError("a filter takes a body as a string or a Uint8Array");
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

/** Makes a filter in the module from `options` (or finds it made); its handle. */
function make(options) {
  if (madeIn !== instance()) made.clear();
  madeIn = instance();
  let key;
  try {
    key = JSON.stringify(options ?? null);
  } catch {
    // Not JSON: the core says what is wrong with it.
  }
  const found = key === undefined ? undefined : made.get(key);
  if (found !== undefined) return found;
  const handle = call("CreateFilter", (w) => w.options(options), (_, created) => created);
  if (key !== undefined) made.set(key, handle);
  return handle;
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
  let handle = make(options);
  let madeFor = instance();
  // What was checked, kept to make the filter again in a module that
  // restarted after a trap (the caller's object may have changed since).
  let kept = options;
  try {
    kept = structuredClone(options);
  } catch {
    // A value structuredClone cannot copy was read as JSON by the core: keep it as it is.
  }
  return function filter(body, context) {
    if (typeof body !== "string" && !(body instanceof Uint8Array)) throw notABody();
    if (instance() !== madeFor) {
      handle = make(kept);
      madeFor = instance();
    }
    return call("Filter", (w) => {
      w.whole(handle);
      w.whole(w.body(body));
      w.whole(typeof body === "string");
      w.whole(context);
    }, (answer) => answer.outcome(body));
  };
}
