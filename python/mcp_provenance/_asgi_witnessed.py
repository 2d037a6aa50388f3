"""What :mod:`mcp_provenance.asgi` records as witnessed, the server's own
knowledge and never a client's word (AI-10): the sessions the app issued,
and the identity the stack authenticated."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, MutableMapping, Optional

from ._asgi_answer import AsgiMessage, Send, header

#: An ASGI connection's scope.
Scope = MutableMapping[str, Any]


def authenticated_user(scope: Scope) -> Optional[str]:
    """The identity the stack authenticated (``scope["user"]``, as Starlette's
    ``AuthenticationMiddleware`` and the ``mcp`` SDK's and FastMCP's bearer authentication
    set it: the token's client id), when it did; never anything a client's header says.

    >>> from starlette.authentication import SimpleUser, UnauthenticatedUser
    >>> authenticated_user({"user": SimpleUser("alice")}), authenticated_user({"user": UnauthenticatedUser()})
    ('alice', None)
    """
    user = scope.get("user")
    if user is None or getattr(user, "is_authenticated", False) is not True:
        return None
    try:
        identity = user.identity
    except NotImplementedError:  # Starlette's `BaseUser` leaves it to subclasses
        identity = getattr(user, "display_name", None)
    return identity if isinstance(identity, str) and identity else None


class Sessions:
    """The session ids the app issued, as the ``Mcp-Session-Id`` of its successful answers
    named them, the one named longest ago first (the prototype gateway's ``learnSessions``).
    A request's session is witnessed only when it is one of these (AI-10)."""

    def __init__(self, limit: int) -> None:
        self._issued: OrderedDict[str, None] = OrderedDict()
        self._limit = limit

    def witnessed(self, asked: Optional[bytes]) -> Optional[str]:
        """The session ``asked`` names (a request's ``Mcp-Session-Id``), if the app issued it."""
        named = asked.decode("latin-1") if asked is not None else None
        return named if named is not None and named in self._issued else None

    def watching(self, method: str, asked: Optional[bytes], send: Send) -> Send:
        """``send``, learning from the app's answer what it says of sessions."""
        async def watched(message: AsgiMessage) -> None:
            if message["type"] == "http.response.start":
                self.answered(method, asked, message)
            await send(message)
        return watched

    def answered(self, method: str, asked: Optional[bytes], start: AsgiMessage) -> None:
        """Learns from the app's answer (its ``http.response.start``) to a request in session
        ``asked``: the session it names was issued, and one it ended (a DELETE it accepted) is
        forgotten. Nothing else forgets one: a 404 may come of any path or method, and would let
        anyone who knows a session id strip it from its owner's records."""
        status: int = start["status"]
        if asked is not None and method == "DELETE" and 200 <= status < 300:
            self._issued.pop(asked.decode("latin-1"), None)
            return
        named = header(start.get("headers", []), b"mcp-session-id")
        if named is None or status >= 400:
            return
        issued = named.decode("latin-1")
        self._issued.pop(issued, None)  # named again: the last to forget
        self._issued[issued] = None
        if len(self._issued) > self._limit:
            self._issued.popitem(last=False)
