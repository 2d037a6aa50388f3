// A JSON text read without loss, in the tagged form js-tests/differential/
// python_stacks.py sends what the Python stacks read: integers as their
// decimal text (["i", "12345678901234567890"]), other numbers as doubles
// (["f", 1.1], ["f", "inf"]), arrays as ["a", [...]], objects as
// ["o", [[key, value], ...]] sorted by key (code point order, as Python sorts)
// with a duplicated key's last value (as JSON.parse and both Python parsers
// keep it). Strings, booleans and null are themselves.
//
// `JSON.parse` cannot be the reference for the Python stacks: it reads
// 12345678901234567890 as 12345678901234567000 and 1.0 as 1, which Python
// keeps apart. Only texts the filter forwarded are read here, which are
// strict JSON (WIRE-2); anything else throws.

/** Reads a JSON text (a string) into the tagged form. */
export function tagJsonText(text) {
  let at = 0;
  const space = () => {
    while (at < text.length && " \t\r\n".includes(text[at])) at++;
  };
  const fail = (what) => {
    throw new SyntaxError(`lossless: ${what} at ${at}`);
  };
  // Iterative, so that the deepest message a filter may forward (maxDepth up to 4,096) reads.
  const stack = [];
  let result;
  let done = false;
  const put = (value) => {
    const top = stack[stack.length - 1];
    if (!top) {
      result = value;
      done = true;
    } else if (top.kind === "a") top.items.push(value);
    else top.members.set(top.key, value);
  };
  space();
  while (!done) {
    space();
    const c = text[at];
    const top = stack[stack.length - 1];
    if (top && top.kind === "o" && top.expectKey) {
      if (c === "}" && top.members.size === 0 && !top.sawComma) {
        at++;
        stack.pop();
        put(["o", sortedPairs(top.members)]);
        afterValue();
        continue;
      }
      if (c !== '"') fail("a key");
      top.key = readString();
      space();
      if (text[at] !== ":") fail("':'");
      at++;
      top.expectKey = false;
      continue;
    }
    if (c === "{") {
      at++;
      stack.push({ kind: "o", members: new Map(), expectKey: true, sawComma: false });
      continue;
    }
    if (c === "[") {
      at++;
      space();
      if (text[at] === "]") {
        at++;
        put(["a", []]);
        afterValue();
        continue;
      }
      stack.push({ kind: "a", items: [] });
      continue;
    }
    if (c === '"') put(readString());
    else if (text.startsWith("true", at)) { at += 4; put(true); }
    else if (text.startsWith("false", at)) { at += 5; put(false); }
    else if (text.startsWith("null", at)) { at += 4; put(null); }
    else put(readNumber());
    afterValue();
  }
  space();
  if (at !== text.length) fail("the end");
  return result;

  function afterValue() {
    while (stack.length) {
      space();
      const top = stack[stack.length - 1];
      const c = text[at];
      if (c === ",") {
        at++;
        if (top.kind === "o") {
          top.expectKey = true;
          top.sawComma = true;
        }
        return;
      }
      if (top.kind === "a" && c === "]") {
        at++;
        stack.pop();
        put(["a", top.items]);
        if (done) return;
        continue;
      }
      if (top.kind === "o" && c === "}") {
        at++;
        stack.pop();
        put(["o", sortedPairs(top.members)]);
        if (done) return;
        continue;
      }
      fail("',' or a close");
    }
  }

  function readString() {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    if (at >= text.length) fail("a closing quote");
    at++;
    return JSON.parse(text.slice(start, at));
  }

  function readNumber() {
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (!match || match[0].length === 0) fail("a value");
    at += match[0].length;
    if (match[2] === undefined && match[3] === undefined) return ["i", BigInt(match[0]).toString()];
    return tagFloat(Number(match[0]));
  }
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

/** A double in the tagged form. */
export function tagFloat(n) {
  if (n === Infinity) return ["f", "inf"];
  if (n === -Infinity) return ["f", "-inf"];
  if (Number.isNaN(n)) return ["f", "nan"];
  return ["f", n];
}

/** Code point order, as Python sorts its str keys. */
export function byCodePoint(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function sortedPairs(members) {
  return [...members.entries()].sort((a, b) => byCodePoint(a[0], b[0]));
}

/** A tagged value's member (undefined when absent or not an object). */
export function member(tagged, key) {
  if (!Array.isArray(tagged) || tagged[0] !== "o") return undefined;
  const pair = tagged[1].find(([k]) => k === key);
  return pair ? pair[1] : undefined;
}

/**
 * A tagged value back as a JS value, as `JSON.parse` would give it (integers and floats as
 * doubles): for the object API (`auditRecord`) to read what a Python stack read.
 */
export function untag(tagged) {
  if (!Array.isArray(tagged)) return tagged;
  switch (tagged[0]) {
    case "i": return Number(tagged[1]);
    case "f": return typeof tagged[1] === "number" ? tagged[1] : tagged[1] === "inf" ? Infinity : tagged[1] === "-inf" ? -Infinity : NaN;
    case "a": return tagged[1].map(untag);
    case "o": {
      const object = {};
      for (const [k, v] of tagged[1]) Object.defineProperty(object, k, { value: untag(v), enumerable: true, writable: true, configurable: true });
      return object;
    }
    default: return tagged;
  }
}
