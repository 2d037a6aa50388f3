// What both modules' JS shares: the package has two modules built from the
// one crate, the host module (the object API, lib/host.mjs, through the
// tape) and the filter module (the wire ops, lib/filter.mjs, through
// wasm-bindgen's classes). Each gets its boundary here, `boundary(glue,
// wasm)`: its module is compiled from its bytes (base64, dist/wasm-host.mjs
// or dist/wasm-filter.mjs) on its first call and instantiated through its
// wasm-bindgen glue (synchronously: it is small), started afresh after a
// trap, and every failure of a call is thrown as a coded TypeError or
// RangeError. Each has its own instance and state.

/** A `TypeError` or `RangeError` with one of the core's codes. */
export function coded(Kind, code, message) {
  const error = new Kind(message);
  error.code = code;
  return error;
}

/**
 * The boundary of one module: `glue`, its wasm-bindgen glue (as a module
 * namespace), `wasm`, its bytes in base64; `started(exports)`, run with each
 * instance that starts. Its `guard`, `instance`, `live`, `start` and `answer`.
 */
export function boundary(glue, wasm, started = () => {}) {
  /** Whether an instance is in use: none before the first call, nor after a trap. */
  let running = false;
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
    started(exports);
    running = true;
    instances++;
    return exports;
  }

  /** The module instance in use, started when there is none: its number (see `instances`). */
  function instance() {
    if (!running) start();
    return instances;
  }

  /** Whether instance `number` (see `instance`) is the one in use. */
  function live(number) {
    return running && instances === number;
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
      throw answer(coded(RangeError, "wasm-unavailable", "mcp-provenance needs WebAssembly, which cannot be compiled here: "
        + "a Content-Security-Policy must allow it with 'wasm-unsafe-eval' in script-src, and the runtime must support it"
        + ` (${thrown?.name ?? "an error"})`));
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
      running = false;
      return coded(RangeError, "resource-exhausted", "the WebAssembly module ran out of memory or trapped; the call was refused and the module starts afresh");
    }
    if (thrown instanceof RangeError) return coded(RangeError, "resource-exhausted", "the call ran out of room in JavaScript (a string or value too large)");
    return coded(TypeError, "unreadable", "the value cannot be read as JSON: a getter or Proxy trap threw");
  }

  /**
   * Runs `work` (a call into the module, started first when none is in
   * use), throwing whatever fails as a coded `TypeError` or `RangeError`.
   */
  function guard(work) {
    if (working) {
      throw coded(RangeError, "reentrant-call", "mcp-provenance was called while one of its calls was at work (from a getter "
        + "or Proxy trap of a value it was reading); this call is refused, the other goes on unharmed");
    }
    working = true;
    try {
      if (!running) start();
      return work();
    } catch (thrown) {
      throw refused(thrown);
    } finally {
      working = false;
    }
  }

  /** `error`, one of the core's, marked to be thrown as it is. */
  function answer(error) {
    answered.add(error);
    return error;
  }

  return { answer, guard, instance, live, start };
}
