// Same bytes, same reading, on the way back: a hostile MCP server's answers
// as the clients we support read them, with the middleware in front and
// without it. The middleware's promise (WIRE-7, WIRE-8): wherever a client
// takes a result from an answer, the middleware echoed that result (its
// `_meta["io.modelcontextprotocol/aiInvocation"]` is `{"turnId": <the turnId
// the client sent with that call>}`, or absent: never the server's own
// envelope) or refused it (the client got the middleware's JSON-RPC error).
//
// - The server (differential/hostile.py) answers `initialize` with a session
//   it issues, and each `tools/call` with the answer scripted for the tool's
//   name (differential/answers.mjs: the answers of conformance/exchange.json
//   that carry results, and a hostile generator of framings, ids, media types,
//   charsets, encodings, events cut at every line ending, statuses, streams
//   resumed with Last-Event-ID), each result carrying the server's whole
//   envelope.
// - The fronts: the server bare; behind `mcp_provenance.asgi.ProvenanceMiddleware`
//   (uvicorn, the venv of `make python-wheel`); and behind the npm package's
//   `provenanceMiddleware` (node:http, passing each request on to the bare
//   server and its answer back as it comes: an answer uvicorn itself will not
//   send whole, a `Content-Length` its body belies, fails there).
// - The clients, each in a session of its own per case, calling the case's
//   tool with the SEP-2817 envelope `{"turnId":"t-<case>"}` (`t-<case>-<n>` for
//   the n-th call of a case of several, one after the other or all at once):
//   the TypeScript SDK 1.x (`@modelcontextprotocol/sdk` Client and
//   StreamableHTTPClientTransport), its 2.x client (`@modelcontextprotocol/client`),
//   and the Python `mcp` SDK's (differential/python_client.py,
//   `mcp.client.streamable_http`).
//
// The test prints a table (case × front × client: what each took) and holds
// every result taken through a middleware to the promise. Without the
// middleware some client must take the server's envelope (the hole the
// middleware closes), and through each front each client must take a result
// somewhere (the test cannot pass by every client failing).
// DIFFERENTIAL_BACK_CASES=<regexp> runs the cases it matches;
// DIFFERENTIAL_BACK_VERBOSE=1 prints each client's error too.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";

import { KEY, SERVER_ENVELOPE, hostileAnswers, vectorAnswers } from "./differential/answers.mjs";
import { PYTHON } from "./differential/stacks.mjs";

const ROOT = new URL("../", import.meta.url);
const HOSTILE = fileURLToPath(new URL("./differential/hostile.py", import.meta.url));
const PYTHON_CLIENT = fileURLToPath(new URL("./differential/python_client.py", import.meta.url));
/** Every wait is bounded: a call, a whole client session, the servers' start, the whole run. */
const CALL_MS = 2000;
const SESSION_MS = 10_000;
const START_MS = 60_000;
const RUN_MS = 150_000;
/** Sessions under way at once, per kind of client (TypeScript, Python). */
const CONCURRENCY = 8;
const VERBOSE = process.env.DIFFERENTIAL_BACK_VERBOSE === "1";
const ONLY = process.env.DIFFERENTIAL_BACK_CASES ? new RegExp(process.env.DIFFERENTIAL_BACK_CASES) : undefined;

const CLIENTS = ["py", "ts1", "ts2"];
const cases = [...vectorAnswers(ROOT), ...hostileAnswers()].filter((c) => !ONLY || ONLY.test(c.name));
/** The turnIds a case's client sends, one per call. */
const turnsOf = (c) => (c.calls > 1 ? Array.from({ length: c.calls }, (_, i) => `t-${c.name}-${i + 1}`) : [`t-${c.name}`]);

let hostile;
let nodeFront;
/** front name -> base URL of its MCP endpoint (the case goes in the query). */
const fronts = {};
/** `${front} ${case} ${client}` -> [{ took, meta, error, code, dataCode }] per call. */
const outcomes = new Map();
let ran = false;

