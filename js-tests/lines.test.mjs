// A log line is one line in the npm package too: the filter's `lines` for
// bodies spread over many lines and strings holding every character that
// breaks or disguises a line, as text and as bytes, alone and in a batch.
// (The core's property test, tests/lines.rs, covers the rule; this covers
// the boundary, which splices a line's message from what goes on.)
import assert from "node:assert/strict";
import { test } from "node:test";
import { createFilter } from "mcp-provenance/gateway";

/** AI-13's line breaks, controls and bidi controls, and TXT-1's invisible characters. */
const FORGING = /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|\udb40[\udc00-\udc7f]/u;

const KEY = "io.modelcontextprotocol/aiInvocation";
const hostile = "a\u2028b\u0085c\u202ed\u2066e\ufeff\u{e0041}\u007f";
const spread = (json) => json.replace(/([{[,:])/g, "$1\r\n\t");
const request = (id) => spread(JSON.stringify({
  jsonrpc: "2.0", id: `${id}${hostile}`, method: "tools/call",
  params: { name: hostile, arguments: { [hostile]: hostile },
    _meta: { [KEY]: { turnId: hostile, userIntent: { text: hostile } }, "io.modelcontextprotocol/ui": { initiator: "app" }, [`x${hostile}`]: [hostile] } },
}));

for (const options of [undefined, { policy: { userIntent: "redact" } }]) {
  test(`every line is one line of the same JSON, nothing forging it (${JSON.stringify(options)})`, () => {
    const filter = createFilter(options);
    for (const text of [request(1), `[${request(1)},\n${request(2)}\r\n]`]) {
      for (const body of [text, new TextEncoder().encode(text)]) {
        const out = filter(body);
        assert.ok("forward" in out, out.reject);
        const forward = typeof out.forward === "string" ? out.forward : new TextDecoder().decode(out.forward);
        const sent = [JSON.parse(forward)].flat();
        assert.equal(out.lines.length, sent.length);
        out.lines.forEach((line, index) => {
          assert.doesNotMatch(line, FORGING);
          assert.deepEqual(JSON.parse(line).message, sent[index]);
        });
      }
    }
  });
}
