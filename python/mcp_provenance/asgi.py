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
import os
import socket
import time
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

from ._asgi_io import AsgiMessage, Gone, Receive, Scope, Send, forwarded, read_body, received_at, respond, route_path
from ._asgi_witnessed import authenticated_user
from ._native import Exchange, Filter, Gateway
from .errors import ProvenanceValueError
from .metrics import METHODS, Metrics
from .sessions import RedisSessions
from .sinks import JsonLinesSink
from .types import Account, FilterOptions, Forward, MessageAccount, Outcome, Policy

__all__ = ["AccountSink", "App", "ProvenanceMiddleware", "Receive", "Scope", "Send", "authenticated_user"]

#: An ASGI app.
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Called with each message's account (its kind, id, record, changes, why it was refused)
#: and its log line (one line of JSON: the account and the message as forwarded), before
#: the app sees the body; what it raises refuses the body. Then, once the answer is over,
#: with the exchange's outcome (``kind`` ``"outcome"``) and its line; what it raises then is
#: logged, and changes nothing of the answer sent.
AccountSink = Callable[[Account, str], Union[None, Awaitable[None]]]

#: How many bytes of a request body are read, unless told otherwise (as the prototype gateway).
MAX_BODY_BYTES = 1 << 20
#: How many bytes of a JSON answer, or of one event of a stream, are held to echo into.
MAX_ANSWER_BYTES = 16 << 20
#: How many session ids the middleware remembers; past it, it forgets the one named longest ago.
MAX_SESSIONS = 10_000

#: Where the middleware tells the operator of what it refused: one line at WARNING for each
#: message the filter refused and each exchange it answered in the app's stead (its code, never
#: anything of the message), at ERROR when the audit sink failed.
LOGGER = logging.getLogger("mcp_provenance")

#: The host this worker runs on, as an outcome names it.
HOST = socket.gethostname()


class _Worker:
    """This process's id, as an outcome names it: read once, and again in each child a fork
    makes (a worker of gunicorn's or uvicorn's)."""

    pid = os.getpid()

    @classmethod
    def forked(cls) -> None:
        cls.pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Worker.forked)


def _unkept(failure: Exception, metrics: Optional[Metrics]) -> None:
    """Says once, on the ``mcp_provenance`` logger, that an outcome was not kept: the
    failure's kind and code, not its text; and counts it."""
    code = getattr(failure, "code", None)
    code = code if isinstance(code, str) else "audit-failed"
    LOGGER.error("an exchange's outcome was not kept: its audit failed (%s, code %r)", type(failure).__qualname__, code[:64])
    if metrics is not None:
        metrics.failed()


def _refused_messages(accounts: Sequence[MessageAccount]) -> None:
    """Logs a line for each message of ``accounts`` the filter refused: its kind, place and code."""
    for index, account in enumerate(accounts):
        refused = account.get("refused")
        if refused is not None:
            LOGGER.warning("refused a %s (message %d of the body): %s", account["kind"], index + 1, refused[:64])


def _refused_replies(answer: bytes) -> None:
    """Logs a line for each error the filter answered a body with, when no account was made
    (no sink, no metrics): its code, read from the error's ``data.code``."""
    try:
        read = json.loads(answer) if answer else []
    except ValueError:
        read = []
    codes = []
    for reply in read if isinstance(read, list) else [read]:
        error = reply.get("error") if isinstance(reply, dict) else None
        data = error.get("data") if isinstance(error, dict) else None
        code = data.get("code") if isinstance(data, dict) else None
        if isinstance(code, str):
            codes.append(code)
    for index, code in enumerate(codes):
        LOGGER.warning("refused a request (error %d of the answer): %s", index + 1, code[:64])
    if not codes:
        # Notifications alone: no answer to read a code from.
        LOGGER.warning("refused a body: the filter refused each of its messages")


