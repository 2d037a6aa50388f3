"""Asks ContextForge, in its own environment (Python 3.12), what its code makes
of the ``_meta`` the app's start checks measure (``_limits.largest``): each case
sets ContextForge's settings in the environment, reads them afresh as it reads
them (its ``get_settings``, ``.env`` included), and answers what
``validate_meta_data`` says of the largest ``_meta`` (the very check its ``/mcp``
and its ``prompts/get`` and ``resources/read`` run) and of the ``_meta``
given, what its validation middleware answers a POST whose envelope holds each
text given, and what the start checks say (``_limits.refusals``). Reads
``{"cases": [{"environment": {...}, "options": {...}, "metas": [...], "texts":
[...]}, ...]}`` on stdin; writes one JSON line: ``[{"largest": "accepted" or its
message, "metas": [...], "texts": [the status of each POST], "refusals": [...]},
...]``.

    python contextforge_verdicts.py < cases.json

It runs where ContextForge's settings (its secrets) let it load them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any, Dict, List

import httpx
from mcpgateway.common.validators import validate_meta_data
from mcpgateway.config import get_settings, settings
from mcpgateway.middleware.validation_middleware import ValidationMiddleware
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_provenance import AI_INVOCATION_KEY
from mcp_provenance.contextforge._limits import largest, refusals


def verdict(meta: Dict[str, Any]) -> str:
    try:
        validate_meta_data(meta)
    except ValueError as refused:
        return str(refused)
    return "accepted"


async def posted(text: str) -> int:
    """The status ContextForge's validation middleware, as its settings make it, answers a
    tools/call whose envelope holds ``text``."""

    async def served(_: Any) -> JSONResponse:
        return JSONResponse({"jsonrpc": "2.0", "id": 1, "result": {}})

    app = ValidationMiddleware(Starlette(routes=[Route("/rpc", served, methods=["POST"])]))
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "arguments": {}, "_meta": {AI_INVOCATION_KEY: {"turnId": "t-1", "userIntent": {"text": text}}}}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
        try:
            return (await client.post("/rpc", json=body)).status_code
        except Exception as refused:  # it raises its HTTPException past its own handler
            return int(getattr(refused, "status_code", 500))


def main() -> None:
    answers: List[Dict[str, Any]] = []
    for case in json.load(sys.stdin)["cases"]:
        os.environ.update(case["environment"])
        get_settings.cache_clear()
        answers.append({"largest": verdict(largest(case["options"])), "metas": [verdict(meta) for meta in case.get("metas", [])],
                        "texts": [asyncio.run(posted(text)) for text in case.get("texts", [])],
                        "refusals": refusals(settings, case["options"])})
        for name in case["environment"]:
            del os.environ[name]
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
