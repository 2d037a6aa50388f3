// The mcp-provenance command, as a user runs it from the packed package
// (npx resolves its bin): `check` over captures (bad lines included) and over
// the prototype gateway's log, with exact output and exit codes; `probe`
// against the prototype's server, the official "everything" server, and a
// deliberately broken server that echoes the whole envelope.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { start, stop } from "../examples/prototype/http.mjs";
import { vectors } from "./conformance.mjs";
import { linkScope, npx as run, root, userProject } from "./user.mjs";

const KEY = "io.modelcontextprotocol/aiInvocation";
let project;

before(() => {
  project = userProject("cli");
  // probe's client, installed beside the package as its README says (an optional peer).
  linkScope(project, "@modelcontextprotocol");
});
after(() => rmSync(project, { recursive: true, force: true }));

/** `npx mcp-provenance ...args` in the user's project: exit code, standard output and error. */
const npx = (args, input) => run(project, args, input);

const call = (id, envelope) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "q", _meta: { [KEY]: envelope } } });

describe("check", () => {
  const capture = [
    call(1, { turnId: "t-1" }),
    "this line is not JSON",
    call(2, { turnId: 7, userIntent: { text: "a\r\nb" } }),
    "",
    `[${call(3, { model: {} })}, {"jsonrpc": "2.0", "id": 3, "result": {}}]`,
  ].join("\n");

  test("prints each diagnostic with its line, a summary, and exits 1 on an error", () => {
    writeFileSync(join(project, "capture.jsonl"), capture);
    const { code, out } = npx(["check", "capture.jsonl"]);
    assert.equal(code, 1);
    assert.equal(out, [
      "line 2: error WIRE-2 parse-error / not JSON",
      "line 3: error AI-7 invalid-type /params/_meta/io.modelcontextprotocol~1aiInvocation/turnId `turnId` must be a string, not a number",
      "line 3: warning AI-13 control-character /params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text holds line breaks, control or bidi characters that could forge or disguise log lines; sanitize replaces them",
      "line 5[0]: error AI-4 missing-field /params/_meta/io.modelcontextprotocol~1aiInvocation/model/name `model` must have a string `name`",
      "checked 4 messages: 3 errors, 1 warnings, 1 unparseable",
      "",
    ].join("\n"));
  });

  test("--format json gives a record per message and a summary; - reads standard input", () => {
    const { code, out } = npx(["check", "-", "--format", "json"], capture);
    assert.equal(code, 1);
    const records = out.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(records.map((r) => [r.line, r.index, r.valid, r.unparseable]), [
      [1, undefined, true, undefined], [2, undefined, undefined, true], [3, undefined, false, undefined],
      [5, 0, false, undefined], [5, 1, true, undefined], [undefined, undefined, undefined, undefined],
    ]);
    assert.deepEqual(records.at(-1), { summary: { messages: 4, errors: 3, warnings: 1, unparseable: 1, skipped: 0, overLimit: 0 } });
  });

  test("--sanitize writes each message sanitized under the policy the flags give; a clean capture exits 0", () => {
    writeFileSync(join(project, "clean.jsonl"), `${call(1, { turnId: "t", userIntent: { text: "secret" } })}\n`);
    const { code, out } = npx(["check", "clean.jsonl", "--sanitize", "out.jsonl", "--redact-intent"]);
    assert.equal(code, 0);
    assert.equal(out, "checked 1 messages: 0 errors, 0 warnings, 0 unparseable\n");
    assert.deepEqual(JSON.parse(readFileSync(join(project, "out.jsonl"), "utf8")).params._meta[KEY], { turnId: "t", userIntent: { redacted: true } });
  });

  test("--key checks a vendor key's envelope", () => {
    writeFileSync(join(project, "vendor.jsonl"), `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: { "com.example/aiInvocation": { turnId: 1 } } } })}\n`);
    assert.equal(npx(["check", "vendor.jsonl"]).code, 0);
    assert.equal(npx(["check", "vendor.jsonl", "--key", "com.example/aiInvocation"]).code, 1);
  });

  test("bad usage and an unreadable file exit 2", () => {
    assert.equal(npx(["check"]).code, 2);
    assert.equal(npx(["check", "a", "b"]).code, 2);
    assert.equal(npx(["check", "capture.jsonl", "--max-intent-bytes", "1"]).code, 2);
    assert.equal(npx(["frobnicate"]).code, 2);
    const missing = npx(["check", "no-such-file.jsonl"]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /cannot read no-such-file\.jsonl: ENOENT/);
    assert.equal(npx(["--help"]).code, 0);
  });
});

