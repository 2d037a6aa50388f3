// What a gateway engineer would write instead of this package: validate,
// sanitize and stampInitiator by hand in plain JS, under the default keys
// and policy, giving the very outputs of the package (bench/compare.mjs
// checks it against every conformance vector of those three operations
// without options before it times anything). Written to be fast, as a
// careful engineer would write it: no schema library, one pass per string.

const KEY = "io.modelcontextprotocol/aiInvocation";
const UI = "io.modelcontextprotocol/ui";
const FIELDS = ["invocationReason", "model", "userIntent", "turnId"];
const INTENT_MEMBERS = ["text", "redacted"];
const INITIATORS = new Set(["app", "model", "user", "host"]);
const LIMITS = { reason: 1024, intent: 2048, model: 256, turnId: 128 };
const REQUIRED = [["invocationReason", "text", "AI-3", LIMITS.reason], ["model", "name", "AI-4", LIMITS.model]];
// AI-13: line breaks become a space, every other control or bidi control U+FFFD;
// TXT-1: invisible characters that carry no meaning become U+FFFD too.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
const INVISIBLE = /[\u200b\u2060-\u2064\ufeff\u180e\u{e0000}-\u{e007f}]/u;
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\u200b\u2060-\u2064\ufeff\u180e\u{e0000}-\u{e007f}]/u;
const LINE_BREAK = /[\r\n\t\u000b\u000c\u0085\u2028\u2029]/;
/** MSG-2: a report lists this many diagnostics, sanitize this many changes, then one saying so. */
const LISTED = 64;
const ELLIPSIS = "\u2026";

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A shallow copy that stays fast when a member is added (in V8, `{...o}`
 * followed by a new key takes ~50 times longer), and keeps an own
 * `__proto__` member (from JSON.parse) data, never the prototype.
 */
function copy(object, extra, value) {
  let out;
  if (Object.hasOwn(object, "__proto__")) {
    out = {};
    for (const key of Object.keys(object)) Object.defineProperty(out, key, { value: object[key], writable: true, enumerable: true, configurable: true });
  } else {
    out = Object.assign({}, object);
  }
  if (extra !== undefined) out[extra] = value;
  return out;
}
const own = (o, k) => (Object.hasOwn(o, k) ? o[k] : undefined);

function typeName(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  switch (typeof v) {
    case "boolean": return "a boolean";
    case "number": return "a number";
    case "string": return "a string";
    default: return "an object";
  }
}

/** One code point as AI-13 and TXT-1 leave it. */
function neutral(c) {
  if (!FORBIDDEN.test(c)) return c;
  return LINE_BREAK.test(c) ? " " : "\ufffd";
}

const utf8 = (c) => { const n = c.codePointAt(0); return n < 0x80 ? 1 : n < 0x800 ? 2 : n < 0x10000 ? 3 : 4; };

/** Whether a string is surely within `max` bytes and holds nothing AI-13 replaces: one regex test. */
const isPlain = (text, max) => text.length * 3 <= max && !FORBIDDEN.test(text) && text.isWellFormed();

/**
 * MSG-3, AI-13, TXT-1 and AI-14 for one string: a lone surrogate reads as
 * U+FFFD (lossy), then what is kept is neutralized and cut to `max` bytes.
 */
function clean(text, max) {
  if (isPlain(text, max)) return { text, lossy: false, neutralized: false, invisible: false, truncated: false };
  const lossy = !text.isWellFormed();
  const read = lossy ? text.toWellFormed() : text;
  const budget = max - 3;
  let kept = "";
  let bytes = 0;
  let fit = { length: 0, neutralized: false, invisible: false };
  let neutralized = false;
  let invisible = false;
  for (const c of read) {
    const n = neutral(c);
    if (bytes + utf8(n) > max) {
      return { text: kept.slice(0, fit.length) + ELLIPSIS, lossy, neutralized: fit.neutralized, invisible: fit.invisible, truncated: true };
    }
    kept += n;
    bytes += utf8(n);
    if (n !== c) {
      if (INVISIBLE.test(c)) invisible = true;
      else neutralized = true;
    }
    if (bytes <= budget) fit = { length: kept.length, neutralized, invisible };
  }
  return { text: kept, lossy, neutralized, invisible, truncated: false };
}

