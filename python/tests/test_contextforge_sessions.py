"""ContextForge 1.1.0 on two hosts' worth of processes, sharing what they witnessed: two
``python -m mcp_provenance.contextforge`` processes (the README's start command, a worker
each), on two ports, with one SQLite database file and one Redis (``CACHE_TYPE=redis``, its
stateful sessions and their affinity on, as ContextForge runs them on many workers), and
``MCP_PROVENANCE_SESSIONS`` naming that Redis. A session initialized through one is witnessed
through the other: the call's audit record, written by the other process, names it. Without
the setting (each process remembering its own), it would not be. Skipped, saying why, without
Python 3.12 from pyenv or Debian's redis-server."""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, List

from contextforge_gateway import EXAMPLE, Gateway, Upstream, ended
from contextforge_venv import ROOT, installed
from redis_server import RedisServer
from test_contextforge import blocks, call, with_turn

#: The last protocol version with a handshake, and so with sessions.
HANDSHAKE = "2025-11-25"
#: The README's section whose settings the two processes run with.
SECTION = "Several processes or hosts: sessions through Redis"


def settings(block: str, redis: str) -> Dict[str, str]:
    """The ``KEY=value`` lines of ``block``, each Redis URL in them the test's own."""
    pairs = [line.split("=", 1) for line in block.splitlines() if line.strip()]
    return {key: value.replace("redis://127.0.0.1:6379/0", redis) for key, value in pairs}


def records(gateway: Gateway, method: str) -> List[Dict[str, Any]]:
    """The audit records of ``method`` in ``gateway``'s own audit file."""
    accounts = [json.loads(line) for line in gateway.audit()]
    return [account["record"] for account in accounts if account.get("record", {}).get("method") == method]


class TwoProcesses(unittest.TestCase):
    redis: RedisServer
    upstream: Upstream
    #: The process a session is initialized through, and the one it goes on through.
    one: Gateway
    other: Gateway

    @classmethod
    def setUpClass(cls) -> None:
        install, start = blocks(EXAMPLE / "README.md", "Run it")
        installed(install)
        cls.redis = RedisServer().start()
        cls.addClassCleanup(cls.redis.close)
        folder = Path(tempfile.mkdtemp(prefix="sessions-", dir=ROOT / "target" / "contextforge"))
        cls.addClassCleanup(shutil.rmtree, folder, ignore_errors=True)
        # What the two share: the database, Redis, the secrets (a token one makes, the other takes).
        password = "Aa1!" + secrets.token_urlsafe(24)
        [dotenv] = blocks(EXAMPLE / "README.md", SECTION)
        shared = {**settings(dotenv, cls.redis.url), "DATABASE_URL": f"sqlite:///{folder / 'mcp.db'}",
                  "JWT_SECRET_KEY": secrets.token_hex(32), "AUTH_ENCRYPTION_SECRET": secrets.token_hex(32),
                  "PLATFORM_ADMIN_PASSWORD": password, "BASIC_AUTH_PASSWORD": password}
        start = start.replace("--workers 2", "--workers 1")
        cls.upstream = Upstream(folder)
        cls.addClassCleanup(cls.upstream.stop)
        gateways = []
        for name in ("one", "other"):
            (folder / name).mkdir()
            gateway = Gateway(start, folder / name, shared)
            cls.addClassCleanup(gateway.stop)
            # One at a time: the first makes the database, the second finds it made.
            gateway.ready()
            gateways.append(gateway)
        cls.one, cls.other = gateways
        cls.upstream.ready()
        cls.one.admin("/gateways", {"name": "orders", "url": cls.upstream.url, "transport": "STREAMABLEHTTP"})

    def test_a_session_initialized_through_one_is_witnessed_through_the_other(self) -> None:
        initialize = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}).encode()
        initialized = self.one.post("/mcp", initialize)
        self.assertEqual(initialized.status_code, 200, initialized.text)
        session = initialized.headers["mcp-session-id"]
        # Redis holds the middleware's key: the SHA-256 of the id, never the id (ContextForge's
        # own keys, beside it, hold the id).
        with self.redis.client() as client:
            key = "mcp-provenance:session:" + hashlib.sha256(session.encode()).hexdigest()
            self.assertEqual(client.keys("mcp-provenance:*"), [key])
        # The client goes on in its session, through the other process.
        answer = self.other.post("/mcp", call("EU", with_turn("turn-9"), request_id=9), session)
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertEqual(answer.json()["result"]["content"], [{"type": "text", "text": "3 open orders in EU"}])
        [record] = records(self.other, "tools/call")
        self.assertEqual(record["witnessed"].get("sessionId"), session)
        self.assertEqual(record["clientAsserted"]["turnId"], "turn-9")
        # Through the one it was initialized through, the initialize itself (before the session) names none.
        [first] = records(self.one, "initialize")
        self.assertNotIn("sessionId", first["witnessed"])


class ABadSetting(unittest.TestCase):
    def test_a_value_that_is_not_a_redis_url_stops_the_start_with_one_line_and_status_3(self) -> None:
        install, start = blocks(EXAMPLE / "README.md", "Run it")
        installed(install)
        folder = Path(tempfile.mkdtemp(prefix="sessions-refused-", dir=ROOT / "target" / "contextforge"))
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        code, out, err = ended(start, folder, {"MCP_PROVENANCE_SESSIONS": "https://:hunter2@127.0.0.1:6379/0"})
        said = [line for line in err.splitlines() if "MCP_PROVENANCE_SESSIONS" in line]
        self.assertEqual(said, ["mcp_provenance.contextforge: MCP_PROVENANCE_SESSIONS is not the URL of a Redis "
                                "(redis://, rediss:// or unix://), such as redis://127.0.0.1:6379/0"], err[-4000:])
        self.assertEqual(code, 3)
        self.assertNotIn("hunter2", out + err)
        self.assertNotIn("Application startup complete", out + err)


if __name__ == "__main__":
    unittest.main()
