"""The way in of :mod:`mcp_provenance.asgi`: what the middleware reads of a
POST (its headers, its body, up to a bound) and what the app reads instead:
the body the filter returned, whole, with its length.

>>> request = Request([(b"content-type", b"application/json"), (b"accept-encoding", b"gzip"),
...                    (b"content-length", b"2"), (b"mcp-session-id", b"s-1")])
>>> request.content, request.declared, request.session
({'content-type': ['application/json'], 'content-length': ['2']}, b'2', b's-1')
>>> request.kept
[(b'content-type', b'application/json'), (b'mcp-session-id', b's-1')]
>>> Request([(b"mcp-session-id", b"s-1"), (b"mcp-session-id", b"s-2")]).session is None
True
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable, Dict, List, Optional, Sequence, Tuple

from ._asgi_answer import AsgiMessage

#: How an ASGI app reads the request.
Receive = Callable[[], Awaitable[AsgiMessage]]


#: What the app never gets of a request's headers, its length aside: how the body came (it
#: gets it whole) and what answers the client takes (the middleware reads the answer).
_NOT_KEPT = frozenset((b"transfer-encoding", b"accept-encoding"))


class Gone(Exception):
    """The client left before its body came whole."""


class Request:
    """A POST's headers, read in one pass (every POST pays for each pass over a dozen): the
    ones that say how its body is encoded (``Content-*``, RFC 9110), for the filter; its
    declared length and session; and what the app gets of them, its body's length aside, and
    no ``Accept-Encoding`` (the middleware reads the answer). ASGI gives names in lowercase."""

    __slots__ = ("content", "kept", "declared", "session")

    def __init__(self, headers: Sequence[Tuple[bytes, bytes]]) -> None:
        # Filled in locals, read faster than attributes in a loop that runs for every header.
        content: Dict[str, List[str]] = {}
        kept: List[Tuple[bytes, bytes]] = []
        declared: Optional[bytes] = None
        sessions: List[bytes] = []
        for pair in headers:
            name = pair[0]
            if name.startswith(b"content-"):
                content.setdefault(name.decode("latin-1"), []).append(pair[1].decode("latin-1"))
                if name == b"content-length":
                    declared = pair[1]
                    continue
            elif name == b"mcp-session-id":
                sessions.append(pair[1])
            elif name in _NOT_KEPT:
                continue
            kept.append(pair)
        self.content = content
        self.kept = kept
        self.declared = declared
        # Sent twice, which one would the app believe? Neither is witnessed.
        self.session = sessions[0] if len(sessions) == 1 else None


#: The second the witnessed time was last written for, and its text up to the millisecond: a
#: second's text is written once.
_clock: Tuple[int, str] = (0, "")


def received_at() -> str:
    """Now, as a record's ``receivedAt`` has it: UTC, to the millisecond."""
    global _clock
    second, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    if second != _clock[0]:
        _clock = (second, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second)))
    return "%s%03dZ" % (_clock[1], nanoseconds // 1_000_000)


async def read_body(declared: Optional[bytes], receive: Receive, limit: int) -> Optional[bytes]:
    """The request's body; ``None`` once it is past ``limit`` bytes (by its ``Content-Length`` or
    as it comes), nothing more read. Raises :class:`Gone` when the client left."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
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


def replay(body: bytes, receive: Receive) -> Receive:
    """The app's ``receive``: the filtered body, whole, then what the client's brings (its
    disconnect)."""
    given = False

    async def replayed() -> AsgiMessage:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}
    return replayed
