// `mcp-provenance probe` from the packed package, as a CI job runs it (issue
// 19): its help and usage errors, severities from the core's table, one JSON
// document, headers, stdio servers, connection errors said plainly, and a
// hostile server (escapes in names and messages, an event that never ends, a
// 50 MB answer, silence) that it must survive in bounded time and memory,
// printing nothing a terminal would obey. Each run's peak memory is measured;
// a hang would fail by the runner's timeout, never by a timed assertion.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { readBody, start, stop } from "../examples/prototype/http.mjs";
import { table } from "../pkg/dist/table.mjs";
import { OPTIONS, PROBE_USAGE, RULES } from "../pkg/dist/lib/cli/probe.mjs";
import { linkScope, measured, root, userProject } from "./user.mjs";

const KEY = "io.modelcontextprotocol/aiInvocation";
const HOSTILE = join(root, "js-tests/fixtures/hostile-server.mjs");
const EVERYTHING = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
/** What the hostile server's first tool is named, and the error each call of it gets. */
const FORGED = "\u001b[2J\u001b[H12 passed, 0 failed";
const ESCAPES = `esc${FORGED}\u009b31m\u202e`;
const REFUSAL = `${FORGED}\u001b]0;pwned\u0007\u007f\u2028\u202eok`;
/** Characters a terminal obeys or that disguise text; output may hold none but the line feed. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;
/** The most memory a probe of a hostile server may take, in KiB. */
const PEAK_KIB = 200_000;
let project;
let bin;

before(() => {
  project = userProject("probe");
  bin = join(project, "node_modules", "mcp-provenance", "dist", "bin", "mcp-provenance.mjs");
});

