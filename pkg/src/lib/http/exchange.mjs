// What the HTTP middleware shares, whatever the stack (node:http and
// Express, or a Fetch handler): its options read once, the core's gateway
// (createGateway: the filter, the witnessed sessions, the way back and the
// middleware's own answers), each message's account to the audit sink and,
// once the answer is over, the exchange's outcome, the counts to the
// metrics hooks, and the exchange the app and the operator can read. Every
// decision is the core's; the stacks' files move the body and the answers.
import { createGateway } from "../../gateway.mjs";
import { sessionsOf } from "./sessions.mjs";
import { metricsOf, sinkOf } from "./sinks.mjs";

/** The exchanges under way, by the request the app was handed (and the one that came): see `exchangeOf`. */
export const exchanges = new WeakMap();

/** An option that is a function when given; else a `RangeError` with a code, as the core's own are. */
function callback(name, value) {
  if (value !== undefined && typeof value !== "function") {
    throw Object.assign(new RangeError(`options.${name} must be a function`), { code: "invalid-option" });
  }
  return value;
}

/**
 * The middleware's options, each read once (a getter runs once), checked
 * now: its JS functions, its sink (a path made a file sink, opened once),
 * its metrics and its sessions store (sessions.mjs) here, every other one by
 * the core's gateway, first.
 */
export function settingsOf(options) {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw Object.assign(new TypeError("the middleware's options are an object"), { code: "invalid-type" });
  }
  const { audit, principal, metrics, sessions, ...rest } = options ?? {};
  const gateway = createGateway(rest);
  return { gateway, principal: callback("principal", principal), metrics: metricsOf(metrics), audit: sinkOf(audit), sessions: sessionsOf(sessions) };
}

/** What the middleware made of one HTTP exchange, as it goes: see `Exchange` in http.d.ts; the rest is the core's. */
export class Exchange {
  #core;
  #accounts;

  constructor(core) {
    this.#core = core;
    this.receivedAt = new Date().toISOString();
    this.principal = undefined;
    this.filtered = undefined;
    this.filterMs = undefined;
  }