class ProvenanceMiddleware:
    """Runs the filter on each POST body to an MCP path before ``app`` reads it, and echoes
    only ``turnId`` into each result on the way back (AI-11). Every decision is the core's
    exchange (WIRE-7, WIRE-8, as in every runtime); this class moves ASGI's messages.

    ``paths`` are the MCP endpoints, as the app routes them (``"/mcp"``; ``*`` stands for one
    path segment, as in ``"/servers/*/mcp"``; a trailing slash is the same path; every path
    below one is the endpoint's too, as a ``Mount`` serves it), matched without the
    ``root_path`` a server or a ``Mount`` put before it; ``None``, the default, filters a POST
    to any path, so that no MCP endpoint the app serves is passed over: an app that takes other
    POSTs (OAuth's ``/token`` and ``/register``, a form) names its MCP paths.

    ``options`` is the filter's options document (:class:`~mcp_provenance.types.FilterOptions`),
    the one every runtime reads: ``Filter(options)``, npm's ``createFilter``, ContextForge's
    ``MCP_PROVENANCE_OPTIONS``; every option of the filter is given there (``auditArguments``,
    what audit lines hold of a message's arguments, among them). The keyword arguments are the
    middleware's own; ``policy``, ``lift_legacy``, ``invocation_keys``, ``ui_keys``,
    ``max_batch`` and ``max_depth`` stay too, for the code that gives them so, each a spelling of
    one member of ``options`` (an option given both ways is refused: one of them would be
    silently not in force), and no filter option added since has one. All is checked now.

    A body past ``max_body_bytes`` is answered 413 and nothing of it read past the bound. A
    body the filter refuses whole (not UTF-8 JSON by its headers: 415; not JSON; too deep)
    is answered with its status and JSON-RPC error, and the app never sees it. ``audit``
    (sync or async) gets each message's account (with its ``record``, but for a message
    refused before it could be read) and its log line; when it raises, nothing goes to the app,
    each request is answered -32603, ``data: {"code": ...}`` (a body the filter refused keeps
    its refusal), and the ``mcp_provenance`` logger says so. A body refused whole before any
    message was read (413, 415, not JSON) has no account. The app reads exactly the bytes the
    filter returned (``content-length`` made right; asked for no ``Content-Encoding``, since
    the answer is read), and the client's ``Host`` and ``Origin``, as they came.

    The app's answer is read as the clients read it: the filter's replies (to the refused
    messages of a batch) join it; a JSON answer is held up to ``max_answer_bytes``; an event
    stream passes one event at a time, each held up to as many; past that, not JSON-RPC, or in
    a form a client may read otherwise (another JSON media type, a charset, an encoding), it is
    not passed on: each request of the body gets a -32603 error instead. ``echo=False`` leaves
    results as the app made them.

    Once the answer to a body it read is over (sent, or the client gone, or the app failed),
    ``audit`` gets one more account, the exchange's outcome
    (:class:`~mcp_provenance.types.OutcomeAccount`): the status sent, the middleware's own code
    when it answered in the app's stead, and what each request that went on got, as the client
    got it (``"result"``, ``"error"`` with its ``code``, or ``"unseen"``), so that a call the app
    refused never reads as served; with the time taken and the worker (``pid``, ``host``). What
    ``audit`` raises then is logged, and changes nothing. Without ``audit`` no outcome is kept.

    ``audit`` may be the path of a file (a ``str`` or an ``os.PathLike``): the middleware
    appends each line to it through a :class:`~mcp_provenance.sinks.JsonLinesSink` (one write
    a line, safe under rotation), which opens it now; a path it cannot write is refused now
    (``unwritable-audit``), and anything else that is not a function too (``invalid-option``).
    ``metrics`` (:class:`~mcp_provenance.metrics.Metrics`, such as
    :func:`mcp_provenance.prometheus.prometheus_metrics`) is told of each body: how long the
    filter took, each message's account (made for it even without ``audit``), the sink's
    failures and the middleware's own answers; without it, nothing is computed for metrics.
    Each refusal is one line at WARNING on the ``mcp_provenance`` logger, its code and never
    anything of the message: a message the filter refused (its kind, place and code; without
    ``audit`` or ``metrics``, when the filter refused a body's every message, the code of each
    error it answered with: a batch that goes on with some of its messages refused logs nothing
    then, no account being made), and an exchange the middleware answered in the app's stead
    (its code; an audit failure is said at ERROR instead).

    A record's ``witnessed`` has the ``Mcp-Session-Id`` a request names only once the app
    itself issued it on a successful answer (forgotten only on a DELETE it accepted; at most
    ``max_sessions`` at once), and the ``principal`` that ``principal(scope)`` gives:
    :func:`authenticated_user` by default, so the middleware goes inside the stack's
    authentication (``http_app(middleware=[...])``) to record one. That memory is the
    worker's: ``sessions="redis://…"`` (``pip install 'mcp-provenance[redis]'``; or a
    :class:`~mcp_provenance.sessions.RedisSessions` for another key prefix or timeout) shares
    it with the other workers and hosts through Redis, so that a session issued through one is
    witnessed through another. Redis keeps each session's SHA-256, never its id, for a day; with
    Redis down or slow (half a second an operation), a record names a session only when its
    worker saw the app issue it, and the request is served and audited as ever
    (:mod:`mcp_provenance.sessions`).

    >>> ProvenanceMiddleware(lambda scope, receive, send: None, paths=["mcp"])
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: option `paths[0]` must begin with "/"
    >>> ProvenanceMiddleware(lambda scope, receive, send: None, options={"maxDepth": 64}, max_depth=32)
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: option `maxDepth` is given twice, in `options` and as `max_depth`: give it once
    >>> ProvenanceMiddleware(lambda scope, receive, send: None, audit=b"audit.jsonl")
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: option `audit` must be a function or the path of a file
    >>> ProvenanceMiddleware(lambda scope, receive, send: None, metrics=print)
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: option `metrics` must have the methods observe, refused, failed, filtered
    """

    def __init__(self, app: App, *, options: Optional[FilterOptions] = None,
                 audit: Union[AccountSink, str, "os.PathLike[str]", None] = None, metrics: Optional[Metrics] = None,
                 paths: Optional[Sequence[str]] = None, echo: bool = True,
                 principal: Callable[[Scope], Optional[str]] = authenticated_user,
                 max_body_bytes: int = MAX_BODY_BYTES, max_answer_bytes: int = MAX_ANSWER_BYTES,
                 max_sessions: int = MAX_SESSIONS, policy: Optional[Policy] = None, lift_legacy: Optional[bool] = None,
                 invocation_keys: Optional[Sequence[str]] = None, ui_keys: Optional[Sequence[str]] = None,
                 max_batch: Optional[int] = None, max_depth: Optional[int] = None,
                 sessions: Union[str, RedisSessions, None] = None) -> None:
        # A path where a sink is expected: the file sink, which opens it now.
        if isinstance(audit, (str, os.PathLike)):
            audit = JsonLinesSink(audit)
        # The two options that are functions, checked as every runtime checks them.
        if audit is not None and not callable(audit):
            raise ProvenanceValueError("option `audit` must be a function or the path of a file", "invalid-option")
        if principal is not None and not callable(principal):
            raise ProvenanceValueError("option `principal` must be a function", "invalid-option")
        if metrics is not None and not all(callable(getattr(metrics, method, None)) for method in METHODS):
            raise ProvenanceValueError(f"option `metrics` must have the methods {', '.join(METHODS)}", "invalid-option")
        document = _filter_options(options, {"policy": policy, "lift_legacy": lift_legacy,
                                             "invocation_keys": invocation_keys, "ui_keys": ui_keys,
                                             "max_batch": max_batch, "max_depth": max_depth})
        own = {"echo": echo, "maxBodyBytes": max_body_bytes, "maxAnswerBytes": max_answer_bytes,
               "maxSessions": max_sessions, "paths": paths}
        document.update((name, _listed(value)) for name, value in own.items() if value is not None)
        self.app = app
        self._gateway = Gateway(document)
        # A URL where a store is expected: Redis, checked now, connected to when a request needs it.
        self._sessions = RedisSessions(sessions) if sessions is not None and not isinstance(sessions, RedisSessions) else sessions
        self._audit: Optional[AccountSink] = audit
        self._metrics = metrics
        # Metrics count the accounts: they are made for either.
        self._accounts = audit is not None or metrics is not None
        self._principal = principal
        self._echo = echo

    @property
    def echo(self) -> bool:
        """Whether results carry their request's ``turnId``."""
        return self._echo

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        began = time.perf_counter() if self._audit is not None else 0.0
        exchange = self._gateway.begin(scope["method"], route_path(scope), scope["headers"])
        start = exchange.start
        if start == "pass":
            return await self.app(scope, receive, send)
        if self._sessions is not None:
            # A session its worker did not see issued, witnessed when the store holds it.
            await self._sessions.recall(exchange)
        if start == "watch":
            return await self.app(scope, receive, _Back(exchange, send, self._sessions))
        if self._audit is not None:
            # With a sink, what became of the exchange once its answer is over: sent, or the
            # client gone, or the app failed.
            exchange.keep_outcome()
        unkept = None
        try:
            unkept = await self._read(exchange, scope, receive, send)
        finally:
            self._over(exchange, unkept)
            if self._audit is not None:
                kept = self._ended(exchange, began)
                if kept is not None:
                    await self._kept(kept)

    async def _read(self, exchange: Exchange, scope: Scope, receive: Receive, send: Send) -> Optional[str]:
        """A POST the middleware reads: its body filtered and audited, then the app's answer
        through the exchange; or the middleware's own answer. The code of the audit's failure,
        when it failed."""
        if exchange.declared_too_large:
            # The rest of the body is not read: the connection cannot carry another request.
            await respond(send, exchange.too_large())
            return None
        try:
            body = await read_body(receive, exchange.max_body_bytes)
        except Gone:
            return None
        if body is None:
            await respond(send, exchange.too_large())
            return None
        metrics = self._metrics
        if metrics is None:
            outcome = exchange.admit(body, received_at(), self._principal(scope), self._accounts)
        else:
            when, principal = received_at(), self._principal(scope)
            # The filter's time alone.
            filtering = time.perf_counter()
            outcome = exchange.admit(body, when, principal, True)
            metrics.filtered(time.perf_counter() - filtering)
            for account in outcome["messages"]:
                metrics.observe(account)
        if self._accounts:
            _refused_messages(outcome["messages"])
        # No sink, no coroutine to make for one.
        unkept = await self._audited(outcome) if self._audit is not None else None
        rejected = None if "forward" in outcome else exchange.rejected()
        if rejected is not None:
            if not self._accounts and exchange.refused is None:
                # Every message refused, and no account made to say which: the filter's replies say.
                _refused_replies(rejected[2])
            await respond(send, rejected)
            return unkept
        if unkept is not None:
            await respond(send, exchange.audit_failed(unkept))
            return unkept
        # Not rejected: the outcome forwards, and a body given as bytes goes on as bytes.
        app_scope, app_receive = forwarded(scope, cast(bytes, cast(Forward, outcome)["forward"]), receive)
        await self.app(app_scope, app_receive, _Back(exchange, send, self._sessions))
        return None

    def _over(self, exchange: Exchange, unkept: Optional[str]) -> None:
        """Once the answer is over: when the middleware answered in the app's stead (or put its
        errors in place of the app's answer), a line on the logger (but for an audit failure,
        said at ERROR already) and the refusal counted."""
        refused = exchange.refused
        if refused is None:
            return
        if unkept is None:
            LOGGER.warning("answered in the app's stead: %s", refused[:64])
        if self._metrics is not None:
            self._metrics.refused(refused)

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
            if self._metrics is not None:
                self._metrics.failed()
            return code
        return None

    def _ended(self, exchange: Exchange, began: float) -> Optional[Awaitable[None]]:
        """Hands the exchange's outcome and its line to ``audit``, after the body's accounts:
        the status sent, what each request got as the client got it; what an async sink
        returns, to await. The answer is gone by then: a failure of the sink changes nothing
        of it, and is logged once at ERROR on the ``mcp_provenance`` logger, without its text."""
        ended = exchange.outcome((time.perf_counter() - began) * 1000, _Worker.pid, HOST)
        if ended is None or self._audit is None:
            return None
        try:
            kept = self._audit(*ended)
        except Exception as failure:
            _unkept(failure, self._metrics)
            return None
        return kept if kept is not None and inspect.isawaitable(kept) else None

    async def _kept(self, kept: Awaitable[None]) -> None:
        """An async sink's keeping of an outcome, awaited; its failure logged."""
        try:
            await kept
        except Exception as failure:
            _unkept(failure, self._metrics)


