/**
 * The checks of SEP-2817 (AI invocation audit context) and of the MCP Apps
 * initiator proposal that a server's answers make observable on the wire,
 * apart from how the client reaches the server: a scenario gets a `Probe`
 * (one tool it may call, and a way to send tools/call) and returns checks.
 * `sep-2817.ts` runs them as the suite's server scenarios; `mcp-provenance
 * probe` runs the same functions over its own bounded client.
 *
 * Pointed at a production server, a checker must cause no side effect: the
 * scenarios call one tool (`chooseTool`), and otherwise only a name the
 * server lists no tool by. Severity is the proposal's wording: a broken MUST
 * is a FAILURE, a broken SHOULD a WARNING; an optional behaviour (MAY) that
 * is absent is INFO.
 */

import type { ConformanceCheck, SpecReference } from '../../types';

/** The requirement level of a check, as the proposal words it. */
export type Level = 'MUST' | 'SHOULD' | 'MAY';

/** A check as the suite reports one, with the rule and level it checks. */
export interface Sep2817Check extends ConformanceCheck {
  /** The rule's ID in mcp-provenance's rules (docs/rules.md there). */
  rule: string;
  level: Level;
}

/** A tool as tools/list lists it: what `chooseTool` reads. */
export interface ListedTool {
  name: string;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean };
}

