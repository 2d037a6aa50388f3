"""Provenance for FastMCP servers (``fastmcp`` 4.x): one line to adopt.

>>> from fastmcp import FastMCP
>>> from mcp_provenance.fastmcp import ProvenanceMiddleware
>>> records = []
>>> server = FastMCP("inventory")
>>> server.add_middleware(ProvenanceMiddleware(audit=lambda record, request: records.append(record)))

Every request and notification is audited before it is served (its record
handed to ``audit``, sync or async, with the message as it came); a request
whose audit fails (the record cannot be made, or ``audit`` raises) is refused
with a JSON-RPC error and never served (a notification, dropped), and the
``mcp_provenance`` logger says so; every result (a tool's, a prompt's, a
resource's...) carries the request's ``turnId`` in its ``_meta``, and
nothing else of the envelope (AI-11).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import mcp_types as mt
from fastmcp.server.dependencies import FastMCPRequestContext
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext

from ._audit import Auditor, AuditSink, issued_session_id, request_of
from .types import Policy

__all__ = ["ProvenanceMiddleware"]


class ProvenanceMiddleware(Middleware):
    """Audits every request before it is served and echoes ``turnId`` on its result.

    ``policy`` is how the record makes the envelope safe (keys included),
    checked now; ``echo=False`` leaves results as the handlers make them.

    >>> ProvenanceMiddleware(audit=print, policy={"userIntent": "redact"}).echo
    True
    """

    def __init__(self, audit: AuditSink, *, policy: Optional[Policy] = None, echo: bool = True) -> None:
        self._auditor = Auditor(audit, policy, echo)

    @property
    def echo(self) -> bool:
        """Whether results carry the request's ``turnId``."""
        return self._auditor.echo

    async def on_request(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        # Every request passes here, whatever its method: so does every result the middleware can reach.
        request = _request(context)
        await self._auditor.admit(request, _session_id(context))
        return self._auditor.echoed(request, await call_next(context))

    async def on_notification(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        if await self._auditor.kept(_request(context), _session_id(context)):
            return await call_next(context)
        return None


def _request_context(context: MiddlewareContext[Any]) -> Optional[FastMCPRequestContext]:
    """FastMCP's context of the request being served, when there is one."""
    return context.fastmcp_context.request_context if context.fastmcp_context is not None else None


def _request(context: MiddlewareContext[Any]) -> Dict[str, Any]:
    """The request as it came: FastMCP keeps its `_meta` and id apart from the params it rebuilds."""
    raw = _request_context(context)
    if raw is None:
        return request_of(context.method or "", None, None)
    # The SDK's own context holds the id as it came (FastMCP's is a `str`).
    sdk = getattr(raw, "_srctx", None)
    request_id = getattr(sdk, "request_id", raw.request_id)
    params: Dict[str, Any] = {}
    if isinstance(context.message, mt.CallToolRequestParams):
        params["name"] = context.message.name
        if context.message.arguments is not None:
            params["arguments"] = context.message.arguments
    if raw.meta is not None:
        params["_meta"] = raw.meta
    return request_of(context.method or "", request_id, params)


def _session_id(context: MiddlewareContext[Any]) -> Optional[str]:
    """The id of the session the server issued, when it issued one; never FastMCP's
    ``Context.session_id``, which is the client's ``Mcp-Session-Id`` header on stateless HTTP."""
    raw = _request_context(context)
    return issued_session_id(raw.session if raw is not None else None)
