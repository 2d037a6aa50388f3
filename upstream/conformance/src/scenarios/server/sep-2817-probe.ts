/**
 * What the server checks of SEP-2817 (AI invocation audit context) and of
 * the MCP Apps initiator proposal (ext-apps#738) share, apart from how the
 * harness reaches the server: a `Probe` (the one tool the checks may call, a
 * way to send tools/call), the calls made through it, how their answers
 * compare, and how a declared check is reported. `sep-2817.ts` makes a Probe
 * of the suite's `Connection`; a harness with a client of its own (a
 * command-line probe of a production server) can make one of that.
 *
 * Pointed at a production server, a checker must cause no side effect: the
 * checks call one tool (`chooseTool`), and otherwise only a name the server
 * lists no tool by. When there is no tool they may call, or the call without
 * any of this metadata is not answered with a result, nothing can be tested:
 * every check is reported untestable (FAILURE for a MUST, WARNING for a
 * SHOULD), as src/scenarios/untestable.ts has it.
 */

import type { ConformanceCheck, SpecReference } from '../../types';
import { untestableCheck } from '../untestable';

/** A requirement's keyword: a broken MUST is a FAILURE, a broken SHOULD a WARNING. */
export type Level = 'MUST' | 'SHOULD';

/** A check a scenario declares, and emits on every run. */
export interface DeclaredCheck {
  id: string;
  level: Level;
  /** What a SUCCESS shows. */
  description: string;
  specReferences: SpecReference[];
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

/** The key of SEP-2817's envelope. */
export const AI_INVOCATION_KEY = 'io.modelcontextprotocol/aiInvocation';
/** The key of the MCP Apps entry whose `initiator` a Host stamps. */
export const UI_KEY = 'io.modelcontextprotocol/ui';

const SEP_PAGE =
  'https://modelcontextprotocol.io/specification/draft/basic/ai-invocation';
/** SEP-2817's page, at `section`. */
export const sep2817 = (section: string): SpecReference => ({
  id: 'SEP-2817',
  url: `${SEP_PAGE}#${section}`
});
/** The MCP Apps proposal of initiator provenance. */
export const APPS_INITIATOR: SpecReference = {
  id: 'ext-apps#738',
  url: 'https://github.com/modelcontextprotocol/ext-apps/issues/738'
};

/** What a broken check of each level is. */
const BROKEN = { MUST: 'FAILURE', SHOULD: 'WARNING' } as const;
/** How much of one string from the server a message quotes. */
const QUOTED_CHARS = 200;
/** The name of no tool: called to see how the server answers an error. */
export const NO_SUCH_TOOL = 'probe-no-such-tool-7d1f';
/** The side-effect-free tool every server the suite tests implements. */
const SUITE_TOOL = 'test_simple_text';
/** Why nothing is tested when there is no tool the scenarios may call. */
export const NO_TOOL =
  'no tool was named, none is named test_simple_text and none is annotated readOnlyHint: true (with arguments that can be filled); no other tool is called';

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

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** How a check came out: passed or not, why not, what was seen; or why it could not be tested. */
export type Outcome =
  | { passed: boolean; message?: string; details?: Record<string, unknown> }
  | { untestable: string };

/** The check `declared` as the suite reports it, from how it came out. */
export function verdict(
  declared: DeclaredCheck,
  outcome: Outcome
): ConformanceCheck {
  const { id, level, description, specReferences } = declared;
  if ('untestable' in outcome)
    return untestableCheck(
      id,
      id,
      description,
      outcome.untestable,
      specReferences,
      BROKEN[level]
    );
  const { passed, message, details } = outcome;
  return {
    id,
    name: id,
    description,
    status: passed ? 'SUCCESS' : BROKEN[level],
    timestamp: new Date().toISOString(),
    specReferences,
    ...(!passed && message !== undefined && { errorMessage: message }),
    ...(details !== undefined && { details })
  };
}

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

/** A tool named to call in place of the scenarios' own choice, and its arguments. */
export interface NamedTool {
  tool?: string;
  arguments?: Record<string, unknown>;
}

/**
 * The tool the scenarios call, and its arguments: the one named; else the
 * suite's `test_simple_text` when listed; else the first the server
 * annotates readOnlyHint: true whose required arguments can be filled (or
 * `named.arguments` gives); else none. Never another: the server may be in
 * production.
 */
export function chooseTool(
  tools: ListedTool[],
  named?: NamedTool
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

/** A tools/call as made: what it was, with which `_meta`, and its answer. */
export type Made = { what: string; tool: string } & Answer;

/** What the scenarios share: the probe, and the call made without any of this metadata (none: no tool). */
export interface Session {
  probe: Probe;
  baseline?: Made;
}

/** Makes a tools/call of the probe's tool (or `name`) with `meta` as `_meta`, if any. */
export async function attempt(
  probe: Probe,
  what: string,
  meta?: Record<string, unknown>,
  name = probe.tool ?? '',
  args = probe.arguments
): Promise<Made> {
  const params = { name, arguments: args, ...(meta && { _meta: meta }) };
  return {
    what: `tools/call ${quote(name)} ${what}`,
    tool: name,
    ...(await probe.send(params))
  };
}

/** Starts a session: the call without this metadata, which the others are compared with. */
export async function begin(probe: Probe): Promise<Session> {
  if (probe.tool === undefined) return { probe };
  return { probe, baseline: await attempt(probe, 'without _meta') };
}

/** Whether a call was served: answered with a result. */
export const served = (
  made: Made
): made is Made & { result: Record<string, unknown> } => 'result' in made;

/** How the server decided a call: served (a tool error apart), refused with an error code, or no answer. */
export function decision(made: Made): string {
  if ('result' in made)
    return made.result.isError === true ? 'a tool error' : 'a result';
  if ('error' in made) return `error ${made.error.code}`;
  return 'no answer';
}

/** What a call came back as, in words. */
export function answered(made: Made): string {
  if ('error' in made)
    return `error ${made.error.code}: ${quote(made.error.message)}`;
  if ('failure' in made) return made.failure;
  return decision(made);
}

/** The call without this metadata when it was served (a result, not a tool error); else why nothing of a session can be tested. */
function prerequisite(session: Session): Made | string {
  const { baseline } = session;
  if (baseline === undefined) return NO_TOOL;
  if ('failure' in baseline)
    return `${baseline.what} got no answer (${baseline.failure}), so nothing can be compared with it`;
  if (decision(baseline) !== 'a result')
    return `${baseline.what} was answered with ${answered(baseline)}, not a result, so nothing can be compared with it`;
  return baseline;
}

/**
 * Passed when each call is answered as the call without this metadata was
 * (served or not, a tool error or not, the same error code, an answer at
 * all); else which was not, and how.
 */
export function sameAnswers(baseline: Made, calls: Made[]): Outcome {
  const differ = calls.filter((made) => decision(made) !== decision(baseline));
  return {
    passed: differ.length === 0,
    message: differ
      .map(
        (made) =>
          `${made.what} was answered with ${answered(made)}, without it with ${decision(baseline)}`
      )
      .join('; '),
    details: {
      tool: baseline.tool,
      answers: Object.fromEntries(
        [baseline, ...calls].map((made) => [made.what, decision(made)])
      )
    }
  };
}

/** A scenario's checks of a server's answers: its name, what it checks, what it declares, and how it runs. */
export interface ServerChecks {
  name: string;
  description: string;
  declared: DeclaredCheck[];
  run(session: Session): Promise<ConformanceCheck[]>;
}

/** Runs `judge` unless the session's prerequisite is missing, in which case every declared check is untestable. */
export async function judged(
  declared: DeclaredCheck[],
  session: Session,
  judge: (baseline: Made, probe: Probe) => Promise<Outcome[]>
): Promise<ConformanceCheck[]> {
  const baseline = prerequisite(session);
  const outcomes: Outcome[] =
    typeof baseline === 'string'
      ? declared.map(() => ({ untestable: baseline }))
      : await judge(baseline, session.probe);
  return declared.map((check, i) => verdict(check, outcomes[i]));
}