/** Starts hostile.py with the cases; its ports, and how to stop it. */
async function startHostile() {
  if (!existsSync(PYTHON)) throw new Error(`the hostile server and the Python client need ${PYTHON}: run \`make python-wheel\` first`);
  const child = spawn(PYTHON, [HOSTILE], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.stdin.write(`${JSON.stringify({ cases: Object.fromEntries(cases.map((c) => [c.name, c])) })}\n`);
  const ports = await new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`the hostile server did not listen in ${START_MS} ms:\n${stderr}`)), START_MS);
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      if (!stdout.includes("\n")) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.split("\n")[0]));
      } catch {
        reject(new Error(`the hostile server said ${JSON.stringify(stdout)}:\n${stderr}`));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the hostile server exited (${code}) before it listened:\n${stderr}`));
    });
  });
  return { ports, stderr: () => stderr, close: () => stop(child) };
}

/** Ends a child we started: its stdin closed, then SIGKILL if it has not gone in 3 s. */
function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin.end();
  });
}

/**
 * The npm package's middleware in front of the bare hostile server: each request passed on to it
 * (the body the middleware forwards, the headers as they came), its answer back as it comes (the
 * status, every header as given, each piece written as it arrives). Undefined when the package
 * is not built.
 */
async function startNodeFront(upstream) {
  const built = new URL("../pkg/dist/http.mjs", import.meta.url);
  if (!existsSync(built)) return undefined;
  const { provenanceMiddleware } = await import(built);
  const provenance = provenanceMiddleware();
  const HOP = new Set(["connection", "keep-alive", "transfer-encoding"]);
  const server = createServer((req, res) => provenance(req, res, () => {
    const headers = [];
    for (let at = 0; at < req.rawHeaders.length; at += 2) {
      if (!HOP.has(req.rawHeaders[at].toLowerCase())) headers.push(req.rawHeaders[at], req.rawHeaders[at + 1]);
    }
    const out = httpRequest(`${upstream}${req.url}`, { method: req.method, headers, timeout: SESSION_MS }, (answer) => {
      const raw = [];
      for (let at = 0; at < answer.rawHeaders.length; at += 2) {
        if (!HOP.has(answer.rawHeaders[at].toLowerCase())) raw.push(answer.rawHeaders[at], answer.rawHeaders[at + 1]);
      }
      res.writeHead(answer.statusCode, raw);
      answer.on("data", (chunk) => res.write(chunk));
      answer.on("end", () => res.end());
      answer.on("error", () => res.destroy());
    });
    out.on("timeout", () => out.destroy());
    out.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on("close", () => out.destroy());
    req.pipe(out);
  }));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

before(async () => {
  hostile = await startHostile();
  fronts.bare = `http://127.0.0.1:${hostile.ports.bare}`;
  fronts.asgi = `http://127.0.0.1:${hostile.ports.asgi}`;
  nodeFront = await startNodeFront(fronts.bare);
  if (nodeFront) fronts.node = `http://127.0.0.1:${nodeFront.address().port}`;
});

after(async () => {
  if (nodeFront) {
    nodeFront.closeAllConnections();
    nodeFront.close();
  }
  await hostile?.close();
});

