// Same bytes, same reading: the wire filter against what the servers we
// support read from the very request it let through. Every request of the
// conformance vectors and a seeded run of hostile bodies goes through
// `createFilter(options)(body, { headers })` as a gateway hands it; what it
// forwards is POSTed, with the same headers, to each stack of
// js-tests/differential/stacks.mjs (express.json(), the TS SDK 1.x and 2.x
// transports, the Python `mcp` SDK's and FastMCP's apps), and what each stack
// read is compared with what the filter checked: the forwarded body as
// `JSON.parse` reads it (losslessly, for Python, which keeps
// 12345678901234567890 and 1.0 apart), and at the places the rules read (the
// envelope and the ui entry, under every key the filter reads) with what the
// filter's record says. A body the filter refuses is sent nowhere; one whose
// headers would have a server decode it otherwise must be refused with 415
// (the header contract, WIRE-2).
//
// Where a Python app is handed less than its transport read (its models drop
// a `_meta` that fails validation, or read a request whose id is no integer
// as a notification), the run notes it and goes on: the app reads nothing the
// filter did not check. DIFFERENTIAL_STRICT=1 makes those notes failures.
// DIFFERENTIAL_SEED and DIFFERENTIAL_COUNT pick other hostile bodies;
// DIFFERENTIAL_VERBOSE=1 prints what the filter and each stack did with each body.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { AI_INVOCATION_KEY, UI_KEY, auditRecord } from "mcp-provenance";
import { createFilter } from "mcp-provenance/gateway";

import { BASE_HEADERS, hostileCases, targetedCases, vectorCases } from "./differential/bodies.mjs";
import { member, tagJsonText, untag } from "./differential/lossless.mjs";
import { closeClient, post, startNodeStacks, startPythonStacks, takeNodeCaptures } from "./differential/stacks.mjs";

const SEED = Number(process.env.DIFFERENTIAL_SEED ?? 0x5eed);
const COUNT = Number(process.env.DIFFERENTIAL_COUNT ?? 400);
const CONCURRENCY = 2;
/** How long a Python stack is given to hand a notification to its app, after its 202. */
const NOTIFICATION_WAIT_MS = 150;
const VERBOSE = process.env.DIFFERENTIAL_VERBOSE === "1";
const STRICT = process.env.DIFFERENTIAL_STRICT === "1";

const NODE_STACKS = ["express.json", "sdk1", "sdk2", "sdk2-handler"];
const PYTHON_STACKS = ["mcp", "fastmcp"];
/** The stacks that read a Node endpoint: express.json() and SDK 1.x share one app. */
const NODE_ENDPOINTS = { sdk1: ["express.json", "sdk1"], sdk2: ["sdk2"], "sdk2-handler": ["sdk2-handler"] };
/** The stacks whose messages may go through the SDKs' zod schemas, which drop `__proto__` members (a guard, not a misreading). */
const ZOD = new Set(["sdk1", "sdk2", "sdk2-handler"]);

let node;
let python;
const cases = [...targetedCases(), ...vectorCases(), ...hostileCases(SEED, COUNT)];
/** check -> { sent, read, refused, statuses, failures }: a stack's, or the filter's own ("headers", "records"), or the harness's ("run"). */
const results = Object.fromEntries([...NODE_STACKS, ...PYTHON_STACKS, "headers", "records", "run"].map((name) => [name, { sent: 0, read: 0, refused: 0, statuses: {}, failures: [] }]));
const outcomes = { cases: cases.length, forwarded: 0, refused: 0, badOptions: 0, bySource: {} };
let ran;

before(async () => {
  node = await startNodeStacks();
  python = await startPythonStacks();
});

after(async () => {
  node?.close();
  await python?.close();
  closeClient();
});

