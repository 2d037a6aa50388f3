"""ContextForge 1.1.0 as an operator runs it, started by the commands of
``examples/contextforge/README.md`` (Python 3.12, SQLite shared by two
workers), in front of a FastMCP server that writes down every body it
receives: once as ``mcp_provenance.contextforge:app``, once as ContextForge
alone (``mcpgateway.main:app``, ``META_MAX_DEPTH`` at its default), so that
what the middleware changes is on record. Both start at once, each in a copy
of the example of its own, with an upstream of its own. Starts that must fail
(a setting of ours or of ContextForge's wrong) run beside them, to their end."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Tuple

from contextforge_gateway import EXAMPLE, START_SECONDS, Gateway, Upstream, ended
from contextforge_venv import ROOT, VENV, environment, installed
from mcp_provenance import AI_INVOCATION_KEY, UI_KEY
from mcp_provenance.contextforge._limits import largest, needs
from servers import INTENT, META

#: The app the README serves, the command it starts it with, and ContextForge's own command
#: serving ContextForge's own app, which the comparison starts instead.
APP, COMMAND, CONTEXTFORGE_COMMAND = ("mcp_provenance.contextforge:app", "python -m mcp_provenance.contextforge",
                                      "mcpgateway mcpgateway.main:app")

#: A JSON-RPC id past what a double holds exactly (2^53), within what ContextForge's /rpc
#: reads (its JSON parser takes integers to 2^64 - 1; the body of a larger one is refused).
REQUEST_ID = 12345678901234567890

#: The script that asks the app module what it makes of paths and settings.
PROBE = Path(__file__).with_name("contextforge_probe.py")
#: The script that asks ContextForge's code what it makes of the largest `_meta` the filter forwards.
VERDICTS = Path(__file__).with_name("contextforge_verdicts.py")

#: What the upstream gets of the host's envelope through the middleware: the intent
#: redacted, the unknown field dropped (AI-8); the other `_meta` keys as they came.
REDACTED = {
    AI_INVOCATION_KEY: {"invocationReason": {"text": "The user asked for the open orders"},
                        "model": {"name": "example-model"}, "userIntent": {"redacted": True}, "turnId": "turn-7"},
    UI_KEY: {"initiator": "model"},
    "vscode.conversationId": "conv-1",
}

#: How the middleware answers a call with a bare `_meta.userIntent` (WIRE-6).
BARE_REFUSAL = (b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"a bare _meta.userIntent, which a policy '
                b'that redacts intents cannot reach","data":{"code":"bare-user-intent"}}}')

#: What ContextForge alone answers on /mcp to a call carrying the envelope.
TOO_DEEP = b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"meta_data exceeds maximum nesting depth (2)"}}'



def blocks(readme: Path, heading: str, kind: str = "sh") -> List[str]:
    """The shell blocks of ``readme``'s section ``## heading`` (``kind="text"``: the blocks of
    what they print)."""
    text = readme.read_text(encoding="utf-8")
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return re.findall(rf"```{kind}\n(.*?)```", section.group(1), re.S) if section is not None else []


#: The README's section that registers the upstream and calls it, as an operator does.
SERVER_BEHIND = "Put a server behind it"
#: Where that section has ContextForge and its upstream.
README_GATEWAY, README_UPSTREAM = "http://127.0.0.1:4444", "http://127.0.0.1:8000/mcp"


def with_addresses(block: str, gateway: Gateway, upstream: Upstream) -> str:
    """``block`` with the test's gateway and upstream where the README has its own."""
    for old, new in ((README_UPSTREAM, upstream.url), (README_GATEWAY, gateway.url)):
        if old not in block:
            raise AssertionError(f"the block does not name {old}: {block!r}")
        block = block.replace(old, new)
    return block


def call(region: str, meta: Dict[str, Any], request_id: int = REQUEST_ID) -> bytes:
    """A tools/call of `open_orders` for ``region`` (ContextForge names the upstream's tool
    after the gateway it came from), with ``meta``."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "orders-open-orders", "arguments": {"region": region}, "_meta": meta}},
                      separators=(",", ":")).encode()


def completion(prompt: str, typed: str, meta: Dict[str, Any]) -> bytes:
    """The params of a completion/complete of the prompt ``prompt``'s ``region`` from
    ``typed``, with ``meta``: the body ContextForge's /protocol/completion/complete takes."""
    return json.dumps({"ref": {"type": "ref/prompt", "name": prompt}, "argument": {"name": "region", "value": typed},
                       "_meta": meta}, separators=(",", ":")).encode()


def with_turn(turn: str) -> Dict[str, Any]:
    """The host's `_meta` (servers.META), for the turn ``turn``."""
    return {**META, AI_INVOCATION_KEY: {**META[AI_INVOCATION_KEY], "turnId": turn}}


def asserted(turn: str) -> Dict[str, Any]:
    """What a record keeps of the client's claims in ``with_turn(turn)``, the intent redacted."""
    return {"turnId": turn, "model": "example-model", "invocationReason": "The user asked for the open orders",
            "userIntentRedacted": True,
            "correlation": [{"kind": "turn", "value": turn, "key": AI_INVOCATION_KEY, "member": "turnId"},
                            {"kind": "conversation", "value": "conv-1", "key": "vscode.conversationId"}]}


