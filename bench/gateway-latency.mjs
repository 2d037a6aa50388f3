// What the gateway adds to each request: the time its library calls took
// (liftLegacyArguments, validate and, with --redact-intent, sanitize) beside
// the whole round trip it saw, as medians over the requests of one run.
//
//   make demo && node bench/gateway-latency.mjs [target/prototype/gateway.jsonl]

import { readFileSync } from "node:fs";

const path = process.argv[2] ?? "target/prototype/gateway.jsonl";
const entries = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line));
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const library = median(entries.map((entry) => entry.libraryMs));
const roundTrip = median(entries.map((entry) => entry.roundTripMs));
console.log(`${entries.length} requests: library calls ${(library * 1000).toFixed(0)} µs median, round trip ${roundTrip.toFixed(2)} ms median (${((100 * library) / roundTrip).toFixed(1)}%)`);
