"""The way back of :mod:`mcp_provenance.asgi`: an app's answer to a body the
filter forwarded, on its way to the client. Only ``turnId`` is echoed into
each result (AI-11) and the filter's replies (to the refused messages of a
batch) join the answer, as the prototype gateway's ``withReplies`` and
``answerFrom`` do: a JSON answer (one message or a batch) is held up to a
bound, an event stream passes one event at a time. What cannot be read is
never passed on as it came: each request still waiting gets an error of the
middleware's own instead.

>>> joined(b' [{"jsonrpc":"2.0","id":1,"result":{}}]', [b'{"jsonrpc":"2.0","id":2,"error":{}}'])
b'[{"jsonrpc":"2.0","id":2,"error":{}},{"jsonrpc":"2.0","id":1,"result":{}}]'
"""

from __future__ import annotations

import json
import re
from typing import Any, Awaitable, Callable, Iterable, List, MutableMapping, Optional, Sequence, Tuple

from ._native import Filter
from .types import Forward

#: An ASGI event (``http.response.start``, ``http.request``...).
AsgiMessage = MutableMapping[str, Any]
#: How an ASGI app hands its answer to the server.
Send = Callable[[AsgiMessage], Awaitable[None]]
#: A header list as ASGI has it.
Headers = Iterable[Tuple[bytes, bytes]]

#: JSON-RPC's internal error: what the middleware answers for a request it could not see through.
INTERNAL_ERROR = -32603

#: A body that is a batch: its first byte past JSON whitespace is `[`.
_BATCH = re.compile(rb"[ \t\r\n]*\[")
#: JSON's whitespace, as much as there is (RFC 8259).
_WHITESPACE = re.compile(rb"[ \t\r\n]*")
#: The start of what can be a JSON-RPC answer: an object or a batch, past whitespace.
_ANSWER = re.compile(rb"[ \t\r\n]*[\[{]")
#: The end of an event: a line's end and an empty line, a CRLF taken whole (the WHATWG
#: event-stream format ends lines with CRLF, LF or CR).
_EVENT_END = re.compile(rb"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r)")

#: What an answer is doing: passed as it comes, held whole (JSON), read event by event, or over.
_PASS, _JSON, _EVENTS, _OVER = range(4)


def error_text(request_id: str, message: str, code: str) -> bytes:
    """The middleware's own error for the request whose id (JSON text, as the client sent
    it) is ``request_id``: code -32603, ``data.code`` saying why.

    >>> error_text("12345678901234567890", "the request could not be audited", "audit-failed")
    b'{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32603,"message":"the request could not be audited","data":{"code":"audit-failed"}}}'
    """
    error = {"code": INTERNAL_ERROR, "message": message, "data": {"code": code}}
    return b'{"jsonrpc":"2.0","id":%s,"error":%s}' % (request_id.encode(), json.dumps(error, separators=(",", ":")).encode())


def composed(parts: Sequence[bytes], batch: bool) -> bytes:
    """JSON-RPC messages (texts) as one answer: a batch when the request was one, or when
    there are several.

    >>> composed([b'{"id":1}'], batch=False), composed([b'{"id":1}'], batch=True)
    (b'{"id":1}', b'[{"id":1}]')
    """
    return b"[" + b",".join(parts) + b"]" if batch or len(parts) != 1 else parts[0]


def awaiting(outcome: Forward) -> List[str]:
    """The ids (JSON texts, as sent) of the requests that went on to the app."""
    return [request_id for account, request_id in zip(outcome["messages"], outcome["ids"])
            if account["kind"] == "request" and "refused" not in account and request_id is not None]


def is_batch(body: bytes) -> bool:
    """Whether the request ``body`` is a batch, which is answered with one.

    >>> is_batch(b' [{"id":1}]'), is_batch(b'{"id":1}')
    (True, False)
    """
    return _BATCH.match(body) is not None


def joined(answer: bytes, replies: Sequence[bytes]) -> bytes:
    """An answer that is a JSON object or array with ``replies`` first: an array whose first
    items are the replies, the answer's own bytes after them as they came."""
    first = _past_whitespace(answer, 0)
    if answer[first:first + 1] == b"{":
        return b"[" + b",".join(replies) + b"," + answer[first:] + b"]"
    item = _past_whitespace(answer, first + 1)
    comma = b"" if answer[item:item + 1] == b"]" else b","
    return b"[" + b",".join(replies) + comma + answer[item:]


