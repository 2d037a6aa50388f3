// `mcp-provenance probe`: what SEP-2817 and the MCP Apps initiator proposal
// make visible on the wire, checked against a running MCP server over
// Streamable HTTP or stdio with the official SDK client. The checks are the
// server scenarios written for the official conformance suite, in its own
// format (upstream/conformance/src/scenarios/server/sep-2817-checks.ts,
// compiled into scenarios.mjs), by the same ids with the same statuses: this
// file connects, hands the scenarios the server through a bounded client,
// and prints what they found, with the rule of docs/rules.md each checks. A
// check's level is its requirement's keyword: a broken MUST is a FAILURE, a
// broken SHOULD a WARNING, and a check that cannot be tested fails the same
// way, as untestable (the suite's rule: a missing prerequisite is a failure).
//
// Pointed at a production server, a checker must cause no side effect: the
// scenarios call one tool, the one named (--tool), else test_simple_text (the
// conformance suite's test tool), else one the server annotates readOnlyHint:
// true, and no other tool of the server. Without any, they call none: nothing
// can be tested, and the probe exits 1.
//
// The server is not trusted: each answer is read up to a bound (a JSON body,
// an event of an event stream, a line on stdio), each request has a timeout,
// and whatever the server wrote is printed with the characters that could act
// on a terminal or disguise text made visible.
import { STATUS_CODES } from "node:http";
import { parseArgs } from "node:util";

import { call } from "../filter.mjs";
import { begin, chooseTool, cut, quote, SERVER_CHECKS } from "./scenarios.mjs";
import { UsageError } from "./usage.mjs";

const DEFAULT_TIMEOUT = 10_000;
/** The MCP TypeScript SDK's own bound on a message. */
const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export const PROBE_USAGE = `usage: mcp-provenance probe --url <http://host/mcp> [options]
       mcp-provenance probe [options] -- <command> [args...]

Runs the conformance suite's server checks of SEP-2817 and of the MCP Apps
initiator proposal against a running MCP server: over Streamable HTTP (--url),
or over stdio with a server the probe starts (the command after --, with the
probe's environment; what it writes on standard error is shown only if it
fails to start). Prints a check a line, by the suite's check ids.

options:
  --url <url>                the server's MCP endpoint, http:// or https://
  --header "Name: value"     an HTTP header sent with every request (repeatable)
  --tool <name>              the tool to call (default: test_simple_text, the
                             conformance suite's test tool, when listed; else
                             the first tool the server annotates
                             readOnlyHint: true whose required arguments the
                             probe can fill)
  --arguments <json>         the arguments to call it with (a JSON object)
  --timeout <ms>             how long each request may take (default ${DEFAULT_TIMEOUT})
  --max-response-bytes <n>   the most of an answer read: a JSON body, an event of
                             an event stream, a line on stdio (default ${DEFAULT_MAX_RESPONSE_BYTES}, 4 MiB)
  --format text|json         a table and a summary line (default), or one JSON
                             document: { url or command, tool (null when
                             none was called), checks, summary }
  --strict                   warnings fail too
  -h, --help                 this text

The probe calls that one tool, about twenty times, with made-up arguments
unless --arguments gives them, and no other tool of the server (but one name
the server lists no tool by, to see how it answers an error). When no tool
is named, none is named test_simple_text and none is annotated readOnlyHint:
true, it calls none: nothing can be tested, and it says so and exits 1.

A check's level is its requirement's keyword: a broken MUST is a FAILURE, a
broken SHOULD a WARNING. A check that cannot be tested (no tool to call, or
the call without any of the metadata is not answered with a result) fails
the same way, marked untestable. The checks named same-answer-* show
tolerance: that an answer does not change with the metadata, which a server
that ignores it passes too; sep-2817-server-no-echo tells them apart.
Text from the server is printed with control, bidi and invisible characters as
\\u{1b}-style escapes (code point in hex) and each backslash doubled; in JSON
they are \\u001b-style escapes.

Exit: 0 no failure (warnings allowed unless --strict), 1 a check failed (or
warned, with --strict) or nothing could be tested, 2 bad usage or no server
to probe.`;

/** The options of `probe`, as parseArgs reads them; PROBE_USAGE says each. */
export const OPTIONS = {
  url: { type: "string" },
  header: { type: "string", multiple: true, default: [] },
  tool: { type: "string" },
  arguments: { type: "string" },
  timeout: { type: "string", default: String(DEFAULT_TIMEOUT) },
  "max-response-bytes": { type: "string", default: String(DEFAULT_MAX_RESPONSE_BYTES) },
  format: { type: "string", default: "text" },
  strict: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
};