#: The filter options the middleware takes as keywords too, by keyword: each its member of ``options``.
FILTER_KEYWORDS = {"policy": "policy", "lift_legacy": "liftLegacy", "invocation_keys": "invocationKeys",
                   "ui_keys": "uiKeys", "max_batch": "maxBatch", "max_depth": "maxDepth"}


def _listed(value: Any) -> Any:
    """A tuple as the list JSON has; any other value as it is."""
    return list(value) if isinstance(value, tuple) else value


def _filter_options(options: Optional[FilterOptions], keywords: Mapping[str, Any]) -> Dict[str, Any]:
    """The filter's options document: ``options``, checked by the core as a filter's (a
    member that is no filter option is refused, the middleware's own among them), with each
    filter keyword given (``keywords``, not ``None``) as its member; one given both ways is
    refused."""
    document: Dict[str, Any] = {}
    if options is not None:
        Filter(options)
        document.update(options)
    for keyword, name in FILTER_KEYWORDS.items():
        value = keywords[keyword]
        if value is None:
            continue
        if document.get(name) is not None:
            raise ProvenanceValueError(f"option `{name}` is given twice, in `options` and as `{keyword}`: give it once",
                                       "invalid-option")
        document[name] = _listed(value)
    return document


class _Back:
    """Stands for the client's ``send`` while the app answers: each of its messages through
    the exchange, what the exchange says to send sent. The head the client gets waits for the
    exchange (a JSON answer's, until it is whole)."""

    __slots__ = ("_exchange", "_send", "_passes", "_over", "_start", "_sessions")

    def __init__(self, exchange: Exchange, send: Send, sessions: Optional[RedisSessions] = None) -> None:
        self._exchange = exchange
        self._send = send
        self._sessions = sessions
        self._passes = False
        self._over = False
        self._start: AsgiMessage = {}

    async def __call__(self, message: AsgiMessage) -> None:
        kind = message["type"]
        if self._over:
            return
        if self._passes or kind not in ("http.response.start", "http.response.body"):
            return await self._send(message)
        if kind == "http.response.start":
            self._start = message
            step = self._exchange.head(message["status"], message.get("headers", []))
            if self._sessions is not None:
                # What the answer taught of sessions, in the store before the client can ask another worker.
                await self._sessions.learn(self._exchange)
            return await self._step(step, True)
        if message.get("more_body", False):
            return await self._step(self._exchange.piece(message.get("body", b"")), True)
        await self._step(self._exchange.finish(message.get("body", b"")), False)

    async def _step(self, step: Tuple[Any, List[bytes], bool], more: bool) -> None:
        """Sends what a step of the exchange says: its head, its pieces as one body message
        (none while more is to come and nothing is to send), and the end when it is over."""
        head, pieces, over = step
        if head is not None:
            status, headers, self._passes = head
            await self._send({**self._start, "status": status, "headers": headers})
        body = b"".join(pieces)
        if over or body or not more:
            await self._send({"type": "http.response.body", "body": body, "more_body": more and not over})
        self._over = over
