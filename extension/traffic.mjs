// What the MCP panel makes of the page's network traffic: the JSON-RPC
// messages an HTTP exchange carried (the request's body; the response's,
// JSON or a `text/event-stream` of them), each checked by the package.
// Nothing here touches the DOM or the DevTools API, so a test can feed it
// exchanges of its own.

/** The session header of Streamable HTTP. */
const SESSION = "mcp-session-id";

/** A header's value among HAR headers (`[{name, value}]`), any case. */
function header(headers = [], name) {
  return headers.find((h) => h.name.toLowerCase() === name)?.value;
}

/** Whether `value` is a JSON-RPC message: an object with a string `method`, or with `result` or `error`. */
function isMessage(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    && (typeof value.method === "string" || "result" in value || "error" in value);
}

/**
 * The JSON-RPC messages of a JSON text (one, a batch, or none when it is
 * not JSON-RPC), each `{ message, unit }`: `unit` is the text they came in,
 * shared by a batch's messages, so that an export writes what came, its
 * numbers and escapes as they were, never JSON.stringify's reading of it.
 */
function parse(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  return messagesIn(text, value);
}

/** `parse` of a text already read as `value`. */
export function messagesIn(text, value) {
  const all = Array.isArray(value) ? value : [value];
  const unit = { text };
  return all.every(isMessage) ? all.map((message) => ({ message, unit })) : [];
}

/** A line ending of an event stream: CRLF (one ending, not two), LF, or CR alone. */
const LINE_END = /\r\n|\r|\n/;

/**
 * The data of each event of a `text/event-stream` body, as the WHATWG
 * event-stream grammar reads it (and the MCP SDK's parser, and EventSource):
 * lines ended by CRLF, LF or CR alone, an optional byte order mark first; a
 * `data` field's values joined with LF; comments (`:` first) and other fields
 * ignored; an event ended by an empty line, so that one the stream never ended
 * is none. The body is read whole: no line ending can be split across chunks.
 */
function eventData(text) {
  const lines = text.replace(/^\uFEFF/, "").split(LINE_END);
  lines.pop(); // what follows the last line ending: no line, as it was never ended
  const events = [];
  let data = [];
  for (const line of lines) {
    if (line === "") {
      if (data.length > 0) events.push(data.join("\n"));
      data = [];
    } else if (!line.startsWith(":")) {
      const [name, value] = field(line);
      if (name === "data") data.push(value);
    }
  }
  return events;
}

/** A stream's line as a field: its name, and its value (after the colon, one space dropped; none without a colon). */
function field(line) {
  const colon = line.indexOf(":");
  if (colon === -1) return [line, ""];
  return [line.slice(0, colon), line.slice(colon + (line[colon + 1] === " " ? 2 : 1))];
}

/**
 * The messages of one HTTP exchange (a HAR entry, and its response body):
 * `{ direction, message, unit, session, url, started }` each, requests
 * first. An exchange that carried no JSON-RPC is none of the panel's business.
 */
export function messagesOf(entry, responseBody = "") {
  const { request, response = {} } = entry;
  if (request?.method !== "POST" || typeof request.postData?.text !== "string") return [];
  const sent = parse(request.postData.text);
  if (sent.length === 0) return [];
  const type = response.content?.mimeType ?? header(response.headers, "content-type") ?? "";
  const received = type.includes("text/event-stream") ? eventData(responseBody).flatMap(parse) : type.includes("json") ? parse(responseBody) : [];
  const session = header(request.headers, SESSION) ?? header(response.headers, SESSION);
  const base = { session, url: request.url, started: entry.startedDateTime };
  return [
    ...sent.map((item) => ({ ...base, ...item, direction: "request" })),
    ...received.map((item) => ({ ...base, ...item, direction: "response" })),
  ];
}

/**
 * A capture of `units`, one a line, as `mcp-provenance check` reads it: each
 * text as it came, its line breaks (JSON whitespace: none can stand inside a
 * JSON string) made spaces.
 */
export function capture(units) {
  return units.map((unit) => `${unit.text.replace(/[\r\n]+/g, " ")}\n`);
}

/**
 * What the package says of a message: `validate`'s report and, for a
 * request, its audit record and what `sanitize` would change. A function
 * that throws is shown by its code, never as if the message were clean.
 */
export function check(api, message) {
  const report = api.validate(message);
  if (typeof message?.method !== "string") return { report };
  const attempt = (run) => {
    try {
      return run();
    } catch (error) {
      return { error: `${error.name} ${error.code}` };
    }
  };
  return {
    report,
    record: attempt(() => api.auditRecord(message)),
    sanitized: attempt(() => api.sanitize(message)),
  };
}

/** The initiator a Host stamps on a View's call, over whatever the View claimed (UI-1, UI-3). */
const HOST_STAMP = "app";

/**
 * Why a request's initiator needs a look, or undefined: only a Host attests
 * who initiated a call, and it stamps "app" on a View's (UI-1, UI-3) and
 * nothing on the model's (UI-2, UI-4); any other value is a claim that did
 * not come from a stamp.
 */
export function claimWarning(record) {
  const initiator = record?.hostAttested?.initiator;
  if (initiator === undefined || initiator === HOST_STAMP) return undefined;
  return `initiator "${initiator}" is a claim only a Host can attest, and a Host stamps "${HOST_STAMP}" (UI-1, UI-3): a View's claim went out unstamped, or the model's call carries one`;
}

/** The turn a request belongs to: the first turn id among its correlation ids (COR-1), or none. */
export function turnOf(record) {
  return record?.clientAsserted?.correlation?.find((id) => id.kind === "turn")?.value;
}
