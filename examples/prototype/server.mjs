// The "employees" MCP server: Streamable HTTP on 127.0.0.1, data in SQLite,
// and an audit record for every request it receives, stored in its own
// SQLite database (write-ahead logged: a record committed survives a crash).
// A request that cannot be audited is refused, never served unaudited.
// Replies echo the request's turnId, and only that.
//
//   node examples/prototype/server.mjs --data <dir> [--port <n>]
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

import { auditRecord, echoTurnId, sanitize } from "../../pkg/index.mjs";
import { readBody } from "./http.mjs";

const { values: options } = parseArgs({ options: { data: { type: "string" }, port: { type: "string", default: "0" } } });
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
    initiator TEXT,
    valid INTEGER NOT NULL, diagnostics TEXT NOT NULL, changes TEXT NOT NULL
  )`);
  return db;
}

const insertRecord = audit.prepare(`INSERT INTO audit
  (received_at, session_id, principal, method, tool, request_id, turn_id, model, invocation_reason, user_intent,
   user_intent_redacted, initiator, valid, diagnostics, changes)
  VALUES (@receivedAt, @sessionId, @principal, @method, @tool, @requestId, @turnId, @model, @invocationReason,
   @userIntent, @userIntentRedacted, @initiator, @valid, @diagnostics, @changes)`);

/** Records one request as the server received it. */
function record(request, sessionId) {
  const entry = auditRecord(request, { receivedAt: new Date().toISOString(), sessionId });
  const { changes } = sanitize(request);
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
    initiator: attested.initiator ?? null,
    valid: Number(!entry.diagnostics.some((d) => d.severity === "error")),
    diagnostics: JSON.stringify(entry.diagnostics),
    changes: JSON.stringify(changes),
  });
}

/**
 * A transport in front of the SDK's: every message that arrives is audited
 * before the server sees it, and every reply echoes its request's turnId.
 */
class AuditingTransport {
  #inner;
  #pending = new Map();

  constructor(inner) {
    this.#inner = inner;
  }

  get sessionId() { return this.#inner.sessionId; }
  set onclose(handler) { this.#inner.onclose = handler; }
  set onerror(handler) { this.#inner.onerror = handler; }
  set onmessage(handler) {
    this.#inner.onmessage = (message, extra) => {
      if (typeof message.method === "string") {
        try {
          record(message, this.#inner.sessionId);
        } catch (failure) {
          // Fail closed: what cannot be audited is not served. The log names the failure, not the request.
          console.error(`refused ${message.method}: the audit record could not be written (${failure?.code ?? failure?.name})`);
          if (message.id !== undefined) {
            this.#inner.send({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "the request could not be audited" } });
          }
          return;
        }
        if (message.id !== undefined) this.#pending.set(message.id, message);
      }
      handler(message, extra);
    };
  }
  start() { return this.#inner.start(); }
  close() { return this.#inner.close(); }
  send(message, options) {
    const request = this.#pending.get(message.id);
    if (request && ("result" in message || "error" in message)) {
      this.#pending.delete(message.id);
      message = echoTurnId(request, message);
    }
    return this.#inner.send(message, options);
  }
}

function mcpServer() {
  const server = new McpServer({ name: "employees", version: "1.0.0" });
  const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

  server.registerTool("list_tables", {
    description: "Lists the tables of the employees database.",
    inputSchema: {},
  }, () => text(employees.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all().map((row) => row.name)));

  server.registerTool("execute_query", {
    description: "Runs one read-only SELECT statement and returns at most 100 rows.",
    inputSchema: { query: z.string() },
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

const sessions = new Map();

const http = createServer(async (req, res) => {
  try {
    const sessionId = req.headers["mcp-session-id"];
    const body = req.method === "POST" ? JSON.parse(await readBody(req)) : undefined;
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport && req.method === "POST" && isInitializeRequest(body)) {
      const inner = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => sessions.set(id, inner),
      });
      inner.onclose = () => sessions.delete(inner.sessionId);
      await mcpServer().connect(new AuditingTransport(inner));
      transport = inner;
    }
    if (!transport) {
      res.writeHead(sessionId ? 404 : 400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no such session" } }));
      return;
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    if (!res.headersSent) res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `bad request: ${error.message}` } }));
  }
});

http.listen(Number(options.port), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`));
process.on("SIGTERM", () => { audit.close(); employees.close(); process.exit(0); });
