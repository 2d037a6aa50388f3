// The "employees" MCP server: Streamable HTTP on 127.0.0.1, data in SQLite,
// and an audit record for every request it receives, stored in its own
// SQLite database (write-ahead logged: a record committed survives a crash).
// A request that cannot be audited is refused, never served unaudited.
// Replies echo the request's turnId, and only that. Auditing and echoing are
// mcp-provenance/sdk's provenanceTransport around the SDK's own transport.
//
// Nothing stays past its request: a request is forgotten once it is
// answered, cancelled (notifications/cancelled), or its HTTP exchange
// closes, and an HTTP answer ends once each request in it is answered or
// cancelled. A body past --max-body-bytes is answered 413 unread.
// GET /health tells how many sessions and pending requests there are.
//
//   node examples/prototype/server.mjs --data <dir> [--port <n>] [--max-body-bytes <n>]
// prints "listening on http://127.0.0.1:<port>/mcp" once it is ready.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import Database from "better-sqlite3";
import { z } from "zod";

import { sanitize } from "mcp-provenance";
import { provenanceTransport } from "mcp-provenance/sdk";
import { MAX_BODY_BYTES, readBody } from "./http.mjs";

const { values: options } = parseArgs({
  options: {
    data: { type: "string" },
    port: { type: "string", default: "0" },
    "max-body-bytes": { type: "string", default: String(MAX_BODY_BYTES) },
  },
});
const dataDir = options.data ?? process.cwd();

const employees = seedEmployees(join(dataDir, "employees.db"));
const audit = openAudit(join(dataDir, "audit.db"));

/** The employees table, created afresh from the bundled CSV, then opened read-only. */
function seedEmployees(path) {
  const db = new Database(path);
  db.exec("DROP TABLE IF EXISTS employees; CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, department TEXT, title TEXT, salary INTEGER, hired_on TEXT)");
  const [, ...rows] = readFileSync(new URL("data/employees.csv", import.meta.url), "utf8").trim().split("\n");
  const insert = db.prepare("INSERT INTO employees VALUES (?, ?, ?, ?, ?, ?)");
  db.transaction(() => rows.forEach((row) => insert.run(...row.split(","))))();
  db.close();
  return new Database(path, { readonly: true });
}

