"""What an operator watches of ``mcp_provenance.contextforge:app``, as
``examples/contextforge/README.md`` sets it up ("Metrics, health and OpenTelemetry"): a real
ContextForge 1.1.0, started by the README's commands with two workers, in front of the
test's FastMCP upstream, with ``ENABLE_METRICS=true`` (the workers' series summed through
``PROMETHEUS_MULTIPROC_DIR``), ``MCP_PROVENANCE_OTLP_ENDPOINT`` naming an OTLP/HTTP receiver
the test serves on 127.0.0.1, and its health path; and the start a bad endpoint stops."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from typing import Dict, List, Tuple

from prometheus_client.parser import text_string_to_metric_families

from contextforge_gateway import EXAMPLE, REQUEST_SECONDS, START_SECONDS, Gateway, Upstream, ended
from contextforge_venv import ROOT, environment, installed, wheel
from mcp_provenance import AI_INVOCATION_KEY, Filter
from otlp_receiver import ReceivedSpan, Receiver
from servers import INTENT, META
from test_contextforge import blocks, call

#: The README's section this test runs.
SECTION = "Metrics, health and OpenTelemetry"

#: Each sample of the middleware's series, by name and labels.
Samples = Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float]


def otel_installed(block: str) -> None:
    """Runs the section's install block, ``mcp-provenance[otel]`` standing for the wheel under
    test with the extra."""
    command, count = re.subn(r"'mcp-provenance\[otel\]'", f"'{wheel()}[otel]'", block.strip())
    if count != 1:
        raise AssertionError(f"the section's install block names 'mcp-provenance[otel]' {count} times, not once: {block!r}")
    ran = subprocess.run(["sh", "-e", "-c", command], env=environment(), capture_output=True, text=True, check=False,
                         timeout=START_SECONDS)
    if ran.returncode != 0:
        raise AssertionError(f"{command} failed ({ran.returncode}):\n{ran.stdout}{ran.stderr}")


def settings_of(block: str) -> Dict[str, str]:
    """The ``NAME=value`` lines of the section's ``.env`` block."""
    return dict(line.split("=", 1) for line in block.strip().splitlines())


class Deployment:
    folder: Path
    gateway: Gateway
    upstream: Upstream
    receiver: Receiver
    settings: Dict[str, str]


def setUpModule() -> None:
    install, start = blocks(EXAMPLE / "README.md", "Run it")
    otel, dotenv = blocks(EXAMPLE / "README.md", SECTION)
    installed(install)
    otel_installed(otel)
    folder = Path(tempfile.mkdtemp(prefix="signals-", dir=ROOT / "target" / "contextforge"))
    unittest.addModuleCleanup(shutil.rmtree, folder, ignore_errors=True)
    Deployment.folder = folder
    Deployment.receiver = Receiver().__enter__()
    unittest.addModuleCleanup(Deployment.receiver.__exit__, None, None, None)
    settings = settings_of(dotenv)
    if set(settings) != {"ENABLE_METRICS", "MCP_PROVENANCE_OTLP_ENDPOINT", "LOG_LEVEL"}:
        raise AssertionError(f"the section's settings are not the ones this test checks: {settings}")
    # The receiver stands for the collector; the multiprocess folder made empty, as the README says.
    settings["MCP_PROVENANCE_OTLP_ENDPOINT"] = Deployment.receiver.url.removesuffix("/v1/traces")
    (folder / "prometheus").mkdir()
    Deployment.settings = {**settings, "PROMETHEUS_MULTIPROC_DIR": str(folder / "prometheus"),
                           # Spans sent a tenth of a second after they end, not five: the test waits less.
                           "OTEL_BSP_SCHEDULE_DELAY": "100"}
    (folder / "run").mkdir()
    Deployment.upstream = Upstream(folder / "run")
    unittest.addModuleCleanup(Deployment.upstream.stop)
    Deployment.gateway = Gateway(start, folder / "run", Deployment.settings)
    unittest.addModuleCleanup(Deployment.gateway.stop)
    Deployment.upstream.ready()
    Deployment.gateway.ready()
    Deployment.gateway.admin("/gateways", {"name": "orders", "url": Deployment.upstream.url, "transport": "STREAMABLEHTTP"})


def scraped() -> Samples:
    """The middleware's samples as ContextForge serves them at ``/metrics/prometheus``."""
    answer = Deployment.gateway.get("/metrics/prometheus")
    if answer.status_code != 200:
        raise AssertionError(f"/metrics/prometheus: {answer.status_code} {answer.text[:400]}")
    found: Samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name.startswith("mcp_provenance_") and not sample.name.endswith(("_created", "_bucket", "_sum")):
                found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def grown(before: Samples, after: Samples) -> Dict[str, float]:
    """What each sample grew by, as the vectors name a sample; those that did not grow left out."""
    names = {}
    for key in set(before) | set(after):
        change = after.get(key, 0) - before.get(key, 0)
        if change:
            name, labels = key
            shown = ",".join(f'{label}="{value}"' for label, value in labels)
            names[f"{name}{{{shown}}}" if shown else name] = change
    return names


