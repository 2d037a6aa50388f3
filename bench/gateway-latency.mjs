// What the gateway adds to each request: the time its filter took beside
// the whole round trip it saw, as medians over the exchanges of one run
// (the lines of the gateway's log that end an exchange).
//
//   make demo && node bench/gateway-latency.mjs [target/prototype/gateway.jsonl]

import { readFileSync } from "node:fs";

const path = process.argv[2] ?? "target/prototype/gateway.jsonl";
const entries = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line)).filter((entry) => "roundTripMs" in entry);
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const filter = median(entries.map((entry) => entry.filterMs));
const roundTrip = median(entries.map((entry) => entry.roundTripMs));
console.log(`${entries.length} exchanges: the filter ${(filter * 1000).toFixed(0)} µs median, round trip ${roundTrip.toFixed(2)} ms median (${((100 * filter) / roundTrip).toFixed(1)}%)`);
