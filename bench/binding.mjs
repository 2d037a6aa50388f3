// The npm package before and after a change, in one process: the baseline's
// package (tools/baseline.mjs builds it into target/baseline/<commit>/pkg)
// beside pkg/ as make build left it. The calls: the object API's three
// (validate, sanitize, stampInitiator, alone and in a row, as
// bench/compare.mjs times them), attachInvocation and auditRecord, on the
// SEP-2817 example request; sanitize and auditRecord given a policy, and the
// same of a createProvenance of it; the gateway's filter on the example and on 0.7 MB
// of rows (bench/filter.mjs's bodies), as text and as bytes, and on the example with
// its lines read (what a gateway that logs them pays); and
// `mcp-provenance check` (each package's command, as bench/check.mjs runs it)
// on two captures of bench/capture.mjs, in child processes, its wall time and
// its CPU time; and the filter on the example in a process a side
// (bench/filter-loop.mjs), where each side's garbage is collected in its own time. It asserts nothing about time, only that both packages give
// equal results on each input, so that both sides do the same work.
//
// Two things make a ratio wander on the same code, and the measurement is
// built against both. The machine is shared, and its load changes from one
// second to the next: each call's two sides are timed in pairs, one right
// after the other, over many rounds, and the ratio is the median of the
// pairs' ratios. And one module instance of a package can be a few percent
// faster or slower than another of the very same files, for as long as the
// process lives (the baseline against itself, one instance each: up to 4% on
// a call of the object API; four each: 2.7%; eight: 1.1%): each package is
// loaded as several instances (copies of its files), which the rounds take
// in turn. Prints each side's median, the median of the pairs' ratios and
// where it lies with 95% confidence, and flags a ratio over 1.05.
//
//   make bench   (or: make build && node tools/baseline.mjs && node bench/binding.mjs
//                     [--commit <rev>] [--after <package dir>] [--rounds N] [--instances N] [--runs N] [--megabytes N] [--loops N])

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { Bench } from "tinybench";

import { baseline, commitArgument } from "../tools/baseline.mjs";
import { big, example, sep } from "./inputs.mjs";

const number = (flag, fallback) => (process.argv.includes(flag) ? Number(process.argv[process.argv.indexOf(flag) + 1]) : fallback);
/** Rounds of each call, taking the instances in turn. */
const rounds = number("--rounds", 32);
const instances = number("--instances", 8);
/** Runs of `check` per package and capture. */
const runs = number("--runs", 61);
const megabytes = number("--megabytes", 16);
const LIMIT = 1.05;

const root = fileURLToPath(new URL("..", import.meta.url));
const { commit, pkg } = baseline(commitArgument(process.argv));
// The package after: pkg/ (its dist/ as make build left it), or another
// package directory (--after target/baseline/<commit>/pkg: the baseline
// against itself, which shows the noise alone).
const packages = { before: pkg, after: process.argv.includes("--after") ? resolve(process.argv[process.argv.indexOf("--after") + 1]) : join(root, "pkg") };

