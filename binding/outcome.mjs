// The filter module's answers (binding/src/answer.rs, feature `filter`),
// read from an Answer: a filter's outcome, an echo, the middleware's own
// answers, the steps of the way back and the lines of `check`. Apart from
// answer.mjs, so that the object API's entries ship none of it.

import { table } from "../table.mjs";
import { byteOf } from "./answer.mjs";

const f64Value = new Float64Array(1);
const f64Bytes = new Uint8Array(f64Value.buffer);

/** An answer's next `f64`. */
function f64(a) {
  f64Bytes.set(a.bytes.subarray(a.at, a.at + 8));
  a.at += 8;
  return f64Value[0];
}

/** `len:u32 byte[len]`, copied out of the answer (a view of the module's memory, read before its next call). */
function bytesOf(a) {
  const length = a.u32();
  a.at += length;
  return a.bytes.slice(a.at - length, a.at);
}

const decoder = new TextDecoder();
const VERDICT = byteOf(table.verdicts);
const LINE = byteOf(table.lineKinds);
const PIECE = byteOf(table.pieces);

/**
 * Each message's account and where it stands in what goes on (binding/src/answer.rs
 * `accounts`), read out of an answer: `{accounts, places}`.
 */
export function accountsIn(a) {
  const accounts = [];
  const places = [];
  for (let n = a.u32(); n > 0; n--) {
    accounts.push(a.str());
    const line = a.u8();
    places.push(line === LINE.refused ? undefined : [a.u32(), a.u32(), line]);
  }
  return { accounts, places };
}

/**
 * What every outcome gives besides its verdict: each message's id as it
 * came, its turn, its account and `lines` (the account with the message as
 * it goes on, on one line, for a log). The accounts, records and all, are
 * `accountsOf()` (read with the outcome, or made then) when first asked for,
 * so that a gateway that only forwards pays for none of them. A line's
 * message is taken from `forward` where it stands rather than copied out of
 * the module, and where that text is not a line's as it is (a body spread
 * over lines, arguments to leave out: WIRE-9), `lineHead` has the core make
 * the line's first members of it then.
 */
class Outcome {
  #ids;
  #turns;
  #accountsOf;
  #places;
  #lineHead;

  constructor(ids, turns, accountsOf, lineHead) {
    this.#ids = ids;
    this.#turns = turns;
    this.#accountsOf = accountsOf;
    this.#lineHead = lineHead;
  }

  get accounts() {
    const { accounts, places } = this.#accountsOf();
    this.#places = places;
    Object.defineProperty(this, "accounts", { value: accounts, enumerable: true });
    return accounts;
  }

  get ids() {
    return this.#ids;
  }

  get turns() {
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
  constructor(ids, turns, accountsOf, forward, replies, lineHead) {
    super(ids, turns, accountsOf, lineHead);
    this.forward = forward;
    this.replies = replies;
  }
}

/** Nothing goes on. */
class Rejected extends Outcome {
  constructor(ids, turns, accountsOf, reject, status, replies) {
    super(ids, turns, accountsOf);
    this.reject = reject;
    this.status = status;
    this.replies = replies;
  }
}

/**
 * A filter's outcome (binding/src/answer.rs `outcome`) for `body`, the string
 * or bytes filtered, read out of the answer now (a view of the module's
 * memory); `lineHead(text, kind)` makes a line's first members of a
 * message's JSON text (binding/src/filter.rs `line_head`). The accounts that
 * follow it in the answer, when they do, are read now too (`accountsIn`);
 * when first asked for, the outcome's accounts are `accountsOf(read)`, the
 * ones read or, when none followed, undefined.
 */
export function outcomeOf(a, body, lineHead, accountsOf = (read) => read) {
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
    text = bytesOf(a);
  }
  const replies = a.strs();
  const ids = [];
  const turns = [];
  for (let n = a.u32(); n > 0; n--) {
    ids.push(a.opt());
    turns.push(a.opt());
  }
  const read = a.at < a.bytes.length ? accountsIn(a) : undefined;
  const made = () => accountsOf(read);
  return verdict === VERDICT.rejected ? new Rejected(ids, turns, made, text, status, replies) : new Forwarded(ids, turns, made, text, replies, lineHead);
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
    pieces.push(a.u8() === PIECE.given ? given.subarray(a.u32(), a.u32()) : bytesOf(a));
  }
  return { head, pieces, over: a.u8() === 1 };
}

/** What a piece of a capture `check` read came to (binding/src/answer.rs `line`): `{out, sanitized, counts, exit, hint}`. */
export function lineOf(a) {
  const out = a.str();
  const sanitized = bytesOf(a);
  const counts = {};
  for (let n = a.u32(); n > 0; n--) counts[a.str()] = f64(a);
  return { out, sanitized, counts, exit: a.u8(), hint: a.opt() };
}
