"""The FastMCP middleware, driven by FastMCP's own client in memory, on
both protocol generations (2026-07-28 per-request, and the handshake era)."""

from __future__ import annotations

import unittest
from typing import List

from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError

from mcp_provenance import AI_INVOCATION_KEY
from mcp_provenance.fastmcp import ProvenanceMiddleware
from servers import ASSERTED, META, Store


def server(store: Store, ran: List[str]) -> FastMCP:
    made = FastMCP("orders")

    @made.tool
    def open_orders(region: str) -> str:
        ran.append(region)
        return f"3 open orders in {region}"

    made.add_middleware(ProvenanceMiddleware(audit=store.keep))
    return made


class FastMcpMiddleware(unittest.IsolatedAsyncioTestCase):
    async def test_every_call_is_audited_and_only_its_turn_id_echoed(self) -> None:
        for mode in ("auto", "legacy"):
            store, ran = Store(), []
            async with Client(server(store, ran), mode=mode) as client:
                result = await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
            self.assertEqual(ran, ["EU"])
            self.assertEqual(result.meta[AI_INVOCATION_KEY], {"turnId": "turn-7"}, mode)
            [record] = store.calls()
            self.assertEqual(record["tool"], "open_orders")
            self.assertIsInstance(record["requestId"], int)
            self.assertEqual(record["clientAsserted"], ASSERTED)
            self.assertEqual(record["hostAttested"], {"initiator": "model"})
            self.assertEqual(record["diagnostics"][0]["rule"], "AI-8")
            self.assertTrue(record["valid"])
            self.assertIn("receivedAt", record["witnessed"])
            # A session's id where there are sessions; none is made up per request.
            self.assertEqual("sessionId" in record["witnessed"], mode == "legacy", mode)
            # The other messages (discovery or the handshake, the tool list) are audited too.
            self.assertGreater(len(store.records), 1)
            if mode == "legacy":
                self.assertIn("notifications/initialized", [r["method"] for r in store.records])

    async def test_a_request_that_cannot_be_audited_is_refused_and_not_served(self) -> None:
        store, ran = Store(), []
        async with Client(server(store, ran)) as client:
            store.failing = True
            with self.assertRaises(MCPError) as refused:
                await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
        self.assertEqual(refused.exception.error.code, -32603)
        self.assertEqual(refused.exception.error.message, "the request could not be audited")
        self.assertEqual(refused.exception.error.data, {"code": "audit-failed"})
        self.assertEqual(ran, [])

    async def test_a_call_without_an_envelope_is_served_and_recorded_as_such(self) -> None:
        store, ran = Store(), []
        async with Client(server(store, ran), mode="legacy") as client:
            result = await client.call_tool_mcp("open_orders", {"region": "US"})
        # FastMCP's own `_meta` goes on as FastMCP made it; nothing is added to it.
        self.assertEqual(result.meta, {"fastmcp": {"wrap_result": True}})
        self.assertEqual(store.calls()[0]["clientAsserted"], {})
        self.assertEqual(ran, ["US"])

    def test_a_bad_policy_fails_when_the_middleware_is_made(self) -> None:
        with self.assertRaises(ValueError) as bad:
            ProvenanceMiddleware(audit=Store().keep, policy={"maxIntentBytes": 3})
        self.assertEqual(getattr(bad.exception, "code", None), "invalid-limit")


if __name__ == "__main__":
    unittest.main()
