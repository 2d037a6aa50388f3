"""What :mod:`mcp_provenance.asgi` records as witnessed besides the sessions the
core remembers: the identity the stack authenticated, never a client's word (AI-10)."""

from __future__ import annotations

from typing import Optional

from ._asgi_io import Scope


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
