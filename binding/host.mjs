// The host module's boundary: the object API's ops (lib/api.mjs), in the
// module built with the crate's feature `host`, its bytes in
// dist/wasm-host.mjs. One crossing a call: its arguments written into the
// tape, the module run, its answer read (binding/src/run.rs).
import { table } from "../table.mjs";
import { wasm } from "../wasm-host.mjs";
import { Answer } from "./answer.mjs";
import { boundary, coded } from "./boundary.mjs";
import * as glue from "./glue-host.mjs";
import { Writer } from "./writer.mjs";

const { ops: OP, firstRead: FIRST, status: STATUS } = table;
const DEFAULT_CUT = table.limits.cut;

export { glue };

let writer;
let answerAt;
export const { answer, guard, instance, start } = boundary(glue, wasm, (exports) => {
  writer = new Writer(exports.memory, glue);
  answerAt = glue.answer_at() >>> 2;
});

/**
 * Makes one call of the op named `op`: `write(writer, flags)` writes its
 * arguments after the header and returns the key options it found;
 * `read(answer, status, keys, writer)` makes the result (from the writer,
 * what was read of the arguments of a call that returns a copy, see
 * Writer.input). When the core asks to read again (a policy that keeps more
 * than the first reading held), the call is made once more as asked.
 */
export function call(op, write, read) {
  return guard(() => {
    let flags = FIRST[op];
    let cut = DEFAULT_CUT;
    for (;;) {
      writer.begin(OP[op], flags, cut);
      let keys;
      writer.read(() => {
        keys = write(writer, flags);
      });
      const status = writer.run();
      const answered = new Answer(writer.bytes, writer.words[answerAt]);
      if (status === STATUS.RETRY) {
        flags = answered.u8();
        cut = answered.u32();
        continue;
      }
      if (status === STATUS.ERROR) throw answer(glue.error());
      if (status === STATUS.MALFORMED) throw answer(coded(RangeError, "internal-error", `the ${op} tape broke its form: a bug of mcp-provenance, not of the input`));
      return read(answered, status, keys, writer);
    }
  });
}
