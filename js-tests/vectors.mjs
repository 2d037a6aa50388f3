// The conformance vectors, run through any build of the package: the same
// function serves Node (ESM and CJS) and, later, the browser.

/** A filter's outcome in the vectors' shape: each message's account, its line less the message (which `forward` holds exactly). */
function filtered(out) {
  const messages = out.accounts.map((account) => JSON.parse(account));
  return "reject" in out ? { reject: out.reject, status: out.status, messages } : { forward: out.forward, replies: out.replies, messages };
}

/** `answer` echoed after `filter` forwarded `body`, in the vectors' shape: `null` where the echo could not read it. */
function echoed(filter, body, answer) {
  return { answer: filter.echo(answer, filter(body)) ?? null };
}

/**
 * The ops of the core the package does not bind yet: the middleware's
 * exchange (src/wire/exchange.rs), whose vectors run natively until the
 * http middleware is moved onto it. A vector of one is left out here, and
 * the suites say how many.
 */
export const UNBOUND_OPS = new Set(["exchange"]);

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
      default: throw new Error(`unknown op ${op} in vector ${vector.id}`);
    }
  } catch (error) {
    if (typeof error?.code !== "string") throw error;
    return { error: { code: error.code, name: error.name } };
  }
}
