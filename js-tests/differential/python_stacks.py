"""The Python server stacks of js-tests/differential.test.mjs, on 127.0.0.1.

Two apps, each on a port of its own: the ``mcp`` SDK's Streamable HTTP app
(``MCPServer.streamable_http_app()``) and FastMCP's ``http_app()``, both
stateless with JSON answers, as a deployment behind a gateway would run
them. What each read from a request is captured at two levels, keyed by the
request's ``x-diff-id`` header:

- ``transport``: the JSON value the SDK's transport parsed from the body
  (``pydantic_core.from_json`` on the handshake-era path,
  ``json.loads`` on the 2026-07-28 per-request path), before any model
  validates it;
- ``app``: what the app's own middleware is handed, where an audit
  middleware reads (the ``mcp`` server middleware's ``ctx.method``,
  ``ctx.request_id``, ``ctx.params`` and ``ctx.meta``; FastMCP's
  ``context.method``, and the request context's ``meta`` and the SDK's
  request id under it);
- ``tool``: that the tool ran (for a look by hand; the test does not read it).

Values are sent back in a lossless form (see ``tagged``): integers as their
decimal text, floats as floats (``inf`` by name), objects as sorted
``[key, value]`` pairs, so that a big integer, ``1.0`` or ``-0.0`` is
compared as read. ``GET /__captures?id=<id>`` returns and forgets one
request's captures (``&wait=<ms>`` waits that long, at most 1 s, for an app
capture that a notification's 202 answer precedes).

  python python_stacks.py   # prints one JSON line {"mcp": <port>, "fastmcp": <port>}, then serves
                            # until its stdin closes
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import math
import socket
import sys
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qs

import pydantic_core
import uvicorn

import mcp.server._streamable_http_modern as modern_http
import mcp.server.streamable_http as legacy_http
from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from mcp.server.mcpserver import MCPServer

#: (stack, diff id) of the request being served, set by ``capturing``.
CURRENT: contextvars.ContextVar[Optional[Tuple[str, str]]] = contextvars.ContextVar("diff", default=None)
#: "stack:diff id" -> captures, each {"stack", "level", "value"}; bounded by ``MAX_KEPT``.
CAPTURES: Dict[str, List[Dict[str, Any]]] = {}
MAX_KEPT = 10_000


def tagged(value: Any, depth: int = 0) -> Any:
    """A JSON value in a form JSON carries losslessly between Python and Node."""
    if depth > 2000:
        return ["deep"]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return ["i", str(value)]
    if isinstance(value, float):
        if math.isinf(value):
            return ["f", "inf" if value > 0 else "-inf"]
        if math.isnan(value):
            return ["f", "nan"]
        return ["f", value]
    if isinstance(value, (list, tuple)):
        return ["a", [tagged(item, depth + 1) for item in value]]
    if isinstance(value, dict):
        return ["o", sorted(([str(k), tagged(v, depth + 1)] for k, v in value.items()), key=lambda kv: kv[0])]
    return ["?", type(value).__name__]


def record(level: str, value: Any, stack: Optional[str] = None, diff_id: Optional[str] = None) -> None:
    """Keeps what a stack read, under the request's diff id (from ``CURRENT`` unless given)."""
    current = CURRENT.get()
    if current is not None:
        stack = stack or current[0]
        diff_id = diff_id or current[1]
    if stack is None or diff_id is None:
        return
    key = f"{stack}:{diff_id}"
    if len(CAPTURES) >= MAX_KEPT and key not in CAPTURES:
        return
    try:
        value = tagged(value)
    except RecursionError:
        value = ["deep"]
    CAPTURES.setdefault(key, []).append({"stack": stack, "level": level, "value": value})


class _PydanticCore:
    """``pydantic_core`` as the handshake-era transport sees it, its parse recorded."""

    def __getattr__(self, name: str) -> Any:
        return getattr(pydantic_core, name)

    @staticmethod
    def from_json(data: Any, *args: Any, **kwargs: Any) -> Any:
        value = pydantic_core.from_json(data, *args, **kwargs)
        record("transport", value)
        return value