/** An RFC 6901 pointer segment, made safe as the package makes it. */
const segment = (name) => clean(name, 128).text.replaceAll("~", "~0").replaceAll("/", "~1");
const join = (path, name) => `${path}/${segment(name)}`;
/** Members outside `known`, sorted; no allocation when there are none. */
function sortedUnknown(object, known) {
  let found;
  for (const k in object) if (Object.hasOwn(object, k) && !known.includes(k) && object[k] !== undefined) (found ??= []).push(k);
  return found === undefined ? NONE : found.sort();
}
const NONE = [];

const diagnostic = (code, severity, rule, path, message) => ({ code, severity, rule, path, message });
const invalidType = (what, expected, value, rule, path) =>
  diagnostic("invalid-type", "error", rule, path, `${what} must be ${expected}, not ${typeName(value)}`);
const UNKNOWN = "a field SEP-2817 does not define; the default policy drops it";

// Every pointer a clean message could need, built once: only unknown member
// names are joined per call, and only when a diagnostic names them.
const ENVELOPE = join("/params/_meta", KEY);
const UI_PATH = join("/params/_meta", UI);
const AT = Object.fromEntries(["invocationReason", "model", "userIntent", "turnId"].map((f) => [f, `${ENVELOPE}/${f}`]));

function checkEnvelope(envelope, out) {
  if (!isObject(envelope)) return out.push(invalidType("the invocation envelope", "an object", envelope, "AI-2", ENVELOPE));
  for (const [field, member, rule, limit] of REQUIRED) {
    const value = own(envelope, field);
    if (value === undefined) continue;
    if (!isObject(value)) { out.push(invalidType(`\`${field}\``, "an object", value, rule, AT[field])); continue; }
    const text = own(value, member);
    if (text === undefined) out.push(diagnostic("missing-field", "error", rule, `${AT[field]}/${member}`, `\`${field}\` must have a string \`${member}\``));
    else if (typeof text !== "string") out.push(invalidType(`\`${field}.${member}\``, "a string", text, rule, `${AT[field]}/${member}`));
    for (const name of sortedUnknown(value, [member])) out.push(diagnostic("unknown-field", "warning", "AI-8", join(AT[field], name), UNKNOWN));
  }
  const intent = own(envelope, "userIntent");
  if (intent !== undefined) {
    if (!isObject(intent)) out.push(invalidType("`userIntent`", "an object", intent, "AI-5", AT.userIntent));
    else {
      const { text, redacted } = intent;
      if (text !== undefined && typeof text !== "string") out.push(invalidType("`userIntent.text`", "a string", text, "AI-5", `${AT.userIntent}/text`));
      if (redacted !== undefined && typeof redacted !== "boolean") out.push(invalidType("`userIntent.redacted`", "a boolean", redacted, "AI-5", `${AT.userIntent}/redacted`));
      for (const name of sortedUnknown(intent, INTENT_MEMBERS)) out.push(diagnostic("unknown-field", "warning", "AI-8", join(AT.userIntent, name), UNKNOWN));
    }
  }
  const turnId = own(envelope, "turnId");
  if (turnId !== undefined && typeof turnId !== "string") out.push(invalidType("`turnId`", "a string", turnId, "AI-7", AT.turnId));
  for (const name of sortedUnknown(envelope, FIELDS)) out.push(diagnostic("unknown-field", "warning", "AI-8", join(ENVELOPE, name), UNKNOWN));
  // What sanitize would change under the default policy (AI-13, AI-14), in its order.
  for (const [field, member, , limit] of REQUIRED) {
    const value = own(envelope, field);
    if (isObject(value) && typeof own(value, member) === "string") warnText(value[member], limit, `${AT[field]}/${member}`, out);
  }
  if (isObject(intent) && typeof intent.text === "string") warnText(intent.text, LIMITS.intent, `${AT.userIntent}/text`, out);
  if (typeof turnId === "string") warnText(turnId, LIMITS.turnId, AT.turnId, out);
}

function warnText(text, limit, path, out) {
  if (isPlain(text, limit)) return;
  const c = clean(text, limit);
  if (c.lossy) out.push(diagnostic("lone-surrogate", "warning", "MSG-3", path, "holds a lone UTF-16 surrogate, which no JSON store can keep; it reads, and sanitize writes it, as U+FFFD"));
  if (c.neutralized) out.push(diagnostic("control-character", "warning", "AI-13", path, "holds line breaks, control or bidi characters that could forge or disguise log lines; sanitize replaces them"));
  if (c.invisible) out.push(diagnostic("invisible-character", "warning", "TXT-1", path, "holds invisible characters (tag or zero-width characters) that could hide text from a reader; sanitize replaces them"));
  if (c.truncated) out.push(diagnostic("over-limit", "warning", "AI-14", path, "is over its default byte limit; sanitize truncates it"));
}

