"""The `mcp` SDK middleware, driven by the SDK's own client in memory, on
both protocol generations (2026-07-28 per-request, and the handshake era),
and over Streamable HTTP (in memory too), where a client writes the
headers and the ids."""

from __future__ import annotations

import logging
import unittest
from typing import Any, Dict, List

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette

from mcp_provenance import AI_INVOCATION_KEY
from mcp_provenance.mcp import provenance_middleware
from mcp_provenance.types import AuditRecord
from servers import ASSERTED, META, OverHttp, Store


def server(store: Store, ran: List[str]) -> MCPServer:
    made = MCPServer("orders", middleware=[provenance_middleware(audit=store.keep)])

    @made.tool()
    def open_orders(region: str) -> str:
        ran.append(region)
        return f"3 open orders in {region}"

    return made


class McpMiddleware(unittest.IsolatedAsyncioTestCase):
    async def test_every_call_is_audited_and_only_its_turn_id_echoed(self) -> None:
        for mode in ("auto", "legacy"):
            store, ran = Store(), []
            async with Client(server(store, ran), mode=mode) as client:
                result = await client.call_tool("open_orders", {"region": "EU"}, meta=META)
            self.assertEqual(ran, ["EU"])
            self.assertEqual((result.meta or {})[AI_INVOCATION_KEY], {"turnId": "turn-7"}, mode)
            [record] = store.calls()
            self.assertEqual(record["tool"], "open_orders")
            self.assertIsInstance(record["requestId"], int)
            self.assertEqual(record["clientAsserted"], ASSERTED)
            self.assertEqual(record["hostAttested"], {"initiator": "model"})
            self.assertTrue(record["valid"])
            self.assertGreater(len(store.records), 1, mode)
            if mode == "legacy":
                self.assertIn("notifications/initialized", [r["method"] for r in store.records])

    async def test_a_result_without_a_turn_to_echo_is_left_as_it_was(self) -> None:
        store, ran = Store(), []
        made = server(store, ran)
        async with Client(made, mode="legacy") as client:
            result = await client.call_tool("open_orders", {"region": "US"})
        self.assertIsNone(result.meta)
        self.assertEqual(store.calls()[0]["clientAsserted"], {})

    async def test_a_request_that_cannot_be_audited_is_refused_and_not_served(self) -> None:
        store, ran = Store(), []
        async with Client(server(store, ran)) as client:
            store.failing = True
            with self.assertRaises(MCPError) as refused, self.assertLogs("mcp_provenance", logging.ERROR):
                await client.call_tool("open_orders", {"region": "EU"}, meta=META)
        self.assertEqual(refused.exception.error.code, -32603)
        self.assertEqual(refused.exception.error.data, {"code": "audit-failed"})
        self.assertEqual(ran, [])

    async def test_an_async_audit_is_awaited_before_the_tool_runs(self) -> None:
        ran: List[str] = []
        order: List[str] = []

        async def keep(record: AuditRecord, request: Dict[str, Any]) -> None:
            order.append(f"audited {record['method']}")

        made = MCPServer("orders", middleware=[provenance_middleware(audit=keep)])

        @made.tool()
        def open_orders(region: str) -> str:
            order.append("served")
            ran.append(region)
            return "ok"

        async with Client(made) as client:
            await client.call_tool("open_orders", {"region": "EU"}, meta=META)
        self.assertLess(order.index("audited tools/call"), order.index("served"))


class McpOverHttp(OverHttp, unittest.IsolatedAsyncioTestCase):
    def app(self, store: Store, stateless: bool) -> Starlette:
        return server(store, []).streamable_http_app(stateless_http=stateless, json_response=True)


if __name__ == "__main__":
    unittest.main()
