"""What the middleware tests share: the request a model's host sends, a
store that can be made to fail, a Streamable HTTP client of an app in
memory, and the tests over HTTP (the session a record names, what the log
says of a request a client made up) that each framework's test module runs
on its own server."""

from __future__ import annotations

import contextlib
import logging
import unittest
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import httpx2
from starlette.applications import Starlette

from mcp_provenance import AI_INVOCATION_KEY, UI_KEY
from mcp_provenance.types import AuditRecord

#: The `_meta` of a tools/call a host's model chose, with a log-forging intent.
META: Dict[str, Any] = {
    AI_INVOCATION_KEY: {
        "invocationReason": {"text": "The user asked for the open orders"},
        "model": {"name": "example-model"},
        "userIntent": {"text": "show open orders\r\nINFO forged line"},
        "turnId": "turn-7",
        "x-vendor": {"kept": False},
    },
    UI_KEY: {"initiator": "model"},
    "vscode.conversationId": "conv-1",
}

#: What no log line may show of it.
INTENT = "show open orders"

#: What each record keeps of it, whatever the protocol version.
ASSERTED: Dict[str, Any] = {
    "turnId": "turn-7",
    "model": "example-model",
    "invocationReason": "The user asked for the open orders",
    "userIntent": "show open orders  INFO forged line",
    "userIntentRedacted": True,
    "correlation": [
        {"kind": "turn", "value": "turn-7", "key": AI_INVOCATION_KEY, "member": "turnId"},
        {"kind": "conversation", "value": "conv-1", "key": "vscode.conversationId"},
    ],
}


class Store:
    """An audit store; ``failing`` makes it raise, as a full disk would, with an error that
    quotes what it could not keep (as a database's "failing row contains" does)."""

    def __init__(self) -> None:
        self.records: List[AuditRecord] = []
        self.failing = False

    def keep(self, record: AuditRecord, request: Dict[str, Any]) -> None:
        if self.failing:
            raise OSError(f"the audit store is full, could not keep {record['clientAsserted'].get('userIntent')}")
        self.records.append(record)

    def calls(self) -> List[AuditRecord]:
        return [record for record in self.records if record["method"] == "tools/call"]


#: The last protocol version with sessions, and the first without (each request a connection).
HANDSHAKE, PER_REQUEST = "2025-11-25", "2026-07-28"

#: What a 2026-07-28 request carries in its `_meta` instead of a handshake.
PER_REQUEST_META: Dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": PER_REQUEST,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def tool_call(version: str) -> Dict[str, Any]:
    """A tools/call of `open_orders` with the host's envelope, in `version`'s form."""
    meta = {**META, **PER_REQUEST_META} if version == PER_REQUEST else META
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "open_orders", "arguments": {"region": "EU"}, "_meta": meta}}


class Http(contextlib.AsyncExitStack):
    """A Streamable HTTP client of an ASGI app, served in memory (its lifespan run, no socket)."""

    def __init__(self, app: Starlette) -> None:
        super().__init__()
        self.app = app

    async def __aenter__(self) -> "Http":
        await super().__aenter__()
        # The SDK logs each session it starts and ends, the client each request, at INFO: noise.
        for name in ("mcp.server", "httpx2"):
            noisy = logging.getLogger(name)
            self.callback(noisy.setLevel, noisy.level)
            noisy.setLevel(logging.WARNING)
        await self.enter_async_context(self.app.router.lifespan_context(self.app))
        # The SDKs accept a loopback Host only (DNS rebinding protection).
        self.client = await self.enter_async_context(
            httpx2.AsyncClient(transport=httpx2.ASGITransport(app=self.app), base_url="http://127.0.0.1:8000"))
        return self

    async def post(self, message: Dict[str, Any], version: str, session_id: Optional[str] = None) -> httpx2.Response:
        """Posts ``message``, saying it speaks ``version``, in session ``session_id`` if given."""
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": version}
        if version == PER_REQUEST:
            # From 2026-07-28 the headers name what the body calls, for routers that do not read it.
            headers["mcp-method"] = message["method"]
            if "name" in message.get("params", {}):
                headers["mcp-name"] = message["params"]["name"]
        if session_id is not None:
            headers["mcp-session-id"] = session_id
        return await self.client.post("/mcp", json=message, headers=headers)


