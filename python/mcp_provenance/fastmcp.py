"""Provenance for FastMCP servers (``fastmcp`` 4.x): one line to adopt.

>>> from fastmcp import FastMCP
>>> from mcp_provenance.fastmcp import ProvenanceMiddleware
>>> records = []
>>> server = FastMCP("inventory")
>>> server.add_middleware(ProvenanceMiddleware(audit=lambda record, request: records.append(record)))

Every request and notification is audited before it is served (its record
handed to ``audit``, sync or async, with the message as it came); a request
whose audit fails (the record cannot be made, or ``audit`` raises) is refused
with a JSON-RPC error and never served (a notification, dropped); a tool's result carries the request's
``turnId`` in its ``_meta``, and nothing else of the envelope (AI-11).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import mcp_types as mt
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult

from ._audit import Auditor, AuditSink, request_of
from .types import Policy

__all__ = ["ProvenanceMiddleware"]

#: The first protocol version without sessions (versions are dates, and sort as text).
PER_REQUEST = "2026-07-28"


class ProvenanceMiddleware(Middleware):
    """Audits every request before it is served and echoes ``turnId`` on tool results.

    ``policy`` is how the record makes the envelope safe (keys included),
    checked now; ``echo=False`` leaves results as the tools make them.

    >>> ProvenanceMiddleware(audit=print, policy={"userIntent": "redact"}).echo
    True
    """

    def __init__(self, audit: AuditSink, *, policy: Optional[Policy] = None, echo: bool = True) -> None:
        self._auditor = Auditor(audit, policy, echo)

    @property
    def echo(self) -> bool:
        """Whether tool results carry the request's ``turnId``."""
        return self._auditor.echo

    async def on_request(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        await self._auditor.admit(_request(context), _session_id(context))
        return await call_next(context)

    async def on_notification(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        if await self._auditor.kept(_request(context), _session_id(context)):
            return await call_next(context)
        return None

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        result = await call_next(context)
        if not self.echo:
            return result
        meta = self._auditor.echoed(_request(context), result.meta)
        return result if meta is None else result.model_copy(update={"meta": meta})


def _request(context: MiddlewareContext[Any]) -> Dict[str, Any]:
    """The request as it came: FastMCP keeps its `_meta` and id apart from the params it rebuilds."""
    raw = context.fastmcp_context.request_context if context.fastmcp_context is not None else None
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
    """The session's id, when there is one: from 2026-07-28 each request is a connection of its
    own, for which FastMCP makes up an id that names no session, and none is recorded."""
    server_context = context.fastmcp_context
    raw = server_context.request_context if server_context is not None else None
    if server_context is None or raw is None or raw.protocol_version >= PER_REQUEST:
        return None
    try:
        return server_context.session_id
    except RuntimeError:
        return None
