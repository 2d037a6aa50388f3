// The suite's `connectToServer` (src/scenarios/server/client-helper.ts at
// v0.1.16), which the scenarios import: an SDK 1.x client over Streamable
// HTTP, named and with the capabilities the suite's client declares.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** A client connected to `serverUrl`, and how to close it. */
export async function connectToServer(serverUrl) {
  const client = new Client({ name: "conformance-test-client", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {} } });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl)));
  return { client, close: () => client.close() };
}
