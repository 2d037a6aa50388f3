"""ContextForge with the change proposed upstream (``upstream/contextforge/
meta-in-pre-invoke.patch``) and :class:`mcp_provenance.contextforge.ProvenancePlugin`.

The patch is applied to a copy of what ``pip install mcp-contextforge-gateway==1.1.0``
installs (its ``cpex`` and ``mcpgateway``), in a Python 3.12 virtual environment under
``target/contextforge-upstream/venv`` (made once, kept while its requirements stay the
same), and put before the installed ones on ``PYTHONPATH`` with the package under test.
Then the tests the patch adds run there, in ContextForge's own style, and ContextForge
itself runs with the plugin loaded by its plugin manager (SQLite, its default workers) in
front of a FastMCP server that writes down every body it receives: what the upstream gets
is read from there. Without Python 3.12 the test is skipped, saying so."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import unittest
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from contextforge_gateway import REQUEST_SECONDS, START_SECONDS, free_port, stopped, waited
from contextforge_venv import ROOT, python312

import mcp_provenance
from mcp_provenance import AI_INVOCATION_KEY, UI_KEY
from servers import INTENT, META

PATCH = ROOT / "upstream" / "contextforge" / "meta-in-pre-invoke.patch"
WORK = ROOT / "target" / "contextforge-upstream"
VENV = WORK / "venv"

#: What the virtual environment holds: the release the patch is made against, and what its
#: tests run with.
REQUIREMENTS = ["mcp-contextforge-gateway==1.1.0", "pytest>=8,<10", "pytest-asyncio>=1,<2"]

#: How long the first install may take: ContextForge and its hundred dependencies.
INSTALL_SECONDS = 900

#: The modules the patch changes whose examples changed with them.
DOCTESTED = ["cpex/framework/hooks/tools.py", "cpex/framework/hooks/prompts.py", "cpex/framework/hooks/resources.py",
             "mcpgateway/plugins/policy.py"]

#: The upstream of the test: FastMCP (the tests' own Python) serving a tool, a prompt and a
#: resource, behind the ContextForge test's recorder of every body it receives.
UPSTREAM = """
import sys
import uvicorn
from fastmcp import FastMCP
from contextforge_upstream import Recorder

server = FastMCP("orders")

@server.tool
def open_orders(region: str) -> str:
    return f"3 open orders in {region}"

@server.prompt
def brief() -> str:
    return "Summarize the open orders"

@server.resource("orders://open")
def open_list() -> str:
    return "3 open orders"

