// The JS side of the boundary, going in: writes what the generated reader
// (dist/table.mjs) reads of a call's arguments straight into the module's
// tape (binding/src/tape.rs): one 16-byte record per place, the strings in
// their own area, values read whole in a third, in the compact form of
// src/json/compact.rs. It reads with plain property reads and decides
// nothing: every tag, flag and limit comes from the core's description.
//
// A value JSON cannot hold (a BigInt, a cycle, a throwing getter or Proxy
// trap, a class instance...) is written as UNREADABLE where it stands and
// the reading stops there; the core says where it was.

import { table } from "../table.mjs";

const { ABSENT, NULL, FALSE, TRUE, NUMBER, NUMBER_TEXT, STRING, ARRAY, OBJECT, ARRAY_WHOLE, OBJECT_WHOLE, UNREADABLE, LOSSY } = table.tags;
const { WHOLE } = table.flags;
const {
  record: RECORD, records: RECORDS_ROOM, unfinished: UNFINISHED,
  depth: MAX_DEPTH, items: MAX_ITEMS, values: MAX_VALUES, valueBytes: MAX_VALUE_BYTES, optionChars: MAX_OPTION_CHARS,
  nameChars: MAX_NAME_CHARS,
} = table.limits;
const { records: RECORDS, strings: STRINGS, values: VALUES } = table.areas;
const WHAT = Object.fromEntries(table.what.map((name, index) => [name, index]));
/** No field, no member: a place's own value. */
const NONE = table.none.field;
/** How much of a member name too long to read names it in a pointer. */
const NAMED_CHARS = 128;
/** Strings longer than this go through TextEncoder, which moves long ones faster than a loop. */
const ENCODE_LONGER = 32;

const encoder = new TextEncoder();
const wellFormed = typeof String.prototype.isWellFormed === "function"
  ? (text) => text.isWellFormed()
  : (text) => !/\p{Cs}/u.test(text);

/** Thrown, and caught by `Writer.read`, once UNREADABLE is written. */
const STOP = Symbol("unreadable");
/** What a snapshot holds for a member whose getter (or Proxy trap) threw. */
export const THREW = Symbol("threw");

/** Puts a member, as a data property even for a `__proto__` key. */
export function put(object, name, value) {
  if (name === "__proto__") {
    Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[name] = value;
  }
}

/** The first `cut` code units of `text`, one fewer rather than split a surrogate pair. */
function cutAt(text, cut) {
  const last = text.charCodeAt(cut - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? cut - 1 : cut);
}

/** Whether `value`, an object, is a plain one of any realm: its prototype is null or a realm's Object.prototype. */
function isPlain(value) {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null || Object.getPrototypeOf(prototype) === null;
}

/** A value of the same JSON type as `value`, for one that only its type is read of: a string or an array is empty. */
function standIn(value) {
  if (typeof value === "string") return "";
  return Array.isArray(value) ? [] : value;
}

export class Writer {
  /** A writer into the module instance `glue` (a module's wasm-bindgen glue) holds, whose memory is `memory`. */
  constructor(memory, glue) {
    this.memory = memory;
    this.glue = glue;
    this.recordsAt = this.glue.reserve(RECORDS, RECORDS_ROOM * RECORD);
    this.stringsAt = this.glue.reserve(STRINGS, 4096);
    this.stringsRoom = 4096;
    this.valuesAt = this.glue.reserve(VALUES, 4096);
    this.valuesRoom = 4096;
    this.view();
    /** The next record, strings byte and values byte. */
    this.r = 0;
    this.s = 0;
    this.v = 0;
    this.cut = 0;
    /** The longest string allowed (options); 0 for any. */
    this.longest = 0;
    /** Values read whole in this call. */
    this.values = 0;
    /**
     * The scalars read of the call's subject (the message it returns a copy
     * of), four entries each: place, field, member, value: what an edit
     * copies from the subject is the value read (answer.mjs).
     */
    this.pins = [];
    this.pinning = false;
    /**
     * Reading an argument of a call that returns a copy: each object read is
     * read once, into a snapshot (see `object`), and the copy is made of
     * the snapshots, so that what the core checked is what is returned,
     * whatever a getter or Proxy would answer when read again.
     */
    this.snapshotting = false;
    /** What each argument read so was read as: its snapshot, or the value. */
    this.inputs = [];
    /** The snapshots and clones made in this call: objects of the copy's own. */
    this.made = [];
    /**
     * Members of snapshots that JSON has no value for, pairs of snapshot and
     * name: a function (a `toJSON` too) or a symbol, which the copy leaves
     * out, or THREW, for which it is refused.
     */
    this.odd = [];
    /** The LOSSY flag of the string being written. */
    this.flags = 0;
    this.ancestors = [];
    /** Whole containers opened in the values area and not yet closed. */
    this.unfinished = 0;
  }

