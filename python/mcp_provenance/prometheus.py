"""The middleware's metrics as Prometheus series, through ``prometheus_client``, in its default
registry (where every exporter, ContextForge's ``/metrics/prometheus`` among them, reads):
``pip install 'mcp-provenance[prometheus]'``.

>>> from mcp_provenance.asgi import ProvenanceMiddleware
>>> from mcp_provenance.prometheus import prometheus_metrics
>>> async def app(scope, receive, send): ...
>>> app = ProvenanceMiddleware(app, metrics=prometheus_metrics(), audit="/dev/null")

The series (:mod:`mcp_provenance.metrics` says what each counts, the same in every runtime):
``mcp_provenance_messages_total{kind,verdict}``, ``mcp_provenance_refusals_total{code}``,
``mcp_provenance_redactions_total``, ``mcp_provenance_audit_failures_total`` and the histogram
``mcp_provenance_filter_seconds``. With several worker processes, each counts its own: serve them
with ``prometheus_client``'s multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``), as for any series.
"""

from __future__ import annotations

import threading
from typing import Dict, Optional, Tuple

try:
    from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
except ImportError as missing:
    raise ImportError(
        "mcp_provenance.prometheus needs prometheus_client: pip install 'mcp-provenance[prometheus]'"
    ) from missing

from .metrics import FILTER_SECONDS_BUCKETS
from .types import MessageAccount

__all__ = ["PrometheusMetrics", "prometheus_metrics"]


class PrometheusMetrics:
    """The middleware's ``metrics`` (:class:`mcp_provenance.metrics.Metrics`) as Prometheus
    series of ``registry``. A registry holds each series once: :func:`prometheus_metrics`
    gives the one of a registry, made the first time; making a second raises ``ValueError``.

    >>> from prometheus_client import CollectorRegistry, generate_latest
    >>> registry = CollectorRegistry()
    >>> metrics = PrometheusMetrics(registry)
    >>> metrics.observe({"kind": "request", "valid": False, "changes": [], "refused": "bare-user-intent"})
    >>> registry.get_sample_value("mcp_provenance_refusals_total", {"code": "bare-user-intent"})
    1.0
    >>> registry.get_sample_value("mcp_provenance_messages_total", {"kind": "request", "verdict": "refused"})
    1.0
    """

    __slots__ = ("_messages", "_refusals", "_redactions", "_failures", "_seconds", "_children")

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._messages = Counter("mcp_provenance_messages", "Messages the provenance filter accounted for, by kind and "
                                 "verdict (refused by the filter, or forwarded)", ["kind", "verdict"], registry=registry)
        self._refusals = Counter("mcp_provenance_refusals", "Refusals by the provenance middleware, by code: each "
                                 "message the filter refused, each exchange it answered in the app's stead",
                                 ["code"], registry=registry)
        self._redactions = Counter("mcp_provenance_redactions", "Fields the provenance filter redacted",
                                   registry=registry)
        self._failures = Counter("mcp_provenance_audit_failures", "Bodies and outcomes the audit sink could not keep",
                                 registry=registry)
        self._seconds = Histogram("mcp_provenance_filter_seconds", "Time the provenance filter took on a body",
                                  buckets=FILTER_SECONDS_BUCKETS, registry=registry)
        # The labelled children met so far, not to look them up for each message.
        self._children: Dict[Tuple[str, str], Counter] = {}

    def observe(self, account: MessageAccount) -> None:
        refused = account.get("refused")
        verdict = "forwarded" if refused is None else "refused"
        key = (account["kind"], verdict)
        child = self._children.get(key)
        if child is None:
            child = self._children.setdefault(key, self._messages.labels(*key))
        child.inc()
        if refused is not None:
            self._refusals.labels(refused).inc()
        for change in account["changes"]:
            if change["action"] == "redacted":
                self._redactions.inc()

    def refused(self, code: str) -> None:
        self._refusals.labels(code).inc()

    def failed(self) -> None:
        self._failures.inc()

    def filtered(self, seconds: float) -> None:
        self._seconds.observe(seconds)


_MADE: Dict[int, Tuple[CollectorRegistry, PrometheusMetrics]] = {}
_LOCK = threading.Lock()


def prometheus_metrics(registry: Optional[CollectorRegistry] = None) -> PrometheusMetrics:
    """The :class:`PrometheusMetrics` of ``registry`` (``prometheus_client``'s default
    ``REGISTRY`` when ``None``), made the first time it is asked for: every middleware of the
    process shares it.

    >>> prometheus_metrics() is prometheus_metrics()
    True
    """
    registry = REGISTRY if registry is None else registry
    with _LOCK:
        made = _MADE.get(id(registry))
        if made is None or made[0] is not registry:
            made = _MADE[id(registry)] = (registry, PrometheusMetrics(registry))
        return made[1]
