// The one crossing of a call: its arguments written into the tape, the
// module run, its answer read. The package has two modules built from the
// one crate, with the one table: the host module (the object API, lib/host.mjs)
// and the filter module (the wire ops too: the gateway, http, the command,
// lib/filter.mjs). Each gets its boundary here, `boundary(glue, wasm)`: its
// module is compiled from its bytes (base64, dist/wasm-host.mjs or
// dist/wasm-filter.mjs) on its first call and instantiated through its
// wasm-bindgen glue (synchronously: it is small). Each has its own instance
// and state.

import { table } from "../table.mjs";
import { Answer } from "./answer.mjs";
import { Writer } from "./writer.mjs";

const { ops: OP, firstRead: FIRST, status: STATUS } = table;
const DEFAULT_CUT = table.limits.cut;

/** A `TypeError` or `RangeError` with one of the core's codes. */
function coded(Kind, code, message) {
  const error = new Kind(message);
  error.code = code;
  return error;
}

/**
 * The boundary of one module: `glue`, its wasm-bindgen glue (as a module
 * namespace), `wasm`, its bytes in base64. Its `call`, `instance` and
 * `start`.
 */
export function boundary(glue, wasm) {
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
  function start() {
    if (instances === 0) glue.initSync({ module: compile() });
    else glue.__wbg_reset_state();
    const exports = glue.initSync();
    writer = new Writer(exports.memory, glue);
    answerAt = glue.answer_at() >>> 2;
    instances++;
    return exports;
  }

  /** The module instance in use, started when there is none: its number (see `instances`). */
  function instance() {
    if (writer === undefined) start();
    return instances;
  }

  /**
   * The module compiled from its bytes, base64; where
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
  function call(op, write, read) {
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

  return { call, instance, start };
}