#: (root_path of a request, its path): what the gateway does with a POST there, with
#: APP_ROOT_PATH=/gateway: the filter as JSON-RPC ("messages"), on one message answered
#: apart ("message"), on one request's params ("params <method>"); the route refused
#: ("refused"); or straight to ContextForge ("none"), where the route passes no MCP upstream
#: or ContextForge serves no route: 404, a redirect (/rpc//, to /rpc), or a root path it does
#: not strip (it sets APP_ROOT_PATH as every request's, the server's aside).
PATHS = {
    ("", "/mcp"): "messages", ("", "/mcp/"): "messages", ("", "/mcp//"): "messages", ("", "/mcp/sse"): "messages",
    ("", "/mcp/message"): "messages", ("", "/mcp/any/thing"): "messages", ("", "/rpc"): "messages",
    ("", "/rpc/"): "messages", ("", "/rpc//"): "none",
    ("", "/servers/s-1/mcp"): "messages", ("", "/servers/s-1/mcp/"): "messages", ("", "/v1/virtual-servers/s-1/mcp"): "messages",
    ("", "/appbridge/sessions/a-1/rpc"): "messages", ("", "/gateway/mcp"): "messages", ("", "/gateway/rpc/"): "messages",
    ("", "/gateway/servers/s-1/mcp"): "messages", ("/gateway", "/gateway/rpc"): "messages",
    ("", "/protocol/ping"): "messages", ("", "/v1/protocol/ping"): "messages",
    ("", "/protocol/notifications"): "message", ("", "/notifications"): "message",
    ("", "/protocol/completion/complete"): "params completion/complete",
    ("", "/v1/protocol/completion/complete"): "params completion/complete",
    ("", "/gateway/protocol/completion/complete"): "params completion/complete",
    ("", "/protocol/sampling/createMessage"): "params sampling/createMessage",
    ("", "/protocol/initialize"): "params initialize", ("", "/initialize"): "params initialize",
    ("", "/_internal/mcp/rpc"): "refused", ("", "/_internal/mcp/tools/call"): "refused",
    ("/proxy", "/proxy/rpc"): "none", ("/proxy", "/proxy/servers/s-1/mcp"): "none",
    ("", "/"): "none", ("", "/health"): "none", ("", "/gateways"): "none", ("", "/servers"): "none",
    ("", "/servers/s-1"): "none", ("", "/servers/s-1/message"): "none", ("", "/message"): "none",
    ("", "/servers/s-1/sse"): "none", ("", "/servers//mcp"): "none", ("", "/prompts/p-1"): "none",
    ("", "/tools"): "none", ("", "/v1/mcp"): "none", ("", "/mcpx"): "none", ("", "/rpcx"): "none",
    ("", "/admin/servers/s-1/mcp"): "none", ("", "/other/rpc"): "none", ("/proxy", "/proxy/tools"): "none",
    ("", "/gateway/gateways"): "none", ("", "/.well-known/oauth-protected-resource/servers/s-1/mcp"): "none",
}

#: ContextForge's every feature that adds routes, on: the admin API and UI, A2A, observability,
#: the reverse proxy, ToolOps, SSO, SIEM, LLM chat, the WebSocket relay, MCP Apps, gRPC, Vault.
EVERY_FEATURE = {
    "MCPGATEWAY_UI_ENABLED": "true", "MCPGATEWAY_ADMIN_API_ENABLED": "true", "MCPGATEWAY_A2A_ENABLED": "true",
    "OBSERVABILITY_ENABLED": "true", "MCPGATEWAY_REVERSE_PROXY_ENABLED": "true", "TOOLOPS_ENABLED": "true",
    "MCPGATEWAY_TOOL_CANCELLATION_ENABLED": "true", "METRICS_CLEANUP_ENABLED": "true", "METRICS_ROLLUP_ENABLED": "true",
    "EMAIL_AUTH_ENABLED": "true", "SSO_ENABLED": "true", "SIEM_EXPORT_ENABLED": "true", "LLMCHAT_ENABLED": "true",
    "STRUCTURED_LOGGING_ENABLED": "true", "LEGACY_API_ENABLED": "true", "MCPGATEWAY_WS_RELAY_ENABLED": "true",
    "MCPGATEWAY_MCP_APPS_ENABLED": "true", "MCPGATEWAY_GRPC_ENABLED": "true", "OAUTH_TOKEN_BACKEND": "vault",
    "VAULT_ADDR": "http://127.0.0.1:8200",
}


@functools.lru_cache(maxsize=None)
def probed(features: bool) -> Dict[str, Any]:
    """What the app module, loaded in ContextForge's environment, makes of ``PATHS``, of
    settings, each good one but for one thing, and of ContextForge's route table
    (contextforge_probe.py); with ``features``, ContextForge's every feature on
    (``EVERY_FEATURE``)."""
    folder = Deployment.folder / ("probe-features" if features else "probe")
    folder.mkdir(exist_ok=True)
    documents = {"good": '{"policy": {"userIntent": "redact"}, "liftLegacy": true, "maxBatch": 10}',
                 "prose": "redact the intents", "twice": '{"policy": {}, "policy": {"userIntent": "redact"}}',
                 "nan": '{"maxBatch": NaN}', "null": "null", "hide": '{"policy": {"userIntent": "hide"}}'}
    for name, text in documents.items():
        (folder / f"{name}.json").write_text(text, encoding="utf-8")
    good = {"MCP_PROVENANCE_OPTIONS": str(folder / "good.json"), "MCP_PROVENANCE_AUDIT": str(folder / "audit.jsonl")}
    settings = [good, {"MCP_PROVENANCE_AUDIT": good["MCP_PROVENANCE_AUDIT"]}]
    settings += [{**good, "MCP_PROVENANCE_OPTIONS": str(folder / f"{name}.json")}
                 for name in ("absent", "prose", "twice", "nan", "null", "hide")]
    settings.append({**good, "MCP_PROVENANCE_AUDIT": str(folder / "absent" / "audit.jsonl")})
    questions = json.dumps({"paths": list(PATHS), "settings": settings})
    ran = subprocess.run([str(VENV / "bin" / "python"), str(PROBE)], input=questions, cwd=Deployment.behind.home,
                         env={**environment(), **good, "APP_ROOT_PATH": "/gateway", **(EVERY_FEATURE if features else {})},
                         capture_output=True, text=True, check=False, timeout=START_SECONDS)
    if ran.returncode != 0:
        raise AssertionError(f"the probe failed ({ran.returncode}):\n{ran.stderr[-4000:]}")
    answers: Dict[str, Any] = json.loads(ran.stdout.splitlines()[-1])
    return answers


