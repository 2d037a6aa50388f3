"""``mcp_provenance.contextforge:app``: ContextForge's own app (``mcpgateway.main:app``)
with the package's filter in front of every route where it passes MCP params or ``_meta``
upstream, found from ContextForge's own route table when the app is made (``_routes.py``):
:class:`~mcp_provenance.asgi.ProvenanceMiddleware` where it takes JSON-RPC (``/rpc``,
``/mcp``), :class:`~._params.ParamsFilter` where it takes one request's params
(``/protocol/completion/complete``) or answers in a form of its own; a route that takes a
body and is not classified is refused. It is configured from the environment:

- ``MCP_PROVENANCE_OPTIONS``: the path of a JSON document, the filter's options as in every
  runtime (``{"policy": {"userIntent": "redact"}}``; members ``policy``, ``liftLegacy``,
  ``invocationKeys``, ``uiKeys``, ``maxBatch``, ``maxDepth``, ``auditArguments``), which
  the middleware is given whole, as its ``options``: whatever the filter takes, it takes;
- ``MCP_PROVENANCE_AUDIT``: the path of a file each message's account is appended to, the
  filter's own line (one line of JSON: the account, with its audit record, and the message
  as forwarded), then, once the answer is over, the exchange's outcome (``"kind":
  "outcome"``: the status sent, what each request got, a call ContextForge refused as its
  error and code), one ``write`` each, so that the lines of every worker stay whole
  (:class:`~mcp_provenance.sinks.JsonLinesSink`: safe under rotation too);
- ``MCP_PROVENANCE_OTLP_ENDPOINT`` (optional): the base URL of an OTLP/HTTP collector
  (``http://127.0.0.1:4318``, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` has it): each request's and
  notification's record is also exported as a span (:func:`~mcp_provenance.otel.otel_account_sink`)
  to its ``/v1/traces``, through a ``BatchSpanProcessor``, after the line is in the file
  (needs ``mcp-provenance[otel]``; ``OTEL_EXPORTER_OTLP_HEADERS`` and ``OTEL_SERVICE_NAME`` as
  OpenTelemetry reads them);
- ``MCP_PROVENANCE_SESSIONS`` (optional): the URL of the Redis the gateway's workers and hosts
  share the sessions they witnessed through (``redis://127.0.0.1:6379/0``; ContextForge's own
  ``REDIS_URL`` will do), so that a session ContextForge issued through one is witnessed through
  another (:mod:`mcp_provenance.sessions`: keys ``mcp-provenance:session:<SHA-256 of the id>``,
  kept a day). Without it, each worker witnesses the sessions issued through it alone. Redis
  down or slow: a record names a session only when its worker saw it issued, and the request
  is filtered, audited and forwarded as ever.

With ContextForge's own metrics on (``ENABLE_METRICS=true``), the middleware's series
(:mod:`mcp_provenance.prometheus`) are in ``prometheus_client``'s default registry, which
ContextForge serves at ``/metrics/prometheus``. ``GET /mcp-provenance/health`` answers 200
(``{"status":"ok"}``) while the audit file can be written, and 503
(``{"status":"unavailable","code":"audit-unwritable"}``) when it cannot be opened to append, or
its last line could not be written (until one is).

Both ``MCP_PROVENANCE_OPTIONS`` and ``MCP_PROVENANCE_AUDIT`` are required: a gateway that was meant to redact and record must not start without
doing so. So is a ContextForge that lets through what the filter forwards: its settings, read
as it reads them (the environment, then its ``.env``), are checked against the largest
``_meta`` the filter forwards under the options (``_limits.py``: ``META_MAX_DEPTH``,
``META_MAX_KEYS``, ``META_MAX_BYTES``, its validation middleware). A setting missing or wrong
stops the start with one line on stderr that says which and why, and exit status 3, which
uvicorn and gunicorn take for a worker that can never start: they stop, instead of starting
it again. All is checked when the module is imported, before ContextForge's app loads, which
happens when ``app`` is first asked for: ``python -m mcp_provenance.contextforge`` imports the
module to check the settings once before it starts any worker (``__main__.py``).
"""

# ContextForge is not installed where the package's types are checked (the tests' environment).
# mypy: disable-error-code="import-not-found"

from __future__ import annotations

import json
import logging
import os
import sys
import urllib.parse
from typing import Any, Dict, List, Mapping, NoReturn, Optional, Tuple, cast