/** The audit store: one column per field of an audit record. */
function openAudit(path) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at TEXT, session_id TEXT, principal TEXT,
    method TEXT NOT NULL, tool TEXT, request_id TEXT,
    turn_id TEXT, model TEXT, invocation_reason TEXT, user_intent TEXT, user_intent_redacted INTEGER,
    correlation TEXT, trace_id TEXT,
    initiator TEXT,
    valid INTEGER NOT NULL, diagnostics TEXT NOT NULL, changes TEXT NOT NULL
  )`);
  return db;
}

const insertRecord = audit.prepare(`INSERT INTO audit
  (received_at, session_id, principal, method, tool, request_id, turn_id, model, invocation_reason, user_intent,
   user_intent_redacted, correlation, trace_id, initiator, valid, diagnostics, changes)
  VALUES (@receivedAt, @sessionId, @principal, @method, @tool, @requestId, @turnId, @model, @invocationReason,
   @userIntent, @userIntentRedacted, @correlation, @traceId, @initiator, @valid, @diagnostics, @changes)`);

/** Stores one request's audit record, with what sanitize would change in it. */
function store(entry, request) {
  const { clientAsserted: asserted, hostAttested: attested, witnessed } = entry;
  insertRecord.run({
    receivedAt: witnessed.receivedAt ?? null,
    sessionId: witnessed.sessionId ?? null,
    principal: witnessed.principal ?? null,
    method: entry.method,
    tool: entry.tool ?? null,
    requestId: entry.requestId === undefined ? null : JSON.stringify(entry.requestId),
    turnId: asserted.turnId ?? null,
    model: asserted.model ?? null,
    invocationReason: asserted.invocationReason ?? null,
    userIntent: asserted.userIntent ?? null,
    userIntentRedacted: asserted.userIntentRedacted === undefined ? null : Number(asserted.userIntentRedacted),
    // The ids the client sent (COR-1), and the trace id apart, to join a record to its trace.
    correlation: asserted.correlation === undefined ? null : JSON.stringify(asserted.correlation),
    traceId: asserted.correlation?.find((id) => id.kind === "trace")?.value ?? null,
    initiator: attested.initiator ?? null,
    valid: Number(entry.valid),
    diagnostics: JSON.stringify(entry.diagnostics),
    changes: JSON.stringify(sanitize(request).changes),
  });
}

/**
 * The SDK's transport with provenance (mcp-provenance/sdk): every request is
 * audited on the wire before the server sees it, a request that cannot be
 * audited is refused, and every reply echoes its request's turnId.
 */
function auditing(inner) {
  return provenanceTransport(inner, {
    audit: (record, _report, request) => {
      try {
        store(record, request);
      } catch (failure) {
        // The log names the failure, not the request; the transport refuses the request.
        console.error(`refused ${record.method}: the audit record could not be written (${failure?.code ?? failure?.name})`);
        throw failure;
      }
    },
    echo: true,
  });
}

/**
 * A transport in front of the auditing one that holds each request until it
 * is answered, cancelled, or its HTTP exchange is over (`forget`), and ends
 * an HTTP answer once each request in it is settled.
 */
class Exchanges {
  #inner;
  #transport;
  /** Request ids not yet settled. */
  #pending = new Set();
  /** Request id → the ids of the requests that share its HTTP answer. */
  #exchanges = new Map();

  constructor(inner) {
    this.#inner = inner;
    this.#transport = auditing(inner);
  }

  get sessionId() { return this.#transport.sessionId; }
  get pending() { return this.#pending.size; }
  get onclose() { return this.#transport.onclose; }
  set onclose(handler) { this.#transport.onclose = handler; }
  get onerror() { return this.#transport.onerror; }
  set onerror(handler) { this.#transport.onerror = handler; }
  set onmessage(handler) {
    this.#transport.onmessage = (message, extra) => {
      if (typeof message.method === "string" && message.id !== undefined) this.#pending.add(message.id);
      handler(message, extra);
      // A cancelled request gets no answer (MCP): it is settled here.
      if (message.method === "notifications/cancelled") this.#settle(message.params?.requestId);
    };
  }
  start() { return this.#transport.start(); }
  close() { return this.#transport.close(); }
  async send(message, options) {
    await this.#transport.send(message, options);
    if ("result" in message || "error" in message) this.#settle(message.id);
  }

  /** The requests of one HTTP exchange, by id: its answer ends when each is settled. */
  expect(ids) {
    for (const id of ids) this.#exchanges.set(id, ids);
  }

  /** The HTTP exchange of these requests is over: nothing of them is kept. */
  forget(ids) {
    for (const id of ids) {
      this.#pending.delete(id);
      if (this.#exchanges.get(id) === ids) this.#exchanges.delete(id);
    }
  }

  /** Request `id` is answered or cancelled; once all of its exchange are, that answer ends. */
  #settle(id) {
    const ids = this.#exchanges.get(id);
    this.#pending.delete(id);
    if (ids && ids.every((other) => !this.#pending.has(other))) {
      this.forget(ids);
      this.#inner.closeSSEStream(id);
    }
  }
}

function mcpServer() {
  const server = new McpServer({ name: "employees", version: "1.0.0" });
  const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

  server.registerTool("list_tables", {
    description: "Lists the tables of the employees database.",
    inputSchema: {},
    // Read-only tools say so: a checker (`mcp-provenance probe`) calls no other.
    annotations: { readOnlyHint: true },
  }, () => text(employees.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all().map((row) => row.name)));

  server.registerTool("execute_query", {
    description: "Runs one read-only SELECT statement and returns at most 100 rows.",
    inputSchema: { query: z.string() },
    annotations: { readOnlyHint: true },
  }, ({ query }) => {
    let statement;
    try {
      statement = /^\s*select\b/i.test(query) ? employees.prepare(query) : undefined;
    } catch (error) {
      return { isError: true, content: [{ type: "text", text: `the query could not be prepared: ${error.message}` }] };
    }
    if (!statement?.reader || !statement.readonly) {
      return { isError: true, content: [{ type: "text", text: "refused: only a single read-only SELECT statement may run" }] };
    }
    return text(statement.all().slice(0, 100));
  });

  server.registerTool("refresh_dashboard", {
    description: "Recomputes the headcount dashboard.",
    inputSchema: { department: z.string().optional() },
    _meta: { ui: { visibility: ["model", "app"] } },
  }, ({ department }) => text(department
    ? employees.prepare("SELECT department, count(*) AS headcount FROM employees WHERE department = ? GROUP BY department").all(department)
    : employees.prepare("SELECT department, count(*) AS headcount FROM employees GROUP BY department ORDER BY department").all()));

  return server;
}

/** Session id → its transports: the SDK's, and the one the server connects to (Exchanges). */
const sessions = new Map();

/** The ids of the requests in a POST body. */
const requestIds = (body) => [body].flat().flatMap((m) => (typeof m?.method === "string" && m.id !== undefined ? [m.id] : []));

const reply = (res, status, message) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(message));
};

const http = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    const pending = [...sessions.values()].reduce((sum, { exchanges }) => sum + exchanges.pending, 0);
    return reply(res, 200, { sessions: sessions.size, pending });
  }
  let body;
  try {
    body = req.method === "POST" ? JSON.parse(await readBody(req, Number(options["max-body-bytes"]))) : undefined;
  } catch (error) {
    const tooLarge = error?.code === "body-too-large";
    res.setHeader("connection", "close");
    return reply(res, tooLarge ? 413 : 400, { jsonrpc: "2.0", id: null, error: tooLarge ? { code: -32600, message: error.message } : { code: -32700, message: "the body is not JSON" } });
  }
  try {
    const sessionId = req.headers["mcp-session-id"];
    let session = sessionId ? sessions.get(sessionId) : undefined;
    if (!session && req.method === "POST" && isInitializeRequest(body)) {
      const inner = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => sessions.set(id, session),
      });
      session = { inner, exchanges: new Exchanges(inner) };
      inner.onclose = () => sessions.delete(inner.sessionId);
      await mcpServer().connect(session.exchanges);
    }
    if (!session) return reply(res, sessionId ? 404 : 400, { jsonrpc: "2.0", id: null, error: { code: -32000, message: "no such session" } });
    const ids = requestIds(body);
    session.exchanges.expect(ids);
    res.once("close", () => session.exchanges.forget(ids));
    await session.inner.handleRequest(req, res, body);
  } catch (error) {
    if (res.headersSent) res.destroy();
    else reply(res, 500, { jsonrpc: "2.0", id: null, error: { code: -32603, message: `the server failed: ${error?.name}` } });
  }
});

http.listen(Number(options.port), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
process.on("SIGTERM", () => { audit.close(); employees.close(); process.exit(0); });