/** Header names lower-cased, a repeated one as an array: Node's `req.headers`, as a gateway passes it. */
function nodeHeaders(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

/** A short, printable account of a body. */
function excerpt(bytes) {
  const text = bytes.toString("utf8");
  return JSON.stringify(text.length > 400 ? `${text.slice(0, 400)}…` : text);
}

/** stack -> what it read less of than the filter checked -> { count, first case } */
const notes = {};
function note(stack, c, what) {
  if (STRICT) return fail(stack, c, what);
  const kinds = (notes[stack] ??= {});
  kinds[what] ??= { count: 0, first: `${c.name}: ${excerpt(c.bytes)}` };
  kinds[what].count++;
}

function fail(stack, c, what) {
  results[stack].failures.push(`${c.name}\n    ${what}\n    body ${excerpt(c.bytes ?? Buffer.from(c.body))}\n    headers ${JSON.stringify(c.headers)}`);
}

/**
 * A message as the SDKs' zod schemas give it: a `__proto__` member is left out of the objects they
 * parse member by member (the message, `params`, `_meta`, `result`, `error`), as a guard against
 * prototype pollution; deeper values are passed on as `JSON.parse` made them.
 */
function zodView(message) {
  const strip = (object) => {
    if (object === null || typeof object !== "object" || Array.isArray(object)) return object;
    const out = {};
    for (const key of Object.keys(object)) if (key !== "__proto__") out[key] = object[key];
    return out;
  };
  if (message === null || typeof message !== "object" || Array.isArray(message)) return message;
  const out = strip(message);
  for (const key of ["params", "result", "error"]) {
    if (out[key] && typeof out[key] === "object" && !Array.isArray(out[key])) {
      out[key] = strip(out[key]);
      if (out[key]._meta && typeof out[key]._meta === "object" && !Array.isArray(out[key]._meta)) out[key]._meta = strip(out[key]._meta);
    }
  }
  return out;
}

/**
 * The message with every number finite: `JSON.parse` reads 1e400 as Infinity, which the object
 * API (rightly) refuses as no JSON value, where the filter read the JSON number it is. No rule
 * reads a number's value, only that it is a number.
 */
function finite(value) {
  if (typeof value === "number") return Number.isFinite(value) ? value : 0;
  if (Array.isArray(value)) return value.map(finite);
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const key of Object.keys(value)) Object.defineProperty(out, key, { value: finite(value[key]), enumerable: true, writable: true, configurable: true });
  return out;
}

/** The first key of `keys` that `_meta` holds: the envelope (or ui entry) the filter's record reads. */
function firstKey(meta, keys) {
  return meta && typeof meta === "object" ? keys.find((key) => Object.hasOwn(meta, key)) : undefined;
}

/**
 * The ui entries of `_meta` under `keys` that hold an `initiator`, in order: the filter's record
 * reads the first, and none when their values differ (a string's text, anything else alike).
 */
function initiatorKeys(meta, keys) {
  const holds = (entry) => entry !== null && typeof entry === "object" && !Array.isArray(entry) && Object.hasOwn(entry, "initiator");
  return meta && typeof meta === "object" ? keys.filter((key) => Object.hasOwn(meta, key) && holds(meta[key])) : [];
}

/** What the filter's record would say of a message: `auditRecord` of the object API, under the keys and policy the filter read it with. */
function expectedRecord(message, options) {
  const meta = message?.params?._meta;
  const invocationKey = firstKey(meta, [AI_INVOCATION_KEY, ...(options?.invocationKeys ?? [])]);
  const holding = initiatorKeys(meta, [UI_KEY, ...(options?.uiKeys ?? [])]);
  const uiKey = holding[0];
  const text = (key) => (typeof meta[key].initiator === "string" ? meta[key].initiator : null);
  const disagree = holding.some((key) => text(key) !== text(uiKey));
  const policy = { ...(options?.policy ?? {}), ...(invocationKey && { invocationKey }), ...(uiKey && { uiKey }) };
  try {
    const record = auditRecord(finite(message), { policy });
    const hostAttested = disagree ? Object.fromEntries(Object.entries(record.hostAttested).filter(([name]) => name !== "initiator")) : record.hostAttested;
    return { method: record.method, tool: record.tool, clientAsserted: record.clientAsserted, hostAttested };
  } catch (error) {
    return { error: error.code ?? String(error) };
  }
}
const recordOf = (record) => ({ method: record.method, tool: record.tool, clientAsserted: record.clientAsserted, hostAttested: record.hostAttested });

/**
 * What of a record the message it describes decides: `userIntentRedacted` also says whether the
 * filter changed the intent on its way, which the forwarded message no longer shows.
 */