/** The rule of docs/rules.md each check tests. */
export const RULES = {
  "sep-2817-server-same-answer-with-envelope": "AI-10",
  "sep-2817-server-same-answer-empty-intent": "AI-6",
  "sep-2817-server-same-answer-any-turn-id": "AI-7",
  "sep-2817-server-same-answer-repeated-turn": "AI-7",
  "sep-2817-server-no-echo": "AI-11",
  "apps-initiator-server-same-answer-any-initiator": "UI-6",
  "apps-initiator-server-absent-same-as-unknown": "UI-4",
};

/** The most pages of tools/list read, looking for a tool to call. */
const MAX_TOOL_PAGES = 10;

/** Whether `value` is a JSON object. */
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/** A failure of a request that says itself what went wrong: a timeout, an answer over the bound. */
class ProbeFailure extends Error {}

/**
 * `text` as the core shows text from the wire to a person (AI-16): each
 * character AI-13 or TXT-1 replaces (controls, ESC among them, the line
 * separators, bidi and invisible characters) as an escape, for a terminal
 * `\u{1b}` with each backslash doubled, inside JSON text `\u001b`. A lone
 * surrogate, which no UTF-8 text holds, is shown as U+FFFD.
 */
function shown(text, json) {
  return call((glue) => glue.visible(text.toWellFormed(), json));
}

/** `text` for a terminal. */
const visible = (text) => shown(String(text), false);

/** `value` as JSON text, with what would act on a terminal or hide text escaped as JSON escapes. */
const json = (value) => shown(JSON.stringify(value, null, 2), true);

/**
 * Runs `request` (given the options of an SDK request) as the exchange in
 * flight: it fails with a ProbeFailure after the timeout, or when the
 * transport finds an answer over the bound (it aborts `ctx.pending`).
 */
async function exchange(ctx, request) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new ProbeFailure(`timed out after ${ctx.timeout} ms`)), ctx.timeout);
  ctx.pending = abort;
  try {
    return await request({ signal: abort.signal, timeout: ctx.timeout });
  } catch (error) {
    throw abort.signal.aborted ? abort.signal.reason : error;
  } finally {
    clearTimeout(timer);
    ctx.pending = undefined;
  }
}

/**
 * The server as the scenarios see it (upstream/conformance's `Probe`): the
 * tool chosen, and tools/call through the bounded client, whose answer is a
 * result, the JSON-RPC error the server answered with, or why none came.
 */
function probeOf(ctx, chosen, tools) {
  return {
    ...chooseTool(tools, chosen),
    listed: new Set(tools.map((tool) => tool.name)),
    async send(params) {
      if (ctx.closed !== undefined) return { failure: `not sent: ${ctx.closed}` };
      try {
        return { result: await exchange(ctx, (options) => ctx.client.request({ method: "tools/call", params }, options)) };
      } catch (error) {
        if (typeof error?.code === "number") return { error: { code: error.code, message: error.message, data: error.data } };
        return { failure: reason(error) };
      }
    },
  };
}

/** A whole number of at least 1 from option `name`; throws UsageError. */
function positive(value, name) {
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`--${name} takes a whole number of at least 1, not ${JSON.stringify(value)}`, "probe");
  return Number(value);
}

/** The headers of --header "Name: value" options; throws UsageError on one that is not a header. */
export function headersOf(list) {
  const headers = new Headers();
  for (const header of list) {
    const colon = header.indexOf(":");
    const name = header.slice(0, colon).trim();
    try {
      if (colon < 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new TypeError("not a header");
      headers.append(name, header.slice(colon + 1).trim());
    } catch {
      throw new UsageError(`--header takes "Name: value", not ${JSON.stringify(header)}`, "probe");
    }
  }
  return headers;
}

/** The words of argv parsed: option values, and the command after --; throws UsageError. */
function parse(argv) {
  try {
    const { values, positionals, tokens } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, tokens: true });
    const end = tokens.find((token) => token.kind === "option-terminator");
    const before = positionals.length - (end ? argv.length - end.index - 1 : 0);
    if (before > 0) throw new UsageError(`unexpected ${JSON.stringify(positionals[0])}: a command to start goes after --`, "probe");
    return { values, command: end ? positionals : undefined };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(error.message.replace(/\. To specify a positional argument.*$/s, ""), "probe");
  }
}

