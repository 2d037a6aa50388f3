/**
 * SEP-2817 (AI invocation audit context) and MCP Apps initiator scenarios
 * for MCP servers: the checks of `sep-2817-checks.ts`, each scenario over a
 * connection of its own.
 */

import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type {
  ClientScenario,
  ConformanceCheck,
  SpecVersion
} from '../../types';
import { connectToServer, MCPClientConnection } from './client-helper';
import {
  Answer,
  begin,
  chooseTool,
  ECHO,
  ENVELOPE_ACCEPTED,
  INITIATOR_ACCEPTED,
  Probe,
  REFS,
  ServerChecks
} from './sep-2817-checks';

/** Why a request got no answer, in words; a JSON-RPC error as the error it is. */
function answerOf(error: unknown): Answer {
  const { code, message, data } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
  };
  if (typeof code === 'number')
    return { error: { code, message: String(message), data } };
  return { failure: error instanceof Error ? error.message : String(error) };
}

/** The server behind `connection` as the checks see it. */
async function probeOf(connection: MCPClientConnection): Promise<Probe> {
  const { client } = connection;
  const tools = client.getServerCapabilities()?.tools
    ? (await client.listTools()).tools
    : [];
  return {
    ...chooseTool(tools),
    listed: new Set(tools.map((tool) => tool.name)),
    async send(params) {
      try {
        const result = await client.request(
          { method: 'tools/call', params },
          CallToolResultSchema
        );
        return { result };
      } catch (error) {
        return answerOf(error);
      }
    }
  };
}

/** A suite scenario of one set of checks. */
class Sep2817ServerScenario implements ClientScenario {
  name: string;
  description: string;
  specVersions: SpecVersion[];

  constructor(
    private readonly scenario: ServerChecks,
    specVersion: SpecVersion
  ) {
    this.name = scenario.name;
    this.specVersions = [specVersion];
    this.description = `${scenario.description}

**Server Implementation Requirements:**

Implement \`test_simple_text\` (or annotate a side-effect-free tool \`readOnlyHint: true\`): the scenario calls it with \`_meta\` set as described, and calls no other tool.`;
  }

  async run(serverUrl: string): Promise<ConformanceCheck[]> {
    let connection: MCPClientConnection | undefined;
    try {
      connection = await connectToServer(serverUrl);
      return await this.scenario.checks(await begin(await probeOf(connection)));
    } catch (error) {
      return [
        {
          id: `${this.name}-connect`,
          name: `${this.name}-connect`,
          description: 'Connects to the server and lists its tools',
          status: 'FAILURE',
          timestamp: new Date().toISOString(),
          errorMessage: `Failed: ${error instanceof Error ? error.message : String(error)}`,
          specReferences: [this.name.startsWith('apps') ? REFS.apps : REFS.sep]
        }
      ];
    } finally {
      await connection?.close();
    }
  }
}

export class Sep2817EnvelopeAcceptedScenario extends Sep2817ServerScenario {
  constructor() {
    super(ENVELOPE_ACCEPTED, 'draft');
  }
}

export class Sep2817EchoScenario extends Sep2817ServerScenario {
  constructor() {
    super(ECHO, 'draft');
  }
}

export class AppsInitiatorAcceptedScenario extends Sep2817ServerScenario {
  constructor() {
    super(INITIATOR_ACCEPTED, 'extension');
  }
}
