"""Audit records through OpenTelemetry, so that the records of every worker
meet in one collector: :func:`otel_sink` (for the server middlewares) and
:func:`otel_account_sink` (for the ASGI middleware) are an ``audit`` that
exports each record as a span; :func:`otel_attributes` and
:func:`parent_span_context` are what it is made of, as the npm package's
``mcp-provenance/otel`` has them. Attributes follow the semantic conventions
for MCP where they name a fact (``mcp.method.name``, ``mcp.session.id``,
``jsonrpc.request.id``, ``gen_ai.operation.name``, ``gen_ai.tool.name``) and
live under ``mcp_provenance.`` where they do not, split as the record splits
them: ``client_asserted.`` for the client's claims (never authorization
evidence, AI-10, COR-1), ``host_attested.`` for the Host's initiator (UI-6).
The free text a user or a model wrote (the intent, the reason) is exported
only when asked: traces are kept and shown more widely than audit records.

Needs OpenTelemetry: ``pip install 'mcp-provenance[otel]'`` brings its SDK
and OTLP/HTTP exporter.

>>> from mcp_provenance import audit_record
>>> from mcp_provenance.otel import otel_attributes
>>> otel_attributes(audit_record({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "q"}}))
{'mcp.method.name': 'tools/call', 'jsonrpc.request.id': '7', 'gen_ai.operation.name': 'execute_tool',
 'gen_ai.tool.name': 'q', 'mcp_provenance.valid': True, 'mcp_provenance.diagnostics': []}
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Dict, List, Optional, Union

try:
    from opentelemetry import trace
    from opentelemetry.context import Context
    from opentelemetry.util.types import AttributeValue
except ImportError as missing:
    raise ImportError(
        "mcp_provenance.otel needs OpenTelemetry: pip install 'mcp-provenance[otel]' (its SDK and OTLP exporter)"
    ) from missing

from .errors import ProvenanceError
from .types import Account, AuditRecord

__all__ = ["otel_account_sink", "otel_attributes", "otel_sink", "parent_span_context"]

#: The namespace of the attributes the semantic conventions do not define.
NS = "mcp_provenance"
#: The correlation kinds exported as attributes (a trace is the span's parent instead).
ID_KINDS = ("conversation", "turn", "request", "user", "organization")

#: What :func:`otel_sink` makes: the server middlewares' ``audit``, called with a record and its request.
RecordSink = Callable[[AuditRecord, Dict[str, Any]], None]
#: What :func:`otel_account_sink` makes: the ASGI middleware's ``audit``, called with an account and its line.
AccountSink = Callable[[Account, str], None]


def otel_attributes(record: AuditRecord, *, free_text: bool = False) -> Dict[str, AttributeValue]:
    """The span attributes of one audit record, named and valued exactly as the npm package's
    ``otelAttributes`` has them; a fact the record lacks is left out. With ``free_text=True``,
    the intent and the reason too, made safe as the record keeps them.

    >>> from mcp_provenance import audit_record
    >>> record = audit_record({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "q",
    ...     "_meta": {"io.modelcontextprotocol/aiInvocation": {"turnId": "t-1", "userIntent": {"text": "hi"}}}}})
    >>> otel_attributes(record)["mcp_provenance.client_asserted.turn_ids"]
    ['t-1']
    >>> "mcp_provenance.client_asserted.user_intent" in otel_attributes(record)
    False
    >>> otel_attributes(record, free_text=True)["mcp_provenance.client_asserted.user_intent"]
    'hi'
    """
    asserted, witnessed = record["clientAsserted"], record["witnessed"]
    ids = asserted.get("correlation", [])
    attributes: Dict[str, Optional[AttributeValue]] = {
        "mcp.method.name": record["method"],
        "mcp.session.id": witnessed.get("sessionId"),
        "jsonrpc.request.id": _id_text(record["requestId"]) if "requestId" in record else None,
        "gen_ai.operation.name": "execute_tool" if record["method"] == "tools/call" else None,
        "gen_ai.tool.name": record.get("tool"),
        f"{NS}.client_asserted.turn_id": asserted.get("turnId"),
        f"{NS}.client_asserted.model": asserted.get("model"),
        f"{NS}.client_asserted.invocation_reason": asserted.get("invocationReason") if free_text else None,
        f"{NS}.client_asserted.user_intent": asserted.get("userIntent") if free_text else None,
        f"{NS}.client_asserted.user_intent_redacted": asserted.get("userIntentRedacted"),
        f"{NS}.host_attested.initiator": record["hostAttested"].get("initiator"),
        f"{NS}.witnessed.principal": witnessed.get("principal"),
        f"{NS}.valid": record["valid"],
        f"{NS}.diagnostics": [f"{d['rule']} {d['code']}" for d in record["diagnostics"]],
    }
    for kind in ID_KINDS:
        values = [entry["value"] for entry in ids if entry["kind"] == kind]
        if values:
            attributes[f"{NS}.client_asserted.{kind}_ids"] = values
    # The `_meta` keys those ids came from, each once, in the record's order.
    sources: List[str] = list(dict.fromkeys(entry["key"] for entry in ids if entry["kind"] in ID_KINDS))
    if sources:
        attributes[f"{NS}.client_asserted.correlation_keys"] = sources
    return {key: value for key, value in attributes.items() if value is not None}


def parent_span_context(record: AuditRecord) -> Optional[trace.SpanContext]:
    """The span the client says the request was made in, from the ``traceparent`` the core
    checked (COR-4) and kept in the record, its flags as sent; ``None`` when the request carried
    none, or an invalid one.

    >>> from mcp_provenance import audit_record
    >>> traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    >>> parent = parent_span_context(audit_record({"method": "tools/call", "params": {"_meta": {"traceparent": traceparent}}}))
    >>> f"{parent.span_id:016x}", parent.is_remote
    ('00f067aa0ba902b7', True)
    >>> parent_span_context(audit_record({"method": "ping"})) is None
    True
    """
    ids = record["clientAsserted"].get("correlation", [])
    # Only `traceparent` gives these kinds, one of each (COR-2): the core holds them to it.
    found = {entry["kind"]: entry["value"] for entry in ids}
    if not {"trace", "parentSpan", "traceFlags"} <= found.keys():
        return None
    return trace.SpanContext(
        trace_id=int(found["trace"], 16),
        span_id=int(found["parentSpan"], 16),
        is_remote=True,
        trace_flags=trace.TraceFlags(int(found["traceFlags"], 16)),
    )


def otel_sink(tracer_provider: Optional[trace.TracerProvider] = None, *, free_text: bool = False) -> RecordSink:
    """An ``audit`` for the server middlewares (:mod:`mcp_provenance.fastmcp`,
    :mod:`mcp_provenance.mcp`) that exports each record as a span of ``tracer_provider`` (the
    global one when ``None``): kind SERVER, named ``<method> <tool>`` (or ``<method>``) as the
    npm gateway names its spans, with :func:`otel_attributes` as its attributes, and the child
    of the span the request's ``traceparent`` names, or a root span (the record alone decides,
    not whatever span is current).

    A record is exported whatever the client sampled: its ``traceparent``'s flags do not make
    the span unsampled (an audit record is not the client's to drop). A span the provider does
    not record (no SDK configured, a sampler that drops it) raises ``ProvenanceError`` with code
    ``span-not-recorded``, so the middleware refuses the request rather than serve it unaudited.
    Delivery is the provider's span processor's: a ``BatchSpanProcessor`` exports without
    holding up the request, and logs what it could not deliver.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> from mcp_provenance import audit_record
    >>> exported = InMemorySpanExporter()
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(SimpleSpanProcessor(exported))
    >>> audit = otel_sink(provider)
    >>> request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "q"}}
    >>> audit(audit_record(request), request)
    >>> [(span.name, span.kind.name, span.attributes["gen_ai.tool.name"]) for span in exported.get_finished_spans()]
    [('tools/call q', 'SERVER', 'q')]
    """
    export = _exporter(tracer_provider, free_text)

    def audit(record: AuditRecord, request: Dict[str, Any]) -> None:
        # The record is the whole of what is exported: `request` is the raw envelope, unsafe to show.
        export(record)

    return audit


def otel_account_sink(tracer_provider: Optional[trace.TracerProvider] = None, *,
                      free_text: bool = False) -> AccountSink:
    """:func:`otel_sink` as the ``audit`` of :class:`mcp_provenance.asgi.ProvenanceMiddleware`,
    which hands it each message of a body as the filter accounts for it, with its log line: a
    span for each request and notification that goes on, as the npm gateway traces them. A
    response, a message the filter refused, or an exchange's outcome has no record to export.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> from mcp_provenance import Filter
    >>> exported = InMemorySpanExporter()
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(SimpleSpanProcessor(exported))
    >>> audit = otel_account_sink(provider)
    >>> gate = Filter({"policy": {"userIntent": "redact"}})
    >>> outcome = gate(b'[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q"}},'
    ...     b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"userIntent":"bare"}}}]')
    >>> for account, line in zip(outcome["messages"], outcome["lines"]):
    ...     audit(account, line)
    >>> [span.name for span in exported.get_finished_spans()]
    ['tools/call q']
    """
    export = _exporter(tracer_provider, free_text)

    def audit(account: Account, line: str) -> None:
        # The line holds the message as forwarded: the record is the whole of what is exported.
        if account["kind"] != "outcome" and "record" in account and "refused" not in account:
            export(account["record"])

    return audit


def _exporter(tracer_provider: Optional[trace.TracerProvider], free_text: bool) -> Callable[[AuditRecord], None]:
    """What both sinks do with a record: export it as its span, or raise ``span-not-recorded``."""
    tracer = trace.get_tracer(NS, tracer_provider=tracer_provider)

    def export(record: AuditRecord) -> None:
        parent = parent_span_context(record)
        if parent is None:
            context = Context()
        else:
            # Sampled, whatever the client's flags say; the others (a random trace id) kept.
            sampled = trace.TraceFlags(parent.trace_flags | trace.TraceFlags.SAMPLED)
            context = trace.set_span_in_context(trace.NonRecordingSpan(trace.SpanContext(
                parent.trace_id, parent.span_id, is_remote=True, trace_flags=sampled)), Context())
        name = f"{record['method']} {record['tool']}" if "tool" in record else record["method"]
        span = tracer.start_span(name, context, kind=trace.SpanKind.SERVER,
                                 attributes=otel_attributes(record, free_text=free_text))
        if not span.is_recording():
            raise ProvenanceError(
                "the record's span was not recorded: give the sink a TracerProvider of the "
                "OpenTelemetry SDK that samples every span", "span-not-recorded")
        span.end()

    return export


def _id_text(request_id: Union[str, int, float]) -> str:
    """A request id as the npm entry writes it (JavaScript's ``String(id)``), so that an id is
    one attribute value whichever runtime exported it; an integer in all its digits (where a
    JavaScript number holds only 15 to 17 of them)."""
    if isinstance(request_id, str):
        return request_id
    if isinstance(request_id, int):
        return str(request_id)
    return _js_number(request_id)


def _js_number(number: float) -> str:
    """``number`` as JavaScript writes it (ECMA-262 ``Number::toString``): the shortest digits
    that read back as it (those of Python's ``repr``), placed as JavaScript places them:
    ``1`` for 1.0, ``0.000001``, ``1e-7``, ``1e+21``."""
    if number == 0:
        return "0"
    sign, places, exponent = Decimal(repr(number)).normalize().as_tuple()
    digits = "".join(map(str, places))
    # The number is 0.<digits> × 10^point.
    length, point = len(digits), int(exponent) + len(digits)
    if length <= point <= 21:
        text = digits + "0" * (point - length)
    elif 0 < point <= 21:
        text = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        text = f"0.{'0' * -point}{digits}"
    else:
        text = f"{digits[0]}{'.' if length > 1 else ''}{digits[1:]}e{point - 1:+d}"
    return ("-" if sign else "") + text