from .._asgi_io import respond, route_path
from .._native import Filter
from ..asgi import AccountSink, App, ProvenanceMiddleware, Receive, Scope, Send
from ..errors import ProvenanceError, ProvenanceValueError
from ..metrics import Metrics
from ..sessions import RedisSessions
from ..sinks import JsonLinesSink
from ..types import Account, FilterOptions
from ._limits import refusals
from ._routes import Gateway, RouteTable

#: The variable naming the filter's options document.
OPTIONS_VARIABLE = "MCP_PROVENANCE_OPTIONS"
#: The variable naming the file each message's account is appended to.
AUDIT_VARIABLE = "MCP_PROVENANCE_AUDIT"
#: The variable naming the OTLP/HTTP collector the records are exported to as spans, if any.
OTLP_VARIABLE = "MCP_PROVENANCE_OTLP_ENDPOINT"
#: The variable naming the Redis the workers share their witnessed sessions through, if any.
SESSIONS_VARIABLE = "MCP_PROVENANCE_SESSIONS"
#: Where the app answers whether its audit file can be written.
HEALTH_PATH = "/mcp-provenance/health"

#: The exit status of a worker that cannot start, to uvicorn's and gunicorn's supervisors.
STARTUP_FAILURE = 3

#: What each variable names, for the message that says it is missing.
_SETTINGS = {OPTIONS_VARIABLE: "the filter's options, a JSON document such as {\"policy\": {\"userIntent\": \"redact\"}}",
             AUDIT_VARIABLE: "the file the audit records are appended to, a JSON line each"}

LOGGER = logging.getLogger("mcp_provenance")


def configured(environ: Mapping[str, str]) -> Tuple[FilterOptions, JsonLinesSink]:
    """The filter's options document, checked, and the audit sink; raises
    :class:`~mcp_provenance.ProvenanceError` saying which setting is wrong and why."""
    for variable in (OPTIONS_VARIABLE, AUDIT_VARIABLE):
        if not environ.get(variable):
            raise ProvenanceValueError(
                f"{variable} is not set: it names {_SETTINGS[variable]} (in .env, start with --env-file .env)",
                "missing-setting")
    path = environ[OPTIONS_VARIABLE]
    try:
        with open(path, "rb") as document:
            options = json.loads(document.read().decode("utf-8"), object_pairs_hook=_members,
                                 parse_constant=_no_constant)
        if options is None:
            # The filter takes no options as its defaults; a document says what it wants.
            raise ValueError("filter options must be an object, not null")
        # The filter checks every member and value, and names what it does not know.
        Filter(options)
    except OSError as bad:
        raise ProvenanceValueError(f"{OPTIONS_VARIABLE} ({path}): {bad.strerror or bad}", "unreadable-options") from None
    except (ValueError, ProvenanceError) as bad:
        code = bad.code if isinstance(bad, ProvenanceError) else "invalid-options"
        raise ProvenanceValueError(f"{OPTIONS_VARIABLE} ({path}): {bad}", code) from None
    audit = environ[AUDIT_VARIABLE]
    try:
        sink = JsonLinesSink(audit)
    except ProvenanceValueError as bad:
        cause = bad.__cause__
        why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause or bad)
        raise ProvenanceValueError(f"{AUDIT_VARIABLE} ({audit}): {why}", "unwritable-audit") from None
    return cast(FilterOptions, options), sink


