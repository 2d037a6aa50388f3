/**
 * The server checks of SEP-2817 (AI invocation audit context): calls with
 * and without the audit envelope, and their answers compared. Most show
 * tolerance, that an answer does not change with the envelope: a server that
 * ignores it passes them exactly as one that follows the SEP, and each is
 * named for what it shows (`same-answer-*`). Only `sep-2817-server-no-echo`
 * can tell the two apart. `SERVER_CHECKS` lists these and the Apps
 * initiator's, for a harness that runs them over a client of its own.
 */

import { INITIATOR_SERVER } from './apps-initiator-checks';
import {
  AI_INVOCATION_KEY,
  answered,
  attempt,
  DeclaredCheck,
  isObject,
  judged,
  Made,
  NO_SUCH_TOOL,
  Outcome,
  quote,
  sameAnswers,
  sep2817,
  served,
  ServerChecks
} from './sep-2817-probe';

export {
  AI_INVOCATION_KEY,
  begin,
  chooseTool,
  cut,
  quote,
  UI_KEY
} from './sep-2817-probe';

/** Strings that exist only in the envelopes sent, by member: seen anywhere in an answer, that member was echoed. */
const MARKS = {
  userIntent: 'probe-intent-7d1f',
  invocationReason: 'probe-reason-7d1f',
  model: 'probe-model-7d1f'
} as const;
/** A list of strings from the server, the first ten quoted. */
function quoteAll(list: string[]): string {
  const more = list.length > 10 ? `,… ${list.length - 10} more` : '';
  return `[${list.slice(0, 10).map(quote).join(',')}${more}]`;
}

/** A full envelope whose strings carry the marks. */
const envelope = (turnId: string) => ({
  invocationReason: { text: MARKS.invocationReason },
  model: { name: MARKS.model },
  userIntent: { text: MARKS.userIntent },
  turnId
});

/** Each place of an answer that holds marks, and the members they are from. */
function echoes(made: Made): { members: string[]; in: string }[] {
  const places: { members: string[]; in: string }[] = [];
  const look = (place: string, value: unknown) => {
    const text = JSON.stringify(value) ?? '';
    const members = Object.entries(MARKS)
      .filter(([, mark]) => text.includes(mark))
      .map(([member]) => member);
    if (members.length > 0) places.push({ members, in: place });
  };
  if ('result' in made) {
    for (const [name, value] of Object.entries(made.result)) {
      if (name === '_meta' && isObject(value)) {
        for (const [key, entry] of Object.entries(value))
          look(`result._meta[${quote(key)}]`, entry);
      } else look(`result.${name}`, value);
    }
  }
  if ('error' in made) {
    look('error.message', made.error.message);
    look('error.data', made.error.data);
  }
  return places;
}

/**
 * What is wrong with result._meta[AI_INVOCATION_KEY] of a served call made
 * with turnId `turnId`, besides envelope text echoed in it: it may be absent
 * or exactly { turnId }.
 */
function echoProblem(made: Made, turnId: string): string | undefined {
  if (!served(made)) return undefined;
  const meta = made.result._meta;
  const entry = isObject(meta) ? meta[AI_INVOCATION_KEY] : undefined;
  const where = `result._meta[${quote(AI_INVOCATION_KEY)}]`;
  if (entry === undefined) return undefined;
  if (!isObject(entry)) {
    const kind =
      entry === null
        ? 'null'
        : Array.isArray(entry)
          ? 'an array'
          : `a ${typeof entry}`;
    return `${where} is ${kind}, not { turnId }`;
  }
  // Members that carry envelope text are said as echoed; these are the rest.
  const others = Object.keys(entry).filter(
    (member) =>
      member !== 'turnId' &&
      !Object.values(MARKS).some((mark) =>
        (JSON.stringify(entry[member]) ?? '').includes(mark)
      )
  );
  if (others.length > 0)
    return `${where} holds ${quoteAll(others)} besides turnId`;
  if (entry.turnId !== turnId)
    return entry.turnId === undefined
      ? `${where} holds no turnId`
      : `${where} holds turnId ${quote(entry.turnId)}, not the request's "${turnId}"`;
  return undefined;
}

/** The checks of SEP-2817's `sep-2817-audit-context`, in the order they are emitted. */
export const AUDIT_CONTEXT_CHECKS: DeclaredCheck[] = [
  {
    id: 'sep-2817-server-same-answer-with-envelope',
    level: 'MUST',
    description:
      'A call carrying a full audit envelope (invocationReason, model, userIntent, turnId) gets the answer a call without it gets: the envelope does not change whether the call is served (tolerance: a server that ignores the envelope passes too)',
    specReferences: [sep2817('security-considerations')]
  },
  {
    id: 'sep-2817-server-same-answer-empty-intent',
    level: 'MUST',
    description:
      'Calls whose envelope has an empty userIntent, or none, get the answer a call without the envelope gets: they are not refused as malformed (tolerance)',
    specReferences: [sep2817('user-intent')]
  },
  {
    id: 'sep-2817-server-same-answer-any-turn-id',
    level: 'MUST',
    description:
      'Calls whose turnId is a UUID, a ULID, a single character, or looks like a number, a date or a path get the answer a call without the envelope gets: no format is read into it (tolerance)',
    specReferences: [sep2817('turn-identifier')]
  },
  {
    id: 'sep-2817-server-same-answer-repeated-turn',
    level: 'MUST',
    description:
      'Two calls carrying the same turnId each get the answer a call without the envelope gets: the second is not refused or collapsed as a repeat (tolerance)',
    specReferences: [sep2817('security-considerations')]
  },
  {
    id: 'sep-2817-server-no-echo',
    level: 'SHOULD',
    description:
      'No userIntent, invocationReason or model text comes back, in a result or in an error; result._meta[key] is absent or exactly { turnId } of the request',
    specReferences: [sep2817('response-metadata')]
  }
];