test("without the MCP SDK's client beside it, probe says how to install it, exit 2", () => {
  // The package brings no client (an optional peer): this project has none yet.
  const run = probe("--url", "http://127.0.0.1:9/mcp");
  assert.equal(run.code, 2);
  assert.equal(run.out, "");
  assert.match(run.err, /^mcp-provenance probe: probe talks to servers through the MCP SDK's client, which is not installed: npm install @modelcontextprotocol\/client@2 beside mcp-provenance, or run npx -p mcp-provenance -p @modelcontextprotocol\/client@2 mcp-provenance probe \.\.\.\nTry 'mcp-provenance probe --help'\.\n$/);
  // Its help needs no client.
  assert.equal(probe("--help").code, 0);
  // As a user who installed the client beside it has it, for the tests below.
  linkScope(project, "@modelcontextprotocol");
});
after(() => rmSync(project, { recursive: true, force: true }));

/**
 * `mcp-provenance probe ...args` from the packed package: exit code, output,
 * error, peak memory (KiB) and seconds taken.
 */
function probe(...args) {
  const began = performance.now();
  const run = measured(process.execPath, [bin, "probe", ...args], project);
  return { ...run, seconds: (performance.now() - began) / 1000 };
}

/** The row of check `id` in the text table: its level and status. */
function row(out, id) {
  const match = new RegExp(`^${id} +\\S+ +(\\S+) +(\\S+) `, "m").exec(out);
  return match && { level: match[1], status: match[2] };
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort() {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the words", () => {
  test("--help and -h print the usage, which names every option and the exit codes, and exit 0", () => {
    for (const flag of ["--help", "-h"]) {
      const { code, out, err } = probe(flag);
      assert.equal(code, 0);
      assert.equal(out, `${PROBE_USAGE}\n`);
      assert.equal(err, "");
    }
    for (const name of Object.keys(OPTIONS)) assert.match(PROBE_USAGE, new RegExp(`--${name}\\b`), name);
    assert.match(PROBE_USAGE, /-- <command> \[args\.\.\.\]/);
    assert.match(PROBE_USAGE, /Exit: 0 no failure.*1 a check failed.*or nothing could be tested,\s+2 bad usage or no\s+server\s+to probe/s);
  });

  test("bad usage says why and where to read more, and exits 2", () => {
    const cases = [
      [[], /needs --url <http:\/\/host\/mcp> or -- <command>/],
      [["--bogus"], /--bogus/],
      [["--url", "ftp://x/"], /--url takes an http:\/\/ or https:\/\/ URL/],
      [["--url", "http://a/", "--", "node"], /not both/],
      [["--url", "http://a/", "--format", "xml"], /--format is text or json/],
      [["--url", "http://a/", "--timeout", "0"], /--timeout takes a whole number/],
      [["--url", "http://a/", "--max-response-bytes", "1e3"], /--max-response-bytes takes a whole number/],
      [["--url", "http://a/", "--header", "no colon"], /--header takes "Name: value"/],
      [["--url", "http://a/", "--header", "Bad Name: v"], /--header takes "Name: value"/],
      [["--url", "http://a/", "--arguments", "[1]"], /--arguments takes a JSON object/],
      [["stray"], /a command to start goes after --/],
      [["--"], /a command to start is needed after --/],
    ];
    for (const [args, why] of cases) {
      const { code, out, err } = probe(...args);
      assert.equal(code, 2, args.join(" "));
      assert.equal(out, "");
      assert.match(err, /^mcp-provenance probe: .+\nTry 'mcp-provenance probe --help'\.\n$/, args.join(" "));
      assert.match(err, why, args.join(" "));
    }
  });
});

describe("severities and formats, against a server that echoes the whole envelope", () => {
  let leaky;
  before(async () => {
    leaky = await start(join(root, "js-tests/fixtures/leaky-server.mjs"));
  });
  after(() => stop(leaky.child));

  test("each check is the conformance suite's, with its rule and its level: the rule's in the core's table, but where the upstream text has no keyword", () => {
    const { code, out } = probe("--url", leaky.url, "--format", "json");
    assert.equal(code, 0);
    const { checks } = JSON.parse(out);
    assert.deepEqual(checks.map((c) => c.id), Object.keys(RULES));
    for (const check of checks) {
      assert.equal(check.rule, RULES[check.id], check.id);
      const level = check.id === "apps-initiator-server-absent-same-as-unknown" ? "SHOULD" : table.levels[table.rules.indexOf(check.rule)];
      assert.equal(check.level, level, check.id);
    }
  });

  test("its echo is a warning (the SEP's SHOULD NOT), named with the tool and the members; --strict fails on it", () => {
    const { code, out } = probe("--url", leaky.url);
    assert.equal(code, 0);
    assert.deepEqual(row(out, "sep-2817-server-no-echo"), { level: "SHOULD", status: "WARNING" });
    assert.deepEqual(row(out, "sep-2817-server-same-answer-with-envelope"), { level: "MUST", status: "SUCCESS" });
    assert.ok(out.includes(`\nsep-2817-server-no-echo: tools/call "ping" with a full envelope: echoed ["userIntent","invocationReason","model"] in result._meta["${KEY}"]\n`), out);
    assert.match(out, /\n\n6 passed, 0 failed, 1 warnings \(0 of them untestable\)\n$/);
    assert.equal(probe("--url", leaky.url, "--strict").code, 1);
  });

  test("--format json writes one JSON document and nothing else: the URL, the tool, the checks, a summary", () => {
    const { out } = probe("--url", leaky.url, "--format", "json");
    const document = JSON.parse(out);
    assert.deepEqual(Object.keys(document), ["url", "tool", "checks", "summary"]);
    assert.equal(document.url, leaky.url);
    assert.equal(document.tool, "ping");
    assert.deepEqual(document.summary, { passed: 6, failed: 0, warnings: 1, untestable: 0 });
    const echo = document.checks.find((c) => c.id === "sep-2817-server-no-echo");
    assert.deepEqual(echo.details, {
      tool: "ping",
      echoedTurnId: true,
      echoed: [{ call: 'tools/call "ping" with a full envelope', members: ["userIntent", "invocationReason", "model"], in: `result._meta["${KEY}"]` }],
    });
  });
});

describe("a hostile server", { timeout: 120_000 }, () => {
  let hostile;
  before(async () => {
    hostile = await start(HOSTILE);
  });
  after(() => stop(hostile.child));

  test("its escapes, in a tool name and an error message, are printed as visible escapes, and kept valid in JSON", () => {
    const text = probe("--url", hostile.url, "--tool", ESCAPES, "--timeout", "2000");
    assert.equal(text.code, 1);
    assert.doesNotMatch(text.out, RAW);
    assert.ok(text.out.includes("with tool esc\\u{1b}[2J\\u{1b}[H12 passed, 0 failed\\u{9b}31m\\u{202e}\n"), text.out);
    assert.ok(text.out.includes('was answered with error -32603: "\\u{1b}[2J\\u{1b}[H12 passed, 0 failed\\u{1b}]0;pwned\\u{7}\\u{7f}\\u{2028}\\u{202e}ok", not a result'), text.out);
    assert.deepEqual(row(text.out, "sep-2817-server-same-answer-with-envelope"), { level: "MUST", status: "FAILURE" });
    assert.match(text.out, /\n0 passed, 5 failed, 2 warnings \(7 of them untestable\); nothing could be tested\n$/);

    const json = probe("--url", hostile.url, "--tool", ESCAPES, "--timeout", "2000", "--format", "json");
    assert.doesNotMatch(json.out, RAW);
    const document = JSON.parse(json.out);
    assert.equal(document.tool, ESCAPES);
    assert.ok(document.checks[0].errorMessage.includes(`"${REFUSAL}", not a result`));
  });

  test("the members it leaks are named with where they are: in result._meta[key] and in the content", () => {
    const { code, out } = probe("--url", hostile.url, "--tool", "leaky-content");
    assert.equal(code, 0);
    assert.doesNotMatch(out, RAW);
    assert.ok(out.includes(`\nsep-2817-server-no-echo: tools/call "leaky-content" with a full envelope: echoed ["model"] in result._meta["${KEY}"]; ["userIntent"] in result.content; tools/call "leaky-content" with a full envelope: result._meta["${KEY}"] holds ["\\u{1b}[2Jnote"] besides turnId\n`), out);
  });

  for (const tool of ["sse-bomb", "huge"]) {
    test(`its ${tool} answer is cut at --max-response-bytes and fails the call, in bounded time and memory`, (t) => {
      const { code, out, maxRssKib, seconds } = probe("--url", hostile.url, "--tool", tool, "--timeout", "2000");
      t.diagnostic(`${tool} over HTTP: peak ${maxRssKib} KiB, ${seconds.toFixed(1)} s`);
      assert.equal(code, 1);
      assert.ok(out.includes(`: Not testable: tools/call "${tool}" without _meta got no answer (the server's answer was over 4194304 bytes), so nothing can be compared with it\n`), out);
      assert.ok(maxRssKib < PEAK_KIB, `peak ${maxRssKib} KiB`);
    });
  }

  test("a call it never answers times out, and then nothing can be compared with it: every check is untestable", (t) => {
    const { code, out, maxRssKib, seconds } = probe("--url", hostile.url, "--tool", "slow", "--timeout", "2000");
    t.diagnostic(`slow over HTTP: peak ${maxRssKib} KiB, ${seconds.toFixed(1)} s`);
    assert.equal(code, 1);
    assert.ok(out.includes(': Not testable: tools/call "slow" without _meta got no answer (timed out after 2000 ms), so nothing can be compared with it\n'), out);
    assert.deepEqual(row(out, "sep-2817-server-no-echo"), { level: "SHOULD", status: "WARNING" });
  });

  test("the bound holds for each event of an event stream, not for the stream: events split across reads count alike", () => {
    const within = probe("--url", hostile.url, "--tool", "chatty", "--max-response-bytes", "4000");
    assert.equal(within.code, 0, within.out);
    assert.match(within.out, /\n7 passed, 0 failed, 0 warnings \(0 of them untestable\)\n$/);
    const over = probe("--url", hostile.url, "--tool", "chatty", "--max-response-bytes", "1000");
    assert.ok(over.out.includes("the server's answer was over 1000 bytes"), over.out);
  });
});

describe("over stdio", { timeout: 120_000 }, () => {
  test("probe -- <command> passes the official everything server, started on stdio", () => {
    const text = probe("--", process.execPath, EVERYTHING, "stdio");
    assert.equal(text.code, 0, text.out + text.err);
    assert.ok(text.out.startsWith(`probing ${process.execPath} ${EVERYTHING} stdio with tool `), text.out);
    assert.match(text.out, /\n7 passed, 0 failed, 0 warnings \(0 of them untestable\)\n$/);
    const { command, checks } = JSON.parse(probe("--format", "json", "--", process.execPath, EVERYTHING, "stdio").out);
    assert.deepEqual(command, [process.execPath, EVERYTHING, "stdio"]);
    assert.deepEqual(checks.filter((c) => c.status === "FAILURE"), []);
  });

  for (const tool of ["huge", "sse-bomb"]) {
    test(`a line of ${tool} longer than --max-response-bytes fails the call, in bounded memory`, (t) => {
      const { code, out, maxRssKib, seconds } = probe("--tool", tool, "--timeout", "2000", "--", process.execPath, HOSTILE, "--stdio");
      t.diagnostic(`${tool} over stdio: peak ${maxRssKib} KiB, ${seconds.toFixed(1)} s`);
      assert.equal(code, 1);
      assert.ok(out.includes(`: Not testable: tools/call "${tool}" without _meta got no answer (the server's answer was over 4194304 bytes), so nothing can be compared with it\n`), out);
      assert.ok(maxRssKib < PEAK_KIB, `peak ${maxRssKib} KiB`);
    });
  }

  test("what the server writes on standard error does not reach the output; a server that exits says so, with it", () => {
    const quiet = probe("--tool", "leaky-content", "--", process.execPath, HOSTILE, "--stdio");
    assert.equal(quiet.code, 0, quiet.err);
    assert.doesNotMatch(quiet.out + quiet.err, /hostile server on stdio/);
    const dead = probe("--", process.execPath, "-e", 'console.error("no config\\u001b[2J"); process.exit(3)');
    assert.equal(dead.code, 2);
    assert.match(dead.err, /^mcp-provenance probe: cannot probe .+: initialize: the server closed the connection; its standard error ended: no config\\u\{1b\}\[2J\n$/);
    const missing = probe("--", "no-such-command-7d1f");
    assert.equal(missing.code, 2);
    assert.match(missing.err, /cannot start no-such-command-7d1f: no such file or command\n$/);
  });
});

describe("connecting", () => {
  test("--header is sent with every request", async () => {
    const guarded = await start(HOSTILE, ["--token", "sesame"]);
    try {
      const without = probe("--url", guarded.url, "--tool", "leaky-content");
      assert.equal(without.code, 2);
      assert.match(without.err, /^mcp-provenance probe: cannot probe .+: initialize: HTTP 401 Unauthorized: "a token is needed"\n$/);
      const withIt = probe("--url", guarded.url, "--tool", "leaky-content", "--header", "Authorization: Bearer sesame", "--header", "X-Other: 1");
      assert.equal(withIt.code, 0, withIt.err);
      assert.match(withIt.out, /\n6 passed, 0 failed, 1 warnings \(0 of them untestable\)\n$/);
    } finally {
      await stop(guarded.child);
    }
  });

  test("a connection that fails says what failed, never just \"fetch failed\", and exits 2", async () => {
    const hostile = await start(HOSTILE);
    try {
      const port = new URL(hostile.url).port;
      const cases = [
        [`http://127.0.0.1:${await closedPort()}/mcp`, /initialize: connection refused \(127\.0\.0\.1:\d+\)\n$/],
        ["http://no-such-host.invalid/mcp", /initialize: DNS lookup of no-such-host\.invalid failed \((ENOTFOUND|EAI_AGAIN)\)\n$/],
        [`https://127.0.0.1:${port}/mcp`, /initialize: TLS: .+\n$/],
      ];
      for (const [url, why] of cases) {
        const { code, out, err } = probe("--url", url, "--timeout", "5000");
        assert.equal(code, 2, url);
        assert.equal(out, "");
        assert.match(err, new RegExp(`^mcp-provenance probe: cannot probe ${url.replaceAll(".", "\\.")}: `));
        assert.match(err, why);
        assert.doesNotMatch(err, /fetch failed\n$/);
      }
    } finally {
      await stop(hostile.child);
    }
  });
});

/**
 * `mcp-provenance probe ...args` from the packed package, run while this
 * process goes on (serving a server of the test's own): exit code, output.
 */
function probeAside(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, "probe", ...args], { cwd: project, maxBuffer: 2 ** 26 }, (error, out, err) => resolve({ code: error?.code ?? 0, out, err }));
  });
}

