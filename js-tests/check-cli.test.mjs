// `mcp-provenance check` as a CI job runs it, npm (from the packed package)
// and native side by side (issue 19): the help and the words, the exit codes,
// the copy made for sharing, the severities, and a line of a gigabyte.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, linkSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { measured, nativeCommand, npx, root, userProject } from "./user.mjs";

const KEY = "io.modelcontextprotocol/aiInvocation";
let project;
let native;

before(() => {
  project = userProject("check-cli");
  native = nativeCommand();
});
after(() => rmSync(project, { recursive: true, force: true }));

/** Both commands with `args`: what each exits with and prints. */
function both(args, input) {
  const js = npx(project, args, input);
  const rust = measured(native, args, project);
  return { js, rust };
}

/** Asserts both commands answer `args` alike, byte for byte; what they answered. */
function alike(args) {
  const { js, rust } = both(args);
  assert.equal(rust.out, js.out, `${args.join(" ")}: standard output`);
  assert.equal(rust.err, js.err, `${args.join(" ")}: standard error`);
  assert.equal(rust.code, js.code, `${args.join(" ")}: exit code`);
  return js;
}

const request = (id, meta) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "q", _meta: meta } });

describe("the words", () => {
  test("--help and -h on the command and on check, --version and -v, print the shared texts and exit 0", () => {
    const main = readFileSync(join(root, "src/wire/usage/main.txt"), "utf8");
    const check = readFileSync(join(root, "src/wire/usage/check.txt"), "utf8");
    const version = JSON.parse(readFileSync(join(root, "pkg/package.json"), "utf8")).version;
    assert.match(readFileSync(join(root, "Cargo.toml"), "utf8"), new RegExp(`^version = "${version}"$`, "m"));
    for (const [args, text] of [[["--help"], main], [["-h"], main], [["check", "--help"], check], [["check", "-h"], check],
      [["check", "capture.jsonl", "--help"], check], [["--version"], `mcp-provenance ${version}\n`], [["-v"], `mcp-provenance ${version}\n`]]) {
      const { code, out, err } = alike(args);
      assert.equal(code, 0, args.join(" "));
      assert.equal(out, text, args.join(" "));
      assert.equal(err, "");
    }
    assert.match(check, /^Exit: 0 clean \(warnings allowed unless --strict\), 1 an error found/m);
  });

  test("a usage error exits 2 with one line and a hint, the same from both", () => {
    const cases = [
      [[], "mcp-provenance: a command is needed\nTry 'mcp-provenance --help'.\n"],
      [["frob"], "mcp-provenance: no such command frob\nTry 'mcp-provenance --help'.\n"],
      [["check"], "mcp-provenance check: check takes one file (or - for standard input)\nTry 'mcp-provenance check --help'.\n"],
      [["check", "a", "--frob"], "mcp-provenance check: unknown option --frob\nTry 'mcp-provenance check --help'.\n"],
      [["check", "a", "--format", "xml"], "mcp-provenance check: --format is text or json\nTry 'mcp-provenance check --help'.\n"],
      [["check", "a", "--strict=yes"], "mcp-provenance check: --strict takes no value\nTry 'mcp-provenance check --help'.\n"],
      [["check", "a", "--max-line-bytes", "0"], "mcp-provenance check: --max-line-bytes takes a whole number of bytes, 1 to 1073741824\nTry 'mcp-provenance check --help'.\n"],
    ];
    for (const [args, err] of cases) {
      const answered = alike(args);
      assert.deepEqual([answered.code, answered.out, answered.err], [2, "", err], args.join(" "));
    }
    const bad = alike(["check", "a", "--key", "io.modelcontextprotocol/x"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^mcp-provenance check: .*\(reserved-key\)\nTry 'mcp-provenance check --help'\.\n$/);
  });
});

describe("exit codes", () => {
  test("a pretty-printed JSON file is lines that are not JSON: errors, exit 1, and it says why; an empty file exits 2", () => {
    writeFileSync(join(project, "pretty.json"), `${JSON.stringify(JSON.parse(request(1, { [KEY]: { turnId: "t" } })), null, 2)}\n`);
    writeFileSync(join(project, "empty.jsonl"), "");
    const hint = "mcp-provenance check: no line held a JSON-RPC message: a capture is one message (or batch) a line, JSONL; a pretty-printed JSON file is not one\n";
    const pretty = alike(["check", "pretty.json"]);
    assert.equal(pretty.code, 1);
    assert.equal(pretty.err, hint);
    assert.match(pretty.out, /^line 1: error WIRE-2 parse-error \/ not JSON\n[^]*checked 0 messages: 13 errors, 0 warnings, 13 unparseable\n$/);
    const empty = alike(["check", "empty.jsonl"]);
    assert.deepEqual([empty.code, empty.out, empty.err], [2, "checked 0 messages: 0 errors, 0 warnings, 0 unparseable\n", hint]);
  });

  test("a line that is not JSON breaks WIRE-2, a MUST: exit 1 with or without --strict", () => {
    // NaN and a trailing comma: not JSON, though each carries an envelope that breaks a MUST.
    const broken = [request(1, { [KEY]: { turnId: 7 } }).replace('"q"', "NaN"), request(2, { [KEY]: { model: {} } }).replace(/}$/, ",}")];
    writeFileSync(join(project, "broken.jsonl"), `${broken.join("\n")}\n`);
    for (const flags of [[], ["--strict"]]) {
      const checked = alike(["check", "broken.jsonl", ...flags]);
      assert.equal(checked.code, 1, flags.join(" "));
      assert.equal(checked.out, "line 1: error WIRE-2 parse-error / not JSON\nline 2: error WIRE-2 parse-error / not JSON\n"
        + "checked 0 messages: 2 errors, 0 warnings, 2 unparseable\n");
    }
  });

  test("0 with warnings, 1 with them under --strict, 1 on an error", () => {
    writeFileSync(join(project, "warned.jsonl"), `${request(1, { turnId: "bare" })}\n`);
    writeFileSync(join(project, "wrong.jsonl"), `${request(1, { [KEY]: { turnId: 7 } })}\n`);
    assert.equal(alike(["check", "warned.jsonl"]).code, 0);
    assert.equal(alike(["check", "warned.jsonl", "--strict"]).code, 1);
    assert.equal(alike(["check", "wrong.jsonl"]).code, 1);
    assert.equal(alike(["check", "wrong.jsonl", "--format", "json", "--strict"]).code, 1);
  });
});