// The copies, beside the captures, in one directory removed at the end.
const dir = mkdtempSync(join(tmpdir(), "binding-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
/** A deployment's own policy: given to each call, or bound once by createProvenance. */
const POLICY = { userIntent: "redact", maxIntentBytes: 512 };
/** Per side, its instances: each a copy of the package's manifest and dist/, its two entries, a createProvenance of POLICY, a filter, and its command. */
const sides = { before: [], after: [] };
for (let i = 0; i < instances; i++) {
  // Loaded in turns, which first alternating: where an instance's memory
  // lies follows the order they are loaded in.
  for (const side of i % 2 === 0 ? ["before", "after"] : ["after", "before"]) {
    const to = join(dir, `${side}-${i}`);
    cpSync(join(packages[side], "package.json"), join(to, "package.json"));
    cpSync(join(packages[side], "dist"), join(to, "dist"), { recursive: true });
    const entry = (file) => import(pathToFileURL(join(to, "dist", file)).href);
    const [api, gateway] = [await entry("index.mjs"), await entry("gateway.mjs")];
    sides[side][i] = { api, bound: api.createProvenance(POLICY), filter: gateway.createFilter(), bin: join(to, "dist", "bin", "mcp-provenance.mjs") };
  }
}

// --- The calls --------------------------------------------------------------

const invocation = sep.params._meta[sides.after[0].api.AI_INVOCATION_KEY];
const bare = { ...sep, params: { name: sep.params.name, arguments: sep.params.arguments } };
const bytes = { example: new TextEncoder().encode(example), big: new TextEncoder().encode(big) };
/** A filter's outcome reads its fields lazily, off its own class: compared as the plain data they are. */
const FIELDS = ["forward", "reject", "status", "replies", "lines", "accounts", "ids", "turns"];
const outcome = (result) => Object.fromEntries(FIELDS.map((field) => [field, result[field]]));

// Each: a name; how many calls a sample makes (so that the timer's own cost
// does not swamp a call of a microsecond) and for how long (ms) a side is
// timed a round; the call on an instance; what of its result both sides must
// agree on.
const calls = [
  ["validate", 100, 40, (s) => () => s.api.validate(sep)],
  ["sanitize", 100, 40, (s) => () => s.api.sanitize(sep)],
  ["stampInitiator", 100, 40, (s) => () => s.api.stampInitiator(sep)],
  ["validate + sanitize + stampInitiator", 100, 40, (s) => () => s.api.validate(sep).valid && s.api.stampInitiator(s.api.sanitize(sep).message)],
  ["attachInvocation", 100, 40, (s) => () => s.api.attachInvocation(bare, invocation)],
  ["auditRecord", 100, 40, (s) => () => s.api.auditRecord(sep)],
  ["sanitize, given a policy", 100, 40, (s) => () => s.api.sanitize(sep, POLICY)],
  ["auditRecord, given a context and policy", 100, 40, (s) => () => s.api.auditRecord(sep, { sessionId: "s-1", policy: POLICY })],
  ["createProvenance(policy).sanitize", 100, 40, (s) => () => s.bound.sanitize(sep)],
  ["createProvenance(policy).auditRecord", 100, 40, (s) => () => s.bound.auditRecord(sep, { sessionId: "s-1" })],
  ["filter, SEP example (text)", 20, 40, (s) => () => s.filter(example), outcome],
  ["filter, SEP example (bytes)", 20, 40, (s) => () => s.filter(bytes.example), outcome],
  // What a gateway that logs every line pays: the filter, then its lines.
  ["filter, SEP example, its lines read (text)", 20, 40, (s) => () => s.filter(example).lines, (lines) => lines],
  ["filter, 0.7 MB of rows (text)", 1, 120, (s) => () => s.filter(big), outcome],
  ["filter, 0.7 MB of rows (bytes)", 1, 120, (s) => () => s.filter(bytes.big), outcome],
].map(([name, batch, time, make, view = (result) => result]) => ({ name, batch, time, make, view }));

for (const { name, make, view } of calls) {
  const expected = view(make(sides.before[0])());
  for (const instance of [...sides.before, ...sides.after]) assert.deepStrictEqual(view(make(instance)()), expected, `the packages differ on ${name}`);
}

// --- Timing, in this process ------------------------------------------------

let sink = 0;
/** Per call and side, each round's median time of one call (ms). */
const times = new Map(calls.map(({ name }) => [name, { before: [], after: [] }]));
for (let round = 0; round < rounds; round++) {
  // The instances in turn; the calls in a different order each round; a
  // call's two sides one right after the other, for a short while, which
  // first alternating from one turn of the instances to the next.
  const k = round % instances;
  const order = Math.floor(round / instances) % 2 === 0 ? ["before", "after"] : ["after", "before"];
  for (let i = 0; i < calls.length; i++) {
    const { name, batch, time, make } = calls[(i + round) % calls.length];
    const bench = new Bench({ time, warmupTime: round < instances ? 100 : 10 });
    for (const side of order) {
      const call = make(sides[side][k]);
      bench.add(side, () => { for (let n = 0; n < batch; n++) sink ^= call() ? 1 : 0; }, { async: false });
    }
    await bench.run();
    for (const task of bench.tasks) times.get(name)[task.name].push(task.result.latency.p50 / batch);
  }
}

// --- `mcp-provenance check`, in child processes -----------------------------

// Each run's wall time, as bench/check.mjs takes it, and its CPU time (user
// and system, all its threads: process.cpuUsage() as it exits, written to a
// pipe of its own by a module loaded first), which the load of others on the
// machine lengthens far less. A run takes well under a second, so that the
// two sides of a pair meet the same load; many pairs, since the load changes
// from one second to the next. (Each process lays its memory out anew.)
const cpuHook = join(dir, "cpu.mjs");
writeFileSync(cpuHook, 'import { writeSync } from "node:fs";\nprocess.on("exit", () => { const { user, system } = process.cpuUsage(); writeSync(3, `${user + system}`); });\n');
for (const [capture, flags] of [["typical requests", ["--typical"]], ["the hostile mix", []]]) {
  const file = join(dir, "capture.jsonl");
  execFileSync(process.execPath, [join(root, "bench", "capture.mjs"), file, String(megabytes), ...flags]);
  const name = `check, ${statSync(file).size >> 20} MB of ${capture}`;
  const wall = { before: [], after: [] };
  const cpu = { before: [], after: [] };
  const printed = {};
  for (let run = 0; run < runs; run++) {
    for (const side of run % 2 === 0 ? ["before", "after"] : ["after", "before"]) {
      const start = process.hrtime.bigint();
      const { output, status } = spawnSync(process.execPath, ["--import", pathToFileURL(cpuHook).href, sides[side][0].bin, "check", file], { maxBuffer: 2 ** 30, stdio: ["ignore", "pipe", "pipe", "pipe"] });
      wall[side].push(Number(process.hrtime.bigint() - start) / 1e6);
      if (!(status <= 1)) throw new Error(`${side}'s check failed (${status}): ${output[2]}`);
      cpu[side].push(Number(output[3].toString()) / 1000);
      printed[side] = output[1];
    }
  }
  assert.ok(printed.before.equals(printed.after), `the packages' check printed differently on ${capture}`);
  calls.push({ name: `${name}, wall` }, { name: `${name}, CPU` });
  times.set(`${name}, wall`, wall).set(`${name}, CPU`, cpu);
}

// --- The filter, each side in processes of its own ---------------------------

// A call's garbage is collected in the time of whichever call runs then: in
// one process, the other side's as often as its own, which hides an
// allocation saved or added. bench/filter-loop.mjs times each side's filter
// on the SEP example in a process of its own, the two sides of a pair one
// right after the other.
const loops = number("--loops", 9);
for (const mode of ["text", "bytes", "redacting", "lines"]) {
  const name = `filter, SEP example (${mode}), a process a side`;
  const took = { before: [], after: [] };
  for (let run = 0; run < loops; run++) {
    for (const side of run % 2 === 0 ? ["before", "after"] : ["after", "before"]) {
      const printed = execFileSync(process.execPath, [join(root, "bench", "filter-loop.mjs"), packages[side], mode], { encoding: "utf8" });
      took[side].push(Number(printed) / 1e6);
    }
  }
  calls.push({ name });
  times.set(name, took);
}

// --- The table --------------------------------------------------------------

const sorted = (values) => [...values].sort((a, b) => a - b);
const median = (values) => { const all = sorted(values), mid = all.length >> 1; return all.length % 2 ? all[mid] : (all[mid - 1] + all[mid]) / 2; };
/** The order statistics that hold the median of `n` paired ratios with 95% confidence (the sign test's, normal approximation). */
const interval = (values) => {
  const all = sorted(values);
  const k = Math.max(0, Math.floor((all.length - 1.96 * Math.sqrt(all.length)) / 2));
  return [all[k], all[all.length - 1 - k]];
};
const shown = (ms) => (ms >= 100 ? `${(ms / 1000).toFixed(3)} s` : ms >= 0.01 ? `${(ms * 1000).toFixed(2)} µs` : `${(ms * 1e6).toFixed(0)} ns`);
const width = Math.max(...calls.map(({ name }) => name.length));
console.log(`the package before (${commit.slice(0, 12)}) and after (${relative(root, packages.after) || "."}/dist), in one process: ${rounds} rounds of each call over ${instances} instances of each package, ${runs} runs of each check, ${loops} processes a side of each filter loop`);
console.log("before, after: medians of the rounds; after/before: the median of the pairs' ratios, and where it lies with 95% confidence\n");
console.log(`${"call".padEnd(width)}  ${"before".padStart(10)}  ${"after".padStart(10)}  after/before  95% interval`);
const over = [];
/** How far the 95% intervals reach from their medians: the calls in this process, check's CPU time, its wall time. */
const noise = { "the calls in this process": 0, "the filter a process a side": 0, "check's CPU time": 0, "its wall time": 0 };
const kind = (name) => (name.endsWith(", CPU") ? "check's CPU time" : name.endsWith(", wall") ? "its wall time"
  : name.endsWith("a process a side") ? "the filter a process a side" : "the calls in this process");
for (const { name } of calls) {
  const { before, after } = times.get(name);
  const ratios = after.map((a, i) => a / before[i]);
  const ratio = median(ratios);
  const [low, high] = interval(ratios);
  noise[kind(name)] = Math.max(noise[kind(name)], ratio - low, high - ratio);
  if (ratio > LIMIT) over.push(name);
  console.log(`${name.padEnd(width)}  ${shown(median(before)).padStart(10)}  ${shown(median(after)).padStart(10)}  ${`${ratio.toFixed(3)}×`.padStart(12)}  ${low.toFixed(3)}–${high.toFixed(3)}${ratio > LIMIT ? `  > ${LIMIT}×` : ""}`);
}
console.log(over.length === 0 ? `\nno call slower than ${LIMIT}× the baseline` : `\n${over.length} slower than ${LIMIT}× the baseline: ${over.join("; ")}`);
console.log(`noise: the 95% intervals reach ${Object.entries(noise).map(([what, most]) => `${(most * 100).toFixed(1)}% (${what})`).join(", ")} from their medians`);
if (sink === 2) console.log(""); // keeps the results alive
