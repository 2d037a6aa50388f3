/**
 * What the SEP-2817 (AI invocation audit context) and MCP Apps initiator
 * scenarios for clients and Hosts share: the scenario's mock server serves
 * two tools and records every tools/call as it arrived on the wire; the
 * client under test makes the calls its context scripts
 * (MCP_CONFORMANCE_CONTEXT), turn by turn, and the checks read what it sent.
 *
 * The context, `{ model, app, turns }`: each turn is a user's words (`user`:
 * the model then makes the turn's `calls`, each with its `reason`, through
 * the client's model path, which attaches the audit envelope) or a click in
 * an embedded App (`click`: the View makes the `calls` through the Host's
 * AppBridge, with the `_meta` given in `meta`). Each call names its tool and
 * its `arguments`, whose `step` tells the scenario which call it is.
 */

import type { MockServer, ScenarioContext } from '../../mock-server';
import type { ConformanceCheck, Scenario, ScenarioUrls } from '../../types';
import {
  AI_INVOCATION_KEY,
  DeclaredCheck,
  isObject,
  Outcome,
  verdict
} from '../server/sep-2817-probe';

/** A call of the script. */
export interface ScriptedCall {
  tool: 'lookup' | 'refresh';
  arguments: { step: string };
  reason?: string;
  meta?: Record<string, unknown>;
}

/** A turn of the script: a user's words, or a click in the App. */
export interface ScriptedTurn {
  user?: string;
  click?: string;
  calls: ScriptedCall[];
}

/** The context the client under test gets. */
export interface Script {
  model: string;
  app: string;
  turns: ScriptedTurn[];
}

/** A scripted call with its turn's index, who makes it, and its params as they arrived (undefined: never). */
export interface Seen {
  turn: number;
  by: 'model' | 'app';
  call: ScriptedCall;
  arrived?: Record<string, unknown>;
}

/** What a check found wrong, said: none, it passed; else the first few. */
export function problemsOutcome(problems: string[]): Outcome {
  const more = problems.length > 5 ? `; … ${problems.length - 5} more` : '';
  return {
    passed: problems.length === 0,
    message: problems.slice(0, 5).join('; ') + more
  };
}

/** The two tools of the scenarios' server, each answering with the request's turnId echoed alone. */
const TOOLS = {
  'tools/list': () => ({
    tools: [
      ['lookup', 'Looks something up (the model calls it)'],
      ['refresh', 'Refreshes the App (its View calls it)']
    ].map(([name, description]) => ({
      name,
      description,
      inputSchema: {
        type: 'object',
        properties: { step: { type: 'string' } },
        required: ['step']
      }
    }))
  }),
  'tools/call': (params: Record<string, unknown>) => {
    const meta = isObject(params._meta) ? params._meta : {};
    const entry = meta[AI_INVOCATION_KEY];
    const turnId = isObject(entry) ? entry.turnId : undefined;
    return {
      content: [{ type: 'text', text: `${String(params.name)}: ok` }],
      ...(typeof turnId === 'string' && {
        _meta: { [AI_INVOCATION_KEY]: { turnId } }
      })
    };
  }
};

/**
 * A scenario whose server records the tools/calls a client makes from its
 * script. Every declared check is emitted on every run: when the client
 * made none of the calls a check reads, it is untestable.
 */
export abstract class ScriptedScenario implements Scenario {
  abstract readonly name: string;
  abstract readonly description: string;
  abstract readonly source: Scenario['source'];
  protected abstract readonly script: Script;
  protected abstract readonly declared: DeclaredCheck[];
  /** How each declared check came out, in order, from the calls as they arrived. */
  protected abstract judge(seen: Seen[]): Outcome[];

  private server: MockServer | null = null;
  private recorded: MockServer['recorded'] = [];

  async start(ctx: ScenarioContext): Promise<ScenarioUrls> {
    this.server = await ctx.createServer(TOOLS);
    this.recorded = this.server.recorded;
    return { serverUrl: this.server.url, context: { ...this.script } };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    await server?.close();
  }

  getChecks(): ConformanceCheck[] {
    const arrived = new Map<string, Record<string, unknown>>();
    for (const request of this.recorded) {
      const params = request.params;
      if (request.method !== 'tools/call' || !isObject(params)) continue;
      const step = isObject(params.arguments)
        ? params.arguments.step
        : undefined;
      if (typeof step === 'string') arrived.set(step, params);
    }
    const seen: Seen[] = this.script.turns.flatMap((turn, index) =>
      turn.calls.map((call) => ({
        turn: index,
        by: turn.click !== undefined ? ('app' as const) : ('model' as const),
        call,
        arrived: arrived.get(call.arguments.step)
      }))
    );
    const outcomes: Outcome[] = seen.some((s) => s.arrived !== undefined)
      ? this.judge(seen)
      : this.declared.map(() => ({
          untestable: `the client made none of the scripted tool calls (${this.recorded.length} requests arrived)`
        }));
    return this.declared.map((check, i) => verdict(check, outcomes[i]));
  }
}