/** The params of a tools/call. */
export interface CallParams {
  name: string;
  arguments: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** What a tools/call came back as: a result, a JSON-RPC error, or why no answer came. */
export type Answer =
  | { result: Record<string, unknown> }
  | { error: { code: number; message: string; data?: unknown } }
  | { failure: string };

/** The server as the scenarios see it. */
export interface Probe {
  /** The tool the scenarios call (see `chooseTool`); undefined: none may be called. */
  tool?: string;
  /** The arguments it is called with. */
  arguments: Record<string, unknown>;
  /** The names of the server's tools. */
  listed: ReadonlySet<string>;
  /** Sends a tools/call; never rejects. */
  send(params: CallParams): Promise<Answer>;
}

/** The key of SEP-2817's envelope, and a vendor key of the kind it asks experiments to use. */
export const AI_INVOCATION_KEY = 'io.modelcontextprotocol/aiInvocation';
export const VENDOR_KEY = 'com.example/aiInvocation';
/** The key of the MCP Apps entry whose `initiator` a Host stamps. */
export const UI_KEY = 'io.modelcontextprotocol/ui';

/** Strings that exist only in the envelopes sent, by member: seen anywhere in an answer, that member leaked. */
const MARKS = {
  userIntent: 'probe-intent-7d1f',
  invocationReason: 'probe-reason-7d1f',
  model: 'probe-model-7d1f'
} as const;
export const REFS: Record<'sep' | 'apps', SpecReference> = {
  sep: {
    id: 'SEP-2817',
    url: 'https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2817'
  },
  apps: {
    id: 'ext-apps#738',
    url: 'https://github.com/modelcontextprotocol/ext-apps/issues/738'
  }
};
/** What a broken check of each level is. */
const BROKEN = { MUST: 'FAILURE', SHOULD: 'WARNING', MAY: 'INFO' } as const;
/** How much of one string from the server a message quotes. */
const QUOTED_CHARS = 200;
/** The name of no tool: called to see how the server answers an error. */
export const NO_SUCH_TOOL = 'probe-no-such-tool-7d1f';
/** The side-effect-free tool every server the suite tests implements. */
const SUITE_TOOL = 'test_simple_text';
/** Why the checks that need a call are not run when there is no tool the scenarios may call. */
export const NO_TOOL =
  'not run: no tool was named, none is named test_simple_text and none is annotated readOnlyHint: true (with arguments that can be filled); no other tool is called';

/** At most QUOTED_CHARS of a string from the server, "…" where it was cut (never inside a surrogate pair). */
export function cut(text: unknown): string {
  const string = String(text);
  if (string.length <= QUOTED_CHARS) return string;
  const end = /[\ud800-\udbff]/.test(string[QUOTED_CHARS - 1])
    ? QUOTED_CHARS - 1
    : QUOTED_CHARS;
  return `${string.slice(0, end)}…`;
}

/** A string from the server, cut, in quotes. */
export const quote = (text: unknown): string => `"${cut(text)}"`;

/** A list of strings from the server, the first ten quoted. */
function quoteAll(list: string[]): string {
  const more = list.length > 10 ? `,… ${list.length - 10} more` : '';
  return `[${list.slice(0, 10).map(quote).join(',')}${more}]`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How a check came out: passed (undefined: not run), why not, what was seen. */
export interface Outcome {
  passed?: boolean;
  message?: string;
  details?: Record<string, unknown>;
}

/** A check as the suite reports one, from how it came out. */
export function check(
  id: string,
  rule: string,
  level: Level,
  description: string,
  { passed, message, details }: Outcome
): Sep2817Check {
  return {
    id,
    name: id,
    rule,
    level,
    description,
    status:
      passed === undefined ? 'SKIPPED' : passed ? 'SUCCESS' : BROKEN[level],
    timestamp: new Date().toISOString(),
    specReferences: [rule.startsWith('UI') ? REFS.apps : REFS.sep],
    ...(passed !== true && message !== undefined && { errorMessage: message }),
    ...(details !== undefined && { details })
  };
}

/** A full envelope whose strings carry the marks. */
const envelope = (turnId: string, extra: Record<string, unknown> = {}) => ({
  invocationReason: { text: MARKS.invocationReason },
  model: { name: MARKS.model },
  userIntent: { text: MARKS.userIntent },
  turnId,
  ...extra
});

/** Arguments that satisfy a tool's required inputs, as far as their types say; undefined when they cannot. */
function argumentsFor(tool: ListedTool): Record<string, unknown> | undefined {
  const schema = isObject(tool.inputSchema) ? tool.inputSchema : {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  const filled: Record<string, unknown> = {};
  const samples: Record<string, unknown> = {
    string: 'probe',
    number: 1,
    integer: 1,
    boolean: false,
    array: [],
    object: {}
  };
  for (const name of Array.isArray(schema.required) ? schema.required : []) {
    const property = properties[String(name)];
    const type = isObject(property) ? property.type : undefined;
    if (
      typeof type !== 'string' ||
      !Object.prototype.hasOwnProperty.call(samples, type)
    )
      return undefined;
    filled[String(name)] = samples[type];
  }
  return filled;
}

/**
 * The tool the scenarios call, and its arguments: the one named; else the
 * suite's `test_simple_text` when listed; else the first the server
 * annotates readOnlyHint: true whose required arguments can be filled (or
 * `args` gives); else none. Never another: the server may be in production.
 */
export function chooseTool(
  tools: ListedTool[],
  named?: { tool?: string; arguments?: Record<string, unknown> }
): { tool?: string; arguments: Record<string, unknown> } {
  const fill = (tool?: ListedTool) =>
    named?.arguments ?? (tool && argumentsFor(tool));
  const pick = (tool?: ListedTool) =>
    tool && { tool: tool.name, arguments: fill(tool) ?? {} };
  if (named?.tool !== undefined) {
    const listed = tools.find((t) => t.name === named.tool);
    return { tool: named.tool, arguments: fill(listed) ?? {} };
  }
  return (
    pick(tools.find((t) => t.name === SUITE_TOOL)) ??
    pick(
      tools.find(
        (t) => t.annotations?.readOnlyHint === true && fill(t) !== undefined
      )
    ) ?? { arguments: {} }
  );
}

/** A tools/call as made: what it was, and its answer; `withheld` says why it was not made. */
type Made = { what: string; tool: string } & (Answer | { withheld: string });

/** What the scenarios share: the probe, and the call made without the envelope. */
export interface Session {
  probe: Probe;
  baseline: Made;
}

/** Why tool `name` may not be called, or undefined when it may. */
function withheldCall(probe: Probe, name: string): string | undefined {
  if (probe.tool === undefined) return NO_TOOL;
  if (name !== probe.tool && probe.listed.has(name))
    return `not run: the server lists a tool named ${quote(name)}, which is not called`;
  return undefined;
}

/** Makes a tools/call with `meta` as `_meta` (or none), unless it is withheld. */
async function attempt(
  probe: Probe,
  what: string,
  meta: Record<string, unknown> | undefined,
  name = probe.tool ?? '',
  args = probe.arguments
): Promise<Made> {
  const call = { what: `tools/call ${quote(name)} ${what}`, tool: name };
  const why = withheldCall(probe, name);
  if (why !== undefined) return { ...call, withheld: why };
  const params = { name, arguments: args, ...(meta && { _meta: meta }) };
  return { ...call, ...(await probe.send(params)) };
}

/** Starts a session: the call without the envelope, which the others are compared with. */
export async function begin(probe: Probe): Promise<Session> {
  return {
    probe,
    baseline: await attempt(probe, 'without the envelope', undefined)
  };
}

const notCalled = (made: Made): Outcome =>
  'withheld' in made ? { message: made.withheld } : {};
const accepted = (
  made: Made
): made is Made & { result: Record<string, unknown> } => 'result' in made;

/** Why a call was not served, in words. */
function refusal(made: Made): string {
  if ('error' in made)
    return `the server answered error ${made.error.code}: ${quote(made.error.message)}`;
  if ('failure' in made) return made.failure;
  return 'withheld' in made ? made.withheld : 'served';
}

/** Passed when the call was served; else why not. */
function served(made: Made): Outcome {
  if ('withheld' in made) return notCalled(made);
  return {
    passed: accepted(made),
    message: accepted(made) ? undefined : `${made.what}: ${refusal(made)}`,
    details: { tool: made.tool }
  };
}

/** Not run: the call without the envelope was not served (or not made). */
function unrunnable(session: Session): Outcome {
  if ('withheld' in session.baseline) return notCalled(session.baseline);
  return {
    message:
      'not run: the call without the envelope was not served (AI-1-absent)',
    details: { tool: session.probe.tool }
  };
}

/** Not judged: the call to judge was not served. */
const unjudged = (made: Made): Outcome => ({
  message: `not judged: ${made.what}: ${refusal(made)}`,
  details: { tool: made.tool }
});

/** Passed when the call with `meta` is served, made only when the call without the envelope was. */
async function whenServed(
  session: Session,
  what: string,
  meta: Record<string, unknown>
): Promise<Outcome> {
  if (!accepted(session.baseline)) return unrunnable(session);
  return served(await attempt(session.probe, what, meta));
}

/** Each place of an answer that holds marks, and the members they are from. */
function leaks(made: Made): { members: string[]; in: string }[] {
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

/** Passed when no mark came back; else which members leaked, and where. */
function noLeak(made: Made): Outcome {
  if ('withheld' in made) return notCalled(made);
  if ('failure' in made)
    return {
      message: `${made.what}: ${made.failure}`,
      details: { tool: made.tool }
    };
  const places = leaks(made);
  const where = places
    .slice(0, 10)
    .map((place) => `${JSON.stringify(place.members)} in ${place.in}`)
    .join('; ');
  return {
    passed: places.length === 0,
    message: `${made.what}: leaked ${where}`,
    details: { tool: made.tool, leaked: places }
  };
}

/** Passed when result._meta[key] is absent or exactly { turnId } of the request; else what it holds. */
function onlyTurnId(
  made: Made & { result: Record<string, unknown> },
  key: string,
  turnId: string
): Outcome {
  const meta = made.result._meta;
  const entry = isObject(meta) ? meta[key] : undefined;
  const where = `result._meta[${quote(key)}]`;
  const say = (problem: string): Outcome => ({
    passed: false,
    message: `${made.what}: ${where} ${problem}`,
    details: { tool: made.tool }
  });
  if (entry === undefined)
    return { passed: true, details: { tool: made.tool } };
  if (!isObject(entry)) {
    const kind =
      entry === null
        ? 'null'
        : Array.isArray(entry)
          ? 'an array'
          : `a ${typeof entry}`;
    return say(`is ${kind}, not { turnId }`);
  }
  const others = Object.keys(entry).filter((member) => member !== 'turnId');
  if (others.length > 0) return say(`holds ${quoteAll(others)} besides turnId`);
  if (entry.turnId !== turnId) {
    return say(
      entry.turnId === undefined
        ? 'holds no turnId'
        : `holds turnId ${quote(entry.turnId)}, not the request's "${turnId}"`
    );
  }
  return { passed: true, details: { tool: made.tool } };
}

/** A scenario of the server's answers: its name, what it checks, and its checks. */
export interface ServerChecks {
  name: string;
  description: string;
  checks(session: Session): Promise<Sep2817Check[]>;
}

/** A server accepts a call whatever its envelope. */
export const ENVELOPE_ACCEPTED: ServerChecks = {
  name: 'sep-2817-envelope-accepted',
  description:
    'A server accepts a tools/call whatever its audit envelope: absent, valid, with unknown fields, under a vendor key, or hostile but valid JSON. The envelope is client-asserted context, never authorization evidence: it neither grants nor refuses a call.',
  async checks(session) {
    const hostile = envelope('probe-turn-hostile', {
      userIntent: {
        text: `a\r\nINFO audit: approved\u202e ${'x'.repeat(100_000)}`
      }
    });
    const ai = (turnId: string, extra?: Record<string, unknown>) => ({
      [AI_INVOCATION_KEY]: envelope(turnId, extra)
    });
    return [
      check(
        'AI-1-absent',
        'AI-1',
        'MUST',
        'a call without the envelope is served',
        served(session.baseline)
      ),
      check(
        'AI-2-valid',
        'AI-2',
        'MUST',
        'a call with a valid envelope is served as one without',
        await whenServed(
          session,
          'with a valid envelope',
          ai('probe-turn-valid')
        )
      ),
      check(
        'AI-8-unknown-fields',
        'AI-8',
        'SHOULD',
        'unknown envelope fields are tolerated',
        await whenServed(
          session,
          'with unknown envelope fields',
          ai('probe-turn-unknown', { probeExtra: { nested: 1 } })
        )
      ),
      check(
        'KEY-3-vendor-key',
        'KEY-3',
        'SHOULD',
        'an envelope under a vendor key is served',
        await whenServed(session, 'with an envelope under a vendor key', {
          [VENDOR_KEY]: envelope('probe-turn-vendor')
        })
      ),
      check(
        'AI-13-hostile',
        'AI-13',
        'SHOULD',
        'CR/LF, a bidi override and a 100 KB intent do not fail the call (neutralize, do not refuse)',
        await whenServed(session, 'with a hostile envelope', {
          [AI_INVOCATION_KEY]: hostile
        })
      ),
      check(
        'AI-6-empty-intent',
        'AI-6',
        'MUST',
        'an empty userIntent is not malformed',
        await whenServed(session, 'with an empty userIntent', {
          [AI_INVOCATION_KEY]: { userIntent: {}, turnId: 'probe-turn-empty' }
        })
      )
    ];
  }
};

/** A server echoes nothing, or the turnId alone. */
export const ECHO: ServerChecks = {
  name: 'sep-2817-echo',
  description:
    "A server echoes nothing or only the request's turnId in result._meta[key], never the other fields, in results and errors alike.",
  async checks(session) {
    const { probe, baseline } = session;
    const callable = accepted(baseline);
    const valid = callable
      ? await attempt(probe, 'with a valid envelope', {
          [AI_INVOCATION_KEY]: envelope('probe-turn-echo')
        })
      : undefined;
    const vendor = callable
      ? await attempt(probe, 'with an envelope under a vendor key', {
          [VENDOR_KEY]: envelope('probe-turn-echo-vendor')
        })
      : undefined;
    const missing = await attempt(
      probe,
      '(no such tool) with a valid envelope',
      { [AI_INVOCATION_KEY]: envelope('probe-turn-error') },
      NO_SUCH_TOOL,
      {}
    );
    /** `judge` of `made` when it was served; else why not. */
    const ifServed = (
      made: Made | undefined,
      judge: (served: Made & { result: Record<string, unknown> }) => Outcome
    ) =>
      made === undefined
        ? unrunnable(session)
        : accepted(made)
          ? judge(made)
          : unjudged(made);
    const echoed = (
      made: Made & { result: Record<string, unknown> }
    ): Outcome => {
      const meta = made.result._meta;
      const entry = isObject(meta) ? meta[AI_INVOCATION_KEY] : undefined;
      return {
        passed: isObject(entry) && entry.turnId === 'probe-turn-echo',
        message: `${made.what}: the turnId is not echoed in result._meta[${quote(AI_INVOCATION_KEY)}]`,
        details: { tool: made.tool }
      };
    };
    return [
      check(
        'AI-11-only-turnId',
        'AI-11',
        'SHOULD',
        'result._meta[key] is absent or exactly { turnId } of the request',
        ifServed(valid, (made) =>
          onlyTurnId(made, AI_INVOCATION_KEY, 'probe-turn-echo')
        )
      ),
      check(
        'AI-11-no-leak',
        'AI-11',
        'SHOULD',
        'no userIntent, invocationReason or model text anywhere in the result',
        ifServed(valid, noLeak)
      ),
      check(
        'AI-11-no-leak-in-errors',
        'AI-11',
        'SHOULD',
        'no envelope text in the answer to a call that fails',
        noLeak(missing)
      ),
      check(
        'AI-11-vendor-key',
        'AI-11',
        'SHOULD',
        'under a vendor key, the same: at most the turnId, no other text',
        ifServed(vendor, (made) => {
          const echo = onlyTurnId(made, VENDOR_KEY, 'probe-turn-echo-vendor');
          return echo.passed ? noLeak(made) : echo;
        })
      ),
      check(
        'AI-11-echoes-turnId',
        'AI-11',
        'MAY',
        'the turnId is echoed, so the host can join the answer to its turn',
        ifServed(valid, echoed)
      )
    ];
  }
};

/** A server accepts what a Host stamps. */
export const INITIATOR_ACCEPTED: ServerChecks = {
  name: 'apps-initiator-accepted',
  description:
    'A server accepts a tools/call a Host stamped initiator: "app", and one whose initiator it does not know (absence or another value means unknown).',
  async checks(session) {
    return [
      check(
        'UI-1-stamped-accepted',
        'UI-1',
        'MUST',
        'a call a Host stamped initiator app is served',
        await whenServed(session, 'stamped initiator app', {
          [UI_KEY]: { initiator: 'app' }
        })
      ),
      check(
        'UI-7-unknown-value',
        'UI-7',
        'SHOULD',
        'an unknown initiator value does not fail the call',
        await whenServed(session, 'with an unknown initiator', {
          [UI_KEY]: { initiator: 'probe-unknown' }
        })
      )
    ];
  }
};

/** The server scenarios, in the order they run. */
export const SERVER_CHECKS: ServerChecks[] = [
  ENVELOPE_ACCEPTED,
  ECHO,
  INITIATOR_ACCEPTED
];
