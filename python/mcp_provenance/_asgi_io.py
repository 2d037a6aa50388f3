"""What :mod:`mcp_provenance.asgi` does with ASGI itself, the exchange's
decisions aside: ASGI's types, the path the app routes a request by, the
request's body read up to a bound, and the ``receive`` the app reads the
filtered body from.

>>> route_path({"path": "/api/mcp/x", "root_path": "/api"}), route_path({"path": "/mcp", "root_path": ""})
('/mcp/x', '/mcp')
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Callable, List, MutableMapping, Optional, Sequence, Tuple

#: An ASGI event (``http.response.start``, ``http.request``...).
AsgiMessage = MutableMapping[str, Any]
#: An ASGI connection's scope.
Scope = MutableMapping[str, Any]
#: How an ASGI app reads the request.
Receive = Callable[[], Awaitable[AsgiMessage]]
#: How an ASGI app hands its answer to the server.
Send = Callable[[AsgiMessage], Awaitable[None]]

#: What the app never gets of a request's headers: how the body came (it gets it whole, its
#: length made right) and what answers the client takes (the middleware reads the answer).
_NOT_KEPT = frozenset((b"content-length", b"transfer-encoding", b"accept-encoding"))


class Gone(Exception):
    """The client left before its body came whole."""


def route_path(scope: Scope) -> str:
    """The path the app routes ``scope`` by, as Starlette's ``get_route_path`` has it: without
    the ``root_path`` a server (``uvicorn --root-path``) or a ``Mount`` put before it."""
    path: str = scope["path"]
    root: str = scope.get("root_path") or ""
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root):] if path[len(root)] == "/" else path


#: The second the witnessed time was last written for, and its text up to the millisecond.
_clock: Tuple[int, str] = (0, "")


def received_at() -> str:
    """Now, as a record's ``receivedAt`` has it: UTC, to the millisecond."""
    global _clock
    second, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    if second != _clock[0]:
        _clock = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    return "%s%03dZ" % (_clock[1], nanoseconds // 1_000_000)


async def read_body(receive: Receive, limit: int) -> Optional[bytes]:
    """The request's body; ``None`` once it is past ``limit`` bytes, nothing more read. Raises
    :class:`Gone` when the client left."""
    pieces: List[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Gone
        piece: bytes = message.get("body", b"")
        size += len(piece)
        if size > limit:
            return None
        pieces.append(piece)
        if not message.get("more_body", False):
            # Most bodies come in one piece: it is kept, not copied.
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def forwarded(scope: Scope, body: bytes, receive: Receive) -> Tuple[Scope, Receive]:
    """The scope and ``receive`` the app gets: ``body`` (what the filter forwarded), whole, with
    its length and without ``Accept-Encoding``; then what the client's ``receive`` brings."""
    headers: Sequence[Tuple[bytes, bytes]] = scope["headers"]
    kept = [pair for pair in headers if pair[0].lower() not in _NOT_KEPT]
    kept.append((b"content-length", b"%d" % len(body)))
    given = False

    async def replayed() -> AsgiMessage:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}
    return {**scope, "headers": kept}, replayed


async def respond(send: Send, answer: Tuple[int, List[Tuple[bytes, bytes]], bytes]) -> None:
    """Sends one of the middleware's own answers, ``(status, headers, body)`` as the core makes it."""
    status, headers, body = answer
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
