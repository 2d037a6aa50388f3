// Handles a JS value holds (`createProvenance`), over the host module's
// boundary (object.mjs): made once, made again from the options as first
// written after the module restarts, let go of when the value is.

import { table } from "../table.mjs";

/**
 * `bind(options, holder)`: a handle of `options` (a policy, keys and all)
 * held for as long as `holder` is reachable, and `options` as they were
 * read, once, for the handle: `{ current, read }`, where `current()` gives
 * the handle's number and plan in the instance running and `read` is a
 * plain copy of an options object (anything else as it came).
 */
export function held({ glue, guard, instance, live, made, tape, written }) {
  const registry = new FinalizationRegistry(({ number, madeIn }) => {
    if (live(madeIn)) glue.release(number);
  });
  /** What the tape holds, to write again (`restore`) into another instance of the module. */
  const save = (w) => [w.bytes.slice(w.recordsAt, w.r), w.bytes.slice(w.stringsAt, w.stringsAt + w.s), w.bytes.slice(w.valuesAt, w.valuesAt + w.v)];
  function restore(w, [records, strings, values]) {
    w.makeRoom(values.length);
    if (strings.length > w.stringsRoom) w.grow(table.areas.strings, strings.length);
    w.bytes.set(records, w.recordsAt);
    w.bytes.set(strings, w.stringsAt);
    w.bytes.set(values, w.valuesAt);
    [w.r, w.s, w.v] = [w.recordsAt + records.length, strings.length, values.length];
  }
  return function bind(options, holder) {
    let saved;
    let bound;
    let madeIn;
    const make = () => {
      bound = made("Policy", true);
      madeIn = instance();
      registry.register(holder, { number: bound.number, madeIn });
    };
    let read = options;
    guard(() => {
      if (typeof options === "object" && options !== null && !Array.isArray(options)) {
        // Written whole while snapshotting: the tape an options object makes, and the copy its one reading made.
        const w = tape();
        w.begin(0, 0, 0);
        w.longest = table.limits.optionChars;
        w.read(() => w.input(0, () => w.whole(options)));
        read = w.inputs[0];
      } else {
        written(options);
      }
      saved = save(tape());
      make();
    });
    const current = () => {
      if (madeIn !== instance()) {
        tape().begin(0, 0, 0);
        restore(tape(), saved);
        make();
      }
      return bound;
    };
    return { current, read };
  };
}