class Deployment:
    """The gateways and upstreams the tests share, started once for the module."""

    folder: Path
    behind: Gateway
    alone: Gateway
    upstream: Upstream
    upstream_alone: Upstream
    #: The virtual server ContextForge serves the upstream's tool on, behind the middleware.
    server: str
    #: What each gateway names the upstream's prompt `order_note`.
    prompt: str
    prompt_alone: str
    #: What the README's "Put a server behind it" printed, and what it shows, block by block.
    served: List[Tuple[str, str]]


def setUpModule() -> None:
    install, start = blocks(EXAMPLE / "README.md", "Run it")
    began = time.monotonic()
    installed(install)
    took = time.monotonic() - began
    folder = Path(tempfile.mkdtemp(prefix="run-", dir=ROOT / "target" / "contextforge"))
    unittest.addModuleCleanup(shutil.rmtree, folder, ignore_errors=True)
    Deployment.folder = folder
    for name in ("behind", "alone"):
        (folder / name).mkdir()
    Deployment.upstream = Upstream(folder / "behind")
    unittest.addModuleCleanup(Deployment.upstream.stop)
    Deployment.upstream_alone = Upstream(folder / "alone")
    unittest.addModuleCleanup(Deployment.upstream_alone.stop)
    began = time.monotonic()
    # The example's .env lets ContextForge register a local upstream (SSRF_ALLOW_LOCALHOST).
    Deployment.behind = Gateway(start, folder / "behind", {})
    unittest.addModuleCleanup(Deployment.behind.stop)
    alone = start.replace(COMMAND, CONTEXTFORGE_COMMAND)
    if alone == start:
        raise AssertionError(f"the README's start block does not run {COMMAND}: {start!r}")
    # ContextForge as it comes: the example's settings but for META_MAX_DEPTH, at its default.
    Deployment.alone = Gateway(alone, folder / "alone", {"META_MAX_DEPTH": "2"})
    unittest.addModuleCleanup(Deployment.alone.stop)
    for gateway, upstream in ((Deployment.behind, Deployment.upstream), (Deployment.alone, Deployment.upstream_alone)):
        upstream.ready()
        gateway.ready()
    # Behind the middleware, the upstream registered and called as the README does it.
    Deployment.served = served_as_the_readme_says(Deployment.behind, Deployment.upstream)
    Deployment.alone.admin("/gateways", {"name": "orders", "url": Deployment.upstream_alone.url,
                                         "transport": "STREAMABLEHTTP"})
    [tool] = [tool["id"] for tool in Deployment.behind.tools() if tool["originalName"] == "open_orders"]
    made = Deployment.behind.admin("/servers", {"server": {"name": "orders-desk", "associated_tools": [tool]},
                                                "visibility": "public"})
    Deployment.server = made["id"]
    [Deployment.prompt] = [prompt["name"] for prompt in Deployment.behind.listed("/prompts")
                           if prompt["originalName"] == "order_note"]
    [Deployment.prompt_alone] = [prompt["name"] for prompt in Deployment.alone.listed("/prompts")
                                 if prompt["originalName"] == "order_note"]
    sys.stderr.write(f"\nContextForge: installed in {took:.1f} s, both started in {time.monotonic() - began:.1f} s\n")


def served_as_the_readme_says(gateway: Gateway, upstream: Upstream) -> List[Tuple[str, str]]:
    """Runs the README's "Put a server behind it" in an operator's second shell: a token made,
    the upstream registered, its tools listed, a call made (one shell, as the token is kept in
    it); then, once the call's outcome is in the audit file, the file's last lines read. Each
    block's output, and the output the README shows for it."""
    register, call_block, tail = blocks(EXAMPLE / "README.md", SERVER_BEHIND)
    shown = [text.strip() for text in blocks(EXAMPLE / "README.md", SERVER_BEHIND, "text")]
    printed = gateway.shell(with_addresses(register + call_block, gateway, upstream)).strip().splitlines()
    # The outcome is appended once the answer is sent: a shell reading at once may be first.
    gateway.until(lambda: bool(gateway.audit()) and json.loads(gateway.audit()[-1])["kind"] == "outcome",
                  "the call's outcome in the audit file")
    return [("\n".join(printed[:-1]), shown[0]), (printed[-1], shown[1]), (gateway.shell(tail).strip(), shown[2])]


