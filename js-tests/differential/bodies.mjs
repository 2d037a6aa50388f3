// The bodies js-tests/differential.test.mjs sends: every request of the
// conformance vectors, and a seeded, bounded run of hostile ones. Each case is
// { name, body (string or Buffer), headers (as a client sends them: names in
// any case, a header sent twice as an array), options (the filter's),
// context (the filter's, without headers) }.
import { deflateSync, gzipSync } from "node:zlib";

import { vectors } from "../conformance.mjs";

export const AI = "io.modelcontextprotocol/aiInvocation";
export const UI = "io.modelcontextprotocol/ui";
const VENDOR_AI = "com.example/aiInvocation";
const VENDOR_UI = "com.example/ui";
const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** What every client of a Streamable HTTP server sends beside the body. */
export const BASE_HEADERS = { accept: "application/json, text/event-stream" };
const JSON_TYPE = { "content-type": "application/json" };

/** Whether a value is a JSON-RPC request or notification (a string method, an id that is a string or number, or none). */
function isRequestOrNotification(message) {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return false;
  if (message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  return !("id" in message) || typeof message.id === "string" || (typeof message.id === "number" && Number.isFinite(message.id));
}

/**
 * Every filter vector (its body, options and context; its own headers when it has some), and the
 * request and notification messages of the other vectors, as `JSON.stringify` writes them.
 */
export function vectorCases() {
  const cases = [];
  for (const vector of vectors) {
    if (vector.op === "filter") {
      if (typeof vector.input !== "string") continue;
      const { headers, ...context } = vector.context ?? {};
      cases.push({ name: `vector ${vector.id}`, body: vector.input, headers: headers ?? JSON_TYPE, options: vector.options, context, source: "filter-vector" });
    } else if (isRequestOrNotification(vector.input)) {
      cases.push({ name: `vector ${vector.id} (${vector.op} input)`, body: JSON.stringify(vector.input), headers: JSON_TYPE, options: undefined, context: {}, source: "message-vector" });
    }
  }
  return cases;
}

/** A small seeded PRNG (mulberry32): the same seed, the same bodies. */
export function random(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  };
}

// A message is written from a small tree so that whitespace, escapes and
// duplicates can go anywhere: {o: [[key, node], ...]}, {a: [...]}, {raw: text},
// or a JS string.
const o = (entries) => ({ o: entries });
const raw = (text) => ({ raw: text });

/** Writes a tree as JSON text in a style: its whitespace and how it escapes. */
function write(node, style, depth = 0) {
  if (typeof node === "string") return style.string(node);
  if (node.raw !== undefined) return node.raw;
  const ws = () => style.ws();
  if (node.a) return `[${ws()}${node.a.map((item) => write(item, style, depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
  const members = node.o.map(([key, value]) => `${style.key(key)}${ws()}:${ws()}${write(value, style, depth + 1)}`);
  return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
}

/** How a JSON string is written: plainly, or with some of its characters as \u escapes (same meaning). */
function escaper(rng, rate) {
  return (text) => {
    if (rate === 0) return JSON.stringify(text);
    let out = '"';
    for (const ch of text) {
      const code = ch.codePointAt(0);
      if (ch === '"' || ch === "\\" || code < 0x20) out += JSON.stringify(ch).slice(1, -1);
      else if (rng.chance(rate)) {
        if (code > 0xffff) {
          const hi = 0xd800 + ((code - 0x10000) >> 10);
          const lo = 0xdc00 + ((code - 0x10000) & 0x3ff);
          out += `\\u${hi.toString(16)}\\u${lo.toString(16).toUpperCase()}`;
        } else if (ch === "/" && rng.chance(0.5)) out += "\\/";
        else out += `\\u${code.toString(16).padStart(4, "0")}`;
      } else out += ch;
    }
    return `${out}"`;
  };
}

