import { testScenarioContext } from '../../mock-server/testing';
import {
  runClientAgainstScenario,
  InlineClientRunner
} from './auth/test_helpers/testClient';
import { getHandler } from '../../../examples/clients/typescript/everything-client';
import { runClient as hostReusingTurnId } from '../../../examples/clients/typescript/sep-2817-host-reuses-turn-id';
import { runClient as hostForwardingViewClaim } from '../../../examples/clients/typescript/apps-initiator-host-forwards-view-claim';
import { setLogLevel } from '../../../examples/clients/typescript/helpers/logger';
import {
  getScenario,
  listDraftScenarios,
  listExtensionScenarios
} from '../index';
import {
  DRAFT_PROTOCOL_VERSION,
  LATEST_SPEC_VERSION,
  type SpecVersion
} from '../../types';
import { CLIENT_AUDIT_CONTEXT_CHECKS } from './sep-2817';
import { INITIATOR_HOST_CHECKS } from './apps-initiator';

beforeAll(() => {
  setLogLevel('error');
});

const DECLARED = {
  'sep-2817-client-audit-context': CLIENT_AUDIT_CONTEXT_CHECKS,
  'apps-initiator-host': INITIATOR_HOST_CHECKS
};
const SCENARIOS = Object.keys(DECLARED) as (keyof typeof DECLARED)[];

/** Each check's id and status. */
const statuses = (checks: { id: string; status: string }[]) =>
  Object.fromEntries(checks.map((c) => [c.id, c.status]));

/** Every declared check of `name`, SUCCESS but those of `broken`. */
const expected = (
  name: keyof typeof DECLARED,
  broken: Record<string, string> = {}
) =>
  Object.fromEntries(
    DECLARED[name].map((check) => [check.id, broken[check.id] ?? 'SUCCESS'])
  );

/**
 * A client of the test's own on the stateless wire: it makes each scripted
 * call with the `_meta` that `metaOf` gives it, and nothing else.
 */
function scriptedClient(
  metaOf: (
    meta: Record<string, unknown>,
    byModel: boolean,
    n: number
  ) => Record<string, unknown>
) {
  return async (serverUrl: string) => {
    const { turns } = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT!) as {
      turns: {
        click?: string;
        calls: {
          tool: string;
          arguments: object;
          meta?: Record<string, unknown>;
        }[];
      }[];
    };
    let n = 0;
    for (const turn of turns) {
      for (const call of turn.calls) {
        n += 1;
        await fetch(serverUrl, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'MCP-Protocol-Version': DRAFT_PROTOCOL_VERSION
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: n,
            method: 'tools/call',
            params: {
              name: call.tool,
              arguments: call.arguments,
              _meta: {
                'io.modelcontextprotocol/protocolVersion':
                  DRAFT_PROTOCOL_VERSION,
                'io.modelcontextprotocol/clientCapabilities': {},
                ...metaOf(call.meta ?? {}, turn.click === undefined, n)
              }
            }
          })
        });
      }
    }
  };
}