/** The envelope made safe under the default policy, and what changed. */
function sanitizeEnvelope(envelope) {
  const path = ENVELOPE;
  const changes = [];
  const change = (action, at, rule) => changes.push({ action, path: at, rule });
  if (!isObject(envelope)) { change("dropped", path, "AI-2"); return { clean: undefined, changes }; }
  const text = (value, limit, at) => {
    const c = clean(value, limit);
    if (c.lossy) change("neutralized", at, "MSG-3");
    if (c.neutralized) change("neutralized", at, "AI-13");
    if (c.invisible) change("neutralized", at, "TXT-1");
    if (c.truncated) change("truncated", at, "AI-14");
    return c.text;
  };
  const out = {};
  for (const [field, member, rule, limit] of REQUIRED) {
    const value = own(envelope, field);
    if (value === undefined) continue;
    const at = AT[field];
    if (!isObject(value) || typeof own(value, member) !== "string") { change("dropped", at, rule); continue; }
    out[field] = { [member]: text(value[member], limit, `${at}/${member}`) };
    for (const name of sortedUnknown(value, [member])) change("dropped", join(at, name), "AI-8");
  }
  const intent = own(envelope, "userIntent");
  if (intent !== undefined) {
    const at = AT.userIntent;
    if (!isObject(intent)) change("dropped", at, "AI-5");
    else {
      const kept = {};
      let touched = false;
      if (typeof intent.text === "string") {
        kept.text = text(intent.text, LIMITS.intent, `${at}/text`);
        touched = kept.text !== intent.text;
      } else if (intent.text !== undefined) { change("dropped", `${at}/text`, "AI-5"); touched = true; }
      if (typeof intent.redacted === "boolean") kept.redacted = intent.redacted;
      else if (intent.redacted !== undefined) change("dropped", `${at}/redacted`, "AI-5");
      if (touched) kept.redacted = true;
      for (const name of sortedUnknown(intent, INTENT_MEMBERS)) change("dropped", join(at, name), "AI-8");
      out.userIntent = kept;
    }
  }
  const turnId = own(envelope, "turnId");
  if (typeof turnId === "string") out.turnId = text(turnId, LIMITS.turnId, AT.turnId);
  else if (turnId !== undefined) change("dropped", AT.turnId, "AI-7");
  for (const name of sortedUnknown(envelope, FIELDS)) change("dropped", join(path, name), "AI-8");
  // Under the default field limits the envelope always fits its 8192 bytes
  // (at most 3456 bytes of text, doubled by escaping), so no fitting step.
  if (changes.length > LISTED) changes.splice(LISTED, Infinity, { action: "omitted", path: "", rule: "MSG-2" });
  return { clean: out, changes };
}

function checkRequest(message, out) {
  const params = own(message, "params");
  if (params === undefined) return;
  if (!isObject(params)) return out.push(diagnostic("invalid-type", "error", "MSG-1", "/params", `\`/params\` must be an object, not ${typeName(params)}`));
  const meta = own(params, "_meta");
  if (meta === undefined) return;
  if (!isObject(meta)) return out.push(diagnostic("invalid-type", "error", "MSG-1", "/params/_meta", `\`/params/_meta\` must be an object, not ${typeName(meta)}`));
  const envelope = own(meta, KEY);
  if (envelope !== undefined) checkEnvelope(envelope, out);
  for (const name of FIELDS) {
    if (own(meta, name) !== undefined) {
      out.push(diagnostic("bare-key", "warning", "AI-9", join("/params/_meta", name),
        `a bare \`_meta.${name}\` is not SEP-2817's convention; put \`${name}\` inside the envelope`));
    }
  }
  checkUi(own(meta, UI), out);
  checkCorrelation(meta, envelope, out);
}

