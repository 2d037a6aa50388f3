"""The filter on a ContextForge route whose body it reads but whose answer is not JSON-RPC:
one MCP request's params (``POST /protocol/completion/complete`` takes a
``completion/complete``'s params, ``_meta`` and all, and ContextForge sends that ``_meta``
upstream), or one message ContextForge answers in a form of its own (``null``, a receipt).

A params body is wrapped as the request ContextForge makes of it,
``{"jsonrpc":"2.0","id":<n>,"method":<method>,"params":`` body ``}``, and goes through the
package's :class:`~mcp_provenance.asgi.ProvenanceMiddleware` as any message does: filtered,
its account audited before anything goes on, refused when the filter refuses it. ContextForge
then gets the ``params`` member of what the filter forwarded, its very bytes (the span between
the wrapping, never parsed and written again), and answers the client itself: there is no
JSON-RPC answer to echo a ``turnId`` into, nor to read what the request got from (the
exchange's outcome has the status ContextForge answered with, and the request's answer
``unseen``). A body that is not one JSON object is refused (400)
before it is wrapped, so that it cannot close the object and add members of its own. A
refusal is answered as ContextForge answers its errors, ``{"detail": <message>}``, with the
filter's JSON-RPC error beside it, and 400 (500 when it could not audit).

>>> import asyncio, json
>>> from mcp_provenance.asgi import ProvenanceMiddleware
>>> got, records = [], []
>>> async def contextforge(scope, receive, send):  # answers with the params it got
...     got.append((await receive())["body"])
...     await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
...     await send({"type": "http.response.body", "body": b'{"completion":{"values":[]}}'})
>>> app = ParamsFilter(contextforge, lambda inner: ProvenanceMiddleware(
...     inner, policy={"userIntent": "redact"}, audit=lambda account, line: records.append(account)),
...     "completion/complete")
>>> def post(body):
...     sent = []
...     async def receive(): return {"type": "http.request", "body": body}
...     async def send(message): sent.append(message)
...     asyncio.run(app({"type": "http", "method": "POST", "path": "/protocol/completion/complete",
...                      "headers": [(b"content-type", b"application/json")]}, receive, send))
...     return sent[0]["status"], json.loads(sent[1]["body"])

A completion with the host's envelope goes on with its intent redacted, the rest of its bytes
as they came, and its record is kept:

>>> params = (b'{"ref":{"type":"ref/prompt","name":"p"}, "argument":{"name":"a","value":"x"},"_meta":'
...           b'{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"my salary"}}}}')
>>> post(params)
(200, {'completion': {'values': []}})
>>> got[0] == params.replace(b'{"text":"my salary"}', b'{"redacted":true}')
True
>>> records[0]["record"]["method"], records[0]["record"]["clientAsserted"]["userIntentRedacted"]
('completion/complete', True)
>>> records[1]["kind"], records[1]["status"], records[1]["requests"]
('outcome', 200, [{'id': 1, 'answer': 'unseen'}])

A bare intent is refused, and so is a body that would close the params and add members:

>>> status, refusal = post(b'{"ref":{"type":"ref/prompt","name":"p"},"_meta":{"userIntent":{"text":"my salary"}}}')
>>> status, refusal["detail"], refusal["code"], refusal["error"]["code"]
(400, 'a bare _meta.userIntent, which a policy that redacts intents cannot reach', 'bare-user-intent', -32602)
>>> post(b'{"ref":{}},"params":{"_meta":{}}'), len(got), [record["kind"] for record in records]
((400, {'detail': 'the body is not one JSON object', 'code': 'not-one-object'}), 1, ['request', 'outcome', 'request', 'outcome'])
"""

from __future__ import annotations

import itertools
import json
from contextvars import ContextVar
from typing import Any, Callable, List, MutableMapping, Optional, Sequence, Tuple

from ..asgi import App, Receive, Scope, Send

#: An ASGI event.
Message = MutableMapping[str, Any]

#: JSON-RPC's internal error, which the middleware answers when it cannot audit.
INTERNAL_ERROR = -32603

#: An ASGI header list.
Headers = Sequence[Tuple[bytes, bytes]]


