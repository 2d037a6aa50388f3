"""The gateway the sessions test serves from two uvicorn processes: the ContextForge test's
FastMCP server (``contextforge_upstream.py``, whose tool is ``open_orders``) behind the
package's middleware, which shares its witnessed sessions through the Redis
``MCP_PROVENANCE_SESSIONS`` names and appends each account's line to the file ``AUDIT_FILE``
names.

    MCP_PROVENANCE_SESSIONS=redis://… AUDIT_FILE=… python -m uvicorn sessions_app:app --port PORT

The app's sessions are its own, and shared by its processes, as a server that keeps its
sessions in a store of its own does (ContextForge keeps them in Redis): here, the FastMCP
server is stateless, and :class:`Sessions` in front of it issues a session id in its answer
to ``initialize`` and accepts a DELETE, so that any process serves a request in any session.
What the middleware must witness is what the app issued, through whichever process.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any, MutableMapping

from contextforge_upstream import App, Message, Receive, Send, read_whole, server

from mcp_provenance.asgi import ProvenanceMiddleware


class Sessions:
    """The app's sessions, which every process of it serves: a session id issued in the
    answer to ``initialize``, a DELETE accepted (204)."""

    def __init__(self, app: App) -> None:
        self._app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "DELETE"):
            return await self._app(scope, receive, send)
        body, replay = await read_whole(receive)
        if scope["method"] == "DELETE":
            await send({"type": "http.response.start", "status": 204, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        issued = json.loads(body).get("method") == "initialize"
        session = uuid.uuid4().hex.encode()

        async def issuing(message: Message) -> None:
            if issued and message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"mcp-session-id", session)]}
            await send(message)

        await self._app(scope, replay, issuing)


def audit(account: Any, line: str) -> None:
    with open(os.environ["AUDIT_FILE"], "a", encoding="utf-8") as audited:
        audited.write(line + "\n")


app = ProvenanceMiddleware(Sessions(server().http_app(stateless_http=True, json_response=True)),
                           audit=audit, paths=["/mcp"], sessions=os.environ["MCP_PROVENANCE_SESSIONS"])
