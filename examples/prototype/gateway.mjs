// The gateway: forwards every MCP request to one upstream server. By default
// it keeps the audit envelope and the ui entry exactly as they came (AI-12,
// UI-8); with --redact-intent it removes userIntent.text on the way, and
// with --keep-unknown its policy keeps unknown envelope fields (made safe)
// instead of dropping them. It lifts legacy user_query / invocation_reason
// arguments into the envelope (AI-17) and writes one JSON line per message.
//
// It fails closed, message by message: what it cannot process (a body that
// is not JSON, a message the library refuses) is never forwarded as it
// came. A request gets a JSON-RPC error from the gateway itself, a
// notification is dropped, and the log says why without quoting a value.
// An invalid envelope is forwarded as sanitize repairs it. When the
// upstream fails or does not answer, each request gets a JSON-RPC error.
//
//   node examples/prototype/gateway.mjs --upstream <url> --log <file> [--redact-intent] [--keep-unknown]
// prints "listening on http://127.0.0.1:<port>/mcp" once it is ready.

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";

import { createProvenance } from "../../pkg/index.mjs";
import { readBody } from "./http.mjs";

const { values: options } = parseArgs({
  options: {
    upstream: { type: "string" },
    log: { type: "string" },
    "redact-intent": { type: "boolean", default: false },
    "keep-unknown": { type: "boolean", default: false },
  },
});
const redact = options["redact-intent"];
const mp = createProvenance({ ...(redact && { userIntent: "redact" }), ...(options["keep-unknown"] && { unknownFields: "keep" }) });

/** How long the upstream may take to answer before each request gets an error. */
const UPSTREAM_TIMEOUT_MS = 10_000;

/** JSON-RPC error codes the gateway answers with itself. */
const PARSE_ERROR = -32700;
const REFUSED = -32602;
const UPSTREAM_FAILED = -32603;

/** The headers a Streamable HTTP exchange needs, passed on in either direction. */
const PASSED = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization"];
const pick = (headers) => Object.fromEntries(PASSED.flatMap((name) => (headers.get?.(name) ?? headers[name]) ? [[name, headers.get?.(name) ?? headers[name]]] : []));

const isRequest = (message) => typeof message === "object" && message !== null && typeof message.method === "string";
const error = (id, code, message, data) => ({ jsonrpc: "2.0", id: id ?? null, error: { code, message, ...(data && { data }) } });
const log = (entry) => appendFileSync(options.log, `${JSON.stringify(entry)}\n`);

/**
 * What the gateway makes of one message: `forward` (what goes upstream) or
 * `reply` (its own answer, for a request it refuses), with what it found.
 */
function examine(message) {
  if (!isRequest(message)) return { forward: message };
  const started = performance.now();
  try {
    const lifted = mp.liftLegacyArguments(message, { remove: true });
    const report = mp.validate(lifted);
    // A bare userIntent is not an envelope field (AI-9); redacting, the gateway cannot vouch for it.
    if (redact && report.diagnostics.some((d) => d.code === "bare-key" && d.path.endsWith("/userIntent"))) {
      throw Object.assign(new Error("a bare _meta.userIntent"), { code: "bare-user-intent" });
    }
    const repair = redact || options["keep-unknown"] || !report.valid;
    const { message: forward, changes } = repair ? mp.sanitize(lifted) : { message: lifted, changes: [] };
    return { forward, report, changes, libraryMs: performance.now() - started };
  } catch (thrown) {
    const code = typeof thrown?.code === "string" ? thrown.code : "internal";
    return {
      reply: message.id === undefined ? undefined : error(message.id, REFUSED, "the gateway cannot process this request's metadata", { code }),
      refused: code,
      libraryMs: performance.now() - started,
    };
  }
}

/** Answers the client with the gateway's own JSON. */
function answer(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

const http = createServer(async (req, res) => {
  const started = performance.now();
  const body = req.method === "POST" ? await readBody(req) : undefined;
  let parsed;
  try {
    parsed = body === undefined || body === "" ? undefined : JSON.parse(body);
  } catch {
    log({ refused: "parse-error", bytes: Buffer.byteLength(body) });
    return answer(res, 400, error(null, PARSE_ERROR, "the body is not JSON"));
  }
  const batch = Array.isArray(parsed);
  const seen = (parsed === undefined ? [] : batch ? parsed : [parsed]).map(examine);
  const forwarded = seen.filter((s) => "forward" in s).map((s) => s.forward);
  const replies = seen.flatMap((s) => (s.reply ? [s.reply] : []));
  let session = req.headers["mcp-session-id"] ?? null;

  let upstream;
  let upstreamMs = 0;
  if (parsed === undefined || forwarded.length > 0) {
    const sent = performance.now();
    try {
      const outgoing = parsed === undefined ? body : JSON.stringify(batch ? forwarded : forwarded[0]);
      upstream = await fetch(options.upstream, {
        method: req.method, headers: pick(req.headers), body: outgoing, signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
      });
    } catch (failure) {
      upstream = undefined;
      log({ session, upstreamFailed: failure?.name ?? "error" });
      replies.push(...forwarded.filter((m) => isRequest(m) && m.id !== undefined).map((m) => error(m.id, UPSTREAM_FAILED, "the upstream server did not answer")));
    }
    upstreamMs = performance.now() - sent;
    // An initialize request learns its session from the answer.
    session = upstream?.headers.get("mcp-session-id") ?? session;
  }

  if (upstream) {
    const stream = upstream.headers.get("content-type")?.startsWith("text/event-stream");
    if (replies.length === 0 || stream) {
      // The upstream's answer as it comes; the gateway's refusals as events of the same stream.
      res.writeHead(upstream.status, pick(upstream.headers));
      for (const reply of replies) res.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
      if (upstream.body) {
        const body = Readable.fromWeb(upstream.body);
        body.pipe(res);
        await new Promise((resolve) => body.on("end", resolve).on("error", resolve));
      } else {
        res.end();
      }
    } else {
      // A JSON answer (or none, for notifications): the refusals join it.
      const text = await upstream.text().catch(() => "");
      const all = [...(text ? [JSON.parse(text)].flat() : []), ...replies];
      answer(res, 200, batch ? all : all.length === 1 ? all[0] : all);
    }
  } else {
    answer(res, replies.length ? 200 : 502, batch ? replies : replies[0]);
  }

  const roundTripMs = performance.now() - started;
  for (const { forward, report, changes, refused, libraryMs } of seen) {
    if (refused) log({ session, refused, libraryMs });
    else if (report) log({ session, message: forward, diagnostics: report.diagnostics, changes, libraryMs, upstreamMs, roundTripMs });
  }
});

http.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
process.on("SIGTERM", () => {
  http.closeAllConnections();
  http.close(() => process.exit(0));
});
