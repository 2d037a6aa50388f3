"""mcp_provenance.otel: each audit record a span, with exactly the attributes
the npm package's `otelAttributes` gives for the same record (node runs
pkg/dist/otel.mjs on it), exported over OTLP/HTTP to a receiver on
127.0.0.1 where the records of two worker processes meet."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

import httpx2
from fastmcp import Client, FastMCP
from mcp import Client as McpClient
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from asgi_apps import lifespan
from mcp_provenance import ProvenanceError, audit_record
from mcp_provenance._audit import AuditSink
from mcp_provenance.asgi import ProvenanceMiddleware as AsgiMiddleware
from mcp_provenance.fastmcp import ProvenanceMiddleware
from mcp_provenance.mcp import provenance_middleware
from mcp_provenance.otel import otel_account_sink, otel_attributes, otel_sink
from mcp_provenance.types import Account, AuditRecord, MessageAccount, Policy
from otlp_receiver import Receiver
from servers import ASSERTED, HANDSHAKE, INTENT, META, PER_REQUEST, tool_call

ROOT = Path(__file__).resolve().parents[2]
NPM_OTEL = ROOT / "pkg" / "dist" / "otel.mjs"

#: The caller's span, which its client did not sample.
TRACE_ID, PARENT_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
UNSAMPLED = f"00-{TRACE_ID}-{PARENT_ID}-00"

#: What the npm entry gives for it: `node` reads records on stdin, writes their attributes.
NPM = """
import { otelAttributes } from %s;
let text = "";
process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
  const { records, freeText } = JSON.parse(text);
  process.stdout.write(JSON.stringify(records.map((record) => otelAttributes(record, { freeText }))));
});
"""


def npm_attributes(records: List[AuditRecord], free_text: bool = False) -> List[Dict[str, Any]]:
    """What the npm package's `otelAttributes` gives for each record."""
    if not NPM_OTEL.exists():
        raise AssertionError(f"{NPM_OTEL} is missing: `make build` builds the npm package")
    run = subprocess.run(["node", "--input-type=module", "-e", NPM % json.dumps(NPM_OTEL.as_uri())],
                         input=json.dumps({"records": records, "freeText": free_text}),
                         capture_output=True, text=True, check=True)
    answer: List[Dict[str, Any]] = json.loads(run.stdout)
    return answer


