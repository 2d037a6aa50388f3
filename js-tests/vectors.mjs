// The conformance vectors, run through any build of the package: the same
// function serves Node (ESM and CJS) and the browser.

/** A filter's outcome in the vectors' shape: each message's account, its line less the message (which `forward` holds exactly), and each line as text. */
function filtered(out) {
  const messages = out.accounts.map((account) => JSON.parse(account));
  const { lines } = out;
  return "reject" in out ? { reject: out.reject, status: out.status, messages, lines } : { forward: out.forward, replies: out.replies, messages, lines };
}

/** `answer` echoed after `filter` forwarded `body`, in the vectors' shape: `null` where the echo could not read it. */
function echoed(filter, body, answer) {
  return { answer: filter.echo(answer, filter(body)) ?? null };
}

// A byte-order mark stays, as the native runner keeps it.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** `headers` (`[name, value]` pairs) with a step's head's edits made: each removed header's every value gone, each set one last. */
function edited(headers, edits) {
  for (const [name, value] of edits) {
    headers = headers.filter(([key]) => key.toLowerCase() !== name);
    if (value !== undefined) headers.push([name, value]);
  }
  return headers;
}

/** An answer of the middleware's own, in the vectors' shape, with why it answered. */
const own = ({ status, headers, body }, exchange) => ({ status, headers, body, refused: exchange.refused ?? null });

/**
 * One exchange of an `exchange` vector through `gateway`, as a middleware
 * runs it (tests/conformance.rs `exchange`; the answer's last piece given
 * with its end, when `finish`): what the app was handed, and what the
 * client got; with its outcome account, parsed from its line, when the
 * vector gives the outcome's `ms`, `pid` and `host` (a middleware with an
 * audit sink keeps it). Each message's account goes to `accounts`: its
 * record made as the body is admitted, or, when `finish`, deferred and made
 * when read, once the answer is over.
 */
function exchanged(gateway, given, finish, accounts) {
  const exchange = gateway.begin(given.method ?? "POST", given.path ?? "/mcp", (given.headers ?? []).flat());
  // The records made as the body is admitted, or deferred and made when read, after the answer.
  if (finish) exchange.deferRecords();
  const worker = given.outcome;
  if (worker !== undefined) exchange.keepOutcome();
  const filtered = [];
  const out = through(exchange, given, finish, filtered);
  for (const outcome of filtered) accounts.push(...outcome.accounts);
  return worker === undefined ? out : { ...out, outcome: JSON.parse(exchange.outcome(worker.ms, worker.pid, worker.host)) };
}

/** What the app was handed, and what the client got, through `exchange`; the filter's outcome to `filtered`. */
function through(exchange, given, finish, filtered) {
  const out = {};
  if (exchange.start === "read") {
    if (exchange.declaredTooLarge) return own(exchange.tooLarge(), exchange);
    const outcome = exchange.admit(given.body);
    filtered.push(outcome);
    if ("reject" in outcome) return own(exchange.rejected(), exchange);
    if (given.auditFails !== undefined) return own(exchange.auditFailed(given.auditFails), exchange);
    out.forwarded = outcome.forward;
  } else {
    out.forwarded = exchange.start === "watch";
  }
  const { answer } = given;
  let headers = answer.headers ?? [];
  let status = answer.status ?? 200;
  const body = [];
  /** Makes a step's head and pieces the client's; whether the answer is over. */
  const apply = (step) => {
    if (step.head !== undefined) {
      status = step.head.status;
      headers = edited(headers, step.head.edits);
    }
    body.push(...step.pieces);
    return step.over;
  };
  const pieces = (answer.pieces ?? []).map((piece) => new TextEncoder().encode(piece));
  if (exchange.start === "pass") {
    body.push(...pieces);
  } else {
    let over = apply(exchange.head(status, headers.flat()));
    const last = finish && pieces.length > 0 ? pieces.length - 1 : -1;
    pieces.forEach((piece, at) => {
      if (!over) over = apply(at === last ? exchange.finish(piece) : exchange.piece(piece));
    });
    if (!over && last < 0) apply(exchange.end());
  }
  const bytes = new Uint8Array(body.reduce((size, piece) => size + piece.length, 0));
  body.reduce((at, piece) => (bytes.set(piece, at), at + piece.length), 0);
  return { ...out, status, headers, body: decoder.decode(bytes), refused: exchange.refused ?? null, session: exchange.session ?? null };
}

/** Calls the API (the main entry and mcp-provenance/gateway) as the vector says and returns the output in the vectors' shape. */
export function runVector(api, vector) {
  const { op, input, options } = vector;
  try {
    switch (op) {
      case "validate": return api.validate(input, options);
      case "sanitize": return api.sanitize(input, options);
      case "attachInvocation": return api.attachInvocation(input, vector.invocation, options);
      case "stampInitiator": return api.stampInitiator(input, vector.initiator, options);
      case "clearInitiator": return api.clearInitiator(input, options);
      case "echoTurnId": return api.echoTurnId(vector.request, input, options);
      case "auditRecord": return api.auditRecord(input, options);
      case "liftLegacyArguments": return api.liftLegacyArguments(input, options);
      case "isValidMetaKey": return api.isValidMetaKey(input);
      case "isReservedMetaKey": return api.isReservedMetaKey(input);
      case "filter": return filtered(api.createFilter(options)(input, vector.context));
      case "filterEcho": return echoed(api.createFilter(options), input, vector.answer);
      case "exchange": {
        // Each way a middleware ends an answer, through a gateway of its own, the records made as
        // the body is admitted or deferred: they agree.
        const [[pieces, made], [finished, deferred]] = [false, true].map((finish) => {
          const gateway = api.createGateway(options);
          const accounts = [];
          return [input.map((given) => exchanged(gateway, given, finish, accounts)), accounts];
        });
        if (JSON.stringify(made) !== JSON.stringify(deferred)) return { "records made": made, deferred };
        return JSON.stringify(pieces) === JSON.stringify(finished) ? pieces : { "pieces then end": pieces, finish: finished };
      }
      default: throw new Error(`unknown op ${op} in vector ${vector.id}`);
    }
  } catch (error) {
    if (typeof error?.code !== "string") throw error;
    return { error: { code: error.code, name: error.name } };
  }
}
