"""What every server middleware of the package does with a request: audit
it before it is served, refuse it when it cannot be audited, and echo its
``turnId`` (only that, AI-11) in the result's ``_meta``. The middlewares
(:mod:`mcp_provenance.fastmcp`, :mod:`mcp_provenance.mcp`) only find the
request where their framework keeps it."""

from __future__ import annotations

import copy
import inspect
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, Mapping, Optional, Union

from mcp.shared.exceptions import MCPError

from ._native import audit_record, check_policy, echo_turn_id
from .types import AuditContext, AuditRecord, KeyOptions, Policy

#: Called with each request's audit record and the request as it came,
#: before the request is served; what it raises refuses the request.
AuditSink = Callable[[AuditRecord, Dict[str, Any]], Union[None, Awaitable[None]]]

#: JSON-RPC's internal error: the server could not audit, so it does not serve.
INTERNAL_ERROR = -32603


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
        """Audits ``request``; raises ``MCPError`` (the request is refused, never served) when it cannot be."""
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
            raise MCPError(
                code=INTERNAL_ERROR,
                message="the request could not be audited",
                data={"code": code if isinstance(code, str) else "audit-failed"},
            ) from failure

    async def kept(self, notification: Dict[str, Any], session_id: Optional[str]) -> bool:
        """Audits a notification; ``False`` when it cannot be audited, and is then not served
        (it has no answer to carry a refusal)."""
        try:
            await self.admit(notification, session_id)
        except MCPError:
            return False
        return True

    def echoed(self, request: Dict[str, Any], meta: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
        """A result's ``_meta`` with the request's ``turnId`` echoed, and nothing else of the
        envelope; ``None`` when that changes nothing (a result is then left as it was)."""
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
