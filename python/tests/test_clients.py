"""The client side: a FastMCP client and an `mcp` SDK client attach the
SEP-2817 envelope to `call_tool` through `attach_invocation` (the `_meta` of
the request it gives is `call_tool`'s `meta`), against servers in memory
that carry the package's middlewares: the server's record holds what the
client attached, and the client's result echoes only its `turnId`."""

from __future__ import annotations

import unittest
from typing import Any, Dict, List

from fastmcp import Client, FastMCP
from mcp import Client as McpClient
from mcp.server.mcpserver import MCPServer

from mcp_provenance import AI_INVOCATION_KEY, ProvenanceTypeError, attach_invocation
from mcp_provenance.fastmcp import ProvenanceMiddleware
from mcp_provenance.mcp import provenance_middleware
from mcp_provenance.types import AiInvocation
from servers import Store

#: What a host's model says of the call it chose.
INVOCATION: AiInvocation = {
    "invocationReason": {"text": "The user asked for the open orders"},
    "model": {"name": "example-model"},
    "userIntent": {"text": "show open orders\r\nINFO forged line"},
    "turnId": "turn-7",
}

#: The client's own `_meta`, which the envelope joins.
OWN_META: Dict[str, Any] = {"vscode.conversationId": "conv-1"}

#: What the server's record keeps of the call.
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


#: The request `attach_invocation` is given: its method, and the `_meta` the client has already.
REQUEST: Dict[str, Any] = {"method": "tools/call", "params": {"_meta": OWN_META}}


def fastmcp_server(store: Store, ran: List[str]) -> FastMCP:
    server = FastMCP("orders")
    server.add_middleware(ProvenanceMiddleware(audit=store.keep))

    @server.tool
    def open_orders(region: str) -> str:
        ran.append(region)
        return f"3 open orders in {region}"

    return server


def mcp_server(store: Store, ran: List[str]) -> MCPServer:
    server = MCPServer("orders", middleware=[provenance_middleware(audit=store.keep)])

    @server.tool()
    def open_orders(region: str) -> str:
        ran.append(region)
        return f"3 open orders in {region}"

    return server


class Envelope(unittest.TestCase):
    def test_the_meta_holds_the_clients_own_keys_and_the_envelope_as_given(self) -> None:
        meta = attach_invocation(REQUEST, INVOCATION)["params"]["_meta"]
        self.assertEqual(meta, {"vscode.conversationId": "conv-1", AI_INVOCATION_KEY: INVOCATION})
        self.assertEqual(REQUEST["params"]["_meta"], OWN_META)

    def test_an_invalid_invocation_raises_so_no_call_carries_it(self) -> None:
        with self.assertRaises(ProvenanceTypeError) as refused:
            attach_invocation(REQUEST, {"turnId": 7})  # type: ignore[typeddict-item]
        self.assertEqual(refused.exception.code, "invalid-invocation")


class FastMcpClient(unittest.IsolatedAsyncioTestCase):
    async def test_call_tool_carries_the_envelope_and_gets_only_its_turn_id_back(self) -> None:
        for mode in ("auto", "legacy"):
            store = Store()
            ran: List[str] = []
            meta = attach_invocation(REQUEST, INVOCATION)["params"]["_meta"]
            async with Client(fastmcp_server(store, ran), mode=mode) as client:
                result = await client.call_tool("open_orders", {"region": "EU"}, meta=meta)
            self.assertEqual(ran, ["EU"])
            [record] = store.calls()
            self.assertEqual(record["clientAsserted"], ASSERTED, mode)
            self.assertEqual(result.meta[AI_INVOCATION_KEY], {"turnId": "turn-7"}, mode)


class McpClientSession(unittest.IsolatedAsyncioTestCase):
    async def test_call_tool_carries_the_envelope_and_gets_only_its_turn_id_back(self) -> None:
        for mode in ("auto", "legacy"):
            store = Store()
            ran: List[str] = []
            meta = attach_invocation(REQUEST, INVOCATION)["params"]["_meta"]
            async with McpClient(mcp_server(store, ran), mode=mode) as client:
                # The client, and the `ClientSession` under it: the same `meta`.
                results = [await client.call_tool("open_orders", {"region": "EU"}, meta=meta),
                           await client.session.call_tool("open_orders", {"region": "US"}, meta=meta)]
            self.assertEqual(ran, ["EU", "US"])
            self.assertEqual([record["clientAsserted"] for record in store.calls()], [ASSERTED] * 2, mode)
            self.assertEqual([(result.meta or {})[AI_INVOCATION_KEY] for result in results], [{"turnId": "turn-7"}] * 2, mode)


if __name__ == "__main__":
    unittest.main()
