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
  error and code), one ``write`` each, so that the lines of every worker stay whole.

Both are required: a gateway that was meant to redact and record must not start without
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
from typing import Any, Dict, List, Mapping, NoReturn, Tuple, cast

from .._native import Filter
from ..asgi import App, ProvenanceMiddleware, Scope
from ..errors import ProvenanceError, ProvenanceValueError
from ..types import Account, FilterOptions
from ._limits import refusals
from ._routes import Gateway, RouteTable

#: The variable naming the filter's options document.
OPTIONS_VARIABLE = "MCP_PROVENANCE_OPTIONS"
#: The variable naming the file each message's account is appended to.
AUDIT_VARIABLE = "MCP_PROVENANCE_AUDIT"

#: The exit status of a worker that cannot start, to uvicorn's and gunicorn's supervisors.
STARTUP_FAILURE = 3

#: What each variable names, for the message that says it is missing.
_SETTINGS = {OPTIONS_VARIABLE: "the filter's options, a JSON document such as {\"policy\": {\"userIntent\": \"redact\"}}",
             AUDIT_VARIABLE: "the file the audit records are appended to, a JSON line each"}

LOGGER = logging.getLogger("mcp_provenance")


class JsonLines:
    """An ``audit`` for the middleware: appends each account's line to the file at ``path``
    (made, owner-only, if missing), in one ``write`` on a descriptor opened to append, so
    that the lines of several workers never interleave; opened anew each time, so that the
    file can be rotated. What cannot be written raises, and the middleware refuses the body.

    Made, it opens the file once, so that a path it cannot write fails now, not on a request.
    """

    def __init__(self, path: str) -> None:
        # Where the file is when the gateway starts, wherever the process is later.
        self.path = os.path.abspath(path)
        self._append(b"")

    def __call__(self, account: Account, line: str) -> None:
        self._append(line.encode("utf-8") + b"\n")

    def _append(self, data: bytes) -> None:
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            written = os.write(descriptor, data)
        finally:
            os.close(descriptor)
        if written != len(data):
            raise OSError(f"{self.path}: {written} of {len(data)} bytes written")


def configured(environ: Mapping[str, str]) -> Tuple[FilterOptions, JsonLines]:
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
        sink = JsonLines(audit)
    except OSError as bad:
        raise ProvenanceValueError(f"{AUDIT_VARIABLE} ({audit}): {bad.strerror or bad}", "unwritable-audit") from None
    return cast(FilterOptions, options), sink


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
    # ContextForge's settings, as it reads them; what they would refuse of what the filter forwards.
    from mcpgateway.config import settings

    _refused = refusals(settings, _options)
    if _refused:
        raise ProvenanceValueError("; ".join(_refused), "contextforge-refuses-envelope")
except ProvenanceError as _bad:
    _stopped(_bad)


def _middleware(behind: App) -> App:
    """The package's middleware in front of ``behind``, as the settings say."""
    return ProvenanceMiddleware(behind, options=_options, audit=_sink)


# ContextForge's own, which `_rewritten` routes with: bound when its app is loaded (`_made`).
_SERVER_MCP_PATH_RE: Any
_normalize_scope_path: Any
replace_api_path_alias: Any


def _made() -> App:
    """ContextForge's app, behind the filter where its routes pass MCP params or ``_meta``
    upstream. Loads ContextForge's, whose import builds its whole server."""
    global _SERVER_MCP_PATH_RE, _normalize_scope_path, replace_api_path_alias
    from mcpgateway import main
    from mcpgateway.utils import paths

    _SERVER_MCP_PATH_RE, _normalize_scope_path = main._SERVER_MCP_PATH_RE, main._normalize_scope_path
    replace_api_path_alias = paths.replace_api_path_alias
    contextforge = main.app
    made = Gateway(contextforge, RouteTable(contextforge.routes, root_path=contextforge.root_path or "", rewrite=_rewritten),
                   _middleware)
    LOGGER.info("provenance: ContextForge's routes that pass MCP upstream filtered with the options of %s, "
                "accounts appended to %s", os.environ[OPTIONS_VARIABLE], _sink.path)
    return made


def __getattr__(name: str) -> Any:
    """``app``: ContextForge's app behind the filter, made the first time it is asked for (a
    worker asks; the process that checks the settings and starts the workers does not)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals()["app"] = _made()
    return made