async def respond(send: Send, status: int, body: bytes, headers: Headers = ()) -> None:
    """Answers with ``status`` and ``body`` (JSON, unless empty), and ``headers`` besides."""
    typed = [(b"content-type", b"application/json")] if body else []
    length = [(b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *typed, *length]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def header(headers: Headers, name: bytes) -> Optional[bytes]:
    """The value of the header ``name`` (lowercase), if it was sent once; ``None`` if it was
    not, or was sent more than once (which of two would a reader believe?)."""
    found = None
    for key, value in headers:
        if key.lower() == name:
            if found is not None:
                return None
            found = value
    return found


def _named(headers: Headers, name: bytes) -> bool:
    """Whether the header ``name`` (lowercase) was sent at all."""
    return any(key.lower() == name for key, _ in headers)


class Answer:
    """Stands for the client's ``send`` while an app answers a body the filter forwarded.

    ``request`` is the body as it came and ``forwarded`` what the filter made of it; from them,
    only when it must, it makes the errors that stand for an answer that cannot be read or is
    past ``limit`` bytes (a JSON answer's whole body, an event's), one for each request that
    went on. ``started`` is told of the app's ``http.response.start`` as it came. Once it has
    answered so, what the app still sends is dropped."""

    # Made for every POST: slots are set and read faster than a dict's members.
    __slots__ = ("_send", "_started_hook", "_filter", "_forwarded", "_request", "_echo", "_limit",
                 "_replies", "_mode", "_start", "_held", "_scanned")

    def __init__(self, send: Send, filter: Filter, forwarded: Forward, request: bytes, echo: bool,
                 limit: int, started: Callable[[AsgiMessage], None]) -> None:
        self._send = send
        self._started_hook = started
        self._filter = filter
        self._forwarded = forwarded
        self._request = request
        self._echo = echo
        self._limit = limit
        self._replies = [reply.encode() for reply in forwarded["replies"]]
        self._mode = _PASS
        self._start: AsgiMessage = {}
        # What is held: a JSON answer so far, or the part of an event stream past its last whole event.
        self._held = bytearray()
        # Where in `_held` an event's end may begin, as far as it was looked for.
        self._scanned = 0

    async def __call__(self, message: AsgiMessage) -> None:
        if self._mode == _OVER:
            return
        if message["type"] == "http.response.start":
            await self._started(message)
        elif message["type"] == "http.response.body" and self._mode == _JSON:
            await self._json(message)
        elif message["type"] == "http.response.body" and self._mode == _EVENTS:
            await self._events(message)
        else:
            await self._send(message)

    async def _started(self, start: AsgiMessage) -> None:
        self._started_hook(start)
        headers = list(start.get("headers", []))
        named = header(headers, b"content-type")
        media = (named or b"").split(b";")[0].strip().lower()
        if named is None and (self._echo or self._replies) and _named(headers, b"content-type"):
            # Named twice: which would the client believe? It is not passed on unchecked.
            self._start = {**start, "headers": headers}
            await self._instead("the server's answer names its media type twice", "answer-not-json")
        elif media == b"text/event-stream" and (self._echo or self._replies):
            # Events may change length: the stream has none.
            await self._send({**start, "headers": _without(headers, (b"content-length",))})
            if self._replies:
                await self._send({"type": "http.response.body", "more_body": True,
                                  "body": b"".join(_event(reply) for reply in self._replies)})
            self._mode = _EVENTS if self._echo else _PASS
        elif self._replies or (self._echo and media == b"application/json"):
            # Its length, and with replies its status, are known once it is whole.
            self._start = {**start, "headers": headers}
            self._mode = _JSON
        else:
            await self._send(start)

    async def _json(self, message: AsgiMessage) -> None:
        more = message.get("more_body", False)
        if not more and not self._held:
            # Most answers come in one piece: it is read as it came, not copied.
            body = message.get("body", b"")
            return await (self._answered(body) if len(body) <= self._limit else self._too_large())
        self._held += message.get("body", b"")
        if len(self._held) > self._limit:
            await self._too_large()
        elif not more:
            whole = bytes(self._held)
            self._held = bytearray()
            await self._answered(whole)

    async def _too_large(self) -> None:
        self._held = bytearray()
        await self._instead(f"the server's answer is larger than {self._limit} bytes", "answer-too-large")

    async def _answered(self, body: bytes) -> None:
        """Passes on a JSON answer, whole: echoed, the replies joined."""
        self._mode = _OVER
        answer = self._echoed(body)
        if answer is None and _past_whitespace(body, 0) == len(body):
            # No answer (202): the replies, if any, are the answer.
            if self._replies:
                await self._own(200, composed(self._replies, batch=True))
            else:
                await self._send(self._start)
                await self._send({"type": "http.response.body", "body": body, "more_body": False})
        elif answer is None:
            await self._instead("the server's answer is not JSON-RPC", "answer-not-json")
        elif self._replies:
            await self._own(200, joined(answer, self._replies))
        else:
            headers = _without(self._start["headers"], (b"content-length",))
            headers.append((b"content-length", b"%d" % len(answer)))
            await self._send({**self._start, "headers": headers})
            await self._send({"type": "http.response.body", "body": answer, "more_body": False})

    async def _events(self, message: AsgiMessage) -> None:
        more = message.get("more_body", False)
        piece: bytes = message.get("body", b"")
        # A piece with nothing held before it (most of them) is read as it came, not copied.
        text = bytes(self._held) + piece if self._held else piece
        out: List[bytes] = []
        read = 0
        while True:
            end = _EVENT_END.search(text, max(read, self._scanned))
            # A CR at the very end may be the first half of a CRLF.
            if end is None or (more and end.end() == len(text) and text.endswith(b"\r")):
                break
            event = self._event(text[read:end.start()])
            if event is None:
                return await self._stream_failed(b"".join(out), "an event of the server's answer is not JSON-RPC", "answer-not-json")
            out += (event, text[end.start():end.end()])
            read = end.end()
        self._held = bytearray(text[read:])
        self._scanned = max(0, len(self._held) - 3)
        if len(self._held) > self._limit:
            return await self._stream_failed(b"".join(out), f"an event of the server's answer is larger than {self._limit} bytes", "answer-too-large")
        if out or not more:
            # A last event the stream did not end is dropped, as a client would drop it.
            await self._send({"type": "http.response.body", "body": b"".join(out), "more_body": more})
        if not more:
            self._mode = _OVER

    def _event(self, event: bytes) -> Optional[bytes]:
        """One event (its lines, without the empty line that ends it) with its data echoed; as
        it came when echoing changes nothing; ``None`` when its data is not JSON-RPC."""
        # Its fields in one pass: those before its first data line, its data (each line's value:
        # what follows the colon, one space after it dropped), and the others after it.
        before: List[bytes] = []
        values: List[bytes] = []
        after: List[bytes] = []
        for line in event.splitlines():
            if line == b"data" or line.startswith(b"data:"):
                value = line[5:]
                values.append(value[1:] if value.startswith(b" ") else value)
            else:
                (after if values else before).append(line)
        if not any(values):
            # No data: a comment, a retry, the event that primes a resumable stream.
            return event
        data = b"\n".join(values)
        answer = self._echoed(data)
        if answer is None:
            return None
        if answer is data:
            return event
        return b"\n".join([*before, *(b"data: " + part for part in answer.split(b"\n")), *after])

    def _echoed(self, answer: bytes) -> Optional[bytes]:
        """``answer`` with only ``turnId`` echoed into its results (the very object when that
        changes nothing, or echo is off); ``None`` when it is not JSON-RPC."""
        if not _ANSWER.match(answer):
            return None
        # What echoing leaves as it came includes the answer's first bytes.
        echoed = self._filter.echo(answer, self._forwarded) if self._echo else answer
        return echoed if isinstance(echoed, bytes) else None

    def _failures(self, message: str, code: str) -> List[bytes]:
        return [error_text(request_id, message, code) for request_id in awaiting(self._forwarded)]

    async def _instead(self, message: str, code: str) -> None:
        """Answers, in place of a JSON answer that cannot be passed on, the replies and an
        error for each request that went on; 502 when there is nothing to say."""
        parts = [*self._replies, *self._failures(message, code)]
        if parts:
            await self._own(200, composed(parts, is_batch(self._request)))
        else:
            await respond(self._send, 502, b"")
        self._mode = _OVER

    async def _own(self, status: int, body: bytes) -> None:
        """Answers ``body`` (JSON) with ``status`` and the app's headers but those of its body."""
        kept = _without(self._start["headers"], (b"content-length", b"content-type", b"content-encoding"))
        await respond(self._send, status, body, kept)

    async def _stream_failed(self, out: bytes, message: str, code: str) -> None:
        """Ends an event stream that cannot go on: after the events already read, an error for
        each request that went on."""
        errors = b"".join(_event(error) for error in self._failures(message, code))
        await self._send({"type": "http.response.body", "body": out + errors, "more_body": False})
        self._held = bytearray()
        self._mode = _OVER


def _past_whitespace(text: bytes, at: int) -> int:
    """Where the first byte past JSON whitespace from ``at`` is (``len(text)`` when none)."""
    found = _WHITESPACE.match(text, at)
    return found.end() if found is not None else at


def _without(headers: Headers, names: Sequence[bytes]) -> List[Tuple[bytes, bytes]]:
    return [(key, value) for key, value in headers if key.lower() not in names]


def _event(message: bytes) -> bytes:
    """A JSON-RPC message (compact JSON, one line) as an event of its own."""
    return b"event: message\ndata: " + message + b"\n\n"

