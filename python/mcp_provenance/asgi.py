"""Provenance in front of any ASGI app that serves MCP over HTTP (FastMCP's
``http_app()``, the ``mcp`` SDK's Streamable HTTP app, Starlette, ContextForge):
the package's :class:`~mcp_provenance.Filter` on every request body before
the app reads it, in one line and with nothing to install but this package.

>>> import asyncio
>>> from mcp_provenance.asgi import ProvenanceMiddleware
>>> async def server(scope, receive, send):  # any MCP app: this one answers every request with {}
...     request = (await receive())["body"]
...     answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'
...     await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
...     await send({"type": "http.response.body", "body": answer})
>>> records = []
>>> app = ProvenanceMiddleware(server, policy={"userIntent": "redact"},
...                            audit=lambda account, line: records.append(account["record"]))

Served (``uvicorn module:app``), a call with the SEP-2817 envelope reaches
the app with its intent redacted, and its result carries the ``turnId`` back:

>>> call = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":'
...         b'{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"my salary"}}}}}')
>>> sent = []
>>> async def receive(): return {"type": "http.request", "body": call}
>>> async def send(message): sent.append(message)
>>> asyncio.run(app({"type": "http", "method": "POST", "path": "/mcp",
...                  "headers": [(b"content-type", b"application/json")]}, receive, send))
>>> records[0]["clientAsserted"]
{'turnId': 't-1', 'userIntentRedacted': True, 'correlation': [{'kind': 'turn', 'value': 't-1', 'key': 'io.modelcontextprotocol/aiInvocation', 'member': 'turnId'}]}
>>> sent[1]["body"]
b'{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1"}}}}'
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from typing import Awaitable, Callable, Optional, Sequence, Union

from ._asgi_answer import Answer, Send, awaiting, composed, error_text, header, is_batch, respond
from ._asgi_request import Gone, Receive, Request, read_body, received_at, replay
from ._asgi_witnessed import Scope, Sessions, authenticated_user
from ._native import Filter
from .errors import ProvenanceTypeError, ProvenanceValueError
from .types import FilterContext, FilterOptions, MessageAccount, Outcome, Policy

__all__ = ["AccountSink", "App", "ProvenanceMiddleware", "Receive", "Scope", "Send", "authenticated_user"]

#: An ASGI app.
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Called with each message's account (its kind, id, record, changes, why it was refused)
#: and its log line (one line of JSON: the account and the message as forwarded), before
#: the app sees the body; what it raises refuses the body.
AccountSink = Callable[[MessageAccount, str], Union[None, Awaitable[None]]]

#: How many bytes of a request body are read, unless told otherwise (as the prototype gateway).
MAX_BODY_BYTES = 1 << 20
#: How many bytes of a JSON answer, or of one event of a stream, are held to echo into.
MAX_ANSWER_BYTES = 16 << 20
#: How many session ids the middleware remembers; past it, it forgets the one named longest ago.
MAX_SESSIONS = 10_000

#: Where the middleware tells the operator of a body it refused because it could not audit it.
LOGGER = logging.getLogger("mcp_provenance")


class ProvenanceMiddleware:
    """Runs the filter on each POST body to an MCP path before ``app`` reads it, and echoes
    only ``turnId`` into each result on the way back (AI-11).

    ``paths`` are the MCP endpoints (``"/mcp"``; ``*`` stands for one path segment, as in
    ``"/servers/*/mcp"``; a trailing slash is the same path); ``None``, the default, filters
    a POST to any path, so that no MCP endpoint the app serves is passed over: an app that
    takes other POSTs (OAuth's ``/token`` and ``/register``, a form) names its MCP paths. ``policy``,
    ``lift_legacy``, ``invocation_keys``, ``ui_keys``, ``max_batch`` and ``max_depth`` are the
    :class:`~mcp_provenance.types.FilterOptions` of every runtime, checked now.

    A body past ``max_body_bytes`` is answered 413 and nothing of it read past the bound. A
    body the filter refuses whole (not UTF-8 JSON by its headers: 415; not JSON; too deep)
    is answered with its status and JSON-RPC error, and the app never sees it. ``audit``
    (sync or async) gets each message's account (with its ``record``, but for a message
    refused before it could be read) and its log line; when it raises, nothing goes to the app,
    each request is answered -32603, ``data: {"code": ...}`` (a body the filter refused keeps
    its refusal), and the ``mcp_provenance`` logger says so. A body refused whole before any message was read (413, 415, not JSON) has
    no account. The app reads exactly the
    bytes the filter returned (``content-length`` made right; asked for no
    ``Content-Encoding``, since the answer is read), and the client's ``Host`` and
    ``Origin``, as they came.

    The filter's replies (to the refused messages of a batch) join the app's answer. A JSON
    answer is held up to ``max_answer_bytes``; an event stream passes one event at a time,
    each held up to as many; past that, or not JSON-RPC, it is not passed on: each request of
    the body gets a -32603 error instead. ``echo=False`` leaves results as the app made them.

    A record's ``witnessed`` has the ``Mcp-Session-Id`` a request names only once the app
    itself issued it on a successful answer (forgotten on a DELETE it accepted or a 404; at
    most ``max_sessions`` at once), and the ``principal`` that ``principal(scope)`` gives:
    :func:`authenticated_user` by default, so the middleware goes inside the stack's
    authentication (``http_app(middleware=[...])``) to record one.

    >>> ProvenanceMiddleware(lambda scope, receive, send: None, paths=["mcp"])
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: paths[0] must begin with "/"
    """

    def __init__(self, app: App, *, policy: Optional[Policy] = None, audit: Optional[AccountSink] = None,
                 paths: Optional[Sequence[str]] = None, lift_legacy: bool = False,
                 invocation_keys: Optional[Sequence[str]] = None, ui_keys: Optional[Sequence[str]] = None,
                 max_batch: Optional[int] = None, max_depth: Optional[int] = None, echo: bool = True,
                 principal: Callable[[Scope], Optional[str]] = authenticated_user,
                 max_body_bytes: int = MAX_BODY_BYTES, max_answer_bytes: int = MAX_ANSWER_BYTES,
                 max_sessions: int = MAX_SESSIONS) -> None:
        options: FilterOptions = {"liftLegacy": lift_legacy}
        if policy is not None:
            options["policy"] = policy
        if invocation_keys is not None:
            options["invocationKeys"] = list(invocation_keys)
        if ui_keys is not None:
            options["uiKeys"] = list(ui_keys)
        if max_batch is not None:
            options["maxBatch"] = max_batch
        if max_depth is not None:
            options["maxDepth"] = max_depth
        if audit is not None and not callable(audit):
            raise ProvenanceTypeError("audit must be a function taking each account and its line", "invalid-type")
        self.app = app
        self._filter = Filter(options)
        self._audit = audit
        self._paths = _paths(paths)
        self._principal = principal
        self._echo = echo
        self._max_body = _limit("max_body_bytes", max_body_bytes)
        self._max_answer = _limit("max_answer_bytes", max_answer_bytes)
        self._sessions = Sessions(_limit("max_sessions", max_sessions))

    @property
    def echo(self) -> bool:
        """Whether results carry their request's ``turnId``."""
        return self._echo

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self._paths is not None and not self._paths.fullmatch(scope["path"])):
            return await self.app(scope, receive, send)
        method: str = scope["method"]
        if method != "POST":
            # A GET stream, a DELETE and any other method go to the app as they came.
            named = header(scope["headers"], b"mcp-session-id")
            return await self.app(scope, receive, self._sessions.watching(method, named, send))
        request = Request(scope["headers"])
        try:
            body = await read_body(request.declared, receive, self._max_body)
        except Gone:
            return
        if body is None:
            refusal = {"code": -32600, "message": f"the body is larger than {self._max_body} bytes", "data": {"code": "body-too-large"}}
            too_large = json.dumps({"jsonrpc": "2.0", "id": None, "error": refusal}, separators=(",", ":")).encode()
            # The rest of the body is not read: the connection cannot carry another request.
            return await respond(send, 413, too_large, [(b"connection", b"close")])
        outcome = self._filter(body, self._context(scope, request))
        # No sink, no coroutine to make for one.
        audited = await self._audited(outcome) if self._audit is not None else None
        if "reject" in outcome:
            return await respond(send, outcome["status"], outcome["reject"] if isinstance(outcome["reject"], bytes) else b"")
        if audited is not None:
            failures = [error_text(request_id, "the request could not be audited", audited) for request_id in awaiting(outcome)]
            parts = [*(reply.encode() for reply in outcome["replies"]), *failures]
            nothing = error_text("null", "the request could not be audited", audited)
            return await respond(send, 200, composed(parts, is_batch(body))) if parts else await respond(send, 500, nothing)
        forward = outcome["forward"] if isinstance(outcome["forward"], bytes) else b""
        sessions, named = self._sessions, request.session
        answer = Answer(send, self._filter, outcome, body, self._echo, self._max_answer,
                        lambda start: sessions.answered("POST", named, start))
        request.kept.append((b"content-length", b"%d" % len(forward)))
        await self.app({**scope, "headers": request.kept}, replay(forward, receive), answer)

    def _context(self, scope: Scope, request: Request) -> FilterContext:
        """What the filter reads besides the body: the headers that say how it is encoded, and
        what the server witnessed."""
        context: FilterContext = {"headers": request.content, "receivedAt": received_at()}
        session = self._sessions.witnessed(request.session)
        if session is not None:
            context["sessionId"] = session
        principal = self._principal(scope)
        if principal is not None:
            context["principal"] = principal
        return context

    async def _audited(self, outcome: Outcome) -> Optional[str]:
        """Hands each account to ``audit``; ``None`` when it kept them all, else the code of its
        failure (``"audit-failed"`` unless it has a ``code`` of its own), logged once at ERROR
        on the ``mcp_provenance`` logger, without the failure's text (which may quote an intent)."""
        if self._audit is None:
            return None
        try:
            for account, line in zip(outcome["messages"], outcome["lines"]):
                kept = self._audit(account, line)
                if kept is not None and inspect.isawaitable(kept):
                    await kept
        except Exception as failure:
            code = getattr(failure, "code", None)
            code = code if isinstance(code, str) else "audit-failed"
            LOGGER.error("a body of %d message(s) refused: its audit failed (%s, code %r)",
                         len(outcome["messages"]), type(failure).__qualname__, code[:64])
            return code
        return None


def _paths(paths: Optional[Sequence[str]]) -> Optional[re.Pattern[str]]:
    """One pattern for the MCP paths (``*`` one segment, a trailing slash optional)."""
    if paths is None:
        return None
    if isinstance(paths, str):
        raise ProvenanceValueError("paths must be a list of paths, not one path", "invalid-path")
    for index, path in enumerate(paths):
        if not isinstance(path, str) or not path.startswith("/"):
            raise ProvenanceValueError(f'paths[{index}] must begin with "/"', "invalid-path")
    one = "|".join(re.escape(path.rstrip("/")).replace(r"\*", "[^/]+") for path in paths)
    return re.compile(f"(?:{one})/?")


def _limit(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ProvenanceValueError(f"{name} must be a positive integer", "invalid-limit")
    return value

