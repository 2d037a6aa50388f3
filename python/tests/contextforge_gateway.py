"""What the ContextForge test drives: ContextForge started by the README's
start block in a copy of ``examples/contextforge`` of its own (its own SQLite
file, its own audit file, its own port), and the upstream server
(``contextforge_upstream.py``) it is in front of, with what that received."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Tuple

import httpx2

from contextforge_venv import ROOT, VENV, environment

EXAMPLE = ROOT / "examples" / "contextforge"
UPSTREAM = Path(__file__).with_name("contextforge_upstream.py")

#: How long a start may take: two workers migrating a new SQLite database, on a busy machine.
START_SECONDS = 300
#: How long a request or a command may take.
REQUEST_SECONDS = 60

#: The headers of every MCP request: JSON in, JSON or events out, the last protocol
#: version with a handshake (ContextForge serves /mcp stateless, so none is needed).
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def waited(ready: Any, seconds: float, process: "subprocess.Popen[bytes]", log: Path, what: str) -> None:
    """Waits for ``ready()`` to be true; fails with ``log``'s end when ``process`` ends first
    or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            ended = f"ended ({process.returncode})" if process.returncode is not None else f"not ready in {seconds} s"
            tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
            raise AssertionError(f"{what} {ended}:\n{tail}")
        time.sleep(0.25)


