"""The middleware's metrics (``metrics=``, :mod:`mcp_provenance.prometheus`) and its log lines:
``conformance/metrics.json`` through the ASGI middleware into a registry of its own, the
default registry an exporter reads, accounts made for metrics without a sink, and a refusal's
one line on the ``mcp_provenance`` logger, its code and never the message's content."""

from __future__ import annotations

import asyncio
import json
import logging
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from asgi_apps import Recorder, exchange
from mcp_provenance import ProvenanceError
from mcp_provenance.asgi import ProvenanceMiddleware
from mcp_provenance.metrics import Counts
from mcp_provenance.prometheus import PrometheusMetrics, prometheus_metrics
from mcp_provenance.types import Account

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "metrics.json"

#: The series a metrics vector compares: every sample of these but ``_created``, ``_bucket``
#: and ``_sum`` (a time), whose value is not 0.
SERIES = ("mcp_provenance_messages", "mcp_provenance_refusals", "mcp_provenance_redactions",
          "mcp_provenance_audit_failures", "mcp_provenance_filter_seconds")

#: An intent that must never reach a log line.
SECRET = "my salary is 90000"

HEADERS = [(b"content-type", b"application/json")]


def samples(registry: CollectorRegistry) -> Dict[str, Any]:
    """The registry's samples of ``SERIES`` as the vectors name them: the sample's name, its
    labels in name order as Prometheus writes them, to its value (an integer)."""
    found: Dict[str, Any] = {}
    for family in registry.collect():
        if family.name not in SERIES:
            continue
        for sample in family.samples:
            if sample.name.endswith(("_created", "_bucket", "_sum")) or sample.value == 0:
                continue
            labels = ",".join(f'{name}="{value}"' for name, value in sorted(sample.labels.items()))
            value = int(sample.value) if sample.value == int(sample.value) else sample.value
            found[f"{sample.name}{{{labels}}}" if labels else sample.name] = value
    return found


class VectorSink:
    """The audit sink a metrics vector describes: it keeps every account, but raises (with
    its code) on a body's accounts when the exchange says ``auditFails``, and on the
    exchange's outcome when it says ``outcomeFails``."""

    def __init__(self) -> None:
        self.fails: Optional[str] = None
        self.outcome_fails = False

    def __call__(self, account: Account, line: str) -> None:
        if account["kind"] == "outcome":
            if self.outcome_fails:
                raise ProvenanceError("the outcome store is down", "outcome-store-down")
        elif self.fails is not None:
            raise ProvenanceError("the audit store is down", self.fails)


def metered(vector: Dict[str, Any]) -> Dict[str, Any]:
    """A metrics vector's exchanges through one middleware, with metrics into a registry of
    their own: the samples they made."""
    registry = CollectorRegistry()
    sink = VectorSink()
    options = dict(vector.get("options") or {})
    own = {"maxBodyBytes": "max_body_bytes", "maxAnswerBytes": "max_answer_bytes", "echo": "echo", "paths": "paths"}
    keywords = {own[name]: options.pop(name) for name in list(options) if name in own}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while (await receive()).get("more_body", False):
            pass
        answer = app.answer  # type: ignore[attr-defined]
        pieces = [piece.encode() for piece in answer.get("pieces", [])]
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in answer.get("headers", [])]
        await send({"type": "http.response.start", "status": answer.get("status", 200), "headers": headers})
        for at, piece in enumerate(pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": at < len(pieces) - 1})
        if not pieces:
            await send({"type": "http.response.body", "body": b""})

    middleware = ProvenanceMiddleware(app, options=options or None, audit=sink if vector.get("audit", True) else None,
                                      metrics=PrometheusMetrics(registry), **keywords)
    for given in vector["input"]:
        sink.fails, sink.outcome_fails = given.get("auditFails"), given.get("outcomeFails", False)
        app.answer = given.get("answer", {})  # type: ignore[attr-defined]
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in given.get("headers", [])]
        sent: List[Dict[str, Any]] = []

        async def receive(body: bytes = given["body"].encode()) -> Dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: Dict[str, Any]) -> None:
            sent.append(message)

        asyncio.run(middleware({"type": "http", "method": given.get("method", "POST"), "path": given.get("path", "/mcp"),
                                "headers": headers, "query_string": b"", "root_path": ""}, receive, send))
    return samples(registry)


def vectors() -> List[Dict[str, Any]]:
    read: List[Dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))
    return read


class Vectors(unittest.TestCase):
    def test_every_metrics_vector_counts_exactly_what_it_expects(self) -> None:
        read = vectors()
        self.assertGreaterEqual(len(read), 8)
        for vector in read:
            with self.subTest(vector["id"]):
                self.assertEqual(vector["op"], "metrics")
                self.assertEqual(metered(vector), vector["expect"], vector["description"])

    def test_the_vectors_show_every_series_and_label(self) -> None:
        shown = " ".join(name for vector in vectors() for name in vector["expect"])
        for part in ('mcp_provenance_messages_total{kind="request",verdict="forwarded"}', 'verdict="refused"',
                     'kind="notification"', 'kind="response"', 'kind="malformed"', "mcp_provenance_refusals_total{code=",
                     "mcp_provenance_redactions_total", "mcp_provenance_audit_failures_total",
                     "mcp_provenance_filter_seconds_count"):
            self.assertIn(part, shown)


