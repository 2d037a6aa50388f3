// The filter module's boundary: the wire ops (the gateway's filter and
// echo, `check`, the text shown of the wire), wasm-bindgen's classes and
// functions of the module built with the crate's feature `filter`
// (binding/src/filter.rs), its bytes in dist/wasm-filter.mjs. Only the
// gateway, http and the command import it; the object API stays in the host
// module (lib/host.mjs).
import { wasm } from "../wasm-filter.mjs";
import { boundary } from "./boundary.mjs";
import * as glue from "./glue-filter.mjs";

const { answer, guard, instance, start } = boundary(glue, wasm);

/**
 * `work(glue)`, calls of the module's exports (on values already read, so
 * that no getter of the caller's runs inside): what they return, or the
 * core's error they throw, as it is.
 */
export function call(work) {
  return guard(() => {
    try {
      return work(glue);
    } catch (thrown) {
      throw thrown instanceof Error && typeof thrown.code === "string" ? answer(thrown) : thrown;
    }
  });
}

export { instance, start };
