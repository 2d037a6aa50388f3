/**
 * The server checks of the MCP Apps initiator proposal (ext-apps#738): calls
 * stamped with each initiator, and without one, and their answers compared.
 * Both show tolerance: the host-asserted marker alone does not change the
 * answer, which a server that ignores it passes too.
 */

import {
  APPS_INITIATOR,
  attempt,
  DeclaredCheck,
  judged,
  Made,
  quote,
  sameAnswers,
  ServerChecks,
  UI_KEY
} from './sep-2817-probe';

/** The checks of the Apps initiator's `apps-initiator-server`, in the order they are emitted. */
export const INITIATOR_SERVER_CHECKS: DeclaredCheck[] = [
  {
    id: 'apps-initiator-server-same-answer-any-initiator',
    level: 'MUST',
    description:
      'Calls stamped initiator "app", "model", "user" or "host" get the answer a call without an initiator gets: the host-asserted marker alone does not change whether a call is served (tolerance: a server that ignores it passes too)',
    specReferences: [APPS_INITIATOR]
  },
  {
    id: 'apps-initiator-server-absent-same-as-unknown',
    level: 'SHOULD',
    description:
      'A call without an initiator gets the answer a call with an initiator value nobody defined gets: absence is read as unknown, not as "model" (tolerance; the proposal states this without a keyword, so a WARNING)',
    specReferences: [APPS_INITIATOR]
  }
];

/** The Apps initiator checks of a server's answers. */
export const INITIATOR_SERVER: ServerChecks = {
  name: 'apps-initiator-server',
  description:
    'Calls a tool with and without the MCP Apps initiator a Host stamps (_meta["io.modelcontextprotocol/ui"].initiator, ext-apps#738) and compares the answers: the marker is asserted by the Host, not verified, and is not authorization.',
  declared: INITIATOR_SERVER_CHECKS,
  run: (session) =>
    judged(INITIATOR_SERVER_CHECKS, session, async (baseline, probe) => {
      const stamped: Made[] = [];
      for (const initiator of ['app', 'model', 'user', 'host'])
        stamped.push(
          await attempt(probe, `stamped initiator ${quote(initiator)}`, {
            [UI_KEY]: { initiator }
          })
        );
      const unknown = await attempt(probe, 'with an initiator nobody defined', {
        [UI_KEY]: { initiator: 'probe-unknown-7d1f' }
      });
      return [sameAnswers(baseline, stamped), sameAnswers(baseline, [unknown])];
    })
};