/** The whitespace of a style: none, one kind, or a mix (all of it JSON's own). */
function spacer(rng) {
  const kind = rng.pick(["none", "space", "tabs", "crlf", "mix"]);
  const pieces = { none: [""], space: [" "], tabs: ["\t"], crlf: ["\r\n"], mix: ["", " ", "\t", "\r", "\n", "\r\n \t"] }[kind];
  return () => rng.pick(pieces);
}

/** A text field for the envelope: plain, with a surrogate pair, a lone surrogate, raw non-ASCII, or log-forging. */
function text(rng) {
  return rng.pick([
    "Show me 10 employees",
    "pair \ud83d\ude00 here",
    "lone \ud800 high",
    "lone \udc00 low",
    "reversed \ude00\ud83d",
    "caf\u00e9 \u2028 \u202e",
    "line\r\nINFO forged",
    "tab\tnul\u0000",
    "",
  ]);
}

/** The `_meta` of a message: the standard envelope and ui entry, sometimes a vendor's, sometimes 2026-07-28's keys. */
function meta(rng, { vendor, modern }) {
  const envelope = [];
  if (rng.chance(0.8)) envelope.push(["invocationReason", o([["text", text(rng)]])]);
  if (rng.chance(0.6)) envelope.push(["model", o([["name", rng.pick(["example-model", "m\u0000", "\ud83d\ude00"])]])]);
  if (rng.chance(0.6)) envelope.push(["userIntent", o([["text", text(rng)], ...(rng.chance(0.2) ? [["redacted", raw("true")]] : [])])]);
  envelope.push(["turnId", rng.chance(0.9) ? rng.pick(["t-1", "turn-\ud800", "t\u00e9", "t/1"]) : raw(rng.pick(["1", "null", "{}"]))]);
  if (rng.chance(0.2)) envelope.push(["x-unknown", o([["k", "v"]])]);
  const entries = [];
  if (modern) {
    entries.push([PROTOCOL_VERSION, "2026-07-28"], [CLIENT_INFO, o([["name", "c"], ["version", "1"]])], [CLIENT_CAPABILITIES, o([])]);
  }
  entries.push([vendor ? VENDOR_AI : AI, o(envelope)]);
  if (rng.chance(0.8)) entries.push([vendor ? VENDOR_UI : UI, o([["initiator", rng.pick(["app", "model", "user", "host", "App", "app\u0000"])]])]);
  if (rng.chance(0.3)) entries.push(["progressToken", raw(rng.pick(["1", "\"p\"", "12345678901234567890", "1.5"]))]);
  if (rng.chance(0.2)) entries.push(["vscode.conversationId", "conv-1"]);
  return o(entries);
}

/** A request, a notification or a response, each with an envelope. */
function message(rng, { vendor, modern, kind }) {
  const id = raw(rng.pick(["1", "2", "\"r-1\"", "0", "-1", "12345678901234567890", "1e400", "1.0", "1E2", "-0", "\"\""]));
  const args = o([["query", "SELECT 1"], ["n", raw(rng.pick(["1", "1.10", "1e400", "-0.0", "12345678901234567890", "1E-400"]))], ["nested", o([["z", raw("1")], ["a", raw("[1,2]")]])]]);
  if (kind === "notification") {
    return o([["jsonrpc", "2.0"], ["method", rng.pick(["notifications/cancelled", "notifications/progress", "notifications/message"])], ["params", o([["requestId", raw("1")], ["_meta", meta(rng, { vendor, modern })]])]]);
  }
  if (kind === "response") {
    return o([["jsonrpc", "2.0"], ["id", id], ["result", o([["content", raw("[]")], ["_meta", o([[AI, o([["turnId", "t-1"]])]])]])]]);
  }
  const method = modern ? "tools/call" : rng.pick(["tools/call", "tools/call", "tools/call", "resources/read", "prompts/get", "ping"]);
  const params = [["name", "t"], ["arguments", args], ["_meta", meta(rng, { vendor, modern })]];
  return o([["jsonrpc", "2.0"], ["id", id], ["method", method], ["params", o(params)]]);
}

