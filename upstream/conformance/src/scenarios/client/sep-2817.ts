/**
 * The SEP-2817 (AI invocation audit context) scenario for clients: the
 * audit envelope a client attaches to the tool calls its model makes, from
 * a script of user turns (see `scripted-scenario.ts`).
 */

import { DRAFT_PROTOCOL_VERSION } from '../../types';
import {
  AI_INVOCATION_KEY,
  DeclaredCheck,
  isObject,
  Outcome,
  sep2817
} from '../server/sep-2817-probe';
import {
  problemsOutcome,
  Script,
  ScriptedScenario,
  Seen
} from './scripted-scenario';

/** The envelope a call arrived with, if any. */
const envelopeOf = (params: Record<string, unknown> | undefined) =>
  isObject(params?._meta) ? params._meta[AI_INVOCATION_KEY] : undefined;

/**
 * Checks of one member of each envelope that arrived: `problem` says what
 * is wrong with a member present; untestable when no envelope carried it.
 */
function memberOutcome(
  seen: Seen[],
  member: string,
  problem: (value: unknown) => string | undefined
): Outcome {
  const carried = seen.flatMap((s) => {
    const envelope = envelopeOf(s.arrived);
    return isObject(envelope) && member in envelope
      ? [{ step: s.call.arguments.step, value: envelope[member] }]
      : [];
  });
  if (carried.length === 0)
    return {
      untestable: `no model call arrived with an envelope holding ${member} (${seen.filter((s) => s.arrived !== undefined).length} of ${seen.length} scripted model calls arrived)`
    };
  return problemsOutcome(
    carried.flatMap(({ step, value }) => {
      const why = problem(value);
      return why === undefined ? [] : [`${step}: ${why}`];
    })
  );
}

/** The checks of `sep-2817-client-audit-context`, in the order they are emitted. */
export const CLIENT_AUDIT_CONTEXT_CHECKS: DeclaredCheck[] = [
  {
    id: 'sep-2817-client-reason-has-text',
    level: 'MUST',
    description:
      'Every invocationReason a model call carries is an object with a string text',
    specReferences: [sep2817('invocation-reason')]
  },
  {
    id: 'sep-2817-client-model-has-name',
    level: 'MUST',
    description:
      'Every model a model call carries is an object with a string name',
    specReferences: [sep2817('model')]
  },
  {
    id: 'ai-invocation-turn-id-per-turn',
    level: 'SHOULD',
    description:
      'Each user turn has a turnId of its own: no two turns share one, so a turnId groups the requests of one turn (the page defines turnId so and has no keyword for it; a WARNING)',
    specReferences: [sep2817('turn-identifier')]
  }
];

export class Sep2817ClientAuditContextScenario extends ScriptedScenario {
  readonly name = 'sep-2817-client-audit-context';
  readonly source = { introducedIn: DRAFT_PROTOCOL_VERSION } as const;
  readonly description = `Tests the AI invocation audit envelope (SEP-2817) a client _that attaches one_ sends with the tool calls its model makes: attaching it is optional (MAY), so a client that sends none has nothing tested and fails as untestable.

**Client Implementation Requirements:**

Read the script from \`MCP_CONFORMANCE_CONTEXT\` (\`{ model, app, turns }\`). For each turn, as a new user turn: make each call of \`calls\` with \`tools/call\` (\`name\` the call's \`tool\`, \`arguments\` its \`arguments\`) as the model's call, with \`_meta["${AI_INVOCATION_KEY}"]\` = \`{ invocationReason: { text: reason }, model: { name: model }, userIntent: { text: user }, turnId }\`, one \`turnId\` for the turn.

- \`invocationReason\`, when sent, holds a string \`text\`; \`model\`, when sent, a string \`name\` (MUST)
- Each user turn has a \`turnId\` of its own (WARNING)`;
  protected readonly declared = CLIENT_AUDIT_CONTEXT_CHECKS;
  protected readonly script: Script = {
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
        user: 'And the next ten',
        calls: [
          {
            tool: 'lookup',
            arguments: { step: 'turn-3-call-1' },
            reason: 'The user asked for more rows.'
          }
        ]
      }
    ]
  };

  protected judge(seen: Seen[]): Outcome[] {
    const stringIn = (member: string) => (value: unknown) =>
      isObject(value) && typeof value[member] === 'string'
        ? undefined
        : `is not an object with a string ${member}`;
    return [
      memberOutcome(seen, 'invocationReason', stringIn('text')),
      memberOutcome(seen, 'model', stringIn('name')),
      turnIdsOutcome(seen)
    ];
  }
}

/** Passed when no turnId arrived in two user turns; untestable when fewer than two turns brought one. */
function turnIdsOutcome(seen: Seen[]): Outcome {
  const turnsOf = new Map<string, Set<number>>();
  for (const s of seen) {
    const envelope = envelopeOf(s.arrived);
    const turnId = isObject(envelope) ? envelope.turnId : undefined;
    if (typeof turnId !== 'string') continue;
    turnsOf.set(turnId, (turnsOf.get(turnId) ?? new Set()).add(s.turn));
  }
  const turns = new Set([...turnsOf.values()].flatMap((set) => [...set]));
  if (turns.size < 2)
    return {
      untestable: `turnIds arrived from ${turns.size} user turn(s); two are needed to compare`
    };
  const reused = [...turnsOf]
    .filter(([, set]) => set.size > 1)
    .map(
      ([turnId, set]) =>
        `turns ${[...set].map((turn) => turn + 1).join(', ')} carry the same turnId ${JSON.stringify(turnId)}`
    );
  return problemsOutcome(reused);
}