class BehindTheMiddleware(unittest.TestCase):
    """``python -m mcp_provenance.contextforge`` (``mcpgateway`` serving ``mcp_provenance.contextforge:app``),
    as the README starts it."""

    def test_the_readme_registers_the_upstream_and_calls_it_as_it_says(self) -> None:
        # The tool renamed after the gateway it came from; the answer's turnId; the audit's
        # account of the call, then its outcome.
        for printed, shown in Deployment.served:
            self.assertEqual(printed, shown)

    def test_the_upstream_gets_the_intent_redacted_and_the_client_its_id_and_turn_id_alone(self) -> None:
        behind, upstream = Deployment.behind, Deployment.upstream
        for path in ("/mcp", "/rpc", f"/servers/{Deployment.server}/mcp"):
            with self.subTest(path=path):
                region = f"redacted at {path}"
                answer = behind.post(path, call(region, META))
                self.assertEqual(answer.status_code, 200, answer.text)
                # The client's id comes back as it sent it, digit for digit.
                self.assertRegex(answer.content, rb'"id":12345678901234567890[,}]')
                result = answer.json()["result"]
                self.assertEqual(result["content"], [{"type": "text", "text": f"3 open orders in {region}"}])
                self.assertEqual(result["_meta"][AI_INVOCATION_KEY], {"turnId": "turn-7"})
                self.assertNotIn(INTENT, answer.text)
                [body] = upstream.calls(region)
                received = json.loads(body)
                meta = received["params"]["_meta"]
                self.assertEqual({key: meta[key] for key in REDACTED}, REDACTED)
                self.assertNotIn(INTENT, body)
                # ContextForge answers the client itself and calls the upstream as a client
                # of its own, a session per call (its server/discover is request 1, the call
                # 2): no client's id reaches an upstream, whatever it is.
                self.assertEqual(received["id"], 2)
                self.assertNotIn(str(REQUEST_ID), body)

    def test_a_bare_intent_is_refused_at_every_mcp_endpoint_and_never_reaches_the_upstream(self) -> None:
        server = Deployment.server
        # The endpoints, as ContextForge also takes them: any trailing slashes, its SSE
        # and message paths under /mcp, a virtual server's alias.
        paths = ("/mcp", "/rpc", f"/servers/{server}/mcp", "/mcp/", "/mcp//", "/mcp/sse", "/mcp/message", "/rpc/",
                 f"/servers/{server}/mcp/", f"/v1/virtual-servers/{server}/mcp")
        for number, path in enumerate(paths):
            with self.subTest(path=path):
                region = f"bare at {path}"
                answer = Deployment.behind.post(path, call(region, {"userIntent": {"text": INTENT}}, number))
                self.assertEqual((answer.status_code, answer.content), (200, BARE_REFUSAL % number))
                self.assertEqual(Deployment.upstream.calls(region), [])
                refused = [json.loads(line) for line in Deployment.behind.audit() if '"refused"' in line]
                self.assertIn({"kind": "request", "id": number, "refused": "bare-user-intent", "valid": False,
                               "diagnostics": [{"code": "bare-user-intent", "severity": "error", "rule": "WIRE-6", "path": "",
                                                "message": "a bare _meta.userIntent, which a policy that redacts intents cannot reach"}],
                               "changes": []}, refused)

    def test_the_filter_runs_where_contextforge_passes_mcp_on_and_nowhere_else(self) -> None:
        # As ContextForge routes each: its APP_ROOT_PATH (the probe's is /gateway) stripped,
        # /servers/<id>/mcp served on its /mcp mount.
        self.assertEqual(dict(zip(PATHS, probed(False)["paths"])), PATHS)

    def test_every_route_of_contextforge_that_takes_a_body_is_classified(self) -> None:
        for features in (False, True):
            with self.subTest(every_feature=features):
                answers = probed(features)
                self.assertEqual(answers["unclassified"], [], "routes that take a body and are not classified "
                                 "in mcp_provenance/contextforge/_routes.py:\n" + "\n".join(answers["unclassified"]))
                # Where ContextForge takes MCP messages or params, every twin of the route.
                routes = answers["body_routes"]
                self.assertEqual(sorted(routes["params completion/complete"]), [
                    "POST /protocol/completion/complete (mcpgateway.main.handle_completion)",
                    "POST /v1/protocol/completion/complete (mcpgateway.main.handle_completion)"])
                self.assertIn("* /mcp (mount /mcp)", routes["messages"])
                self.assertIn("POST /rpc (mcpgateway.main.handle_rpc)", routes["messages"])
                self.assertGreater(answers["routes"], 500)

    def test_each_request_is_matched_to_the_route_contextforge_serves_it_with(self) -> None:
        for features in (False, True):
            with self.subTest(every_feature=features):
                self.assertEqual(probed(features)["disagreements"], [])

    def test_a_completion_reaches_the_upstream_with_its_intent_redacted_and_has_its_line_in_the_audit_file(self) -> None:
        behind, upstream = Deployment.behind, Deployment.upstream
        for path in ("/protocol/completion/complete", "/v1/protocol/completion/complete"):
            with self.subTest(path=path):
                typed, turn = f"redacted at {path}", f"turn-{path}"
                answer = behind.post(path, completion(Deployment.prompt, typed, with_turn(turn)))
                self.assertEqual(answer.status_code, 200, answer.text)
                self.assertEqual(answer.json()["completion"]["values"], [f"{typed}-north"])
                [body] = upstream.completions(typed)
                self.assertNotIn(INTENT, body)
                meta = json.loads(body)["params"]["_meta"]
                self.assertEqual(meta[AI_INVOCATION_KEY], {**REDACTED[AI_INVOCATION_KEY], "turnId": turn})
                self.assertEqual(meta[UI_KEY], REDACTED[UI_KEY])
                [line] = [json.loads(line) for line in behind.audit()
                          if json.loads(line).get("record", {}).get("clientAsserted", {}).get("turnId") == turn]
                self.assertEqual(line["record"]["method"], "completion/complete")
                self.assertEqual(line["record"]["clientAsserted"], asserted(turn))
                self.assertEqual(line["message"]["params"]["_meta"][AI_INVOCATION_KEY],
                                 {**REDACTED[AI_INVOCATION_KEY], "turnId": turn})
                self.assertEqual([change["action"] for change in line["changes"]], ["redacted", "dropped"])

    def test_a_completion_with_a_bare_intent_is_refused_and_never_reaches_the_upstream(self) -> None:
        behind = Deployment.behind
        for path in ("/protocol/completion/complete", "/v1/protocol/completion/complete"):
            with self.subTest(path=path):
                typed = f"bare at {path}"
                before = len(behind.audit())
                answer = behind.post(path, completion(Deployment.prompt, typed, {"userIntent": {"text": INTENT}}))
                self.assertEqual(answer.status_code, 400, answer.text)
                refusal = answer.json()
                self.assertEqual((refusal["code"], refusal["error"]["code"]), ("bare-user-intent", -32602))
                self.assertNotIn(INTENT, answer.text)
                self.assertEqual(Deployment.upstream.completions(typed), [])
                [line] = [json.loads(line) for line in behind.audit()[before:] if '"bare-user-intent"' in line]
                self.assertEqual((line["kind"], line["refused"]), ("request", "bare-user-intent"))

    def test_each_setting_is_checked_before_contextforge_loads(self) -> None:
        folder = Deployment.folder / "probe"
        self.assertEqual(probed(False)["settings"], [
            {"policy": {"userIntent": "redact"}, "liftLegacy": True, "maxBatch": 10},
            "MCP_PROVENANCE_OPTIONS is not set: it names the filter's options, a JSON document such as "
            '{"policy": {"userIntent": "redact"}} (in .env, start with --env-file .env)',
            f"MCP_PROVENANCE_OPTIONS ({folder / 'absent.json'}): No such file or directory",
            f"MCP_PROVENANCE_OPTIONS ({folder / 'prose.json'}): Expecting value: line 1 column 1 (char 0)",
            f'MCP_PROVENANCE_OPTIONS ({folder / "twice.json"}): the member "policy" is named twice',
            f"MCP_PROVENANCE_OPTIONS ({folder / 'nan.json'}): NaN is not JSON",
            f"MCP_PROVENANCE_OPTIONS ({folder / 'null.json'}): filter options must be an object, not null",
            f"MCP_PROVENANCE_OPTIONS ({folder / 'hide.json'}): filter policy `userIntent` must be one of "
            '"keep", "redact", "drop"',
            f"MCP_PROVENANCE_AUDIT ({folder / 'absent' / 'audit.jsonl'}): No such file or directory",
        ])

    def test_each_request_has_one_whole_line_in_the_audit_file_whichever_worker_served_it(self) -> None:
        turns = [f"turn-{number}" for number in range(16)]

        def made(turn: str) -> Tuple[str, Any]:
            path = "/mcp" if int(turn.split("-")[1]) % 2 else "/rpc"
            return turn, Deployment.behind.post(path, call(f"audited {turn}", with_turn(turn))).json()

        with ThreadPoolExecutor(8) as pool:
            answers = dict(pool.map(made, turns))
        for turn in turns:
            self.assertEqual(answers[turn]["result"]["_meta"][AI_INVOCATION_KEY], {"turnId": turn})
        lines = [json.loads(line) for line in Deployment.behind.audit()]
        for turn in turns:
            with self.subTest(turn=turn):
                [line] = [line for line in lines if line.get("record", {}).get("clientAsserted", {}).get("turnId") == turn]
                record = line["record"]
                self.assertEqual((record["method"], record["tool"], record["requestId"]),
                                 ("tools/call", "orders-open-orders", REQUEST_ID))
                self.assertEqual(record["clientAsserted"], asserted(turn))
                self.assertEqual(record["hostAttested"], {"initiator": "model"})
                # Witnessed: the time alone. ContextForge serves /mcp without sessions, and
                # authenticates inside its app, after the filter has run: no principal.
                self.assertEqual(list(record["witnessed"]), ["receivedAt"])
                self.assertEqual(line["message"]["params"]["_meta"][AI_INVOCATION_KEY],
                                 {**REDACTED[AI_INVOCATION_KEY], "turnId": turn})
                self.assertEqual(line["changes"], [
                    {"action": "redacted", "path": "/params/_meta/io.modelcontextprotocol~1aiInvocation/userIntent/text", "rule": "AI-15"},
                    {"action": "dropped", "path": "/params/_meta/io.modelcontextprotocol~1aiInvocation/x-vendor", "rule": "AI-8"}])

    def test_a_call_contextforge_refuses_has_an_outcome_line_with_its_error_code(self) -> None:
        # A tool ContextForge does not have: the filter lets the call through, and its line says
        # so; what ContextForge answered is the exchange's outcome, a line of its own once the
        # answer is over, naming the request's id and the error the client got.
        for number, path in enumerate(("/rpc", "/mcp")):
            with self.subTest(path=path):
                turn, request_id = f"refused at {path}", 7000 + number
                body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                   "params": {"name": "no-such-tool", "arguments": {}, "_meta": with_turn(turn)}},
                                  separators=(",", ":")).encode()
                answer = Deployment.behind.post(path, body)
                got = answer.json()
                if path == "/rpc":
                    self.assertEqual(got["error"]["code"], -32601, answer.text)
                expected = ({"id": request_id, "answer": "error", "code": got["error"]["code"]} if "error" in got
                            else {"id": request_id, "answer": "result"})
                lines = [json.loads(line) for line in Deployment.behind.audit()]
                [account] = [line for line in lines if line.get("record", {}).get("clientAsserted", {}).get("turnId") == turn]
                self.assertEqual((account["kind"], account["valid"], account.get("refused")), ("request", True, None))
                received = account["record"]["witnessed"]["receivedAt"]

                def outcomes() -> List[Dict[str, Any]]:
                    """The outcome lines of the exchange that received the call."""
                    read = [json.loads(line) for line in Deployment.behind.audit() if '"kind":"outcome"' in line]
                    return [line for line in read if line.get("receivedAt") == received
                            and [got["id"] for got in line["requests"]] == [request_id]]

                # Written once the answer is over: it may come just after the client has it.
                for _ in range(50):
                    if outcomes():
                        break
                    time.sleep(0.1)
                [outcome] = outcomes()
                self.assertEqual((outcome["status"], outcome["requests"]), (answer.status_code, [expected]))
                self.assertNotIn("refused", outcome)
                self.assertTrue(isinstance(outcome["pid"], int) and outcome["host"] and outcome["ms"] >= 0, outcome)

    def test_the_largest_meta_the_start_checks_measure_reaches_the_upstream_through_mcp(self) -> None:
        # The host's envelope with each field at the example policy's limit, in two-byte
        # characters: what the upstream gets is what the start checks measured, and
        # ContextForge (META_MAX_BYTES=16384, META_MAX_DEPTH=3) let it through.
        options = json.loads((EXAMPLE / "provenance.json").read_text(encoding="utf-8"))
        measured = largest(options)
        meta = {AI_INVOCATION_KEY: {**measured[AI_INVOCATION_KEY], "userIntent": {"text": INTENT}}, UI_KEY: measured[UI_KEY]}
        region = "largest at /mcp"
        answer = Deployment.behind.post("/mcp", call(region, meta))
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertEqual(answer.json()["result"]["content"], [{"type": "text", "text": f"3 open orders in {region}"}])
        [body] = Deployment.upstream.calls(region)
        received = json.loads(body)["params"]["_meta"]
        self.assertEqual({key: received[key] for key in measured}, measured)
        self.assertEqual(len(json.dumps(measured)), needs(options).bytes)