/** The options of `probe`; throws UsageError. */
function options(argv) {
  const { values, command } = parse(argv);
  if (values.help) return { help: true };
  if (values.url === undefined && command === undefined) throw new UsageError("probe needs --url <http://host/mcp> or -- <command> [args...]", "probe");
  if (values.url !== undefined && command !== undefined) throw new UsageError("probe takes --url or -- <command>, not both", "probe");
  if (command?.length === 0) throw new UsageError("a command to start is needed after --", "probe");
  if (values.url !== undefined && !["http:", "https:"].includes(URL.canParse(values.url) ? new URL(values.url).protocol : "")) {
    throw new UsageError(`--url takes an http:// or https:// URL, not ${JSON.stringify(values.url)}`, "probe");
  }
  if (command !== undefined && values.header.length > 0) throw new UsageError("--header goes with --url", "probe");
  if (!["text", "json"].includes(values.format)) throw new UsageError("--format is text or json", "probe");
  let args;
  if (values.arguments !== undefined) {
    try {
      args = JSON.parse(values.arguments);
    } catch {
      args = undefined;
    }
    if (!isObject(args)) throw new UsageError("--arguments takes a JSON object", "probe");
  }
  return {
    url: values.url,
    command,
    headers: headersOf(values.header),
    tool: values.tool,
    arguments: args,
    timeout: positive(values.timeout, "timeout"),
    limit: positive(values["max-response-bytes"], "max-response-bytes"),
    format: values.format,
    strict: values.strict,
  };
}

/** What an answer over the bound is said to be. */
const tooLarge = (limit) => new ProbeFailure(`the server's answer was over ${limit} bytes`);

const LF = 0x0a;
const CR = 0x0d;

/**
 * A function of the next piece of an event stream: the size of the largest
 * event it ends or holds, counting the bytes of the last event it began
 * before it. Events end at an empty line: two line ends in a row (LF, CR or
 * CRLF), also across pieces.
 */
function eventSizes() {
  let since = 0;
  let lineStart = true;
  let afterCr = false;
  return (piece) => {
    let largest = 0;
    for (let i = 0; i < piece.length; i += 1) {
      const byte = piece[i];
      since += 1;
      if (byte === LF && afterCr) {
        afterCr = false;
        continue;
      }
      afterCr = byte === CR;
      if (byte === LF || byte === CR) {
        if (lineStart) {
          largest = Math.max(largest, since);
          since = 0;
        }
        lineStart = true;
      } else {
        lineStart = false;
      }
    }
    return Math.max(largest, since);
  };
}

/** A function of the next piece of a body: the size of the body so far. */
function bodySize() {
  let size = 0;
  return (piece) => (size += piece.byteLength);
}

/**
 * A stream that passes bytes on while they stay within `limit`: the whole
 * body, or each event of an event stream. Past it, it errors with the
 * answer-too-large failure and tells `over`.
 */
function counter(limit, events, over) {
  const measure = events ? eventSizes() : bodySize();
  return new TransformStream({
    transform(piece, controller) {
      if (measure(piece) <= limit) return controller.enqueue(piece);
      const failure = tooLarge(limit);
      over(failure);
      controller.error(failure);
    },
  });
}

/**
 * A fetch for the transport whose answers are read through `counter`: past
 * the bound, the request is aborted and `over` is told the failure and the
 * request's method. The answer keeps its status with the standard reason
 * phrase, not the server's.
 */
function boundedFetch(limit, over) {
  return async (url, init = {}) => {
    const abort = new AbortController();
    const signal = init.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    const response = await fetch(url, { ...init, signal });
    if (response.body === null) return response;
    const events = /^text\/event-stream\b/i.test(response.headers.get("content-type") ?? "");
    const body = response.body.pipeThrough(counter(limit, events, (failure) => {
      abort.abort(failure);
      over(failure, init.method ?? "GET");
    }));
    return new Response(body, { status: response.status, statusText: STATUS_CODES[response.status] ?? "", headers: response.headers });
  };
}

/** Network errors, by code, in words. */
const NETWORK = {
  ECONNREFUSED: (e) => `connection refused${e.address ? ` (${e.address}:${e.port})` : ""}`,
  ENOTFOUND: (e) => `DNS lookup of ${e.hostname} failed (${e.code})`,
  EAI_AGAIN: (e) => `DNS lookup of ${e.hostname} failed (${e.code})`,
  ECONNRESET: () => "the connection was reset",
  EHOSTUNREACH: () => "no route to the host",
  ENETUNREACH: () => "the network is unreachable",
  ETIMEDOUT: () => "connecting timed out",
  UND_ERR_CONNECT_TIMEOUT: () => "connecting timed out",
  UND_ERR_SOCKET: () => "the server closed the connection",
  ENOENT: (e) => `cannot start ${e.path}: no such file or command`,
  EACCES: (e) => `cannot start ${e.path}: permission denied`,
};
const TLS = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