/** `promise`, or a rejection after `ms`. */
function within(ms, promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** An error as the table reads it: its text, the JSON-RPC code and `data.code` when it has them. */
const failure = (error) => ({ took: false, error: String(error?.message ?? error).slice(0, 300), code: error?.code, dataCode: error?.data?.code });

const sdks = {};
/** A TypeScript client session (`ts1` or `ts2`) calling the case's tool once per turn. */
async function tsSession(kind, url, c) {
  sdks.ts1 ??= {
    Client: (await import("@modelcontextprotocol/sdk/client/index.js")).Client,
    Transport: (await import("@modelcontextprotocol/sdk/client/streamableHttp.js")).StreamableHTTPClientTransport,
    call: (client, params) => client.callTool(params, undefined, { timeout: CALL_MS }),
  };
  sdks.ts2 ??= await import("@modelcontextprotocol/client").then(({ Client, StreamableHTTPClientTransport }) => ({
    Client,
    Transport: StreamableHTTPClientTransport,
    call: (client, params) => client.callTool(params, { timeout: CALL_MS }),
  }));
  const { Client, Transport, call } = sdks[kind];
  const client = new Client({ name: "differential-back", version: "1.0.0" });
  client.onerror = () => {};
  // Reconnections soon, and few: a resumed stream is one of the cases.
  const transport = new Transport(new URL(url), { reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1, maxRetries: 2 } });
  const calls = [];
  try {
    await within(SESSION_MS, client.connect(transport), "connect");
    const one = async (turnId) => {
      try {
        const result = await within(CALL_MS + 1000, call(client, { name: c.name, arguments: {}, _meta: { [KEY]: { turnId } } }), "callTool");
        const meta = result?._meta;
        return { took: true, meta: meta && typeof meta === "object" && Object.hasOwn(meta, KEY) ? meta[KEY] : "(absent)" };
      } catch (error) {
        return failure(error);
      }
    };
    if (c.concurrent) {
      // Each call 100 ms after the one before, all waiting at once.
      calls.push(...(await Promise.all(turnsOf(c).map((turnId, i) => new Promise((resolve) => setTimeout(resolve, 100 * i)).then(() => one(turnId))))));
    } else {
      for (const turnId of turnsOf(c)) calls.push(await one(turnId));
    }
  } catch (error) {
    calls.push(failure(error));
  } finally {
    await within(2000, client.close(), "close").catch(() => {});
  }
  return calls;
}

/** Runs `jobs` (async functions), `limit` at a time. */
async function pool(jobs, limit) {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]();
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** Every case through every front by the Python client, in one process; what each session gave. */
function pythonSessions() {
  const jobs = [];
  for (const [front, base] of Object.entries(fronts)) {
    for (const c of cases) jobs.push({ key: `${front} ${c.name} py`, url: `${base}/mcp?case=${encodeURIComponent(c.name)}`, tool: c.name, turns: turnsOf(c), concurrent: Boolean(c.concurrent) });
  }
  const child = spawn(PYTHON, [PYTHON_CLIENT], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.stdin.write(`${JSON.stringify({ jobs, concurrency: CONCURRENCY, call_seconds: CALL_MS / 1000, job_seconds: SESSION_MS / 1000 })}\n`);
  return new Promise((resolve) => {
    let stdout = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_MS);
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      let end;
      while ((end = stdout.indexOf("\n")) >= 0) {
        const line = stdout.slice(0, end);
        stdout = stdout.slice(end + 1);
        try {
          const { key, calls } = JSON.parse(line);
          if (key) outcomes.set(key, calls);
        } catch {
          // Not ours: said below, if a session has no outcome.
        }
      }
    });
    child.once("exit", () => {
      clearTimeout(timer);
      for (const job of jobs) if (!outcomes.has(job.key)) outcomes.set(job.key, [{ took: false, error: `the Python client gave no outcome: ${stderr.slice(-300)}` }]);
      resolve();
    });
  });
}

/** What a call gave, for the table: echo, none, SERVER (the server's envelope), OTHER, refused, error. */
function cell(call, turnId) {
  if (!call) return "-";
  if (!call.took) return typeof call.dataCode === "string" && call.dataCode.startsWith("answer-") ? "refused" : "error";
  if (call.meta === "(absent)") return "none";
  try {
    assert.deepStrictEqual(call.meta, { turnId });
    return "echo";
  } catch {
    try {
      assert.deepStrictEqual(call.meta, SERVER_ENVELOPE);
      return "SERVER";
    } catch {
      return "OTHER";
    }
  }
}

/** What a client took that the promise forbids, through `front`: [{ case, client, call, meta }]. */
function broken(front) {
  const found = [];
  for (const c of cases) {
    const turns = turnsOf(c);
    for (const client of CLIENTS) {
      (outcomes.get(`${front} ${c.name} ${client}`) ?? []).forEach((call, i) => {
        if (call.took && !["echo", "none"].includes(cell(call, turns[i]))) found.push({ case: c.name, client, call: i + 1, meta: call.meta, sent: turns[i], note: c.note });
      });
    }
  }
  return found;
}

