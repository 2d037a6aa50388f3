"""Provenance for servers on the official ``mcp`` SDK (2.x): one line to adopt.

>>> from mcp.server.mcpserver import MCPServer
>>> from mcp_provenance.mcp import provenance_middleware
>>> records = []
>>> server = MCPServer("inventory", middleware=[provenance_middleware(audit=lambda record, request: records.append(record))])

The middleware sees each message as it came over the wire, ``_meta`` whole,
before the SDK validates it or a handler runs. Every request and notification
is audited (its record handed to ``audit``, sync or async, with the message);
a request whose audit fails is refused with a JSON-RPC error and never served
(a notification, dropped), and the ``mcp_provenance`` logger says so; every
result carries the request's ``turnId`` in its ``_meta``, and nothing else of
the envelope (AI-11). ``mcp`` 2.x marks its server middleware provisional
(its signature may change in a minor release); ``make test`` runs this one
under the newest 2.x.
"""

from __future__ import annotations

from typing import Any, Optional

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext

from ._audit import Auditor, AuditSink, issued_session_id, request_of
from .types import Policy

__all__ = ["provenance_middleware"]


def provenance_middleware(
    audit: AuditSink, *, policy: Optional[Policy] = None, echo: bool = True
) -> ServerMiddleware[Any]:
    """A server middleware that audits every message before it is served and echoes ``turnId``.

    ``policy`` is how the record makes the envelope safe (keys included),
    checked now; ``echo=False`` leaves results as the handlers make them.

    >>> middleware = provenance_middleware(audit=print, policy={"userIntent": "redact"})
    >>> callable(middleware)
    True
    """
    auditor = Auditor(audit, policy, echo)

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        request = request_of(ctx.method, ctx.request_id, ctx.params)
        # The session the server issued, not the `Mcp-Session-Id` header the request carries.
        session_id = issued_session_id(ctx.session)
        if ctx.request_id is None:
            return await call_next(ctx) if await auditor.kept(request, session_id) else None
        await auditor.admit(request, session_id)
        return auditor.echoed(request, await call_next(ctx))

    return middleware