describe('SEP-2817 and Apps initiator client scenarios', () => {
  test('they are registered: SEP-2817 in the draft suite, the Apps initiator in the extensions suite', () => {
    expect(listDraftScenarios()).toContain('sep-2817-client-audit-context');
    expect(listExtensionScenarios()).toContain('apps-initiator-host');
  });

  for (const name of SCENARIOS) {
    for (const specVersion of [
      DRAFT_PROTOCOL_VERSION,
      LATEST_SPEC_VERSION
    ] as SpecVersion[]) {
      test(`the everything-client passes ${name} at ${specVersion}: every declared check, once, SUCCESS`, async () => {
        const checks = await runClientAgainstScenario(
          new InlineClientRunner(getHandler(name)!),
          name,
          { specVersion }
        );
        expect(checks.map((c) => c.id)).toEqual(
          DECLARED[name].map((c) => c.id)
        );
        expect(statuses(checks)).toEqual(expected(name));
      });
    }
  }

  test('a Host that reuses one turnId across user turns warns on ai-invocation-turn-id-per-turn, and only there', async () => {
    const checks = await runClientAgainstScenario(
      new InlineClientRunner(hostReusingTurnId),
      'sep-2817-client-audit-context',
      {
        specVersion: DRAFT_PROTOCOL_VERSION,
        expectedFailureSlugs: ['ai-invocation-turn-id-per-turn']
      }
    );
    expect(statuses(checks)).toEqual(
      expected('sep-2817-client-audit-context', {
        'ai-invocation-turn-id-per-turn': 'WARNING'
      })
    );
    expect(
      checks.find((c) => c.id === 'ai-invocation-turn-id-per-turn')
        ?.errorMessage
    ).toMatch(/^turns 1, 2, 3 carry the same turnId "[0-9a-f-]{36}"$/);
  });

  test("a Host that forwards a View's own initiator fails apps-initiator-host-overwrites-view-claim, and only that", async () => {
    const checks = await runClientAgainstScenario(
      new InlineClientRunner(hostForwardingViewClaim),
      'apps-initiator-host',
      { expectedFailureSlugs: ['apps-initiator-host-overwrites-view-claim'] }
    );
    expect(statuses(checks)).toEqual(
      expected('apps-initiator-host', {
        'apps-initiator-host-overwrites-view-claim': 'FAILURE'
      })
    );
    expect(
      checks.find((c) => c.id === 'apps-initiator-host-overwrites-view-claim')
        ?.errorMessage
    ).toBe(
      [
        'view-claims-model: a View call arrived with initiator "model" (the View claimed "model")',
        'view-claims-user: a View call arrived with initiator "user" (the View claimed "user")',
        'view-claims-host: a View call arrived with initiator "host" (the View claimed "host")',
        'view-claims-conformance-unknown: a View call arrived with initiator "conformance-unknown" (the View claimed "conformance-unknown")'
      ].join('; ')
    );
  });

  test('a client whose invocationReason has no text and whose model is a string fails both checks', async () => {
    const malformed = scriptedClient((meta, _byModel, n) => ({
      ...meta,
      'io.modelcontextprotocol/aiInvocation': {
        invocationReason: {},
        model: 'conformance-model',
        turnId: `turn-${n}`
      }
    }));
    const checks = await runClientAgainstScenario(
      new InlineClientRunner(malformed),
      'sep-2817-client-audit-context',
      {
        specVersion: DRAFT_PROTOCOL_VERSION,
        expectedFailureSlugs: [
          'sep-2817-client-reason-has-text',
          'sep-2817-client-model-has-name'
        ]
      }
    );
    expect(statuses(checks)).toEqual(
      expected('sep-2817-client-audit-context', {
        'sep-2817-client-reason-has-text': 'FAILURE',
        'sep-2817-client-model-has-name': 'FAILURE'
      })
    );
  });

  test('a Host that passes every call on as written fails the stamping checks; one that stamps its model calls too fails the model check', async () => {
    const passThrough = scriptedClient((meta) => meta);
    const unstamped = await runClientAgainstScenario(
      new InlineClientRunner(passThrough),
      'apps-initiator-host',
      {
        specVersion: DRAFT_PROTOCOL_VERSION,
        expectedFailureSlugs: ['apps-initiator-host-stamps-view-calls']
      }
    );
    expect(statuses(unstamped)).toEqual(
      expected('apps-initiator-host', {
        'apps-initiator-host-stamps-view-calls': 'FAILURE',
        'apps-initiator-host-overwrites-view-claim': 'FAILURE',
        'apps-initiator-host-model-calls-not-app': 'FAILURE'
      })
    );
    const UI = 'io.modelcontextprotocol/ui';
    const stampsAll = scriptedClient((meta) => ({
      ...meta,
      [UI]: { ...(meta[UI] as object), initiator: 'app' }
    }));
    const stamped = await runClientAgainstScenario(
      new InlineClientRunner(stampsAll),
      'apps-initiator-host',
      {
        specVersion: DRAFT_PROTOCOL_VERSION,
        expectedFailureSlugs: ['apps-initiator-host-model-calls-not-app']
      }
    );
    expect(statuses(stamped)).toEqual(
      expected('apps-initiator-host', {
        'apps-initiator-host-model-calls-not-app': 'FAILURE'
      })
    );
  });

  test('a client that makes none of the scripted calls has nothing tested: every declared check fails as untestable', async () => {
    for (const name of SCENARIOS) {
      const scenario = getScenario(name)!;
      await scenario.start(testScenarioContext());
      try {
        const checks = scenario.getChecks();
        expect(checks.map((c) => c.id)).toEqual(
          DECLARED[name].map((c) => c.id)
        );
        for (const [i, check] of checks.entries()) {
          expect(check.status).toBe(
            DECLARED[name][i].level === 'MUST' ? 'FAILURE' : 'WARNING'
          );
          expect(check.errorMessage).toBe(
            'Not testable: the client made none of the scripted tool calls (0 requests arrived)'
          );
        }
      } finally {
        await scenario.stop();
      }
    }
  });
});
