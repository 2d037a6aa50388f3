// The JS side of the boundary, coming out: reads the core's answer (its
// layout is in binding/src/answer.rs) and carries out its edits on the copy
// the writer made as it read the input (its snapshots of the objects on the
// way to each place read), sharing every other member. What only the filter
// module answers is read in outcome.mjs; reports and changes, which only the
// host module answers, in report.mjs.

import { PLACE_KEYS, table } from "../table.mjs";
import { THREW, put } from "./writer.mjs";

const decoder = new TextDecoder();
/** No field, no member: a place's own value. */
const NONE = table.none.field;
/** Each choice's bytes by name, as the table lists them (binding/src/answer.rs `kinds!`). */
export const byteOf = (names) => Object.fromEntries(names.map((kind, at) => [kind, at]));
const PUT = byteOf(table.puts);


export class Answer {
  constructor(bytes, at) {
    this.bytes = bytes;
    this.at = at;
  }

  u8() {
    return this.bytes[this.at++];
  }

  u32() {
    const b = this.bytes;
    const p = this.at;
    this.at += 4;
    return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
  }

  str() {
    const length = this.u32();
    const start = this.at;
    this.at += length;
    const bytes = this.bytes;
    // Short ASCII is quicker made a character at a time than decoded.
    if (length <= 12) {
      let text = "";
      for (let i = start; i < start + length; i++) {
        const byte = bytes[i];
        if (byte >= 0x80) return decoder.decode(bytes.subarray(start, start + length));
        text += String.fromCharCode(byte);
      }
      return text;
    }
    return decoder.decode(bytes.subarray(start, start + length));
  }

  /** `count:u32 str{count}`. */
  strs() {
    const texts = [];
    for (let n = this.u32(); n > 0; n--) texts.push(this.str());
    return texts;
  }

  opt() {
    return this.u8() === 0 ? undefined : this.str();
  }
}

/** An own member of an object, or undefined. */
const own = (object, name) =>
  typeof object === "object" && object !== null && Object.hasOwn(object, name) ? object[name] : undefined;

/** A plain JSON copy of a value the core read whole. */
function clone(value) {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return Array.from(value, (item) => (item === undefined ? null : clone(item)));
  const out = {};
  for (const name of Object.keys(value)) {
    if (value[name] !== undefined) put(out, name, clone(value[name]));
  }
  return out;
}

/** Writes into `path` the member names from the root of an argument to a place, and an envelope field and member of it; how many there are. */
function placePath(place, field, member, keys, path) {
  let n = 0;
  for (const key of PLACE_KEYS[place]) path[n++] = typeof key === "string" ? key : keys[key.configured];
  if (field !== NONE) {
    path[n++] = table.envelope[field].name;
    if (member !== NONE) path[n++] = table.envelope[field].members[member];
  }
  return n;
}

/**
 * Writes into `path` the member names from the root of an argument to the
 * target the answer holds next; how many there are.
 */
function target(answer, keys, path) {
  let n = placePath(answer.u8(), answer.u8(), answer.u8(), keys, path);
  const name = answer.opt();
  if (name !== undefined) path[n++] = name;
  return n;
}

const NOT_PINNED = Symbol("not pinned");

/** The value read of the subject at `place` (its own value, not a field's), or NOT_PINNED. */
function pinnedAt(pins, place) {
  for (let i = 0; i < pins.length; i += 4) {
    if (pins[i] === place && pins[i + 1] === NONE) return pins[i + 3];
  }
  return NOT_PINNED;
}

/** Member names, reused from edit to edit. */
const path = [];
const sourcePath = [];

/**
 * The object in the copy `root` at the first `n - 1` names of `path`, each
 * object on the way not yet the copy's own (the legacy arguments, shared
 * until an edit removes from them) made so once: a snapshot (Writer.snapshot),
 * or a new object where none stands.
 */
function descend(root, w, n) {
  let at = root;
  for (let i = 0; i < n - 1; i++) {
    const name = path[i];
    let next = own(at, name);
    if (!w.made.includes(next)) {
      if (typeof next === "object" && next !== null && !Array.isArray(next)) {
        next = w.snapshot(next);
      } else {
        next = {};
        w.made.push(next);
      }
      put(at, name, next);
    }
    at = next;
  }
  return at;
}

/**
 * The copy a call returns, carrying the edits the answer holds next. The
 * copy is the snapshot the writer made of the call's subject as it read it
 * (`w.inputs[0]`, see Writer.input): every object on the way to a place the
 * core read is a plain object of its own holding the values read, once, so
 * that what the rules decided on is what is returned, whatever a getter or
 * Proxy would answer when read again; every other member is shared. The
 * edits, with a snapshot along each changed path not yet the copy's own.
 * Edits that copy what stands in an argument take it as read: from the
 * subject, the value pinned; from another, its snapshot. Last, a member
 * of a snapshot JSON has no value for (a function, `toJSON` among them, or
 * a symbol) is left out; one whose getter threw refuses the copy.
 */
export function apply(answer, keys, w) {
  const root = w.inputs[0];
  const { pins } = w;
  for (let edits = answer.u32(); edits > 0; edits--) {
    const n = target(answer, keys, path);
    const at = descend(root, w, n);
    const last = path[n - 1];
    switch (answer.u8()) {
      case PUT.remove:
        delete at[last];
        break;
      case PUT.text:
        put(at, last, answer.str());
        break;
      case PUT.bool:
        put(at, last, answer.u8() === 1);
        break;
      case PUT.object: {
        const object = {};
        w.made.push(object);
        put(at, last, object);
        break;
      }
      case PUT.json:
        put(at, last, JSON.parse(answer.str()));
        break;
      default: { // PUT.copy
        // What stands at a place of an argument: from the subject, the value read there, when it was read.
        const input = answer.u8();
        const place = answer.bytes[answer.at];
        const m = target(answer, keys, sourcePath);
        const pinned = input === 0 ? pinnedAt(pins, place) : NOT_PINNED;
        let source = w.inputs[input];
        if (pinned !== NOT_PINNED) source = pinned;
        else for (let i = 0; i < m; i++) source = own(source, sourcePath[i]);
        put(at, last, clone(source));
      }
    }
  }
  const { odd } = w;
  for (let i = 0; i < odd.length; i += 2) {
    if (odd[i][odd[i + 1]] === THREW) throw new Error("a member of the copy cannot be read");
    delete odd[i][odd[i + 1]];
  }
  return root;
}
