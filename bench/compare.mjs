// What a call costs against what a JS user would pick instead, in one
// process: the package's functions on the SEP-2817 example request of
// docs/reference.md and on the demo's hostile request, beside zod 4
// (`safeParse`) and ajv 8 (a compiled schema), each of the envelope alone
// and of the message down to it, the hand-written JS of
// bench/handwritten.mjs, and `JSON.parse(JSON.stringify(msg))`. Prints
// medians per call and the ratios the performance goals are stated in.
// It asserts nothing about time.
//
//   make bench        (or: make build && node bench/compare.mjs [--rounds N])

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";

import Ajv from "ajv";
import { Bench } from "tinybench";
import { z } from "zod";

import * as api from "../pkg/dist/index.mjs";
import * as hand from "./handwritten.mjs";
import { sep } from "./inputs.mjs";

const KEY = api.AI_INVOCATION_KEY;
const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1]) || 5;

// --- The two requests -------------------------------------------------------

const transcript = JSON.parse(readFileSync(new URL("../examples/prototype/data/transcript.json", import.meta.url), "utf8"));
const turn = transcript.turns.find((t) => t.pad);
const hostile = {
  jsonrpc: "2.0",
  id: 9,
  method: "tools/call",
  params: {
    name: turn.calls[0].tool,
    arguments: turn.calls[0].arguments,
    _meta: {
      [KEY]: {
        invocationReason: { text: turn.calls[0].reason },
        model: { name: turn.model },
        userIntent: { text: turn.user + "A".repeat(turn.pad) },
        turnId: "0b8e4f7a-3c1d-4e2f-9a6b-5d7c8e9f0a1b",
      },
    },
  },
};

// --- What a user would pick instead -----------------------------------------

const envelopeZod = z.object({
  invocationReason: z.object({ text: z.string() }).optional(),
  model: z.object({ name: z.string() }).optional(),
  userIntent: z.object({ text: z.string().optional(), redacted: z.boolean().optional() }).optional(),
  turnId: z.string().optional(),
});
const messageZod = z.looseObject({
  method: z.string(),
  params: z.looseObject({
    _meta: z.looseObject({
      [KEY]: envelopeZod.optional(),
      [api.UI_KEY]: z.looseObject({ initiator: z.enum(["app", "model", "user", "host"]).optional() }).optional(),
    }).optional(),
  }).optional(),
});

const text = { type: "string" };
const envelopeSchema = {
  type: "object",
  properties: {
    invocationReason: { type: "object", properties: { text }, required: ["text"] },
    model: { type: "object", properties: { name: text }, required: ["name"] },
    userIntent: { type: "object", properties: { text, redacted: { type: "boolean" } } },
    turnId: text,
  },
};
const ajv = new Ajv();
const envelopeAjv = ajv.compile(envelopeSchema);
const messageAjv = ajv.compile({
  type: "object",
  required: ["method"],
  properties: {
    method: text,
    params: {
      type: "object",
      properties: {
        _meta: {
          type: "object",
          properties: {
            [KEY]: envelopeSchema,
            [api.UI_KEY]: { type: "object", properties: { initiator: { enum: ["app", "model", "user", "host"] } } },
          },
        },
      },
    },
  },
});

// --- The hand-written JS gives the package's outputs --------------------------

const vectors = readdirSync(new URL("../conformance/", import.meta.url))
  .filter((name) => name.endsWith(".json"))
  .flatMap((name) => JSON.parse(readFileSync(new URL(`../conformance/${name}`, import.meta.url), "utf8")))
  .filter((v) => ["validate", "sanitize", "stampInitiator"].includes(v.op) && v.options === undefined && (v.initiator ?? "app") === "app");
const outcome = (call) => { try { return call(); } catch (error) { return { error: error.code }; } };
for (const v of vectors) {
  assert.deepStrictEqual(outcome(() => hand[v.op](v.input)), outcome(() => api[v.op](v.input)), `hand-written JS and the package differ on ${v.id}`);
}
for (const message of [sep, hostile]) {
  for (const op of ["validate", "sanitize", "stampInitiator"]) assert.deepStrictEqual(hand[op](message), api[op](message));
}
for (const message of [sep, hostile]) {
  assert.equal(envelopeZod.safeParse(message.params._meta[KEY]).success, true);
  assert.equal(messageZod.safeParse(message).success, true);
  assert.equal(envelopeAjv(message.params._meta[KEY]), true);
  assert.equal(messageAjv(message), true);
}

