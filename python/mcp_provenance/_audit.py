"""What every server middleware of the package does with a request: audit
it before it is served, refuse it when it cannot be audited (and say so in
the server's log), and echo its ``turnId`` (only that, AI-11) in the
result's ``_meta``. The middlewares (:mod:`mcp_provenance.fastmcp`,
:mod:`mcp_provenance.mcp`) only find the request, its session and its
result where their framework keeps them."""

from __future__ import annotations

import copy
import inspect
import logging
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, TypeVar, Union, cast

from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from ._native import audit_record, check_policy, echo_turn_id
from .types import AuditContext, AuditRecord, KeyOptions, Policy

#: Called with each request's audit record and the request as it came,
#: before the request is served; what it raises refuses the request.
AuditSink = Callable[[AuditRecord, Dict[str, Any]], Union[None, Awaitable[None]]]

#: JSON-RPC's internal error: the server could not audit, so it does not serve.
INTERNAL_ERROR = -32603

#: Where a middleware tells the operator of a message it refused because it could not audit it.
LOGGER = logging.getLogger("mcp_provenance")

#: How much of a client's method or request id a log line shows.
LOGGED_CHARS = 64

Result = TypeVar("Result")


class Auditor:
    """Audits and echoes under one policy, checked when it is made."""

    def __init__(self, audit: AuditSink, policy: Optional[Policy], echo: bool) -> None:
        check_policy(policy)
        self._audit = audit
        # The policy checked is the one used, whatever becomes of the caller's dict.
        self._policy = copy.deepcopy(policy)
        self._keys: KeyOptions = {}
        if self._policy is not None and "invocationKey" in self._policy:
            self._keys["invocationKey"] = self._policy["invocationKey"]
        self.echo = echo

    async def admit(self, request: Dict[str, Any], session_id: Optional[str]) -> None:
        """Audits ``request``; raises ``MCPError`` (the request is refused, never served) when it
        cannot be, and logs the failure once, at ERROR, on the ``mcp_provenance`` logger."""
        context: AuditContext = {"receivedAt": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        if session_id is not None:
            context["sessionId"] = session_id
        if self._policy is not None:
            context["policy"] = self._policy
        try:
            kept = self._audit(audit_record(request, context), request)
            if inspect.isawaitable(kept):
                await kept
        except Exception as failure:
            code = getattr(failure, "code", None)
            code = code if isinstance(code, str) else "audit-failed"
            _log_refusal(request, failure, code)
            raise MCPError(code=INTERNAL_ERROR, message="the request could not be audited", data={"code": code}) from failure

    async def kept(self, notification: Dict[str, Any], session_id: Optional[str]) -> bool:
        """Audits a notification; ``False`` when it cannot be audited, and is then not served
        (it has no answer to carry a refusal; the log says it was dropped)."""
        try:
            await self.admit(notification, session_id)
        except MCPError:
            return False
        return True

    def echoed(self, request: Dict[str, Any], result: Result) -> Result:
        """``result`` with the request's ``turnId`` in its ``_meta``, and nothing else of the
        envelope (AI-11), whatever the handler put there.

        A result is the wire's dict (its ``_meta`` key) or a model (its ``meta`` field: the
        SDK's results and FastMCP's tool, prompt and resource results alike). One with no
        ``_meta`` of its own (a list of tools, ``None``), one that echoing would not change,
        and every result when ``echo`` is off are returned as they came."""
        if not self.echo:
            return result
        if isinstance(result, dict):
            meta = self._echoed_meta(request, result.get("_meta"))
            return result if meta is None else cast(Result, {**result, "_meta": meta})
        if isinstance(result, BaseModel) and "meta" in type(result).model_fields:
            meta = self._echoed_meta(request, getattr(result, "meta"))
            return result if meta is None else result.model_copy(update={"meta": meta})
        return result

    def _echoed_meta(self, request: Dict[str, Any], meta: object) -> Optional[Dict[str, Any]]:
        """A result's ``_meta`` with the request's ``turnId`` echoed, and nothing else of the
        envelope; ``None`` when that changes nothing, or ``meta`` is no object to echo into."""
        if meta is not None and not isinstance(meta, Mapping):
            return None
        before = dict(meta or {})
        response = {"jsonrpc": "2.0", "id": request.get("id"), "result": {"_meta": before}}
        after: Dict[str, Any] = echo_turn_id(request, response, self._keys)["result"]["_meta"]
        return None if after == before else after


def request_of(method: str, request_id: Any, params: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The JSON-RPC message a framework took apart, made whole again for the core."""
    request: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        request["id"] = request_id
    if params is not None:
        request["params"] = dict(params)
    return request


def issued_session_id(session: Optional[ServerSession]) -> Optional[str]:
    """The id of the session the server itself established for ``session``'s connection: the
    ``Mcp-Session-Id`` its session manager issued to a stateful Streamable HTTP client.

    ``None`` where the server issued none (stateless HTTP, a 2026-07-28 request, which is a
    connection of its own, stdio, memory), whatever ``Mcp-Session-Id`` a request carries:
    what a client sends is its claim, not something the server witnessed (AI-10). Both SDK
    generations keep the id on the connection behind the session; no public API reaches it."""
    connection = getattr(session, "_connection", None)
    session_id = getattr(connection, "session_id", None)
    return session_id if isinstance(session_id, str) else None


def _log_refusal(message: Dict[str, Any], failure: Exception, code: str) -> None:
    """Tells the operator that ``message`` was refused (or, a notification, dropped) for want of
    an audit: its method and id, the failure's type and ``code``. Never the failure's text or a
    traceback, which can quote the envelope (``userIntent``) the record was made of."""
    method = _loggable(message.get("method"))
    if "id" in message:
        LOGGER.error("request %s (id %s) refused: its audit failed (%s, code %s)",
                     method, _loggable(message["id"]), type(failure).__qualname__, _loggable(code))
    else:
        LOGGER.error("notification %s dropped: its audit failed (%s, code %s)",
                     method, type(failure).__qualname__, _loggable(code))


def _loggable(value: object) -> str:
    """``value`` (a client's method or id, a code) as a short part of one log line: cut to
    ``LOGGED_CHARS``, with a line break, control or bidi character escaped (AI-13)."""
    text = value if isinstance(value, str) else repr(value)
    shown = text[:LOGGED_CHARS]
    if not shown.isprintable():
        shown = shown.encode("unicode_escape").decode("ascii")
    return shown + ("…" if len(text) > LOGGED_CHARS else "")
