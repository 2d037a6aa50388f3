// The package's functions. Each reads its arguments into the tape (one
// crossing into wasm, see boundary.mjs) and turns the answer into what it
// returns; the core decides everything.

import { readEnvelope, readMessage, table } from "../table.mjs";
import { apply } from "./answer.mjs";
import { call, glue, guard } from "./host.mjs";

const { FIELDS, WHOLE } = table.flags;
const { keys: CORRELATION_KEYS, option: CORRELATION_OPTION } = table.correlation;

export const AI_INVOCATION_KEY = table.keys.invocation;
export const UI_KEY = table.keys.ui;

/**
 * The keys a message is read under: the configured ones as read, else the
 * defaults; and the members of `_meta` that may hold correlation ids: the
 * known ones and a policy's own.
 */
function keysOf(found = {}) {
  const wanted = found[CORRELATION_OPTION] === undefined ? CORRELATION_KEYS : [...CORRELATION_KEYS, ...found[CORRELATION_OPTION]];
  return { invocation: found.invocationKey ?? AI_INVOCATION_KEY, ui: found.uiKey ?? UI_KEY, wanted };
}

/**
 * Writes `options` whole and `message`; the keys in force. `input`: the
 * call returns a copy, and `message` is its argument of that index (0 for
 * the subject the copy is made of), read into snapshots (Writer.input),
 * its scalars pinned with `pin`.
 */
function optionsAndMessage(w, flags, options, message, { keysIn, input, pin } = {}) {
  const found = w.options(options, undefined, keysIn);
  const keys = keysOf(found.keys);
  if (input === undefined) readMessage(w, message, flags, keys.invocation, keys.ui, keys.wanted);
  else w.input(input, () => readMessage(w, message, flags, keys.invocation, keys.ui, keys.wanted), pin);
  return keys;
}

export function validate(message, options) {
  return call("Validate", (w, flags) => {
    const found = w.options(options, "request");
    const keys = keysOf(found.keys);
    readMessage(w, message, flags, keys.invocation, keys.ui, keys.wanted);
    readMessage(w, found.apart, flags, keys.invocation, keys.ui, keys.wanted);
  }, (answer) => answer.report());
}

export function sanitize(message, policy) {
  return call("Sanitize", (w, flags) => optionsAndMessage(w, flags, policy, message, { input: 0 }), (answer, _, keys, w) => {
    const changes = answer.changes();
    return { message: apply(answer, keys, w), changes };
  });
}

export function stampInitiator(request, initiator, options) {
  return call("StampInitiator", (w, flags) => {
    const keys = keysOf(w.options(options).keys);
    w.whole(initiator);
    w.input(0, () => readMessage(w, request, flags, keys.invocation, keys.ui, keys.wanted));
    return keys;
  }, (answer, _, keys, w) => apply(answer, keys, w));
}

export function clearInitiator(request, options) {
  return call("ClearInitiator", (w, flags) => optionsAndMessage(w, flags, options, request, { input: 0 }),
    (answer, _, keys, w) => apply(answer, keys, w));
}

export function attachInvocation(request, invocation, options) {
  return call("AttachInvocation", (w, flags) => {
    const keys = optionsAndMessage(w, flags, options, request, { input: 0 });
    w.input(1, () => readEnvelope(w, invocation, FIELDS | WHOLE));
    return keys;
  }, (answer, _, keys, w) => apply(answer, keys, w));
}

export function echoTurnId(request, response, options) {
  return call("EchoTurnId", (w, flags) => {
    const keys = optionsAndMessage(w, flags, options, request, { input: 1 });
    w.input(0, () => readMessage(w, response, flags, keys.invocation, keys.ui, keys.wanted));
    return keys;
  }, (answer, _, keys, w) => apply(answer, keys, w));
}

export function auditRecord(request, context) {
  return call("AuditRecord", (w, flags) => optionsAndMessage(w, flags, context, request, { keysIn: table.keysIn.AuditRecord }),
    (answer) => answer.record());
}

export function liftLegacyArguments(request, options) {
  return call("LiftLegacyArguments", (w, flags) => optionsAndMessage(w, flags, options, request, { input: 0, pin: true }),
    (answer, _, keys, w) => apply(answer, keys, w));
}

export function isValidMetaKey(key) {
  return guard(() => glue.isValidMetaKey(key));
}

export function isReservedMetaKey(key) {
  return guard(() => glue.isReservedMetaKey(key));
}

/** `given` over `bound`: a call's own options merged over the bound ones (anything else is passed on as it is, for the core to refuse). */
function over(bound, given) {
  if (given === undefined) return bound;
  return typeof given === "object" && given !== null && !Array.isArray(given) ? { ...bound, ...given } : given;
}

export function createProvenance(options) {
  call("CheckPolicy", (w) => w.options(options), () => undefined);
  const policy = options === undefined || options === null ? {} : { ...options };
  const invocationKey = policy.invocationKey ?? AI_INVOCATION_KEY;
  const uiKey = policy.uiKey ?? UI_KEY;
  const keys = { invocationKey, uiKey };
  return Object.freeze({
    invocationKey,
    uiKey,
    validate: (message, given) => validate(message, over(keys, given)),
    sanitize: (message, given) => sanitize(message, over(policy, given)),
    attachInvocation: (request, invocation, given) => attachInvocation(request, invocation, over(keys, given)),
    stampInitiator: (request, initiator, given) => stampInitiator(request, initiator, over(keys, given)),
    clearInitiator: (request, given) => clearInitiator(request, over(keys, given)),
    echoTurnId: (request, response, given) => echoTurnId(request, response, over(keys, given)),
    auditRecord: (request, context) => {
      const merged = over({}, context);
      return auditRecord(request, typeof merged === "object" ? { ...merged, policy: over(policy, merged.policy) } : merged);
    },
    liftLegacyArguments: (request, given) => liftLegacyArguments(request, over(keys, given)),
    isValidMetaKey,
    isReservedMetaKey,
  });
}
