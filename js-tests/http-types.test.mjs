// mcp-provenance/http as its users meet it in their editor and its doc
// comments: its declarations under `tsc --strict` with what they are used
// with (node:http, the MCP SDK's transports and handlers, for import and for
// require), lines marked @ts-expect-error failing as they must; and the
// example in each doc comment of its modules, run as written, its assertions
// holding; and the CommonJS entry.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { exec, root } from "./user.mjs";

const USAGE = `
import { createServer, type IncomingMessage } from "node:http";
import { exchangeOf, jsonLinesSink, provenanceFetch, provenanceMiddleware, type AccountSink, type Exchange, type JsonLinesSink, type MetricsHooks, type MiddlewareCode } from "mcp-provenance/http";
import { otelMetrics, type MeterLike } from "mcp-provenance/otel";
import { metrics } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { MessageAccount, OutcomeAccount, RefusalCode } from "mcp-provenance/gateway";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { McpHttpHandler } from "@modelcontextprotocol/server";

/** Holds when \`A\` and \`B\` are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <A, B>(_: Same<A, B>) => {};

const records: MessageAccount[] = [];
const outcomes: OutcomeAccount[] = [];
// The sink gets each message's account, then the exchange's outcome: \`kind\` tells which.
const audit: AccountSink = async (account, line) => {
  if (account.kind === "outcome") outcomes.push(account);
  else records.push(account);
  console.log(line.length);
};
// What each request got: a call the app refused reads as its error, with its code.
const refusedCodes: (number | undefined)[] = outcomes.flatMap((outcome) => outcome.requests.filter((got) => got.answer === "error").map((got) => got.code));
// @ts-expect-error: a request got a result, an error, or no answer seen
const served: OutcomeAccount["requests"][number]["answer"] = "served";
// @ts-expect-error: an outcome has no record
const noRecord = (outcome: OutcomeAccount) => outcome.record;
const provenance = provenanceMiddleware({ policy: { userIntent: "redact" }, liftLegacy: true, maxBodyBytes: 1 << 20, maxAnswerBytes: 1 << 24, maxSessions: 100, echo: true, paths: ["/mcp", "/servers/*/mcp"], audit });
const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
// Node's own request and answer, and the SDK's authenticated request, are what it takes.
createServer((req: IncomingMessage & { auth?: AuthInfo }, res) => provenance(req, res, () => transport.handleRequest(req, res)));
provenanceMiddleware({ principal: (req) => req.auth?.clientId });

declare const handler: McpHttpHandler;
const mcp = provenanceFetch(handler.fetch, { principal: (_request, options?) => options?.authInfo?.clientId });
// The wrapped handler takes what the handler takes beside the request, and answers a Response.
same<Parameters<typeof mcp>, Parameters<typeof handler.fetch>>(true);
same<ReturnType<typeof mcp>, Promise<Response>>(true);
const plain = provenanceFetch((request: Request) => new Response(request.body));
same<Parameters<typeof plain>, [request: Request]>(true);

declare const request: Request;
const exchange: Exchange | undefined = exchangeOf(request);
if (exchange !== undefined) {
  const why: MiddlewareCode | RefusalCode | undefined = exchange.refused;
  const ids: readonly string[] = exchange.awaiting;
  const session: string | undefined = exchange.sessionId;
  if (exchange.filtered !== undefined && "forward" in exchange.filtered) {
    const bytes: Uint8Array = exchange.filtered.forward;
    console.log(bytes.length);
  }
  console.log(why, ids, session, exchange.batch, exchange.filterMs, exchange.accounts.length, exchange.receivedAt, exchange.principal);
}

// @ts-expect-error: a limit is a number of bytes
provenanceMiddleware({ maxBodyBytes: "1mb" });
// @ts-expect-error: echo is on or off
provenanceMiddleware({ echo: "no" });
provenanceMiddleware({ auditArguments: "drop" });
// @ts-expect-error: a line's arguments are kept, digested or dropped
provenanceMiddleware({ auditArguments: true });
// @ts-expect-error: the endpoints are a list of paths
provenanceMiddleware({ paths: "/mcp" });
// @ts-expect-error: policy options go in \`policy\`
provenanceMiddleware({ userIntent: "redact" });
// @ts-expect-error: a handler answers a Response
provenanceFetch(async (_request: Request) => "ok");
// @ts-expect-error: a principal is text
provenanceMiddleware({ principal: () => 7 });
// A JSON-lines file is a sink, made from its path or named by it.
const lines: JsonLinesSink = jsonLinesSink("audit.jsonl");
const asSink: AccountSink = lines;
same<ReturnType<typeof lines>, Promise<void>>(true);
provenanceMiddleware({ audit: "audit.jsonl" });
provenanceFetch(handler.fetch, { audit: lines });
// @ts-expect-error: a sink is a function or a path
provenanceMiddleware({ audit: 7 });
// @ts-expect-error: a path is text
jsonLinesSink(new URL("file:///audit.jsonl"));
// The metrics: OpenTelemetry's, from the API's meter or an SDK's MeterProvider, or four functions of your own.
const otel: MetricsHooks = otelMetrics(metrics.getMeter("mcp-provenance"));
provenanceMiddleware({ metrics: otel, audit: "audit.jsonl" });
provenanceFetch(handler.fetch, { metrics: otelMetrics(new MeterProvider().getMeter("mcp-provenance")) });
const meterLike: MeterLike = metrics.getMeter("x");
const counted: string[] = [];
provenanceMiddleware({ metrics: {
  observe: (account) => counted.push(\`\${account.kind} \${account.refused ?? "forwarded"} \${account.changes.length}\`),
  refused: (code) => counted.push(code),
  failed: () => counted.push("failed"),
  filtered: (seconds: number) => counted.push(seconds.toFixed(6)),
} });
// @ts-expect-error: the metrics are four functions
provenanceMiddleware({ metrics: { observe() {} } });
// @ts-expect-error: an outcome is not a message's account
provenanceMiddleware({ metrics: { ...otel, observe: (account) => account.requests } });
// @ts-expect-error: otelMetrics takes a meter
otelMetrics("mcp-provenance");
// Sessions shared through Redis: a URL, or a URL with a key prefix and a bound of its own.
provenanceMiddleware({ sessions: "redis://127.0.0.1:6379/0" });
provenanceFetch(handler.fetch, { sessions: { url: "rediss://cache:6380/2", prefix: "orders:", timeoutMs: 200 } });
// @ts-expect-error: a store is named by its URL
provenanceMiddleware({ sessions: new URL("redis://127.0.0.1:6379") });
console.log(asSink, meterLike);
// @ts-expect-error: not a code of the middleware's
const notACode: MiddlewareCode = "nope";
const unreadable: MiddlewareCode = "answer-unreadable";
// @ts-expect-error: an exchange is read, not written
if (exchange) exchange.sessionId = "forged";
console.log(records, notACode, unreadable, refusedCodes, served, noRecord);
`;