test("the native check (cargo --features cli) prints what npx check prints, byte for byte, and exits alike", () => {
  execFileSync("cargo", ["build", "--quiet", "--release", "--features", "cli", "--bin", "mcp-provenance"], { cwd: root, stdio: "inherit" });
  const native = join(root, "target", "release", "mcp-provenance");
  writeFileSync(join(project, "mixed.jsonl"), [
    call(1, { turnId: "t-1" }), "not JSON", call(2, { turnId: 7, userIntent: { text: "a\r\nb\u202e" } }),
    `[${call(3, { model: {} })}, {"jsonrpc": "2.0", "id": 3, "result": {"_meta": {"${KEY}": {"turnId": "x", "model": {"name": "m"}}}}}]`,
    JSON.stringify({ session: "s", message: JSON.parse(call(4, {})) }), "{}", "[]", "42",
  ].join("\n"));
  // Every vector's input, as a line; then what JSON.parse and serde_json read apart: big
  // numbers, escaped lone surrogates, duplicates, deep nesting, bytes that are not UTF-8, CRLF.
  const inputs = vectors.map((vector) => (vector.op === "filter" ? vector.input.replaceAll("\n", " ") : JSON.stringify(vector.input ?? null)));
  const hostile = [
    `{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"arguments":{"n":1e400,"p":1.10}}}`,
    `{"id":1,"method":"tools/call","params":{"_meta":{"${KEY}":{"userIntent":{"text":"\\ud800 a"},"turnId":"\\udfff"}}}}`,
    `{"id":1,"method":"ping","method":"tools/call"}`,
    `{"id":2,"method":"tools/call","params":{"arguments":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`,
    `{"id":3,"method":"ping"}\r`,
  ];
  writeFileSync(join(project, "hostile.jsonl"), Buffer.concat([
    Buffer.from([...inputs, ...hostile].join("\n") + "\n"),
    Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0xff, 0x7d, 0x0a]),
  ]));
  // Larger than the pieces either command reads at a time, a 1.5 MB line across them.
  const long = `{"id":9,"method":"tools/call","params":{"arguments":{"rows":"${"r".repeat(1_500_000)}"},"_meta":{"turnId":"t"}}}`;
  writeFileSync(join(project, "pieces.jsonl"), [...Array(40).fill([...inputs, ...hostile.slice(0, 3)].join("\n")), long, ...inputs].join("\n"));
  for (const args of [["pieces.jsonl"], ["mixed.jsonl"], ["mixed.jsonl", "--format", "json"], ["mixed.jsonl", "--field", "message"], ["mixed.jsonl", "--key", "com.example/aiInvocation"],
    ["hostile.jsonl"], ["hostile.jsonl", "--format", "json"], ["hostile.jsonl", "--redact-intent", "--key", "com.example/aiInvocation"]]) {
    const js = npx(["check", ...args]);
    const rust = spawnSync(native, ["check", ...args], { cwd: project, encoding: "utf8", maxBuffer: 2 ** 26 });
    assert.ok(js.code === 0 || js.code === 1, `${args.join(" ")}: npx check ran to the end`);
    assert.equal(rust.stdout, js.out, args.join(" "));
    assert.equal(rust.status, js.code, args.join(" "));
  }
  assert.match(npx(["check", "hostile.jsonl"]).out, /checked \d+ messages: \d+ errors, \d+ warnings, \d+ unparseable/);
  for (const file of ["mixed.jsonl", "hostile.jsonl", "pieces.jsonl"]) {
    const sanitized = spawnSync(native, ["check", file, "--sanitize", "native.jsonl", "--redact-intent"], { cwd: project, encoding: "utf8", maxBuffer: 2 ** 26 });
    npx(["check", file, "--sanitize", "js.jsonl", "--redact-intent"]);
    assert.equal(sanitized.status, 1);
    assert.equal(readFileSync(join(project, "native.jsonl"), "utf8"), readFileSync(join(project, "js.jsonl"), "utf8"), file);
  }
  assert.equal(spawnSync(native, ["check", "no-such-file"], { encoding: "utf8" }).status, 2);
});

describe("check over the prototype gateway's log, and probe against three servers", () => {
  const dir = join(root, "target", "cli-test");
  let server;
  let gateway;

  before(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    server = await start(join(root, "examples/prototype/server.mjs"), ["--data", dir]);
    gateway = await start(join(root, "examples/prototype/gateway.mjs"), ["--upstream", server.url, "--log", join(dir, "gateway.jsonl")]);
  });
  after(async () => {
    await stop(gateway.child);
    await stop(server.child);
  });

  test("probe passes the prototype's server (through its gateway), and its log checks clean", () => {
    const { code, out } = npx(["probe", "--url", gateway.url]);
    assert.equal(code, 0, out);
    assert.match(out, /\n7 passed, 0 failed, 0 warnings \(0 of them untestable\)\n$/);
    const checked = npx(["check", join(dir, "gateway.jsonl"), "--field", "message"]);
    assert.match(checked.out, /^checked \d+ messages: 0 errors, \d+ warnings, 0 unparseable \(\d+ lines without message skipped\)$/m);
    assert.equal(checked.code, 0);
  });

  test("probe passes the official everything server", async () => {
    const port = 30_000 + Math.floor(Math.random() * 20_000);
    const everything = spawn(process.execPath, [join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"],
      { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
    try {
      await new Promise((resolve, reject) => {
        let seen = "";
        everything.stderr.on("data", (chunk) => { seen += chunk; if (/listening on port/i.test(seen)) resolve(); });
        everything.on("exit", (exit) => reject(new Error(`server-everything exited with ${exit}: ${seen}`)));
      });
      const { code, out } = npx(["probe", "--url", `http://127.0.0.1:${port}/mcp`, "--format", "json"]);
      const { checks } = JSON.parse(out);
      assert.deepEqual(checks.filter((c) => c.status === "FAILURE").map((c) => c.id), []);
      assert.equal(code, 0);
    } finally {
      await stop(everything);
    }
  });

  test("probe warns on a server that echoes the whole envelope (AI-11 is a SHOULD NOT), naming the check; --strict fails it", async () => {
    const leaky = await start(join(root, "js-tests/fixtures/leaky-server.mjs"));
    try {
      const { code, out } = npx(["probe", "--url", leaky.url]);
      assert.equal(code, 0);
      assert.match(out, /^sep-2817-server-no-echo +AI-11 +SHOULD +WARNING/m);
      assert.match(out, /\n6 passed, 0 failed, 1 warnings \(0 of them untestable\)\n$/);
      assert.equal(npx(["probe", "--url", leaky.url, "--strict"]).code, 1);
    } finally {
      await stop(leaky.child);
    }
  });

  test("probe without a server to probe exits 2", () => {
    assert.equal(npx(["probe", "--url", "http://127.0.0.1:9/mcp"]).code, 2);
    assert.equal(npx(["probe"]).code, 2);
  });
});