/** Node paths to the objects of a message where a member can be duplicated, renamed or added. */
function objectsOf(node, path = [], out = []) {
  if (node && typeof node === "object" && node.o) {
    out.push({ node, path });
    for (const [key, value] of node.o) objectsOf(value, [...path, key], out);
  } else if (node && typeof node === "object" && node.a) node.a.forEach((item, i) => objectsOf(item, [...path, i], out));
  return out;
}

/** A value different from the one given, for a duplicate to disagree with it. */
function otherValue(rng, value) {
  if (typeof value === "string") return rng.pick(["evil", "", "tools/list", "2.0", "model"]);
  if (value && value.o) return o([[AI, o([["turnId", "evil"]])], [UI, o([["initiator", "model"]])]]);
  return raw(rng.pick(["2", "\"2\"", "null", "{}", "[]"]));
}

/** The hostile transformations of a message tree (each returns a short label). */
const MUTATIONS = {
  duplicate(rng, tree) {
    const targets = objectsOf(tree).filter(({ node }) => node.o.length > 0);
    const { node, path } = rng.pick(targets);
    const i = rng.int(node.o.length);
    const [key, value] = node.o[i];
    const twin = [key, otherValue(rng, value)];
    // Before or after the original, so that first-wins and last-wins parsers both read the other one.
    node.o.splice(rng.chance(0.5) ? i + 1 : i, 0, twin);
    return `duplicate ${[...path, key].join("/")}`;
  },
  proto(rng, tree) {
    const { node, path } = rng.pick(objectsOf(tree));
    node.o.push(["__proto__", o([[AI, o([["turnId", "proto"]])], ["_meta", o([[AI, o([["turnId", "proto"]])]])]])]);
    return `__proto__ in ${path.join("/") || "root"}`;
  },
  alias(rng, tree) {
    // `meta` where `_meta` belongs: the field's name in pydantic models, populated by name where allowed.
    const params = objectsOf(tree).filter(({ path }) => path[path.length - 1] === "params");
    if (!params.length) return "alias (no params)";
    const { node } = rng.pick(params);
    const entry = node.o.find(([key]) => key === "_meta");
    const name = rng.pick(["meta", "Meta", "_Meta", "_meta ", "\u005fmeta\u0000"]);
    if (entry && rng.chance(0.5)) entry[0] = name;
    else node.o.push([name, o([[AI, o([["turnId", "alias"]])], [UI, o([["initiator", "model"]])]])]);
    return `alias ${JSON.stringify(name)}`;
  },
  deep(rng, tree) {
    const depth = rng.pick([20, 100, 124, 125, 126, 127, 128, 129, 130, 200, 1000]);
    const targets = objectsOf(tree).filter(({ path }) => path[path.length - 1] === "arguments" || path[path.length - 1] === AI);
    if (!targets.length) return "deep (nowhere)";
    const { node } = rng.pick(targets);
    node.o.push(["deep", raw(`${"[".repeat(depth)}1${"]".repeat(depth)}`)]);
    return `deep ${depth}`;
  },
  bigNumbers(rng, tree) {
    const { node } = rng.pick(objectsOf(tree));
    const number = rng.pick(["12345678901234567890", "1e400", "-1e400", "1E-400", "123456789012345678901234567890.5", "0.1e1", "-0", `9${"9".repeat(400)}`, `1${"0".repeat(5000)}`]);
    node.o.push(["big", raw(number)]);
    return `number ${number.slice(0, 24)}`;
  },
  surrogateKeys(rng, tree) {
    const { node } = rng.pick(objectsOf(tree));
    const key = rng.pick([`${AI}\ud800`, "\ud83d\ude00", "\udfff", "_meta\ud800", `${UI}\udc00`]);
    node.o.push([key, o([["turnId", "s"]])]);
    return `surrogate key ${JSON.stringify(key)}`;
  },
};