#: The line that stops a start where ContextForge would refuse the envelope as too deep.
TOO_DEEP_LINE = ("mcp_provenance.contextforge: META_MAX_DEPTH=2 makes ContextForge refuse the SEP-2817 envelope "
                 "(3 levels below _meta): set META_MAX_DEPTH=3 or more")


def rewritten(block: str, old: str, new: str) -> str:
    """``block`` with ``old`` made ``new``, which it must hold once."""
    if block.count(old) != 1:
        raise AssertionError(f"the README's start block does not hold {old!r} once: {block!r}")
    return block.replace(old, new)


class AStartThatFails(unittest.TestCase):
    """A setting wrong, ours or ContextForge's: the README's command stops before ContextForge
    serves, with one line on stderr naming the setting and exit status 3, whatever the number of
    workers; and what uvicorn and gunicorn make of it when they serve the app themselves."""

    def test_a_setting_wrong_stops_the_start_with_one_line_and_status_3(self) -> None:
        [_, start] = blocks(EXAMPLE / "README.md", "Run it")
        folder = Deployment.folder / "stops"
        folder.mkdir()
        (folder / "typo.json").write_text('{"polcy": {"userIntent": "redact"}}', encoding="utf-8")
        # The likely mistake: the filter added to a ContextForge .env without META_MAX_DEPTH.
        left_out = rewritten(start, "cp .env.example .env", "grep -v '^META_MAX_DEPTH=' .env.example > .env")
        ours = {"MCP_PROVENANCE_OPTIONS": "provenance.json", "MCP_PROVENANCE_AUDIT": "audit.jsonl"}
        validating = {"VALIDATION_MIDDLEWARE_ENABLED": "true", "EXPERIMENTAL_VALIDATE_IO": "true", "ENVIRONMENT": "production"}
        mcpgateway = rewritten(left_out, COMMAND, f"mcpgateway {APP}")
        prefix = "mcp_provenance.contextforge: "
        # name: (block, settings, exit statuses, the line, how many processes write it)
        cases: Dict[str, Tuple[str, Dict[str, str], Tuple[int, ...], str, Tuple[int, ...]]] = {
            "depth left out, two workers": (left_out, {}, (3,), TOO_DEEP_LINE, (1,)),
            "depth left out, one worker": (rewritten(left_out, "--workers 2", "--workers 1"), {}, (3,), TOO_DEEP_LINE, (1,)),
            "bytes at ContextForge's default": (start, {"META_MAX_BYTES": "4096"}, (3,), prefix + (
                "META_MAX_BYTES=4096 makes ContextForge refuse the SEP-2817 envelope (4425 bytes of _meta as it counts "
                "them, each field at its limit): set META_MAX_BYTES=4425 or more"), (1,)),
            "one key": (start, {"META_MAX_KEYS": "1"}, (3,), prefix + (
                "META_MAX_KEYS=1 makes ContextForge refuse the SEP-2817 envelope (2 keys of _meta, an invocation or ui "
                "key each): set META_MAX_KEYS=2 or more"), (1,)),
            "validation middleware": (start, validating, (3,), prefix + (
                "VALIDATION_MIDDLEWARE_ENABLED=true makes ContextForge refuse the SEP-2817 envelope (422, with "
                'EXPERIMENTAL_VALIDATE_IO=true in ENVIRONMENT=production) when its text holds "$", as DANGEROUS_PATTERNS '
                "says: set VALIDATION_MIDDLEWARE_ENABLED=false"), (1,)),
            # Read as ContextForge reads it: from its .env, which no --env-file put in the environment.
            "depth in .env alone": (rewritten(rewritten(start, " --env-file .env", ""), "cp .env.example .env",
                                              "sed 's/^META_MAX_DEPTH=3$/META_MAX_DEPTH=1/' .env.example > .env"), ours, (3,),
                                    TOO_DEEP_LINE.replace("META_MAX_DEPTH=2", "META_MAX_DEPTH=1"), (1,)),
            "typo": (start, {"MCP_PROVENANCE_OPTIONS": str(folder / "typo.json")}, (3,), prefix + (
                f"MCP_PROVENANCE_OPTIONS ({folder / 'typo.json'}): filter options has no option `polcy`; "
                "did you mean `policy`?"), (1,)),
            "unset": (start, {"MCP_PROVENANCE_AUDIT": ""}, (3,), prefix + (
                "MCP_PROVENANCE_AUDIT is not set: it names the file the audit records are appended to, a JSON line each "
                "(in .env, start with --env-file .env)"), (1,)),
            # Served another way, each worker checks and says so (those that get as far as it
            # before the supervisor stops them). uvicorn's supervisor then ends with 0 where
            # there are several workers (the README says so); gunicorn with its worker's 3, or
            # 1 when two fail at once (gunicorn 27 fails again as it halts, with a traceback),
            # or, preloading the app, with 3 from one check before any worker.
            "mcpgateway, two workers": (mcpgateway, {}, (0,), TOO_DEEP_LINE, (1, 2)),
            "mcpgateway, one worker": (rewritten(mcpgateway, "--workers 2", "--workers 1"), {}, (3,), TOO_DEEP_LINE, (1,)),
            "gunicorn, two workers": (rewritten(left_out, f"{COMMAND} --env-file .env --workers 2",
                                                f"gunicorn {APP} -k uvicorn.workers.UvicornWorker -w 2 -b 127.0.0.1:$PORT"),
                                      ours, (3, 1), TOO_DEEP_LINE, (1, 2)),
            # As ContextForge's run-gunicorn.sh starts it: the app loaded once, before the workers.
            "gunicorn, preloaded": (rewritten(left_out, f"{COMMAND} --env-file .env --workers 2",
                                              f"gunicorn {APP} -k uvicorn.workers.UvicornWorker -w 2 --preload "
                                              "-b 127.0.0.1:$PORT"), ours, (3,), TOO_DEEP_LINE, (1,)),
        }

        def run(name: str) -> Tuple[str, Tuple[int, str, str]]:
            block, settings = cases[name][:2]
            return name, ended(block, folder / re.sub(r"[^a-z0-9]+", "-", name), settings)

        with ThreadPoolExecutor(4) as pool:
            results = dict(pool.map(run, cases))
        for name, (_, _, statuses, line, counts) in cases.items():
            with self.subTest(name):
                code, out, err = results[name]
                said = [each for each in err.splitlines() if each.startswith(prefix)]
                self.assertEqual(set(said), {line}, err[-4000:])
                self.assertIn(code, statuses, err[-4000:])
                self.assertIn(len(said), counts)
                # Nothing else names the setting; nothing of it on stdout; ContextForge never served.
                setting = line[len(prefix):].split("=")[0].split(" ")[0]
                self.assertEqual([each for each in err.splitlines() if setting in each], said)
                self.assertNotIn(setting, out)
                self.assertNotIn("Application startup complete", out + err)

    def test_contextforge_refuses_the_meta_the_checks_measure_one_below_what_they_ask_and_not_at_it(self) -> None:
        options = [json.loads((EXAMPLE / "provenance.json").read_text(encoding="utf-8")), {},
                   {"policy": {}, "invocationKeys": ["com.example/aiInvocation"], "uiKeys": ["com.example/ui"]}]
        cases: List[Dict[str, Any]] = []
        for document in options:
            need = needs(document)
            enough = {"META_MAX_DEPTH": str(need.depth), "META_MAX_KEYS": str(need.keys), "META_MAX_BYTES": str(need.bytes)}
            cases += [{"environment": enough, "options": document}]
            cases += [{"environment": {**enough, name: str(int(enough[name]) - 1)}, "options": document} for name in enough]
        # Unknown members kept: as deep as the filter reads them, numbers that json.dumps writes long.
        keeping = {"policy": {"unknownFields": "keep", "maxEnvelopeBytes": 256}, "maxDepth": 16}
        kept = needs(keeping)
        nested: Any = "e"
        for _ in range(kept.depth - 2):
            nested = {"x": nested}
        metas = [{AI_INVOCATION_KEY: {"turnId": "t", "x": nested}}, {AI_INVOCATION_KEY: {"turnId": "t", "x": [1e15] * 40}}]
        enough = {"META_MAX_DEPTH": str(kept.depth), "META_MAX_KEYS": str(kept.keys), "META_MAX_BYTES": str(kept.bytes)}
        cases += [{"environment": enough, "options": keeping, "metas": metas},
                  {"environment": {**enough, "META_MAX_DEPTH": str(kept.depth - 1)}, "options": keeping, "metas": metas}]
        # ContextForge's validation middleware, where it refuses and where it only logs.
        texts = [INTENT, INTENT + " (EU)"]
        for environment_name in ("production", "development"):
            cases.append({"environment": {"VALIDATION_MIDDLEWARE_ENABLED": "true", "EXPERIMENTAL_VALIDATE_IO": "true",
                                          "ENVIRONMENT": environment_name}, "options": options[0], "texts": texts})
        ran = subprocess.run([str(VENV / "bin" / "python"), str(VERDICTS)], input=json.dumps({"cases": cases}),
                             cwd=Deployment.behind.home, env=environment(), capture_output=True, text=True, check=False,
                             timeout=START_SECONDS)
        self.assertEqual(ran.returncode, 0, ran.stderr[-4000:])
        answers = json.loads(ran.stdout.splitlines()[-1])
        index = 0
        for document in options:
            need = needs(document)
            with self.subTest(options=document):
                self.assertEqual(answers[index], {"largest": "accepted", "metas": [], "texts": [], "refusals": []})
                depth, keys, size = answers[index + 1: index + 4]
                self.assertEqual(depth["largest"], f"meta_data exceeds maximum nesting depth ({need.depth - 1})")
                self.assertEqual(keys["largest"], f"meta_data exceeds maximum key count ({need.keys - 1}): got {need.keys}")
                self.assertEqual(size["largest"], f"meta_data exceeds maximum size ({need.bytes - 1} bytes): got {need.bytes}")
                for answer, setting in ((depth, "META_MAX_DEPTH"), (keys, "META_MAX_KEYS"), (size, "META_MAX_BYTES")):
                    [refusal] = answer["refusals"]
                    self.assertTrue(refusal.startswith(f"{setting}="), refusal)
            index += 4
        with self.subTest(options=keeping):
            # (Its known fields at their limits pass maxEnvelopeBytes: the bound is what counts.)
            self.assertEqual((answers[index]["metas"], answers[index]["refusals"]), (["accepted", "accepted"], []))
            self.assertEqual(answers[index + 1]["metas"][0], f"meta_data exceeds maximum nesting depth ({kept.depth - 1})")
            self.assertTrue(answers[index + 1]["refusals"][0].startswith(f"META_MAX_DEPTH={kept.depth - 1} "))
        production, development = answers[index + 2:]
        self.assertEqual(production["texts"], [200, 422])
        self.assertEqual([refusal.split("=")[0] for refusal in production["refusals"]], ["VALIDATION_MIDDLEWARE_ENABLED"])
        self.assertEqual((development["texts"], development["refusals"]), ([200, 200], []))


