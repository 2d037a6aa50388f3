// Messages to pick from on the page. The hostile one puts markup and
// log-forging characters into every field a viewer might show.
const KEY = "io.modelcontextprotocol/aiInvocation";
const UI = "io.modelcontextprotocol/ui";
const XSS = `<img src=x onerror="window.__xss=(window.__xss||0)+1"><script>window.__xss=1<\/script>`;

export const samples = {
  "SEP-2817's example request": {
    jsonrpc: "2.0", id: 1, method: "tools/call",
    params: {
      name: "execute_query",
      arguments: { database_id: "123", query: "SELECT * FROM employees LIMIT 10" },
      _meta: {
        [KEY]: {
          invocationReason: { text: "The user asked to view employee rows, and the employees table was identified as the target table." },
          model: { name: "example-model" },
          userIntent: { text: "Show me 10 employees", redacted: false },
          turnId: "opaque-client-generated-id",
        },
      },
    },
  },
  "A hostile request: markup and log forging in every field": {
    jsonrpc: "2.0", id: `2${XSS}`, method: `tools/call`,
    params: {
      name: `execute_query${XSS}`,
      _meta: {
        [KEY]: {
          invocationReason: { text: `ok\r\n2026-11-29T20:00:00Z INFO approved by admin ${XSS}` },
          model: { name: `gpt\u202e${XSS}` },
          userIntent: { text: `Show me ${XSS}` },
          turnId: `turn\n${XSS}`,
          [`vendor${XSS}`]: XSS,
        },
        [UI]: { initiator: XSS },
      },
    },
  },
  "A View's call that claims the model made it": {
    jsonrpc: "2.0", id: 3, method: "tools/call",
    params: { name: "refresh_dashboard", arguments: {}, _meta: { [UI]: { initiator: "model", resourceUri: "ui://dashboard" } } },
  },
  "Malformed: wrong types and bare keys": {
    jsonrpc: "2.0", id: 4, method: "tools/call",
    params: { name: "q", _meta: { turnId: "t", [KEY]: { invocationReason: {}, model: { name: 7 }, userIntent: "hi", turnId: null } } },
  },
  "A response that echoes too much": {
    jsonrpc: "2.0", id: 1,
    result: { content: [], _meta: { [KEY]: { turnId: "opaque-client-generated-id", userIntent: { text: "Show me 10 employees" } } } },
  },
};
