"""The upstream MCP server of the ContextForge test: a FastMCP server of one
tool, ``open_orders``, and one prompt, ``order_note``, whose ``region`` it
completes, over Streamable HTTP on 127.0.0.1, that writes every
body posted to it, as the bytes it received, to a file (one JSON line each:
``{"body": text}``). What the gateway forwarded is then read from that
file, not guessed from what the gateway says.

    python contextforge_upstream.py PORT RECEIVED_FILE

It runs with the test's own Python (FastMCP is among the tests' requirements),
not in ContextForge's environment.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Awaitable, Callable, List, MutableMapping, Tuple

import uvicorn
from fastmcp import FastMCP

#: An ASGI event.
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


def server() -> FastMCP:
    """The server the gateway is in front of."""
    made = FastMCP("orders")

    @made.tool
    def open_orders(region: str) -> str:
        """The open orders of a region."""
        return f"3 open orders in {region}"

    @made.prompt
    def order_note(region: str) -> str:
        """A note on the open orders of a region."""
        return f"Write a note on the open orders in {region}"

    @made.completion
    def regions(ref: Any, argument: Any, context: Any) -> List[str]:
        """The regions whose name begins with what was typed, after it: one, ``<typed>-north``."""
        return [f"{argument.value}-north"] if argument.name == "region" else []

    return made


async def read_whole(receive: Receive) -> Tuple[bytes, Receive]:
    """A request's body, read whole, and a ``receive`` that hands it to an app again."""
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            # The body is spent: what the app waits for next is the client going away.
            return await receive()
        replayed = True
        return {"type": "http.request", "body": bytes(body), "more_body": False}

    return bytes(body), replay


class Recorder:
    """Writes each POST body ``app`` receives to ``path`` before ``app`` reads it."""

    def __init__(self, app: App, path: str) -> None:
        self._app = app
        self._path = path

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        body, replay = await read_whole(receive)
        with open(self._path, "a", encoding="utf-8") as received:
            received.write(json.dumps({"body": body.decode("utf-8")}) + "\n")
        await self._app(scope, replay, send)


def main(port: int, path: str) -> None:
    # Stateless, JSON answers: each call stands alone, whichever worker of the gateway makes it.
    app = server().http_app(stateless_http=True, json_response=True)
    uvicorn.run(Recorder(app, path), host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
