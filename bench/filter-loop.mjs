// One package's filter on the SEP example, in a process of its own: warmed
// up, then timed over many calls in a loop; prints nanoseconds a call.
// bench/binding.mjs runs it for each side, in pairs: there a call's garbage
// (a new ArrayBuffer, a copy) is collected in its own process's time, not,
// as in one process of both packages, partly in the other side's.
//
//   node bench/filter-loop.mjs <package dir> <text|bytes|redacting|lines> [calls]

import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { example } from "./inputs.mjs";

const [dir, mode, count = "100000"] = process.argv.slice(2);
const { createFilter } = await import(pathToFileURL(join(dir, "dist", "gateway.mjs")).href);
const filter = createFilter(mode === "redacting" ? { policy: { userIntent: "redact" } } : undefined);
const body = mode === "bytes" ? new TextEncoder().encode(example) : example;
/** What a gateway that logs pays: the filter, then its lines. */
const call = mode === "lines" ? () => filter(body).lines.length : () => (filter(body).forward === undefined ? 0 : 1);
let sink = 0;
for (let n = 0; n < 20_000; n++) sink += call();
const calls = Number(count);
const start = process.hrtime.bigint();
for (let n = 0; n < calls; n++) sink += call();
const ns = Number(process.hrtime.bigint() - start) / calls;
process.stdout.write(sink < 0 ? "" : `${ns}\n`);