app = server.http_app(stateless_http=True, json_response=True)
uvicorn.run(Recorder(app, sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""

#: The audit sink the plugin is configured with: each account one JSON line, and an error
#: while the file ``PROVENANCE_SINK_FAILS`` names exists (a full disk).
SINK = """
import json
import os

def keep(account):
    if os.path.exists(os.environ["PROVENANCE_SINK_FAILS"]):
        raise OSError("the audit store is full")
    with open(os.environ["PROVENANCE_SINK"], "a", encoding="utf-8") as out:
        out.write(json.dumps(account) + "\\n")
"""

#: The gateway's plugin file: the plugin as an operator configures it.
PLUGINS = """
plugins:
  - name: "Provenance"
    kind: "mcp_provenance.contextforge.ProvenancePlugin"
    hooks: ["tool_pre_invoke", "tool_post_invoke", "prompt_pre_fetch", "resource_pre_fetch"]
    mode: "sequential"
    on_error: "fail"
    priority: 10
    config:
      policy: {userIntent: "redact"}
      audit: "provenance_sink:keep"
"""

#: Loads the plugin with each configuration of ``sys.argv[1]`` (a JSON list of the members
#: of a plugin config) and prints, for each, what loading it raised (``loaded`` if nothing).
LOADS = """
import json
import sys
from cpex.framework import PluginConfig
from mcp_provenance.contextforge import ProvenancePlugin

for options in json.loads(sys.argv[1]):
    try:
        ProvenancePlugin(PluginConfig(name="Provenance", kind="mcp_provenance.contextforge.ProvenancePlugin", **options))
        print("loaded")
    except Exception as error:
        print(type(error).__name__, error.code, error)
"""

#: A plugin configured as ``PLUGINS`` configures it.
CONFIGURED = {"hooks": ["tool_pre_invoke"], "mode": "sequential", "on_error": "fail",
              "config": {"policy": {"userIntent": "redact"}, "audit": "provenance_sink:keep"}}

#: What the upstream gets of the host's envelope: the intent redacted, the unknown field
#: dropped (AI-8), the other `_meta` keys as they came.
REDACTED = {
    AI_INVOCATION_KEY: {"invocationReason": {"text": "The user asked for the open orders"},
                        "model": {"name": "example-model"}, "userIntent": {"redacted": True}, "turnId": "turn-7"},
    UI_KEY: {"initiator": "model"},
    "vscode.conversationId": "conv-1",
}

#: What a record keeps of the client's claims, the intent redacted.
ASSERTED = {"turnId": "turn-7", "model": "example-model", "invocationReason": "The user asked for the open orders",
            "userIntentRedacted": True,
            "correlation": [{"kind": "turn", "value": "turn-7", "key": AI_INVOCATION_KEY, "member": "turnId"},
                            {"kind": "conversation", "value": "conv-1", "key": "vscode.conversationId"}]}

#: What the plugin changed on the way, by rule.
CHANGES = [{"action": "redacted", "path": "/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text", "rule": "AI-15"},
           {"action": "dropped", "path": "/params/_meta/io.modelcontextprotocol~1aiInvocation/x-vendor", "rule": "AI-8"}]


def environment(run: Path, *paths: Path) -> Dict[str, str]:
    """What ContextForge and its tests run with: ``paths`` first on ``PYTHONPATH``, a SQLite
    database and strong secrets of their own, the plugin file, 127.0.0.1 allowed as an
    upstream (where ContextForge registers no server by default), and ``_meta`` read three
    deep, as deep as SEP-2817's envelope nests (``userIntent.text``; the default is 2)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(path) for path in paths),
            "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "DATABASE_URL": f"sqlite:///{run / 'mcp.db'}", "CACHE_TYPE": "memory",
            "JWT_SECRET_KEY": "provenance-test-jwt-secret-0123456789abcdef",
            "AUTH_ENCRYPTION_SECRET": "provenance-test-encryption-0123456789abcdef",
            "PLATFORM_ADMIN_EMAIL": "admin@example.com", "PLATFORM_ADMIN_PASSWORD": "Provenance-Test-Pw1!",
            "BASIC_AUTH_PASSWORD": "Provenance-Test-Pw1!", "DEFAULT_USER_PASSWORD": "Provenance-Test-Pw1!",
            "PLUGINS_ENABLED": "true", "PLUGINS_CONFIG_FILE": str(run / "plugins.yaml"),
            "SSRF_ALLOW_LOCALHOST": "true", "MCPGATEWAY_UI_ENABLED": "false", "META_MAX_DEPTH": "3",
            "PROVENANCE_SINK": str(run / "audit.jsonl"), "PROVENANCE_SINK_FAILS": str(run / "audit-fails")}


def prepared_venv() -> None:
    """Makes the virtual environment, unless it holds ``REQUIREMENTS`` already."""
    marker = VENV / "provenance-requirements.txt"
    wanted = "\n".join(REQUIREMENTS)
    if marker.exists() and marker.read_text(encoding="utf-8") == wanted:
        return
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([str(python312()), "-m", "venv", str(VENV)], check=True, timeout=INSTALL_SECONDS)
    installed = subprocess.run([str(VENV / "bin" / "pip"), "install", "--quiet", *REQUIREMENTS],
                               capture_output=True, text=True, check=False, timeout=INSTALL_SECONDS)
    if installed.returncode != 0:
        raise AssertionError(f"pip install {' '.join(REQUIREMENTS)} failed:\n{installed.stdout}{installed.stderr}")
    marker.write_text(wanted, encoding="utf-8")


def listening(port: int) -> bool:
    """Whether something listens on ``port`` of 127.0.0.1."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def site_packages() -> Path:
    """Where the virtual environment's packages are."""
    [found] = (VENV / "lib").glob("python3.12/site-packages")
    return found


class PatchedContextForge(unittest.TestCase):
    """ContextForge 1.1.0, the patch applied, with the plugin."""

    run_folder: Path
    env: Dict[str, str]
    url: str
    token: str

    @classmethod
    def setUpClass(cls) -> None:
        prepared_venv()
        cls.run_folder = run = WORK / "run"
        shutil.rmtree(run, ignore_errors=True)
        (run / "home").mkdir(parents=True)
        for package in ("cpex", "mcpgateway"):
            shutil.copytree(site_packages() / package, run / "patched" / package,
                            ignore=shutil.ignore_patterns("__pycache__"))
        patched = subprocess.run(["patch", "-p1", "--forward", "-d", str(run / "patched"), "-i", str(PATCH)],
                                 capture_output=True, text=True, check=False, timeout=REQUEST_SECONDS)
        if patched.returncode != 0:
            raise AssertionError(f"the patch does not apply to 1.1.0:\n{patched.stdout}{patched.stderr}")
        shutil.copytree(Path(mcp_provenance.__file__).parent, run / "packages" / "mcp_provenance",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (run / "packages" / "provenance_sink.py").write_text(SINK, encoding="utf-8")
        (run / "plugins.yaml").write_text(PLUGINS, encoding="utf-8")
        cls.env = environment(run, run / "patched", run / "packages")
        port, upstream_port = free_port(), free_port()
        cls.url = f"http://127.0.0.1:{port}"
        upstream = cls.started([sys.executable, "-c", UPSTREAM, str(upstream_port), str(run / "received.jsonl")],
                               "upstream.log", {**os.environ, "PYTHONPATH": str(Path(__file__).parent)})
        gateway = cls.started([str(VENV / "bin" / "mcpgateway"), "--host", "127.0.0.1", "--port", str(port)],
                              "gateway.log", cls.env)
        waited(lambda: listening(upstream_port), START_SECONDS, upstream, run / "upstream.log", "the upstream server")
        waited(lambda: cls.send("/health", None)[0] == 200, START_SECONDS, gateway, run / "gateway.log", "ContextForge")
        made = subprocess.run([str(VENV / "bin" / "python"), "-m", "mcpgateway.utils.create_jwt_token", "--username",
                               "admin@example.com", "--exp", "60"], cwd=run / "home", env=cls.env, capture_output=True,
                              text=True, check=True, timeout=REQUEST_SECONDS)
        cls.token = made.stdout.strip().splitlines()[-1]
        status, registered = cls.send("/gateways", {"name": "orders", "url": f"http://127.0.0.1:{upstream_port}/mcp",
                                                    "transport": "STREAMABLEHTTP"})
        if status not in (200, 201):
            raise AssertionError(f"registering the upstream: {status} {registered}")

    @classmethod
    def started(cls, command: List[str], log: str, env: Dict[str, str]) -> "subprocess.Popen[bytes]":
        """``command`` started in a process group of its own, ended when the class is done."""
        opened = open(cls.run_folder / log, "wb")
        process = subprocess.Popen(command, cwd=cls.run_folder / "home", env=env, stdout=opened,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        cls.addClassCleanup(stopped, process, opened)
        return process

    @classmethod
    def send(cls, path: str, document: Optional[Dict[str, Any]]) -> Tuple[int, Any]:
        """GETs ``path`` (``document`` ``None``) or POSTs ``document`` to it, as the platform
        admin once there is a token; the status and the JSON answer (``None`` when none came)."""
        headers = {"content-type": "application/json"}
        if hasattr(cls, "token"):
            headers["authorization"] = f"Bearer {cls.token}"
        request = urllib.request.Request(cls.url + path, headers=headers, method="GET" if document is None else "POST",
                                         data=None if document is None else json.dumps(document).encode())
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as refused:
            return refused.code, json.loads(refused.read() or b"null")
        except OSError:
            return 0, None

    def rpc(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """What ``/rpc`` answers to a ``method`` request with ``params``."""
        status, answer = self.send("/rpc", {"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
        self.assertEqual(status, 200, answer)
        made: Dict[str, Any] = answer
        return made

    def received(self, method: str) -> List[Dict[str, Any]]:
        """The `_meta` of each ``method`` request the upstream received."""
        received = self.run_folder / "received.jsonl"
        lines = received.read_text(encoding="utf-8").splitlines() if received.exists() else []
        messages = [json.loads(json.loads(line)["body"]) for line in lines]
        return [message["params"].get("_meta") for message in messages if message.get("method") == method]

    def accounts(self) -> List[Dict[str, Any]]:
        """Every account the plugin handed the audit sink, in order."""
        audit = self.run_folder / "audit.jsonl"
        return [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()] if audit.exists() else []

    def envelopes(self, method: str) -> List[Optional[Dict[str, Any]]]:
        """The SEP-2817 envelope of each ``method`` request the upstream received."""
        return [(meta or {}).get(AI_INVOCATION_KEY) for meta in self.received(method)]

    def test_the_patch_applies_to_the_release_and_its_tests_pass(self) -> None:
        ran = subprocess.run([str(VENV / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              # ContextForge's own pytest settings (its pyproject.toml).
                              "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function",
                              "--doctest-modules", "tests/unit", *DOCTESTED],
                             cwd=self.run_folder / "patched", env={**self.env, "DATABASE_URL": f"sqlite:///{self.run_folder / 'unit.db'}"},
                             capture_output=True, text=True, check=False, timeout=INSTALL_SECONDS)
        self.assertEqual(ran.returncode, 0, ran.stdout[-6000:] + ran.stderr[-2000:])
        self.assertRegex(ran.stdout, r"\n28 passed")

    def test_a_tool_call_goes_on_redacted_and_only_its_turn_id_comes_back(self) -> None:
        before = len(self.accounts())
        answer = self.rpc("tools/call", {"name": "orders-open-orders", "arguments": {"region": "EU"}, "_meta": META})
        self.assertEqual(answer["result"]["content"][0]["text"], "3 open orders in EU")
        self.assertEqual(answer["result"]["_meta"][AI_INVOCATION_KEY], {"turnId": "turn-7"})
        [meta] = [meta for meta in self.received("tools/call") if (meta or {}).get(AI_INVOCATION_KEY, {}).get("turnId") == "turn-7"]
        self.assertEqual({key: meta[key] for key in REDACTED}, REDACTED)
        self.assertNotIn(INTENT, json.dumps(meta))
        [account] = self.accounts()[before:]
        self.assertEqual(account["record"]["clientAsserted"], ASSERTED)
        self.assertEqual(account["record"]["witnessed"]["principal"], "admin@example.com")
        self.assertEqual((account["record"]["method"], account["record"]["tool"]), ("tools/call", "orders-open-orders"))
        self.assertEqual(account["changes"], CHANGES)

    def test_a_bare_intent_is_refused_and_never_reaches_the_upstream(self) -> None:
        before = (len(self.accounts()), len(self.received("tools/call")))
        answer = self.rpc("tools/call", {"name": "orders-open-orders", "arguments": {"region": "bare"},
                                         "_meta": {"userIntent": {"text": INTENT}}})
        self.assertEqual(answer["error"]["code"], -32602)
        self.assertEqual(answer["error"]["data"]["plugin_error_code"], "bare-user-intent")
        self.assertEqual(answer["error"]["data"]["description"],
                         "a bare _meta.userIntent, which a policy that redacts intents cannot reach")
        self.assertEqual(len(self.received("tools/call")), before[1])
        [account] = self.accounts()[before[0]:]
        self.assertEqual((account["refused"], account["valid"]), ("bare-user-intent", False))

    def test_a_request_whose_audit_fails_is_refused(self) -> None:
        calls = len(self.received("tools/call"))
        fails = self.run_folder / "audit-fails"
        fails.touch()
        try:
            answer = self.rpc("tools/call", {"name": "orders-open-orders", "arguments": {"region": "full"}, "_meta": META})
        finally:
            fails.unlink()
        self.assertEqual(answer["error"]["code"], -32603)
        self.assertEqual(answer["error"]["data"]["plugin_error_code"], "audit-failed")
        self.assertEqual(len(self.received("tools/call")), calls)

    def test_a_prompt_and_a_resource_go_on_redacted(self) -> None:
        meta = {**META, AI_INVOCATION_KEY: {**META[AI_INVOCATION_KEY], "turnId": "turn-8"}}
        prompt = self.rpc("prompts/get", {"name": "orders-brief", "arguments": {}, "_meta": meta})
        resource = self.rpc("resources/read", {"uri": "orders://open", "_meta": meta})
        self.assertEqual(prompt["result"]["messages"][0]["content"]["text"], "Summarize the open orders")
        self.assertEqual(resource["result"]["contents"][0]["text"], "3 open orders")
        redacted = {**REDACTED[AI_INVOCATION_KEY], "turnId": "turn-8"}
        self.assertIn(redacted, self.envelopes("prompts/get"))
        self.assertIn(redacted, self.envelopes("resources/read"))
        self.assertNotIn(INTENT, json.dumps(self.received("prompts/get") + self.received("resources/read")))

    def test_the_plugin_loads_only_where_it_can_hold(self) -> None:
        configs = [CONFIGURED, {**CONFIGURED, "mode": "transform"}, {**CONFIGURED, "on_error": "ignore"},
                   {**CONFIGURED, "config": {"policy": {"userIntent": "hide"}, "audit": "provenance_sink:keep"}},
                   {**CONFIGURED, "config": {"policy": {}}}, {**CONFIGURED, "config": {"audit": "provenance_sink:keep", "liftLegacy": True}}]
        loads = [str(VENV / "bin" / "python"), "-c", LOADS, json.dumps(configs)]
        ran = subprocess.run(loads, cwd=self.run_folder / "home", env=self.env, capture_output=True, text=True,
                             check=False, timeout=REQUEST_SECONDS)
        self.assertEqual(ran.returncode, 0, ran.stderr)
        patched = ran.stdout.splitlines()
        self.assertEqual(patched[0], "loaded")
        self.assertEqual([line.split(" ", 2)[:2] for line in patched[1:]], [
            ["ProvenanceValueError", "invalid-option"], ["ProvenanceValueError", "invalid-option"],
            ["ProvenanceValueError", "invalid-option"], ["ProvenanceValueError", "invalid-option"],
            ["ProvenanceValueError", "unknown-option"]])
        # The release as published hands hooks no `_meta`: the plugin will not load there.
        release = environment(self.run_folder, self.run_folder / "packages")
        ran = subprocess.run([*loads[:3], json.dumps([CONFIGURED])], cwd=self.run_folder / "home", env=release,
                             capture_output=True, text=True, check=False, timeout=REQUEST_SECONDS)
        self.assertEqual(ran.returncode, 0, ran.stderr)
        [line] = ran.stdout.splitlines()
        self.assertEqual(line, "ProvenanceError hook-without-meta this ContextForge does not hand tool_pre_invoke hooks "
                               "the request's _meta or forward what they return: apply "
                               "upstream/contextforge/meta-in-pre-invoke.patch, or serve mcp_provenance.contextforge:app")


if __name__ == "__main__":
    unittest.main()