def spans_of(turn: str) -> List[ReceivedSpan]:
    """The spans the receiver got for the turn ``turn``, once there is one (a minute at most)."""
    deadline = time.monotonic() + REQUEST_SECONDS
    while True:
        found = [span for span in Deployment.receiver.spans
                 if span.attributes.get("mcp_provenance.client_asserted.turn_id") == turn]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


class SignalsOfTheGateway(unittest.TestCase):
    def test_metrics_spans_and_health_follow_what_the_gateway_did(self) -> None:
        gateway, options = Deployment.gateway, json.loads((gateway_home() / "provenance.json").read_text(encoding="utf-8"))
        meta = {**META, AI_INVOCATION_KEY: {**META[AI_INVOCATION_KEY], "turnId": "turn-signals"}}
        body = call("signals", meta)
        # What the filter makes of the call, for the redactions to expect.
        [account] = Filter(options)(body)["messages"]
        redacted = sum(1 for change in account["changes"] if change["action"] == "redacted")
        self.assertGreaterEqual(redacted, 1)
        self.assertEqual(gateway.get("/mcp-provenance/health", token=False).status_code, 200)

        before = scraped()
        answer = gateway.post("/mcp", body)
        self.assertEqual(answer.status_code, 200, answer.text)
        refused = gateway.post("/mcp", call("bare signals", {"userIntent": {"text": INTENT}}, request_id=2))
        self.assertEqual(refused.json()["error"]["data"]["code"], "bare-user-intent")
        self.assertEqual(grown(before, scraped()), {
            'mcp_provenance_messages_total{kind="request",verdict="forwarded"}': 1,
            'mcp_provenance_messages_total{kind="request",verdict="refused"}': 1,
            'mcp_provenance_refusals_total{code="bare-user-intent"}': 1,
            "mcp_provenance_redactions_total": redacted,
            "mcp_provenance_filter_seconds_count": 2})

        # The forwarded call's record reached the collector as a span; the refused one did not.
        [span] = spans_of("turn-signals")
        self.assertEqual((span.name, span.kind), ("tools/call orders-open-orders", "SERVER"))
        self.assertEqual(span.attributes["mcp.method.name"], "tools/call")
        self.assertEqual(span.attributes["gen_ai.tool.name"], "orders-open-orders")
        self.assertIs(span.attributes["mcp_provenance.client_asserted.user_intent_redacted"], True)
        self.assertEqual(span.resource["service.name"], "mcp-provenance")
        self.assertNotIn(INTENT, json.dumps(span.attributes))

        # A folder where the audit file was: no worker can append to it, root or not.
        audit = gateway_home() / "audit.jsonl"
        os.replace(audit, audit.with_name("audit.jsonl.1"))
        audit.mkdir()
        health = gateway.get("/mcp-provenance/health", token=False)
        self.assertEqual((health.status_code, health.json()), (503, {"status": "unavailable", "code": "audit-unwritable"}))
        before = scraped()
        unaudited = gateway.post("/mcp", call("unaudited", meta))
        self.assertEqual(unaudited.json()["error"]["data"]["code"], "audit-failed")
        self.assertEqual(Deployment.upstream.calls("unaudited"), [])
        # The body's accounts and the exchange's outcome, neither kept.
        self.assertEqual(grown(before, scraped()), {
            'mcp_provenance_messages_total{kind="request",verdict="forwarded"}': 1,
            'mcp_provenance_refusals_total{code="audit-failed"}': 1,
            "mcp_provenance_redactions_total": redacted,
            "mcp_provenance_audit_failures_total": 2,
            "mcp_provenance_filter_seconds_count": 1})

        # Each refusal was said on one line, with its code and without the intent.
        log = gateway.log()
        self.assertIn("refused a request (message 1 of the body): bare-user-intent", log)
        self.assertNotIn(INTENT, log)


def gateway_home() -> Path:
    return Deployment.gateway.home


class AStartThatFails(unittest.TestCase):
    def test_an_endpoint_that_is_no_url_stops_the_start_with_one_line_and_status_3(self) -> None:
        [_, start] = blocks(EXAMPLE / "README.md", "Run it")
        code, out, err = ended(start, Deployment.folder / "bad-endpoint",
                               {**Deployment.settings, "MCP_PROVENANCE_OTLP_ENDPOINT": "127.0.0.1:4318"})
        said = [line for line in err.splitlines() if line.startswith("mcp_provenance.contextforge: ")]
        self.assertEqual(said, ["mcp_provenance.contextforge: MCP_PROVENANCE_OTLP_ENDPOINT is not the http:// or https:// "
                                "URL of an OTLP/HTTP collector, such as http://127.0.0.1:4318"], err[-4000:])
        self.assertEqual(code, 3, err[-4000:])
        self.assertNotIn("Application startup complete", out + err)


if __name__ == "__main__":
    unittest.main()
