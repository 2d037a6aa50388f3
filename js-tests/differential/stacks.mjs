// The server stacks js-tests/differential.test.mjs sends each forwarded body
// to, started once on 127.0.0.1, and what each read from it:
//
// - "express.json": `express.json()` as `createMcpExpressApp()` (SDK 1.x) sets it
//   up, its `req.body`;
// - "sdk1": SDK 1.x's StreamableHTTPServerTransport behind that same app, the
//   messages its `onmessage` is handed;
// - "sdk2": SDK 2.x's WebStandardStreamableHTTPServerTransport (the Node
//   request made a web one by @hono/node-server, as SDK 1.x's own Node
//   transport does), its `onmessage`;
// - "sdk2-handler": SDK 2.x's `createMcpHandler` (both eras: 2026-07-28
//   requests and the stateless fallback), the messages its per-request
//   transport hands the server, before the server lifts any `_meta` key;
// - "mcp" and "fastmcp": the Python stacks of python_stacks.py, at their
//   transport's parse and at their app's middleware.
//
// Transports are stateless (one per request) and answer in JSON; the Node
// ones answer each request themselves, so that no handler runs but the
// capture.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { Agent, createServer, request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";

import { getRequestListener } from "@hono/node-server";

/** Where the Python stacks run from: the venv `make python-wheel` makes. */
export const PYTHON = fileURLToPath(new URL("../../target/python/test/bin/python", import.meta.url));
const PYTHON_STACKS = fileURLToPath(new URL("./python_stacks.py", import.meta.url));

/** Every wait here is bounded. */
const REQUEST_TIMEOUT_MS = 5000;
const START_TIMEOUT_MS = 90_000;

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** diff id -> [{ stack, level, value }] for the Node stacks. */
const captured = new Map();
function capture(id, stack, level, value) {
  if (typeof id !== "string") return;
  if (!captured.has(id)) captured.set(id, []);
  captured.get(id).push({ stack, level, value });
}
/** A request's Node captures, forgotten once read. */
export function takeNodeCaptures(id) {
  const list = captured.get(id) ?? [];
  captured.delete(id);
  return list;
}

const isRequest = (message) => message !== null && typeof message === "object" && typeof message.method === "string" && "id" in message;

/** Answers a bare transport's request itself, once its onmessage returned. */
function answer(transport, message) {
  if (isRequest(message)) setImmediate(() => transport.send({ jsonrpc: "2.0", id: message.id, result: {} }).catch(() => {}));
}

async function listen(server) {
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return server;
}

/** express.json() and SDK 1.x's transport, as createMcpExpressApp() sets them up. */
async function sdk1() {
  const { createMcpExpressApp } = await import("@modelcontextprotocol/sdk/server/express.js");
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const app = createMcpExpressApp();
  // What express.json() parsed (it runs before any route).
  app.use((req, res, next) => {
    if (req.body !== undefined) capture(req.headers["x-diff-id"], "express.json", "transport", req.body);
    next();
  });
  app.post("/mcp", async (req, res) => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    transport.onmessage = (message, extra) => {
      capture(extra?.requestInfo?.headers?.["x-diff-id"], "sdk1", "transport", message);
      answer(transport, message);
    };
    transport.onerror = () => {};
    await transport.start();
    res.on("close", () => transport.close().catch(() => {}));
    await transport.handleRequest(req, res, req.body);
  });
  // express.json()'s refusals (415, 400, 413), answered quietly.
  app.use((error, req, res, _next) => {
    res.status(error.status ?? error.statusCode ?? 500).json({ error: error.type ?? "error" });
  });
  return listen(createServer(app));
}

/** SDK 2.x's web-standard transport, bare. */
async function sdk2() {
  const { WebStandardStreamableHTTPServerTransport } = await import("@modelcontextprotocol/server");
  const listener = getRequestListener(async (request) => {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    transport.onmessage = (message, extra) => {
      capture(extra?.request?.headers?.get("x-diff-id") ?? request.headers.get("x-diff-id"), "sdk2", "transport", message);
      answer(transport, message);
    };
    transport.onerror = () => {};
    await transport.start();
    try {
      return await transport.handleRequest(request);
    } finally {
      setImmediate(() => transport.close().catch(() => {}));
    }
  }, { overrideGlobalObjects: false });
  return listen(createServer(listener));
}