function decided(record) {
  if (!record || record.error) return record;
  const { userIntentRedacted, ...asserted } = record.clientAsserted ?? {};
  return { ...record, clientAsserted: asserted };
}

/** A value as one short line. */
function brief(value) {
  let text;
  try {
    text = JSON.stringify(value, (key, v) => (typeof v === "bigint" ? `${v}n` : v === undefined ? "(undefined)" : Number.isNaN(v) ? "NaN" : v === Infinity ? "Infinity" : v));
  } catch {
    text = String(value);
  }
  text ??= "(undefined)";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** Where two values first differ (a path and both values there), or undefined when they are the same. */
function difference(actual, expected, path = "") {
  try {
    assert.deepStrictEqual(actual, expected);
    return undefined;
  } catch {
    // Walk down while both are containers of the same shape.
  }
  const container = (v) => v !== null && typeof v === "object";
  if (container(actual) && container(expected) && Array.isArray(actual) === Array.isArray(expected)) {
    const keys = [...new Set([...Object.keys(actual), ...Object.keys(expected)])];
    for (const key of keys) {
      if (!Object.hasOwn(actual, key)) return `at ${path}/${key}: missing, expected ${brief(expected[key])}`;
      if (!Object.hasOwn(expected, key)) return `at ${path}/${key}: ${brief(actual[key])}, expected nothing`;
      const found = difference(actual[key], expected[key], `${path}/${key}`);
      if (found) return found;
    }
    if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected)) return `at ${path || "/"}: another prototype`;
  }
  return `at ${path || "/"}: ${brief(actual)}, expected ${brief(expected)}`;
}

/** Compares, recording a failure (where the two first differ) instead of throwing. */
function same(stack, c, what, actual, expected) {
  const found = difference(actual, expected);
  if (found) fail(stack, c, `${what}: ${found}`);
  return !found;
}

/** The envelope and ui entries of a tagged `_meta`, under every key the filter reads. */
function taggedEntries(meta, options) {
  const keys = [AI_INVOCATION_KEY, UI_KEY, ...(options?.invocationKeys ?? []), ...(options?.uiKeys ?? [])];
  return Object.fromEntries(keys.map((key) => [key, member(meta, key) ?? null]));
}

