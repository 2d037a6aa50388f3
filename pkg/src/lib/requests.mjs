// What a host does to the requests it sends, over the `call` of a module
// that holds the object API: the host module (lib/api.mjs) or the outgoing
// module (the `mcp-provenance/outgoing` entry). Each reads its arguments into
// the tape and turns the answer into the copy it returns; the core decides.

import { readEnvelope, readMessage, table } from "../table.mjs";
import { apply } from "./answer.mjs";

const { FIELDS, WHOLE } = table.flags;
const { keys: CORRELATION_KEYS, option: CORRELATION_OPTION } = table.correlation;

/**
 * The keys a message is read under: the configured ones as read, else the
 * defaults; and the members of `_meta` that may hold correlation ids: the
 * known ones and a policy's own.
 */
export function keysOf(found = {}) {
  const wanted = found[CORRELATION_OPTION] === undefined ? CORRELATION_KEYS : [...CORRELATION_KEYS, ...found[CORRELATION_OPTION]];
  return { invocation: found.invocationKey ?? table.keys.invocation, ui: found.uiKey ?? table.keys.ui, wanted };
}

/**
 * Writes `options` whole and `message`; the keys in force. `input`: the
 * call returns a copy, and `message` is its argument of that index (0 for
 * the subject the copy is made of), read into snapshots (Writer.input),
 * its scalars pinned with `pin`.
 */
export function optionsAndMessage(w, flags, options, message, { keysIn, input, pin } = {}) {
  const found = w.options(options, undefined, keysIn);
  const keys = keysOf(found.keys);
  if (input === undefined) readMessage(w, message, flags, keys.invocation, keys.ui, keys.wanted);
  else w.input(input, () => readMessage(w, message, flags, keys.invocation, keys.ui, keys.wanted), pin);
  return keys;
}

/** `stampInitiator`, `clearInitiator` and `attachInvocation` (index.d.ts), each a call through `call`. */
export function requestCalls(call) {
  return {
    stampInitiator(request, initiator, options) {
      return call("StampInitiator", (w, flags) => {
        const keys = keysOf(w.options(options).keys);
        w.whole(initiator);
        w.input(0, () => readMessage(w, request, flags, keys.invocation, keys.ui, keys.wanted));
        return keys;
      }, (answer, _, keys, w) => apply(answer, keys, w));
    },

    clearInitiator(request, options) {
      return call("ClearInitiator", (w, flags) => optionsAndMessage(w, flags, options, request, { input: 0 }),
        (answer, _, keys, w) => apply(answer, keys, w));
    },

    attachInvocation(request, invocation, options) {
      return call("AttachInvocation", (w, flags) => {
        const keys = optionsAndMessage(w, flags, options, request, { input: 0 });
        w.input(1, () => readEnvelope(w, invocation, FIELDS | WHOLE));
        return keys;
      }, (answer, _, keys, w) => apply(answer, keys, w));
    },
  };
}
