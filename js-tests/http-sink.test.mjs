// The JSON-lines file sink of mcp-provenance/http (`jsonLinesSink`, and a
// path given as the middleware's `audit`): each line appended whole, in one
// write on a descriptor opened anew with O_APPEND, so that several processes
// writing at once and a rotation by rename keep every line whole and lose
// none; the file made owner-only; a path that cannot be appended to fails
// when the sink is made, and a line not written refuses the body.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";

import { jsonLinesSink, provenanceFetch, provenanceMiddleware } from "../pkg/dist/http.mjs";
import { CALL, JSON_TYPE, STACKS, auditError, recorder, send } from "./http-stacks.mjs";

let dir;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-provenance-sink-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh folder under the test's own. */
let folders = 0;
const folder = () => {
  const made = join(dir, String(++folders));
  mkdirSync(made);
  return made;
};

/** The lines of `file`, without the newline that ends each. */
function linesOf(file) {
  const text = readFileSync(file, "utf8");
  assert.ok(text === "" || text.endsWith("\n"), "the file ends with a whole line");
  return text === "" ? [] : text.slice(0, -1).split("\n");
}

/** Waits (five seconds at most) until `file` holds `count` lines; its lines then. */
async function lines(file, count) {
  for (const deadline = Date.now() + 5000; linesOf(file).length < count && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 5));
  return linesOf(file);
}

const request = (body = CALL) => new Request("http://localhost/mcp", { method: "POST", headers: JSON_TYPE, body });

describe("jsonLinesSink", () => {
  test("appends each line it is handed and a newline, to a file it made owner-only and opened once, when made", async () => {
    const file = join(folder(), "audit.jsonl");
    const sink = jsonLinesSink(file);
    // Made, and empty: a path it cannot append to would have failed here.
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, "utf8"), "");
    // It declares the line, so that the middleware makes one for it.
    assert.equal(sink.length, 2);
    await sink({ kind: "request", changes: [] }, '{"kind":"request","n":1}');
    await Promise.all([sink({ kind: "request", changes: [] }, '{"n":2}'), sink({ kind: "outcome", requests: [] }, '{"n":3}')]);
    const written = linesOf(file);
    assert.equal(written[0], '{"kind":"request","n":1}');
    assert.deepEqual(written.slice(1).sort(), ['{"n":2}', '{"n":3}']);
    await assert.rejects(sink({ kind: "request", changes: [] }), { name: "TypeError", code: "invalid-type" });
  });

  test("a file that is there keeps its mode; a relative path is the one it named when made", async () => {
    const where = folder();
    writeFileSync(join(where, "shared.jsonl"), "");
    chmodSync(join(where, "shared.jsonl"), 0o640);
    await jsonLinesSink(join(where, "shared.jsonl"))({}, "{}");
    assert.equal(statSync(join(where, "shared.jsonl")).mode & 0o777, 0o640);
    const cwd = process.cwd();
    process.chdir(where);
    let sink;
    try {
      sink = jsonLinesSink("relative.jsonl");
    } finally {
      process.chdir(cwd);
    }
    await sink({}, '{"here":true}');
    assert.deepEqual(linesOf(join(where, "relative.jsonl")), ['{"here":true}']);
  });

  test("a path it cannot append to fails when made, coded, saying why; a path that is not text too", () => {
    const where = folder();
    for (const [path, why] of [[join(where, "missing", "audit.jsonl"), "ENOENT"], [where, "EISDIR"]]) {
      assert.throws(() => jsonLinesSink(path), (error) => error instanceof RangeError && error.code === "unwritable-audit"
        && error.cause?.code === why && error.message.includes(path) && error.message.includes(why));
    }
    for (const path of [undefined, 7, "", "a\0b", { path: "x" }]) assert.throws(() => jsonLinesSink(path), { name: "TypeError", code: "invalid-type" });
  });

  test("a line not written rejects, coded audit-failed with the file system's error as its cause", async () => {
    const where = folder();
    const sink = jsonLinesSink(join(where, "audit.jsonl"));
    rmSync(where, { recursive: true });
    await assert.rejects(sink({}, "{}"), (error) => error.code === "audit-failed" && error.cause?.code === "ENOENT");
  });
});

