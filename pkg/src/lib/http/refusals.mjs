// The HTTP middleware's own JSON-RPC answers: what it says in the app's
// stead when a body cannot be read, audited or answered. The words and codes
// are those of the Python middleware (mcp_provenance.asgi), so that a client
// meets one set whichever stack serves it. Ids are named as the client sent
// them: the filter's JSON texts (a 20-digit id stays exact).

/** JSON-RPC's "invalid request": a body the middleware will not read. */
export const INVALID_REQUEST = -32600;
/** JSON-RPC's "internal error": the server could not do what the request needed. */
export const INTERNAL_ERROR = -32603;

/**
 * One JSON-RPC error (JSON text) for the request whose id is `id` (its JSON
 * text, or `"null"`), `why` its `data.code`: for id `12345678901234567890`,
 * `{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32603,...}}`.
 */
export function errorText(id, code, message, why) {
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code, message, data: { code: why } })}}`;
}

/** JSON-RPC messages (texts) as one answer: a batch when the request was one, or when there are several. */
export const composed = (parts, batch) => (batch || parts.length !== 1 ? `[${parts.join(",")}]` : parts[0]);

/** The answer to a body past `limit` bytes, as the prototype gateway has always given it. */
export const tooLarge = (limit) => errorText("null", INVALID_REQUEST, `the body is larger than ${limit} bytes`, "body-too-large");

/** The error for a request whose body's accounts `audit` could not keep (`why`: its code). */
export const notAudited = (id, why) => errorText(id, INTERNAL_ERROR, "the request could not be audited", why);

/** The answer to a body something read before the middleware could: nothing it could check goes on. */
export const alreadyRead = () => errorText("null", INTERNAL_ERROR,
  "the body was read before the provenance middleware: mount it before any body parser", "body-already-read");

/** The answer when the middleware itself failed (a `principal` function that threw, say). */
export const failed = () => errorText("null", INTERNAL_ERROR, "the provenance middleware failed", "middleware-failed");