/**
 * Why a request got no answer, in words: a timeout or an answer over the
 * bound as said, an HTTP status and the start of its body, or the innermost
 * cause that names what failed (DNS, refused, TLS...); else every message of
 * the chain of causes.
 */
function reason(error) {
  if (error instanceof ProbeFailure) return error.message;
  if (error?.code === "REQUEST_TIMEOUT") return `timed out after ${error.data?.timeout} ms`;
  if (error?.code === "CONNECTION_CLOSED") return "the server closed the connection";
  if (typeof error?.code === "number") return `the server answered error ${error.code}: ${quote(error.message)}`;
  const status = error?.data?.status;
  if (typeof status === "number") {
    const text = typeof error.data.text === "string" && error.data.text.trim() !== "" ? `: ${quote(error.data.text.trim())}` : "";
    return `HTTP ${status} ${STATUS_CODES[status] ?? ""}`.trimEnd() + text;
  }
  const chain = [];
  for (let cause = error; cause instanceof Error && chain.length < 8; cause = cause.cause) chain.push(cause);
  for (const cause of chain.toReversed()) {
    if (Object.hasOwn(NETWORK, cause.code)) return NETWORK[cause.code](cause);
    if (TLS.test(cause.code ?? "")) return `TLS: ${cause.reason ?? cause.message.trim()} (${cause.code})`;
    if (cause.message === "bad port") return "fetch does not connect to that port (a bad port of the Fetch standard)";
  }
  return chain.length > 0 ? [...new Set(chain.map((cause) => cause.message))].join(": ") : String(error);
}

/** The last `size` characters a stream wrote, kept as it writes. */
function tail(stream, size = 2000) {
  let kept = "";
  stream.on("data", (chunk) => {
    kept = (kept + chunk).slice(-size);
  });
  return () => kept.trim();
}

/** The official SDK's client package, 2.x: `probe` alone needs it, so the library leaves it to the user. */
const CLIENT = "@modelcontextprotocol/client";

/** The client package, or a usage error that says how to install it. */
async function client() {
  try {
    return await import(CLIENT);
  } catch (error) {
    if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new UsageError(`probe talks to servers through the MCP SDK's client, which is not installed: npm install ${CLIENT}@2 beside mcp-provenance, or run npx -p mcp-provenance -p ${CLIENT}@2 mcp-provenance probe ...`, "probe");
  }
}

/**
 * A transport to the server: Streamable HTTP to the URL, or stdio to the
 * command it starts. An answer over the bound fails the exchange in flight
 * (`ctx.pending`); on stdio it also closes the connection (`ctx.closed`
 * says why), and the server's standard error is kept for `ctx.stderr`.
 */
async function transportTo(chosen, ctx) {
  const over = (failure) => {
    ctx.pending?.abort(failure);
  };
  if (chosen.url !== undefined) {
    const { StreamableHTTPClientTransport } = ctx.sdk;
    return new StreamableHTTPClientTransport(new URL(chosen.url), {
      fetch: boundedFetch(chosen.limit, (failure, method) => method === "POST" && over(failure)),
      requestInit: { headers: chosen.headers },
    });
  }
  const { StdioClientTransport } = await import(`${CLIENT}/stdio`);
  const [command, ...args] = chosen.command;
  // The server gets the environment the probe has, as from a shell (the SDK's default passes only a few variables).
  const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "pipe", maxBufferSize: chosen.limit });
  ctx.stderr = tail(transport.stderr);
  // The SDK says a line over maxBufferSize only in words; it then closes the transport.
  transport.onerror = (error) => {
    if (!/exceeded maximum size/.test(error?.message)) return;
    const failure = tooLarge(chosen.limit);
    ctx.closed = failure.message;
    over(failure);
  };
  transport.onclose = () => {
    ctx.closed ??= "the server closed the connection";
  };
  return transport;
}

/**
 * Connects and lists the server's tools: sets `ctx.client`, and
 * `ctx.probe`, the server as the scenarios see it. Throws a ProbeFailure
 * that says which step failed and why.
 */
