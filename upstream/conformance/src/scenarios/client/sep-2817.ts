/**
 * SEP-2817 (AI invocation audit context) and MCP Apps initiator scenarios
 * for clients and Hosts: the scenario serves two tools and records every
 * tools/call as it arrived on the wire; the client under test makes the
 * calls its context scripts (MCP_CONFORMANCE_CONTEXT), turn by turn, and
 * the checks read what it sent.
 *
 * The context, `{ model, app, turns }`: each turn is a user's words
 * (`user`: the model then makes the turn's `calls`, each with its `reason`,
 * through the client's model path, which attaches the envelope) or a click
 * in an embedded App (`click`: the View makes the `calls` through the Host's
 * AppBridge, with the `_meta` given in `meta`). Each call names its tool and
 * its `arguments`, whose `step` tells the scenario which call it is.
 */

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema
} from '@modelcontextprotocol/sdk/types.js';
import express, { Request, Response } from 'express';
import type { Server as HttpServer } from 'http';
import type { AddressInfo } from 'net';
import type {
  ConformanceCheck,
  Scenario,
  ScenarioUrls,
  SpecVersion
} from '../../types';
import {
  AI_INVOCATION_KEY,
  check,
  Level,
  Sep2817Check,
  UI_KEY
} from '../server/sep-2817-checks';

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

/** A tools/call as it arrived: its params. */
interface Arrived {
  name?: unknown;
  arguments?: { step?: unknown };
  _meta?: Record<string, unknown>;
}

/**
 * The limits the envelope's strings are held to, in UTF-8 bytes: the
 * defaults of mcp-provenance, the reference implementation (SEP-2817 asks
 * for per-field and total limits and leaves their values open).
 */
export const LIMITS = {
  invocationReason: 1024,
  userIntent: 2048,
  model: 256,
  turnId: 128,
  envelope: 8192
} as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** A check from the problems found: none, it passed; else the first few, said. */
function verdict(
  id: string,
  rule: string,
  level: Level,
  description: string,
  problems: string[]
): Sep2817Check {
  const more = problems.length > 5 ? `; … ${problems.length - 5} more` : '';
  return check(id, rule, level, description, {
    passed: problems.length === 0,
    message: problems.slice(0, 5).join('; ') + more
  });
}

/** The MCP server of a scenario: two tools, each answering with the request's turnId echoed alone. */
function createMcpServer(): Server {
  const server = new Server(
    { name: 'sep-2817-conformance', version: '1.0.0' },
    { capabilities: { tools: {} } }
  );
  const tool = (name: string, description: string) => ({
    name,
    description,
    inputSchema: {
      type: 'object' as const,
      properties: { step: { type: 'string' } },
      required: ['step']
    }
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      tool('lookup', 'Looks something up (the model calls it)'),
      tool('refresh', 'Refreshes the App (its View calls it)')
    ]
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const entry = request.params._meta?.[AI_INVOCATION_KEY];
    const turnId = isObject(entry) ? entry.turnId : undefined;
    return {
      content: [{ type: 'text', text: `${request.params.name}: ok` }],
      ...(typeof turnId === 'string' && {
        _meta: { [AI_INVOCATION_KEY]: { turnId } }
      })
    };
  });
  return server;
}

/** A scenario whose server records the tools/calls a client makes from its script. */
abstract class ScriptedScenario implements Scenario {
  abstract name: string;
  abstract description: string;
  abstract specVersions: SpecVersion[];
  protected abstract script: Script;
  protected abstract judge(arrived: Map<string, Arrived>): Sep2817Check[];

  private httpServer: HttpServer | null = null;
  private arrived = new Map<string, Arrived>();

