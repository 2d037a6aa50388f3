// Writes a capture of MCP traffic for `mcp-provenance check` throughput and
// memory runs, one JSON-RPC message per line, up to the size asked: by
// default a hostile mix (clean calls, hostile envelopes, responses, and a
// bad line now and then); with --typical, typical requests (the SEP-2817
// example, a ping, a tools/list, a small call, a call with a page of rows:
// the mix `cargo bench --bench native` filters).
//   node bench/capture.mjs <out.jsonl> [megabytes, default 1024] [--typical]
import { createWriteStream } from "node:fs";
import { once } from "node:events";

const typical = process.argv.includes("--typical");
const [out, megabytes = "1024"] = process.argv.slice(2).filter((arg) => arg !== "--typical");
const KEY = "io.modelcontextprotocol/aiInvocation";
const target = Number(megabytes) * 2 ** 20;
/** The SEP-2817 example request of docs/reference.md. */
const example = (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_query", arguments: { query: "SELECT * FROM employees LIMIT 10" },
  _meta: { [KEY]: { invocationReason: { text: "The user asked for sample rows." }, model: { name: "example-model" }, userIntent: { text: "Show me 10 employees" }, turnId: `turn-${id >> 3}` } } } });
const hostile = [
  example,
  (id) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "[]" }], _meta: { [KEY]: { turnId: `turn-${id >> 3}` } } } }),
  (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "refresh", _meta: { "io.modelcontextprotocol/ui": { initiator: "app" } } } }),
  (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "q", _meta: { [KEY]: { userIntent: { text: "a\r\nINFO forged \u202e" }, turnId: id } } } }),
];
const rows = Array.from({ length: 40 }, (_, id) => ({ id, name: `Employee ${id}`, department: "Support" }));
const requests = [
  example,
  (id) => ({ jsonrpc: "2.0", id, method: "ping" }),
  (id) => ({ jsonrpc: "2.0", id, method: "tools/list", params: { cursor: "abc" } }),
  (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_tables", arguments: {}, _meta: { [KEY]: { turnId: `turn-${id >> 3}` } } } }),
  (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "import", arguments: { rows } } }),
];
const lines = (typical ? requests : hostile).map((make) => (id) => `${JSON.stringify(make(id))}\n`);

const stream = createWriteStream(out);
let written = 0;
for (let id = 1; written < target; id++) {
  const line = id % 1000 === 0 && !typical ? "not json\n" : lines[id % lines.length](id);
  written += Buffer.byteLength(line);
  if (!stream.write(line)) await once(stream, "drain");
}
stream.end();
await once(stream, "finish");
console.log(`${out}: ${(written / 2 ** 20).toFixed(0)} MB`);
