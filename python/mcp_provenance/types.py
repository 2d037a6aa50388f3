"""The shapes of what mcp-provenance takes and gives, as ``TypedDict``\\ s.

Options are the JSON documents every runtime of the package reads, with the
wire's camelCase names (one policy file serves Python, the npm package and
the native command); results are plain dicts of the same shapes the npm
package returns.

>>> from mcp_provenance import audit_record
>>> from mcp_provenance.types import AuditContext, AuditRecord
>>> context: AuditContext = {"sessionId": "s-1", "policy": {"userIntent": "redact"}}
>>> record: AuditRecord = audit_record({"method": "ping"}, context)
>>> record["witnessed"]
{'sessionId': 's-1'}
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Mapping, Sequence, TypedDict, Union, final

#: Who initiated a request, as the Host attests it (UI-7).
Initiator = Literal["app", "model", "user", "host"]

#: Any JSON-RPC message as Python holds it: a dict of JSON values.
Message = Mapping[str, Any]

#: What a correlation id identifies (COR-1).
CorrelationKind = Literal[
    "conversation", "turn", "request", "user", "organization", "trace", "parentSpan", "traceFlags"
]


class Diagnostic(TypedDict):
    """One finding about a message."""

    #: Stable, kebab-case: ``"control-character"``, ``"invalid-type"``...
    code: str
    #: ``"error"`` breaks a MUST or the schema; ``"warning"`` a SHOULD.
    severity: Literal["error", "warning"]
    #: The rule's ID in the rules chapter: ``"AI-13"``.
    rule: str
    #: RFC 6901 JSON Pointer from the message root (``""`` for the options).
    path: str
    #: For a person; names the place and the expected type, never the value.
    message: str


class Report(TypedDict):
    """What :func:`~mcp_provenance.validate` found: valid when no diagnostic is an error."""

    valid: bool
    diagnostics: List[Diagnostic]


class Change(TypedDict):
    """One thing a call changed."""

    action: Literal["neutralized", "truncated", "redacted", "dropped", "omitted", "lifted"]
    path: str
    rule: str


class Sanitized(TypedDict):
    """What :func:`~mcp_provenance.sanitize` gives: the copy, and what changed."""

    message: Dict[str, Any]
    changes: List[Change]


class _Reason(TypedDict):
    text: str


class _Model(TypedDict):
    name: str


class _Intent(TypedDict, total=False):
    text: str
    redacted: bool


class AiInvocation(TypedDict, total=False):
    """The SEP-2817 envelope: every field optional, every field the client's word."""

    invocationReason: _Reason
    model: _Model
    userIntent: _Intent
    turnId: str


class KeyOptions(TypedDict, total=False):
    """Which ``_meta`` keys carry the two entries (KEY-3); the defaults are the proposals'."""

    invocationKey: str
    uiKey: str


class ValidateOptions(KeyOptions, total=False):
    """:func:`~mcp_provenance.validate`'s options: a response's request checks its echo (AI-11)."""

    request: Message


class LiftOptions(KeyOptions, total=False):
    """:func:`~mcp_provenance.lift_legacy_arguments`'s options."""

    #: Remove the legacy arguments, lifted or not.
    remove: bool


class Policy(KeyOptions, total=False):
    """How an envelope is made safe; limits are UTF-8 bytes (16 to 1,048,576)."""

    maxReasonBytes: int
    maxIntentBytes: int
    maxModelBytes: int
    maxTurnIdBytes: int
    #: The whole envelope as compact JSON; 64 to 1,048,576, default 8192.
    maxEnvelopeBytes: int
    userIntent: Literal["keep", "redact", "drop"]
    model: Literal["keep", "drop"]
    invocationReason: Literal["keep", "drop"]
    #: Fields the envelope does not define: dropped by default (AI-8).
    unknownFields: Literal["keep", "drop"]
    #: Vendor ``_meta`` keys read for correlation ids, to the kind each holds (COR-2).
    correlationKeys: Dict[str, Literal["conversation", "turn", "request", "user", "organization"]]


class Witnessed(TypedDict, total=False):
    """What a server or gateway itself knows of a request: recorded as witnessed."""

    receivedAt: str
    principal: str
    sessionId: str


class FilterContext(Witnessed, total=False):
    """A :class:`~mcp_provenance.Filter`'s context: what is witnessed, and the request's HTTP
    headers (names in any case; a header sent twice as a list). Given, a body is refused with
    415 unless they say UTF-8 JSON (one ``Content-Type: application/json``, no charset but
    utf-8, no ``Content-Encoding``), so that the server reads the very text the filter checked
    (WIRE-2). No other header is read."""

    headers: Mapping[str, Union[str, Sequence[str]]]


