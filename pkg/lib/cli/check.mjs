// `mcp-provenance check`: every message of a capture (one JSON-RPC message or
// batch per line) through validate, streaming, in constant memory; each
// diagnostic printed with its line, and a summary line. Optionally each
// message sanitized into another file.
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

import { createProvenance } from "../api.mjs";

export const CHECK_USAGE = `usage: mcp-provenance check <file.jsonl | -> [options]

Checks each line (one JSON-RPC message or batch) against every rule.
  --format text|json         diagnostics as lines of text (default) or JSON records
  --key <key>                the envelope's _meta key (e.g. com.example/aiInvocation)
  --ui-key <key>             the ui entry's _meta key
  --field <name>             take each line's message from this member (e.g. message, for
                             the prototype gateway's log); lines without it are skipped
  --sanitize <out.jsonl>     write each message, sanitized, to this file
  --redact-intent            with --sanitize: remove userIntent.text
  --max-intent-bytes <n>, --max-reason-bytes <n>, --max-model-bytes <n>,
  --max-turn-id-bytes <n>, --max-envelope-bytes <n>   with --sanitize: the limits
Exit: 0 clean, 1 a message has an error, 2 bad usage or an unreadable file.`;

/** A usage error: printed with the usage, exit code 2. */
export class UsageError extends Error {}

const LIMITS = {
  "max-intent-bytes": "maxIntentBytes",
  "max-reason-bytes": "maxReasonBytes",
  "max-model-bytes": "maxModelBytes",
  "max-turn-id-bytes": "maxTurnIdBytes",
  "max-envelope-bytes": "maxEnvelopeBytes",
};

/** The options of `check`, read from `argv`; throws UsageError. */
function options(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        format: { type: "string", default: "text" },
        key: { type: "string" },
        "ui-key": { type: "string" },
        field: { type: "string" },
        sanitize: { type: "string" },
        "redact-intent": { type: "boolean", default: false },
        ...Object.fromEntries(Object.keys(LIMITS).map((name) => [name, { type: "string" }])),
      },
    });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError("check takes one file (or - for standard input)");
  if (!["text", "json"].includes(values.format)) throw new UsageError("--format is text or json");
  const policy = {
    ...(values.key && { invocationKey: values.key }),
    ...(values["ui-key"] && { uiKey: values["ui-key"] }),
    ...(values["redact-intent"] && { userIntent: "redact" }),
  };
  for (const [flag, name] of Object.entries(LIMITS)) {
    if (values[flag] === undefined) continue;
    if (!/^\d+$/.test(values[flag])) throw new UsageError(`--${flag} takes a whole number of bytes`);
    policy[name] = Number(values[flag]);
  }
  let mp;
  try {
    mp = createProvenance(policy);
  } catch (error) {
    throw new UsageError(`${error.message} (${error.code})`);
  }
  return { file: positionals[0], format: values.format, field: values.field, sanitize: values.sanitize, mp };
}

/** One line of text output for a diagnostic. */
const describe = (line, at, d) => `line ${line}${at}: ${d.severity} ${d.rule} ${d.code} ${d.path || "/"} ${d.message}`;

/**
 * Runs `check` with `argv` (after the word "check"); `io` holds stdin,
 * stdout, stderr (streams) and whether stderr is a terminal. The exit code.
 */
export async function check(argv, io) {
  const { file, format, field, sanitize, mp } = options(argv);
  let input;
  let total;
  try {
    if (file === "-") input = io.stdin;
    else {
      total = statSync(file).size;
      input = createReadStream(file);
      await once(input, "open");
    }
  } catch (error) {
    io.stderr.write(`mcp-provenance check: cannot read ${file}: ${error.code ?? error.message}\n`);
    return 2;
  }
  const out = sanitize ? createWriteStream(sanitize) : undefined;
  const counts = { messages: 0, errors: 0, warnings: 0, unparseable: 0, skipped: 0 };
  const write = (text) => (io.stdout.write(text) ? undefined : once(io.stdout, "drain"));
  let read = 0;
  let shown = 0;
  const progress = io.progress && total ? setInterval(() => {
    io.stderr.write(`\r${(read / 2 ** 20).toFixed(0)} of ${(total / 2 ** 20).toFixed(0)} MB, ${counts.messages} messages`);
    shown = 1;
  }, 250) : undefined;

  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    read += Buffer.byteLength(text) + 1;
    if (text.trim() === "") continue;
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      counts.unparseable++;
      await write(format === "json" ? `${JSON.stringify({ line, unparseable: true })}\n` : `line ${line}: not JSON\n`);
      continue;
    }
    if (field !== undefined) {
      if (typeof value !== "object" || value === null || !(field in value)) {
        counts.skipped++;
        continue;
      }
      value = value[field];
    }
    const batch = Array.isArray(value);
    const messages = batch ? value : [value];
    const sanitized = [];
    for (const [index, message] of messages.entries()) {
      counts.messages++;
      const at = batch ? `[${index}]` : "";
      const { valid, diagnostics } = mp.validate(message);
      for (const d of diagnostics) counts[d.severity === "error" ? "errors" : "warnings"]++;
      if (format === "json") await write(`${JSON.stringify({ line, ...(batch && { index }), valid, diagnostics })}\n`);
      else for (const d of diagnostics) await write(`${describe(line, at, d)}\n`);
      if (out) {
        try {
          sanitized.push(mp.sanitize(message).message);
        } catch (error) {
          // What cannot be sanitized is not written as it came.
          await write(format === "json" ? `${JSON.stringify({ line, ...(batch && { index }), notSanitized: error.code })}\n`
            : `line ${line}${at}: not written to ${sanitize}: ${error.code}\n`);
        }
      }
    }
    if (out && sanitized.length) {
      if (!out.write(`${JSON.stringify(batch ? sanitized : sanitized[0])}\n`)) await once(out, "drain");
    }
  }
  clearInterval(progress);
  if (shown) io.stderr.write("\n");
  if (out) await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
  const summary = `checked ${counts.messages} messages: ${counts.errors} errors, ${counts.warnings} warnings, ${counts.unparseable} unparseable`;
  await write(format === "json" ? `${JSON.stringify({ summary: counts })}\n` : `${summary}${counts.skipped ? ` (${counts.skipped} lines without ${field} skipped)` : ""}\n`);
  return counts.errors > 0 ? 1 : 0;
}
