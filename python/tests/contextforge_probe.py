"""Asks ``mcp_provenance.contextforge``'s app module, loaded in ContextForge's
environment (Python 3.12, where the test cannot load it itself), what it makes
of requests, of settings and of ContextForge's route table. Reads
``{"paths": [[root_path, path], ...], "settings": [{variable: value}, ...]}``
on stdin; writes one JSON line: ``{"paths": [what the gateway does with a POST
there ("messages", "params completion/complete", "none"...), ...], "settings":
[the options document the middleware is given, or the message that stops the start, ...],
"routes": the number of ContextForge's routes, "unclassified": [each route that
takes a body and is not classified], "body_routes": {handling: [each route that
takes a body so handled]}, "disagreements": [each request, one to each route that
takes a body, for which the gateway's table finds another route than ContextForge's
own router]}``.

    python contextforge_probe.py < questions.json

Its own environment must hold settings that let the module load.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Dict, List, Optional, Union

from fastapi.routing import _IncludedRouter
from mcpgateway.main import app as contextforge
from starlette.routing import Match, Mount

from mcp_provenance.contextforge import app
from mcp_provenance.contextforge._app import _rewritten, configured
from mcp_provenance.errors import ProvenanceError


def answer(settings: Dict[str, str]) -> Union[str, Dict[str, Any]]:
    try:
        options, _ = configured(settings)
    except ProvenanceError as refused:
        return str(refused)
    return dict(options)


def served_by(scope: Dict[str, Any]) -> Optional[str]:
    """The endpoint (``module.function``, or ``mount <path>``) ContextForge's own router serves
    ``scope`` with, as FastAPI's router picks it: the first route that matches it whole, else
    the first that matches its path; into the routers it includes."""
    routes, chosen = list(contextforge.router.routes), None
    partial = None
    for route in routes:
        match, _ = route.matches(dict(scope))
        if match is Match.FULL:
            chosen = route
            break
        if match is Match.PARTIAL and partial is None:
            partial = route
    chosen = chosen or partial
    while isinstance(chosen, _IncludedRouter):
        _, _, chosen, _ = chosen._match(dict(scope))  # pylint: disable=protected-access
    if chosen is None:
        return None
    if isinstance(chosen, Mount):
        return f"mount {chosen.path}"
    return f"{chosen.endpoint.__module__}.{chosen.endpoint.__qualname__}"


def disagreements() -> List[str]:
    """Each request, one to each route that takes a body (its path's parameters filled in),
    under no root path and under ``APP_ROOT_PATH``, that the table routes elsewhere than
    ContextForge does."""
    found = []
    for route in app.routes.routes:
        if not route.takes_body:
            continue
        path = re.sub(r"{[^}:]+:path}", "p/q", re.sub(r"{[^}:]+}", "p", route.path))
        method = sorted(route.methods & {"POST", "PUT", "PATCH"})[0] if route.methods else "POST"
        for prefix in ("", contextforge.root_path or ""):
            scope = {"type": "http", "method": method, "path": prefix + path, "root_path": contextforge.root_path or "",
                     "headers": []}
            ours = app.routes.find(scope).route
            theirs = served_by(_rewritten(scope))
            if (ours.name if ours is not None else None) != theirs:
                found.append(f"{method} {prefix + path}: {ours} here, {theirs} in ContextForge")
    return found


def main() -> None:
    asked = json.load(sys.stdin)
    paths = [app.handling({"type": "http", "method": "POST", "root_path": root, "path": path, "headers": []})
             for root, path in asked["paths"]]
    routes: Dict[str, List[str]] = {}
    for route in app.routes.routes:
        if route.takes_body:
            handling = route.handling
            routes.setdefault(f"{handling.kind} {handling.method}" if handling.method else handling.kind, []).append(str(route))
    print(json.dumps({"paths": paths, "settings": [answer(settings) for settings in asked["settings"]],
                      "routes": len(app.routes.routes), "unclassified": app.routes.unclassified(), "body_routes": routes,
                      "disagreements": disagreements()}))


if __name__ == "__main__":
    main()
