// Witnessed sessions shared by a gateway's processes through Redis (the
// `sessions` option of mcp-provenance/http): two node:http gateway processes
// (fixtures/sessions-gateway.mjs) and a redis-server of the test's own, and
// two Fetch handlers in this process, each with a gateway of its own. A
// session the app issued through one is witnessed through the other; Redis
// holds its key (the SHA-256 of the id, never the id) for a day at most,
// until the app accepts a DELETE of it. Redis stopped, or never answering:
// the call is served and audited, its record names no session, and stderr
// says so once. Without Debian's redis-server the test is skipped, saying so.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";

import { createClient } from "redis";

import { SESSION_STORE } from "../pkg/dist/gateway.mjs";
import { provenanceFetch, provenanceMiddleware } from "../pkg/dist/http.mjs";

const FIXTURE = new URL("./fixtures/sessions-gateway.mjs", import.meta.url).pathname;
const MCP = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1" } } };
const CALL = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "open_orders", arguments: { region: "EU" }, _meta: { "io.modelcontextprotocol/aiInvocation": { turnId: "t-1" } } } };
/** What stderr says when the store does not answer (its first words). */
const UNANSWERED = "mcp-provenance: the session store (Redis) does not answer";

/** Where Debian's redis-server is; undefined when it is not installed. */
const REDIS_SERVER = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((path) => existsSync(path));
const skip = REDIS_SERVER === undefined ? "Debian's redis-server is not installed (make setup-debian installs it)" : false;

/** A port of 127.0.0.1 nothing listens on now. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The key the store holds for `session`, as the README says: the prefix, then the SHA-256 of the id in hex. */
const keyOf = (session) => `mcp-provenance:session:${createHash("sha256").update(session).digest("hex")}`;

/** redis-server on a port of its own, in a folder of its own, saving nothing; `start` and `stop` as a test says. */
class Redis {
  constructor(folder, port) {
    this.folder = folder;
    this.port = port;
    this.url = `redis://127.0.0.1:${port}/0`;
  }