class ParamsFilter:
    """``app`` (ContextForge) behind ``middleware(inner)`` (the package's middleware, made
    once, in front of this filter's own ``inner`` app) for a route whose POST body is the
    params of a ``method`` request, or, with ``method`` ``None``, one JSON-RPC message
    answered in a form of the app's own. Any other request goes to ``app`` as it came."""

    def __init__(self, app: App, middleware: Callable[[App], App], method: Optional[str]) -> None:
        self._app = app
        self._filtered = middleware(self._forwarded)
        self._method = method
        # The ids of the requests made of params bodies: each worker's own, for the records.
        self._ids = itertools.count(1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self._app(scope, receive, send)
        if self._method is None:
            exchange = _Exchange(send, b"")
            token = _EXCHANGE.set(exchange)
            try:
                await self._filtered(scope, receive, exchange.intercept)
            finally:
                _EXCHANGE.reset(token)
            return
        request_id = next(self._ids)
        prefix = b'{"jsonrpc":"2.0","id":%d,"method":%s,"params":' % (request_id, json.dumps(self._method).encode())
        exchange = _Exchange(send, prefix)
        token = _EXCHANGE.set(exchange)
        try:
            await self._filtered({**scope, "headers": _with_length(scope["headers"], len(prefix) + 1)},
                                 exchange.wrapped(receive), exchange.intercept)
        finally:
            _EXCHANGE.reset(token)
        if exchange.not_one_object:
            await _respond(send, 400, {"detail": "the body is not one JSON object", "code": "not-one-object"})

    async def _forwarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What the middleware calls with the body the filter forwarded: the app gets it (its
        params, for a params body) and answers the client; the middleware gets the status the
        client got and no message (the app's answer is in a form of its own), which goes no
        further."""
        exchange = _EXCHANGE.get()
        exchange.taken = True
        pieces: List[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            pieces.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(pieces)
        kept = dict(scope)
        if exchange.prefix:
            if not (body.startswith(exchange.prefix) and body.endswith(b"}")):
                # The filter changes no byte of the wrapping: this cannot be, and is not guessed at.
                await _respond(exchange.send, 500, {"detail": "the filtered params could not be read",
                                                    "code": "internal-error"})
                return await _answered(send, 500)
            body = body[len(exchange.prefix):-1]
            kept["headers"] = _with_length(scope["headers"], 0, len(body))
        await self._app(kept, _replay(body, receive), exchange.relayed)
        await _answered(send, exchange.status)


class _Exchange:
    """One request's way through: the client's ``send``, the params wrapping (``prefix``,
    empty for a message), whether the app took the answer over and the status it answered
    with, and the body as it came, held until it is whole to see that it is one JSON object."""

    __slots__ = ("send", "prefix", "taken", "status", "not_one_object", "_held", "_start", "_answer")

    def __init__(self, send: Send, prefix: bytes) -> None:
        self.send = send
        self.prefix = prefix
        self.taken = False
        # Until the app answers: an app that fails before its answer's head has a server's 500 sent.
        self.status = 500
        self.not_one_object = False
        self._held = bytearray()
        self._start: Optional[Message] = None
        self._answer = bytearray()

    def wrapped(self, receive: Receive) -> Receive:
        """The client's body as the middleware reads it: the wrapping's prefix, the body, the
        closing brace; or, when the body is not one JSON object, the client gone."""
        state = 0

        async def wrapped() -> Message:
            nonlocal state
            if state == 0:
                state = 1
                return {"type": "http.request", "body": self.prefix, "more_body": True}
            message = dict(await receive())
            if state == 2 or message["type"] != "http.request":
                return message
            piece: bytes = message.get("body", b"")
            self._held += piece
            if message.get("more_body", False):
                return message
            state = 2
            if not _one_object(bytes(self._held)):
                # Nothing of it is read further, audited or answered by the middleware.
                self.not_one_object = True
                return {"type": "http.disconnect"}
            self._held = bytearray()
            return {"type": "http.request", "body": piece + b"}", "more_body": False}
        return wrapped

    async def relayed(self, message: Message) -> None:
        """The app's ``send``: the client's, the status it answers with noted."""
        if message["type"] == "http.response.start":
            self.status = message.get("status", 200)
        await self.send(message)

    async def intercept(self, message: Message) -> None:
        """The middleware's ``send``: its own answer (a refusal), made a params client's; once
        the app took the answer over (or the body was refused before it), nothing."""
        if self.taken or self.not_one_object:
            return
        if not self.prefix:
            return await self.send(message)
        if message["type"] == "http.response.start":
            self._start = message
            return
        self._answer += message.get("body", b"")
        if message.get("more_body", False) or self._start is None:
            return
        status, document = _refusal(self._start.get("status", 500), bytes(self._answer))
        kept = [(name, value) for name, value in self._start.get("headers", [])
                if name.lower() not in (b"content-length", b"content-type")]
        await _respond(self.send, status, document, kept)


#: The exchange of the request the middleware is filtering, for the app it calls.
_EXCHANGE: ContextVar[_Exchange] = ContextVar("mcp_provenance.contextforge.exchange")


def _one_object(body: bytes) -> bool:
    """Whether ``body`` is one JSON object (UTF-8, nothing but white space around it)."""
    try:
        return isinstance(json.loads(body.decode("utf-8"), parse_constant=_no_constant), dict)
    except (ValueError, RecursionError):
        return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _refusal(status: int, body: bytes) -> Tuple[int, Any]:
    """The middleware's answer to a request it refused, as ContextForge answers an error: its
    JSON-RPC error's message as ``detail``, ``data.code`` as ``code``, the error beside them;
    400, or 500 when the filter could not audit (a refusal of the whole body keeps its own
    status: 413, 415)."""
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict):
        return (status if status >= 400 else 500), {"detail": "the request was refused", "code": "refused"}
    data = error.get("data")
    code = data.get("code") if isinstance(data, dict) else None
    if status < 400:
        status = 500 if error.get("code") == INTERNAL_ERROR else 400
    return status, {"detail": error.get("message"), "code": code, "error": error}


def _with_length(headers: Headers, more: int, length: Optional[int] = None) -> List[Tuple[bytes, bytes]]:
    """``headers`` with the body's length ``length``, or the length they declare and ``more``
    (none when they declare none, or not one that is a number)."""
    declared = [value for name, value in headers if name.lower() == b"content-length"]
    kept = [(name, value) for name, value in headers if name.lower() != b"content-length"]
    if length is None and len(declared) == 1 and declared[0].isdigit():
        length = int(declared[0]) + more
    if length is not None:
        kept.append((b"content-length", b"%d" % length))
    return kept


def _replay(body: bytes, receive: Receive) -> Receive:
    """The app's ``receive``: ``body`` whole, then what the client's brings (its disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return dict(await receive())
        given = True
        return {"type": "http.request", "body": body, "more_body": False}
    return replayed


async def _answered(send: Send, status: int) -> None:
    """The middleware's answer once the app has answered the client, in a form of its own: the
    ``status`` the client got, and no message (none a client reads a JSON-RPC answer from)."""
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _respond(send: Send, status: int, document: Any, headers: Headers = ()) -> None:
    """Answers ``document`` as JSON with ``status``."""
    body = json.dumps(document, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
