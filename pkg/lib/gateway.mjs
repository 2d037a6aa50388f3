// mcp-provenance/gateway: the wire filter. A body's bytes (or text) go into
// the core in one call, and what comes back is what the gateway does: the
// bytes to forward (the very input when nothing changed), or the status and
// body to refuse with; the filter's own answers to refused requests of a
// batch; and one JSON line per message for the log. Every decision is the
// core's (src/wire/); this file only moves data.
import { call, instance } from "./boundary.mjs";

/** A `TypeError` with a code, for a body that is neither text nor bytes. */
function notABody() {
  const error = new TypeError("a filter takes a body as a string or a Uint8Array");
  error.code = "invalid-type";
  return error;
}

/** Makes a filter in the module from `options`; its handle. */
const make = (options) => call("CreateFilter", (w) => w.whole(options), (_, handle) => handle);

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
  let made = instance();
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
    if (instance() !== made) {
      handle = make(kept);
      made = instance();
    }
    return call("Filter", (w) => {
      w.whole(handle);
      w.whole(w.body(body));
      w.whole(context);
    }, (answer) => answer.outcome(body));
  };
}
