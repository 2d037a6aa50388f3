// What validate + sanitize + stampInitiator cost as the message grows where
// the library must not look (arguments) and where hostile text may be huge
// (userIntent.text); then each function alone, as every string the call
// reads (intent, turnId, legacy argument) grows from 3 KB to 50 MB. Prints
// medians and ratios measured in one run; it asserts nothing about time.
// Run it with `node bench/envelope-cost.mjs` after `make build`.
import { performance } from "node:perf_hooks";

import * as api from "../pkg/dist/index.mjs";

const KEY = api.AI_INVOCATION_KEY;

/** A flat string of `bytes` ASCII bytes (not a lazy rope). */
const text = (bytes) => Buffer.alloc(bytes, "x").toString();

function request({ argumentBytes, intentBytes }) {
  const rows = [];
  for (let size = 0; size < argumentBytes; size += 100) rows.push({ id: rows.length, name: text(80) });
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "execute_query",
      arguments: argumentBytes <= 100 ? { query: text(argumentBytes - 12) } : { rows },
      _meta: {
        [KEY]: {
          invocationReason: { text: "The user asked for employee rows." },
          model: { name: "example-model" },
          userIntent: { text: text(intentBytes) },
          turnId: "2f4f0c9e-8d72-4c66-9c6f-3f7f3e6a1c9f",
        },
      },
    },
  };
}

/** One validate + sanitize + stampInitiator, in milliseconds. */
function once(message) {
  const start = performance.now();
  api.validate(message);
  api.sanitize(message);
  api.stampInitiator(message);
  return performance.now() - start;
}

const median = (times) => times.sort((a, b) => a - b)[Math.floor(times.length / 2)];

const cases = [
  ["arguments", { argumentBytes: 100, intentBytes: 20 }, { argumentBytes: 1_000_000, intentBytes: 20 }, "100 B", "1 MB"],
  ["userIntent.text", { argumentBytes: 100, intentBytes: 3_000 }, { argumentBytes: 100, intentBytes: 50_000_000 }, "3 KB", "50 MB"],
];

for (const [what, small, large, smallName, largeName] of cases) {
  const messages = [request(small), request(large)];
  const times = [[], []];
  // Interleaved, so both sizes meet the same JIT state and collector.
  for (let round = 0; round < 3000; round++) {
    for (const i of [0, 1]) {
      const t = once(messages[i]);
      if (round >= 300) times[i].push(t);
    }
  }
  const [ta, tb] = times.map(median);
  console.log(`${what}: ${smallName} ${(ta * 1000).toFixed(1)} µs, ${largeName} ${(tb * 1000).toFixed(1)} µs, ratio ${(tb / ta).toFixed(2)}`);
}

/** A request whose every string a function may read is `text`. */
function everywhere(text) {
  return {
    jsonrpc: "2.0", id: 1, method: "tools/call",
    params: { name: "q", arguments: { user_query: text }, _meta: { [KEY]: { userIntent: { text }, turnId: text } } },
  };
}

const functions = {
  validate: (m) => api.validate(m),
  "validate (request)": (m) => api.validate({ jsonrpc: "2.0", id: 1, result: { _meta: { [KEY]: { turnId: m.params._meta[KEY].turnId } } } }, { request: m }),
  sanitize: (m) => api.sanitize(m),
  stampInitiator: (m) => api.stampInitiator(m),
  clearInitiator: (m) => api.clearInitiator(m),
  attachInvocation: (m) => api.attachInvocation({ method: "tools/call" }, m.params._meta[KEY]),
  echoTurnId: (m) => api.echoTurnId(m, { jsonrpc: "2.0", id: 1, result: {} }),
  auditRecord: (m) => api.auditRecord(m),
  liftLegacyArguments: (m) => api.liftLegacyArguments(m, { remove: true }),
};
const sizes = [everywhere(text(3_000)), everywhere(text(50_000_000))];
console.log("\neach function, every string it reads 3 KB or 50 MB:");
for (const [name, call] of Object.entries(functions)) {
  const times = [[], []];
  for (let round = 0; round < 600; round++) {
    for (const i of [0, 1]) {
      const start = performance.now();
      call(sizes[i]);
      if (round >= 100) times[i].push(performance.now() - start);
    }
  }
  const [ta, tb] = times.map(median);
  console.log(`  ${name.padEnd(20)} ${(ta * 1000).toFixed(1).padStart(7)} µs ${(tb * 1000).toFixed(1).padStart(7)} µs  ratio ${(tb / ta).toFixed(2)}`);
}
