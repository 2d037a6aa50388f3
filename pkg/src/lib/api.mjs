// The package's functions. Each reads its arguments into the tape (one
// crossing into wasm, see boundary.mjs) and turns the answer into what it
// returns; the core decides everything.

import { readMessage, table } from "../table.mjs";
import { apply } from "./answer.mjs";
import { call, glue, guard } from "./host.mjs";
import { keysOf, optionsAndMessage, requestCalls } from "./requests.mjs";

export const AI_INVOCATION_KEY = table.keys.invocation;
export const UI_KEY = table.keys.ui;

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

export const { stampInitiator, clearInitiator, attachInvocation } = requestCalls(call);

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