async function runCase(c, index) {
  const bytes = Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body);
  c.bytes = bytes;
  const source = (outcomes.bySource[c.source] ??= { cases: 0, forwarded: 0, refused: 0 });
  source.cases++;
  let filter;
  try {
    filter = createFilter(c.options);
  } catch (error) {
    // Vectors of bad options: no filter, nothing to send.
    assert.equal(typeof error.code, "string", `${c.name}: createFilter threw ${error}`);
    outcomes.badOptions++;
    return;
  }
  const out = filter(bytes, { ...c.context, headers: nodeHeaders(c.headers) });
  if (c.refuse) {
    const reject = "reject" in out ? JSON.parse(out.reject || "null") : undefined;
    const code = reject?.error?.data?.code;
    if (!("reject" in out) || out.status !== 415 || !c.refuse.includes(code)) {
      fail("headers", c, `expected a 415 refusal (${c.refuse.join(" or ")}), got ${"reject" in out ? `${out.status} ${code}` : "a forward"}`);
    } else results.headers.read++;
    results.headers.sent++;
  }
  if (VERBOSE && "reject" in out) console.log(`${c.name}\n  filter: ${out.status} ${out.reject.slice(0, 160)}`);
  if ("reject" in out) {
    outcomes.refused++;
    source.refused++;
    return;
  }
  outcomes.forwarded++;
  source.forwarded++;

  const forwarded = Buffer.from(out.forward);
  const text = forwarded.toString("utf8");
  const reference = JSON.parse(text);
  const tagged = tagJsonText(text);
  const messages = Array.isArray(reference) ? reference : [reference];
  const taggedMessages = tagged[0] === "a" ? tagged[1] : [tagged];
  const kept = out.accounts.filter((account) => JSON.parse(account).refused === undefined);
  const accounts = kept.map((account) => JSON.parse(account));
  // The filter's record against the object API on what it forwarded: the record is of these
  // bytes. Its request id as the account's JSON text writes it (12345678901234567890 whole)
  // against the id in the forwarded bytes, both read losslessly.
  accounts.forEach((account, i) => {
    if (!account.record) return;
    results.records.sent++;
    const recorded = same("records", c, `message ${i}: the filter's record and auditRecord of the forwarded message`, decided(recordOf(account.record)), decided(expectedRecord(messages[i], c.options)));
    const requestId = member(member(tagJsonText(kept[i]), "record"), "requestId");
    const idRead = requestId === undefined || same("records", c, `message ${i}: the record's requestId and the id forwarded`, requestId, member(taggedMessages[i], "id"));
    if (recorded && idRead) results.records.read++;
  });
  const recordFor = (i) => (accounts[i]?.record ? decided(recordOf(accounts[i].record)) : undefined);
  const onlyNotifications = messages.every((m) => m === null || typeof m !== "object" || !("id" in m) || typeof m.method !== "string");

  const id = `d${index}-${Math.random().toString(36).slice(2, 10)}`;
  const headers = { ...BASE_HEADERS, ...c.headers, "x-diff-id": id };
  const nodeSent = Object.entries(node.urls).map(async ([endpoint, url]) => [endpoint, await post(url, forwarded, headers)]);
  const pythonSent = Object.entries(python.urls).map(async ([name, url]) => [name, await post(url, forwarded, headers)]);
  const replies = Object.fromEntries(await Promise.all([...nodeSent, ...pythonSent]));

  // The Node stacks.
  const nodeCaptures = takeNodeCaptures(id);
  if (VERBOSE) console.log(`${c.name}\n  filter: forwards ${accounts.length} of ${out.accounts.length}; ${Object.entries(replies).map(([name, reply]) => `${name} ${reply.status}`).join(", ")}; Node read by ${[...new Set(nodeCaptures.map((capture) => capture.stack))].join(", ") || "none"}`);
  for (const [endpoint, stacks] of Object.entries(NODE_ENDPOINTS)) {
    for (const stack of stacks) {
      const result = results[stack];
      result.sent++;
      const status = replies[endpoint].status;
      result.statuses[status] = (result.statuses[status] ?? 0) + 1;
      const read = nodeCaptures.filter((capture) => capture.stack === stack).map((capture) => capture.value);
      if (read.length === 0) {
        result.refused++;
        continue;
      }
      result.read++;
      if (stack === "express.json") {
        same(stack, c, "req.body against JSON.parse of the forwarded body", read[0], reference);
        messages.forEach((m, i) => {
          const mine = Array.isArray(read[0]) ? read[0][i] : read[0];
          if (recordFor(i)) same(stack, c, `message ${i}: the filter's record and auditRecord of what express.json() read`, decided(expectedRecord(mine, c.options)), recordFor(i));
        });
        continue;
      }
      // A message the SDK's schemas parsed, or (the 2026-07-28 route) the very value JSON.parse made.
      const expected = messages.map((m, i) => (ZOD.has(stack) && difference(read[i], m) !== undefined ? zodView(m) : m));
      if (same(stack, c, "the messages onmessage was handed against JSON.parse of the forwarded body", read, expected)) {
        read.forEach((m, i) => {
          if (recordFor(i)) same(stack, c, `message ${i}: the filter's record and auditRecord of what the transport read`, decided(expectedRecord(m, c.options)), recordFor(i));
        });
      }
    }
  }

  // The Python stacks.
  await Promise.all(PYTHON_STACKS.map(async (stack) => {
    const result = results[stack];
    result.sent++;
    const status = replies[stack].status;
    result.statuses[status] = (result.statuses[status] ?? 0) + 1;
    const captures = await python.captures(stack, id, onlyNotifications ? NOTIFICATION_WAIT_MS : 0);
    const transport = captures.filter((capture) => capture.stack === stack && capture.level === "transport").map((capture) => capture.value);
    const app = captures.filter((capture) => capture.stack === stack && capture.level === "app").map((capture) => capture.value);
    if (transport.length === 0) {
      result.refused++;
      return;
    }
    result.read++;
    if (!same(stack, c, "what the transport parsed against the forwarded body read losslessly", transport, [tagged])) return;
    // What the app's middleware was handed: one message (Python's transports take no batch).
    // Where the SDK's models dropped something the transport read (a `_meta` that fails
    // validation becomes `ctx.meta = None`; a request whose id is no integer becomes a
    // notification), the app reads less than the filter checked: noted, not a misreading. Any
    // value it reads must be the one the filter checked.
    if (app.length > 0 && taggedMessages.length === 1) {
      const message = taggedMessages[0];
      const params = member(message, "params");
      const meta = member(params, "_meta");
      for (const seen of app) {
        same(stack, c, "the method the app was handed", member(seen, "method"), member(message, "method"));
        const seenMeta = member(seen, "meta") ?? null;
        if (seenMeta === null && meta !== undefined) note(stack, c, "the app was handed no _meta where the filter read one");
        else same(stack, c, "the envelope and ui entries of the _meta the app was handed", taggedEntries(seenMeta, c.options), taggedEntries(meta, c.options));
        const seenId = member(seen, "id") ?? null;
        if (seenId === null && member(message, "id") !== undefined) note(stack, c, "the app was handed a request the filter read with an id as a notification");
        else same(stack, c, "the request id the app was handed", seenId, member(message, "id") ?? null);
        if (stack === "mcp") same(stack, c, "the params the app was handed", member(seen, "params") ?? null, params ?? null);
        if (recordFor(0) && seenMeta !== null) {
          const js = untag(message);
          const asSeen = { ...js, params: { ...(js.params ?? {}), _meta: untag(seenMeta) } };
          same(stack, c, "the filter's record and auditRecord of the _meta the app was handed", decided(expectedRecord(asSeen, c.options)), recordFor(0));
        }
      }
    }
  }));
}

