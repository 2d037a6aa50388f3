// What a host does to the requests it sends, over the boundary of a module
// that holds the object API: the host module (lib/api.mjs) or the outgoing
// module (the `mcp-provenance/outgoing` entry). Each reads its arguments into
// the tape, as the plan of its options' handle says, and turns the answer
// into the copy it returns; the core decides.

import { readEnvelope, readMessage, table } from "../table.mjs";
import { apply } from "./answer.mjs";

const { FIELDS, WHOLE } = table.flags;

/** The copy a call returns: the subject as read, the answer's edits carried out. */
export const copied = (answer, w, { plan }) => apply(answer, plan, w);

/**
 * Reads `message`, argument `index` of a call that returns a copy (0: the
 * subject the copy is made of), into snapshots, its scalars pinned with
 * `pin` (Writer.input).
 */
export function subject(w, message, flags, plan, index = 0, pin = false) {
  w.input(index, () => readMessage(w, message, flags, plan), pin);
}

/**
 * `stampInitiator`, `clearInitiator` and `attachInvocation` (index.d.ts),
 * each a call through `call` under the handle `using(reads, options)` gives.
 */
export function requestCalls(call, using) {
  return {
    stampInitiator(request, initiator, options) {
      return call("StampInitiator", using("Keys", options), (w, flags, { plan }) => {
        w.whole(initiator);
        subject(w, request, flags, plan);
      }, copied);
    },

    clearInitiator(request, options) {
      return call("ClearInitiator", using("Keys", options), (w, flags, { plan }) => subject(w, request, flags, plan), copied);
    },

    attachInvocation(request, invocation, options) {
      return call("AttachInvocation", using("Keys", options), (w, flags, { plan }) => {
        subject(w, request, flags, plan);
        w.input(1, () => readEnvelope(w, invocation, FIELDS | WHOLE));
      }, copied);
    },
  };
}
