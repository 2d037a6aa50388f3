"""Witnessed sessions shared by a gateway's processes through Redis (``sessions="redis://…"``):
two uvicorn processes of one gateway (``sessions_app.py``: a FastMCP server behind the
middleware) and a ``redis-server`` of the test's own. A session the app issued through one
process is witnessed through the other; Redis holds its key (the SHA-256 of the id, never the
id), for a day at most, until the app accepts a DELETE of it. With Redis stopped, or not
answering, the witness fails closed: the call is served and audited, its record names no
session, and the logger says so once."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

import httpx2

from mcp_provenance import ProvenanceError
from mcp_provenance.asgi import ProvenanceMiddleware, Receive, Scope, Send
from mcp_provenance.types import Account
from mcp_provenance.sessions import SESSION_KEY_PREFIX, SESSION_TTL_SECONDS, RedisSessions
from redis_server import RedisServer, free_port
from servers import HANDSHAKE, tool_call

HERE = Path(__file__).resolve().parent
#: How long a process may take to start, or a request to be answered.
SECONDS = 60

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: What the store's failure reads as on the logger (its first words).
UNANSWERED = "the session store (Redis) does not answer"


class Worker:
    """One process of the gateway: ``sessions_app:app`` under uvicorn on a port of its own,
    its audit lines in a file of its own, its stderr in another."""

    def __init__(self, folder: Path, name: str, sessions: str) -> None:
        self.port = free_port()
        self.audit = folder / f"{name}.jsonl"
        self.stderr = folder / f"{name}.log"
        with open(self.stderr, "wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "sessions_app:app", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "warning"],
                cwd=HERE, stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "MCP_PROVENANCE_SESSIONS": sessions, "AUDIT_FILE": str(self.audit)})
        deadline = time.monotonic() + SECONDS
        while not self._listens():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"the gateway's process {name} did not start:\n{self.log()}")
            time.sleep(0.1)
        self.http = httpx2.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=SECONDS)

    def _listens(self) -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def post(self, message: Dict[str, Any], session: Optional[str] = None) -> httpx2.Response:
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": HANDSHAKE}
        if session is not None:
            headers["mcp-session-id"] = session
        return self.http.post("/mcp", json=message, headers=headers)

    def records(self) -> List[Dict[str, Any]]:
        """The audit records of the messages it read, in order."""
        if not self.audit.exists():
            return []
        accounts = [json.loads(line) for line in self.audit.read_text(encoding="utf-8").splitlines()]
        return [account["record"] for account in accounts if account.get("kind") != "outcome" and "record" in account]

    def outcomes(self, count: int) -> List[Dict[str, Any]]:
        """The outcome accounts, once there are ``count`` of them: each is written once its
        answer is over, which may be after the client has it."""
        deadline = time.monotonic() + SECONDS
        while True:
            lines = self.audit.read_text(encoding="utf-8").splitlines() if self.audit.exists() else []
            outcomes = [account for account in map(json.loads, lines) if account.get("kind") == "outcome"]
            if len(outcomes) >= count or time.monotonic() > deadline:
                return outcomes
            time.sleep(0.05)

    def log(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=SECONDS)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        http = getattr(self, "http", None)
        if http is not None:
            http.close()


def key(session: str) -> str:
    """The key the store holds for ``session``, as the README says: the prefix, then the
    SHA-256 of the id in hex."""
    return "mcp-provenance:session:" + hashlib.sha256(session.encode()).hexdigest()


class TwoProcesses(unittest.TestCase):
    """Process A and process B of one gateway, sharing a Redis."""

    def setUp(self) -> None:
        self.redis = RedisServer().start()
        self.addCleanup(self.redis.close)
        folder = tempfile.TemporaryDirectory(prefix="mcp-provenance-sessions-")
        self.addCleanup(folder.cleanup)
        self.a = Worker(Path(folder.name), "a", self.redis.url)
        self.addCleanup(self.a.stop)
        self.b = Worker(Path(folder.name), "b", self.redis.url)
        self.addCleanup(self.b.stop)

    def initialize(self) -> str:
        """A session initialized through A: its id, as A's app issued it."""
        answer = self.a.post(INITIALIZE)
        self.assertEqual(answer.status_code, 200, answer.text)
        session = answer.headers["mcp-session-id"]
        self.assertEqual(self.a.post(INITIALIZED, session).status_code, 202)
        return session

    def test_a_session_issued_through_one_process_is_witnessed_through_the_other(self) -> None:
        session = self.initialize()
        # Redis holds its key, for a day at most, and never the id.
        with self.redis.client() as client:
            self.assertEqual(client.keys("*"), [key(session)])
            self.assertTrue(0 < client.ttl(key(session)) <= 86_400)
            self.assertNotIn(session, json.dumps([client.keys("*"), client.get(key(session))]))
        answer = self.b.post(tool_call(HANDSHAKE), session)
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertEqual(answer.json()["result"]["content"][0]["text"], "3 open orders in EU")
        [call] = self.b.records()
        self.assertEqual((call["method"], call["witnessed"].get("sessionId")), ("tools/call", session))
        self.assertEqual([outcome.get("sessionId") for outcome in self.b.outcomes(1)], [session])
        # Through A, every message in the session was witnessed (the initialize came before it).
        self.assertEqual([record["witnessed"].get("sessionId") for record in self.a.records()], [None, session])
        # A session id the app never issued is not, through either.
        self.b.post(tool_call(HANDSHAKE), "made-up")
        self.assertNotIn("sessionId", self.b.records()[-1]["witnessed"])
        # A DELETE the app accepted, through B: Redis forgets the session, and A does too.
        ended = self.b.http.delete("/mcp", headers={"mcp-session-id": session})
        self.assertEqual(ended.status_code, 204)
        with self.redis.client() as client:
            self.assertEqual(client.keys("*"), [])
        # Nothing said of the store on either process's log.
        self.assertNotIn(UNANSWERED, self.a.log() + self.b.log())

    def test_with_redis_stopped_a_call_is_served_and_audited_but_no_session_claimed(self) -> None:
        known = self.initialize()
        self.redis.stop()
        # A session issued while Redis is down: witnessed through A, which saw it issued.
        session = self.initialize()
        self.assertEqual([record["witnessed"].get("sessionId") for record in self.a.records()], [None, known, None, session])
        # Through B, two calls in it, and one in the session issued before: each served and
        # audited, and none claims a session (B never learnt any).
        for named in (session, session, known):
            answer = self.b.post(tool_call(HANDSHAKE), named)
            self.assertEqual(answer.status_code, 200, answer.text)
            self.assertEqual(answer.json()["result"]["content"][0]["text"], "3 open orders in EU")
        self.assertEqual([record["method"] for record in self.b.records()], ["tools/call"] * 3)
        self.assertEqual([record["witnessed"].get("sessionId") for record in self.b.records()], [None] * 3)
        outcomes = self.b.outcomes(3)
        self.assertEqual([outcome.get("sessionId") for outcome in outcomes], [None] * 3)
        self.assertEqual([outcome["requests"][0]["answer"] for outcome in outcomes], ["result"] * 3)
        # Said once for the outage by each process: not once a request, and on one line.
        for worker in (self.a, self.b):
            said = [line for line in worker.log().splitlines() if UNANSWERED in line]
            self.assertEqual(len(said), 1, worker.log())
            self.assertIn("(ConnectionError)", said[0])
        # Redis back (empty: it saved nothing): a session issued now is shared again, and
        # the process says the store answers again only at INFO (not shown by default).
        self.redis.start()
        again = self.initialize()
        self.b.post(tool_call(HANDSHAKE), again)
        self.assertEqual(self.b.records()[-1]["witnessed"].get("sessionId"), again)