# What `OverHttp` is mixed into, for the type checker; at run time no test case, so that no
# module that imports it runs its tests without a server.
if TYPE_CHECKING:
    _TestCase = unittest.IsolatedAsyncioTestCase
else:
    _TestCase = object


class OverHttp(_TestCase):
    """The middleware behind Streamable HTTP, where a client writes the headers and the ids: a
    record names the session the server issued, never one a client chose (AI-10), and a log
    line stays one line. A test case mixes it in, with its framework's app."""

    def app(self, store: Store, stateless: bool) -> Starlette:
        """A server of `open_orders` audited into ``store``, as a Streamable HTTP app."""
        raise NotImplementedError

    async def test_a_session_id_the_client_chose_is_not_recorded(self) -> None:
        # Stateless, and 2026-07-28 (no sessions) on a stateless or a stateful server.
        for stateless, version in ((True, HANDSHAKE), (True, PER_REQUEST), (False, PER_REQUEST)):
            with self.subTest(stateless=stateless, version=version):
                store = Store()
                async with Http(self.app(store, stateless)) as http:
                    answer = await http.post(tool_call(version), version, session_id="chosen-by-the-client")
                self.assertEqual(answer.status_code, 200)
                self.assertNotIn("mcp-session-id", answer.headers)
                [record] = store.calls()
                self.assertNotIn("sessionId", record["witnessed"])

    async def test_a_stateful_server_records_the_session_id_it_issued(self) -> None:
        store = Store()
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
        async with Http(self.app(store, stateless=False)) as http:
            issued = (await http.post(initialize, HANDSHAKE)).headers["mcp-session-id"]
            await http.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, HANDSHAKE, issued)
            answer = await http.post(tool_call(HANDSHAKE), HANDSHAKE, issued)
        self.assertEqual(answer.status_code, 200)
        self.assertEqual([r["method"] for r in store.records], ["initialize", "notifications/initialized", "tools/call"])
        # The initialize request included: the server issued the id in answer to it.
        self.assertEqual([r["witnessed"].get("sessionId") for r in store.records], [issued] * 3)

    async def test_a_refusal_is_logged_once_on_one_line_without_the_intent(self) -> None:
        store = Store()
        store.failing = True
        hostile = "1\r\nINFO forged line\u2028" + "x" * 1000
        with self.assertLogs("mcp_provenance", logging.DEBUG) as logged:
            async with Http(self.app(store, stateless=True)) as http:
                for request_id in (7, hostile):
                    answer = await http.post({**tool_call(HANDSHAKE), "id": request_id}, HANDSHAKE)
                    self.assertEqual(answer.json()["error"]["data"], {"code": "audit-failed"})
        # One line per refused request: the method, the id, the failure's type and code; no
        # traceback or failure text (the store's quotes the intent); a client's id escaped, cut.
        self.assertEqual([record.levelno for record in logged.records], [logging.ERROR] * 2)
        self.assertEqual([record.exc_info for record in logged.records], [None] * 2)
        lines = [record.getMessage() for record in logged.records]
        self.assertEqual(lines[0], "request tools/call (id 7) refused: its audit failed (OSError, code audit-failed)")
        self.assertIn("(id 1\\r\\nINFO forged line\\u2028xxx", lines[1])
        self.assertIn("code audit-failed", lines[1])
        self.assertLess(len(lines[1]), 200)
        self.assertEqual(lines[1].splitlines(), [lines[1]])
        self.assertNotIn(INTENT, " ".join(lines))
