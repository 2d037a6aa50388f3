// The package's functions. Options cross once, into a handle in the module
// (a call's own found by what they hold, made the first time); each call
// reads its arguments into the tape as the handle's plan says (one crossing
// into wasm, see object.mjs) and turns the answer into what it returns; the
// core decides everything.

import { readMessage, table } from "../table.mjs";
import { bind, call, glue, guard, handle } from "./host.mjs";
import { changesOf, reportOf } from "./report.mjs";
import { copied, requestCalls, subject } from "./requests.mjs";

export const AI_INVOCATION_KEY = table.keys.invocation;
export const UI_KEY = table.keys.ui;

/**
 * The functions of the object API, each under the handle `using(reads,
 * options, apart)` gives: the options of a call, read as `reads` (the
 * table's `reads`), but for their member `apart`.
 */
function calls(using) {
  return {
    validate(message, options) {
      return call("Validate", using("Validate", options, "request"), (w, flags, bound) => {
        readMessage(w, message, flags, bound.plan);
        readMessage(w, bound.apart, flags, bound.plan);
      }, reportOf);
    },

    sanitize(message, policy) {
      return call("Sanitize", using("Policy", policy), (w, flags, { plan }) => subject(w, message, flags, plan), (answer, w, bound) => {
        const changes = changesOf(answer);
        return { message: copied(answer, w, bound), changes };
      });
    },

    ...requestCalls(call, using),

    echoTurnId(request, response, options) {
      return call("EchoTurnId", using("Keys", options), (w, flags, { plan }) => {
        subject(w, request, flags, plan, 1);
        subject(w, response, flags, plan);
      }, copied);
    },

    auditRecord(request, context) {
      // The context's policy is the handle's (read once, here, as the writer reads a member: own and
      // enumerable, never one an Object.prototype holds); the rest, the server's own facts, is the call's.
      const given = () => (typeof context === "object" && context !== null && Object.prototype.propertyIsEnumerable.call(context, "policy") ? context.policy : undefined);
      const policy = () => using("Policy", given())();
      return call("AuditRecord", policy, (w, flags, { plan }) => {
        w.options(context, "policy", true);
        readMessage(w, request, flags, plan);
      }, (answer) => JSON.parse(answer.str()));
    },

    liftLegacyArguments(request, options) {
      return call("LiftLegacyArguments", using("Lift", options), (w, flags, { plan }) => subject(w, request, flags, plan, 0, true), copied);
    },

    isValidMetaKey(key) {
      return guard(() => glue.isValidMetaKey(key));
    },

    isReservedMetaKey(key) {
      return guard(() => glue.isReservedMetaKey(key));
    },
  };
}

export const {
  validate, sanitize, stampInitiator, clearInitiator, attachInvocation, echoTurnId, auditRecord, liftLegacyArguments,
  isValidMetaKey, isReservedMetaKey,
} = calls((reads, options, apart) => () => handle(reads, options, apart));

/** `given` over `bound`: a call's own options merged over the bound ones (anything else is passed on as it is, for the core to refuse). */
function over(bound, given) {
  return typeof given === "object" && given !== null && !Array.isArray(given) ? { ...bound, ...given } : given;
}

export function createProvenance(options) {
  const holder = {};
  const { current, read } = bind(options, holder);
  // The options as the handle read them, for a call's own to merge over: never read a second time.
  const policy = read ?? {};
  // The keys in force, as the module read them.
  const { invocation: invocationKey, ui: uiKey } = current().plan;
  const keys = { invocationKey, uiKey };
  // A call given options of its own: those merged over the bound ones (the policy, or its keys alone), found by what they hold.
  const using = (reads, given, apart) => (given === undefined ? current : () => handle(reads, over(reads === "Policy" ? policy : keys, given), apart));
  return Object.freeze(Object.assign(holder, { invocationKey, uiKey, ...calls(using) }));
}