/** Byte-level twists on the written text: each may make it not JSON, which the filter must refuse. */
const TWISTS = {
  bom: (text) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
  trailing: (text, rng) => text + rng.pick(["x", "{}", " \u0000", "\u00a0", "\f", "\v", "\n\n  \t"]),
  badSpace: (text, rng) => text.replace(/,/, `,${rng.pick(["\u00a0", "\f", "\v", "\u2028", "\u0085", "\u3000"])}`),
  rawControl: (text) => text.replace("t-1", "t\u0001-1"),
  invalidUtf8: (text, rng) => {
    const at = text.indexOf("t-1");
    const bytes = Buffer.from(text);
    if (at < 0) return bytes;
    const bad = rng.pick([[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff], [0xe2, 0x82]]);
    return Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at)]);
  },
  nonJson: (text, rng) => text.replace(/: ?1\b/, rng.pick([": NaN", ": Infinity", ": 01", ": +1", ": .5", ": 1.", ": 0x10"])),
  singleQuote: (text) => text.replace('"jsonrpc"', "'jsonrpc'"),
};

/**
 * Headers a server could decode a body by, and how each is meant to be read under the filter's
 * header contract: `refuse` is the set of codes the filter may answer 415 with (several apply
 * when more than one header is wrong), `undefined` for plain UTF-8 JSON.
 */
const MEDIA_TYPE = "unsupported-media-type";
const CHARSET = "unsupported-charset";
const ENCODING = "unsupported-encoding";
export const HEADER_VARIANTS = [
  { label: "charset=utf-8", headers: { "content-type": "application/json; charset=utf-8" } },
  { label: "charset=UTF-8", headers: { "Content-Type": "application/json;charset=UTF-8" } },
  { label: 'charset="utf-8"', headers: { "content-type": 'application/json; charset="utf-8"' } },
  { label: "Application/JSON", headers: { "content-type": "Application/JSON" } },
  { label: "identity", headers: { "content-type": "application/json", "content-encoding": "identity" } },
  { label: "Identity, identity", headers: { "content-type": "application/json", "Content-Encoding": "Identity, identity" } },
  { label: "charset=utf-7", headers: { "content-type": "application/json; charset=utf-7" }, refuse: [CHARSET], body: "utf7" },
  { label: 'charset="UTF-7"', headers: { "content-type": 'application/json; charset="UTF-7"' }, refuse: [CHARSET], body: "utf7" },
  { label: "charset=utf-16", headers: { "content-type": "application/json; charset=utf-16" }, refuse: [CHARSET], body: "utf16" },
  { label: "charset=utf-16le", headers: { "content-type": "application/json; charset=utf-16le" }, refuse: [CHARSET], body: "utf16" },
  { label: "charset=latin1", headers: { "content-type": "application/json; charset=latin1" }, refuse: [CHARSET], body: "latin1" },
  { label: "charset=iso-8859-1", headers: { "content-type": "application/json; charset=iso-8859-1" }, refuse: [CHARSET], body: "latin1" },
  { label: "charset=utf8", headers: { "content-type": "application/json; charset=utf8" }, refuse: [CHARSET] },
  { label: "charset=utf-8;charset=utf-7", headers: { "content-type": "application/json; charset=utf-8; charset=utf-7" }, refuse: [CHARSET], body: "utf7" },
  { label: "charset=utf-7;charset=utf-8", headers: { "content-type": "application/json; charset=utf-7; charset=utf-8" }, refuse: [CHARSET], body: "utf7" },
  { label: "charset=utf-8;Charset=utf-8", headers: { "content-type": "application/json; charset=utf-8; Charset=utf-8" }, refuse: [CHARSET] },
  { label: "text/plain", headers: { "content-type": "text/plain" }, refuse: [MEDIA_TYPE] },
  { label: "text/plain;charset=utf-8", headers: { "content-type": "text/plain; charset=utf-8" }, refuse: [MEDIA_TYPE] },
  { label: "form", headers: { "content-type": "application/x-www-form-urlencoded" }, refuse: [MEDIA_TYPE] },
  { label: "no Content-Type", headers: {}, refuse: [MEDIA_TYPE] },
  { label: "application/json-seq", headers: { "content-type": "application/json-seq" }, refuse: [MEDIA_TYPE] },
  { label: "+json", headers: { "content-type": "application/vnd.api+json" }, refuse: [MEDIA_TYPE] },
  { label: "two Content-Types", headers: { "content-type": ["application/json", "application/json; charset=utf-7"] }, refuse: [MEDIA_TYPE, CHARSET], body: "utf7" },
  { label: "json, text/plain", headers: { "content-type": "application/json, text/plain" }, refuse: [MEDIA_TYPE] },
  { label: "gzip", headers: { "content-type": "application/json", "content-encoding": "gzip" }, refuse: [ENCODING], body: "gzip" },
  { label: "gzip (not compressed)", headers: { "content-type": "application/json", "content-encoding": "gzip" }, refuse: [ENCODING] },
  { label: "deflate", headers: { "content-type": "application/json", "content-encoding": "deflate" }, refuse: [ENCODING], body: "deflate" },
  { label: "br", headers: { "content-type": "application/json", "content-encoding": "br" }, refuse: [ENCODING] },
  { label: "gzip, identity", headers: { "content-type": "application/json", "content-encoding": "identity, gzip" }, refuse: [ENCODING], body: "gzip" },
  { label: "two Content-Encodings", headers: { "content-type": "application/json", "content-encoding": ["identity", "gzip"] }, refuse: [ENCODING], body: "gzip" },
  { label: "gzip and utf-7", headers: { "content-type": "application/json; charset=utf-7", "content-encoding": "gzip" }, refuse: [ENCODING, CHARSET], body: "utf7" },
];

