// An MCP Apps host in the page: a View in an iframe talks to an AppBridge;
// stampAppCalls (mcp-provenance/ext-apps) stamps `initiator: "app"` on every
// request the View sends towards the server (UI-1, UI-3) and forwards it to an MCP server in this page
// over an in-memory transport. What the server receives is reported as it
// arrives on the wire, before the SDK handles it.

import { stampAppCalls } from "mcp-provenance/ext-apps";
import { auditRecord, UI_KEY } from "mcp-provenance";
import { AppBridge, Client, InMemoryTransport, McpServer, PostMessageTransport } from "./vendor/apps-host.js";

const info = { name: "mcp-provenance-browser-host", version: "1.0.0" };

/** The in-page server, with one tool visible to the model and the App. */
function dashboardServer() {
  const server = new McpServer({ name: "dashboard", version: "1.0.0" });
  let refreshes = 0;
  server.registerTool("refresh_dashboard", {
    description: "Recomputes the dashboard.",
    _meta: { ui: { visibility: ["model", "app"] } },
  }, async () => ({ content: [{ type: "text", text: `dashboard refreshed (${++refreshes})` }] }));
  return server;
}

/**
 * Connects a View in `iframe` to a server in the page; `onCall` hears, for
 * each tools/call, the initiator the View sent and the one the server saw.
 */
export async function startAppsHost({ iframe, onCall }) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = dashboardServer();
  await server.connect(serverSide);
  const sentByView = [];
  const deliver = serverSide.onmessage;
  serverSide.onmessage = (message, extra) => {
    if (message.method === "tools/call") {
      const record = auditRecord(message);
      onCall({ tool: record.tool, sent: sentByView.shift(), seen: record.hostAttested.initiator });
    }
    deliver(message, extra);
  };

  const client = new Client(info);
  await client.connect(clientSide);

  // The stamping handlers, set on the bridge once each (the bridge warns
  // when a handler is replaced); its tools/call first notes what the View
  // claimed, for the page to show beside what the server saw.
  const handlers = stampAppCalls({}, (request, extra) => client.request(request, { signal: extra?.mcpReq?.signal }));
  const stamped = handlers.oncalltool;
  handlers.oncalltool = (params, extra) => {
    sentByView.push(params._meta?.[UI_KEY]?.initiator);
    return stamped(params, extra);
  };
  const bridge = Object.assign(new AppBridge(null, info, { serverTools: {} }), handlers);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.src = "view.html";
}
