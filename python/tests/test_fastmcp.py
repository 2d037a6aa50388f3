"""The FastMCP middleware, driven by FastMCP's own client in memory, on
both protocol generations (2026-07-28 per-request, and the handshake era),
and over Streamable HTTP (in memory too), where a client writes the
headers and the ids."""

from __future__ import annotations

import logging
import unittest
from typing import Any, Dict, List

from fastmcp import Client, Context, FastMCP
from fastmcp.prompts.base import PromptResult
from fastmcp.resources.base import ResourceResult
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette

from mcp_provenance import AI_INVOCATION_KEY
from mcp_provenance.fastmcp import ProvenanceMiddleware
from servers import ASSERTED, META, OverHttp, Store


def server(store: Store, ran: List[str]) -> FastMCP:
    made = FastMCP("orders")

    @made.tool
    def open_orders(region: str) -> str:
        ran.append(region)
        return f"3 open orders in {region}"

    made.add_middleware(ProvenanceMiddleware(audit=store.keep))
    return made


def request_meta(ctx: Context) -> Dict[str, Any]:
    """The request's `_meta`, whole: what a careless handler hands back."""
    return dict((ctx.request_context.meta if ctx.request_context is not None else None) or {})


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
            # In memory the server issues no session id, and FastMCP's own (made up) is not recorded.
            self.assertNotIn("sessionId", record["witnessed"], mode)
            # The other messages (discovery or the handshake, the tool list) are audited too.
            self.assertGreater(len(store.records), 1)
            if mode == "legacy":
                self.assertIn("notifications/initialized", [r["method"] for r in store.records])

    async def test_a_request_that_cannot_be_audited_is_refused_and_not_served(self) -> None:
        store, ran = Store(), []
        async with Client(server(store, ran)) as client:
            store.failing = True
            with self.assertRaises(MCPError) as refused, self.assertLogs("mcp_provenance", logging.ERROR):
                await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
        self.assertEqual(refused.exception.error.code, -32603)
        self.assertEqual(refused.exception.error.message, "the request could not be audited")
        self.assertEqual(refused.exception.error.data, {"code": "audit-failed"})
        self.assertEqual(ran, [])

    async def test_a_prompt_or_a_resource_echoes_the_turn_id_alone(self) -> None:
        made = server(Store(), [])

        @made.prompt
        def brief(ctx: Context) -> PromptResult:
            return PromptResult("Summarize the open orders", meta=request_meta(ctx))

        @made.resource("orders://open")
        def open_orders(ctx: Context) -> ResourceResult:
            return ResourceResult("3 open orders", meta=request_meta(ctx))

        for mode in ("auto", "legacy"):
            async with Client(made, mode=mode) as client:
                prompt = await client.get_prompt_mcp("brief", meta=META)
                resource = await client.read_resource_mcp("orders://open", meta=META)
            for result in (prompt, resource):
                self.assertEqual((result.meta or {})[AI_INVOCATION_KEY], {"turnId": "turn-7"}, mode)

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


class FastMcpOverHttp(OverHttp, unittest.IsolatedAsyncioTestCase):
    def app(self, store: Store, stateless: bool) -> Starlette:
        return server(store, []).http_app(stateless_http=stateless, json_response=True)


if __name__ == "__main__":
    unittest.main()