/**
 * The body as a header variant would have a server read it otherwise: under UTF-7, `+AF8-` is
 * `_` and `+AC8-` is `/`, so a body the filter reads with no `_meta` (or an envelope under an
 * unknown key) decodes into one; under latin1 a UTF-8 "é" reads as two characters.
 */
function encodeFor(variant, text) {
  switch (variant.body) {
    case "utf7": return text.replaceAll('"_meta"', '"+AF8-meta"').replaceAll(`"${AI}"`, `"io.modelcontextprotocol+AC8-aiInvocation"`);
    case "utf16": return Buffer.from(`\ufeff${text}`, "utf16le");
    case "latin1": return text.replaceAll("t-1", "t-\u00e9");
    case "gzip": return gzipSync(Buffer.from(text));
    case "deflate": return deflateSync(Buffer.from(text));
    default: return text;
  }
}

/** `count` hostile cases from `seed`. */
export function hostileCases(seed, count) {
  const rng = random(seed);
  const cases = [];
  for (let n = 0; n < count; n++) {
    const labels = [];
    const vendor = rng.chance(0.15);
    const modern = !vendor && rng.chance(0.2);
    const options = vendor
      ? { invocationKeys: [VENDOR_AI], uiKeys: [VENDOR_UI] }
      : rng.pick([undefined, undefined, undefined, { liftLegacy: true }, { policy: { userIntent: "redact" } }, { policy: { unknownFields: "keep" } }]);
    let tree;
    const shape = modern ? "request" : rng.pick(["request", "request", "request", "notification", "batch", "response"]);
    if (shape === "batch") {
      tree = { a: Array.from({ length: 2 + rng.int(3) }, () => message(rng, { vendor, modern, kind: rng.pick(["request", "notification"]) })) };
    } else tree = message(rng, { vendor, modern, kind: shape });
    labels.push(modern ? "2026-07-28 request" : shape);
    const mutations = 1 + rng.int(3);
    for (let m = 0; m < mutations; m++) {
      const name = rng.pick(Object.keys(MUTATIONS).concat(["none", "none"]));
      if (name !== "none") labels.push(MUTATIONS[name](rng, tree));
    }
    const style = { ws: spacer(rng), key: escaper(rng, rng.pick([0, 0, 0.1, 0.5, 1])), string: escaper(rng, rng.pick([0, 0, 0.2, 1])) };
    let body = write(tree, style);
    if (rng.chance(0.15)) {
      const twist = rng.pick(Object.keys(TWISTS));
      body = TWISTS[twist](body, rng);
      labels.push(twist);
    }
    let headers = { ...JSON_TYPE };
    let refuse;
    if (rng.chance(0.35)) {
      const variant = rng.pick(HEADER_VARIANTS);
      headers = { ...variant.headers };
      refuse = variant.refuse;
      if (typeof body === "string") body = encodeFor(variant, body);
      labels.push(`headers ${variant.label}`);
    }
    if (modern) headers["mcp-protocol-version"] = "2026-07-28";
    else if (rng.chance(0.3)) headers["mcp-protocol-version"] = rng.pick(["2025-11-25", "2025-06-18", "2026-07-28"]);
    if (modern && rng.chance(0.5)) Object.assign(headers, { "mcp-method": "tools/call", "mcp-name": "t" });
    cases.push({ name: `hostile #${n}: ${labels.join(", ")}`, body, headers, options, context: {}, refuse, source: "hostile" });
  }
  return cases;
}