describe("a path where the middleware takes a sink", () => {
  for (const [name, stack] of Object.entries(STACKS)) {
    test(`${name}: the path is a JSON-lines file sink: each message's line, then the outcome's`, async () => {
      const file = join(folder(), "audit.jsonl");
      const app = recorder();
      const { url, close } = await stack({ audit: file, policy: { userIntent: "redact" } }, app);
      try {
        const { status } = await send(url, { body: CALL });
        assert.equal(status, 200);
        const [message, outcome] = (await lines(file, 2)).map((line) => JSON.parse(line));
        assert.equal(message.kind, "request");
        assert.equal(message.record.clientAsserted.userIntentRedacted, true);
        // The line holds the message as it went on.
        assert.equal(message.message.params._meta["io.modelcontextprotocol/aiInvocation"].userIntent.redacted, true);
        assert.equal(outcome.kind, "outcome");
        assert.equal(outcome.status, 200);
        assert.equal(statSync(file).mode & 0o777, 0o600);
      } finally {
        await close();
      }
    });
  }

  test("a path that cannot be appended to fails when the middleware is made; anything else not a function is refused", () => {
    const missing = join(folder(), "missing", "audit.jsonl");
    for (const make of [provenanceMiddleware, (options) => provenanceFetch(() => new Response(null), options)]) {
      assert.throws(() => make({ audit: missing }), (error) => error instanceof RangeError && error.code === "unwritable-audit");
      for (const audit of [7, "", {}, ["a.jsonl"], null]) {
        assert.throws(() => make({ audit }), (error) => error instanceof RangeError && error.code === "invalid-option", String(audit));
      }
    }
  });

  test("where the runtime has no node:fs (a browser, a worker), a path is refused when the middleware is made", () => {
    const file = join(folder(), "audit.jsonl");
    const { getBuiltinModule } = process;
    // As a runtime without Node's modules is: the sink asks the runtime for node:fs, never imports it.
    process.getBuiltinModule = undefined;
    try {
      for (const make of [provenanceMiddleware, (options) => provenanceFetch(() => new Response(null), options)]) {
        assert.throws(() => make({ audit: file }), (error) => error instanceof RangeError && error.code === "invalid-option" && error.message.includes("node:fs"));
      }
      assert.throws(() => jsonLinesSink(file), (error) => error instanceof RangeError && error.code === "invalid-option");
    } finally {
      process.getBuiltinModule = getBuiltinModule;
    }
    assert.throws(() => statSync(file), { code: "ENOENT" });
  });

  test("options the core refuses fail before the file is made", () => {
    const file = join(folder(), "audit.jsonl");
    assert.throws(() => provenanceMiddleware({ audit: file, maxBodyBytes: 0 }), { code: "invalid-limit" });
    assert.throws(() => statSync(file), { code: "ENOENT" });
  });

  test("a line not written refuses the body: the app is not called, each request gets the audit error", async () => {
    const where = folder();
    let called = 0;
    const handler = provenanceFetch(async () => {
      called++;
      return Response.json({ jsonrpc: "2.0", id: 1, result: {} });
    }, { audit: join(where, "audit.jsonl") });
    rmSync(where, { recursive: true });
    const answer = await handler(request('{"jsonrpc":"2.0","id":1,"method":"ping"}'));
    assert.equal(await answer.text(), auditError(1));
    assert.equal(called, 0);
  });
});

test("several processes appending at once, the file rotated by rename meanwhile: every line whole, none lost", async () => {
  const where = folder();
  const file = join(where, "audit.jsonl");
  const [WRITERS, COUNT] = [4, 400];
  const writers = Array.from({ length: WRITERS }, (_, id) => spawn(process.execPath, [new URL("./fixtures/lines-writer.mjs", import.meta.url).pathname, file, String(id), String(COUNT)], {
    stdio: ["pipe", "pipe", "inherit"],
  }));
  const exits = writers.map((writer) => new Promise((resolve) => writer.on("exit", resolve)));
  // The first writer halfway: the file is renamed away while the others write, then each goes on.
  await Promise.race(writers.map((writer) => new Promise((resolve) => createInterface({ input: writer.stdout }).on("line", resolve))));
  renameSync(file, `${file}.1`);
  for (const writer of writers) writer.stdin.write("go\n");
  assert.deepEqual(await Promise.all(exits), Array(WRITERS).fill(0));

  const seen = new Set();
  const files = { rotated: linesOf(`${file}.1`), current: linesOf(file) };
  for (const [which, written] of Object.entries(files)) {
    for (const line of written) {
      const { writer, seq, length, pad } = JSON.parse(line);
      assert.equal(pad.length, length, "a line is whole");
      assert.ok(!seen.has(`${writer} ${seq}`), "a line is written once");
      seen.add(`${writer} ${seq}`);
      // What each writer wrote once the file was renamed went to the file made anew.
      if (seq >= COUNT / 2) assert.equal(which, "current");
    }
  }
  assert.equal(seen.size, WRITERS * COUNT);
  assert.ok(files.rotated.length > 0 && files.current.length >= WRITERS * COUNT / 2);
  assert.equal(statSync(file).mode & 0o777, 0o600);
});
