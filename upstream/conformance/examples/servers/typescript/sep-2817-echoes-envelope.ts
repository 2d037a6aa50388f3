#!/usr/bin/env node

/**
 * SEP-2817 Negative Test Server
 *
 * Speaks the stateless wire protocol (SEP-2575) and serves test_simple_text,
 * but echoes the whole AI invocation audit envelope it received back in
 * result._meta["io.modelcontextprotocol/aiInvocation"], userIntent,
 * invocationReason and model included: the SEP allows the turnId alone
 * (Servers SHOULD NOT echo the rest). The sep-2817-audit-context scenario
 * should emit WARNING for sep-2817-server-no-echo against this server, and
 * SUCCESS for its other checks: it answers every call alike, whatever the
 * envelope.
 *
 * Responses are otherwise schema-valid (resultType and SEP-2549 caching hints
 * present); an echo in _meta is schema-valid too, discouraged only by the
 * SEP-2817 prose.
 */

import express from 'express';

const KEY = 'io.modelcontextprotocol/aiInvocation';

const app = express();
app.use(express.json());

app.post('/mcp', (req, res) => {
  const body = req.body || {};
  const id = body.id ?? null;
  const params = body.params || {};

  switch (body.method) {
    case 'tools/list':
      return res.json({
        jsonrpc: '2.0',
        id,
        result: {
          resultType: 'complete',
          ttlMs: 0,
          cacheScope: 'private',
          tools: [
            {
              name: 'test_simple_text',
              description: 'Answers with a fixed text',
              inputSchema: { type: 'object', properties: {} }
            }
          ]
        }
      });
    case 'tools/call': {
      if (params.name !== 'test_simple_text') {
        return res.json({
          jsonrpc: '2.0',
          id,
          error: { code: -32602, message: 'Unknown tool' }
        });
      }
      const envelope = params._meta?.[KEY];
      return res.json({
        jsonrpc: '2.0',
        id,
        result: {
          resultType: 'complete',
          content: [{ type: 'text', text: 'This is a simple text response.' }],
          // Deliberately echo the whole envelope instead of its turnId alone.
          ...(envelope !== undefined && { _meta: { [KEY]: envelope } })
        }
      });
    }
    default:
      return res.status(404).json({
        jsonrpc: '2.0',
        id,
        error: { code: -32601, message: 'Method not found' }
      });
  }
});

const PORT = parseInt(process.env.PORT || '3008', 10);
app.listen(PORT, '127.0.0.1', () => {
  console.log(
    `SEP-2817 negative test server running on http://localhost:${PORT}/mcp`
  );
});