// --- Timing -----------------------------------------------------------------

// Each task makes BATCH calls, so the timer's own cost does not swamp a
// call that takes a fraction of a microsecond.
const BATCH = 100;
let sink = 0;
const invocation = sep.params._meta[KEY];
const bare = { ...sep, params: { name: sep.params.name, arguments: sep.params.arguments } };

function tasks(message) {
  return {
    "validate": () => api.validate(message).valid,
    "sanitize": () => api.sanitize(message).changes.length,
    "stampInitiator": () => api.stampInitiator(message).params,
    "attachInvocation": () => api.attachInvocation(bare, invocation).params,
    "auditRecord": () => api.auditRecord(message).method,
    "validate + sanitize + stampInitiator": () => {
      const report = api.validate(message);
      return report.valid && api.stampInitiator(api.sanitize(message).message).params;
    },
    "hand-written validate": () => hand.validate(message).valid,
    "hand-written validate + sanitize + stampInitiator": () => {
      const report = hand.validate(message);
      return report.valid && hand.stampInitiator(hand.sanitize(message).message).params;
    },
    "zod safeParse, envelope": () => envelopeZod.safeParse(message.params._meta[KEY]).success,
    "zod safeParse, message": () => messageZod.safeParse(message).success,
    "ajv validate, envelope": () => envelopeAjv(message.params._meta[KEY]),
    "ajv validate, message": () => messageAjv(message),
    "JSON.parse(JSON.stringify(msg))": () => JSON.parse(JSON.stringify(message)).id,
  };
}

async function measure(message) {
  const medians = {};
  for (let round = 0; round < rounds; round++) {
    const bench = new Bench({ time: 150, warmupTime: 50 });
    const entries = Object.entries(tasks(message));
    // A different order each round, so no task always meets the same JIT state.
    for (let i = 0; i < entries.length; i++) {
      const [name, call] = entries[(i + round) % entries.length];
      bench.add(name, () => { for (let n = 0; n < BATCH; n++) sink ^= call() ? 1 : 0; }, { async: false });
    }
    await bench.run();
    for (const task of bench.tasks) (medians[task.name] ??= []).push((task.result.latency.p50 * 1e6) / BATCH);
  }
  return Object.fromEntries(Object.entries(medians).map(([name, values]) => [name, values.sort((a, b) => a - b)[values.length >> 1]]));
}

const ns = (value) => (value >= 10_000 ? `${(value / 1000).toFixed(1)} µs` : `${value.toFixed(0)} ns`);
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;

console.log(`hand-written JS agrees with the package on ${vectors.length} vectors and both requests`);
console.log(`${rounds} rounds; median ns per call\n`);
const results = {};
for (const [name, message] of [["SEP example", sep], ["hostile", hostile]]) results[name] = await measure(message);
const names = Object.keys(results["SEP example"]);
const width = Math.max(...names.map((n) => n.length));
console.log(`${"".padEnd(width)}  ${"SEP example".padStart(12)}  ${"hostile".padStart(12)}`);
for (const name of names) console.log(`${name.padEnd(width)}  ${ns(results["SEP example"][name]).padStart(12)}  ${ns(results.hostile[name]).padStart(12)}`);

console.log("\nratios (SEP example; hostile in brackets)");
const line = (label, a, b) => console.log(`  ${label.padEnd(58)} ${ratio(results["SEP example"][a], results["SEP example"][b]).padStart(8)}  (${ratio(results.hostile[a], results.hostile[b])})`);
line("validate / zod safeParse of the envelope (goal <= 3)", "validate", "zod safeParse, envelope");
line("validate / zod safeParse of the message", "validate", "zod safeParse, message");
line("validate / ajv validate of the envelope", "validate", "ajv validate, envelope");
line("validate / hand-written validate", "validate", "hand-written validate");
line("pipeline / JSON.parse(JSON.stringify)", "validate + sanitize + stampInitiator", "JSON.parse(JSON.stringify(msg))");
line("pipeline / hand-written pipeline (goal <= 2.0)", "validate + sanitize + stampInitiator", "hand-written validate + sanitize + stampInitiator");
if (sink === 2) console.log(""); // keeps the results alive