/**
 * An MCP server of the test's own, in plain node:http, that lists `tools`,
 * serves a call of any it lists (and refuses any other name), and counts
 * every tools/call it gets, by name: `calls`.
 */
async function countingServer(tools) {
  const calls = [];
  const http = createHttpServer(async (req, res) => {
    if (req.method !== "POST") return res.writeHead(405).end();
    const { id, method, params } = JSON.parse(await readBody(req));
    if (id === undefined) return res.writeHead(202).end();
    if (method === "tools/call") calls.push(params.name);
    const known = tools.some((tool) => tool.name === params?.name);
    const answer = {
      initialize: { result: { protocolVersion: params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "counting", version: "1.0.0" } } },
      "tools/list": { result: { tools } },
      "tools/call": known ? { result: { content: [{ type: "text", text: "done" }] } } : { error: { code: -32602, message: "no such tool" } },
    }[method] ?? { error: { code: -32601, message: "no such method" } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, ...answer }));
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${http.address().port}/mcp`, calls, close: () => http.close() };
}

describe("the tools it calls: the one named, or one annotated read-only, never another (issue 30, 13)", () => {
  const schema = { type: "object" };
  const destructive = { name: "delete_all_rows", inputSchema: schema, annotations: { destructiveHint: true, readOnlyHint: false } };
  const unannotated = { name: "send_invoice", inputSchema: schema };
  const readOnly = (name) => ({ name, inputSchema: schema, annotations: { readOnlyHint: true } });
  let server;
  after(() => server?.close());

  test("a server with a destructive tool and none read-only gets no tools/call: nothing is tested, every check fails as untestable, exit 1", async () => {
    server = await countingServer([destructive, unannotated]);
    const { code, out } = await probeAside("--url", server.url);
    assert.deepEqual(server.calls, []);
    assert.equal(code, 1, "nothing could be tested");
    assert.ok(out.startsWith(`probing ${server.url} without calling a tool: no tool was named with --tool, none is named test_simple_text and none is annotated readOnlyHint: true, so nothing can be tested\n`), out);
    assert.ok(out.includes(`\n${Object.keys(RULES).join(", ")}: Not testable: no tool was named, none is named test_simple_text and none is annotated readOnlyHint: true`), out);
    assert.match(out, /\n0 passed, 5 failed, 2 warnings \(7 of them untestable\); nothing could be tested\n$/);
    const document = JSON.parse((await probeAside("--url", server.url, "--format", "json")).out);
    assert.equal(document.tool, null);
    assert.ok(document.checks.every((c) => c.details.untestable === true));
    assert.deepEqual(server.calls, []);
    server.close();
  });

  test("with --tool, that tool alone of those the server lists is called", async () => {
    server = await countingServer([destructive, unannotated, readOnly("list_rows")]);
    const { code, out } = await probeAside("--url", server.url, "--tool", "send_invoice");
    assert.equal(code, 0, out);
    const listed = server.calls.filter((name) => name !== "probe-no-such-tool-7d1f");
    assert.ok(listed.length >= 10, `called ${listed.length} times`);
    assert.deepEqual(new Set(listed), new Set(["send_invoice"]));
    server.close();
  });

  test("without --tool, the first tool annotated readOnlyHint: true alone is called", async () => {
    server = await countingServer([destructive, unannotated, readOnly("list_rows"), readOnly("count_rows")]);
    const { code, out } = await probeAside("--url", server.url);
    assert.equal(code, 0, out);
    assert.ok(out.startsWith(`probing ${server.url} with tool list_rows\n`), out);
    const listed = server.calls.filter((name) => name !== "probe-no-such-tool-7d1f");
    assert.ok(listed.length >= 10, `called ${listed.length} times`);
    assert.deepEqual(new Set(listed), new Set(["list_rows"]));
    server.close();
  });

  test("without --tool, the conformance suite's test_simple_text goes before a read-only tool", async () => {
    server = await countingServer([destructive, readOnly("list_rows"), { name: "test_simple_text", inputSchema: schema }]);
    const { code, out } = await probeAside("--url", server.url);
    assert.equal(code, 0, out);
    assert.ok(out.startsWith(`probing ${server.url} with tool test_simple_text\n`), out);
    assert.deepEqual(new Set(server.calls.filter((name) => name !== "probe-no-such-tool-7d1f")), new Set(["test_simple_text"]));
    server.close();
  });

  test("the help says which tool it calls, and that it calls no other", () => {
    assert.match(PROBE_USAGE, /default: test_simple_text, the\s+conformance suite's test tool, when listed; else\s+the first tool the server annotates\s+readOnlyHint: true/);
    assert.match(PROBE_USAGE, /no other tool of the server/);
    assert.match(PROBE_USAGE, /it calls none: nothing can be tested, and it says so and exits 1/);
  });
});
