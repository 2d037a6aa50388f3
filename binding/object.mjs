// The object API's boundary over a module built with it (binding/src/run.rs):
// the host module (lib/host.mjs), or the outgoing module (lib/outgoing.mjs),
// which holds of it only what a host does to the requests it sends. Options
// cross once, into a handle in the module (binding/src/handle.rs), which
// says what to read of a message; a call is one crossing: its arguments
// written into the tape, the module run under the handle, its answer read.
import { table } from "../table.mjs";
import { Answer } from "./answer.mjs";
import { boundary, coded } from "./boundary.mjs";
import { Writer } from "./writer.mjs";

const { ops: OP, reads: READS, status: STATUS, limits: { newHandle: NEW } } = table;
const OPS = Object.keys(OP).length;

/**
 * A handle's plan, as the answer holds it: the flags to read with for
 * each op (by its code), where to cut strings, the keys in force and the
 * members of `_meta` that may hold correlation ids.
 */
function planOf(answer) {
  const flags = answer.bytes.slice(answer.at, answer.at + OPS);
  answer.at += OPS;
  return { flags, cut: answer.u32(), invocation: answer.str(), ui: answer.str(), wanted: answer.strs() };
}

/**
 * The boundary of the module of `glue` (wasm-bindgen's) and `wasm` (its
 * bytes): `call` and `handle`; for handles held (held.mjs) `made`, `tape`
 * and `written`; and what `boundary` gives (`answer`, `guard`, `instance`,
 * `live`, `start`).
 */
export function objectModule(glue, wasm) {
  let writer;
  let answerAt;
  /** The handle of no options, in the instance running. */
  let defaults;
  /** Each handle's plan, by its number, as the module made it in the instance running. */
  let plans;
  const crossing = boundary(glue, wasm, (exports) => {
    writer = new Writer(exports.memory, glue);
    answerAt = glue.answer_at() >>> 2;
    defaults = undefined;
    plans = [];
  });
  const { answer, guard } = crossing;

  /** What a status below zero stands for, to throw. */
  function failed(status, what) {
    if (status === STATUS.ERROR) return answer(glue.error());
    return answer(coded(RangeError, "internal-error", `the ${what} tape broke its form: a bug of mcp-provenance, not of the input`));
  }

  /** The handle of the options the tape holds (see Writer.provenance): its number and plan, read when it is made anew. */
  function made(reads, pin) {
    let number = writer.provenance(READS[reads], pin);
    if (number < 0) throw failed(number, "options");
    if (number >= NEW) {
      number -= NEW;
      plans[number] = planOf(new Answer(writer.bytes, writer.words[answerAt]));
    }
    return { number, plan: plans[number] };
  }

  /** Writes `options` on a fresh tape, but for its member `apart`, which it returns. */
  function written(options, apart) {
    writer.begin(0, 0, 0);
    let found;
    writer.read(() => {
      found = writer.options(options, apart);
    });
    return found;
  }

  /**
   * The handle of `options`, a call's own (read as `reads`, the table's
   * `reads`; none: the defaults, held for the instance's life), and its
   * member `apart` (read as the message it is). Inside `guard`.
   */
  function handle(reads, options, apart) {
    if (options === undefined || options === null) {
      if (defaults === undefined) {
        written(undefined);
        defaults = made("Keys", true);
      }
      return defaults;
    }
    const found = written(options, apart);
    return { ...made(reads, false), apart: found };
  }

  /**
   * Makes one call of the op named `op` under the handle `using()` gives
   * (inside the guard): `write(writer, flags, handle)` writes its arguments
   * after the header, read as the handle's plan says; `read(answer, writer,
   * handle)` makes the result (from the writer, what was read of the
   * arguments of a call that returns a copy, see Writer.input).
   */
  function call(op, using, write, read) {
    return guard(() => {
      const bound = using();
      const flags = bound.plan.flags[OP[op]];
      writer.begin(OP[op], flags, bound.plan.cut);
      writer.read(() => write(writer, flags, bound));
      const status = writer.run(bound.number);
      if (status < 0) throw failed(status, op);
      return read(new Answer(writer.bytes, writer.words[answerAt]), writer, bound);
    });
  }

  return { ...crossing, call, handle, made, tape: () => writer, written };
}