let project;

before(() => {
  // Inside the repository, so that the package and the SDKs resolve as a user's project has them.
  mkdirSync(join(root, "target"), { recursive: true });
  project = mkdtempSync(join(root, "target", "http-types-"));
});

after(() => rmSync(project, { recursive: true, force: true }));

test("strict TypeScript pins the declarations, for import and for require", () => {
  writeFileSync(join(project, "usage.mts"), USAGE);
  writeFileSync(join(project, "usage.cts"), USAGE);
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", types: ["node"], lib: ["es2022", "dom"] },
    files: ["usage.mts", "usage.cts"],
  }));
  exec(join(root, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.json"], project);
});

/** The ```js examples of the doc comments of the http modules, and of otel.mjs (whose metrics they take), each with the file it is in. */
function docExamples() {
  const files = [join(root, "pkg/src/http.mjs"), join(root, "pkg/src/otel.mjs"), ...readdirSync(join(root, "pkg/src/lib/http")).map((name) => join(root, "pkg/src/lib/http", name))];
  return files.flatMap((file) => [...readFileSync(file, "utf8").matchAll(/^ \* ```js\n([\s\S]*?)^ \* ```$/gm)]
    .map(([, block]) => ({ file, source: block.split("\n").map((line) => line.replace(/^ \* ?/, "")).join("\n") })));
}

test("each public function's doc comment has an example, and each runs with its assertions holding", () => {
  const examples = docExamples();
  assert.deepEqual(examples.map(({ file }) => file.slice(root.length)).sort(), [
    "pkg/src/http.mjs", "pkg/src/lib/http/fetch.mjs", "pkg/src/lib/http/node.mjs", "pkg/src/lib/http/sinks.mjs",
    "pkg/src/otel.mjs", "pkg/src/otel.mjs", "pkg/src/otel.mjs",
  ]);
  writeFileSync(join(project, "strict-assert.mjs"), 'console.assert = (ok, ...why) => { if (!ok) throw new Error(`assertion failed ${why.join(" ")}`); };\n');
  for (const [index, { source }] of examples.entries()) {
    const file = join(project, `example-${index}.mjs`);
    writeFileSync(file, source);
    exec("node", ["--import", "./strict-assert.mjs", file], project);
  }
});

test("require gives the same middleware, on the filter module instance of the gateway entry", async () => {
  const require = createRequire(import.meta.url);
  const required = require("../pkg/dist/http.cjs");
  assert.deepEqual(Object.keys(required).sort(), ["exchangeOf", "jsonLinesSink", "provenanceFetch", "provenanceMiddleware"]);
  assert.deepEqual(Object.keys(await import("../pkg/dist/http.mjs")).sort(), ["exchangeOf", "jsonLinesSink", "provenanceFetch", "provenanceMiddleware"]);
  const handler = required.provenanceFetch(async (request) => new Response(await request.text(), { headers: { "content-type": "text/plain" } }), { policy: { userIntent: "redact" } });
  const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"text":"secret"}}}}}';
  const answer = await handler(new Request("http://localhost/mcp", { method: "POST", headers: { "content-type": "application/json" }, body }));
  assert.equal(await answer.text(), body.replace('{"text":"secret"}', '{"redacted":true}'));
  assert.match(readFileSync(join(root, "pkg/dist/http.cjs"), "utf8"), /require\("\.\/gateway\.cjs"\)/);
});
