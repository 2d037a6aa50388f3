// `mcp-provenance check`: every line of a capture (one JSON-RPC message or
// batch) through the core's check, which runs the wire filter on each
// line's bytes and writes what to print (src/wire/check.rs): the native
// command prints the same by construction. Streaming, the whole lines of
// each piece read in one call; optionally each line as the filter lets it go
// on, into another file (an empty line where it does not).
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { once } from "node:events";
import { parseArgs } from "node:util";

import { call } from "../boundary.mjs";

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
  const policy = { ...(values["redact-intent"] && { userIntent: "redact" }) };
  for (const [flag, name] of Object.entries(LIMITS)) {
    if (values[flag] === undefined) continue;
    if (!/^\d+$/.test(values[flag])) throw new UsageError(`--${flag} takes a whole number of bytes`);
    policy[name] = Number(values[flag]);
  }
  const filter = {
    ...(values.key && { invocationKeys: [values.key] }),
    ...(values["ui-key"] && { uiKeys: [values["ui-key"]] }),
    // The copy written is sanitized under the policy, the default one included; a policy given is checked either way.
    ...((values.sanitize !== undefined || Object.keys(policy).length > 0) && { policy }),
  };
  let handle;
  try {
    handle = call("CreateCheck", (w) => w.whole({ filter, json: values.format === "json", field: values.field, sanitize: values.sanitize !== undefined }), (_, made) => made);
  } catch (error) {
    throw new UsageError(`${error.message} (${error.code})`);
  }
  return { file: positionals[0], sanitize: values.sanitize, handle };
}

/** Whole lines through the core's check (src/wire/check.rs): what to print, what to write, the counts so far. */
function checkLines(handle, bytes) {
  return call("CheckLines", (w) => {
    w.whole(handle);
    w.whole(w.body(bytes));
  }, (answer) => answer.line());
}

/**
 * Runs `check` with `argv` (after the word "check"); `io` holds stdin,
 * stdout, stderr (streams) and whether stderr is a terminal. The exit code.
 */
export async function check(argv, io) {
  const { file, sanitize, handle } = options(argv);
  let input;
  let total;
  try {
    if (file === "-") input = io.stdin;
    else {
      total = statSync(file).size;
      input = createReadStream(file, { highWaterMark: 1 << 20 });
      await once(input, "open");
    }
  } catch (error) {
    io.stderr.write(`mcp-provenance check: cannot read ${file}: ${error.code ?? error.message}\n`);
    return 2;
  }
  const out = sanitize ? createWriteStream(sanitize) : undefined;
  const write = (text) => (text === "" || io.stdout.write(text) ? undefined : once(io.stdout, "drain"));
  let read = 0;
  let shown = 0;
  let counts = { messages: 0 };
  const progress = io.progress && total ? setInterval(() => {
    io.stderr.write(`\r${(read / 2 ** 20).toFixed(0)} of ${(total / 2 ** 20).toFixed(0)} MB, ${counts.messages} messages`);
    shown = 1;
  }, 250) : undefined;

  for await (const lines of wholeLines(input)) {
    read += lines.length;
    const checked = checkLines(handle, lines);
    counts = checked.counts;
    await write(checked.out);
    if (out && !out.write(checked.sanitized)) await once(out, "drain");
  }
  clearInterval(progress);
  if (shown) io.stderr.write("\n");
  if (out) await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
  const summary = call("CheckSummary", (w) => w.whole(handle), (answer) => answer.line());
  await write(summary.out);
  return summary.counts.errors > 0 ? 1 : 0;
}

/**
 * The bytes of a stream in pieces that end where a line does (the last
 * where the stream does); a line across many chunks is joined once.
 */
async function* wholeLines(input) {
  let held = [];
  for await (const chunk of input) {
    const end = chunk.lastIndexOf(10) + 1;
    if (end === 0) {
      held.push(chunk);
      continue;
    }
    held.push(chunk.subarray(0, end));
    yield held.length === 1 ? held[0] : Buffer.concat(held);
    held = end < chunk.length ? [chunk.subarray(end)] : [];
  }
  if (held.length) yield Buffer.concat(held);
}
