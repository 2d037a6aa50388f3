"""Asks ``mcp_provenance.contextforge``'s app module, loaded in ContextForge's
environment (Python 3.12, where the test cannot load it itself), what it makes
of paths and of settings. Reads ``{"paths": [[root_path, path], ...],
"settings": [{variable: value}, ...]}`` on stdin; writes one JSON line:
``{"paths": [whether the filter runs, ...], "settings": [the middleware's
keyword arguments, or the message that stops the start, ...]}``.

    python contextforge_probe.py < questions.json

Its own environment must hold settings that let the module load.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, Union

from mcp_provenance.contextforge import app
from mcp_provenance.contextforge._app import configured
from mcp_provenance.errors import ProvenanceError


def answer(settings: Dict[str, str]) -> Union[str, Dict[str, Any]]:
    try:
        keywords, _ = configured(settings)
    except ProvenanceError as refused:
        return str(refused)
    return keywords


def main() -> None:
    asked = json.load(sys.stdin)
    paths = [app.takes_mcp({"type": "http", "root_path": root, "path": path}) for root, path in asked["paths"]]
    print(json.dumps({"paths": paths, "settings": [answer(settings) for settings in asked["settings"]]}))


if __name__ == "__main__":
    main()
