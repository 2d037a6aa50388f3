// The wire filter against what every JS gateway pays at least: one
// `JSON.parse` of the body (and, to forward, one `JSON.stringify`), in one
// process, interleaved. Bodies: the SEP-2817 example request of
// docs/reference.md, and the same request whose `arguments` hold ~0.7 MB of
// rows (an array of objects). Prints medians per call and the ratios the
// goals are stated in (issue 17: filter ≤ 1.0× JSON.parse on the example,
// ≤ 0.33× on the rows). It asserts nothing about time.
//
//   make bench        (or: make build && node bench/filter.mjs [--rounds N])

import { Bench } from "tinybench";

import { createFilter } from "../pkg/dist/gateway.mjs";
import { big, example } from "./inputs.mjs";

const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1]) || 5;

const filter = createFilter();
const redacting = createFilter({ policy: { userIntent: "redact" } });
const bodies = [["the SEP example", example], ["0.7 MB of rows in arguments", big]];
const results = new Map();
for (let round = 0; round < rounds; round++) {
  for (const [name, body] of bodies) {
    const bytes = new TextEncoder().encode(body);
    const bench = new Bench({ time: name === "the SEP example" ? 300 : 800, warmupTime: 100 });
    bench
      .add(`${name}: JSON.parse`, () => JSON.parse(body))
      .add(`${name}: JSON.parse + JSON.stringify`, () => JSON.stringify(JSON.parse(body)))
      .add(`${name}: filter (text)`, () => filter(body))
      .add(`${name}: filter (bytes)`, () => filter(bytes))
      .add(`${name}: filter, redacting (text)`, () => redacting(body));
    await bench.run();
    for (const task of bench.tasks) {
      const all = results.get(task.name) ?? [];
      all.push(task.result.latency.p50 ?? task.result.median);
      results.set(task.name, all);
    }
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const us = (ms) => `${(ms * 1000).toFixed(2)} µs`;
console.log(`wire filter, medians of ${rounds} rounds (${example.length} B and ${(big.length / 1e6).toFixed(2)} MB bodies):`);
for (const [name, body] of bodies) {
  const parse = median(results.get(`${name}: JSON.parse`));
  for (const task of ["JSON.parse", "JSON.parse + JSON.stringify", "filter (text)", "filter (bytes)", "filter, redacting (text)"]) {
    const took = median(results.get(`${name}: ${task}`));
    console.log(`  ${name}: ${task.padEnd(28)} ${us(took).padStart(12)}  ${(took / parse).toFixed(2)}× JSON.parse`);
  }
  void body;
}
