"""The Python ``mcp`` client of js-tests/differential-back.test.mjs: for each
job, a session over ``mcp.client.streamable_http`` to its URL, ``initialize``,
then the case's tool called once per turn (one after the other, or with
``concurrent`` each 100 ms after the one before, all waiting at once) with
the SEP-2817 envelope ``{"turnId": <turn>}``; what the call gave: the result's ``_meta``
entry under the envelope's key when it took one, else the error it got.

  python python_client.py   # reads one JSON line {"jobs": [{"key", "url", "tool", "turns": [...], "concurrent"}],
                            # "concurrency", "call_seconds", "job_seconds"}; prints one JSON line per job
                            # {"key", "calls": [{"took": bool, "meta"?, "error"?, "code"?, "dataCode"?}]},
                            # then {"done": true}
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, Dict, List

import anyio

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

KEY = "io.modelcontextprotocol/aiInvocation"
ABSENT = "(absent)"


def failure(error: BaseException) -> Dict[str, Any]:
    """An error as the test reads it: its text, and the JSON-RPC code and `data.code` when it has them."""
    seen: Dict[str, Any] = {"took": False, "error": f"{type(error).__name__}: {error}"[:300]}
    data = getattr(error, "error", None)
    if data is not None:
        seen["code"] = getattr(data, "code", None)
        extra = getattr(data, "data", None)
        if isinstance(extra, dict):
            seen["dataCode"] = extra.get("code")
    return seen


async def call(session: ClientSession, tool: str, turn: str, call_seconds: float) -> Dict[str, Any]:
    """One call of the tool with the envelope ``{"turnId": turn}``: what it gave."""
    try:
        with anyio.fail_after(call_seconds):
            result = await session.call_tool(tool, {}, read_timeout_seconds=call_seconds, meta={KEY: {"turnId": turn}})
    except Exception as error:  # noqa: BLE001 - every failure is an outcome
        return failure(error)
    meta = result.model_dump(by_alias=True, mode="json").get("_meta") or {}
    return {"took": True, "meta": meta.get(KEY, ABSENT) if isinstance(meta, dict) else ABSENT}


async def run(job: Dict[str, Any], call_seconds: float, job_seconds: float) -> Dict[str, Any]:
    calls: List[Dict[str, Any]] = []
    try:
        with anyio.fail_after(job_seconds):
            async with streamable_http_client(job["url"]) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    if job.get("concurrent"):
                        # Each call 100 ms after the one before, all waiting at once.
                        slots: List[Dict[str, Any]] = [{} for _ in job["turns"]]

                        async def call_at(index: int, turn: str) -> None:
                            await anyio.sleep(0.1 * index)
                            slots[index] = await call(session, job["tool"], turn, call_seconds)

                        async with anyio.create_task_group() as group:
                            for index, turn in enumerate(job["turns"]):
                                group.start_soon(call_at, index, turn)
                        calls.extend(slots)
                    else:
                        for turn in job["turns"]:
                            calls.append(await call(session, job["tool"], turn, call_seconds))
    except Exception as error:  # noqa: BLE001 - a failed session (or one past its bound) too
        if len(calls) < len(job["turns"]):
            calls.append(failure(error))
    return {"key": job["key"], "calls": calls}


async def main() -> None:
    request = json.loads(sys.stdin.readline())
    limit = anyio.Semaphore(request.get("concurrency", 4))
    call_seconds = request.get("call_seconds", 3.0)
    job_seconds = request.get("job_seconds", 10.0)

    async def one(job: Dict[str, Any]) -> None:
        async with limit:
            try:
                outcome = await run(job, call_seconds, job_seconds)
            except Exception as error:  # noqa: BLE001 - said, not raised
                outcome = {"key": job["key"], "calls": [failure(error)]}
            print(json.dumps(outcome), flush=True)

    async with anyio.create_task_group() as group:
        for job in request["jobs"]:
            group.start_soon(one, job)
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    anyio.run(main)
