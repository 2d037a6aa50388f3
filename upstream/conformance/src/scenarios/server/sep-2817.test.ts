import { readFileSync } from 'fs';
import path from 'path';
import { parse as parseYaml } from 'yaml';
import { testContext } from '../../connection/testing';
import { DRAFT_PROTOCOL_VERSION } from '../../types';
import { getClientScenario, listDraftClientScenarios } from '../index';
import { CLIENT_AUDIT_CONTEXT_CHECKS } from '../client/sep-2817';
import {
  INITIATOR_SERVER,
  INITIATOR_SERVER_CHECKS
} from './apps-initiator-checks';
import { AUDIT_CONTEXT, AUDIT_CONTEXT_CHECKS } from './sep-2817-checks';
import {
  Answer,
  begin,
  CallParams,
  Probe,
  ServerChecks,
  UI_KEY
} from './sep-2817-probe';

/** A server as the checks see it, answering each tools/call with `answer`. */
function probe(answer: (params: CallParams) => Answer): Probe {
  return {
    tool: 'test_simple_text',
    arguments: {},
    listed: new Set(['test_simple_text']),
    send: async (params) => answer(params)
  };
}

const served: Answer = { result: { content: [] } };
const refused: Answer = { error: { code: -32600, message: 'refused' } };

/** Each check's id and status. */
async function statuses(checks: ServerChecks, server: Probe) {
  const emitted = await checks.run(await begin(server));
  return Object.fromEntries(emitted.map((c) => [c.id, c.status]));
}

describe('SEP-2817 and Apps initiator server scenarios', () => {
  test('the sep-2817-* checks the scenarios emit are exactly the rows of sep-2817.yaml', () => {
    const yaml = parseYaml(
      readFileSync(path.join(process.cwd(), 'src/seps/sep-2817.yaml'), 'utf8')
    ) as { requirements: { check?: string }[] };
    const declared = [...AUDIT_CONTEXT_CHECKS, ...CLIENT_AUDIT_CONTEXT_CHECKS]
      .map((check) => check.id)
      .filter((id) => id.startsWith('sep-2817-'));
    const rows = yaml.requirements.flatMap((row) =>
      row.check === undefined ? [] : [row.check]
    );
    expect(new Set(declared)).toEqual(new Set(rows));
    expect(declared).toHaveLength(rows.length);
  });

  test('they are registered: SEP-2817 in the draft suite, the Apps initiator as an extension', () => {
    expect(listDraftClientScenarios()).toContain('sep-2817-audit-context');
    expect(getClientScenario('apps-initiator-server')?.source).toEqual({
      extensionId: 'io.modelcontextprotocol/ui'
    });
  });

  test('a server that serves every call alike passes every check', async () => {
    for (const checks of [AUDIT_CONTEXT, INITIATOR_SERVER]) {
      const all = await statuses(
        checks,
        probe(() => served)
      );
      expect(Object.values(all)).toEqual(checks.declared.map(() => 'SUCCESS'));
    }
  });

  test('with no tool it may call, nothing is tested: every declared check fails as untestable, MUSTs as FAILURE, SHOULDs as WARNING', async () => {
    const none: Probe = {
      arguments: {},
      listed: new Set(),
      send: () => Promise.reject(new Error('no call may be made'))
    };
    for (const checks of [AUDIT_CONTEXT, INITIATOR_SERVER]) {
      const emitted = await checks.run(await begin(none));
      expect(emitted.map((c) => c.id)).toEqual(
        checks.declared.map((c) => c.id)
      );
      for (const [i, check] of emitted.entries()) {
        expect(check.status).toBe(
          checks.declared[i].level === 'MUST' ? 'FAILURE' : 'WARNING'
        );
        expect(check.errorMessage).toMatch(/^Not testable: no tool was named/);
        expect(check.details).toMatchObject({ untestable: true });
      }
    }
  });

  test('when the call without _meta is refused or fails as a tool, nothing can be compared with it', async () => {
    const toolError: Answer = { result: { content: [], isError: true } };
    for (const [answer, said] of [
      [refused, 'error -32600: "refused"'],
      [toolError, 'a tool error']
    ] as const) {
      const emitted = await AUDIT_CONTEXT.run(await begin(probe(() => answer)));
      for (const check of emitted) {
        expect(check.errorMessage).toBe(
          `Not testable: tools/call "test_simple_text" without _meta was answered with ${said}, not a result, so nothing can be compared with it`
        );
      }
    }
  });

  test('a server whose answer depends on the envelope fails the check of it', async () => {
    const all = await statuses(
      AUDIT_CONTEXT,
      probe((params) =>
        params._meta?.['io.modelcontextprotocol/aiInvocation']
          ? refused
          : served
      )
    );
    expect(all).toEqual({
      'sep-2817-server-same-answer-with-envelope': 'FAILURE',
      'sep-2817-server-same-answer-empty-intent': 'FAILURE',
      'sep-2817-server-same-answer-any-turn-id': 'FAILURE',
      'sep-2817-server-same-answer-repeated-turn': 'FAILURE',
      'sep-2817-server-no-echo': 'SUCCESS'
    });
  });

  test('a server that refuses a turnId it has seen, as an idempotency key, fails only that check', async () => {
    const seen = new Set<unknown>();
    const all = await statuses(
      AUDIT_CONTEXT,
      probe((params) => {
        const entry = params._meta?.['io.modelcontextprotocol/aiInvocation'];
        const turnId = (entry as { turnId?: unknown } | undefined)?.turnId;
        if (turnId !== undefined && seen.has(turnId)) return refused;
        seen.add(turnId);
        return served;
      })
    );
    expect(all['sep-2817-server-same-answer-repeated-turn']).toBe('FAILURE');
    expect(
      Object.values(all).filter((status) => status !== 'SUCCESS')
    ).toHaveLength(1);
  });

  test('a server that refuses calls stamped "model" fails the initiator check; one that reads absence otherwise than an unknown value warns on the other', async () => {
    const initiatorOf = (params: CallParams) =>
      (params._meta?.[UI_KEY] as { initiator?: string } | undefined)?.initiator;
    expect(
      await statuses(
        INITIATOR_SERVER,
        probe((params) => (initiatorOf(params) === 'model' ? refused : served))
      )
    ).toEqual({
      'apps-initiator-server-same-answer-any-initiator': 'FAILURE',
      'apps-initiator-server-absent-same-as-unknown': 'SUCCESS'
    });
    // Serves a call without an initiator, refuses one whose value it does not
    // know: it reads absence otherwise than unknown.
    const known = [undefined, 'app', 'model', 'user', 'host'];
    expect(
      await statuses(
        INITIATOR_SERVER,
        probe((params) =>
          known.includes(initiatorOf(params)) ? served : refused
        )
      )
    ).toEqual({
      'apps-initiator-server-same-answer-any-initiator': 'SUCCESS',
      'apps-initiator-server-absent-same-as-unknown': 'WARNING'
    });
  });

  test('an unreachable server: every declared check fails as untestable, saying why', async () => {
    for (const name of ['sep-2817-audit-context', 'apps-initiator-server']) {
      const checks = await getClientScenario(name)!.run(
        testContext('http://localhost:1/mcp', DRAFT_PROTOCOL_VERSION)
      );
      const declared =
        name === 'sep-2817-audit-context'
          ? AUDIT_CONTEXT_CHECKS
          : INITIATOR_SERVER_CHECKS;
      expect(checks.map((c) => c.id)).toEqual(declared.map((c) => c.id));
      for (const check of checks)
        expect(check.errorMessage).toMatch(
          /^Not testable: cannot reach the server: /
        );
    }
  });
});