/** The SEP-2817 checks of a server's answers. */
export const AUDIT_CONTEXT: ServerChecks = {
  name: 'sep-2817-audit-context',
  description:
    'Calls a tool with and without the AI invocation audit envelope (SEP-2817) and compares the answers: the envelope is client-asserted audit context that neither grants nor refuses a call, and the server echoes at most its turnId.',
  declared: AUDIT_CONTEXT_CHECKS,
  run: (session) =>
    judged(AUDIT_CONTEXT_CHECKS, session, async (baseline, probe) => {
      const ai = (entry: Record<string, unknown>) => ({
        [AI_INVOCATION_KEY]: entry
      });
      const full = await attempt(
        probe,
        'with a full envelope',
        ai(envelope('probe-turn-echo'))
      );
      const empty = await attempt(
        probe,
        'with an empty userIntent',
        ai({ userIntent: {}, turnId: 'probe-turn-empty' })
      );
      const absent = await attempt(
        probe,
        'with an envelope without userIntent',
        ai({ model: { name: MARKS.model }, turnId: 'probe-turn-absent' })
      );
      const forms = [
        '0f8fa2d2-3b6e-4c1a-9d2f-6b1e2c3d4e5f',
        '01J9ZK3M4N5P6Q7R8S9T0V1W2X',
        'x',
        '42',
        '2026-12-01T12:00:00Z',
        '../../turn'
      ];
      const turnIds: Made[] = [];
      for (const turnId of forms)
        turnIds.push(
          await attempt(probe, `with turnId ${quote(turnId)}`, ai({ turnId }))
        );
      const repeated: Made[] = [];
      for (const nth of ['first', 'second'])
        repeated.push(
          await attempt(
            probe,
            `with a turnId already sent (the ${nth} time)`,
            ai(envelope('probe-turn-repeated'))
          )
        );
      const error = await attempt(
        probe,
        '(no such tool) with a full envelope',
        ai(envelope('probe-turn-error')),
        NO_SUCH_TOOL,
        {}
      );
      return [
        sameAnswers(baseline, [full]),
        sameAnswers(baseline, [empty, absent]),
        sameAnswers(baseline, turnIds),
        sameAnswers(baseline, repeated),
        noEcho(
          [
            [full, 'probe-turn-echo'],
            [error, 'probe-turn-error']
          ],
          probe.listed.has(NO_SUCH_TOOL)
        )
      ];
    })
};

/**
 * Passed when none of the calls' answers holds envelope text and each
 * result._meta[key] is absent or exactly { turnId }; else what came back
 * where. Whether the turnId was echoed (which the SEP allows) is in the
 * details. The call of no tool is left out when the server lists a tool by
 * that name.
 */
function noEcho(calls: [Made, string][], noSuchToolListed: boolean): Outcome {
  const kept = calls.filter(
    ([made]) => !(noSuchToolListed && made.tool === NO_SUCH_TOOL)
  );
  if (!kept.some(([made]) => 'result' in made || 'error' in made))
    return {
      untestable: `no call with the envelope was answered (${kept.map(([made]) => `${made.what}: ${answered(made)}`).join('; ')})`
    };
  const problems: string[] = [];
  const places: { call: string; members: string[]; in: string }[] = [];
  for (const [made, turnId] of kept) {
    const found = echoes(made);
    places.push(...found.map((place) => ({ call: made.what, ...place })));
    const where = found
      .slice(0, 10)
      .map((place) => `${JSON.stringify(place.members)} in ${place.in}`)
      .join('; ');
    if (found.length > 0) problems.push(`${made.what}: echoed ${where}`);
    const shape = echoProblem(made, turnId);
    if (shape !== undefined) problems.push(`${made.what}: ${shape}`);
  }
  const echoedTurnId = kept.some(([made, turnId]) => {
    if (!served(made)) return false;
    const meta = made.result._meta;
    const entry = isObject(meta) ? meta[AI_INVOCATION_KEY] : undefined;
    return isObject(entry) && entry.turnId === turnId;
  });
  return {
    passed: problems.length === 0,
    message: problems.join('; '),
    details: {
      tool: kept[0][0].tool,
      echoedTurnId,
      ...(places.length > 0 && { echoed: places })
    }
  };
}

/** The server scenarios' checks, in the order they run. */
export const SERVER_CHECKS: ServerChecks[] = [AUDIT_CONTEXT, INITIATOR_SERVER];
