// mcp-provenance/http in front of the MCP TypeScript SDK's own servers,
// driven by the SDK's own clients over Streamable HTTP: 1.x's
// StreamableHTTPServerTransport in Express (stateful and stateless, JSON and
// event-stream answers, the body read by the transport itself or parsed by
// express.json() first), behind its bearer authentication; 2.x's node
// transport and `createMcpHandler` through `toNodeHandler`; and
// `createMcpHandler`'s web-standard `fetch` behind provenanceFetch. Each time
// the server reads the intent redacted, the client's result holds only its
// turnId, and the audit sink has the record, with the session the server
// issued and the client the stack authenticated.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { describe, test } from "node:test";

import { createAdaptorServer } from "@hono/node-server";
import express from "express";
import { z } from "zod";

import { provenanceFetch, provenanceMiddleware } from "../pkg/dist/http.mjs";
import { KEY, SECRET, accounts } from "./http-stacks.mjs";

/** What a host's model sends with a call. */
const META = { [KEY]: { invocationReason: { text: "The user asked for the open orders" }, model: { name: "example-model" }, userIntent: { text: SECRET }, turnId: "turn-7" } };
/** What the server reads of it behind a redacting middleware. */
const INTENT_REDACTED = { invocationReason: { text: "The user asked for the open orders" }, model: { name: "example-model" }, userIntent: { redacted: true }, turnId: "turn-7" };
/** What a careless tool hands back in its result's _meta: another turn's whole envelope. */
const CARELESS = { [KEY]: { turnId: "other", userIntent: { text: "leak" } } };
const POLICY = { policy: { userIntent: "redact" } };
/** The client the stack authenticated (the bearer token's), and the token. */
const CLIENT_ID = "host-app";
const TOKEN = "token-of-host-app";

/** An MCP server (`McpServer` of either SDK) with one careless tool; `seen` gets the `_meta` its handler saw. */
function ordersServer(McpServer, seen) {
  const server = new McpServer({ name: "orders", version: "1.0.0" });
  server.registerTool("open_orders", { description: "Open orders of a region.", inputSchema: { region: z.string() } }, ({ region }, extra) => {
    seen.push(extra._meta ?? {});
    return { content: [{ type: "text", text: `3 open orders in ${region}` }], _meta: CARELESS };
  });
  return server;
}

/** Listens on loopback; the URL of its /mcp and a way to close it. */
async function listen(server) {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: new URL(`http://127.0.0.1:${server.address().port}/mcp`),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

/** The messages a transport reads, as it hands them to its server: what the app got of the body. */
function tapped(transport, read) {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    read.push(message);
    deliver?.(message, extra);
  };
}