class Blackhole:
    """A port that takes connections and never answers: a Redis too slow to wait for."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.url = f"redis://127.0.0.1:{self._listener.getsockname()[1]}/0"
        self._held: List[socket.socket] = []
        self._thread = threading.Thread(target=self._hold, daemon=True)
        self._thread.start()

    def _hold(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(connection)

    def close(self) -> None:
        self._listener.close()
        for connection in self._held:
            connection.close()


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """An app that answers every request with a result."""
    while (await receive()).get("more_body", False):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b'{"jsonrpc":"2.0","id":1,"result":{}}'})


class InProcess(unittest.IsolatedAsyncioTestCase):
    """The middleware's settings, and a Redis that never answers, without processes."""

    def test_a_bad_url_is_refused_when_the_middleware_is_made(self) -> None:
        for url in ("http://127.0.0.1:6379", "127.0.0.1:6379", "", 6379, "redis://127.0.0.1:notaport"):
            with self.subTest(url=url), self.assertRaises(ProvenanceError) as refused:
                ProvenanceMiddleware(app, sessions=url)  # type: ignore[arg-type]
            self.assertEqual(refused.exception.code, "invalid-option")
        # A password in the URL is never quoted.
        with self.assertRaises(ProvenanceError) as refused:
            ProvenanceMiddleware(app, sessions="https://:hunter2@127.0.0.1:6379")
        self.assertNotIn("hunter2", str(refused.exception))
        with self.assertRaises(ProvenanceError):
            RedisSessions("redis://127.0.0.1:6379", timeout=0)

    def test_the_layout_is_the_cores(self) -> None:
        self.assertEqual((SESSION_KEY_PREFIX, SESSION_TTL_SECONDS), ("mcp-provenance:session:", 86_400))

    async def test_a_redis_that_does_not_answer_is_waited_for_a_bounded_time(self) -> None:
        hole = Blackhole()
        self.addCleanup(hole.close)
        records: List[Account] = []
        gateway = ProvenanceMiddleware(app, sessions=RedisSessions(hole.url, timeout=0.2),
                                       audit=lambda account, line: records.append(account))
        transport = httpx2.ASGITransport(app=gateway)
        with self.assertLogs("mcp_provenance", logging.WARNING) as logged:
            async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                for _ in range(3):
                    answer = await client.post("/mcp", json=tool_call(HANDSHAKE), headers={"mcp-session-id": "s-1"})
                    self.assertEqual((answer.status_code, answer.json()["id"]), (200, 1))
        calls = [account.get("record") for account in records if account["kind"] != "outcome"]
        self.assertEqual([record and record["witnessed"].get("sessionId") for record in calls], [None] * 3)
        self.assertEqual([record is not None for record in calls], [True] * 3)
        self.assertEqual([record.getMessage().startswith(UNANSWERED) for record in logged.records], [True])
        self.assertIn("(TimeoutError)", logged.records[0].getMessage())


if __name__ == "__main__":
    unittest.main()
