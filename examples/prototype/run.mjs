// The prototype, end to end: the employees server, the gateway in front of
// it and the host replaying the transcript, each its own Node process, over
// Streamable HTTP on 127.0.0.1. `make demo` runs this.
//
//   node examples/prototype/run.mjs [--redact-intent] [--out <dir>]
// writes the audit database and the gateway's log into <dir>
// (default target/prototype), fresh each run.

import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

import { start, stop } from "./http.mjs";

const { values: options } = parseArgs({
  options: { "redact-intent": { type: "boolean", default: false }, out: { type: "string", default: "target/prototype" } },
});
const out = resolve(options.out);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const here = (file) => new URL(file, import.meta.url).pathname;
const log = join(out, "gateway.jsonl");

const server = await start(here("server.mjs"), ["--data", out]);
const gateway = await start(here("gateway.mjs"), ["--upstream", server.url, "--log", log, ...(options["redact-intent"] ? ["--redact-intent"] : [])]);
try {
  const host = spawn(process.execPath, [here("host.mjs"), "--gateway", gateway.url, "--audit", join(out, "audit.db"), "--log", log], { stdio: "inherit" });
  const code = await new Promise((resolve) => host.on("exit", resolve));
  process.exitCode = code;
} finally {
  await stop(gateway.child);
  await stop(server.child);
}