class _Json:
    """``json`` as the 2026-07-28 path sees it, its parse recorded."""

    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)

    @staticmethod
    def loads(data: Any, *args: Any, **kwargs: Any) -> Any:
        value = json.loads(data, *args, **kwargs)
        record("transport", value)
        return value


# Where the installed SDK parses a body; if it parses elsewhere now, say so rather than capture nothing.
for module, name in ((legacy_http, "pydantic_core"), (modern_http, "json")):
    if not hasattr(module, name):
        raise SystemExit(f"{module.__name__} no longer parses with {name}: move the capture to where it parses now")
legacy_http.pydantic_core = _PydanticCore()  # type: ignore[assignment,attr-defined]
modern_http.json = _Json()  # type: ignore[assignment,attr-defined]


def _header_id(request: Any) -> Optional[str]:
    headers = getattr(request, "headers", None)
    value = headers.get("x-diff-id") if headers is not None else None
    return value if isinstance(value, str) else None


async def _mcp_middleware(ctx: Any, call_next: Any) -> Any:
    record(
        "app",
        {"method": ctx.method, "id": ctx.request_id, "params": ctx.params, "meta": ctx.meta},
        "mcp",
        _header_id(ctx.request),
    )
    return await call_next(ctx)


class _FastMcpCapture(Middleware):
    async def on_message(self, context: Any, call_next: Any) -> Any:
        fastmcp_context = context.fastmcp_context
        raw = fastmcp_context.request_context if fastmcp_context is not None else None
        meta = getattr(raw, "meta", None)
        if meta is not None and not isinstance(meta, dict):
            meta = meta.model_dump(by_alias=True, exclude_unset=True) if hasattr(meta, "model_dump") else dict(meta)
        # The id as the SDK read it (FastMCP's own is a str).
        request_id = getattr(getattr(raw, "_srctx", None), "request_id", None)
        record("app", {"method": context.method, "id": request_id, "meta": meta}, "fastmcp", _header_id(getattr(raw, "request", None)))
        return await call_next(context)


def mcp_app() -> Any:
    server = MCPServer("differential", middleware=[_mcp_middleware])

    @server.tool()
    def t(a: Any = None) -> str:
        record("tool", {"ran": True}, "mcp")
        return "ok"

    return server.streamable_http_app(stateless_http=True, json_response=True)


def fastmcp_app() -> Any:
    server = FastMCP("differential")

    @server.tool
    def t(a: Any = None) -> str:
        record("tool", {"ran": True}, "fastmcp")
        return "ok"

    server.add_middleware(_FastMcpCapture())
    return server.http_app(stateless_http=True, json_response=True)


def capturing(stack: str, app: Any) -> Any:
    """The app, with the diff id of each request in ``CURRENT`` and ``/__captures`` beside it."""

    async def asgi(scope: Dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if scope["path"] == "/__captures":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            key = f"{stack}:{query.get('id', [''])[0]}"
            wait = min(float(query.get("wait", ["0"])[0]) / 1000.0, 1.0)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and not any(c["level"] == "app" for c in CAPTURES.get(key, [])):
                await asyncio.sleep(0.005)
            body = json.dumps(CAPTURES.pop(key, [])).encode()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        diff_id = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-diff-id"), None)
        token = CURRENT.set((stack, diff_id) if diff_id is not None else None)
        try:
            await app(scope, receive, send)
        finally:
            CURRENT.reset(token)

    return asgi


def listening() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def main() -> None:
    stacks = {"mcp": capturing("mcp", mcp_app()), "fastmcp": capturing("fastmcp", fastmcp_app())}
    servers = []
    ports = {}
    for name, app in stacks.items():
        sock = listening()
        ports[name] = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="critical", lifespan="on", access_log=False)
        server = uvicorn.Server(config)
        servers.append((server, sock))
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in servers]
    while not all(server.started for server, _ in servers):
        if any(task.done() for task in tasks):
            for task in tasks:
                if task.done() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            raise SystemExit("a server stopped before it started")
        await asyncio.sleep(0.02)
    print(json.dumps(ports), flush=True)
    # Serve until the test closes our stdin (or dies).
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    for server, _ in servers:
        server.should_exit = True
    await asyncio.wait(tasks, timeout=5)


if __name__ == "__main__":
    asyncio.run(main())