async function connect(chosen, ctx) {
  const { Client } = ctx.sdk;
  const step = async (phase, run) => {
    try {
      return await exchange(ctx, run);
    } catch (error) {
      throw Object.assign(new ProbeFailure(`${phase}: ${reason(error)}`), { cause: error });
    }
  };
  ctx.client = new Client({ name: "mcp-provenance-probe", version: "1.0.0" });
  const transport = await transportTo(chosen, ctx);
  await step("initialize", (options) => ctx.client.connect(transport, options));
  const tools = ctx.client.getServerCapabilities()?.tools ? await listTools(ctx, step) : [];
  ctx.probe = probeOf(ctx, chosen, tools);
}

/** The server's tools, page after page, up to MAX_TOOL_PAGES pages. */
async function listTools(ctx, step) {
  const tools = [];
  let cursor;
  for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
    const listed = await step("tools/list", (options) => ctx.client.listTools(cursor === undefined ? undefined : { cursor }, options));
    tools.push(...listed.tools);
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/** The checks as a table. */
function tableOf(checks) {
  const rows = [["ID", "rule", "level", "status", "what"], ...checks.map((c) => [c.id, c.rule, c.level, c.status, c.description])];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join("  ")).join("\n");
}

/** Whether a check could not be tested. */
const untestable = (check) => check.details?.untestable === true;

/** How many checks ended each way; `untestable` counts those of the failures and warnings that could not be tested. */
function summaryOf(checks) {
  const count = (status) => checks.filter((c) => c.status === status).length;
  return { passed: count("SUCCESS"), failed: count("FAILURE"), warnings: count("WARNING"), untestable: checks.filter(untestable).length };
}

/**
 * What the text format prints: what was probed, the table, why the checks
 * did not pass (those alike together), the summary line, and that nothing
 * could be tested, when so.
 */
function text(target, tool, checks, summary) {
  const alike = new Map();
  for (const c of checks) if (c.errorMessage !== undefined) alike.set(c.errorMessage, [...(alike.get(c.errorMessage) ?? []), c.id]);
  const why = [...alike].map(([message, ids]) => `${ids.join(", ")}: ${visible(message)}\n`).join("");
  const nothing = summary.untestable === checks.length ? "; nothing could be tested" : "";
  const last = `${summary.passed} passed, ${summary.failed} failed, ${summary.warnings} warnings (${summary.untestable} of them untestable)${nothing}`;
  const probing = tool === undefined
    ? `probing ${visible(target)} without calling a tool: no tool was named with --tool, none is named test_simple_text and none is annotated readOnlyHint: true, so nothing can be tested`
    : `probing ${visible(target)} with tool ${visible(cut(tool))}`;
  return `${probing}\n\n${tableOf(checks)}\n\n${why === "" ? "" : `${why}\n`}${last}\n`;
}

/** Runs `probe` with `argv` (the words after "probe"); the exit code. Throws UsageError. */
export async function probe(argv, io) {
  const chosen = options(argv);
  if (chosen.help) {
    io.stdout.write(`${PROBE_USAGE}\n`);
    return 0;
  }
  const target = chosen.url ?? chosen.command.join(" ");
  const ctx = { timeout: chosen.timeout, sdk: await client() };
  const checks = [];
  try {
    await connect(chosen, ctx);
    const session = await begin(ctx.probe);
    for (const scenario of SERVER_CHECKS) {
      const levels = new Map(scenario.declared.map((declared) => [declared.id, declared.level]));
      for (const check of await scenario.run(session)) {
        checks.push({ scenario: scenario.name, rule: RULES[check.id], level: levels.get(check.id), ...check });
      }
    }
  } catch (error) {
    const stderr = ctx.stderr?.() ? `; its standard error ended: ${ctx.stderr()}` : "";
    io.stderr.write(`mcp-provenance probe: cannot probe ${visible(target)}: ${visible(reason(error) + stderr)}\n`);
    return 2;
  } finally {
    await ctx.client?.close().catch(() => {});
  }
  const summary = summaryOf(checks);
  const where = chosen.url !== undefined ? { url: chosen.url } : { command: chosen.command };
  const tool = ctx.probe?.tool;
  io.stdout.write(chosen.format === "json" ? `${json({ ...where, tool: tool ?? null, checks, summary })}\n` : text(target, tool, checks, summary));
  const nothing = summary.untestable === checks.length;
  return summary.failed > 0 || nothing || (chosen.strict && summary.warnings > 0) ? 1 : 0;
}