  /** Views of the module's memory, made anew when it has grown (growing detaches the old buffer). */
  view() {
    const buffer = this.memory.buffer;
    this.bytes = new Uint8Array(buffer);
    this.data = new DataView(buffer);
    this.words = new Uint32Array(buffer);
  }

  /** More room in an area of the tape, keeping what it holds. */
  grow(area, needed) {
    const room = 2 ** Math.ceil(Math.log2(needed));
    const at = this.glue.reserve(area, room);
    if (area === STRINGS) [this.stringsAt, this.stringsRoom] = [at, room];
    else [this.valuesAt, this.valuesRoom] = [at, room];
    this.view();
  }

  /** Starts a tape: what to do, how to read, where to cut strings (UTF-16 code units; 0 for never). */
  begin(op, flags, cut) {
    if (this.bytes.byteLength === 0) this.view();
    const r = this.recordsAt;
    this.bytes[r] = op;
    this.bytes[r + 1] = flags;
    this.r = r + RECORD;
    this.s = 0;
    this.v = 0;
    this.cut = cut;
    this.longest = 0;
    this.values = 0;
    this.pinning = false;
    this.snapshotting = false;
    // Made anew when used: a new small array costs less than setting a length.
    if (this.pins.length > 0) this.pins = [];
    if (this.inputs.length > 0) this.inputs = [];
    if (this.made.length > 0) this.made = [];
    if (this.odd.length > 0) this.odd = [];
  }

  /**
   * Runs `read`, which reads argument `index` of a call that returns a copy
   * and returns what it read it as: each object it reads is a snapshot, and
   * the root is kept as `inputs[index]`. With `pin`, the scalars read are
   * pinned too (for edits that copy from the subject what a later edit
   * removes from it).
   */
  input(index, read, pin = false) {
    this.snapshotting = true;
    this.pinning = pin;
    try {
      this.inputs[index] = read();
    } finally {
      this.snapshotting = false;
      this.pinning = false;
    }
  }

  /**
   * A new plain object with the own enumerable members of `object`, each
   * read once; a member JSON has no value for, a function (`toJSON` too) or
   * a symbol, is noted in `odd`. Object.assign makes it at once, and the
   * copy stays fast when an edit adds a member (a spread copy does not);
   * an object with an own `__proto__` member (which Object.assign would
   * make the prototype) is read a member at a time, as is one whose getter
   * throws (then the snapshot holds that second reading). Symbol keys,
   * which JSON never reads, are copied as they are.
   */
  snapshot(object) {
    if (Object.hasOwn(object, "__proto__")) return this.snapshotByMember(object);
    let copy;
    try {
      copy = Object.assign({}, object);
    } catch {
      return this.snapshotByMember(object);
    }
    for (const name in copy) {
      const item = copy[name];
      if (typeof item === "function" || typeof item === "symbol") this.odd.push(copy, name);
    }
    this.made.push(copy);
    return copy;
  }

  /** `snapshot`, a member at a time: a member whose getter throws holds THREW. */
  snapshotByMember(object) {
    const copy = {};
    for (const name of Object.keys(object)) {
      let item;
      try {
        item = object[name];
      } catch {
        item = THREW;
      }
      if (item === undefined) continue;
      if (typeof item === "function" || typeof item === "symbol") this.odd.push(copy, name);
      put(copy, name, item);
    }
    this.made.push(copy);
    return copy;
  }

  /** Runs `read`, which writes the call's arguments; a throw from a getter or Proxy trap is written where it happened. */
  read(read) {
    try {
      read();
    } catch (error) {
      if (error !== STOP) {
        // Where the throw happened: inside a value being read whole, or at a place's record.
        if (this.unfinished > 0) {
          this.unreadableValue(WHAT.threw);
        } else {
          this.unreadable(WHAT.threw, false);
        }
      }
      this.ancestors.length = 0;
      this.unfinished = 0;
    }
  }

  /** A record with only a tag. */
  tag(tag) {
    this.bytes[this.r] = tag;
    this.r += RECORD;
  }

  /** An UNREADABLE record, and the reading stops (with `stop`). */
  unreadable(what, stop = true) {
    this.bytes[this.r] = UNREADABLE;
    this.bytes[this.r + 1] = what;
    this.r += RECORD;
    if (stop) throw STOP;
  }