function checkUi(ui, out) {
  if (ui === undefined) return;
  const path = UI_PATH;
  if (!isObject(ui)) return out.push(invalidType("the ui entry", "an object", ui, "UI-7", path));
  const initiator = own(ui, "initiator");
  if (initiator === undefined || INITIATORS.has(initiator)) return;
  if (typeof initiator === "string") out.push(diagnostic("unknown-initiator", "warning", "UI-7", join(path, "initiator"), 'initiator is not one of "app", "model", "user", "host"'));
  else out.push(invalidType("`initiator`", "a string", initiator, "UI-7", join(path, "initiator")));
}

// Correlation ids (COR-2..COR-5): the known `_meta` keys, [key, member, kind].
const SOURCES = [
  ["vscode.conversationId", undefined, "conversation"], ["vscode.requestId", undefined, "request"],
  ["openai/session", undefined, "conversation"], ["openai/subject", undefined, "user"], ["openai/organization", undefined, "organization"],
  ["x-codex-turn-metadata", "session_id", "conversation"], ["x-codex-turn-metadata", "turn_id", "turn"],
];
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(.*)$/s;
const ALL_ZEROS = /^0+$/;
const corWarning = (code, rule, path, message) => diagnostic(code, "warning", rule, path, message);
const bytes = (text) => { let n = 0; for (const c of text) n += utf8(c); return n; };
const neutralized = (text) => (FORBIDDEN.test(text) ? Array.from(text, neutral).join("") : text);

function checkCorrelation(meta, envelope, out) {
  const ids = [];
  // The envelope's turnId, neutralized only when another turn id is there to compare.
  const turnId = isObject(envelope) ? own(envelope, "turnId") : undefined;
  const keep = (kind, value, path) => {
    const differs = (kind === "turn" && typeof turnId === "string" && neutralized(turnId) !== value)
      || ids.some(([k, v]) => k === kind && v !== value);
    if (differs) {
      out.push(corWarning("correlation-conflict", "COR-5", path, `a \`${kind}\` id that differs from another source's; both are kept, each with its source`));
    }
    ids.push([kind, value]);
  };
  const traceparent = own(meta, "traceparent");
  if (traceparent !== undefined) {
    const path = "/params/_meta/traceparent";
    const [, version, trace, parent, flags, rest] = (typeof traceparent === "string" && TRACEPARENT.exec(traceparent)) || [];
    const versioned = version === "00" ? rest === "" : version !== "ff" && (rest === "" || rest?.[0] === "-");
    if (version !== undefined && versioned && !ALL_ZEROS.test(trace) && !ALL_ZEROS.test(parent)) {
      keep("trace", trace, path);
      keep("parentSpan", parent, path);
      keep("traceFlags", flags, path);
    } else {
      out.push(corWarning("invalid-traceparent", "COR-4", path, "`traceparent` is not W3C Trace Context (version-traceid-parentid-flags in lower-case hex, neither id all zeros); it is ignored"));
    }
  }
  for (const [key, member, kind] of SOURCES) {
    const value = own(meta, key);
    if (value === undefined) continue;
    const at = join("/params/_meta", key);
    if (member === undefined) checkId(value, kind, at, keep, out);
    else if (isObject(value)) checkId(own(value, member), kind, join(at, member), keep, out);
    else if (!out.some((d) => d.path === at)) {
      out.push(corWarning("invalid-correlation", "COR-3", at, `an entry holding correlation ids must be an object, not ${typeName(value)}; none is kept`));
    }
  }
}

function checkId(value, kind, path, keep, out) {
  if (value === undefined) return;
  if (typeof value !== "string" || value === "") {
    const what = value === "" ? "an empty string" : typeName(value);
    return out.push(corWarning("invalid-correlation", "COR-3", path, `a correlation id must be a non-empty string, not ${what}; it is not kept`));
  }
  if (!value.isWellFormed()) {
    return out.push(corWarning("lone-surrogate", "COR-3", path, "a correlation id holds a lone UTF-16 surrogate, which reads as U+FFFD and so names no one id; it is not kept"));
  }
  // 85 UTF-16 units are at most 255 bytes: only a longer id is counted.
  if (value.length > 85 && bytes(value) > 256) return out.push(corWarning("over-limit", "COR-3", path, "a correlation id must be at most 256 bytes long; it is not kept"));
  if (CONTROL.test(value)) out.push(corWarning("control-character", "COR-3", path, "a correlation id holds line breaks, control or bidi characters; it is kept with them replaced"));
  else if (INVISIBLE.test(value)) out.push(corWarning("invisible-character", "COR-3", path, "a correlation id holds invisible characters; it is kept with them replaced"));
  keep(kind, neutralized(value), path);
}