def otlp_endpoint(environ: Mapping[str, str]) -> Optional[str]:
    """The URL spans are posted to, from ``MCP_PROVENANCE_OTLP_ENDPOINT`` (the collector's
    base URL, ``/v1/traces`` added as OpenTelemetry adds it to ``OTEL_EXPORTER_OTLP_ENDPOINT``);
    ``None`` when it is not set. Raises :class:`~mcp_provenance.ProvenanceError` when it is
    not an http or https URL (the message does not repeat it: it may hold a password), or
    OpenTelemetry is not installed.

    >>> otlp_endpoint({"MCP_PROVENANCE_OTLP_ENDPOINT": "http://127.0.0.1:4318/"})
    'http://127.0.0.1:4318/v1/traces'
    >>> otlp_endpoint({"MCP_PROVENANCE_OTLP_ENDPOINT": "127.0.0.1:4318"})
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: MCP_PROVENANCE_OTLP_ENDPOINT is not the http:// or https:// URL of an OTLP/HTTP collector, such as http://127.0.0.1:4318
    """
    value = environ.get(OTLP_VARIABLE)
    if not value:
        return None
    try:
        parts = urllib.parse.urlsplit(value)
        usable = (parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.query
                  and not parts.fragment and value.isprintable() and " " not in value)
        parts.port  # a port that is not a number raises
    except ValueError:
        usable = False
    if not usable:
        raise ProvenanceValueError(f"{OTLP_VARIABLE} is not the http:// or https:// URL of an OTLP/HTTP collector, "
                                   "such as http://127.0.0.1:4318", "invalid-otlp-endpoint")
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise ProvenanceValueError(f"{OTLP_VARIABLE} is set, and OpenTelemetry's SDK and OTLP/HTTP exporter are not "
                                   "installed: pip install 'mcp-provenance[otel]'", "missing-otel") from None
    return value.rstrip("/") + "/v1/traces"


def shared_sessions(environ: Mapping[str, str]) -> Optional[RedisSessions]:
    """The store the workers share their witnessed sessions through, from
    ``MCP_PROVENANCE_SESSIONS``; ``None`` when it is not set. Raises
    :class:`~mcp_provenance.ProvenanceError` when it is not a Redis URL (the message does not
    repeat it: it may hold a password), or the ``redis`` package is not installed. Nothing
    connects until a request needs it.

    >>> shared_sessions({"MCP_PROVENANCE_SESSIONS": "http://:secret@127.0.0.1:6379"})
    Traceback (most recent call last):
    ...
    mcp_provenance.errors.ProvenanceValueError: MCP_PROVENANCE_SESSIONS is not the URL of a Redis (redis://, rediss:// or unix://), such as redis://127.0.0.1:6379/0
    """
    value = environ.get(SESSIONS_VARIABLE)
    if not value:
        return None
    try:
        return RedisSessions(value)
    except ProvenanceValueError as bad:
        if bad.code == "missing-dependency":
            raise ProvenanceValueError(f"{SESSIONS_VARIABLE} is set, and the redis package is not installed: "
                                       "pip install 'mcp-provenance[redis]'", "missing-redis") from None
        raise ProvenanceValueError(f"{SESSIONS_VARIABLE} is not the URL of a Redis (redis://, rediss:// or unix://), "
                                   "such as redis://127.0.0.1:6379/0", "invalid-sessions") from None