  async start(): Promise<ScenarioUrls> {
    this.arrived = new Map();
    const app = express();
    app.use(express.json({ limit: '4mb' }));
    app.post('/mcp', async (req: Request, res: Response) => {
      for (const message of Array.isArray(req.body) ? req.body : [req.body]) {
        const params = isObject(message) ? message.params : undefined;
        if (message?.method !== 'tools/call' || !isObject(params)) continue;
        const step = isObject(params.arguments)
          ? params.arguments.step
          : undefined;
        if (typeof step === 'string') this.arrived.set(step, params);
      }
      // Stateless: a fresh server and transport per request.
      const server = createMcpServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
    const listening = app.listen(0, '127.0.0.1');
    this.httpServer = listening;
    await new Promise((resolve) => listening.once('listening', resolve));
    const { port } = listening.address() as AddressInfo;
    return {
      serverUrl: `http://127.0.0.1:${port}/mcp`,
      context: { ...this.script }
    };
  }

  async stop(): Promise<void> {
    const server = this.httpServer;
    this.httpServer = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  getChecks(): ConformanceCheck[] {
    return this.judge(this.arrived);
  }

  /** Each scripted call with its turn's index and who makes it: the model or the View. */
  protected calls(): {
    turn: number;
    by: 'model' | 'app';
    call: ScriptedCall;
  }[] {
    return this.script.turns.flatMap((turn, index) =>
      turn.calls.map((call) => ({
        turn: index,
        by: turn.click !== undefined ? ('app' as const) : ('model' as const),
        call
      }))
    );
  }
}

/** What is wrong with an envelope's shape (AI-2..AI-5, AI-7). */
function shapeProblems(envelope: unknown): string[] {
  if (!isObject(envelope)) return ['is not a JSON object (AI-2)'];
  const problems: string[] = [];
  const { invocationReason, model, userIntent, turnId } = envelope;
  if (
    invocationReason !== undefined &&
    !(isObject(invocationReason) && typeof invocationReason.text === 'string')
  )
    problems.push(
      'invocationReason is not an object with a string text (AI-3)'
    );
  if (
    model !== undefined &&
    !(isObject(model) && typeof model.name === 'string')
  )
    problems.push('model is not an object with a string name (AI-4)');
  if (userIntent !== undefined) {
    if (!isObject(userIntent))
      problems.push('userIntent is not an object (AI-5)');
    else {
      if (userIntent.text !== undefined && typeof userIntent.text !== 'string')
        problems.push('userIntent.text is not a string (AI-5)');
      if (
        userIntent.redacted !== undefined &&
        typeof userIntent.redacted !== 'boolean'
      )
        problems.push('userIntent.redacted is not a boolean (AI-5)');
    }
  }
  if (turnId !== undefined && typeof turnId !== 'string')
    problems.push('turnId is not a string (AI-7)');
  return problems;
}

/** The fields of an envelope over their limits, and the envelope itself when over the total (AI-14). */
function overLimits(envelope: Record<string, unknown>): string[] {
  const field = (value: unknown, member: string) =>
    isObject(value) && typeof value[member] === 'string'
      ? (value[member] as string)
      : '';
  const sizes: [string, number, number][] = [
    [
      'invocationReason.text',
      bytes(field(envelope.invocationReason, 'text')),
      LIMITS.invocationReason
    ],
    [
      'userIntent.text',
      bytes(field(envelope.userIntent, 'text')),
      LIMITS.userIntent
    ],
    ['model.name', bytes(field(envelope.model, 'name')), LIMITS.model],
    [
      'turnId',
      typeof envelope.turnId === 'string' ? bytes(envelope.turnId) : 0,
      LIMITS.turnId
    ],
    ['the envelope', bytes(JSON.stringify(envelope)), LIMITS.envelope]
  ];
  return sizes
    .filter(([, size, limit]) => size > limit)
    .map(([what, size, limit]) => `${what} is ${size} bytes, over ${limit}`);
}

/** A long request from the user: a client keeps what it sends of it within the limits. */
const LONG_REQUEST = `Summarize these notes: ${'the quarterly numbers, '.repeat(150)}`;

export class Sep2817ClientEnvelopeScenario extends ScriptedScenario {
  name = 'sep-2817-client-envelope';
  specVersions: SpecVersion[] = ['draft'];
  description = `Tests the AI invocation audit envelope a client attaches to the tool calls its model makes (SEP-2817).

**Client Implementation Requirements:**

Read the script from \`MCP_CONFORMANCE_CONTEXT\` (\`{ model, app, turns }\`). For each turn, as a new user turn: make each call of \`calls\` with \`tools/call\` (\`name\` the call's \`tool\`, \`arguments\` its \`arguments\`) as the model's call, with \`_meta["${AI_INVOCATION_KEY}"]\` = \`{ invocationReason: { text: reason }, model: { name: model }, userIntent: { text: user }, turnId }\`.

- The envelope is well formed (its fields as the SEP types them)
- \`turnId\` is one value for every call of a turn, and a new one for each turn
- Its strings are within per-field and total byte limits: ${LIMITS.invocationReason} bytes for \`invocationReason.text\`, ${LIMITS.userIntent} for \`userIntent.text\` (cut, and \`redacted: true\`), ${LIMITS.model} for \`model.name\`, ${LIMITS.turnId} for \`turnId\`, ${LIMITS.envelope} for the envelope as compact JSON`;

  protected script: Script = {
    model: 'conformance-model',
    app: 'conformance-app',
    turns: [
      {
        user: 'Which tables can I query?',
        calls: [
          {
            tool: 'lookup',
            arguments: { step: 'turn-1-call-1' },
            reason: 'Listing what can be queried.'
          },
          {
            tool: 'lookup',
            arguments: { step: 'turn-1-call-2' },
            reason: 'Reading the first table.'
          }
        ]
      },
      {
        user: 'Show me ten rows',
        calls: [
          {
            tool: 'lookup',
            arguments: { step: 'turn-2-call-1' },
            reason: 'The user asked for rows.'
          }
        ]
      },
      {
        user: LONG_REQUEST,
        calls: [
          {
            tool: 'lookup',
            arguments: { step: 'turn-3-call-1' },
            reason: 'The user asked for a summary.'
          }
        ]
      }
    ]
  };

  protected judge(arrived: Map<string, Arrived>): Sep2817Check[] {
    const shapes: string[] = [];
    const limits: string[] = [];
    const turnIds = new Map<number, Set<string>>();
    for (const { turn, call } of this.calls()) {
      const step = call.arguments.step;
      const params = arrived.get(step);
      if (params === undefined) {
        shapes.push(`${step}: never arrived`);
        continue;
      }
      const envelope = params._meta?.[AI_INVOCATION_KEY];
      if (envelope === undefined) {
        shapes.push(`${step}: carries no _meta["${AI_INVOCATION_KEY}"]`);
        continue;
      }
      shapes.push(
        ...shapeProblems(envelope).map(
          (problem) => `${step}: the envelope ${problem}`
        )
      );
      if (!isObject(envelope)) continue;
      limits.push(
        ...overLimits(envelope).map((problem) => `${step}: ${problem}`)
      );
      const ids = turnIds.get(turn) ?? new Set<string>();
      ids.add(typeof envelope.turnId === 'string' ? envelope.turnId : '(none)');
      turnIds.set(turn, ids);
    }
    const unstable = [...turnIds]
      .filter(([, ids]) => ids.size > 1)
      .map(
        ([turn, ids]) =>
          `turn ${turn + 1} carries ${ids.size} turnIds: ${[...ids].map((id) => JSON.stringify(id)).join(', ')}`
      );
    const firstTurnOf = new Map<string, number>();
    const reused: string[] = [];
    for (const [turn, ids] of turnIds) {
      for (const id of ids) {
        const first = firstTurnOf.get(id);
        if (first === undefined) firstTurnOf.set(id, turn);
        else if (first !== turn)
          reused.push(
            `turn ${turn + 1} carries turnId ${JSON.stringify(id)} of turn ${first + 1}`
          );
      }
    }
    return [
      verdict(
        'AI-2-well-formed',
        'AI-2',
        'MUST',
        'each model call carries the envelope, well formed (AI-2..AI-5, AI-7)',
        shapes
      ),
      verdict(
        'AI-7-turnId-per-turn',
        'AI-7',
        'MAY',
        'every call of one user turn carries the same turnId',
        unstable
      ),
      verdict(
        'AI-7-turnId-fresh',
        'AI-7',
        'SHOULD',
        'each user turn has a turnId of its own: no two turns share one',
        reused
      ),
      verdict(
        'AI-14-within-limits',
        'AI-14',
        'SHOULD',
        "the envelope's strings are within per-field and total byte limits",
        limits
      )
    ];
  }
}

export class AppsInitiatorHostScenario extends ScriptedScenario {
  name = 'apps-initiator-host';
  specVersions: SpecVersion[] = ['extension'];
  description = `Tests that a Host stamps \`_meta["${UI_KEY}"].initiator = "app"\` on every request its App's View sends, and never on a call its model makes (MCP Apps, ext-apps#738).

**Host Implementation Requirements:**

Read the script from \`MCP_CONFORMANCE_CONTEXT\` (\`{ model, app, turns }\`). A turn with \`user\` is the model's: make each of its \`calls\` as a model call (\`_meta\` as the call's \`meta\` gives it, if at all). A turn with \`click\` is the App's: hand each of its calls to the Host's AppBridge as the View would send it (\`tools/call\` with the call's \`tool\`, \`arguments\` and \`_meta\` = \`meta\`), so that the Host proxies it to the server.

- Every View request arrives with \`initiator: "app"\`, also when the View claimed another value
- Stamping changes only \`initiator\`: other members of the entry, other \`_meta\` keys and \`arguments\` arrive as the View sent them
- No model call arrives with \`initiator: "app"\`, also when the model's call carried it`;

  protected script: Script = {
    model: 'conformance-model',
    app: 'conformance-app',
    turns: [
      {
        user: 'Refresh the Sales dashboard',
        calls: [
          {
            tool: 'refresh',
            arguments: { step: 'model-claims-app' },
            reason: 'The user asked for a refresh.',
            meta: { [UI_KEY]: { initiator: 'app' } }
          }
        ]
      },
      {
        click: 'Refresh',
        calls: [
          { tool: 'refresh', arguments: { step: 'view-plain' }, meta: {} }
        ]
      },
      {
        click: 'Refresh, from a View that claims to be the model',
        calls: [
          {
            tool: 'refresh',
            arguments: { step: 'view-claims-model' },
            meta: {
              [UI_KEY]: {
                initiator: 'model',
                resourceUri: 'ui://conformance/view'
              },
              'com.example/clickedAt': '2026-12-01T12:00:00Z'
            }
          }
        ]
      },
      {
        user: 'Look it up',
        calls: [
          {
            tool: 'lookup',
            arguments: { step: 'model-plain' },
            reason: 'The user asked to look it up.'
          }
        ]
      }
    ]
  };

  protected judge(arrived: Map<string, Arrived>): Sep2817Check[] {
    const initiatorOf = (params: Arrived) => {
      const entry = params._meta?.[UI_KEY];
      return isObject(entry) ? entry.initiator : undefined;
    };
    const said = (value: unknown) =>
      value === undefined
        ? 'no initiator'
        : `initiator ${JSON.stringify(value)}`;
    const stamped: string[] = [];
    const overwritten: string[] = [];
    const kept: string[] = [];
    const model: string[] = [];
    for (const { by, call } of this.calls()) {
      const step = call.arguments.step;
      const params = arrived.get(step);
      const claimed = isObject(call.meta?.[UI_KEY])
        ? (call.meta?.[UI_KEY] as Record<string, unknown>).initiator
        : undefined;
      const problems =
        by === 'app' ? (claimed === undefined ? stamped : overwritten) : model;
      if (params === undefined) {
        problems.push(`${step}: never arrived`);
        continue;
      }
      const initiator = initiatorOf(params);
      if (by === 'model') {
        if (initiator === 'app')
          model.push(`${step}: a model call arrived with initiator "app"`);
        continue;
      }
      if (initiator !== 'app')
        problems.push(
          `${step}: a View call arrived with ${said(initiator)}${claimed === undefined ? '' : ` (the View claimed ${JSON.stringify(claimed)})`}`
        );
      kept.push(...changedBesides(step, call, params));
    }
    return [
      verdict(
        'UI-1-view-stamped',
        'UI-1',
        'MUST',
        'every View request arrives stamped initiator "app"',
        stamped
      ),
      verdict(
        'UI-3-view-claim-overwritten',
        'UI-3',
        'MUST',
        'a View\'s own initiator value is overwritten with "app"',
        overwritten
      ),
      verdict(
        'UI-5-only-initiator',
        'UI-5',
        'MUST',
        'stamping changes only initiator: the rest of the entry, other _meta keys and arguments arrive as sent',
        kept
      ),
      verdict(
        'UI-2-model-not-app',
        'UI-2',
        'MUST',
        'no model call arrives with initiator "app"',
        model
      )
    ];
  }
}

/** What of a View call other than `initiator` did not arrive as the View sent it (UI-5). */
function changedBesides(
  step: string,
  call: ScriptedCall,
  params: Arrived
): string[] {
  const problems: string[] = [];
  if (JSON.stringify(params.arguments) !== JSON.stringify(call.arguments))
    problems.push(`${step}: arguments changed`);
  for (const [key, value] of Object.entries(call.meta ?? {})) {
    const got = params._meta?.[key];
    if (key === UI_KEY && isObject(value) && isObject(got)) {
      for (const [member, sent] of Object.entries(value)) {
        if (
          member !== 'initiator' &&
          JSON.stringify(got[member]) !== JSON.stringify(sent)
        )
          problems.push(`${step}: _meta["${UI_KEY}"].${member} changed`);
      }
    } else if (
      key !== UI_KEY &&
      JSON.stringify(got) !== JSON.stringify(value)
    ) {
      problems.push(`${step}: _meta["${key}"] changed`);
    }
  }
  return problems;
}
