"""Every function of the package called as a user would, for `mypy --strict`
(`make test` runs it): the types say what each takes and gives. Run, it
also works."""

from __future__ import annotations

from typing import Any, Dict, List

from mcp_provenance import (
    AI_INVOCATION_KEY,
    UI_KEY,
    Filter,
    Provenance,
    ProvenanceError,
    attach_invocation,
    audit_record,
    check_policy,
    clear_initiator,
    echo_turn_id,
    is_reserved_meta_key,
    is_valid_meta_key,
    lift_legacy_arguments,
    sanitize,
    stamp_initiator,
    validate,
)
from opentelemetry.sdk.trace import TracerProvider

from mcp_provenance._native import Gateway
from mcp_provenance.asgi import AccountSink, Receive, Scope, Send
from mcp_provenance.asgi import ProvenanceMiddleware as AsgiMiddleware
from mcp_provenance.fastmcp import ProvenanceMiddleware
from mcp_provenance.mcp import provenance_middleware
from mcp_provenance.otel import otel_account_sink, otel_attributes, otel_sink, parent_span_context
from mcp_provenance.types import (Account, AiInvocation, AuditRecord, Change, Diagnostic, FilterOptions, MessageAccount,
                                  OutcomeAccount, Policy, Report)

policy: Policy = {"userIntent": "redact", "maxIntentBytes": 512, "correlationKeys": {"acme/conversation": "conversation"}}
check_policy(policy)
invocation: AiInvocation = {"model": {"name": "example-model"}, "turnId": "t-1"}
request: Dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "q", "arguments": {}}}

sent: Dict[str, Any] = attach_invocation(request, invocation, {"invocationKey": AI_INVOCATION_KEY})
from_view: Dict[str, Any] = stamp_initiator(sent, "app", {"uiKey": UI_KEY})
model_call: Dict[str, Any] = clear_initiator(from_view)
lifted: Dict[str, Any] = lift_legacy_arguments(model_call, {"remove": True})
report: Report = validate(lifted)
first: List[Diagnostic] = report["diagnostics"][:1]
changes: List[Change] = sanitize(lifted, policy)["changes"]
record: AuditRecord = audit_record(lifted, {"sessionId": "s-1", "receivedAt": "2026-12-02T00:00:00Z", "policy": policy})
turn: str = record["clientAsserted"].get("turnId", "")
reply: Dict[str, Any] = echo_turn_id(lifted, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
answer: Report = validate(reply, {"request": lifted})
keys: bool = is_valid_meta_key("com.example/turn") and not is_reserved_meta_key("com.example/turn")

bound = Provenance({**policy, "invocationKey": "com.example/aiInvocation"})
bound_key: str = bound.invocation_key + bound.ui_key
bound_sent: Dict[str, Any] = bound.attach_invocation(bound.stamp_initiator(request, "user"), invocation)
bound_record: AuditRecord = bound.audit_record(bound.lift_legacy_arguments(bound_sent, remove=True), {"sessionId": "s-1"})
bound_report: Report = bound.validate(bound.echo_turn_id(bound_sent, reply), bound_sent)
bound_changes: List[Change] = bound.sanitize(bound.clear_initiator(bound_sent))["changes"]

outcome = Filter({"policy": {"userIntent": "drop"}, "liftLegacy": True})(b'{"id":1,"method":"ping"}', {"sessionId": "s-1"})
accounts: List[MessageAccount] = outcome["messages"]
if "forward" in outcome:
    forward: bytes | str = outcome["forward"]
else:
    status: int = outcome["status"]

try:
    stamp_initiator(request, "model", {"uiKey": "io.modelcontextprotocol/mine"})
except ProvenanceError as error:
    code: str = error.code


def keep(record: AuditRecord, request: Dict[str, Any]) -> None:
    print(record["method"], record["valid"])


fastmcp_middleware = ProvenanceMiddleware(audit=keep, policy=policy)
sdk_middleware = provenance_middleware(audit=keep, echo=False)


# The envelope a client attaches to `call_tool(..., meta=...)`.
meta = attach_invocation({"method": "tools/call"}, invocation)["params"]["_meta"]

# OpenTelemetry: the attributes of a record, its caller's span, and sinks for each middleware.
attributes = otel_attributes(record, free_text=True)
parent = parent_span_context(record)
ProvenanceMiddleware(audit=otel_sink(TracerProvider(), free_text=True))
provenance_middleware(audit=otel_sink())


async def asgi_app(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 202, "headers": []})


def keep_account(account: Account, line: str) -> None:
    if account["kind"] == "outcome":
        print(account["status"] if "status" in account else None, [(r["id"], r["answer"], r.get("code")) for r in account["requests"]])
    else:
        print(account["kind"], account.get("record", {}).get("method"), len(line))


sink: AccountSink = keep_account
guarded = AsgiMiddleware(asgi_app, policy={"userIntent": "redact"}, audit=sink, paths=["/mcp", "/servers/*/mcp"],
                         lift_legacy=True, max_batch=100, max_depth=64, max_body_bytes=1 << 20, echo=True)
echoing: bool = guarded.echo
# The filter's options as one document, as every runtime reads it; the middleware's own as keywords.
filter_options: FilterOptions = {"policy": {"userIntent": "redact"}, "auditArguments": "digest", "maxDepth": 64}
AsgiMiddleware(asgi_app, options=filter_options, audit=sink, paths=["/mcp"], max_body_bytes=1 << 20)
Filter({"auditArguments": "drop"})
AsgiMiddleware(asgi_app, audit=otel_account_sink(TracerProvider()))
# A path where a sink goes: the JSON-lines file; metrics through an object of the protocol.
from pathlib import Path  # noqa: E402

from mcp_provenance.metrics import Counts, Metrics  # noqa: E402
from mcp_provenance.prometheus import PrometheusMetrics, prometheus_metrics  # noqa: E402
from mcp_provenance.sinks import JsonLinesSink  # noqa: E402

file_sink: AccountSink = JsonLinesSink(Path("audit.jsonl"))
healthy: bool = JsonLinesSink("audit.jsonl").healthy()
counted: Metrics = Counts()
exported: PrometheusMetrics = prometheus_metrics()
AsgiMiddleware(asgi_app, audit="audit.jsonl", metrics=exported)
AsgiMiddleware(asgi_app, audit=Path("audit.jsonl"), metrics=counted)

# The middleware's core, as a middleware for another stack drives it: the outcome kept for a sink.
exchange = Gateway({"paths": ["/mcp"]}).begin("POST", "/mcp", [(b"content-type", b"application/json")])
exchange.keep_outcome()
exchange.admit(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
exchange.head(200, [(b"content-type", b"application/json")])
exchange.finish(b'{"jsonrpc":"2.0","id":1,"result":{}}')
ended = exchange.outcome(1.5, 4242, "worker-1")
if ended is not None:
    ended_account: OutcomeAccount = ended[0]
    keep_account(*ended)