/** SDK 2.x's createMcpHandler: each server's transport hands it the message; the capture sits in between. */
async function sdk2Handler() {
  const { McpServer, createMcpHandler } = await import("@modelcontextprotocol/server");
  const handler = createMcpHandler(({ requestInfo }) => {
    const server = new McpServer({ name: "differential", version: "1.0.0" });
    server.registerTool("t", { description: "t" }, async () => ({ content: [] }));
    const connect = server.connect.bind(server);
    server.connect = async (transport) => {
      await connect(transport);
      const inner = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const headers = extra?.request?.headers ?? requestInfo?.headers;
        capture(headers?.get?.("x-diff-id"), "sdk2-handler", "transport", message);
        return inner?.call(transport, message, extra);
      };
    };
    return server;
  }, { onerror: () => {} });
  const listener = getRequestListener((request) => handler.fetch(request), { overrideGlobalObjects: false });
  const server = await listen(createServer(listener));
  server.once("close", () => handler.close().catch(() => {}));
  return server;
}

/** The Node stacks, each at its URL. */
export async function startNodeStacks() {
  const servers = { sdk1: await sdk1(), sdk2: await sdk2(), "sdk2-handler": await sdk2Handler() };
  const urls = Object.fromEntries(Object.entries(servers).map(([name, server]) => [name, `http://127.0.0.1:${server.address().port}/mcp`]));
  return {
    urls,
    close: () => {
      for (const server of Object.values(servers)) {
        server.closeAllConnections();
        server.close();
      }
    },
  };
}

/**
 * The Python stacks, from the venv of `make python-wheel`. Without it this throws: the test must
 * not pass having left Python out.
 */
export async function startPythonStacks() {
  if (!existsSync(PYTHON)) {
    throw new Error(`the Python stacks need ${PYTHON}: run \`make python-wheel\` first (it builds the wheel and installs FastMCP and mcp beside it)`);
  }
  const child = spawn(PYTHON, [PYTHON_STACKS], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, FASTMCP_LOG_LEVEL: "CRITICAL", PYTHONUNBUFFERED: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const ports = await new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`the Python stacks did not start in ${START_TIMEOUT_MS} ms:\n${stderr}`)), START_TIMEOUT_MS);
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const line = stdout.split("\n")[0];
      if (stdout.includes("\n")) {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(line));
        } catch {
          reject(new Error(`the Python stacks said ${JSON.stringify(line)}:\n${stderr}`));
        }
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the Python stacks exited (${code}) before they listened:\n${stderr}`));
    });
  });
  const base = Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, `http://127.0.0.1:${port}`]));
  return {
    urls: Object.fromEntries(Object.entries(base).map(([name, url]) => [name, `${url}/mcp`])),
    /** One request's captures at a Python stack (waiting up to `waitMs` for a notification's app-level one). */
    captures: async (name, id, waitMs = 0) => {
      const url = `${base[name]}/__captures?id=${encodeURIComponent(id)}&wait=${waitMs}`;
      let reply = await post(url, null, {}, "GET");
      // A kept-alive connection the server had just closed (after an answer it ends the
      // connection with): the GET changes nothing, so it is sent once more on a new one.
      if (reply.status === "error") reply = await post(url, null, {}, "GET");
      try {
        if (reply.status === 200) return JSON.parse(reply.body.toString("utf8"));
      } catch {
        // Said below.
      }
      const state = child.exitCode === null ? "running" : `exited (${child.exitCode})`;
      throw new Error(`the Python stacks (${state}) answered ${reply.status} for their captures (was ${PYTHON} removed under them?); their last words:\n${stderr}`);
    },
    stderr: () => stderr,
    close: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve();
      }, 5000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.stdin.end();
    }),
  };
}

/** Closes the kept-alive connections of `post`. */
export function closeClient() {
  agent.destroy();
}

/**
 * Sends a body with exactly the headers given (a header given as an array goes as that many
 * lines), and reads the answer whole: { status, body } or { status: "timeout" | "error" }.
 */
export function post(url, body, headers, method = "POST") {
  return new Promise((resolve) => {
    const sent = { ...headers };
    if (body !== null) sent["content-length"] = String(body.length);
    const request = httpRequest(url, { method, headers: sent, agent, timeout: REQUEST_TIMEOUT_MS }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode, body: Buffer.concat(chunks) }));
      response.on("error", () => resolve({ status: "error", body: Buffer.concat(chunks) }));
    });
    request.on("timeout", () => {
      request.destroy();
      resolve({ status: "timeout", body: Buffer.alloc(0) });
    });
    request.on("error", (error) => resolve({ status: "error", error, body: Buffer.alloc(0) }));
    request.end(body ?? undefined);
  });
}
