"""An OTLP/HTTP trace receiver of the tests' own, on 127.0.0.1: it keeps each
span the OpenTelemetry exporter sends (protobuf, decoded with
opentelemetry-proto, the exporter's own dependency), its attributes as
plain values, so that a test compares what reached a collector."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Dict, Iterable, List, Optional, Type

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the collector got it; ids in lower-case hex, ``parent_span_id`` empty for a root."""

    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: Dict[str, Any]
    resource: Dict[str, Any]
    scope: str


class Receiver:
    """Serves ``url`` until the ``with`` block ends, keeping the spans posted to it in ``spans``."""

    def __init__(self) -> None:
        self.spans: List[ReceivedSpan] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        # Stopping waits for the serving loop's next poll: a short one, not to hold up a test's event loop.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def __enter__(self) -> "Receiver":
        self._thread.start()
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self._server.shutdown()
        self._server.server_close()

    def keep(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        received = [
            ReceivedSpan(
                name=span.name,
                kind=Span.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
                trace_id=span.trace_id.hex(),
                span_id=span.span_id.hex(),
                parent_span_id=span.parent_span_id.hex(),
                attributes=_attributes(span.attributes),
                resource=_attributes(spans.resource.attributes),
                scope=scoped.scope.name,
            )
            for spans in request.resource_spans
            for scoped in spans.scope_spans
            for span in scoped.spans
        ]
        with self._lock:
            self.spans.extend(received)


def _handler(receiver: Receiver) -> Type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            # What this receiver cannot read is refused, so that a test misses spans, never reads them wrong.
            if (self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf"
                    or self.headers.get("content-encoding", "identity") != "identity"):
                self.send_error(415)
                return
            receiver.keep(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a request line per export is noise in the test output

    return Handler


def _attributes(pairs: Iterable[KeyValue]) -> Dict[str, Any]:
    """OTLP key-values as a dict of plain values."""
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind) if kind is not None else None