/** A tools/call whose `_meta` is written by `meta` (its text), for the targeted cases. */
function call(metaMember, { id = "1", extra = "" } = {}) {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"t","arguments":{"q":"x"}${extra}${metaMember === undefined ? "" : `,${metaMember}`}}}`;
}
const ENVELOPE = `{"${AI}":{"turnId":"t-1","model":{"name":"m"}},"${UI}":{"initiator":"app"}}`;

/**
 * Hand-made cases, one per way a server could read other bytes than the filter did: they run
 * whatever the seed, and name what they try.
 */
export function targetedCases() {
  const utf7 = call(`"+AF8-meta":{"io.modelcontextprotocol+AC8-aiInvocation":{"turnId":"smuggled"},"${UI}":{"initiator":"user"}}`);
  const cases = [
    ["utf-7 decodes +AF8-meta into _meta", utf7, { "content-type": "application/json; charset=utf-7" }, [CHARSET]],
    ["a second charset names utf-7", utf7, { "content-type": "application/json; charset=utf-8; charset=utf-7" }, [CHARSET]],
    ["a quoted UTF-7", utf7, { "content-type": 'application/json; charset="UTF-7"' }, [CHARSET]],
    ["two Content-Type lines, the second utf-7", utf7, { "content-type": ["application/json", "application/json; charset=utf-7"] }, [MEDIA_TYPE, CHARSET]],
    ["utf-16 with a byte order mark", Buffer.from(`\ufeff${call(`"_meta":${ENVELOPE}`)}`, "utf16le"), { "content-type": "application/json; charset=utf-16" }, [CHARSET]],
    ["latin1 reads é as two characters", call(`"_meta":{"${AI}":{"turnId":"t-\u00e9"}}`), { "content-type": "application/json; charset=latin1" }, [CHARSET]],
    ["a gzip body an inflating server reads", gzipSync(Buffer.from(call(`"_meta":${ENVELOPE}`))), { "content-type": "application/json", "content-encoding": "gzip" }, [ENCODING]],
    ["a deflate body", deflateSync(Buffer.from(call(`"_meta":${ENVELOPE}`))), { "content-type": "application/json", "content-encoding": "deflate" }, [ENCODING]],
    ["gzip named but the body plain", call(`"_meta":${ENVELOPE}`), { "content-type": "application/json", "content-encoding": "gzip" }, [ENCODING]],
    ["text/plain with a JSON body", call(`"_meta":${ENVELOPE}`), { "content-type": "text/plain" }, [MEDIA_TYPE]],
    ["a form with a JSON body", call(`"_meta":${ENVELOPE}`), { "content-type": "application/x-www-form-urlencoded" }, [MEDIA_TYPE]],
    ["no Content-Type", call(`"_meta":${ENVELOPE}`), {}, [MEDIA_TYPE]],
    ['charset="UTF-8", quoted', call(`"_meta":${ENVELOPE}`), { "content-type": 'application/json; charset="UTF-8"' }],
    ["Content-Encoding: identity", call(`"_meta":${ENVELOPE}`), { "content-type": "application/json", "content-encoding": "identity" }],
    ["`meta` where `_meta` belongs", call(`"meta":${ENVELOPE}`), JSON_TYPE],
    ["`meta` beside `_meta`", call(`"_meta":{"${AI}":{"turnId":"t-1"}},"meta":${ENVELOPE}`), JSON_TYPE],
    ["__proto__ in _meta holding an envelope", call(`"_meta":{"__proto__":${ENVELOPE}}`), JSON_TYPE],
    ["__proto__ in params holding _meta", call(undefined, { extra: `,"__proto__":{"_meta":${ENVELOPE}}` }), JSON_TYPE],
    ["escaped names: \\u005fmeta and the envelope key", call(`"\\u005fmeta":{"io.modelcontextprotocol\\/ai\\u0049nvocation":{"turnId":"t-1"},"io.modelcontextprotocol\\u002fui":{"initiator":"app"}}`), JSON_TYPE],
    ["a surrogate pair and a lone surrogate in the envelope", call(`"_meta":{"${AI}":{"turnId":"t-\\ud83d\\ude00","userIntent":{"text":"lone \\ud800"}}}`), JSON_TYPE],
    ["tabs, CR and LF between every token", call(`"_meta":${ENVELOPE}`).replace(/([{}[\],:])/g, "\t\r\n$1\r\n\t"), JSON_TYPE],
    ["a fractional id", call(`"_meta":${ENVELOPE}`, { id: "1.5" }), JSON_TYPE],
    ["an integer id written 1.0", call(`"_meta":${ENVELOPE}`, { id: "1.0" }), JSON_TYPE],
    ["a 20-digit id", call(`"_meta":${ENVELOPE}`, { id: "12345678901234567890" }), JSON_TYPE],
    ["a duplicated _meta", call(`"_meta":{"${AI}":{"turnId":"a"}},"_meta":${ENVELOPE}`), JSON_TYPE],
    ["_meta twice, once written \\u005fmeta", call(`"_meta":{"${AI}":{"turnId":"a"}},"\\u005fmeta":${ENVELOPE}`), JSON_TYPE],
    ["the envelope key twice, once with an escaped slash", call(`"_meta":{"${AI}":{"turnId":"a"},"io.modelcontextprotocol\\/aiInvocation":{"turnId":"b"}}`), JSON_TYPE],
    ["a duplicated turnId", call(`"_meta":{"${AI}":{"turnId":"a","turnId":"b"}}`), JSON_TYPE],
    ["a duplicated initiator", call(`"_meta":{"${UI}":{"initiator":"app","initiator":"model"}}`), JSON_TYPE],
    ["a duplicated member inside arguments", call(`"_meta":${ENVELOPE}`).replace('"q":"x"', '"q":"x","q":"y"'), JSON_TYPE],
    ["a byte order mark", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(call(`"_meta":${ENVELOPE}`))]), JSON_TYPE],
    ["nesting 127 deep in arguments", call(`"_meta":${ENVELOPE}`).replace('"q":"x"', `"q":${"[".repeat(124)}1${"]".repeat(124)}`), JSON_TYPE],
    ["nesting 129 deep in arguments", call(`"_meta":${ENVELOPE}`).replace('"q":"x"', `"q":${"[".repeat(126)}1${"]".repeat(126)}`), JSON_TYPE],
    ["1e400 and a 5,000-digit number in arguments", call(`"_meta":${ENVELOPE}`).replace('"q":"x"', `"q":1e400,"r":1${"0".repeat(5000)}`), JSON_TYPE],
    ["a 2026-07-28 request", call(`"_meta":{"${PROTOCOL_VERSION}":"2026-07-28","${CLIENT_INFO}":{"name":"c","version":"1"},"${CLIENT_CAPABILITIES}":{},"${AI}":{"turnId":"t-1"},"${UI}":{"initiator":"app"}}`), { ...JSON_TYPE, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t" }],
  ];
  return cases.map(([name, body, headers, refuse]) => ({ name: `targeted: ${name}`, body, headers, options: undefined, context: {}, refuse, source: "targeted" }));
}