def stopped(process: "subprocess.Popen[bytes]", log: IO[bytes]) -> None:
    """Ends ``process`` and every process of its group (a shell, a server, its workers): asked
    first, then killed, the group's stragglers too (a worker uvicorn's supervisor started as
    it stopped outlives the shell)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=REQUEST_SECONDS)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    log.close()


def copied(folder: Path) -> Path:
    """A copy of ``examples/contextforge`` (what running it makes left out) in ``folder``;
    where it is."""
    ignored = [line for line in (EXAMPLE / ".gitignore").read_text(encoding="utf-8").splitlines()
               if line and not line.startswith("#")]
    home = folder / "examples" / "contextforge"
    shutil.copytree(EXAMPLE, home, ignore=shutil.ignore_patterns(*ignored))
    return home


def ended(block: str, folder: Path, settings: Mapping[str, str]) -> Tuple[int, str, str]:
    """``block`` run as :class:`Gateway` runs it, in a copy of the example of its own in
    ``folder``, to its end: its exit status, and what it wrote to stdout and to stderr. A
    block that has not ended in ``START_SECONDS`` is stopped, every process of it."""
    copied(folder)
    port = str(free_port())
    with open(folder / "stdout.log", "wb") as out, open(folder / "stderr.log", "wb") as err:
        process = subprocess.Popen(["sh", "-e", "-c", block], cwd=folder, stdout=out, stderr=err, start_new_session=True,
                                   env={**environment(), "MCG_PORT": port, "PORT": port, **settings})
        try:
            process.wait(timeout=START_SECONDS)
        except subprocess.TimeoutExpired:
            stopped(process, out)
    return (process.returncode, (folder / "stdout.log").read_text(encoding="utf-8", errors="replace"),
            (folder / "stderr.log").read_text(encoding="utf-8", errors="replace"))


class Upstream:
    """The upstream MCP server, on a port of its own, writing what it receives in ``folder``."""

    def __init__(self, folder: Path) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self._file = folder / "received.jsonl"
        self._logged = folder / "upstream.log"
        self._log = open(self._logged, "wb")
        self._process = subprocess.Popen([sys.executable, str(UPSTREAM), str(port), str(self._file)],
                                         stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self._port = port

    def ready(self) -> None:
        def accepts() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", self._port)) == 0
        waited(accepts, START_SECONDS, self._process, self._logged, "the upstream server")

    def received(self) -> List[str]:
        """Every body posted to the server, as it received it."""
        if not self._file.exists():
            return []
        return [json.loads(line)["body"] for line in self._file.read_text(encoding="utf-8").splitlines()]

    def calls(self, region: str) -> List[str]:
        """The bodies of the calls of ``open_orders`` for ``region`` it received."""
        found = []
        for body in self.received():
            message = json.loads(body)
            if message.get("method") == "tools/call" and message["params"].get("arguments", {}).get("region") == region:
                found.append(body)
        return found

    def completions(self, typed: str) -> List[str]:
        """The bodies of the completions of an argument from ``typed`` it received."""
        found = []
        for body in self.received():
            message = json.loads(body)
            if message.get("method") == "completion/complete" and message["params"].get("argument", {}).get("value") == typed:
                found.append(body)
        return found

    def stop(self) -> None:
        stopped(self._process, self._log)


class Gateway:
    """ContextForge, started by ``block`` (the README's start block, run as it is written) in
    ``folder``, which gets a copy of ``examples/contextforge``, with ``settings`` over the
    environment."""

    def __init__(self, block: str, folder: Path, settings: Mapping[str, str]) -> None:
        port = str(free_port())
        #: Where the block runs ContextForge, and where it keeps its settings and files.
        self.home = copied(folder)
        self.url = f"http://127.0.0.1:{port}"
        self._logged = folder / "gateway.log"
        self._log = open(self._logged, "wb")
        # `mcpgateway` listens on MCG_PORT, and ContextForge calls itself (its SSE and
        # WebSocket transports, /rpc over loopback) on PORT: the same port, one of its own.
        self._environment = {**environment(), "MCG_PORT": port, "PORT": port, **settings}
        self._process = subprocess.Popen(["sh", "-e", "-c", block], cwd=folder, env=self._environment,
                                         stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        self._http = httpx2.Client(base_url=self.url, timeout=REQUEST_SECONDS)
        self._token: Optional[str] = None

    def ready(self) -> None:
        def healthy() -> bool:
            try:
                return self._http.get("/health").status_code == 200
            except httpx2.TransportError:
                return False
        waited(healthy, START_SECONDS, self._process, self._logged, "ContextForge")
        # A token for the platform admin, made as ContextForge's quick start makes one (its
        # secret read from the .env the block wrote).
        made = subprocess.run([str(VENV / "bin" / "python"), "-m", "mcpgateway.utils.create_jwt_token",
                               "--username", "admin@example.com", "--exp", "60"], cwd=self.home, env=self._environment,
                              capture_output=True, text=True, check=True, timeout=REQUEST_SECONDS)
        self._token = made.stdout.strip().splitlines()[-1]

    def admin(self, path: str, document: Dict[str, Any]) -> Dict[str, Any]:
        """Posts ``document`` to ContextForge's admin API; its answer."""
        answer = self._http.post(path, json=document, headers=self._authorized({}))
        if answer.status_code not in (200, 201):
            raise AssertionError(f"POST {path}: {answer.status_code} {answer.text}")
        made: Dict[str, Any] = answer.json()
        return made

    def tools(self) -> List[Dict[str, Any]]:
        return self.listed("/tools")

    def listed(self, path: str) -> List[Dict[str, Any]]:
        """What ContextForge's admin API lists at ``path`` (``/tools``, ``/prompts``)."""
        answer = self._http.get(path, headers=self._authorized({}))
        answer.raise_for_status()
        listed: List[Dict[str, Any]] = answer.json()
        return listed

    def post(self, path: str, body: bytes, session: Optional[str] = None) -> httpx2.Response:
        """Posts ``body`` to ``path`` as an MCP client does, the admin's token with it (in the
        session ``session``, when given)."""
        headers = MCP_HEADERS if session is None else {**MCP_HEADERS, "mcp-session-id": session}
        return self._http.post(path, content=body, headers=self._authorized(headers))

    def get(self, path: str, *, token: bool = True) -> httpx2.Response:
        """Gets ``path``, with the admin's token (or, ``token=False``, none)."""
        return self._http.get(path, headers=self._authorized({}) if token else {})

    def log(self) -> str:
        """What the block has written so far (ContextForge's log, its workers' included)."""
        return self._logged.read_text(encoding="utf-8", errors="replace")

    def shell(self, block: str) -> str:
        """Runs ``block`` (a README's, as written) in the example's folder, in the environment
        ContextForge runs in, as an operator's second shell there; what it wrote to stdout."""
        ran = subprocess.run(["sh", "-e", "-c", block], cwd=self.home, env=self._environment, capture_output=True,
                             text=True, check=False, timeout=REQUEST_SECONDS)
        if ran.returncode != 0:
            raise AssertionError(f"{block}\nfailed ({ran.returncode}):\n{ran.stdout}{ran.stderr}")
        return ran.stdout

    def until(self, ready: Callable[[], bool], what: str) -> None:
        """Waits for ``ready()`` (``what``) while ContextForge runs, ``REQUEST_SECONDS`` at most."""
        waited(ready, REQUEST_SECONDS, self._process, self._logged, what)

    def audit(self) -> List[str]:
        """The lines of the audit file."""
        audit = self.home / "audit.jsonl"
        return audit.read_text(encoding="utf-8").splitlines() if audit.exists() else []

    def output(self, seconds: float) -> str:
        """What the block wrote, once it ended (in ``seconds`` at most)."""
        self._process.wait(timeout=seconds)
        return self._logged.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        self._http.close()
        stopped(self._process, self._log)

    def _authorized(self, headers: Mapping[str, str]) -> Dict[str, str]:
        if self._token is None:
            raise AssertionError("ContextForge is not ready")
        return {**headers, "authorization": f"Bearer {self._token}"}