function checkResponse(message, out) {
  const result = own(message, "result");
  if (result === undefined) return;
  if (!isObject(result)) return out.push(diagnostic("invalid-type", "error", "MSG-1", "/result", `\`/result\` must be an object, not ${typeName(result)}`));
  const meta = own(result, "_meta");
  if (meta === undefined) return;
  if (!isObject(meta)) return out.push(diagnostic("invalid-type", "error", "MSG-1", "/result/_meta", `\`/result/_meta\` must be an object, not ${typeName(meta)}`));
  const envelope = own(meta, KEY);
  if (envelope === undefined) return;
  const path = join("/result/_meta", KEY);
  if (!isObject(envelope)) return out.push(invalidType("the echoed envelope", "an object", envelope, "AI-11", path));
  const leaked = [...FIELDS.filter((f) => f !== "turnId" && own(envelope, f) !== undefined), ...sortedUnknown(envelope, FIELDS)];
  for (const name of leaked) {
    out.push(diagnostic("echo-leak", "warning", "AI-11", join(path, name), "a response should echo only turnId, never the request's other audit context"));
  }
  const turnId = own(envelope, "turnId");
  if (turnId !== undefined && typeof turnId !== "string") out.push(invalidType("`turnId`", "a string", turnId, "AI-7", join(path, "turnId")));
}

/** validate(message): the package's report, under the default keys. */
export function validate(message) {
  const out = [];
  if (isObject(message) && typeof message.method === "string") checkRequest(message, out);
  else if (isObject(message) && message.method !== undefined) out.push(diagnostic("invalid-type", "error", "MSG-1", "/method", "`method` must be a string"));
  else if (isObject(message) && (message.result !== undefined || message.error !== undefined)) checkResponse(message, out);
  else {
    const found = isObject(message) ? "an object with neither" : typeName(message);
    out.push(diagnostic("not-a-message", "error", "MSG-1", "", `expected a JSON-RPC message: an object with a string \`method\`, or with \`result\` or \`error\`; found ${found}`));
  }
  const valid = out.every((d) => d.severity !== "error");
  if (out.length > LISTED) {
    const left = out.splice(LISTED);
    const severity = left.some((d) => d.severity === "error") ? "error" : "warning";
    out.push(diagnostic("too-many-diagnostics", severity, "MSG-2", "", `${left.length} more diagnostics were found; a report lists the first ${LISTED}`));
  }
  return { valid, diagnostics: out };
}

/** sanitize(message): the package's `{message, changes}`, under the default policy. */
export function sanitize(message) {
  if (!isObject(message) || (typeof message.method !== "string" && message.result === undefined && message.error === undefined)) {
    throw Object.assign(new TypeError("expected a JSON-RPC message object"), { code: "not-a-message" });
  }
  const params = typeof message.method === "string" ? own(message, "params") : undefined;
  const meta = isObject(params) ? own(params, "_meta") : undefined;
  const envelope = isObject(meta) ? own(meta, KEY) : undefined;
  if (envelope === undefined) return { message: copy(message), changes: [] };
  const { clean: safe, changes } = sanitizeEnvelope(envelope);
  if (changes.length === 0) return { message: copy(message), changes };
  const newMeta = copy(meta, KEY, safe);
  if (safe === undefined) delete newMeta[KEY];
  return { message: copy(message, "params", copy(params, "_meta", newMeta)), changes };
}

/** stampInitiator(request): `initiator: "app"` in the `ui` entry, copied along the path. */
export function stampInitiator(request) {
  if (!isObject(request) || typeof request.method !== "string") {
    throw Object.assign(new TypeError("expected a JSON-RPC request"), { code: "not-a-request" });
  }
  const params = request.params ?? {};
  const meta = isObject(params) ? params._meta ?? {} : undefined;
  if (!isObject(params) || !isObject(meta)) throw Object.assign(new TypeError("params and _meta must be objects"), { code: "invalid-type" });
  const ui = meta[UI];
  const entry = isObject(ui) ? copy(ui, "initiator", "app") : { initiator: "app" };
  return copy(request, "params", copy(params, "_meta", copy(meta, UI, entry)));
}