  /** `text` cut at `this.cut` code units, never inside a surrogate pair. */
  cutText(text) {
    return this.cut === 0 || text.length <= this.cut ? text : cutAt(text, this.cut);
  }

  /**
   * `text` as UTF-8 from byte `at`, where there is room for three bytes a
   * code unit; the bytes written. LOSSY joins `this.flags` when a lone
   * surrogate became U+FFFD.
   */
  utf8(text, at) {
    const length = text.length;
    const bytes = this.bytes;
    let i = 0;
    if (length <= ENCODE_LONGER) {
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code >= 0x80) break;
        bytes[at + i] = code;
      }
      if (i === length) return length;
      text = text.slice(i);
    }
    const written = encoder.encodeInto(text, bytes.subarray(at + i, at + 3 * length)).written;
    if (written !== text.length && !wellFormed(text)) this.flags |= LOSSY;
    return i + written;
  }

  /** `text` into the strings area, cut at `this.cut` code units; its record. */
  string(text) {
    this.flags = 0;
    text = this.cutText(text);
    if (this.s + 3 * text.length > this.stringsRoom) this.grow(STRINGS, this.s + 3 * text.length);
    const written = this.utf8(text, this.stringsAt + this.s);
    const r = this.r;
    this.bytes[r] = STRING;
    this.bytes[r + 1] = this.flags;
    this.data.setUint32(r + 8, this.s, true);
    this.data.setUint32(r + 12, written, true);
    this.s += written;
    this.r = r + RECORD;
  }

  /**
   * A place with places under it that a copy shares as it stands (the
   * legacy arguments, of which the core reads two members, to copy them
   * into the envelope or remove them): the object, once its OBJECT record
   * is written, never a snapshot; else as `value`, and undefined.
   */
  shared(value) {
    const snapshotting = this.snapshotting;
    this.snapshotting = false;
    try {
      return this.object(value);
    } finally {
      this.snapshotting = snapshotting;
    }
  }

  /** A place read as a scalar (`place`, and the envelope field and member it is, when given): its value, or for a container its type. */
  value(value, place, field = NONE, member = NONE) {
    if (this.pinning && place !== undefined && (typeof value !== "object" || value === null)) this.pins.push(place, field, member, value);
    switch (typeof value) {
      case "undefined": return this.tag(ABSENT);
      case "string": return this.string(value);
      case "boolean": return this.tag(value ? TRUE : FALSE);
      case "number":
        if (!Number.isFinite(value)) return this.unreadable(WHAT.notFinite);
        this.bytes[this.r] = NUMBER;
        this.data.setFloat64(this.r + 8, value, true);
        this.r += RECORD;
        return;
      case "object":
        if (value === null) return this.tag(NULL);
        if (Array.isArray(value)) return this.tag(ARRAY);
        if (isPlain(value)) return this.tag(OBJECT);
        return this.unreadable(WHAT.notPlain);
      case "bigint": return this.unreadable(WHAT.bigint);
      case "symbol": return this.unreadable(value === THREW ? WHAT.threw : WHAT.symbol);
      default: return this.unreadable(WHAT.function);
    }
  }

  /**
   * A place with places under it, member `key` of `parent` when it is one:
   * for a plain object, once its OBJECT record is written, what to read its
   * members from: the object, or, while snapshotting, its snapshot, which
   * takes its place in `parent` (a snapshot too). Else as `value`, and
   * undefined.
   */
  object(value, parent, key) {
    if (typeof value === "object" && value !== null && !Array.isArray(value) && isPlain(value)) {
      let read = value;
      if (this.snapshotting) {
        try {
          read = this.snapshot(value);
        } catch {
          // Its members cannot even be listed (a Proxy's ownKeys trap threw).
          return this.unreadable(WHAT.threw);
        }
        if (parent !== undefined) put(parent, key, read);
      }
      this.tag(OBJECT);
      return read;
    }
    this.value(value);
    return undefined;
  }

  /** `object[key]` for a configured key: only an own member, as a key such as `toString` must not find Object.prototype's. */
  own(object, key) {
    const value = object[key];
    return value !== undefined && Object.hasOwn(object, key) ? value : undefined;
  }

  /** A record for a container read whole into the values area; where its size is, to close it. */
  open(tag) {
    const r = this.r;
    this.bytes[r] = tag;
    this.data.setUint32(r + 8, this.v, true);
    this.r = r + RECORD;
    return this.start(tag);
  }

  /**
   * The members of `object` outside `known`, or, given `names`, those of
   * `names` it has: an ABSENT record when there are none; else by type, or
   * whole with WHOLE.
   */
  others(object, known, flags, names) {
    let at = -1;
    let count = 0;
    for (const name of names ?? Object.keys(object)) {
      if (names === undefined ? known.includes(name) : !Object.hasOwn(object, name)) continue;
      if (at < 0) at = this.open(OBJECT_WHOLE);
      const item = this.member(object, name);
      if (item === undefined) continue;
      if (flags & WHOLE) {
        const read = this.compact(item);
        if (this.snapshotting) put(object, name, read);
      } else {
        this.typed(item);
      }
      count++;
    }
    if (at < 0) this.tag(ABSENT);
    else if (count === 0) this.abandon(at);
    else this.close(at, count);
  }

  /** A record for all of `value`, as JSON.stringify reads it; while snapshotting, what it was read as (see `compact`). */
  whole(value) {
    if (typeof value !== "object" || value === null) return this.value(value);
    if (!Array.isArray(value) && !isPlain(value)) return this.unreadable(WHAT.notPlain);
    // The record first: should the reading stop inside, it points at what is unfinished.
    const r = this.r;
    this.bytes[r] = Array.isArray(value) ? ARRAY_WHOLE : OBJECT_WHOLE;
    this.data.setUint32(r + 8, this.v, true);
    this.r = r + RECORD;
    return this.compact(value);
  }

  // --- The values area: the compact form ----------------------------------

  /** Room for `n` more bytes in the values area (past the bound, the reading stops: `tooLarge`). */
  makeRoom(n) {
    if (this.v + n > this.valuesRoom) {
      if (this.v + n > MAX_VALUE_BYTES) this.stop(WHAT.tooLarge);
      this.grow(VALUES, this.v + n);
    }
  }

  byte(value) {
    this.makeRoom(1);
    this.bytes[this.valuesAt + this.v++] = value;
  }

  u32(value) {
    this.makeRoom(4);
    this.data.setUint32(this.valuesAt + this.v, value, true);
    this.v += 4;
  }

  /**
   * A `str` in the values area: a string of a value read whole, cut as the
   * call cuts strings; or, with `whole`, a member name, never cut (a name is
   * compared and edited by its whole value).
   */
  name(text, whole = false) {
    if (this.longest !== 0 && text.length > this.longest) this.stop(WHAT.longOption);
    this.flags = 0;
    if (!whole) text = this.cutText(text);
    this.makeRoom(5 + 3 * text.length);
    const at = this.valuesAt + this.v;
    const written = this.utf8(text, at + 5);
    this.data.setUint32(at, written, true);
    this.bytes[at + 4] = this.flags;
    this.v += 5 + written;
  }

  /** Opens a whole container in the values area; where its size is. */
  start(tag) {
    this.byte(tag);
    const at = this.v;
    this.u32(UNFINISHED);
    this.u32(UNFINISHED);
    this.unfinished++;
    return at;
  }

  close(at, count) {
    this.data.setUint32(this.valuesAt + at, this.v - at - 4, true);
    this.data.setUint32(this.valuesAt + at + 4, count, true);
    this.unfinished--;
  }

  /** Takes back the last record, an object of other members that turned out to have none. */
  abandon(at) {
    this.v = at - 1;
    this.unfinished--;
    this.bytes[this.r - RECORD] = ABSENT;
  }

  /**
   * `object[name]`, its name written first (so that a getter that throws is
   * reported at the member), and taken back when the member is undefined.
   */
  member(object, name) {
    const at = this.v;
    if (name.length > MAX_NAME_CHARS) {
      // Too long to read whole, so refused: named by its start, for the pointer.
      this.name(cutAt(name, NAMED_CHARS));
      this.stop(WHAT.longName);
    }
    this.name(name, true);
    const item = object[name];
    if (item === undefined) this.v = at;
    return item;
  }

  /** A value by its type in the values area: scalars as they are, containers by their tag alone. */
  typed(value) {
    if (typeof value === "object" && value !== null) {
      if (Array.isArray(value)) return this.byte(ARRAY);
      if (isPlain(value)) return this.byte(OBJECT);
    }
    return this.scalar(value);
  }

  scalar(value) {
    switch (typeof value) {
      case "undefined": return this.byte(ABSENT);
      case "string":
        this.byte(STRING);
        return this.name(value);
      case "boolean": return this.byte(value ? TRUE : FALSE);
      case "number": {
        if (!Number.isFinite(value)) return this.stop(WHAT.notFinite);
        this.byte(NUMBER_TEXT);
        this.makeRoom(8);
        this.data.setFloat64(this.valuesAt + this.v, value, true);
        this.v += 8;
        return this.name(String(value));
      }
      case "object":
        if (value === null) return this.byte(NULL);
        return this.stop(WHAT.notPlain);
      case "bigint": return this.stop(WHAT.bigint);
      case "symbol": return this.stop(value === THREW ? WHAT.threw : WHAT.symbol);
      default: return this.stop(WHAT.function);
    }
  }

  /** UNREADABLE in the values area, and the reading stops. */
  stop(what) {
    this.unreadableValue(what);
    throw STOP;
  }

  /** UNREADABLE and what it was, in the values area: room is made whatever the bound, for these two bytes. */
  unreadableValue(what) {
    if (this.v + 2 > this.valuesRoom) this.grow(VALUES, this.v + 2);
    this.bytes[this.valuesAt + this.v++] = UNREADABLE;
    this.bytes[this.valuesAt + this.v++] = what;
  }

  /**
   * All of `value` in the values area, as JSON.stringify reads it (without
   * calling toJSON); while snapshotting, what was read as a plain JSON
   * value of its own (else undefined for a container).
   */
  compact(value) {
    if (++this.values > MAX_VALUES) return this.stop(WHAT.tooMany);
    if (typeof value !== "object" || value === null) {
      this.scalar(value);
      return value;
    }
    const ancestors = this.ancestors;
    if (ancestors.length >= MAX_DEPTH) return this.stop(WHAT.tooDeep);
    if (ancestors.includes(value)) return this.stop(WHAT.cycle);
    ancestors.push(value);
    let read;
    if (Array.isArray(value)) {
      const length = value.length;
      if (length > MAX_ITEMS) return this.stop(WHAT.tooLong);
      const at = this.start(ARRAY_WHOLE);
      if (this.snapshotting) read = new Array(length);
      for (let i = 0; i < length; i++) {
        const item = value[i];
        if (item === undefined) this.byte(NULL);
        const itemRead = item === undefined ? null : this.compact(item);
        if (read !== undefined) read[i] = itemRead;
      }
      this.close(at, length);
    } else {
      if (!isPlain(value)) return this.stop(WHAT.notPlain);
      const at = this.start(OBJECT_WHOLE);
      if (this.snapshotting) {
        read = {};
        this.made.push(read);
      }
      let count = 0;
      for (const name of Object.keys(value)) {
        const item = this.member(value, name);
        if (item === undefined) continue;
        const itemRead = this.compact(item);
        if (read !== undefined) put(read, name, itemRead);
        count++;
      }
      this.close(at, count);
    }
    ancestors.pop();
    return read;
  }

  /**
   * An options argument, whole, but for its member `apart`, which is
   * returned to be read as what it is (a message), or with `taken` left
   * unread (its caller read it already). Strings are never cut: one longer
   * than an option can be stops the reading before it is copied.
   */
  options(options, apart, taken = false) {
    let found;
    const cut = this.cut;
    this.cut = 0;
    this.longest = MAX_OPTION_CHARS;
    if (typeof options !== "object" || options === null || Array.isArray(options) || !isPlain(options)) {
      // Not options: what the core refuses it for is its type, so a stand-in of that type goes, never a copy.
      this.whole(standIn(options));
    } else {
      const at = this.open(OBJECT_WHOLE);
      let count = 0;
      for (const name of Object.keys(options)) {
        if (name === apart) {
          if (!taken) found = options[name];
          continue;
        }
        const item = this.member(options, name);
        if (item === undefined) continue;
        this.compact(item);
        count++;
      }
      this.close(at, count);
    }
    this.cut = cut;
    this.longest = 0;
    return found;
  }

  /**
   * The handle of the options on the tape, read as the table's `reads`
   * says, held by a JS value with `pin` (binding/src/handle.rs): its number,
   * or the module's status.
   */
  provenance(reads, pin) {
    const number = this.glue.provenance(reads, pin, this.r - this.recordsAt, this.s, this.v);
    if (this.bytes.byteLength === 0) this.view();
    return number;
  }

  /** Runs the tape under handle `handle`; the module's status. */
  run(handle) {
    const status = this.glue.run(handle, this.r - this.recordsAt, this.s, this.v);
    if (this.bytes.byteLength === 0) this.view();
    return status;
  }
}
