"""What the ASGI middleware's tests share: an app that records what reaches
it and answers as a test tells it, one HTTP exchange driven by hand (every
`receive` counted, every `send` kept, so that a test sees what was read and
in which pieces the answer went), and an app's lifespan run through the
middleware, as a server runs it."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, MutableMapping, Optional, Sequence, Tuple

Message = MutableMapping[str, Any]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON = [(b"content-type", b"application/json")]
EVENTS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


def result(request_id: str, body: str = "{}") -> bytes:
    """A JSON-RPC result for the request whose id (JSON text) is ``request_id``."""
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":{body}}}'.encode()


@dataclass
class Reached:
    """One request as the app behind the middleware got it."""

    method: str
    path: str
    headers: List[Tuple[bytes, bytes]]
    body: bytes
    user: Any

    def header(self, name: bytes) -> List[bytes]:
        return [value for key, value in self.headers if key == name]


@dataclass
class Recorder:
    """An app that records each request it gets (its body read whole) and answers with
    ``status``, ``headers`` and the ``pieces`` of its body, each sent as it is."""

    status: int = 200
    headers: Sequence[Tuple[bytes, bytes]] = tuple(JSON)
    pieces: Sequence[bytes] = (b'{"jsonrpc":"2.0","id":1,"result":{}}',)
    reached: List[Reached] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.reached.append(Reached(scope["method"], scope["path"], list(scope["headers"]), body, scope.get("user")))
        await send({"type": "http.response.start", "status": self.status, "headers": list(self.headers)})
        for index, piece in enumerate(self.pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": index < len(self.pieces) - 1})
        if not self.pieces:
            await send({"type": "http.response.body", "body": b""})


@dataclass
class Exchange:
    """What the client got, and what the middleware read of its body."""

    status: int
    headers: List[Tuple[bytes, bytes]]
    body: bytes
    pieces: List[bytes]
    receives: int

    def header(self, name: bytes) -> Optional[bytes]:
        found = [value for key, value in self.headers if key == name]
        return found[0] if found else None


async def exchange(app: App, body: bytes = b"", *, method: str = "POST", path: str = "/mcp",
                   headers: Sequence[Tuple[bytes, bytes]] = tuple(JSON), chunks: Optional[Sequence[bytes]] = None,
                   scope: Optional[Dict[str, Any]] = None) -> Exchange:
    """Sends one HTTP request to ``app`` (its body in ``chunks`` when given, else whole) and
    returns the answer, once the app is done."""
    pieces = list(chunks) if chunks is not None else [body]
    receives = 0
    answered = asyncio.Event()

    async def receive() -> Message:
        nonlocal receives
        receives += 1
        if receives <= len(pieces):
            return {"type": "http.request", "body": pieces[receives - 1], "more_body": receives < len(pieces)}
        await answered.wait()
        return {"type": "http.disconnect"}

    start: Message = {}
    sent: List[bytes] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            assert not start, "a second start"
            start.update(message)
        else:
            assert message["type"] == "http.response.body" and not answered.is_set(), message
            sent.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    full = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
            "raw_path": path.encode(), "query_string": b"", "headers": list(headers), **(scope or {})}
    await app(full, receive, send)
    assert answered.is_set(), "the answer did not end"
    return Exchange(start["status"], list(start.get("headers", [])), b"".join(sent), sent, receives)


@contextlib.asynccontextmanager
async def lifespan(app: App) -> AsyncIterator[None]:
    """Runs ``app``'s lifespan as a server would: started before, shut down after."""
    to_app: asyncio.Queue[Message] = asyncio.Queue()
    from_app: asyncio.Queue[Message] = asyncio.Queue()

    async def run() -> None:
        await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, to_app.get, from_app.put)

    running = asyncio.create_task(run())
    await to_app.put({"type": "lifespan.startup"})
    started = await from_app.get()
    assert started["type"] == "lifespan.startup.complete", started
    try:
        yield
    finally:
        await to_app.put({"type": "lifespan.shutdown"})
        stopped = await from_app.get()
        await running
        assert stopped["type"] == "lifespan.shutdown.complete", stopped
