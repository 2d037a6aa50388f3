"""Witnessed sessions shared by a gateway's workers and hosts, through Redis.

A record names the ``Mcp-Session-Id`` a request carries only when the app issued it
(AI-10): the middleware remembers what the app's answers issued. That memory is one
process's: with two workers, or two hosts behind a balancer, a session issued through one
would not be witnessed through the other. Given ``sessions="redis://…"``, the middleware
keeps what the core's exchange says an answer taught (a session issued, one ended by a
DELETE the app accepted) in Redis, and before it reads a body that names a session its
worker has not seen issued, asks Redis; the core decides everything else. The store's
layout is the core's, the same for every runtime:

- a key ``mcp-provenance:session:`` (:data:`SESSION_KEY_PREFIX`, or the ``prefix`` given)
  followed by the SHA-256 of the session's id in lowercase hex: Redis never holds an id,
  which is a bearer's secret (whoever sends it speaks in the session);
- kept for a day (:data:`SESSION_TTL_SECONDS`) from when the app issued it, removed when
  the app accepts a DELETE of it.

Redis down, or slower than ``timeout`` (half a second) for an operation: the witness fails
closed. A request in a session its worker did not see issued is filtered, audited and
forwarded as ever, and its record has no ``witnessed.sessionId`` (the exchange's outcome no
``sessionId``); a session issued meanwhile is witnessed only through the worker it was
issued through. The ``mcp_provenance`` logger says so once when Redis stops answering
(WARNING), and once when it answers again (INFO): not once a request.

>>> RedisSessions("http://localhost:6379")
Traceback (most recent call last):
...
mcp_provenance.errors.ProvenanceValueError: option `sessions` must be a Redis URL: redis://, rediss:// or unix://
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Optional
from urllib.parse import urlsplit

from ._native import SESSION_KEY_PREFIX, SESSION_TTL_SECONDS, Exchange
from .errors import ProvenanceValueError

__all__ = ["SESSION_KEY_PREFIX", "SESSION_TTL_SECONDS", "SESSIONS_TIMEOUT", "RedisSessions"]

#: The most seconds one operation of the store may take; past it, it has not answered.
SESSIONS_TIMEOUT = 0.5

#: Where the middleware says the store stopped answering, and answers again.
LOGGER = logging.getLogger("mcp_provenance")

#: The URL schemes redis-py connects with.
SCHEMES = ("redis", "rediss", "unix")


class RedisSessions:
    """The store a gateway's workers share their witnessed sessions through: Redis at ``url``
    (``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` for TLS, ``unix://``),
    through ``redis.asyncio`` (``pip install 'mcp-provenance[redis]'``). The URL is checked
    now; nothing connects until a request needs it. Messages never quote the URL, which may
    hold a password.
    """

    def __init__(self, url: str, *, prefix: str = SESSION_KEY_PREFIX, timeout: float = SESSIONS_TIMEOUT) -> None:
        if not isinstance(url, str) or urlsplit(url).scheme.lower() not in SCHEMES:
            raise ProvenanceValueError("option `sessions` must be a Redis URL: redis://, rediss:// or unix://",
                                       "invalid-option")
        if not isinstance(prefix, str):
            raise ProvenanceValueError("option `sessions_prefix` must be a string", "invalid-option")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 60:
            raise ProvenanceValueError("option `sessions_timeout` must be a number of seconds, above 0 and at most 60",
                                       "invalid-option")
        try:
            from redis.asyncio import Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
        except ImportError:
            raise ProvenanceValueError("option `sessions` needs the `redis` package: pip install 'mcp-provenance[redis]'",
                                       "missing-dependency") from None
        self._prefix = prefix
        self._timeout = float(timeout)
        self._down = False

        def connect() -> Any:
            # One retry at once (a connection Redis closed, restarting), no more: the timeout
            # bounds each operation, and the next request tries again.
            return Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                  retry=Retry(NoBackoff(), 1))

        try:
            connect()
        except ValueError:
            raise ProvenanceValueError("option `sessions` is not a Redis URL redis-py reads", "invalid-option") from None
        self._connect = connect
        self._client: Any = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    async def recall(self, exchange: Exchange) -> None:
        """Before the body is read: when the request names a session its worker has not seen
        issued, and the store holds it, the exchange is told it was issued elsewhere."""
        key = exchange.unknown_session
        if key is None:
            return
        held = await self._run(lambda client: client.exists(self._prefix + key))
        if held:
            exchange.issued_elsewhere()

    async def learn(self, exchange: Exchange) -> None:
        """Once the app's answer began, before its head goes on: what it taught of sessions,
        kept in the store (a session issued) or removed from it (one ended)."""
        news = exchange.session_news
        if news is None:
            return
        kind, key = news
        if kind == "issued":
            await self._run(lambda client: client.set(self._prefix + key, b"1", ex=SESSION_TTL_SECONDS))
        else:
            await self._run(lambda client: client.delete(self._prefix + key))

    async def _run(self, command: Any) -> Any:
        """``command(client)``, bounded by the timeout; ``None`` when the store did not answer,
        said once an outage on the logger."""
        try:
            answer = await asyncio.wait_for(self._command(command), self._timeout)
        except Exception as failure:
            if not self._down:
                self._down = True
                LOGGER.warning("the session store (Redis) does not answer (%s): until it does, a session is "
                               "witnessed only through the worker that saw the app issue it",
                               type(failure).__qualname__)
            return None
        if self._down:
            self._down = False
            LOGGER.info("the session store (Redis) answers again")
        return answer

    def _command(self, command: Any) -> Awaitable[Any]:
        """``command`` on this event loop's client (a client's connections serve one loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client, self._loop = self._connect(), loop
        awaited: Awaitable[Any] = command(self._client)
        return awaited