/** Fails with the first disagreements of a check, each with its body and headers. */
function noFailures(name) {
  const { failures } = results[name];
  if (failures.length) assert.fail(`${failures.length} disagreements; the first:\n\n${failures.slice(0, 8).join("\n\n")}`);
}

test("every body goes through the filter and, when it forwards, to every stack", { timeout: 600_000 }, async () => {
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      try {
        await runCase(cases[index], index);
      } catch (error) {
        // A case the harness could not run is a failure of its own, not the end of the run.
        fail("run", cases[index], `the case threw: ${error?.stack ?? error}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  ran = Date.now() - started;
  const lines = [`${cases.length} bodies (seed ${SEED}): ${outcomes.forwarded} forwarded, ${outcomes.refused} refused, ${outcomes.badOptions} with options the filter refuses; ${ran} ms`];
  for (const [source, counts] of Object.entries(outcomes.bySource)) lines.push(`  ${source}: ${counts.cases} bodies, ${counts.forwarded} forwarded, ${counts.refused} refused`);
  for (const [stack, result] of Object.entries(results)) {
    lines.push(`  ${stack}: ${result.sent} sent, ${result.read} read${result.refused ? `, ${result.refused} refused by the stack` : ""}${Object.keys(result.statuses).length ? ` (HTTP ${JSON.stringify(result.statuses)})` : ""}, ${result.failures.length} disagreements`);
  }
  for (const [stack, kinds] of Object.entries(notes)) {
    for (const [what, { count, first }] of Object.entries(kinds)) lines.push(`  note, ${stack}: ${what} (${count} times; the first: ${first.slice(0, 300)})`);
  }
  console.log(lines.join("\n"));
  assert.ok(outcomes.forwarded > 100, "most bodies are forwarded: the run compares something");
  noFailures("run");
});

test("a body whose headers a server would decode otherwise is refused with 415", () => {
  assert.ok(ran !== undefined, "the run completed");
  assert.ok(results.headers.sent >= 10, "the run had header cases");
  noFailures("headers");
});

test("the filter's record is what auditRecord says of the message it forwarded", () => {
  assert.ok(ran !== undefined, "the run completed");
  noFailures("records");
});

for (const stack of [...NODE_STACKS, ...PYTHON_STACKS]) {
  test(`${stack} reads the message the filter checked`, () => {
    assert.ok(ran !== undefined, "the run completed");
    assert.ok(results[stack].read > 50, `${stack} read most forwarded bodies (${results[stack].read} of ${results[stack].sent})`);
    noFailures(stack);
  });
}
