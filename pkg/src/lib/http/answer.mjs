// The way back: the app's answer to a body the filter forwarded, on its way
// to the client, whatever the stack (node:http's `res` or a Fetch
// `Response`). Only `turnId` is echoed into each result (AI-11, by the
// filter's `echo`, in the core), and the filter's replies to the refused
// messages of a batch join the answer. What cannot be read is never passed
// on as it came: each request still waiting gets an error of the
// middleware's own instead. Bounded: a JSON answer is held up to a limit to
// echo into (or, not echoing, streams through with the replies joined), an
// event stream passes one event at a time, each held up to the same limit.
import { composed, errorText, INTERNAL_ERROR } from "./refusals.mjs";

const encoder = new TextEncoder();
const CR = 0x0d;
const LF = 0x0a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const COMMA = encoder.encode(",");
const DATA = encoder.encode("data");
const DATA_LINE = encoder.encode("data: ");
const NOTHING = new Uint8Array(0);

/** Where the first byte of `bytes` past JSON whitespace is, from `from`; -1 when there is none. */
export function pastWhitespace(bytes, from = 0) {
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at];
    if (byte !== 0x20 && byte !== 0x09 && byte !== LF && byte !== CR) return at;
  }
  return -1;
}

/** Whether `bytes` begin, past whitespace, as a JSON-RPC answer does: an object or a batch. */
function beginsAnswer(bytes) {
  const first = bytes[pastWhitespace(bytes)];
  return first === OPEN_OBJECT || first === OPEN_ARRAY;
}