  async start() {
    this.process = spawn(REDIS_SERVER, ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.folder, "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    // Ready once it answers PING (redis-cli comes with redis-server).
    for (let tries = 0; ; tries++) {
      try {
        if (execFileSync("redis-cli", ["-p", String(this.port), "ping"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() === "PONG") return;
      } catch {
        // Not listening yet.
      }
      assert.ok(tries < 600, "redis-server did not start");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop() {
    if (this.process === undefined || this.process.exitCode !== null) return;
    const exited = new Promise((resolve) => this.process.once("exit", resolve));
    this.process.kill("SIGTERM");
    await exited;
  }

  /** `work(client)` with a client of this Redis, closed after. */
  async with(work) {
    const client = createClient({ url: this.url });
    client.on("error", () => {});
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.quit();
    }
  }
}

/** One process of the gateway: the fixture, on a port of its own, auditing into a file of its own. */
class Worker {
  constructor(folder, name, url) {
    this.audit = join(folder, `${name}.jsonl`);
    this.stderr = "";
    this.process = spawn(process.execPath, [FIXTURE, url, this.audit], { stdio: ["ignore", "pipe", "pipe"] });
    this.process.stderr.on("data", (chunk) => {
      this.stderr += chunk;
    });
    this.ready = new Promise((resolve, reject) => {
      this.process.once("exit", (code) => reject(new Error(`the gateway process ${name} ended (${code}): ${this.stderr}`)));
      createInterface({ input: this.process.stdout }).once("line", (line) => {
        this.base = `http://127.0.0.1:${line.split(" ")[1]}`;
        resolve(this);
      });
    });
  }

  post(message, session) {
    const headers = session === undefined ? MCP : { ...MCP, "mcp-session-id": session };
    return fetch(`${this.base}/mcp`, { method: "POST", headers, body: JSON.stringify(message) });
  }

  /** Its accounts: the messages' (`kind` their kind), then each exchange's outcome. */
  accounts() {
    return existsSync(this.audit) ? readFileSync(this.audit, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)) : [];
  }

  records() {
    return this.accounts().filter((account) => account.kind !== "outcome" && account.record !== undefined).map((account) => account.record);
  }

  /** The outcomes, once there are `count` (each is written once its answer is over, which may be after the client has it). */
  async outcomes(count) {
    for (let tries = 0; ; tries++) {
      const found = this.accounts().filter((account) => account.kind === "outcome");
      if (found.length >= count || tries > 1200) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  said(words) {
    return this.stderr.split("\n").filter((line) => line.startsWith(words));
  }

  async stop() {
    if (this.process.exitCode !== null) return;
    const exited = new Promise((resolve) => this.process.once("exit", resolve));
    this.process.kill("SIGTERM");
    await exited;
  }
}

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-provenance-sessions-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe("sessions shared through Redis, between two node:http gateway processes", { skip }, () => {
  let redis;
  let a;
  let b;
  before(async () => {
    const home = mkdtempSync(join(dir, "redis-"));
    redis = new Redis(home, await freePort());
    await redis.start();
    [a, b] = await Promise.all([new Worker(home, "a", redis.url).ready, new Worker(home, "b", redis.url).ready]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  /** A session initialized through A: its id, as A's app issued it. */
  async function initialize() {
    const answer = await a.post(INITIALIZE);
    assert.equal(answer.status, 200);
    await answer.text();
    return answer.headers.get("mcp-session-id");
  }

  test("a session issued through one process is witnessed through the other, until a DELETE ends it", async () => {
    const session = await initialize();
    await redis.with(async (client) => {
      assert.deepEqual(await client.keys("*"), [keyOf(session)]);
      const ttl = await client.ttl(keyOf(session));
      assert.ok(ttl > 0 && ttl <= 86_400, `a key kept a day at most: ${ttl}`);
      assert.ok(!JSON.stringify([await client.keys("*"), await client.get(keyOf(session))]).includes(session), "the store never holds the id");
    });
    const answer = await b.post(CALL, session);
    assert.equal(answer.status, 200);
    assert.equal((await answer.json()).result.content[0].text, "3 open orders in EU");
    const [call] = b.records();
    assert.deepEqual([call.method, call.witnessed.sessionId], ["tools/call", session]);
    assert.deepEqual((await b.outcomes(1)).map((outcome) => outcome.sessionId), [session]);
    // A session id the app never issued is witnessed through neither.
    await (await b.post(CALL, "made-up")).text();
    assert.equal(b.records().at(-1).witnessed.sessionId, undefined);
    // A DELETE the app accepted, through B: Redis forgets it.
    const ended = await fetch(`${b.base}/mcp`, { method: "DELETE", headers: { "mcp-session-id": session } });
    assert.equal(ended.status, 204);
    await redis.with(async (client) => assert.deepEqual(await client.keys("*"), []));
    assert.deepEqual([...a.said(UNANSWERED), ...b.said(UNANSWERED)], []);
  });

  test("with Redis stopped, a call is served and audited, its record names no session, and stderr says so once", async () => {
    const known = await initialize();
    await redis.stop();
    // Issued while Redis is down: witnessed through A alone, which saw it issued.
    const session = await initialize();
    const calls = [];
    for (const named of [session, session, known]) {
      const answer = await b.post(CALL, named);
      assert.equal(answer.status, 200);
      calls.push((await answer.json()).result.content[0].text);
    }
    assert.deepEqual(calls, Array(3).fill("3 open orders in EU"));
    const records = b.records().slice(-3);
    assert.deepEqual(records.map((record) => [record.method, record.witnessed.sessionId]), Array(3).fill(["tools/call", undefined]));
    const outcomes = (await b.outcomes(5)).slice(-3);
    assert.deepEqual(outcomes.map((outcome) => [outcome.sessionId, outcome.requests[0].answer]), Array(3).fill([undefined, "result"]));
    // Said once for the outage by each process that asked: not once a request.
    assert.equal(a.said(UNANSWERED).length, 1, a.stderr);
    assert.equal(b.said(UNANSWERED).length, 1, b.stderr);
    // Redis back, empty (it saved nothing): once A's client has connected again (by itself, after
    // a pause of its own), a session issued through A is shared again, and stderr says so.
    await redis.start();
    let again;
    for (let tries = 0; again === undefined; tries++) {
      const issued = await initialize();
      if (await redis.with(async (client) => (await client.exists(keyOf(issued))) === 1)) again = issued;
      else await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(tries < 300, "A's client never connected again");
    }
    await (await b.post(CALL, again)).text();
    assert.equal(b.records().at(-1).witnessed.sessionId, again);
    assert.equal(a.said("mcp-provenance: the session store (Redis) answers again").length, 1, a.stderr);
  });
});

/** An MCP app as a Fetch handler: a session issued in the answer to `initialize`, any call answered. */
async function handler(request) {
  const message = await request.json();
  const headers = { "content-type": "application/json" };
  if (message.method === "initialize") headers["mcp-session-id"] = crypto.randomUUID();
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {} }), { headers });
}

describe("sessions shared through Redis, between two Fetch handlers", { skip }, () => {
  let redis;
  before(async () => {
    redis = new Redis(mkdtempSync(join(dir, "redis-")), await freePort());
    await redis.start();
  });
  after(() => redis?.stop());

  test("a session issued through one handler is witnessed through the other; a Redis that never answers is waited for a bounded time", async () => {
    const audits = [[], []];
    const [one, two] = audits.map((kept) => provenanceFetch(handler, { sessions: redis.url, audit: (account) => kept.push(account) }));
    const post = (to, message, session) => to(new Request("http://localhost/mcp", { method: "POST", headers: session === undefined ? MCP : { ...MCP, "mcp-session-id": session }, body: JSON.stringify(message) }));
    const initialized = await post(one, INITIALIZE);
    await initialized.text();
    const session = initialized.headers.get("mcp-session-id");
    await redis.with(async (client) => assert.deepEqual(await client.keys(`${SESSION_STORE.prefix}*`), [keyOf(session)]));
    await (await post(two, CALL, session)).text();
    const calls = audits[1].filter((account) => account.kind === "request");
    assert.deepEqual(calls.map((account) => account.record.witnessed.sessionId), [session]);

    // A port that takes connections and never answers: each call served, none claims a session, one line said.
    const held = [];
    const hole = createServer((connection) => held.push(connection));
    await new Promise((resolve) => hole.listen(0, "127.0.0.1", resolve));
    const kept = [];
    const slow = provenanceFetch(handler, { sessions: { url: `redis://127.0.0.1:${hole.address().port}`, timeoutMs: 200 }, audit: (account) => kept.push(account) });
    const said = [];
    const error = console.error;
    console.error = (line) => said.push(String(line));
    try {
      for (let n = 0; n < 3; n++) {
        const answer = await post(slow, CALL, session);
        assert.equal(answer.status, 200);
        assert.equal((await answer.json()).id, 1);
      }
    } finally {
      console.error = error;
      hole.close();
      for (const connection of held) connection.destroy();
    }
    assert.deepEqual(kept.filter((account) => account.kind === "request").map((account) => account.record.witnessed.sessionId), Array(3).fill(undefined));
    assert.equal(said.filter((line) => line.startsWith(UNANSWERED)).length, 1, said.join("\n"));
  });
});

describe("the sessions option", () => {
  test("a URL that is not Redis's is refused when the middleware is made, without quoting it", () => {
    for (const sessions of ["http://127.0.0.1:6379", "127.0.0.1:6379", "", 6379, { url: "https://:hunter2@127.0.0.1" }, { url: "redis://127.0.0.1", timeoutMs: 0 }]) {
      assert.throws(() => provenanceMiddleware({ sessions }), (error) => error instanceof RangeError && error.code === "invalid-option" && !error.message.includes("hunter2"));
    }
  });

  test("without the npm package redis, the middleware is not made: an Error with code missing-dependency", () => {
    // The package built, where no node_modules holds redis.
    const away = mkdtempSync(join(tmpdir(), "mcp-provenance-no-redis-"));
    try {
      cpSync(new URL("../pkg/dist", import.meta.url).pathname, join(away, "dist"), { recursive: true });
      const script = `import("${join(away, "dist", "http.mjs")}").then(({ provenanceMiddleware }) => { try { provenanceMiddleware({ sessions: "redis://127.0.0.1" }); console.log("made"); } catch (e) { console.log(e.code, e.message); } })`;
      const esm = execFileSync(process.execPath, ["-e", script], { cwd: away, encoding: "utf8" }).trim();
      assert.equal(esm, "missing-dependency options.sessions needs the npm package redis, an optional peer dependency of mcp-provenance: npm install redis");
      const cjs = execFileSync(process.execPath, ["-e", `const { provenanceMiddleware } = require("${join(away, "dist", "http.cjs")}"); try { provenanceMiddleware({ sessions: "redis://127.0.0.1" }); } catch (e) { console.log(e.code); }`], { cwd: away, encoding: "utf8" }).trim();
      assert.equal(cjs, "missing-dependency");
    } finally {
      rmSync(away, { recursive: true, force: true });
    }
  });
});