/** Calls the tool with the host's envelope through the client `Client` of either SDK, connected to `url`; the result, and the client. */
async function callThrough(Client, Transport, url) {
  const client = new Client({ name: "host", version: "1.0.0" });
  await client.connect(new Transport(url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  try {
    return await client.callTool({ name: "open_orders", arguments: { region: "EU" }, _meta: META });
  } finally {
    await client.close();
  }
}

/** The tools/call record the sink kept. */
const callRecord = (sink) => sink.kept.map(({ account }) => account.record).find((record) => record?.method === "tools/call");

describe("in front of SDK 1.x's StreamableHTTPServerTransport, in Express, behind its bearer authentication", async () => {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const { requireBearerAuth } = await import("@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js");
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const verifier = { verifyAccessToken: async (token) => ({ token, clientId: CLIENT_ID, scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 }) };

  /**
   * An Express app serving one McpServer per session (stateful) or per
   * request, its transport answering JSON or an event stream, reading the body
   * itself or given express.json()'s; what its transports and tool read.
   */
  function app({ stateful, json, parsed }, options) {
    const seen = [];
    const read = [];
    const sessions = new Map();
    const server = express();
    server.use("/mcp", requireBearerAuth({ verifier }));
    server.use("/mcp", provenanceMiddleware(options));
    if (parsed) server.use(express.json());
    server.all("/mcp", async (req, res) => {
      let transport = sessions.get(req.headers["mcp-session-id"]);
      if (transport === undefined) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: stateful ? () => randomUUID() : undefined,
          enableJsonResponse: json,
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        await ordersServer(McpServer, seen).connect(transport);
        tapped(transport, read);
      }
      await transport.handleRequest(req, res, parsed ? req.body : undefined);
    });
    return { server: createServer(server), seen, read, sessions };
  }

  for (const stateful of [true, false]) {
    for (const json of [true, false]) {
      for (const parsed of [false, true]) {
        const how = `${stateful ? "stateful" : "stateless"}, ${json ? "JSON" : "event-stream"} answers, the body read by ${parsed ? "express.json()" : "the transport"}`;
        test(`${how}: the tool reads the intent redacted, the client gets only its turnId`, async () => {
          const sink = accounts();
          const served = app({ stateful, json, parsed }, { ...POLICY, audit: sink });
          const { url, close } = await listen(served.server);
          try {
            const result = await callThrough(Client, StreamableHTTPClientTransport, url);
            assert.match(JSON.stringify(result.content), /3 open orders in EU/);
            assert.deepEqual(served.seen[0][KEY], INTENT_REDACTED);
            assert.deepEqual(served.read.find((message) => message.method === "tools/call").params._meta[KEY], INTENT_REDACTED);
            assert.deepEqual(result._meta, { [KEY]: { turnId: "turn-7" } });
            const record = callRecord(sink);
            assert.equal(record.clientAsserted.userIntentRedacted, true);
            assert.equal(record.witnessed.principal, CLIENT_ID);
            assert.equal(record.witnessed.sessionId, stateful ? [...served.sessions.keys()][0] : undefined);
          } finally {
            await close();
          }
        });
      }
    }
  }

  test("a failing sink refuses the call, and the tool never runs", async () => {
    let failing = false;
    const audit = () => {
      if (failing) throw new Error("the audit store is down");
    };
    const served = app({ stateful: true, json: false, parsed: false }, { audit });
    const { url, close } = await listen(served.server);
    const client = new Client({ name: "host", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
      failing = true;
      await assert.rejects(client.callTool({ name: "open_orders", arguments: { region: "EU" }, _meta: META }),
        (error) => error.code === -32603 && /the request could not be audited/.test(error.message) && error.data?.code === "audit-failed");
      assert.deepEqual(served.seen, []);
    } finally {
      await client.close();
      await close();
    }
  });
});

describe("in front of SDK 2.x's servers, driven by its client", async () => {
  const { McpServer, createMcpHandler } = await import("@modelcontextprotocol/server");
  const { NodeStreamableHTTPServerTransport, toNodeHandler } = await import("@modelcontextprotocol/node");
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const auth = { token: TOKEN, clientId: CLIENT_ID, scopes: [] };

  /** Checks a call through `url`: the body the server read (`read`, the messages or bodies it parsed) redacted, the client's turnId alone. */
  async function checkCall(url, sink, intentRead) {
    const result = await callThrough(Client, StreamableHTTPClientTransport, url);
    assert.match(JSON.stringify(result.content), /3 open orders in EU/);
    assert.deepEqual(intentRead(), INTENT_REDACTED);
    assert.deepEqual(result._meta?.[KEY], { turnId: "turn-7" });
    const record = callRecord(sink);
    assert.equal(record.clientAsserted.userIntentRedacted, true);
    assert.equal(record.witnessed.principal, CLIENT_ID);
    return record;
  }

  test("its node transport (NodeStreamableHTTPServerTransport), stateful, on node:http", async () => {
    const sink = accounts();
    const read = [];
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await ordersServer(McpServer, []).connect(transport);
    tapped(transport, read);
    const provenance = provenanceMiddleware({ ...POLICY, audit: sink });
    const { url, close } = await listen(createServer((req, res) => {
      req.auth = auth; // as the stack's bearer authentication leaves it
      provenance(req, res, () => transport.handleRequest(req, res));
    }));
    try {
      const record = await checkCall(url, sink, () => read.find((message) => message.method === "tools/call").params._meta[KEY]);
      assert.equal(record.witnessed.sessionId, transport.sessionId);
    } finally {
      await close();
    }
  });

  /** `createMcpHandler` of the tool's server, its `fetch` telling `bodies` each body it read. */
  function handler(bodies) {
    const made = createMcpHandler(() => ordersServer(McpServer, []));
    return {
      fetch: async (request, options) => {
        bodies.push(await request.clone().text());
        return made.fetch(request, options);
      },
    };
  }
  /** The intent of the tools/call body among `bodies` (a GET and a DELETE have none). */
  const intentOf = (bodies) => () => bodies.filter(Boolean).map((body) => JSON.parse(body)).find((message) => message.method === "tools/call").params._meta[KEY];

  test("createMcpHandler through toNodeHandler, which reads the request itself", async () => {
    const sink = accounts();
    const bodies = [];
    const node = toNodeHandler(handler(bodies));
    const provenance = provenanceMiddleware({ ...POLICY, audit: sink });
    const { url, close } = await listen(createServer((req, res) => {
      req.auth = auth;
      provenance(req, res, () => node(req, res));
    }));
    try {
      await checkCall(url, sink, intentOf(bodies));
    } finally {
      await close();
    }
  });

  test("createMcpHandler's fetch behind provenanceFetch, served by @hono/node-server", async () => {
    const sink = accounts();
    const bodies = [];
    const mcp = provenanceFetch(handler(bodies).fetch, { ...POLICY, audit: sink });
    const { url, close } = await listen(createAdaptorServer({ fetch: (request) => mcp(request, { authInfo: auth }) }));
    try {
      await checkCall(url, sink, intentOf(bodies));
    } finally {
      await close();
    }
  });
});
