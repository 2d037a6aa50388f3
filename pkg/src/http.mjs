// mcp-provenance/http: the wire filter (./gateway.mjs) as HTTP middleware,
// in front of an MCP app in the stacks people run: Node's http server,
// Express and Connect (`provenanceMiddleware`), and Fetch-API servers
// (`provenanceFetch`). The app reads exactly the bytes the filter checked,
// what cannot be checked is refused before it sees anything, each message's
// account reaches the audit sink first (a function, or a JSON-lines file),
// and on the way back only `turnId` is echoed into each result. The
// decisions are the core's; lib/http/ moves bodies and answers.
import { exchanges } from "./lib/http/exchange.mjs";

export { provenanceMiddleware } from "./lib/http/node.mjs";
export { provenanceFetch } from "./lib/http/fetch.mjs";
export { jsonLinesSink } from "./lib/http/sinks.mjs";

/**
 * What the middleware made of a request so far (see `Exchange` in
 * http.d.ts): the request as `provenanceMiddleware` got it, or the `Request`
 * `provenanceFetch` got or handed on; undefined for one it did not see, and
 * for one outside its `paths`.
 *
 * ```js
 * import { exchangeOf, provenanceFetch } from "mcp-provenance/http";
 *
 * const handler = provenanceFetch(async (request) => {
 *   const { filtered, awaiting } = exchangeOf(request);
 *   console.assert(awaiting[0] === "12345678901234567890" && filtered.lines.length === 1);
 *   return new Response(null, { status: 202 });
 * });
 * await handler(new Request("http://localhost/mcp", {
 *   method: "POST", headers: { "content-type": "application/json" },
 *   body: '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}',
 * }));
 * ```
 */
export const exchangeOf = (request) => exchanges.get(request);