test("--sanitize naming the capture itself, through any path or link, or as standard input, exits 2 and leaves it as it was", () => {
  const capture = join(project, "self.jsonl");
  const bytes = `${request(1, { [KEY]: { turnId: "t-1" } })}\n${request(2, { turnId: "bare" })}\n`;
  writeFileSync(capture, bytes);
  symlinkSync("self.jsonl", join(project, "self-link.jsonl"));
  linkSync(capture, join(project, "self-hard.jsonl"));
  const err = "mcp-provenance check: --sanitize is the capture itself (writing it would empty it): name another file\n";
  const refused = (answered, what) => {
    assert.deepEqual([answered.code, answered.out, answered.err], [2, "", err], what);
    assert.equal(readFileSync(capture, "utf8"), bytes, `${what}: the capture as it was`);
  };
  for (const [file, out] of [["self.jsonl", "self.jsonl"], ["self.jsonl", "./self.jsonl"], ["./self.jsonl", capture],
    ["self.jsonl", "self-link.jsonl"], ["self-link.jsonl", "self.jsonl"], ["self.jsonl", "self-hard.jsonl"], ["self-hard.jsonl", "self-link.jsonl"]]) {
    const { js, rust } = both(["check", file, "--sanitize", out]);
    refused(js, `npm: ${file} --sanitize ${out}`);
    refused(rust, `native: ${file} --sanitize ${out}`);
  }
  // Standard input redirected from the capture: `check - --sanitize self.jsonl < self.jsonl`.
  for (const [name, command, args] of [["npm", "npx", ["--no-install", "mcp-provenance"]], ["native", native, []]]) {
    const input = openSync(capture, "r");
    try {
      const run = spawnSync(command, [...args, "check", "-", "--sanitize", "self-link.jsonl"], { cwd: project, encoding: "utf8", stdio: [input, "pipe", "pipe"], timeout: 120_000 });
      refused({ code: run.status, out: run.stdout, err: run.stderr }, `${name}: - --sanitize self-link.jsonl < self.jsonl`);
    } finally {
      closeSync(input);
    }
  }
});