  /** The session the app issued that the request names, or that its answer named. */
  get sessionId() { return this.#core.session; }
  /** Why the middleware answered in the app's stead, when it did. */
  get refused() { return this.#core.refused; }
  /** The ids (JSON texts, as sent) of the requests that went on. */
  get awaiting() { return this.#core.waiting; }
  /** Whether the body that went on was a batch. */
  get batch() { return this.#core.batch; }

  /** Each message's account, parsed once, when first asked for. */
  get accounts() {
    this.#accounts ??= (this.filtered?.accounts ?? []).map((account) => JSON.parse(account));
    return this.#accounts;
  }
}

/**
 * The exchange of a request (`method`, the `path` the app routes it by, its
 * `headers` as `[name, value, ...]`): the core's, what it starts with
 * (`pass`, `watch` or `read`), and its record, kept for `exchangeOf(request)`
 * (none for a request that is not the middleware's).
 */
export function begin(settings, request, method, path, headers) {
  const core = settings.gateway.begin(method, path, headers);
  const { start } = core;
  const record = start === "pass" ? undefined : new Exchange(core);
  if (record !== undefined) exchanges.set(request, record);
  // With a sink, a body the middleware reads has an outcome, kept as its answer goes, given by `ended`;
  // with metrics, an end, where a refusal of the middleware's own is counted.
  if (start !== "read") return { core, start, record };
  // Without a sink or metrics, no account is read unless someone asks `exchangeOf(request)`: its records made then.
  if (settings.audit === undefined && settings.metrics === undefined) {
    core.deferRecords();
    return { core, start, record };
  }
  if (settings.audit !== undefined) core.keepOutcome();
  return { core, start, record, began: performance.now() };
}

/**
 * Runs the filter on a POST's `body` (bytes) with what the server witnessed
 * (the principal: what `settings.principal` makes of the request, `given`,
 * or by default the `clientId` of `auth`, what the stack authenticated,
 * never a header), and hands each message's account and line to `audit`, in
 * order, before anything goes on. The core's answer to the client in the
 * app's stead; undefined when the body goes on: `record.filtered.forward`,
 * then, is what the app reads.
 */
export async function admit(settings, exchange, body, given, auth) {
  const { core, record } = exchange;
  const principal = settings.principal ? settings.principal(...given) : auth?.clientId;
  record.principal = typeof principal === "string" && principal !== "" ? principal : undefined;
  const started = performance.now();
  record.filtered = core.admit(body, record);
  record.filterMs = performance.now() - started;
  const { metrics } = settings;
  if (metrics !== undefined) counted(metrics, record);
  // An outcome given while the accounts are still being kept (the client gone meanwhile) waits for them.
  const unkept = settings.audit === undefined ? undefined : await (exchange.auditing = audited(settings.audit, record));
  exchange.auditing = undefined;
  if (unkept !== undefined) metrics?.failed();
  if ("reject" in record.filtered) return core.rejected();
  return unkept === undefined ? undefined : core.auditFailed(unkept);
}

/** The filter's time and each message's account to the metrics hooks, before the sink keeps them. */
function counted(metrics, record) {
  metrics.filtered(record.filterMs / 1000);
  for (const account of record.accounts) metrics.observe(account);
}

/**
 * Hands each message's account and line (when `audit` takes a second
 * parameter) to `audit` (sync or async), in order, each waiting for the one
 * before: undefined when it kept them all, else the code of its failure
 * (`audit-failed` unless it has a `code` of its own), said once on stderr
 * without the failure's text, which may quote what the client sent.
 */
async function audited(audit, record) {
  const { accounts } = record;
  // A line holds its message, arguments and all, and costs what they weigh: made only for a sink that takes one.
  const lines = audit.length >= 2 ? record.filtered.lines : [];
  try {
    for (let index = 0; index < accounts.length; index++) {
      const kept = audit(accounts[index], lines[index]);
      if (typeof kept?.then === "function") await kept;
    }
    return undefined;
  } catch (failure) {
    const code = typeof failure?.code === "string" ? failure.code : "audit-failed";
    const kind = failure?.constructor?.name ?? typeof failure;
    console.error(`mcp-provenance: a body of ${accounts.length} message(s) refused: its audit failed (${kind}, code ${JSON.stringify(code.slice(0, 64))})`);
    return code;
  }
}

/** This worker, `[pid, host]`, where the runtime says (Node, Deno, Bun; not a browser or a worker), read once. */
let worker;
function workerOf() {
  if (worker === undefined) {
    const process = globalThis.process;
    let host;
    try {
      host = process?.getBuiltinModule?.("node:os")?.hostname();
    } catch {
      host = undefined;
    }
    worker = [process?.pid, host];
  }
  return worker;
}

/**
 * Hands the exchange's outcome account and its line to `settings.audit`,
 * once, when its answer is over (sent, or the client gone, or the app
 * failed), after the body's accounts (once an async sink has kept them):
 * the status sent, what each request got. Nothing without a sink, nor for a
 * request the middleware did not read. The answer is gone by then: a sink
 * that fails changes nothing of it, and stderr says so once, without the
 * failure's text. With metrics, a refusal of the middleware's own counted
 * then too (`refusedHere`).
 */
export function ended(settings, exchange) {
  const { began, auditing } = exchange;
  if (began === undefined || exchange.ended) return;
  exchange.ended = true;
  if (auditing === undefined) over(settings, exchange, performance.now() - began);
  else auditing.then(() => over(settings, exchange, performance.now() - began));
}

/** The exchange is over, `ms` long: its refusal counted, its outcome to the sink. */
function over(settings, exchange, ms) {
  if (settings.metrics !== undefined) refusedHere(settings.metrics, exchange);
  if (settings.audit !== undefined) given(settings, exchange.core, ms);
}

/**
 * Counts the exchange's refusal when the middleware answered in the app's
 * stead (or put its errors in place of the app's answer): the outcome's
 * `refused` (`body-too-large`, `unsupported-media-type`, `parse-error`,
 * `audit-failed` or the sink's own code, `answer-not-json`, …). It is never
 * a message's refusal (a body whose messages the filter refused one by one
 * has none): those are counted with their accounts (`observe`).
 */
function refusedHere(metrics, exchange) {
  let code;
  try {
    code = exchange.core.refused;
  } catch {
    // The module started afresh: the exchange is gone with it.
    return;
  }
  if (code !== undefined) metrics.refused(code);
}

/** Says once on stderr that an outcome was not kept: the failure's kind and code, not its text. */
function unkept(failure) {
  const code = typeof failure?.code === "string" ? failure.code : "audit-failed";
  const kind = failure?.constructor?.name ?? typeof failure;
  console.error(`mcp-provenance: an exchange's outcome was not kept: its audit failed (${kind}, code ${JSON.stringify(code.slice(0, 64))})`);
}

/** The outcome of `core`, `ms` long, to the sink; its failure said once. */
function given(settings, core, ms) {
  let line;
  try {
    line = core.outcome(ms, ...workerOf());
  } catch {
    // The module started afresh: the exchange is gone with it.
    return;
  }
  if (line === undefined) return;
  try {
    // As for the messages' accounts, a line only for a sink that declares one.
    const kept = settings.audit(JSON.parse(line), settings.audit.length >= 2 ? line : undefined);
    if (typeof kept?.then === "function") {
      kept.then(undefined, (failure) => {
        unkept(failure);
        settings.metrics?.failed();
      });
    }
  } catch (failure) {
    unkept(failure);
    settings.metrics?.failed();
  }
}

/**
 * Says once on stderr that the middleware failed itself (the failure's kind
 * and code, not its text); the core's answer for the client, when the
 * exchange can still give one.
 */
export function failedHere(failure, core) {
  const code = typeof failure?.code === "string" ? failure.code.slice(0, 64) : "none";
  console.error(`mcp-provenance: the middleware failed (${failure?.constructor?.name ?? typeof failure}, code ${JSON.stringify(code)})`);
  try {
    return core?.failed("middleware-failed");
  } catch {
    return undefined;
  }
}
