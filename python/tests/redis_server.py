"""A Redis of the test's own: Debian's ``redis-server`` on a free port of 127.0.0.1, in a
temporary folder, saving nothing (``--save "" --appendonly no``), stopped (and started
again, on the same port) when a test says. Without ``redis-server`` the test is skipped,
saying so (``make setup-debian`` installs it)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from typing import Optional

import redis

#: How long Redis may take to start or stop.
START_SECONDS = 30


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RedisServer:
    """``redis-server`` on a port of its own: :meth:`start`, :meth:`stop`, :attr:`url`,
    :meth:`client`."""

    def __init__(self) -> None:
        found = shutil.which("redis-server")
        if found is None:
            raise unittest.SkipTest("the sessions tests run Debian's redis-server, which is not installed "
                                    "(make setup-debian installs it)")
        self._command = found
        self._folder = tempfile.TemporaryDirectory(prefix="mcp-provenance-redis-")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: Optional["subprocess.Popen[bytes]"] = None

    def start(self) -> "RedisServer":
        log = open(Path(self._folder.name) / "redis.log", "ab")
        self._process = subprocess.Popen(
            [self._command, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self._folder.name,
             "--save", "", "--appendonly", "no"], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"redis-server did not start: {self.log()}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=START_SECONDS)
        self._process = None

    def close(self) -> None:
        self.stop()
        self._folder.cleanup()

    def log(self) -> str:
        return (Path(self._folder.name) / "redis.log").read_text(encoding="utf-8", errors="replace")[-2000:]

    def client(self) -> "redis.Redis":
        """A client of this Redis (the ``redis`` package's, synchronous), its answers as text."""
        return redis.Redis.from_url(self.url, decode_responses=True, socket_timeout=START_SECONDS)

    def _answers(self) -> bool:
        try:
            with self.client() as client:
                return bool(client.ping())
        except redis.RedisError:
            return False