test("--sanitize --redact-intent: one line out for each line in, and no user intent anywhere in it", () => {
  const lines = [
    request(1, { [KEY]: { turnId: "t-1", userIntent: { text: "secret-one" } } }),
    request(2, { userIntent: { text: "secret-two" } }),
    request(3, { userIntent: "secret-three" }),
    "",
    "not JSON secret-four",
    JSON.stringify({ jsonrpc: "2.0", id: 3, result: { content: [], _meta: { [KEY]: { turnId: "t-3", userIntent: { text: "secret-five" }, model: { name: "m" } } } } }),
    `[${request(4, { [KEY]: { userIntent: { text: "secret-six" } } })}, ${request(5, { userIntent: { text: "secret-seven" } })}]`,
    request(6, {}),
  ];
  writeFileSync(join(project, "leaky.jsonl"), lines.join("\n"));
  const js = npx(project, ["check", "leaky.jsonl", "--sanitize", "js.jsonl", "--redact-intent"]);
  const rust = measured(native, ["check", "leaky.jsonl", "--sanitize", "native.jsonl", "--redact-intent"], project);
  assert.equal(js.code, 1);
  assert.equal(rust.code, 1);
  assert.equal(rust.out, js.out);
  const written = readFileSync(join(project, "js.jsonl"), "utf8");
  assert.equal(readFileSync(join(project, "native.jsonl"), "utf8"), written);
  const out = written.split("\n");
  assert.equal(out.length, lines.length + 1, "a line for each line, each ending in a line feed");
  assert.equal(out.at(-1), "");
  assert.doesNotMatch(written, /secret/);
  // Refused (a bare userIntent under redaction), blank, not JSON: empty lines where they stood;
  // a batch goes on without the message refused in it, as the gateway forwards it.
  assert.deepEqual([out[1], out[2], out[3], out[4]], ["", "", "", ""]);
  assert.deepEqual(JSON.parse(out[6]).map((message) => [message.id, message.params._meta[KEY]]), [[4, { userIntent: { redacted: true } }]]);
  assert.deepEqual(JSON.parse(out[0]).params._meta[KEY], { turnId: "t-1", userIntent: { redacted: true } });
  assert.deepEqual(JSON.parse(out[5]).result._meta[KEY], { turnId: "t-3" });
  assert.equal(out[7], lines[7]);
  assert.match(js.out, /^line 2: error WIRE-6 bare-user-intent /m);
  assert.match(js.out, /^line 6: warning AI-11 echo-leak /m);
});

test("an echo leak is a warning, as AI-11 is a SHOULD in the one table of levels", () => {
  writeFileSync(join(project, "echo.jsonl"), `${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { _meta: { [KEY]: { turnId: "t", model: { name: "m" } } } } })}\n`);
  const { code, out } = alike(["check", "echo.jsonl"]);
  assert.equal(code, 0);
  assert.match(out, /^line 1: warning AI-11 echo-leak /m);
  assert.equal(alike(["check", "echo.jsonl", "--strict"]).code, 1);
});

test("a line of a gigabyte is reported over the bound and skipped, in memory bounded by the bound", () => {
  const file = join(project, "gigabyte.jsonl");
  const descriptor = openSync(file, "w");
  const piece = Buffer.alloc(1 << 20, "a");
  const [start, end] = ['{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"rows":"', '"}}}'];
  writeSync(descriptor, `${request(1, { [KEY]: { turnId: "t-1" } })}\n${start}`);
  for (let i = 0; i < 1024; i++) writeSync(descriptor, piece);
  writeSync(descriptor, `${end}\n${request(3, { turnId: "bare" })}\n`);
  closeSync(descriptor);
  try {
    const length = start.length + 2 ** 30 + end.length;
    const expected = `line 2: error WIRE-4 over-limit / the line is ${length} bytes, over the bound of 4194304 (--max-line-bytes); it was not checked\n`
      + "line 3: warning AI-9 bare-key /params/_meta/turnId a bare `_meta.turnId` is not SEP-2817's convention; put `turnId` inside the envelope\n"
      + "checked 2 messages: 1 errors, 1 warnings, 0 unparseable (1 lines over --max-line-bytes)\n";
    const js = measured("node", [join(project, "node_modules/mcp-provenance/dist/bin/mcp-provenance.mjs"), "check", file], project);
    const rust = measured(native, ["check", file], project);
    for (const [name, run, limit] of [["npm", js, 128 * 1024], ["native", rust, 16 * 1024]]) {
      assert.equal(run.out, expected, name);
      assert.equal(run.code, 1, name);
      assert.ok(run.maxRssKib > 0 && run.maxRssKib < limit, `${name} check peaked at ${run.maxRssKib} KiB (bound ${limit})`);
      console.log(`# ${name} check of a 1 GiB line: peak ${(run.maxRssKib / 1024).toFixed(1)} MiB`);
    }
  } finally {
    rmSync(file, { force: true });
  }
});
