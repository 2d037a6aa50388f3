/**
 * A Host that follows the script of the SEP-2817 and MCP Apps initiator
 * client scenarios (MCP_CONFORMANCE_CONTEXT): a user's turn is its model's
 * calls, each with the AI invocation audit envelope and one fresh turnId for
 * the turn, and no App initiator; a click is its App's View's calls, which
 * the Host stamps initiator "app" over whatever the View wrote, changing
 * nothing else. `flaws` makes it break one rule, for the negative examples.
 *
 * It speaks the wire of the run (MCP_CONFORMANCE_PROTOCOL_VERSION): the
 * stateless one of 2026-07-28 and later, else the SDK client's stateful one.
 */

import { randomUUID } from 'crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { ClientConformanceContextSchema } from '../../../../src/schemas/context.js';
import { STATELESS_SPEC_VERSIONS } from '../../../../src/connection/select.js';

const AI_INVOCATION_KEY = 'io.modelcontextprotocol/aiInvocation';
const UI_KEY = 'io.modelcontextprotocol/ui';

/** The rule a broken Host breaks. */
export interface HostFlaws {
  /** One turnId for every user turn. */
  reuseTurnId?: boolean;
  /** A View's own initiator goes on as the View wrote it; only a View call without one is stamped. */
  forwardViewInitiator?: boolean;
}

type Meta = Record<string, unknown>;
type Send = (params: Record<string, unknown>) => Promise<unknown>;

const isObject = (value: unknown): value is Meta =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `meta` with initiator "app" stamped in its ui entry, the entry's other members kept. */
function stamped(meta: Meta): Meta {
  const entry = isObject(meta[UI_KEY]) ? meta[UI_KEY] : {};
  return { ...meta, [UI_KEY]: { ...entry, initiator: 'app' } };
}

/** `meta` without initiator "app" in its ui entry: a model's call is not the App's. */
function cleared(meta: Meta): Meta {
  const entry = meta[UI_KEY];
  if (!isObject(entry) || entry.initiator !== 'app') return meta;
  const rest = { ...entry };
  delete rest.initiator;
  return { ...meta, [UI_KEY]: rest };
}

/** tools/call over the stateless wire: every request carries the protocol's _meta and header. */
function statelessSender(serverUrl: string, version: string): Send {
  let id = 0;
  return async (params) => {
    const response = await fetch(serverUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': version
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': version,
            'io.modelcontextprotocol/clientInfo': {
              name: 'scripted-host',
              version: '1.0.0'
            },
            'io.modelcontextprotocol/clientCapabilities': {},
            ...(params._meta as Meta)
          }
        }
      })
    });
    const body = await response.json();
    if (body.error) throw new Error(`tools/call failed: ${body.error.code}`);
    return body.result;
  };
}

/** Runs the script against `serverUrl`, with `flaws` if any. */
export async function runScriptedHost(
  serverUrl: string,
  flaws: HostFlaws = {}
): Promise<void> {
  const context = ClientConformanceContextSchema.parse(
    JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}')
  );
  if (!('turns' in context))
    throw new Error(`no script in the context of ${context.name}`);
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  let client: Client | undefined;
  let send: Send;
  if (
    version &&
    (STATELESS_SPEC_VERSIONS as readonly string[]).includes(version)
  ) {
    send = statelessSender(serverUrl, version);
  } else {
    const sdk = new Client({ name: 'scripted-host', version: '1.0.0' });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(serverUrl)));
    client = sdk;
    send = (params) =>
      sdk.request({ method: 'tools/call', params }, CallToolResultSchema);
  }
  try {
    const once = randomUUID();
    for (const turn of context.turns) {
      const turnId = flaws.reuseTurnId ? once : randomUUID();
      for (const call of turn.calls) {
        const meta: Meta = { ...call.meta };
        const claimed = isObject(meta[UI_KEY])
          ? meta[UI_KEY].initiator
          : undefined;
        const _meta =
          turn.click === undefined
            ? {
                ...cleared(meta),
                [AI_INVOCATION_KEY]: {
                  invocationReason: { text: call.reason ?? '' },
                  model: { name: context.model },
                  userIntent: { text: turn.user ?? '' },
                  turnId
                }
              }
            : flaws.forwardViewInitiator && claimed !== undefined
              ? meta
              : stamped(meta);
        await send({ name: call.tool, arguments: call.arguments, _meta });
      }
    }
  } finally {
    await client?.close();
  }
}
