// The filter module's answers (binding/src/answer.rs, feature `filter`),
// read from an Answer: a filter's outcome, an echo, the middleware's own
// answers, the steps of the way back and the lines of `check`. Apart from
// answer.mjs, so that the object API's entries ship none of it.

import { table } from "../table.mjs";
import { Answer, byteOf } from "./answer.mjs";

const f64Value = new Float64Array(1);
const f64Bytes = new Uint8Array(f64Value.buffer);

/** An answer's next `f64`. */
function f64(a) {
  f64Bytes.set(a.bytes.subarray(a.at, a.at + 8));
  a.at += 8;
  return f64Value[0];
}

/** `len:u32 byte[len]`, a view of the answer (a copy already, the caller's own). */
function view(a) {
  const length = a.u32();
  a.at += length;
  return a.bytes.subarray(a.at - length, a.at);
}

const decoder = new TextDecoder();
const VERDICT = byteOf(table.verdicts);
const LINE = byteOf(table.lineKinds);
const PIECE = byteOf(table.pieces);

/**
 * What every outcome gives besides its verdict: each message's account, its
 * id as it came, its turn, and `lines` (the account with the message as it
 * goes on, on one line, for a log). The ids and turns are read from a copy
 * of the core's answer when first asked for; the accounts, records and all,
 * are made when first asked for (`accountsOf`, the core's `accounts`), so
 * that a gateway that only forwards pays for none of them. A line's message
 * is taken from `forward` where it stands rather than copied out of the
 * module, and where that text is not a line's as it is (a body spread over
 * lines, arguments to leave out: WIRE-9), `lineHead` has the core make the
 * line's first members of it then.
 */
class Outcome {
  /** The ids and turns part of the core's answer (binding/src/answer.rs `outcome`), until read. */
  #kept;
  #ids;
  #turns;
  #accountsOf;
  #places;
  #lineHead;

  constructor(kept, accountsOf, lineHead) {
    this.#kept = kept;
    this.#accountsOf = accountsOf;
    this.#lineHead = lineHead;
  }

  /** Reads the kept answer into `ids` and `turns`. */
  #read() {
    if (this.#kept === undefined) return;
    const answer = new Answer(this.#kept, 0);
    this.#ids = [];
    this.#turns = [];
    for (let n = answer.u32(); n > 0; n--) {
      this.#ids.push(answer.opt());
      this.#turns.push(answer.opt());
    }
    this.#kept = undefined;
  }

  /** Each message's account (binding/src/answer.rs `accounts`), made now, and where it stands in what goes on. */
  get accounts() {
    const answer = new Answer(this.#accountsOf(), 0);
    const accounts = [];
    this.#places = [];
    for (let n = answer.u32(); n > 0; n--) {
      accounts.push(answer.str());
      const line = answer.u8();
      this.#places.push(line === LINE.refused ? undefined : [answer.u32(), answer.u32(), line]);
    }
    Object.defineProperty(this, "accounts", { value: accounts, enumerable: true });
    return accounts;
  }

  get ids() {
    this.#read();
    return this.#ids;
  }

  get turns() {
    this.#read();
    return this.#turns;
  }

  /** The first members of a message's line: its text in what goes on, `[start, tail]` units from its ends, as its line's kind says. */
  #head([start, tail, kind]) {
    const { forward } = this;
    const text = typeof forward === "string" ? forward.slice(start, forward.length - tail)
      : decoder.decode(forward.subarray(start, forward.length - tail));
    return kind === LINE.oneLine ? `"message":${text}` : this.#lineHead(text, kind);
  }

  get lines() {
    const lines = this.accounts.map((account, index) => {
      const place = this.#places[index];
      return place === undefined ? account : `{${this.#head(place)},${account.slice(1)}`;
    });
    Object.defineProperty(this, "lines", { value: lines, enumerable: true });
    return lines;
  }
}

/** Something goes on. */
class Forwarded extends Outcome {
  constructor(kept, accountsOf, forward, replies, lineHead) {
    super(kept, accountsOf, lineHead);
    this.forward = forward;
    this.replies = replies;
  }
}

/** Nothing goes on. */
class Rejected extends Outcome {
  constructor(kept, accountsOf, reject, status, replies) {
    super(kept, accountsOf);
    this.reject = reject;
    this.status = status;
    this.replies = replies;
  }
}

/**
 * A filter's outcome (binding/src/answer.rs `outcome`) for `body`, the string
 * or bytes filtered; `lineHead(text, kind)` makes a line's first members of
 * a message's JSON text (binding/src/filter.rs `line_head`); when first
 * read, the messages' accounts (answer.rs `accounts`) are `accountsOf(rest)`,
 * `rest` what follows the outcome in the answer: they, or none when they are
 * made apart.
 */
export function outcomeOf(a, body, lineHead, accountsOf = (rest) => rest) {
  const verdict = a.u8();
  let status;
  let text;
  if (verdict === VERDICT.rejected) {
    status = a.u32();
    text = a.str();
  } else if (verdict === VERDICT.asItCame) {
    text = body;
  } else if (typeof body === "string") {
    text = a.str();
  } else {
    const length = a.u32();
    text = a.bytes.slice(a.at, a.at + length);
    a.at += length;
  }
  const replies = a.strs();
  const size = a.u32();
  // The filter module's answer is a copy already, the outcome's own.
  const kept = a.bytes.subarray(a.at, a.at + size);
  a.at += size;
  const rest = a.bytes.subarray(a.at);
  const made = () => accountsOf(rest);
  return verdict === VERDICT.rejected ? new Rejected(kept, made, text, status, replies) : new Forwarded(kept, made, text, replies, lineHead);
}

/**
 * What `filter.echo` made of `answer` (binding/src/answer.rs `echoed`): the
 * very value given, the rewritten answer of its type, or undefined.
 */
export function echoedOf(a, answer) {
  const verdict = a.u8();
  if (verdict === VERDICT.asItCame) return answer;
  if (verdict === VERDICT.rejected) return undefined;
  if (typeof answer === "string") return a.str();
  const length = a.u32();
  const bytes = a.bytes.slice(a.at, a.at + length);
  a.at += length;
  return bytes;
}

/** An answer of the middleware's own (binding/src/answer.rs `own`): `{status, headers, body}`, headers `[name, value]` pairs. */
export function ownOf(a) {
  const status = a.u32();
  const headers = [];
  for (let n = a.u32(); n > 0; n--) headers.push([a.str(), a.str()]);
  return { status, headers, body: a.str() };
}

/**
 * A step of the way back (binding/src/answer.rs `step`): `{head, pieces,
 * over}`, each piece bytes: a range of `given`, the piece the step was
 * made of, or bytes of the exchange's own.
 */
export function stepOf(a, given) {
  let head;
  if (a.u8() === 1) {
    const status = a.u32();
    const edits = [];
    for (let n = a.u32(); n > 0; n--) edits.push([a.str(), a.opt()]);
    head = { status, edits, passes: a.u8() === 1 };
  }
  const pieces = [];
  for (let n = a.u32(); n > 0; n--) {
    pieces.push(a.u8() === PIECE.given ? given.subarray(a.u32(), a.u32()) : view(a));
  }
  return { head, pieces, over: a.u8() === 1 };
}

/** What a piece of a capture `check` read came to (binding/src/answer.rs `line`): `{out, sanitized, counts, exit, hint}`. */
export function lineOf(a) {
  const out = a.str();
  const sanitized = view(a);
  const counts = {};
  for (let n = a.u32(); n > 0; n--) counts[a.str()] = f64(a);
  return { out, sanitized, counts, exit: a.u8(), hint: a.opt() };
}
