"""What :class:`~mcp_provenance.asgi.ProvenanceMiddleware` tells a ``metrics`` object, and
the series it makes of it: the protocol every runtime's middleware calls, the same in the npm
package's ``mcp-provenance/otel`` (OpenTelemetry metrics) and here
(:mod:`mcp_provenance.prometheus`, ``prometheus_client``). ``conformance/metrics.json``
holds both to the same counts.

The middleware calls, for each POST body it reads:

- ``filtered(seconds)`` once the filter has run on the body (not for a body refused before it
  was read whole: 413);
- ``observe(account)`` for each message's account (:class:`~mcp_provenance.types.MessageAccount`),
  in the body's order, before the audit sink gets them;
- ``failed()`` when the audit sink could not keep the body's accounts, and again when it could
  not keep the exchange's outcome;
- ``refused(code)`` once the answer is over, when the middleware answered (or replaced the
  app's answer) itself: the exchange's ``refused`` code, as its outcome account has it (the
  filter's refusal of the whole body, ``body-too-large``, the sink's code, ``answer-not-json``
  ...). It is never called for a body whose messages the filter all refused: those are counted
  from their accounts.

Each call is made on the request's task and must not block or raise. Given no ``metrics``,
the middleware calls nothing and computes nothing for it.

The series (names and labels exactly, in every runtime):

====================================================  ==========================================
``mcp_provenance_messages_total{kind,verdict}``       per account: ``kind`` (request,
                                                      notification, response, malformed),
                                                      ``verdict`` ``refused`` when it has
                                                      ``refused``, else ``forwarded``
``mcp_provenance_refusals_total{code}``               per account with ``refused`` (its code),
                                                      and per ``refused(code)``
``mcp_provenance_redactions_total``                   per change of an account whose ``action``
                                                      is ``redacted``
``mcp_provenance_audit_failures_total``               per ``failed()``
``mcp_provenance_filter_seconds``                     histogram of ``filtered(seconds)``, with
                                                      the bounds ``FILTER_SECONDS_BUCKETS``
====================================================  ==========================================

:class:`Counts` keeps them in a dict, as the series' samples are named (labels in name order):

>>> counts = Counts()
>>> counts.observe({"kind": "request", "valid": True, "changes": [{"action": "redacted", "path": "", "rule": "AI-9"}]})
>>> counts.observe({"kind": "request", "valid": False, "changes": [], "refused": "bare-user-intent"})
>>> counts.filtered(0.00002)
>>> counts.refused("body-too-large")
>>> for name, value in sorted(counts.samples.items()):
...     print(name, value)
mcp_provenance_filter_seconds_count 1
mcp_provenance_filter_seconds_sum 2e-05
mcp_provenance_messages_total{kind="request",verdict="forwarded"} 1
mcp_provenance_messages_total{kind="request",verdict="refused"} 1
mcp_provenance_redactions_total 1
mcp_provenance_refusals_total{code="bare-user-intent"} 1
mcp_provenance_refusals_total{code="body-too-large"} 1
"""

from __future__ import annotations

from typing import Dict, Protocol, Tuple, runtime_checkable

from .types import MessageAccount

__all__ = ["FILTER_SECONDS_BUCKETS", "Counts", "Metrics"]

#: The bounds of ``mcp_provenance_filter_seconds``'s buckets (seconds, ``+Inf`` after them):
#: the filter takes tens of microseconds on a call with its envelope, milliseconds on a large batch.
FILTER_SECONDS_BUCKETS: Tuple[float, ...] = (0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                             0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)

#: The methods a ``metrics`` object has: what the middleware checks when it is made.
METHODS = ("observe", "refused", "failed", "filtered")


@runtime_checkable
class Metrics(Protocol):
    """What :class:`~mcp_provenance.asgi.ProvenanceMiddleware`'s ``metrics`` is told (see the
    module): :class:`~mcp_provenance.prometheus.PrometheusMetrics`, :class:`Counts`, or an
    object of your own with these four methods."""

    def observe(self, account: MessageAccount) -> None:
        """A message's account, as the filter made it."""

    def refused(self, code: str) -> None:
        """The middleware answered in the app's stead (or replaced its answer), with ``code``."""

    def failed(self) -> None:
        """The audit sink could not keep a body's accounts, or an exchange's outcome."""

    def filtered(self, seconds: float) -> None:
        """The filter ran on a body, in ``seconds``."""


class Counts:
    """Metrics kept in :attr:`samples`, a dict of each series' sample as Prometheus names it
    (``mcp_provenance_messages_total{kind="request",verdict="forwarded"}``, the histogram as
    its ``_count`` and ``_sum``) to its value; a sample never counted is absent. For tests, and
    for a server that exports them its own way."""

    def __init__(self) -> None:
        self.samples: Dict[str, float] = {}

    def _add(self, name: str, value: float = 1) -> None:
        self.samples[name] = self.samples.get(name, 0) + value

    def observe(self, account: MessageAccount) -> None:
        refused = account.get("refused")
        verdict = "forwarded" if refused is None else "refused"
        self._add(f'mcp_provenance_messages_total{{kind="{account["kind"]}",verdict="{verdict}"}}')
        if refused is not None:
            self.refused(refused)
        redacted = sum(1 for change in account["changes"] if change["action"] == "redacted")
        if redacted:
            self._add("mcp_provenance_redactions_total", redacted)

    def refused(self, code: str) -> None:
        self._add(f'mcp_provenance_refusals_total{{code="{_label(code)}"}}')

    def failed(self) -> None:
        self._add("mcp_provenance_audit_failures_total")

    def filtered(self, seconds: float) -> None:
        self._add("mcp_provenance_filter_seconds_count")
        self._add("mcp_provenance_filter_seconds_sum", seconds)


def _label(value: str) -> str:
    """A label value as Prometheus's text format writes it."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
