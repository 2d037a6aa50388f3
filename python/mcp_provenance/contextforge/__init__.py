"""Provenance for ContextForge (``mcp-contextforge-gateway`` 1.1.0), whose plugin hooks
never see a request's ``_meta``: its own app behind the package's ASGI middleware,
started with its own command, the settings checked first.

    python -m mcp_provenance.contextforge --env-file .env --workers 2

``app`` is ContextForge's ``mcpgateway.main:app`` with the package's filter in front of
every route where it passes MCP params or ``_meta`` upstream, found from ContextForge's own
route table (a route that takes a body and is not classified is refused); what it reads
from the environment (``MCP_PROVENANCE_OPTIONS``, ``MCP_PROVENANCE_AUDIT``,
``MCP_PROVENANCE_OTLP_ENDPOINT``), its metrics and its health path
(``/mcp-provenance/health``) are in ``examples/contextforge/README.md``.
:class:`ProvenancePlugin` is the cpex plugin for a ContextForge whose hooks carry
``_meta`` (the change proposed in ``upstream/``).

Neither is imported until it is asked for: ContextForge imports its plugins while it
builds its app, so importing this package must not build the app, and the app is
ContextForge's whole server, loaded only where it is served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._app import app
    from ._plugin import ProvenancePlugin

__all__ = ["ProvenancePlugin", "app"]


def __getattr__(name: str) -> Any:
    """``app`` and ``ProvenancePlugin``, imported when first asked for."""
    if name == "app":
        from ._app import app

        return app
    if name == "ProvenancePlugin":
        from ._plugin import ProvenancePlugin

        return ProvenancePlugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
