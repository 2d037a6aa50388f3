// The one crossing of a call: its arguments written into the tape, the
// module run, its answer read. The module is compiled from the bytes in
// dist/wasm.mjs on the first call and instantiated through wasm-bindgen's
// glue (synchronously: it is small).

import { table } from "../table.mjs";
import { wasm } from "../wasm.mjs";
import { Answer } from "./answer.mjs";
import * as glue from "./glue.mjs";
import { Writer } from "./writer.mjs";

const { ops: OP, firstRead: FIRST, status: STATUS } = table;
const DEFAULT_CUT = table.limits.cut;

let writer;
let answerAt;
/** How many module instances have started: what a filter made in one is gone in the next. */
let instances = 0;
/** The errors the core answered with, thrown as they are; anything else thrown is made one of ours. */
const answered = new WeakSet();
/**
 * Whether a call is at work: the module's tape and answer are one, so a
 * call made meanwhile (from a getter or Proxy trap of a value being read,
 * or read while the answer is turned into a result) is refused before it
 * touches them.
 */
let working = false;

/**
 * Starts a fresh instance of the module, in use from now on (after a trap; tests start their own): its exports.
 * The glue holds one: initSync makes it and then answers it, __wbg_reset_state replaces it.
 */
export function start() {
  if (instances === 0) glue.initSync({ module: compile() });
  else glue.__wbg_reset_state();
  const exports = glue.initSync();
  writer = new Writer(exports.memory);
  answerAt = glue.answer_at() >>> 2;
  instances++;
  return exports;
}

/** The module instance in use, started when there is none: its number (see `instances`). */
export function instance() {
  if (writer === undefined) start();
  return instances;
}

/** A `TypeError` or `RangeError` with one of the core's codes. */
function coded(Kind, code, message) {
  const error = new Kind(message);
  error.code = code;
  return error;
}

/**
 * The module compiled from its bytes, base64 in dist/wasm.mjs; where
 * WebAssembly cannot be compiled (a Content-Security-Policy without
 * 'wasm-unsafe-eval', a runtime without it), a `wasm-unavailable` error
 * that says so, the same for every call.
 */
function compile() {
  const text = atob(wasm);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  try {
    return new WebAssembly.Module(bytes);
  } catch (thrown) {
    const error = coded(RangeError, "wasm-unavailable", "mcp-provenance needs WebAssembly, which cannot be compiled here: "
      + "a Content-Security-Policy must allow it with 'wasm-unsafe-eval' in script-src, and the runtime must support it"
      + ` (${thrown?.name ?? "an error"})`);
    answered.add(error);
    throw error;
  }
}

/**
 * What a call that failed throws: the core's own errors as they are; a trap
 * of the module as `resource-exhausted` (and the module starts afresh, so
 * that no call after it meets a broken instance); a value that threw while
 * read or copied as `unreadable`; running out of room in JS as
 * `resource-exhausted`. The message never quotes what was thrown.
 */
function refused(thrown) {
  if (answered.has(thrown)) return thrown;
  if (thrown instanceof WebAssembly.RuntimeError) {
    writer = undefined;
    return coded(RangeError, "resource-exhausted", "the WebAssembly module ran out of memory or trapped; the call was refused and the module starts afresh");
  }
  if (thrown instanceof RangeError) return coded(RangeError, "resource-exhausted", "the call ran out of room in JavaScript (a string or value too large)");
  return coded(TypeError, "unreadable", "the value cannot be read as JSON: a getter or Proxy trap threw");
}

/**
 * Makes one call of the op named `op`: `write(writer, flags)` writes its
 * arguments after the header and returns the key options it found;
 * `read(answer, status, keys, writer)` makes the result (from the writer,
 * what was read of the arguments of a call that returns a copy, see
 * Writer.input). When the core asks to read
 * again (a policy that keeps more than the first reading held), the call is
 * made once more as asked. Whatever fails, what is thrown is a coded
 * `TypeError` or `RangeError`.
 */
export function call(op, write, read) {
  if (working) {
    throw coded(RangeError, "reentrant-call", "mcp-provenance was called while one of its calls was at work (from a getter "
      + "or Proxy trap of a value it was reading); this call is refused, the other goes on unharmed");
  }
  working = true;
  try {
    return attempt(op, write, read);
  } catch (thrown) {
    throw refused(thrown);
  } finally {
    working = false;
  }
}

function attempt(op, write, read) {
  if (writer === undefined) start();
  let flags = FIRST[op];
  let cut = DEFAULT_CUT;
  for (;;) {
    writer.begin(OP[op], flags, cut);
    let keys;
    writer.read(() => {
      keys = write(writer, flags);
    });
    const status = writer.run();
    const answer = new Answer(writer.bytes, writer.words[answerAt]);
    if (status === STATUS.RETRY) {
      flags = answer.u8();
      cut = answer.u32();
      continue;
    }
    if (status === STATUS.ERROR) {
      const error = glue.error();
      answered.add(error);
      throw error;
    }
    if (status === STATUS.MALFORMED) {
      const error = coded(RangeError, "internal-error", `the ${op} tape broke its form: a bug of mcp-provenance, not of the input`);
      answered.add(error);
      throw error;
    }
    return read(answer, status, keys, writer);
  }
}