def exporting(url: str, instance: str) -> TracerProvider:
    """A provider as a worker has one: batches exported over OTLP/HTTP to ``url``."""
    provider = TracerProvider(resource=Resource.create({"service.name": "orders", "service.instance.id": instance}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    return provider


def span_name(record: AuditRecord) -> str:
    return f"{record['method']} {record['tool']}" if "tool" in record else record["method"]


def fastmcp_server(audit: Optional[AuditSink], ran: List[str]) -> FastMCP:
    server = FastMCP("orders")
    if audit is not None:
        server.add_middleware(ProvenanceMiddleware(audit=audit))

    @server.tool
    def open_orders(region: str) -> str:
        ran.append(region)
        return f"3 open orders in {region}"

    return server


def mcp_server(audit: AuditSink) -> MCPServer:
    server = MCPServer("orders", middleware=[provenance_middleware(audit=audit)])

    @server.tool()
    def open_orders(region: str) -> str:
        return f"3 open orders in {region}"

    return server


async def serve(framework: str, audit: AuditSink) -> None:
    """Two calls through a server of ``framework`` in memory: one with the host's envelope and
    the caller's trace, one without an envelope."""
    meta: Any = {**META, "traceparent": UNSAMPLED}
    if framework == "fastmcp":
        async with Client(fastmcp_server(audit, [])) as client:
            await client.call_tool("open_orders", {"region": "EU"}, meta=meta)
            await client.call_tool("open_orders", {"region": "US"})
    else:
        async with McpClient(mcp_server(audit)) as sdk:
            await sdk.call_tool("open_orders", {"region": "EU"}, meta=meta)
            await sdk.call_tool("open_orders", {"region": "US"})


def worker(url: str, instance: str, framework: str) -> None:
    """A worker process: serves through the sink, flushes, and prints the records it exported."""
    provider = exporting(url, instance)
    sink = otel_sink(provider)
    records: List[AuditRecord] = []

    def audit(record: AuditRecord, request: Dict[str, Any]) -> None:
        records.append(record)
        sink(record, request)

    asyncio.run(serve(framework, audit))
    provider.shutdown()
    print(json.dumps(records))


class Attributes(unittest.TestCase):
    def test_a_record_has_the_attributes_the_npm_entry_names(self) -> None:
        request = {**tool_call(HANDSHAKE), "id": 12345678901234567890}
        record = audit_record(request, {"sessionId": "s-1", "principal": "alice", "receivedAt": "2026-12-02T00:00:00Z"})
        self.assertEqual(otel_attributes(record), {
            "mcp.method.name": "tools/call",
            "mcp.session.id": "s-1",
            # All its digits, where a JavaScript number keeps 17.
            "jsonrpc.request.id": "12345678901234567890",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "open_orders",
            "mcp_provenance.client_asserted.turn_id": "turn-7",
            "mcp_provenance.client_asserted.model": "example-model",
            "mcp_provenance.client_asserted.user_intent_redacted": True,
            "mcp_provenance.host_attested.initiator": "model",
            "mcp_provenance.witnessed.principal": "alice",
            "mcp_provenance.valid": True,
            "mcp_provenance.diagnostics": ["AI-8 unknown-field", "AI-13 control-character"],
            "mcp_provenance.client_asserted.conversation_ids": ["conv-1"],
            "mcp_provenance.client_asserted.turn_ids": ["turn-7"],
            "mcp_provenance.client_asserted.correlation_keys": ["io.modelcontextprotocol/aiInvocation", "vscode.conversationId"],
        })

    def test_every_record_has_exactly_the_npm_entrys_attributes(self) -> None:
        policy: Policy = {"correlationKeys": {"acme/user": "user", "acme/org": "organization", "acme/request": "request"}}
        meta = {**META, "traceparent": UNSAMPLED, "acme/user": "u-1", "acme/org": "o-1", "acme/request": "r-1"}
        requests: List[Dict[str, Any]] = [
            tool_call(HANDSHAKE),
            tool_call(PER_REQUEST),
            {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "q", "_meta": meta}},
            {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "brief", "_meta": {
                "io.modelcontextprotocol/aiInvocation": {"turnId": 7, "userIntent": {"redacted": True}}}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        ]
        records = [audit_record(request, {"sessionId": "s-1", "policy": policy}) for request in requests]
        records += [audit_record(request, {"principal": "alice", "policy": {"userIntent": "redact"}}) for request in requests]
        for free_text in (False, True):
            with self.subTest(free_text=free_text):
                self.assertEqual([otel_attributes(r, free_text=free_text) for r in records], npm_attributes(records, free_text))

    def test_a_request_id_is_written_as_javascript_writes_it(self) -> None:
        ids = [7, -3, "7", "", 1.0, -0.0, 1.5, -2.5e-7, 1e-7, 0.000001, 1.23e-18, 123456789012.5, 1e20, 1e21, 2.5e300]
        records = [audit_record({"jsonrpc": "2.0", "id": id, "method": "ping"}) for id in ids]
        written = [otel_attributes(record)["jsonrpc.request.id"] for record in records]
        self.assertEqual(written, [a["jsonrpc.request.id"] for a in npm_attributes(records)])
        self.assertEqual(written[4:10], ["1", "0", "1.5", "-2.5e-7", "1e-7", "0.000001"])


class Export(unittest.TestCase):
    def test_the_records_of_two_workers_meet_in_one_receiver(self) -> None:
        with Receiver() as receiver:
            workers = [subprocess.Popen([sys.executable, "-c", "import sys, test_otel; test_otel.worker(*sys.argv[1:])",
                                         receiver.url, instance, framework],
                                        cwd=Path(__file__).parent, stdout=subprocess.PIPE, text=True)
                       for instance, framework in (("worker-1", "fastmcp"), ("worker-2", "mcp"))]
            # Each prints its records as one line of JSON, last.
            printed = [process.communicate()[0].splitlines()[-1] for process in workers]
        self.assertEqual([process.returncode for process in workers], [0, 0])
        for instance, output in zip(("worker-1", "worker-2"), printed):
            with self.subTest(instance=instance):
                records: List[AuditRecord] = json.loads(output)
                spans = [s for s in receiver.spans if s.resource["service.instance.id"] == instance]
                # Each record a span, in the order audited; free text absent (the default).
                self.assertEqual([(s.name, s.kind, s.scope, s.attributes) for s in spans],
                                 [(span_name(r), "SERVER", "mcp_provenance", a) for r, a in zip(records, npm_attributes(records))])
                self.assertNotIn(INTENT, json.dumps([s.attributes for s in spans]))
                # The call that named its caller's (unsampled) span continues its trace; the rest are roots.
                [traced] = [s for s in spans if "mcp_provenance.client_asserted.model" in s.attributes]
                self.assertEqual((traced.trace_id, traced.parent_span_id), (TRACE_ID, PARENT_ID))
                self.assertEqual([s.parent_span_id for s in spans if s is not traced], [""] * (len(spans) - 1))
                self.assertEqual(len({s.trace_id for s in spans}), len(spans))
        self.assertEqual(len(receiver.spans), sum(len(json.loads(output)) for output in printed))

    def test_free_text_is_exported_only_when_asked(self) -> None:
        record = audit_record(tool_call(HANDSHAKE))
        with Receiver() as receiver:
            provider = exporting(receiver.url, "worker-1")
            otel_sink(provider)(record, tool_call(HANDSHAKE))
            otel_sink(provider, free_text=True)(record, tool_call(HANDSHAKE))
            provider.shutdown()
        default, asked = receiver.spans
        self.assertEqual(default.attributes, npm_attributes([record])[0])
        self.assertEqual(asked.attributes, npm_attributes([record], free_text=True)[0])
        self.assertEqual({key: value for key, value in asked.attributes.items() if key not in default.attributes}, {
            "mcp_provenance.client_asserted.invocation_reason": ASSERTED["invocationReason"],
            "mcp_provenance.client_asserted.user_intent": ASSERTED["userIntent"],
        })

    def test_a_span_is_the_child_of_the_span_its_request_names_and_of_no_other(self) -> None:
        requests = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "q", "_meta": {
            "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-{flags}"}}} for flags in ("00", "01")]
        requests.append({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "q"}})
        with Receiver() as receiver:
            provider = exporting(receiver.url, "worker-1")
            sink = otel_sink(provider)
            # A span current where the sink runs (an HTTP server's, say) is no parent of the record's.
            with provider.get_tracer("http").start_as_current_span("POST /mcp") as current:
                for request in requests:
                    sink(audit_record(request), request)
            provider.shutdown()
        audited = [s for s in receiver.spans if s.name == "tools/call q"]
        self.assertEqual([(s.trace_id, s.parent_span_id) for s in audited[:2]], [(TRACE_ID, PARENT_ID)] * 2)
        self.assertEqual(audited[2].parent_span_id, "")
        self.assertNotEqual(audited[2].trace_id, f"{current.get_span_context().trace_id:032x}")

    def test_a_record_whose_span_is_not_recorded_refuses_its_request(self) -> None:
        # A sampler that drops spans, and no provider at all (the global one of an unconfigured process).
        for sink in (otel_sink(TracerProvider(sampler=ALWAYS_OFF)), otel_sink()):
            with self.assertRaises(ProvenanceError) as raised:
                sink(audit_record(tool_call(HANDSHAKE)), tool_call(HANDSHAKE))
            self.assertEqual(raised.exception.code, "span-not-recorded")
        ran: List[str] = []

        async def call() -> None:
            async with Client(fastmcp_server(otel_sink(TracerProvider(sampler=ALWAYS_OFF)), ran)) as client:
                await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)

        # Nothing is served unaudited: not even the client's first request, so it cannot connect.
        with self.assertRaises(MCPError), self.assertLogs("mcp_provenance", logging.ERROR) as logged:
            asyncio.run(call())
        self.assertEqual({line.partition(" refused: ")[2] for line in logged.output},
                         {"its audit failed (ProvenanceError, code span-not-recorded)"})
        self.assertEqual(ran, [])
        self.assertIsInstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)

    def test_without_opentelemetry_the_import_says_what_to_install(self) -> None:
        blocked = "import sys; sys.modules['opentelemetry'] = None; import mcp_provenance.otel"
        run = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, check=False,
                             env={**os.environ, "PYTHONWARNINGS": "ignore"})
        self.assertEqual(run.returncode, 1)
        self.assertEqual(run.stderr.strip().splitlines()[-1],
                         "ImportError: mcp_provenance.otel needs OpenTelemetry: "
                         "pip install 'mcp-provenance[otel]' (its SDK and OTLP exporter)")


