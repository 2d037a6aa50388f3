// An OTLP/HTTP trace collector of the tests' own, on 127.0.0.1: what the
// prototype gateway's --otlp export sends through the real OpenTelemetry
// SDK and exporter, kept span by span.
import { createServer } from "node:http";

import { readBody } from "../examples/prototype/http.mjs";

/** An OTLP/HTTP collector on 127.0.0.1 that keeps each span it receives, its attributes flattened. */
export async function collector() {
  const spans = [];
  const server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req));
    for (const { scopeSpans } of body.resourceSpans) {
      for (const { spans: received } of scopeSpans) {
        for (const span of received) {
          const value = (v) => v.stringValue ?? v.boolValue ?? v.intValue ?? v.arrayValue?.values.map(value);
          spans.push({
            name: span.name, kind: span.kind, traceId: span.traceId, parentSpanId: span.parentSpanId,
            attributes: Object.fromEntries(span.attributes.map((a) => [a.key, value(a.value)])),
          });
        }
      }
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1/traces`, spans, close: () => server.close() };
}