class AuditContext(Witnessed, total=False):
    """:func:`~mcp_provenance.audit_record`'s context; the default policy when none."""

    policy: Policy


class _CorrelationBase(TypedDict):
    kind: CorrelationKind
    value: str
    key: str


class Correlation(_CorrelationBase, total=False):
    """One correlation id a record keeps, labelled with where it came from (COR-1)."""

    member: str


class ClientAsserted(TypedDict, total=False):
    """The client's claims: recorded, never authorization evidence (AI-10)."""

    turnId: str
    model: str
    invocationReason: str
    userIntent: str
    userIntentRedacted: bool
    correlation: List[Correlation]


class HostAttested(TypedDict, total=False):
    """The Host's claim, not verified (UI-6); absent means unknown (UI-4)."""

    initiator: str


class _RecordBase(TypedDict):
    method: str
    clientAsserted: ClientAsserted
    hostAttested: HostAttested
    witnessed: Witnessed
    diagnostics: List[Diagnostic]
    valid: bool


class AuditRecord(_RecordBase, total=False):
    """One request as an audit store keeps it; no string in it can forge a log line."""

    tool: str
    requestId: Union[str, int, float]


class FilterOptions(TypedDict, total=False):
    """How a :class:`~mcp_provenance.Filter` treats each body; checked when it is made."""

    #: A policy without its keys (see ``invocationKeys`` and ``uiKeys``).
    policy: Policy
    liftLegacy: bool
    invocationKeys: List[str]
    uiKeys: List[str]
    #: The most messages a batch may hold (WIRE-4): 1 to 100,000, default 1,000.
    maxBatch: int
    #: The deepest a message may nest (WIRE-4): 8 to 4,096, default 128.
    maxDepth: int
    #: What each audit line holds of its message's ``params.arguments``, whatever the method
    #: (WIRE-9): the message whole (``"keep"``, the default); ``{"sha256": ..., "bytes": ...}``
    #: of their JSON text as it goes on (``"digest"``); nothing (``"drop"``). A line that left
    #: them out says so (its ``auditArguments``); accounts, records and what goes on are the same.
    auditArguments: Literal["keep", "digest", "drop"]


class _AccountBase(TypedDict):
    kind: Literal["request", "notification", "response", "malformed"]
    valid: bool
    changes: List[Change]


class MessageAccount(_AccountBase, total=False):
    """One message of a body, as the filter saw it."""

    index: int
    id: Union[str, int, float]
    #: Why the filter refused it; a refused message never goes on.
    refused: str
    record: AuditRecord
    diagnostics: List[Diagnostic]


class _RequestOutcomeBase(TypedDict):
    id: Union[str, int, float]
    #: A result, a JSON-RPC error (the app's, or the middleware's in its stead), or no
    #: answer seen (the app ended without one, the client left, the answer passed unread).
    answer: Literal["result", "error", "unseen"]


class RequestOutcome(_RequestOutcomeBase, total=False):
    """What one request that went on got, as the client got it."""

    #: The error's ``code``, when it is an integer.
    code: int


class _OutcomeBase(TypedDict):
    kind: Literal["outcome"]
    requests: List[RequestOutcome]
    #: How long the exchange took, from the request to the answer's end, in milliseconds.
    ms: float


class OutcomeAccount(_OutcomeBase, total=False):
    """What became of an exchange, once its answer was over: the account an audit sink gets
    after those of the body's messages."""

    #: The HTTP status the client was sent (none when nothing was).
    status: int
    #: Why the middleware answered in the app's stead: its own code, the audit sink's, or the
    #: filter's refusal of the whole body.
    refused: str
    receivedAt: str
    sessionId: str
    pid: int
    host: str


#: What an audit sink is handed: a message's account, or an exchange's outcome (``kind``
#: tells which).
Account = Union[MessageAccount, OutcomeAccount]


class _Outcome(TypedDict):
    replies: List[str]
    lines: List[str]
    ids: List[Union[str, None]]
    #: For each request that goes on, what ``Filter.echo`` writes into the answer to it (AI-11).
    turns: List[Union[str, None]]
    messages: List[MessageAccount]


@final
class Forward(_Outcome):
    """Send ``forward`` upstream (the very body given when nothing changed), and add ``replies``."""

    forward: Union[bytes, str]


@final
class Reject(_Outcome):
    """Send nothing upstream: answer ``status`` with ``reject`` (empty for 202)."""

    reject: Union[bytes, str]
    status: int


#: What a filter decided for one body: ``"forward" in outcome`` tells which.
Outcome = Union[Forward, Reject]
