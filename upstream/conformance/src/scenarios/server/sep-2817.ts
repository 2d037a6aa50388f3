/**
 * SEP-2817 (AI invocation audit context) and MCP Apps initiator scenarios
 * for MCP servers: the checks of `sep-2817-checks.ts`, each scenario over a
 * connection of its own, at the wire the run speaks.
 */

import type {
  ClientScenario,
  ConformanceCheck,
  ScenarioSource
} from '../../types';
import { DRAFT_PROTOCOL_VERSION } from '../../types';
import {
  JsonRpcError,
  type Connection,
  type RunContext
} from '../../connection';
import { INITIATOR_SERVER } from './apps-initiator-checks';
import { AUDIT_CONTEXT } from './sep-2817-checks';
import {
  Answer,
  begin,
  chooseTool,
  ListedTool,
  NamedTool,
  Probe,
  ServerChecks,
  verdict
} from './sep-2817-probe';

/** A JSON-RPC error as the error it is; anything else as why no answer came. */
function answerOf(error: unknown): Answer {
  if (error instanceof JsonRpcError)
    return {
      error: { code: error.code, message: error.message, data: error.data }
    };
  return { failure: error instanceof Error ? error.message : String(error) };
}

/**
 * The server behind `connection` as the checks see it: its tools (none when
 * it answers tools/list with an error), and tools/call. Throws when it does
 * not answer tools/list at all.
 */
async function probeOf(
  connection: Connection,
  named?: NamedTool
): Promise<Probe> {
  const tools = await connection
    .request<{ tools?: ListedTool[] }>('tools/list')
    .then((listed) => (Array.isArray(listed.tools) ? listed.tools : []))
    .catch((error: unknown) => {
      if (error instanceof JsonRpcError) return [];
      throw error;
    });
  return {
    ...chooseTool(tools, named),
    listed: new Set(tools.map((tool) => tool.name)),
    async send(params) {
      try {
        const result = await connection.request<Record<string, unknown>>(
          'tools/call',
          { ...params }
        );
        return { result };
      } catch (error) {
        return answerOf(error);
      }
    }
  };
}

/** A suite scenario of one set of server checks. */
class Sep2817ServerScenario implements ClientScenario {
  readonly name: string;
  readonly description: string;

  constructor(
    private readonly checks: ServerChecks,
    readonly source: ScenarioSource,
    private readonly named?: NamedTool
  ) {
    this.name = checks.name;
    this.description = `${checks.description}

**Server Implementation Requirements:**

Implement \`test_simple_text\` (or annotate a side-effect-free tool \`readOnlyHint: true\`): the scenario calls it with \`_meta\` set as each check describes, and calls no other tool (but one name the server lists no tool by, to see its error). Without such a tool, or when the call without this metadata is not served, nothing can be tested and every check fails as untestable.`;
  }

  async run(ctx: RunContext): Promise<ConformanceCheck[]> {
    let connection: Connection | undefined;
    try {
      connection = await ctx.connect();
      return await this.checks.run(
        await begin(await probeOf(connection, this.named))
      );
    } catch (error) {
      const reason = `cannot reach the server: ${error instanceof Error ? error.message : String(error)}`;
      return this.checks.declared.map((check) =>
        verdict(check, { untestable: reason })
      );
    } finally {
      await connection?.close();
    }
  }
}

/**
 * `named`, in both scenarios: the tool to call instead of the scenario's own
 * choice (`chooseTool`), for a server that lists no test tool; the suite's
 * CLI names none; a harness that lets its user name one passes it here.
 */
export class Sep2817AuditContextScenario extends Sep2817ServerScenario {
  constructor(named?: NamedTool) {
    super(AUDIT_CONTEXT, { introducedIn: DRAFT_PROTOCOL_VERSION }, named);
  }
}

export class AppsInitiatorServerScenario extends Sep2817ServerScenario {
  constructor(named?: NamedTool) {
    super(
      INITIATOR_SERVER,
      { extensionId: 'io.modelcontextprotocol/ui' },
      named
    );
  }
}
