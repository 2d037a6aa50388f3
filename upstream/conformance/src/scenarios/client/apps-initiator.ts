/**
 * The MCP Apps initiator scenario for Hosts (ext-apps#738): what a Host
 * stamps on the requests its App's View sends and on its model's calls, from
 * a script of user turns and clicks (see `scripted-scenario.ts`).
 */

import {
  APPS_INITIATOR,
  DeclaredCheck,
  isObject,
  Outcome,
  UI_KEY
} from '../server/sep-2817-probe';
import {
  problemsOutcome,
  Script,
  ScriptedCall,
  ScriptedScenario,
  Seen
} from './scripted-scenario';

/** The `initiator` a call arrived with (undefined: none). */
function initiatorOf(params: Record<string, unknown> | undefined): unknown {
  const entry = isObject(params?._meta) ? params._meta[UI_KEY] : undefined;
  return isObject(entry) ? entry.initiator : undefined;
}

/** The `initiator` a View claimed in a scripted call, if any. */
function claimOf(call: ScriptedCall): unknown {
  const entry = call.meta?.[UI_KEY];
  return isObject(entry) ? entry.initiator : undefined;
}

/** What of a View call other than `initiator` did not arrive as the View sent it. */
function changedBesides(s: Seen): string[] {
  const { call, arrived } = s;
  const step = call.arguments.step;
  const same = (a: unknown, b: unknown) =>
    JSON.stringify(a) === JSON.stringify(b);
  const meta = isObject(arrived?._meta) ? arrived._meta : {};
  const problems: string[] = [];
  if (!same(arrived?.arguments, call.arguments))
    problems.push(`${step}: arguments changed`);
  for (const [key, value] of Object.entries(call.meta ?? {})) {
    const got = meta[key];
    if (key === UI_KEY && isObject(value) && isObject(got)) {
      for (const [member, sent] of Object.entries(value))
        if (member !== 'initiator' && !same(got[member], sent))
          problems.push(`${step}: _meta["${UI_KEY}"].${member} changed`);
    } else if (key !== UI_KEY && !same(got, value)) {
      problems.push(`${step}: _meta["${key}"] changed`);
    }
  }
  return problems;
}

/** The checks of `apps-initiator-host`, in the order they are emitted. */
export const INITIATOR_HOST_CHECKS: DeclaredCheck[] = [
  {
    id: 'apps-initiator-host-stamps-view-calls',
    level: 'MUST',
    description:
      'A View call that carries no initiator arrives stamped initiator "app"',
    specReferences: [APPS_INITIATOR]
  },
  {
    id: 'apps-initiator-host-overwrites-view-claim',
    level: 'MUST',
    description:
      'A View call that claims an initiator ("model", "user", "host", "app" or a value nobody defined) arrives with "app": the Host overwrites what the View wrote',
    specReferences: [APPS_INITIATOR]
  },
  {
    id: 'apps-initiator-host-model-calls-not-app',
    level: 'MUST',
    description:
      'No call the model made arrives with initiator "app", also when the model\'s call carried it',
    specReferences: [APPS_INITIATOR]
  },
  {
    id: 'apps-initiator-host-stamps-only-initiator',
    level: 'SHOULD',
    description:
      "Stamping changes only initiator: the ui entry's other members, other _meta keys and arguments arrive as the View sent them (the proposal words only the stamp itself; a WARNING)",
    specReferences: [APPS_INITIATOR]
  }
];

/** The values a View claims in the script, each in a call of its own. */
const CLAIMS = ['model', 'user', 'host', 'app', 'conformance-unknown'];

export class AppsInitiatorHostScenario extends ScriptedScenario {
  readonly name = 'apps-initiator-host';
  readonly source = { extensionId: 'io.modelcontextprotocol/ui' } as const;
  readonly description = `Tests that a Host stamps \`_meta["${UI_KEY}"].initiator = "app"\` on every request its App's View sends, whatever the View wrote there, and never on a call its model makes (MCP Apps, ext-apps#738).

**Host Implementation Requirements:**

Read the script from \`MCP_CONFORMANCE_CONTEXT\` (\`{ model, app, turns }\`). A turn with \`user\` is the model's: make each of its \`calls\` as a model call (\`_meta\` as the call's \`meta\` gives it, if at all). A turn with \`click\` is the App's: hand each of its calls to the Host's AppBridge as the View would send it (\`tools/call\` with the call's \`tool\`, \`arguments\` and \`_meta\` = \`meta\`), so that the Host proxies it to the server.

- Every View request arrives with \`initiator: "app"\`, also when the View claimed another value (MUST)
- No model call arrives with \`initiator: "app"\`, also when the model's call carried it (MUST)
- Stamping changes only \`initiator\` (WARNING)`;
  protected readonly declared = INITIATOR_HOST_CHECKS;
  protected readonly script: Script = {
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
          { tool: 'refresh', arguments: { step: 'view-plain' }, meta: {} },
          {
            tool: 'refresh',
            arguments: { step: 'view-entry-without-initiator' },
            meta: { [UI_KEY]: { resourceUri: 'ui://conformance/view' } }
          }
        ]
      },
      {
        click: 'Refresh, from a View that writes its own initiator',
        calls: CLAIMS.map((claim) => ({
          tool: 'refresh' as const,
          arguments: { step: `view-claims-${claim}` },
          meta: {
            [UI_KEY]: {
              initiator: claim,
              resourceUri: 'ui://conformance/view'
            },
            'com.example/clickedAt': '2026-12-01T12:00:00Z'
          }
        }))
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

  protected judge(seen: Seen[]): Outcome[] {
    const said = (value: unknown) =>
      value === undefined
        ? 'no initiator'
        : `initiator ${JSON.stringify(value)}`;
    /** Judges the calls `pick` selects that arrived; those that never did are named in the details. */
    const of = (
      pick: (s: Seen) => boolean,
      problem: (s: Seen) => string[]
    ): Outcome => {
      const picked = seen.filter(pick);
      const arrived = picked.filter((s) => s.arrived !== undefined);
      const missing = picked
        .filter((s) => s.arrived === undefined)
        .map((s) => s.call.arguments.step);
      if (arrived.length === 0)
        return { untestable: `none of ${missing.join(', ')} arrived` };
      return {
        ...problemsOutcome(arrived.flatMap(problem)),
        ...(missing.length > 0 && { details: { neverArrived: missing } })
      };
    };
    const stamped = (s: Seen) =>
      initiatorOf(s.arrived) === 'app'
        ? []
        : [
            `${s.call.arguments.step}: a View call arrived with ${said(initiatorOf(s.arrived))}${claimOf(s.call) === undefined ? '' : ` (the View claimed ${JSON.stringify(claimOf(s.call))})`}`
          ];
    return [
      of((s) => s.by === 'app' && claimOf(s.call) === undefined, stamped),
      of((s) => s.by === 'app' && claimOf(s.call) !== undefined, stamped),
      of(
        (s) => s.by === 'model',
        (s) =>
          initiatorOf(s.arrived) === 'app'
            ? [
                `${s.call.arguments.step}: a model call arrived with initiator "app"`
              ]
            : []
      ),
      of((s) => s.by === 'app', changedBesides)
    ];
  }
}