class ContextForgeAlone(unittest.TestCase):
    """``mcpgateway mcpgateway.main:app``, as ContextForge comes."""

    def test_its_mcp_endpoint_refuses_the_envelope_as_too_deep(self) -> None:
        answer = Deployment.alone.post("/mcp", call("deep at /mcp", META))
        self.assertEqual((answer.status_code, answer.content), (200, TOO_DEEP % REQUEST_ID))
        self.assertEqual(Deployment.upstream_alone.calls("deep at /mcp"), [])

    def test_its_rpc_endpoint_forwards_the_intent_as_the_client_wrote_it_and_echoes_nothing(self) -> None:
        answer = Deployment.alone.post("/rpc", call("whole at /rpc", META))
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertNotIn(AI_INVOCATION_KEY, answer.json()["result"]["_meta"])
        [body] = Deployment.upstream_alone.calls("whole at /rpc")
        # The envelope whole: the intent with its line break, the unknown field.
        self.assertEqual(json.loads(body)["params"]["_meta"][AI_INVOCATION_KEY], META[AI_INVOCATION_KEY])

    def test_a_bare_intent_reaches_the_upstream(self) -> None:
        for path in ("/mcp", "/rpc"):
            with self.subTest(path=path):
                region = f"bare at {path}"
                answer = Deployment.alone.post(path, call(region, {"userIntent": {"text": INTENT}}))
                self.assertEqual(answer.status_code, 200, answer.text)
                [body] = Deployment.upstream_alone.calls(region)
                self.assertEqual(json.loads(body)["params"]["_meta"]["userIntent"], {"text": INTENT})


    def test_its_completion_route_forwards_the_intent_and_a_bare_one_and_records_nothing(self) -> None:
        alone, upstream = Deployment.alone, Deployment.upstream_alone
        for name, meta in (("envelope", META), ("bare", {"userIntent": {"text": INTENT}})):
            with self.subTest(meta=name):
                typed = f"{name} alone"
                answer = alone.post("/protocol/completion/complete", completion(Deployment.prompt_alone, typed, meta))
                self.assertEqual(answer.status_code, 200, answer.text)
                [body] = upstream.completions(typed)
                self.assertIn(INTENT, body)
        self.assertEqual(alone.audit(), [])