class OverAsgi(unittest.IsolatedAsyncioTestCase):
    async def test_the_asgi_middleware_exports_each_request_that_goes_on(self) -> None:
        accounts: List[MessageAccount] = []
        bare = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "open_orders", "_meta": {"userIntent": INTENT}}}
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": HANDSHAKE}
        with Receiver() as receiver:
            provider = exporting(receiver.url, "worker-1")
            sink = otel_account_sink(provider)

            def audit(account: Account, line: str) -> None:
                # Each exchange's outcome goes to the sink too, which exports nothing of it.
                if account["kind"] != "outcome":
                    accounts.append(account)
                sink(account, line)

            ran: List[str] = []
            app = AsgiMiddleware(fastmcp_server(None, ran).http_app(stateless_http=True, json_response=True),
                                 policy={"userIntent": "redact"}, audit=audit)
            async with lifespan(app), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                                         base_url="http://127.0.0.1:8000") as client:
                answers = [await client.post("/mcp", json=body, headers=headers) for body in (tool_call(HANDSHAKE), bare)]
            # The last batch goes out as a worker's does at exit, off the event loop.
            await asyncio.to_thread(provider.shutdown)
        self.assertEqual([answer.status_code for answer in answers], [200, 200])
        self.assertEqual(answers[1].json()["error"]["data"], {"code": "bare-user-intent"})
        self.assertEqual(ran, ["EU"])
        # Both reached the sink; the refused one, which has no record, is not exported.
        self.assertEqual([account.get("refused") for account in accounts], [None, "bare-user-intent"])
        [expected] = await asyncio.to_thread(npm_attributes, [accounts[0]["record"]])
        self.assertEqual([(s.name, s.kind, s.attributes) for s in receiver.spans],
                         [("tools/call open_orders", "SERVER", expected)])


if __name__ == "__main__":
    unittest.main()