/** The table: a row per case, a column per front and client. */
function table() {
  const names = Object.keys(fronts);
  const columns = names.flatMap((front) => CLIENTS.map((client) => `${front}:${client}`));
  const width = Math.max(...cases.map((c) => c.name.length), 4);
  const cellWidth = 14;
  const lines = [`${"case".padEnd(width)} ${columns.map((column) => column.padEnd(cellWidth)).join("")}`];
  const tally = Object.fromEntries(columns.map((column) => [column, {}]));
  for (const c of cases) {
    const turns = turnsOf(c);
    const row = columns.map((column) => {
      const [front, client] = column.split(":");
      const calls = outcomes.get(`${front} ${c.name} ${client}`) ?? [];
      const text = turns.map((turn, i) => cell(calls[i], turn)).join(",");
      for (const one of text.split(",")) tally[column][one] = (tally[column][one] ?? 0) + 1;
      return text.padEnd(cellWidth);
    });
    lines.push(`${c.name.padEnd(width)} ${row.join("")}`);
    if (VERBOSE) {
      for (const column of columns) {
        const [front, client] = column.split(":");
        for (const call of outcomes.get(`${front} ${c.name} ${client}`) ?? []) if (!call.took) lines.push(`    ${column}: ${call.error}`);
      }
    }
  }
  lines.push("");
  for (const column of columns) lines.push(`${column.padEnd(12)} ${Object.entries(tally[column]).map(([what, count]) => `${what} ${count}`).join(", ")}`);
  return lines.join("\n");
}

test("every case through every front, by every client", { timeout: RUN_MS + 30_000 }, async () => {
  const started = Date.now();
  const tsJobs = [];
  for (const [front, base] of Object.entries(fronts)) {
    for (const c of cases) {
      for (const kind of ["ts1", "ts2"]) {
        const url = `${base}/mcp?case=${encodeURIComponent(c.name)}`;
        tsJobs.push(async () => outcomes.set(`${front} ${c.name} ${kind}`, await tsSession(kind, url, c)));
      }
    }
  }
  await Promise.all([pythonSessions(), within(RUN_MS, pool(tsJobs, CONCURRENCY), "the TypeScript clients")]);
  ran = true;
  const fronted = Object.keys(fronts).filter((front) => front !== "bare");
  console.log(`${cases.length} answers (${cases.filter((c) => c.source === "hostile").length} hostile, the rest from conformance/exchange.json), fronts: ${Object.keys(fronts).join(", ")}${fronts.node ? "" : " (pkg/dist not built: no Node front)"}; ${Date.now() - started} ms\n`
    + "echo: the result, its envelope {turnId: the call's own}; none: the result, no envelope; SERVER: the result with the server's envelope;\n"
    + "OTHER: the result with another envelope; refused: the middleware's error; error: the client failed otherwise (timeout, parse, HTTP status)\n\n"
    + table());
  assert.ok(fronted.includes("asgi"), "the ASGI middleware ran");
});

test("through each middleware, every result a client takes echoes its own call's turnId or none", () => {
  assert.ok(ran, "the run completed");
  const found = Object.keys(fronts).filter((name) => name !== "bare").flatMap((front) => broken(front).map((f) => ({ front, ...f })));
  if (found.length > 0) assert.fail(`clients took results whose envelope is not their own call's turnId:\n${found.map((f) => `  through ${f.front}, ${f.case} (${f.note}): ${f.client}, call ${f.call} (sent ${f.sent}), took ${JSON.stringify(f.meta)}`).join("\n")}`);
});

test("through each middleware, each client takes a result in some case", () => {
  assert.ok(ran, "the run completed");
  for (const front of Object.keys(fronts).filter((name) => name !== "bare")) {
    for (const client of CLIENTS) {
      const took = cases.filter((c) => (outcomes.get(`${front} ${c.name} ${client}`) ?? []).some((call) => call.took));
      assert.ok(took.length > 0, `through ${front}, ${client} took no result at all`);
    }
  }
});

test("without a middleware, some client takes the server's envelope (the hole the middleware closes)", () => {
  assert.ok(ran, "the run completed");
  for (const client of CLIENTS) {
    const leaked = cases.filter((c) => (outcomes.get(`bare ${c.name} ${client}`) ?? []).some((call) => call.took && cell(call, "") === "SERVER"));
    assert.ok(leaked.length > 0, `bare, ${client} never took the server's envelope: the answers show nothing`);
  }
});