class WithArgumentsLeftOutOfTheAuditLines(unittest.TestCase):
    """``MCP_PROVENANCE_OPTIONS`` reaches the middleware whole, as its ``options``: with
    ``"auditArguments": "drop"``, a filter option no keyword names, the README's start serves
    a call whose arguments reach the upstream and stay out of its audit line."""

    gateway: Gateway
    upstream: Upstream

    @classmethod
    def setUpClass(cls) -> None:
        _, start = blocks(EXAMPLE / "README.md", "Run it")
        folder = Deployment.folder / "arguments-dropped"
        folder.mkdir()
        options = folder / "options.json"
        options.write_text('{"policy": {"userIntent": "redact"}, "auditArguments": "drop"}', encoding="utf-8")
        cls.upstream = Upstream(folder)
        cls.addClassCleanup(cls.upstream.stop)
        cls.gateway = Gateway(start, folder, {"MCP_PROVENANCE_OPTIONS": str(options)})
        cls.addClassCleanup(cls.gateway.stop)
        cls.upstream.ready()
        cls.gateway.ready()
        cls.gateway.admin("/gateways", {"name": "orders", "url": cls.upstream.url, "transport": "STREAMABLEHTTP"})

    def test_a_calls_arguments_reach_the_upstream_and_stay_out_of_its_audit_line(self) -> None:
        region = "card 4111 1111 1111 1111"
        answer = self.gateway.post("/mcp", call(region, META))
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertEqual(answer.json()["result"]["content"], [{"type": "text", "text": f"3 open orders in {region}"}])
        self.assertEqual(len(self.upstream.calls(region)), 1)
        [line] = [line for line in self.gateway.audit() if json.loads(line).get("record", {}).get("method") == "tools/call"]
        self.assertNotIn(region, line)
        self.assertNotIn(INTENT, line)
        read = json.loads(line)
        self.assertEqual(read["auditArguments"], "drop")
        self.assertEqual(sorted(read["message"]["params"]), ["_meta", "name"])
        self.assertEqual((read["record"]["tool"], read["record"]["clientAsserted"]["userIntentRedacted"]),
                         ("orders-open-orders", True))


class InTheReadme(unittest.TestCase):
    def test_the_top_readme_shows_the_commands_this_test_runs(self) -> None:
        shown = blocks(ROOT / "README.md", "In front of ContextForge")
        self.assertEqual(shown, blocks(EXAMPLE / "README.md", "Run it"))


if __name__ == "__main__":
    unittest.main()
