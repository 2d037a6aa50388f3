// serde-wasm-bindgen against the package's own boundary, in one process:
// the core's structs made into JS values (a report with diagnostics, an
// audit record, sanitize's changes) and an option object brought in.
// The package's side is what it does for the same job: JS reading the
// compact answer the core wrote (pkg/dist/lib/answer.mjs), and JS writing an
// option object into the tape (pkg/dist/lib/writer.mjs). The core writing its
// answer is left out of the package's figures: it is part of every call
// (`run`), a copy of the bytes JS then reads. Medians of interleaved
// rounds; it asserts only that both sides give the same values.
// Then the object API's calls whole, the package's (the tape in, the
// compact answer out) against the same call made the wasm-bindgen way
// (every argument in and the result out by serde-wasm-bindgen, the core's
// serde_json::Value API between): the ratio each path's form is kept by
// (binding/src/lib.rs keeps the tape where it is 1.2× or more).
//
//   make bench-serde (part of make bench)

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import { Bench } from "tinybench";

import * as api from "../../pkg/dist/index.mjs";
import { Answer } from "../../pkg/dist/lib/answer.mjs";
import * as glue from "../../pkg/dist/lib/glue-host.mjs";
import { guard, handle, start } from "../../pkg/dist/lib/host.mjs";
import { changesOf, reportOf } from "../../pkg/dist/lib/report.mjs";
import { Writer } from "../../pkg/dist/lib/writer.mjs";
import { readMessage, table } from "../../pkg/dist/table.mjs";

const swb = createRequire(import.meta.url)("./target/pkg/serde_wasm_bindgen_bench.js");
const writer = new Writer(start().memory, glue);
const answerAt = glue.answer_at() >>> 2;
/** The handle of no options: its number and plan (what to read). */
const defaults = guard(() => handle("Keys", undefined));

const reference = readFileSync(new URL("../../docs/reference.md", import.meta.url), "utf8");
const sep = JSON.parse(reference.match(/A request a model made[^]*?```json\n([^]*?)```/)[1]);
// The SEP example with what validate warns of and sanitize changes.
const flawed = structuredClone(sep);
Object.assign(flawed.params._meta[table.keys.invocation], { userIntent: { text: "line\nbreak\u202e" }, vendor: 1 });
flawed.params._meta.turnId = "bare";

/** Runs `op` on `message` in the package's module; a copy of its answer (the next call takes the memory back). */
function answer(op, message) {
  const flags = defaults.plan.flags[table.ops[op]];
  writer.begin(table.ops[op], flags, defaults.plan.cut);
  writer.read(() => {
    if (op === "AuditRecord") writer.options(undefined);
    readMessage(writer, message, flags, defaults.plan);
    if (op === "Validate") readMessage(writer, undefined, flags, defaults.plan);
  });
  const length = writer.run(defaults.number);
  assert.ok(length > 0);
  const at = writer.words[answerAt];
  return writer.bytes.slice(at, at + length);
}

swb.prepare(JSON.stringify(flawed));
const bytes = { report: answer("Validate", flawed), record: answer("AuditRecord", flawed), changes: answer("Sanitize", flawed) };
const ours = {
  report: () => reportOf(new Answer(bytes.report, 0)),
  record: () => JSON.parse(new Answer(bytes.record, 0).str()),
  changes: () => changesOf(new Answer(bytes.changes, 0)),
};
assert.deepEqual(ours.report(), swb.report());
assert.deepEqual(ours.record(), swb.record());
assert.deepEqual(ours.changes(), swb.changes());
assert.ok(swb.report().diagnostics.length >= 3);

const policy = { maxIntentBytes: 1024, userIntent: "redact", unknownFields: "keep", invocationKey: table.keys.invocation };
const tasks = {
  "Report, serde-wasm-bindgen": () => swb.report(),
  "Report, compact answer": ours.report,
  "AuditRecord, serde-wasm-bindgen": () => swb.record(),
  "AuditRecord, JSON answer": ours.record,
  "changes, serde-wasm-bindgen": () => swb.changes(),
  "changes, compact answer": ours.changes,
  "policy in, serde-wasm-bindgen": () => swb.options(policy),
  "policy in, tape": () => { writer.begin(0, 0, 0); writer.options(policy); return writer.v; },
};

/** Each task's median ns over 5 rounds, the tasks interleaved in a different order each round. */
async function timed(tasks) {
  const rounds = {};
  for (let round = 0; round < 5; round++) {
    const bench = new Bench({ time: 150, warmupTime: 50 });
    const entries = Object.entries(tasks);
    for (let i = 0; i < entries.length; i++) {
      const [name, task] = entries[(i + round) % entries.length];
      bench.add(name, () => { for (let n = 0; n < 100; n++) task(); });
    }
    await bench.run();
    for (const task of bench.tasks) (rounds[task.name] ??= []).push((task.result.latency.p50 * 1e6) / 100);
  }
  return (name) => rounds[name].sort((a, b) => a - b)[2];
}

const median = await timed(tasks);
console.log("median ns per conversion (5 rounds)\n");
for (const what of ["Report", "AuditRecord", "changes", "policy in"]) {
  const [slow, fast] = Object.keys(tasks).filter((name) => name.startsWith(`${what},`)).map(median);
  console.log(`${what.padEnd(12)} serde-wasm-bindgen ${slow.toFixed(0).padStart(6)}  package ${fast.toFixed(0).padStart(6)}  ratio ${(slow / fast).toFixed(1)}×`);
}

// --- The object API's calls, whole ------------------------------------------

const invocation = sep.params._meta[table.keys.invocation];
const bare = { ...sep, params: { name: sep.params.name, arguments: sep.params.arguments } };
const calls = {
  validate: [() => api.validate(sep), () => swb.validateCall(sep)],
  sanitize: [() => api.sanitize(sep), () => swb.sanitizeCall(sep)],
  stampInitiator: [() => api.stampInitiator(sep), () => swb.stampInitiatorCall(sep)],
  attachInvocation: [() => api.attachInvocation(bare, invocation), () => swb.attachInvocationCall(bare, invocation)],
  auditRecord: [() => api.auditRecord(sep), () => swb.auditRecordCall(sep)],
};
const whole = {};
for (const [name, [ours, theirs]] of Object.entries(calls)) {
  assert.deepEqual(ours(), theirs(), `${name}: the two forms differ`);
  whole[`${name}, package`] = ours;
  whole[`${name}, serde-wasm-bindgen`] = theirs;
}
const callMedian = await timed(whole);
console.log("\nthe SEP example, median ns per call (5 rounds): serde-wasm-bindgen in and out / the package's tape\n");
for (const name of Object.keys(calls)) {
  const [fast, slow] = [`${name}, package`, `${name}, serde-wasm-bindgen`].map(callMedian);
  console.log(`${name.padEnd(17)} serde-wasm-bindgen ${slow.toFixed(0).padStart(6)}  package ${fast.toFixed(0).padStart(6)}  ratio ${(slow / fast).toFixed(2)}×`);
}