/** `pieces` (byte arrays) as one. */
export function concat(pieces) {
  if (pieces.length === 1) return pieces[0];
  const whole = new Uint8Array(pieces.reduce((size, piece) => size + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}

/** The media type of a Content-Type value, lowercase, without its parameters. */
const mediaType = (value) => (typeof value === "string" ? value.split(";")[0].trim().toLowerCase() : undefined);

/** A JSON-RPC message (JSON text on one line) as an event of its own. */
const event = (message) => encoder.encode(`event: message\ndata: ${message}\n\n`);

/** Where the line break at `at` ends (CRLF, LF or CR); -1 when there is none there. */
function lineBreak(bytes, at) {
  if (bytes[at] === LF) return at + 1;
  if (bytes[at] === CR) return bytes[at + 1] === LF ? at + 2 : at + 1;
  return -1;
}

/**
 * Where the first event of `bytes` from `from` ends: a line break and an
 * empty line, `[start, end]` of the two breaks; undefined when none does yet.
 * With `more` to come, a CR at the very end may be the first half of a CRLF:
 * that event is not taken to end yet.
 */
function eventEnd(bytes, from, more) {
  for (let at = from; at < bytes.length; at++) {
    const first = lineBreak(bytes, at);
    if (first < 0) continue;
    const second = lineBreak(bytes, first);
    if (second >= 0) return more && second === bytes.length && bytes[second - 1] === CR ? undefined : [at, second];
    at = first - 1;
  }
  return undefined;
}

/** The lines of an event (its bytes without the empty line that ends it), each without its break. */
function linesOf(event) {
  const lines = [];
  let start = 0;
  for (let at = 0; at < event.length; at++) {
    const end = lineBreak(event, at);
    if (end < 0) continue;
    lines.push(event.subarray(start, at));
    start = end;
    at = end - 1;
  }
  lines.push(event.subarray(start));
  return lines;
}

/** Whether a line of an event is a data line: `data`, alone or before a colon. */
const isData = (line) => DATA.every((byte, at) => line[at] === byte) && (line.length === 4 || line[4] === 0x3a);

/** A data line's value: what follows the colon, one space after it dropped. */
function dataValue(line) {
  const value = line.subarray(5);
  return value[0] === 0x20 ? value.subarray(1) : value;
}

/** `parts` joined with LF. */
const joinedLines = (parts) => concat(parts.flatMap((part, index) => (index === 0 ? [part] : [Uint8Array.of(LF), part])));

/**
 * The app's answer to one forwarded body, as it goes to the client. Made
 * when its head is known; `begin` says how it goes on, and `write` and `end`
 * turn what the app sends into what the client gets: each a step,
 * `{ pieces, over, head }`: the pieces (byte arrays) to send; `over` when
 * the middleware has answered in the app's stead and what the app still
 * sends is dropped; and for an answer held whole, `head`, the status to
 * send it with and whether it is the middleware's own (its headers then
 * those of JSON).
 */
export class Answer {
  #settings;
  #exchange;
  #replies;
  #mode;
  /** What the app first said of its answer: its status. */
  #status;
  /** A JSON answer held so far, or the part of an event stream past its last whole event; and its size. */
  #held = [];
  #size = 0;
  /** Where an event's end was looked for in the held part, so far. */
  #scanned = 0;
  /** How far the replies are joined to a JSON answer that streams: see `#join`. */
  #joining = "start";

  constructor(settings, exchange) {
    this.#settings = settings;
    this.#exchange = exchange;
    this.#replies = exchange.filtered.replies;
  }

  /**
   * How the app's answer goes on, from its `status` and Content-Type:
   * "events" (an event stream, the replies first, each event echoed), "held"
   * (JSON held whole, up to the limit, to echo into), "join" (not echoing: the
   * replies joined to a JSON answer as it streams) or "pass" (as it comes).
   * The status the client gets is `status`, but 200 when joining.
   */
  begin(status, contentType) {
    const media = mediaType(contentType);
    const { echo } = this.#settings;
    const replies = this.#replies.length > 0;
    this.#status = status;
    if (media === "text/event-stream") this.#mode = echo || replies ? "events" : "pass";
    else if (echo && (media === "application/json" || replies)) this.#mode = "held";
    else this.#mode = replies ? "join" : "pass";
    this.status = this.#mode === "join" ? 200 : status;
    return this.#mode;
  }

  /** What goes to the client before the app's first byte: the replies, as events of their own. */
  opening() {
    return this.#mode === "events" ? this.#replies.map(event) : [];
  }

  /** What the client gets of a piece (bytes) of the app's answer. */
  write(bytes) {
    switch (this.#mode) {
      case "events":
        return this.#settings.echo ? this.#events(bytes, true) : { pieces: [bytes] };
      case "held":
        return this.#hold(bytes);
      case "join":
        return this.#join(bytes);
      default:
        return { pieces: [bytes] };
    }
  }

  /** What the client gets once the app's answer has ended. */
  end() {
    switch (this.#mode) {
      case "events":
        // A last event the stream did not end is dropped, as a client drops it.
        return this.#settings.echo ? this.#events(NOTHING, false) : { pieces: [] };
      case "held":
        return this.#settle(concat(this.#held));
      case "join":
        return { pieces: this.#joinEnd() };
      default:
        return { pieces: [] };
    }
  }

  /** `data` (an answer, or an event's data) with only `turnId` echoed; undefined when it is not JSON-RPC. */
  #echoed(data) {
    const { echo, filter } = this.#settings;
    const echoed = echo ? filter.echo(data, this.#exchange.filtered) : data;
    return echoed !== undefined && beginsAnswer(echoed) ? echoed : undefined;
  }

  /** The middleware's errors, one for each request that went on, said to be `code`. */
  #failures(message, code) {
    this.#exchange.refused = code;
    return this.#exchange.awaiting.map((id) => errorText(id, INTERNAL_ERROR, message, code));
  }

  /** Answers, in place of a JSON answer that cannot go on, the replies and an error for each request; 502 when there is nothing to say. */
  #instead(message, code) {
    const parts = [...this.#replies, ...this.#failures(message, code)];
    return this.#own(parts.length ? 200 : 502, parts.length ? encoder.encode(composed(parts, this.#exchange.batch)) : NOTHING);
  }

  /** The middleware's own answer, whole: the app's rest is dropped. */
  #own(status, body) {
    this.#held = [];
    return { pieces: [body], over: true, head: { status, own: true } };
  }

  #hold(bytes) {
    this.#size += bytes.length;
    if (this.#size > this.#settings.maxAnswerBytes) {
      return this.#instead(`the server's answer is larger than ${this.#settings.maxAnswerBytes} bytes`, "answer-too-large");
    }
    this.#held.push(bytes);
    return { pieces: [] };
  }

  /** A JSON answer held whole: echoed, the replies joined; or, when it cannot be read, the middleware's own. */
  #settle(body) {
    if (pastWhitespace(body) < 0) {
      // No answer (202): the replies, if any, are the answer.
      if (this.#replies.length) return this.#own(200, encoder.encode(composed(this.#replies, true)));
      return { pieces: [body], head: { status: this.#status, own: false } };
    }
    const answer = this.#echoed(body);
    if (answer === undefined) return this.#instead("the server's answer is not JSON-RPC", "answer-not-json");
    if (!this.#replies.length) return { pieces: [answer], head: { status: this.#status, own: false } };
    return { pieces: [concat([...this.#join(answer).pieces, ...this.#joinEnd()])], head: { status: 200, own: true } };
  }

  /**
   * A piece of a JSON answer with the replies joined, as it streams: an
   * array goes on as it came (but for whitespace before its first item), the
   * replies after its `[` and a comma (unless it is empty); a single message
   * becomes the last of a batch of the replies. An answer that begins as no
   * JSON-RPC answer does is not passed on.
   */
  #join(bytes) {
    const pieces = [];
    let at = 0;
    if (this.#joining === "start") {
      at = pastWhitespace(bytes);
      if (at < 0) return { pieces };
      if (bytes[at] === OPEN_OBJECT) {
        pieces.push(encoder.encode(`[${this.#replies.join(",")},`));
        this.#joining = "object";
      } else if (bytes[at] === OPEN_ARRAY) {
        pieces.push(encoder.encode(`[${this.#replies.join(",")}`));
        this.#joining = "items";
        at += 1;
      } else {
        return this.#instead("the server's answer is not JSON-RPC", "answer-not-json");
      }
    }
    if (this.#joining === "items") {
      at = pastWhitespace(bytes, at);
      if (at < 0) return { pieces };
      if (bytes[at] !== CLOSE_ARRAY) pieces.push(COMMA);
      this.#joining = "array";
    }
    if (at < bytes.length) pieces.push(at === 0 ? bytes : bytes.subarray(at));
    return { pieces };
  }

  /** What closes a JSON answer joined as it streamed: `]` after a single message; the replies alone after no answer. */
  #joinEnd() {
    if (this.#joining === "object") return [encoder.encode("]")];
    if (this.#joining === "start") return [encoder.encode(`[${this.#replies.join(",")}]`)];
    return [];
  }

  /**
   * The whole events of an event stream so far, each with its data echoed,
   * what follows the last held (up to the limit). An event that cannot be
   * read ends the stream: an error for each request that went on instead.
   */
  #events(bytes, more) {
    let held = this.#held.length ? concat([...this.#held, bytes]) : bytes;
    const pieces = [];
    let from = 0;
    for (let end = eventEnd(held, this.#scanned, more); end !== undefined; end = eventEnd(held, from, more)) {
      const echoed = this.#event(held.subarray(from, end[0]));
      if (echoed === undefined) return this.#streamFailed(pieces, "an event of the server's answer is not JSON-RPC", "answer-not-json");
      pieces.push(echoed, held.subarray(end[0], end[1]));
      from = end[1];
    }
    held = held.subarray(from);
    if (held.length > this.#settings.maxAnswerBytes) {
      return this.#streamFailed(pieces, `an event of the server's answer is larger than ${this.#settings.maxAnswerBytes} bytes`, "answer-too-large");
    }
    // Copied, so that the app's buffer is not kept; looked at again from the last bytes that may begin an event's end.
    this.#held = held.length ? [held.slice()] : [];
    this.#scanned = Math.max(0, held.length - 3);
    return { pieces };
  }

  /** Ends an event stream that cannot go on: after the events already read, an error for each request that went on. */
  #streamFailed(pieces, message, code) {
    this.#held = [];
    return { pieces: [...pieces, ...this.#failures(message, code).map(event)], over: true };
  }

  /**
   * One event (its lines, without the empty line that ends it) with its data
   * echoed: the very bytes when that changes nothing (or it has no data: a
   * comment, a retry, the event that primes a resumable stream); its fields
   * in their order, its data on the lines it came on, otherwise; undefined
   * when its data is not JSON-RPC.
   */
  #event(bytes) {
    const lines = linesOf(bytes);
    const values = lines.filter(isData).map(dataValue);
    if (values.every((value) => value.length === 0)) return bytes;
    const data = joinedLines(values);
    const answer = this.#echoed(data);
    if (answer === undefined || answer === data) return answer === undefined ? undefined : bytes;
    const first = lines.findIndex(isData);
    const parts = [];
    let start = 0;
    for (let at = 0; at <= answer.length; at++) {
      if (at < answer.length && answer[at] !== LF) continue;
      parts.push(concat([DATA_LINE, answer.subarray(start, at)]));
      start = at + 1;
    }
    return joinedLines([...lines.slice(0, first), ...parts, ...lines.slice(first).filter((line) => !isData(line))]);
  }
}
