// The one crossing of a call: its arguments written into the tape, the
// module run, its answer read. The module is compiled from the bytes in
// dist/wasm.mjs on the first call (synchronously: it is small, and imports
// nothing).

import { table } from "../dist/table.mjs";
import { wasm } from "../dist/wasm.mjs";
import { Answer } from "./answer.mjs";
import { Writer } from "./writer.mjs";

const { ops: OP, firstRead: FIRST, status: STATUS } = table;
const DEFAULT_CUT = table.limits.cut;

let writer;
let answerAt;

/** Uses `instance`, an instantiated mcp_provenance.wasm, from now on (tests give their own). */
export function start(instance) {
  writer = new Writer(instance.exports);
  answerAt = instance.exports.answer_at() >>> 2;
}

/** The module instantiated from its bytes, base64 in dist/wasm.mjs. */
function instantiate() {
  const text = atob(wasm);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new WebAssembly.Instance(new WebAssembly.Module(bytes));
}

/**
 * Makes one call of the op named `op`: `write(writer, flags)` writes its
 * arguments after the header and returns the key options it found;
 * `read(answer, status, keys)` makes the result. When the core asks to read
 * again (a policy that keeps more than the first reading held), the call is
 * made once more as asked.
 */
export function call(op, write, read) {
  if (writer === undefined) start(instantiate());
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
    if (status === STATUS.ERROR) throw answer.error();
    if (status === STATUS.MALFORMED) throw new Error(`mcp-provenance: the ${op} tape broke its form (a bug of this package)`);
    return read(answer, status, keys);
  }
}