def _spans(endpoint: str) -> AccountSink:
    """The sink that exports each record as a span to ``endpoint``, through a batch processor
    of a tracer provider of its own (ContextForge's own tracing, if on, is left alone)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from ..otel import otel_account_sink

    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "mcp-provenance"}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return otel_account_sink(provider)


class _Both:
    """The file, then the spans: a line that cannot be written refuses the body before a span
    is made of it."""

    def __init__(self, file: JsonLinesSink, spans: AccountSink) -> None:
        self._file = file
        self._spans = spans

    def __call__(self, account: Account, line: str) -> None:
        self._file(account, line)
        self._spans(account, line)


class _Health:
    """``app``, but for ``GET`` (or ``HEAD``) ``HEALTH_PATH`` (below the app's root path too),
    which it answers itself: 200 while ``sink`` can write, else 503."""

    def __init__(self, app: App, sink: JsonLinesSink, root: str) -> None:
        self._app = app
        self._sink = sink
        self._paths = {HEALTH_PATH, f"{root.rstrip('/')}{HEALTH_PATH}"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") or route_path(scope) not in self._paths:
            return await self._app(scope, receive, send)
        if self._sink.healthy():
            status, body = 200, b'{"status":"ok"}'
        else:
            status, body = 503, b'{"status":"unavailable","code":"audit-unwritable"}'
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
                   (b"content-length", b"%d" % len(body))]
        await respond(send, (status, headers, b"" if scope["method"] == "HEAD" else body))

    def __getattr__(self, name: str) -> Any:
        """What the app behind has (the route table's ``handling``, as a test asks it)."""
        return getattr(self._app, name)


def _members(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """An object of the document; a member named twice is refused, not guessed."""
    members: Dict[str, Any] = {}
    for name, value in pairs:
        if name in members:
            raise ValueError(f"the member {json.dumps(name)} is named twice")
        members[name] = value
    return members


def _no_constant(name: str) -> NoReturn:
    """``NaN``, ``Infinity`` and ``-Infinity``, which Python's JSON reads and JSON has not."""
    raise ValueError(f"{name} is not JSON")


def _rewritten(scope: Scope) -> Scope:
    """``scope`` as ContextForge routes it: its ``MCPPathRewriteMiddleware`` serves ``/mcp``,
    ``/servers/<id>/mcp`` and ``/v1/virtual-servers/<id>/mcp`` (a slash after them or not) on
    its ``/mcp`` mount, as ``/mcp/``. Its own functions read the path, as it reads it."""
    root = (scope.get("root_path") or settings.app_root_path or "").rstrip("/")
    path = _normalize_scope_path(scope["path"], root)
    if path.startswith("/.well-known/"):
        return scope
    internal = replace_api_path_alias(path)
    served = path == "/mcp" or ((path.endswith("/mcp") or (path.endswith("/mcp/") and path != "/mcp/"))
                                and internal.startswith("/servers/") and _SERVER_MCP_PATH_RE.fullmatch(internal) is not None)
    return {**scope, "path": f"{root}/mcp/"} if served else scope


def _stopped(bad: ProvenanceError) -> NoReturn:
    """Stops the start (the command's, or a worker's), saying why on one line."""
    sys.stderr.write(f"mcp_provenance.contextforge: {bad}\n")
    sys.stderr.flush()
    raise SystemExit(STARTUP_FAILURE)


try:
    _options, _sink = configured(os.environ)
    _endpoint = otlp_endpoint(os.environ)
    # One store for every middleware of the app (each route's), and one client of it.
    _sessions = shared_sessions(os.environ)
    # ContextForge's settings, as it reads them; what they would refuse of what the filter forwards.
    from mcpgateway.config import settings

    _refused = refusals(settings, _options)
    if _refused:
        raise ProvenanceValueError("; ".join(_refused), "contextforge-refuses-envelope")
except ProvenanceError as _bad:
    _stopped(_bad)


#: What the middlewares are given, made with the app (`_made`): the file (and the spans), and
#: the metrics when ContextForge's are on.
_audit: AccountSink = _sink
_metrics: Optional[Metrics] = None


def _middleware(behind: App) -> App:
    """The package's middleware in front of ``behind``, as the settings say."""
    return ProvenanceMiddleware(behind, options=_options, audit=_audit, metrics=_metrics, sessions=_sessions)


# ContextForge's own, which `_rewritten` routes with: bound when its app is loaded (`_made`).
_SERVER_MCP_PATH_RE: Any
_normalize_scope_path: Any
replace_api_path_alias: Any


def _made() -> App:
    """ContextForge's app, behind the filter where its routes pass MCP params or ``_meta``
    upstream. Loads ContextForge's, whose import builds its whole server."""
    global _SERVER_MCP_PATH_RE, _normalize_scope_path, replace_api_path_alias, _audit, _metrics
    from mcpgateway import main
    from mcpgateway.utils import paths

    _SERVER_MCP_PATH_RE, _normalize_scope_path = main._SERVER_MCP_PATH_RE, main._normalize_scope_path
    replace_api_path_alias = paths.replace_api_path_alias
    if _endpoint is not None:
        _audit = _Both(_sink, _spans(_endpoint))
    if settings.ENABLE_METRICS:
        # Where ContextForge's own are: prometheus_client's default registry, served at /metrics/prometheus.
        from ..prometheus import prometheus_metrics

        _metrics = prometheus_metrics()
    contextforge = main.app
    made = Gateway(contextforge, RouteTable(contextforge.routes, root_path=contextforge.root_path or "", rewrite=_rewritten),
                   _middleware)
    LOGGER.info("provenance: ContextForge's routes that pass MCP upstream filtered with the options of %s, "
                "accounts appended to %s%s%s; health at %s", os.environ[OPTIONS_VARIABLE], _sink.path,
                ", records exported as spans over OTLP" if _endpoint is not None else "",
                ", metrics at /metrics/prometheus" if _metrics is not None else "", HEALTH_PATH)
    return _Health(made, _sink, settings.app_root_path or "")


def __getattr__(name: str) -> Any:
    """``app``: ContextForge's app behind the filter, made the first time it is asked for (a
    worker asks; the process that checks the settings and starts the workers does not)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals()["app"] = _made()
    return made
