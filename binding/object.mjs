// The object API's boundary over a module built with it (binding/src/run.rs):
// the host module (lib/host.mjs), or the outgoing module (lib/outgoing.mjs),
// which holds of it only what a host does to the requests it sends. One
// crossing a call: its arguments written into the tape, the module run, its
// answer read.
import { table } from "../table.mjs";
import { Answer } from "./answer.mjs";
import { boundary, coded } from "./boundary.mjs";
import { Writer } from "./writer.mjs";

const { ops: OP, firstRead: FIRST, status: STATUS } = table;
const DEFAULT_CUT = table.limits.cut;

/**
 * The boundary of the module of `glue` (wasm-bindgen's) and `wasm` (its
 * bytes): `call`, and what `boundary` gives (`answer`, `guard`,
 * `instance`, `start`).
 */
export function objectModule(glue, wasm) {
  let writer;
  let answerAt;
  const crossing = boundary(glue, wasm, (exports) => {
    writer = new Writer(exports.memory, glue);
    answerAt = glue.answer_at() >>> 2;
  });
  const { answer, guard } = crossing;

  /**
   * Makes one call of the op named `op`: `write(writer, flags)` writes its
   * arguments after the header and returns the key options it found;
   * `read(answer, status, keys, writer)` makes the result (from the writer,
   * what was read of the arguments of a call that returns a copy, see
   * Writer.input). When the core asks to read again (a policy that keeps more
   * than the first reading held), the call is made once more as asked.
   */
  function call(op, write, read) {
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

  return { ...crossing, call };
}
