// The gateway: forwards every MCP request to one upstream server. By default
// it keeps the audit envelope and the ui entry exactly as they came (AI-12,
// UI-8); with --redact-intent it removes userIntent.text on the way. It lifts
// legacy user_query / invocation_reason arguments into the envelope (AI-17)
// and writes one JSON line per request it forwards, with the time its own
// library calls took and the whole round trip.
//
//   node examples/prototype/gateway.mjs --upstream <url> --log <file> [--redact-intent]
// prints "listening on http://127.0.0.1:<port>/mcp" once it is ready.

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";

import { liftLegacyArguments, sanitize, validate } from "../../pkg/index.mjs";
import { readBody } from "./http.mjs";

const { values: options } = parseArgs({
  options: { upstream: { type: "string" }, log: { type: "string" }, "redact-intent": { type: "boolean", default: false } },
});
const policy = options["redact-intent"] ? { userIntent: "redact" } : undefined;

/** The headers a Streamable HTTP exchange needs, passed on in either direction. */
const PASSED = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization"];
const pick = (headers) => Object.fromEntries(PASSED.flatMap((name) => (headers.get?.(name) ?? headers[name]) ? [[name, headers.get?.(name) ?? headers[name]]] : []));

/** What the gateway does to one request, and what it took. */
function forwardable(message) {
  const started = performance.now();
  let forwarded = liftLegacyArguments(message, { remove: true });
  const report = validate(forwarded);
  let changes = [];
  if (policy) ({ message: forwarded, changes } = sanitize(forwarded, policy));
  return { forwarded, report, changes, libraryMs: performance.now() - started };
}

const http = createServer(async (req, res) => {
  const started = performance.now();
  const body = req.method === "POST" ? await readBody(req) : undefined;
  let seen = [];
  let outgoing = body;
  try {
    const parsed = body ? JSON.parse(body) : undefined;
    const messages = Array.isArray(parsed) ? parsed : parsed === undefined ? [] : [parsed];
    seen = messages.map((message) => (typeof message?.method === "string" ? forwardable(message) : { forwarded: message }));
    if (seen.length) outgoing = JSON.stringify(Array.isArray(parsed) ? seen.map((s) => s.forwarded) : seen[0].forwarded);
  } catch {
    // Not JSON: forward it as it came, for the server to refuse.
  }
  const upstream = await fetch(options.upstream, { method: req.method, headers: pick(req.headers), body: outgoing });
  res.writeHead(upstream.status, pick(upstream.headers));
  if (upstream.body) {
    const stream = Readable.fromWeb(upstream.body);
    stream.pipe(res);
    await new Promise((resolve) => stream.on("end", resolve).on("error", resolve));
  } else {
    res.end();
  }
  const roundTripMs = performance.now() - started;
  const session = upstream.headers.get("mcp-session-id") ?? req.headers["mcp-session-id"] ?? null;
  for (const { forwarded, report, changes, libraryMs } of seen) {
    if (!report) continue;
    appendFileSync(options.log, `${JSON.stringify({ session, message: forwarded, diagnostics: report.diagnostics, changes, libraryMs, roundTripMs })}\n`);
  }
});

http.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
process.on("SIGTERM", () => {
  http.closeAllConnections();
  http.close(() => process.exit(0));
});
