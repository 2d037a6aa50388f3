// The audit sinks the middleware takes by configuration, and its metrics
// hooks checked: a JSON-lines file (`jsonLinesSink`, or a path given as
// `audit`), appended to a line at a time so that rotation by rename, and
// several processes writing at once, keep every line whole. Node's file
// system is asked of the runtime (`process.getBuiltinModule`) when a file
// sink is made, never imported: a browser bundle of mcp-provenance/http
// holds no `node:fs`, and a runtime without one refuses a path when the
// middleware is made.

/** The flags a line is appended with: the file made if missing, every write at its end (O_APPEND). */
let flags;

/** Node's `fs` and `path` where the runtime has them (Node, Deno, Bun), else undefined. */
function nodeFs() {
  const process = globalThis.process;
  try {
    const fs = process?.getBuiltinModule?.("node:fs");
    const path = process?.getBuiltinModule?.("node:path");
    return fs && path ? { fs, path } : undefined;
  } catch {
    return undefined;
  }
}

/** A `RangeError` with a code, as the middleware's other bad options are. */
const badOption = (message, code = "invalid-option") => Object.assign(new RangeError(message), { code });

const encoder = new TextEncoder();

/**
 * An audit sink appending each line it is handed, and a newline, to the
 * JSON-lines file at `path`: see `jsonLinesSink` in http.d.ts.
 *
 * ```js
 * import { mkdtempSync, readFileSync, statSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { jsonLinesSink, provenanceFetch } from "mcp-provenance/http";
 *
 * const file = join(mkdtempSync(join(tmpdir(), "audit-")), "audit.jsonl");
 * const handler = provenanceFetch(async () => Response.json({ jsonrpc: "2.0", id: 1, result: {} }), { audit: jsonLinesSink(file) });
 * console.assert((statSync(file).mode & 0o777) === 0o600); // made owner-only, and opened once, now
 * const answer = await handler(new Request("http://localhost/mcp", {
 *   method: "POST", headers: { "content-type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
 * }));
 * console.assert(answer.status === 200);
 * // The message's line was kept before the handler was called; the outcome's comes once the answer is over.
 * const message = JSON.parse(readFileSync(file, "utf8").split("\n")[0]);
 * console.assert(message.kind === "request" && message.record.method === "ping");
 * ```
 */
export function jsonLinesSink(path) {
  if (typeof path !== "string" || path === "" || path.includes("\0")) {
    throw Object.assign(new TypeError("jsonLinesSink takes the path of a file: a non-empty string"), { code: "invalid-type" });
  }
  const node = nodeFs();
  if (node === undefined) throw badOption("a JSON-lines file sink needs node:fs (Node, Deno, Bun): give `audit` a function here");
  const { fs } = node;
  // Where the file is when the sink is made, wherever the process is later.
  const file = node.path.resolve(path);
  flags ??= fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT;
  // Opened once now: a path that cannot be appended to fails here, not on a request.
  try {
    fs.closeSync(fs.openSync(file, flags, 0o600));
  } catch (failure) {
    throw Object.assign(badOption(`the audit file ${file} cannot be opened to append (${failure?.code ?? "failed"})`, "unwritable-audit"), { cause: failure });
  }
  return function jsonLines(account, line) {
    if (typeof line !== "string") {
      return Promise.reject(Object.assign(new TypeError("a JSON-lines sink writes the line it is handed: a string"), { code: "invalid-type" }));
    }
    return append(fs, file, encoder.encode(`${line}\n`));
  };
}

/**
 * Appends `bytes` to `file` in one write on a descriptor opened for it, made
 * owner-only if missing: opened anew each time, so that a file renamed away
 * (rotated) is made again; one write on O_APPEND, so that lines several
 * processes write at once never interleave. Rejects when any step fails, or
 * the write fell short, with an error coded `audit-failed` (the file
 * system's own error its `cause`): the middleware then refuses the body.
 */
function append(fs, file, bytes) {
  return new Promise((resolve, reject) => {
    const failed = (failure) => reject(Object.assign(
      new Error(`the audit file ${file} was not appended to (${failure?.code ?? "failed"})`),
      { code: "audit-failed", cause: failure },
    ));
    fs.open(file, flags, 0o600, (opening, descriptor) => {
      if (opening) return failed(opening);
      fs.write(descriptor, bytes, 0, bytes.length, null, (writing, written) => {
        fs.close(descriptor, (closing) => {
          if (writing || closing) return failed(writing ?? closing);
          if (written !== bytes.length) return failed({ code: `short write, ${written} of ${bytes.length} bytes` });
          return resolve();
        });
      });
    });
  });
}

/**
 * The middleware's `audit`: a function as given; a path (a string) as its
 * JSON-lines file sink; anything else refused now, with a code.
 */
export function sinkOf(audit) {
  if (audit === undefined || typeof audit === "function") return audit;
  if (typeof audit === "string" && audit !== "") {
    if (nodeFs() === undefined) throw badOption("options.audit is a path, and this runtime has no node:fs: give a function");
    return jsonLinesSink(audit);
  }
  throw badOption("options.audit must be a function or the path of a JSON-lines file");
}

/** What the middleware calls on its `metrics`, each a function. */
const HOOKS = ["observe", "refused", "failed", "filtered"];

/**
 * The middleware's `metrics`, checked now: an object whose `observe`,
 * `refused`, `failed` and `filtered` are functions (each read once), as
 * `otelMetrics` makes it. Each is called with one value at most; what one
 * throws never reaches the exchange: stderr says so, its kind and code, not
 * its text.
 */
export function metricsOf(metrics) {
  if (metrics === undefined) return undefined;
  if (typeof metrics !== "object" || metrics === null) {
    throw badOption("options.metrics must be an object with the functions observe, refused, failed and filtered (otelMetrics makes one)");
  }
  const hooks = {};
  for (const name of HOOKS) {
    const hook = metrics[name];
    if (typeof hook !== "function") throw badOption(`options.metrics.${name} must be a function`);
    hooks[name] = (value) => {
      try {
        hook.call(metrics, value);
      } catch (failure) {
        const code = typeof failure?.code === "string" ? failure.code.slice(0, 64) : "none";
        console.error(`mcp-provenance: metrics.${name} failed (${failure?.constructor?.name ?? typeof failure}, code ${JSON.stringify(code)})`);
      }
    };
  }
  return hooks;
}
