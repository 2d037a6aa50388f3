"""``python -m mcp_provenance.contextforge [mcpgateway's options]``: ContextForge's own
``mcpgateway`` command serving ``mcp_provenance.contextforge:app``, its settings checked first
in the process that starts the workers.

    python -m mcp_provenance.contextforge --env-file .env --workers 2

is ``mcpgateway mcp_provenance.contextforge:app --env-file .env --workers 2``, but for a setting
that stops the start: it says which on one line of stderr, and the command ends with status 3,
whatever the number of workers. (uvicorn, which ``mcpgateway`` runs, imports the app in each
worker only when there are several, and its supervisor ends with status 0 when they fail to
start.) The file of ``--env-file`` is read into the environment first, as uvicorn reads it, and
ContextForge's settings are read as ContextForge reads them, its ``.env`` included.
"""

# ContextForge is not installed where the package's types are checked (the tests' environment).
# mypy: disable-error-code="import-not-found"

from __future__ import annotations

import sys
from typing import List, Optional

#: The app the command serves.
APP = "mcp_provenance.contextforge:app"


def env_file(arguments: List[str]) -> Optional[str]:
    """The file uvicorn's ``--env-file`` names among ``arguments``, if one does (the last)."""
    found = None
    for index, argument in enumerate(arguments):
        if argument == "--env-file" and index + 1 < len(arguments):
            found = arguments[index + 1]
        elif argument.startswith("--env-file="):
            found = argument[len("--env-file="):]
    return found


def main(arguments: List[str]) -> None:
    """Checks the settings, then runs ``mcpgateway`` with ``APP`` and ``arguments``."""
    # Its host and port come from the environment as it is before --env-file is read, as
    # with `mcpgateway` itself.
    from mcpgateway.cli import main as mcpgateway

    named = env_file(arguments)
    if named is not None:
        from dotenv import load_dotenv

        load_dotenv(named)
    # The app's module checks every setting when it is imported, and stops the start on one
    # that is wrong (one line on stderr, status 3); it loads ContextForge's app only when a
    # worker asks for `app`.
    from . import _app  # noqa: F401

    sys.argv = ["mcpgateway", APP, *arguments]
    mcpgateway()


if __name__ == "__main__":
    main(sys.argv[1:])