class Prometheus(unittest.TestCase):
    def test_the_series_are_in_the_default_registry_once_however_many_middlewares(self) -> None:
        metrics = prometheus_metrics()
        self.assertIs(prometheus_metrics(REGISTRY), metrics)
        before = REGISTRY.get_sample_value("mcp_provenance_messages_total", {"kind": "request", "verdict": "forwarded"}) or 0
        for _ in range(2):
            guarded = ProvenanceMiddleware(Recorder(), metrics=prometheus_metrics())
            asyncio.run(exchange(guarded, b'{"jsonrpc":"2.0","id":1,"method":"ping"}'))
        after = REGISTRY.get_sample_value("mcp_provenance_messages_total", {"kind": "request", "verdict": "forwarded"})
        self.assertEqual(after, before + 2)
        text = generate_latest(REGISTRY).decode()
        for name, kind in (("mcp_provenance_messages_total", "counter"), ("mcp_provenance_refusals_total", "counter"),
                           ("mcp_provenance_redactions_total", "counter"), ("mcp_provenance_audit_failures_total", "counter"),
                           ("mcp_provenance_filter_seconds", "histogram")):
            self.assertIn(f"\n# TYPE {name} {kind}\n", text)
        self.assertIn('mcp_provenance_filter_seconds_bucket{le="1e-05"}', text)

    def test_a_second_set_of_series_in_one_registry_is_refused(self) -> None:
        registry = CollectorRegistry()
        PrometheusMetrics(registry)
        with self.assertRaises(ValueError):
            PrometheusMetrics(registry)

    def test_metrics_without_a_sink_count_the_accounts_made_for_them(self) -> None:
        counts = Counts()
        guarded = ProvenanceMiddleware(Recorder(), policy={"userIntent": "redact"}, metrics=counts)
        call = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":'
                '{"io.modelcontextprotocol/aiInvocation":{"turnId":"t-1","userIntent":{"text":"%s"}}}}}' % SECRET)
        asyncio.run(exchange(guarded, call.encode()))
        self.assertEqual({name: value for name, value in counts.samples.items() if not name.endswith("_sum")},
                         {'mcp_provenance_messages_total{kind="request",verdict="forwarded"}': 1,
                          "mcp_provenance_redactions_total": 1, "mcp_provenance_filter_seconds_count": 1})

    def test_a_metrics_object_without_the_four_methods_is_refused(self) -> None:
        class Half:
            def observe(self, account: Any) -> None: ...
            def failed(self) -> None: ...

        with self.assertRaises(ProvenanceError) as bad:
            ProvenanceMiddleware(Recorder(), metrics=Half())
        self.assertEqual(bad.exception.code, "invalid-option")


def bare(secret: str, request_id: int = 1) -> bytes:
    """A call with a bare ``_meta.userIntent`` holding ``secret``, which a redacting policy refuses."""
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"q","_meta":{"userIntent":{"text":"%s"}}}}'
            % (request_id, secret.encode()))


class ARefusalLogsOneLine(unittest.TestCase):
    """One line on the ``mcp_provenance`` logger at WARNING per refused message or body (its
    code), never the message's content."""

    def logged(self, guarded: Any, body: bytes, headers: Any = None) -> List[logging.LogRecord]:
        with self.assertLogs("mcp_provenance", logging.DEBUG) as seen:
            asyncio.run(exchange(guarded, body, **({"headers": headers} if headers is not None else {})))
        for record in seen.records:
            self.assertNotIn(SECRET, record.getMessage())
            self.assertNotIn("\n", record.getMessage())
        return seen.records

    def test_a_refused_message_logs_its_code_with_a_sink_with_metrics_or_with_neither(self) -> None:
        for name, kwargs in (("a sink", {"audit": lambda account, line: None}), ("metrics", {"metrics": Counts()}),
                             ("neither", {})):
            with self.subTest(name):
                records = self.logged(ProvenanceMiddleware(Recorder(), policy={"userIntent": "redact"}, **kwargs),
                                      bare(SECRET))
                self.assertEqual([(record.levelname, record.getMessage()) for record in records],
                                 [("WARNING", "refused a request (message 1 of the body): bare-user-intent"
                                   if name != "neither" else "refused a request (error 1 of the answer): bare-user-intent")])

    def test_each_refused_message_of_a_batch_logs_a_line(self) -> None:
        batch = b"[" + bare(SECRET, 1) + b"," + bare(SECRET, 2) + b',{"jsonrpc":"2.0","id":3,"method":"ping"}]'
        records = self.logged(ProvenanceMiddleware(Recorder(), policy={"userIntent": "redact"}, metrics=Counts()), batch)
        self.assertEqual([record.getMessage() for record in records],
                         ["refused a request (message 1 of the body): bare-user-intent",
                          "refused a request (message 2 of the body): bare-user-intent"])

    def test_a_body_the_middleware_answers_itself_logs_its_code(self) -> None:
        call = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"x":"%s"}}}' % SECRET).encode()
        records = self.logged(ProvenanceMiddleware(Recorder()), call, headers=[(b"content-type", b"text/plain")])
        [record] = records
        self.assertEqual(record.levelname, "WARNING")
        self.assertTrue(record.getMessage().startswith("answered in the app's stead: "), record.getMessage())

    def test_an_audit_that_fails_says_so_once_at_error_without_its_text(self) -> None:
        def failing(account: Account, line: str) -> None:
            raise RuntimeError(f"could not store {line}")

        call = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":'
                '{"io.modelcontextprotocol/aiInvocation":{"userIntent":{"text":"%s"}}}}}' % SECRET).encode()
        records = self.logged(ProvenanceMiddleware(Recorder(), audit=failing), call)
        self.assertEqual([record.levelname for record in records], ["ERROR", "ERROR"])
        self.assertIn("audit-failed", records[0].getMessage())


if __name__ == "__main__":
    unittest.main()
