"""The ASGI middleware: the prototype gateway's hostile cases (exact bytes,
a bare intent, a batch, a deep body, an oversize body, encodings, a failing
sink) in front of an app that records what reaches it; the echo on the way
back, JSON and event streams; what is witnessed; each exchange's outcome
once its answer is over; and in front of real FastMCP and `mcp` SDK servers,
driven by their own clients."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import socket
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, cast

import httpx2
from fastmcp import Client as FastMcpClient
from fastmcp import Context, FastMCP
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.auth.providers.jwt import StaticTokenVerifier
from fastmcp.tools import ToolResult
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context as McpContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from starlette.authentication import SimpleUser, UnauthenticatedUser
from starlette.middleware import Middleware

from asgi_apps import EVENTS, JSON, App, Message, Receive, Recorder, Scope, Send, exchange, lifespan, result
from mcp_provenance import AI_INVOCATION_KEY, ProvenanceError
from mcp_provenance.asgi import ProvenanceMiddleware
from mcp_provenance.types import Account, MessageAccount, OutcomeAccount, Policy
from servers import META, Store

SECRET = "my salary is 123456"
#: A call as a client writes it, and what no rule may change: a 20-digit id, `1e400`,
#: whitespace, member order (`params` before `method`).
CALL = ('{"jsonrpc":"2.0", "id":12345678901234567890,\n "params":{"arguments":{"n":1e400, "s":"x"},"name":"q",'
        f'"_meta":{{"{AI_INVOCATION_KEY}":{{"turnId":"t-1","userIntent":{{"text":"{SECRET}"}}}}}}}},"method":"tools/call"}}').encode()
#: The call as a redacting filter forwards it: only the intent's text changed.
REDACTED = CALL.replace(f'{{"text":"{SECRET}"}}'.encode(), b'{"redacted":true}')
#: What the filter answers a request it reads no deeper than (WIRE-4).
TOO_DEEP = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"the message nests deeper than the gateway reads","data":{"code":"too-deep"}}}'


def too_deep(request_id: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"arguments":%s%s}}' % (request_id, b"[" * 200, b"]" * 200)


def audit_error(request_id: str, code: str = "audit-failed") -> bytes:
    return (f'{{"jsonrpc":"2.0","id":{request_id},"error":{{"code":-32603,"message":"the request could not be audited",'
            f'"data":{{"code":"{code}"}}}}}}').encode()


def not_json(request_id: str) -> bytes:
    return (f'{{"jsonrpc":"2.0","id":{request_id},"error":{{"code":-32603,"message":"the server\'s answer is not JSON-RPC",'
            '"data":{"code":"answer-not-json"}}').encode() + b"}"


def event(data: bytes) -> bytes:
    return b"event: message\ndata: " + data + b"\n\n"


class Accounts:
    """A sink keeping each message's account and its line, and each exchange's outcome and
    its line apart."""

    def __init__(self) -> None:
        self.kept: List[Tuple[MessageAccount, str]] = []
        self.outcomes: List[Tuple[OutcomeAccount, str]] = []

    def __call__(self, account: Account, line: str) -> None:
        if account["kind"] == "outcome":
            self.outcomes.append((account, line))
        else:
            self.kept.append((account, line))

    def witnessed(self) -> List[Dict[str, Any]]:
        return [dict(account["record"]["witnessed"]) for account, _ in self.kept if "record" in account]


class OnTheWayIn(unittest.IsolatedAsyncioTestCase):
    """What reaches the app, and what the client gets when nothing should."""

    async def test_the_app_reads_the_bytes_that_came_but_the_span_a_rule_changed(self) -> None:
        cases: Tuple[Tuple[Optional[Policy], bytes], ...] = ((None, CALL), ({"userIntent": "redact"}, REDACTED))
        for policy, expected in cases:
            app = Recorder()
            headers = [(b"host", b"evil.example"), (b"origin", b"http://evil.example"), (b"content-type", b"application/json"),
                       (b"accept-encoding", b"gzip"), (b"transfer-encoding", b"chunked")]
            await exchange(ProvenanceMiddleware(app, policy=policy), chunks=[CALL[:7], CALL[7:]], headers=headers)
            [reached] = app.reached
            self.assertEqual(reached.body, expected)
            # Its length made right; Host and Origin as they came, for the app to judge; the
            # answer asked for as it can be read.
            self.assertEqual(reached.headers, [*headers[:3], (b"content-length", str(len(expected)).encode())])

    async def test_a_bare_intent_is_refused_under_a_redacting_policy_and_never_reaches_the_app(self) -> None:
        app, accounts = Recorder(), Accounts()
        bare = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"q","_meta":{"userIntent":{"text":"%s"}}}}' % SECRET.encode()
        answer = await exchange(ProvenanceMiddleware(app, policy={"userIntent": "redact"}, audit=accounts), bare)
        self.assertEqual((answer.status, answer.body), (200, b'{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":'
                         b'"a bare _meta.userIntent, which a policy that redacts intents cannot reach","data":{"code":"bare-user-intent"}}}'))
        self.assertEqual(answer.header(b"content-type"), b"application/json")
        self.assertEqual(app.reached, [])
        [(account, line)] = accounts.kept
        self.assertEqual(account["refused"], "bare-user-intent")
        self.assertNotIn(SECRET, line)

    async def test_a_body_too_deep_is_refused_and_never_reaches_the_app(self) -> None:
        app = Recorder()
        answer = await exchange(ProvenanceMiddleware(app), too_deep(2))
        self.assertEqual((answer.status, answer.body), (200, TOO_DEEP))
        self.assertEqual(app.reached, [])

    async def test_a_body_past_the_bound_is_answered_413_and_not_read_further(self) -> None:
        too_large = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the body is larger than 4096 bytes","data":{"code":"body-too-large"}}}'
        chunks = [b"x" * 1000] * 10
        for headers, receives in (([*JSON, (b"content-length", b"10000")], 0), (JSON, 5)):
            with self.subTest(headers=headers):
                app = Recorder()
                answer = await exchange(ProvenanceMiddleware(app, max_body_bytes=4096), chunks=chunks, headers=headers)
                self.assertEqual((answer.status, answer.body), (413, too_large))
                self.assertEqual(answer.header(b"connection"), b"close")
                # By its Content-Length, nothing read; as it comes, up to the piece that passed 4096 bytes.
                self.assertEqual(answer.receives, receives)
                self.assertEqual(app.reached, [])

    async def test_a_body_a_server_could_read_otherwise_is_refused_415_and_never_reaches_the_app(self) -> None:
        # As UTF-8 one harmless argument; as UTF-7 a bare `_meta.userIntent` (WIRE-6).
        smuggled = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"s":"'
                    b'+ACIAfQ-,+ACIAXw-meta+ACI-:+AHsAIg-userIntent+ACI-:+ACI-secret+ACI-,+ACI-x+ACI-:+ACI-"}}}')
        for headers, code in (([(b"content-type", b"application/json; charset=utf-7")], "unsupported-charset"),
                              ([*JSON, (b"content-encoding", b"gzip")], "unsupported-encoding"),
                              ([(b"content-type", b"text/plain")], "unsupported-media-type"),
                              ([], "unsupported-media-type")):
            with self.subTest(code=code):
                app = Recorder()
                answer = await exchange(ProvenanceMiddleware(app, policy={"userIntent": "redact"}), smuggled, headers=headers)
                self.assertEqual(answer.status, 415)
                self.assertRegex(answer.body, b'^{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"[^"]+","data":{"code":"%s"}}}$' % code.encode())
                self.assertEqual(app.reached, [])
        # UTF-8 JSON, however its headers spell it, goes on byte for byte.
        app = Recorder()
        await exchange(ProvenanceMiddleware(app), smuggled, headers=[(b"content-type", b'Application/JSON; Charset="UTF-8"')])
        self.assertEqual(app.reached[0].body, smuggled)

    async def test_a_failing_sink_refuses_the_body_and_the_app_never_sees_it(self) -> None:
        async def failing_later(account: Account, line: str) -> None:
            await asyncio.sleep(0)
            raise OSError(f"the audit store is full, could not keep {line}")

        def failing(account: Account, line: str) -> None:
            raise OSError(f"the audit store is full, could not keep {line}")

        batch = b'[%s,{"jsonrpc":"2.0","method":"notifications/initialized"},%s]' % (CALL, too_deep(2))
        notification = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        null = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the request could not be audited","data":{"code":"audit-failed"}}}'
        cases = ((CALL, 200, audit_error("12345678901234567890")),
                 # The refused request keeps the filter's reply; the one that would go on gets the error.
                 (batch, 200, b"[" + TOO_DEEP + b"," + audit_error("12345678901234567890") + b"]"),
                 # Nothing to answer a notification with: the client still learns.
                 (notification, 500, null))
        for sink in (failing, failing_later):
            for body, status, expected in cases:
                with self.subTest(sink=sink.__name__, body=body[:30]):
                    app = Recorder()
                    with self.assertLogs("mcp_provenance", logging.ERROR) as logged:
                        answer = await exchange(ProvenanceMiddleware(app, audit=sink), body)
                    self.assertEqual((answer.status, answer.body), (status, expected))
                    self.assertEqual(app.reached, [])
                    # The exchange's outcome, once its answer is sent, fails to be kept too: said apart.
                    [line, outcome] = logged.output
                    self.assertRegex(line, r"^ERROR:mcp_provenance:a body of \d message\(s\) refused: its audit failed \(OSError, code 'audit-failed'\)$")
                    self.assertEqual(outcome, "ERROR:mcp_provenance:an exchange's outcome was not kept: its audit failed (OSError, code 'audit-failed')")

    async def test_a_sink_s_own_code_is_the_answer_s(self) -> None:
        class Refused(Exception):
            code = "store-read-only"

        def refusing(account: Account, line: str) -> None:
            raise Refused()

        with self.assertLogs("mcp_provenance", logging.ERROR):
            answer = await exchange(ProvenanceMiddleware(Recorder(), audit=refusing), CALL)
        self.assertEqual(answer.body, audit_error("12345678901234567890", "store-read-only"))

    async def test_every_message_s_account_reaches_the_sink_before_the_app_reads_the_body(self) -> None:
        order: List[str] = []
        accounts = Accounts()

        async def sink(account: Account, line: str) -> None:
            order.append(f"audited {account['kind']}")
            accounts(account, line)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            order.append("read")
            await Recorder()(scope, receive, send)

        batch = b'[%s, {"jsonrpc":"2.0","method":"notifications/initialized"}, %s]' % (CALL, too_deep(2))
        await exchange(ProvenanceMiddleware(app, policy={"userIntent": "redact"}, audit=sink), batch)
        # Then, once the answer is over, the exchange's outcome.
        self.assertEqual(order, ["audited request", "audited notification", "audited request", "read", "audited outcome"])
        self.assertEqual([account.get("refused") for account, _ in accounts.kept], [None, None, "too-deep"])
        first, line = accounts.kept[0]
        self.assertEqual(first["record"]["clientAsserted"]["turnId"], "t-1")
        self.assertTrue(first["record"]["clientAsserted"]["userIntentRedacted"])
        self.assertIn('"n":1e400', line)
        self.assertNotIn(SECRET, line)

    async def test_other_methods_and_other_paths_reach_the_app_as_they_came(self) -> None:
        app = Recorder(headers=EVENTS, pieces=[event(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"a":1}}}')])
        guarded = ProvenanceMiddleware(app, paths=["/mcp", "/servers/*/mcp"])
        for method, path, headers in (("GET", "/mcp", [(b"accept", b"text/event-stream")]), ("DELETE", "/mcp", []),
                                      ("PUT", "/mcp", [(b"content-type", b"text/plain")]),
                                      ("POST", "/upload", [(b"content-type", b"text/plain")]),
                                      ("POST", "/servers/a/b/mcp", [(b"content-type", b"text/plain")])):
            with self.subTest(method=method, path=path):
                answer = await exchange(guarded, b"not json", method=method, path=path, headers=headers)
                self.assertEqual(app.reached[-1].headers, headers)
                self.assertEqual(app.reached[-1].body, b"not json")
                self.assertEqual(answer.body, app.pieces[0])
        # Every MCP path is filtered, with or without its trailing slash.
        for path in ("/mcp/", "/servers/abc/mcp", "/servers/abc/mcp/"):
            answer = await exchange(guarded, b"not json", path=path, headers=[(b"content-type", b"text/plain")])
            self.assertEqual(answer.status, 415, path)
        self.assertEqual(len(app.reached), 5)

    async def test_the_paths_are_those_the_app_routes(self) -> None:
        """``paths`` match the path the app routes by: without a server's root path or a
        ``Mount``'s prefix, and every path below an endpoint (FastMCP's SSE transport posts to
        ``/messages/<id>``)."""
        secret = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","_meta":{"%s":'
                  b'{"userIntent":{"text":"secret"}}}}}' % AI_INVOCATION_KEY.encode())
        for paths, path, root in ((["/mcp"], "/api/mcp", "/api"), (["/messages"], "/messages/x", ""),
                                  (["/mcp"], "/sub/mcp/", "/sub")):
            with self.subTest(path=path, root=root):
                app = Recorder()
                guarded = ProvenanceMiddleware(app, paths=paths, policy={"userIntent": "redact"})
                await exchange(guarded, secret, path=path, scope={"root_path": root})
                self.assertNotIn(b"secret", app.reached[0].body)
        # Inside a Starlette Mount, as the app behind it routes.
        from starlette.applications import Starlette
        from starlette.routing import Mount

        inner = Recorder()
        mounted = Starlette(routes=[Mount("/sub", app=ProvenanceMiddleware(inner, paths=["/mcp"], policy={"userIntent": "redact"}))])
        await exchange(mounted, secret, path="/sub/mcp")
        self.assertNotIn(b"secret", inner.reached[0].body)
        # Outside the paths, a POST goes on as it came.
        other = Recorder()
        await exchange(ProvenanceMiddleware(other, paths=["/mcp"], policy={"userIntent": "redact"}), secret, path="/token")
        self.assertEqual(other.reached[0].body, secret)

    def test_bad_options_fail_when_the_middleware_is_made(self) -> None:
        for options, code in (({"policy": {"maxIntentBytes": 3}}, "invalid-limit"), ({"max_body_bytes": 0}, "invalid-limit"),
                              ({"max_sessions": True}, "invalid-option"), ({"paths": "/mcp"}, "invalid-option"),
                              ({"paths": ["mcp"]}, "invalid-option"), ({"max_depth": 4}, "invalid-limit"),
                              # What is neither a sink nor a path would refuse every request at run time: refused now.
                              ({"audit": 42}, "invalid-option"), ({"audit": b"audit.jsonl"}, "invalid-option"),
                              ({"audit": "/nonexistent-folder/audit.jsonl"}, "unwritable-audit"),
                              ({"principal": "sub"}, "invalid-option")):
            with self.subTest(options=options), self.assertRaises(ProvenanceError) as bad:
                ProvenanceMiddleware(Recorder(), **options)
            self.assertEqual(bad.exception.code, code)

    async def test_the_options_document_is_the_filters_as_in_every_runtime(self) -> None:
        # `auditArguments`, a filter option with no keyword: the line leaves the arguments out
        # as it says, the record is whole and the app reads them as they came.
        arguments = b'{"n":1e400, "s":"x"}'
        digest = {"sha256": hashlib.sha256(arguments).hexdigest(), "bytes": len(arguments)}
        for choice, expected in (("keep", None), ("digest", digest), ("drop", None)):
            with self.subTest(choice=choice):
                app, accounts = Recorder(), Accounts()
                guarded = ProvenanceMiddleware(app, options={"auditArguments": choice, "policy": {"userIntent": "redact"}},
                                               audit=accounts, paths=["/mcp"])
                await exchange(guarded, CALL)
                self.assertEqual(app.reached[0].body, REDACTED)
                [(account, line)] = accounts.kept
                self.assertEqual(account["record"]["tool"], "q")
                read = json.loads(line)
                self.assertEqual(read.get("auditArguments"), None if choice == "keep" else choice)
                self.assertEqual("arguments" in read["message"]["params"], choice != "drop")
                if expected is not None:
                    self.assertEqual(read["message"]["params"]["arguments"], expected)
                self.assertEqual("1e400" in line, choice == "keep")

    def test_a_filter_option_is_given_once_and_the_middlewares_own_are_keywords(self) -> None:
        document = {"policy": {"userIntent": "redact"}, "liftLegacy": True, "maxDepth": 64}
        for keyword, value, name in (("policy", {}, "policy"), ("lift_legacy", False, "liftLegacy"),
                                     ("max_depth", 64, "maxDepth")):
            with self.subTest(keyword=keyword), self.assertRaises(ProvenanceError) as bad:
                ProvenanceMiddleware(Recorder(), options=cast(Any, document), **{keyword: value})
            self.assertEqual((bad.exception.code, str(bad.exception)),
                             ("invalid-option", f"option `{name}` is given twice, in `options` and as `{keyword}`: give it once"))
        # One member each way is no conflict; nor is a member the document leaves null.
        ProvenanceMiddleware(Recorder(), options={"policy": {"userIntent": "redact"}}, max_depth=64)
        ProvenanceMiddleware(Recorder(), options=cast(Any, {"policy": None}), policy={"userIntent": "redact"})
        # The document is the filter's: the middleware's own options are keywords, never in it.
        for misplaced in ({"maxBodyBytes": 4096}, {"paths": ["/mcp"]}, {"echo": False}):
            with self.subTest(misplaced=misplaced), self.assertRaises(ProvenanceError) as bad:
                ProvenanceMiddleware(Recorder(), options=cast(Any, misplaced))
            self.assertEqual(bad.exception.code, "unknown-option")
        with self.assertRaises(ProvenanceError) as bad:
            ProvenanceMiddleware(Recorder(), options={"auditArguments": cast(Any, "hash")})
        self.assertEqual(str(bad.exception), 'filter options `auditArguments` must be one of "keep", "digest", "drop"')


class OnTheWayBack(unittest.IsolatedAsyncioTestCase):
    """What the client gets of the app's answer: only `turnId` echoed, the filter's replies
    joined, and nothing it could not read passed on."""

    CALLED = b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"q","_meta":{"%s":{"turnId":"t-1"}}}}' % AI_INVOCATION_KEY.encode()
    #: An answer whose handler put the whole envelope, another turn's, in its result.
    CARELESS = (b'{"jsonrpc":"2.0","id":12345678901234567890,"result":{"n":1e400,"_meta":{"%s":'
                b'{"turnId":"other","userIntent":{"text":"leak"}},"x":1}}}' % AI_INVOCATION_KEY.encode())
    ECHOED = (b'{"jsonrpc":"2.0","id":12345678901234567890,"result":{"n":1e400,"_meta":{"%s":{"turnId":"t-1"},"x":1}}}'
              % AI_INVOCATION_KEY.encode())

    async def test_a_json_answer_carries_only_the_turn_id_its_length_made_right(self) -> None:
        app = Recorder(headers=[*JSON, (b"content-length", b"%d" % len(self.CARELESS)), (b"mcp-session-id", b"s-1")],
                       pieces=[self.CARELESS[:20], self.CARELESS[20:]])
        answer = await exchange(ProvenanceMiddleware(app), self.CALLED)
        self.assertEqual((answer.status, answer.body), (200, self.ECHOED))
        self.assertEqual(answer.headers, [*JSON, (b"mcp-session-id", b"s-1"), (b"content-length", b"%d" % len(self.ECHOED))])
        # Turned off, the answer goes as the app made it.
        answer = await exchange(ProvenanceMiddleware(app, echo=False), self.CALLED)
        self.assertEqual((answer.body, answer.pieces), (self.CARELESS, [self.CARELESS[:20], self.CARELESS[20:]]))

    async def test_an_event_stream_is_echoed_event_by_event_as_it_comes(self) -> None:
        streamed: List[bool] = []
        seen = asyncio.Event()
        progress = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            await receive()
            await send({"type": "http.response.start", "status": 200, "headers": EVENTS})
            # A priming event (an id, no data), a comment, then a notification, the answer cut mid-event.
            await send({"type": "http.response.body", "body": b"id: 0\ndata:\r\n\r\n: keep-alive\n\nevent: message\nid: 1\ndata: " + progress + b"\n\nevent: mess", "more_body": True})
            # What the client got before the app goes on: the events the stream held whole.
            streamed.append(seen.is_set())
            # The answer's data on two lines, split where JSON has whitespace; the event's end cut between a CR and its LF.
            first, rest = self.CARELESS.split(b',"result"')
            await send({"type": "http.response.body", "body": b"age\nid: 2\nretry: 10\ndata: " + first + b"\ndata: ,\"result\"" + rest + b"\r\n\r", "more_body": True})
            await send({"type": "http.response.body", "body": b"\n", "more_body": False})

        sent: List[bytes] = []

        async def send(message: Message) -> None:
            if message["type"] == "http.response.body":
                sent.append(message["body"])
                seen.set()

        received = iter([{"type": "http.request", "body": self.CALLED}])

        async def receive() -> Message:
            return next(received)

        await ProvenanceMiddleware(app)({"type": "http", "method": "POST", "path": "/mcp", "headers": JSON}, receive, send)
        self.assertEqual(streamed, [True])
        first, rest = self.ECHOED.split(b',"result"')
        self.assertEqual(sent, [
            b"id: 0\ndata:\r\n\r\n: keep-alive\n\nevent: message\nid: 1\ndata: " + progress + b"\n\n",
            # Its fields kept in their order, its data on the lines it came on, echoed; the event
            # goes on at the CR that ends it, the LF after it as it comes, with the end.
            b"event: message\nid: 2\nretry: 10\ndata: " + first + b"\ndata: ,\"result\"" + rest + b"\r\n\r",
            b"\n",
        ])

    async def test_an_event_stream_gives_the_same_events_wherever_its_pieces_are_cut(self) -> None:
        # Every way of ending a line, a priming event, a comment, fields around the data, data on two lines.
        first, rest = self.CARELESS.split(b',"result"')
        stream = (b"id: 0\r\ndata:\r\n\r\n: keep-alive\n\nevent: message\rdata: " + first + b'\r\ndata: ,"result"' + rest +
                  b"\r\rid: 3\ndata: " + result("12345678901234567890") + b"\nretry: 10\r\n\r\n")
        whole = await exchange(ProvenanceMiddleware(Recorder(headers=EVENTS, pieces=[stream])), self.CALLED)
        self.assertEqual(whole.body.count(b'{"turnId":"t-1"}'), 2)
        cuts = [[stream[:at], stream[at:]] for at in range(1, len(stream))] + [[bytes([byte]) for byte in stream]]
        for pieces in cuts:
            with self.subTest(pieces=len(pieces), first=len(pieces[0])):
                answer = await exchange(ProvenanceMiddleware(Recorder(headers=EVENTS, pieces=pieces)), self.CALLED)
                self.assertEqual(answer.body, whole.body)

    async def test_a_batch_s_replies_join_the_app_s_answer_whatever_its_form(self) -> None:
        batch = b'[{"jsonrpc":"2.0","id":1,"method":"ping"},%s]' % too_deep(2)
        one = result("1")
        three = result("3")
        cases: Tuple[Tuple[int, List[Tuple[bytes, bytes]], List[bytes], bytes], ...] = (
            (200, JSON, [b"  \n", b"[", b" \r\n", one + b" ", b"]\n"], b"[" + TOO_DEEP + b"," + one + b" ]\n"),
            (200, JSON, [b"[" + one + b",", three + b"]"], b"[" + TOO_DEEP + b"," + one + b"," + three + b"]"),
            (200, JSON, [b" ", one], b"[" + TOO_DEEP + b"," + one + b"]"),
            (200, JSON, [b"[", b"  ]"], b"[" + TOO_DEEP + b"]"),
            (202, [], [], b"[" + TOO_DEEP + b"]"),
            (503, [(b"content-type", b"text/html")], [b"<html>busy</html>"], b"[" + TOO_DEEP + b"," + not_json("1") + b"]"),
        )
        for status, headers, pieces, expected in cases:
            for echo in (True, False):
                with self.subTest(pieces=pieces, echo=echo):
                    app = Recorder(status=status, headers=[*headers, (b"mcp-session-id", b"s-1")], pieces=pieces)
                    answer = await exchange(ProvenanceMiddleware(app, echo=echo), batch)
                    self.assertEqual(app.reached[0].body, b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
                    self.assertEqual((answer.status, answer.body), (200, expected))
                    # Echoing, the answer is held whole and its length known; not echoing, the
                    # replies join a JSON answer as it streams (the others are the middleware's own, whole).
                    streams = not echo and status == 200
                    length = [] if streams else [(b"content-length", b"%d" % len(expected))]
                    self.assertEqual(answer.headers, [(b"mcp-session-id", b"s-1"), *JSON, *length])
        # An event stream gets the replies as events of their own, first.
        app = Recorder(headers=EVENTS, pieces=[event(one)])
        answer = await exchange(ProvenanceMiddleware(app), batch)
        self.assertEqual(answer.body, event(TOO_DEEP) + event(one))
        self.assertEqual(answer.headers, EVENTS)

    async def test_an_answer_that_cannot_be_read_is_not_passed_on(self) -> None:
        limit = b'{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32603,"message":"the server\'s answer is larger than 64 bytes","data":{"code":"answer-too-large"}}}'
        event_limit = limit.replace(b"the server's answer", b"an event of the server's answer")
        event_not_json = not_json("12345678901234567890").replace(b"the server's answer", b"an event of the server's answer")
        unreadable = not_json("12345678901234567890").replace(
            b"is not JSON-RPC", b"is in a form the middleware does not read (its Content-Type, charset or Content-Encoding)"
        ).replace(b"answer-not-json", b"answer-unreadable")
        answer = b'{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}'
        cases: Tuple[Tuple[List[Tuple[bytes, bytes]], List[bytes], bytes], ...] = (
            (JSON, [b'{"jsonrpc":"2.0",', b'"id":12345678901234567890,"result":{', b'"text":"%s"}}' % (b"x" * 100)], limit),
            (JSON, [b"<html>busy</html>"], not_json("12345678901234567890")),
            (JSON, [b'"a JSON string"'], not_json("12345678901234567890")),
            (EVENTS, [event(b"{}"), b"data: " + b"x" * 100, b"\n\n" + event(b"{}")], event(b"{}") + event(event_limit)),
            (EVENTS, [event(b"{}") + b"data: <html>\n\n" + event(b"{}")], event(b"{}") + event(event_not_json)),
            # Named twice, JSON or a stream? Neither is guessed.
            ([*JSON, *EVENTS], [answer], unreadable),
            # What a client reads otherwise than the middleware would: another charset, which the
            # Python client decodes; a JSON media type it reads as JSON; an encoding it undoes.
            ([(b"content-type", b"application/json; charset=utf-16")], [answer], unreadable),
            ([(b"content-type", b"application/json-rpc")], [answer], unreadable),
            ([(b"content-type", b"text/event-stream; charset=latin1")], [event(answer)], unreadable),
            ([*JSON, (b"content-encoding", b"gzip")], [answer], unreadable),
        )
        for headers, pieces, expected in cases:
            with self.subTest(pieces=pieces):
                app = Recorder(headers=headers, pieces=pieces)
                answer = await exchange(ProvenanceMiddleware(app, max_answer_bytes=64), self.CALLED)
                self.assertEqual((answer.status, answer.body), (200, expected))


class Witnessed(unittest.IsolatedAsyncioTestCase):
    """A record's `witnessed`: what the server established, never a client's word (AI-10)."""

    ISSUED = b"session-the-app-issued"

    async def test_a_session_id_is_witnessed_once_the_app_issued_it_and_no_more_once_it_ended(self) -> None:
        reached: List[Optional[bytes]] = []

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            """Issues ISSUED at initialize and answers an unknown session 404, as the SDK's does."""
            body = (await receive())["body"]
            session = dict(scope["headers"]).get(b"mcp-session-id")
            reached.append(session)
            if b'"initialize"' in body:
                status, headers = 200, [*JSON, (b"mcp-session-id", self.ISSUED)]
            elif session != self.ISSUED:
                status, headers = 404, JSON
            else:
                status, headers = 200, [*JSON, (b"mcp-session-id", self.ISSUED)]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": b"" if scope["method"] == "DELETE" else result("1")})

        accounts = Accounts()
        guarded = ProvenanceMiddleware(app, audit=accounts)

        async def post(body: bytes, session: Optional[bytes] = None, method: str = "POST") -> None:
            await exchange(guarded, body, method=method, headers=[*JSON, *([(b"mcp-session-id", session)] if session else [])])

        call = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q"}}'
        await post(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')
        await post(call, b"a-session-the-client-made-up")
        await post(call, self.ISSUED)
        await post(b"", self.ISSUED, "DELETE")
        await post(call, self.ISSUED)
        # Every header went on: the app decides what a session is.
        self.assertEqual(reached, [None, b"a-session-the-client-made-up", self.ISSUED, self.ISSUED, self.ISSUED])
        self.assertEqual([w.get("sessionId") for w in accounts.witnessed()], [None, None, self.ISSUED.decode(), None])
        self.assertTrue(all("receivedAt" in w for w in accounts.witnessed()))

    async def test_a_404_forgets_no_session_and_memory_is_bounded(self) -> None:
        status = 200

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            body = (await receive())["body"]
            named = re.search(rb'"id":"(\w+)"', body)
            await send({"type": "http.response.start", "status": status,
                        "headers": [*JSON, *([(b"mcp-session-id", named.group(1))] if named else [])]})
            await send({"type": "http.response.body", "body": b"{}"})

        accounts = Accounts()
        guarded = ProvenanceMiddleware(app, audit=accounts, max_sessions=2, echo=False)

        async def post(session: str, issue: Optional[str] = None) -> Optional[str]:
            """Posts in ``session``, the app issuing ``issue`` in its answer; whether the session was witnessed."""
            request_id = b"1" if issue is None else b'"%s"' % issue.encode()
            await exchange(guarded, b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % request_id,
                           headers=[*JSON, (b"mcp-session-id", session.encode())])
            return accounts.witnessed()[-1].get("sessionId")

        for issued in ("a", "b", "c"):
            await post("-", issued)
        # Two remembered: the one issued longest ago is forgotten.
        self.assertEqual([await post(session) for session in ("a", "b", "c")], [None, "b", "c"])
        # Anyone who knows a session id can draw a 404 naming it: that ends nothing.
        status = 404
        await post("b")
        status = 200
        self.assertEqual([await post(session) for session in ("b", "c")], ["b", "c"])

    async def test_the_principal_is_the_user_the_stack_authenticated_never_a_header(self) -> None:
        accounts = Accounts()
        guarded = ProvenanceMiddleware(Recorder(), audit=accounts)
        headers = [*JSON, (b"x-user", b"mallory"), (b"authorization", b"Bearer mallory")]
        for user in (SimpleUser("alice"), UnauthenticatedUser(), None):
            await exchange(guarded, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers=headers, scope={"user": user})
        self.assertEqual([w.get("principal") for w in accounts.witnessed()], ["alice", None, None])
        # Where the stack keeps its identity elsewhere, a function finds it.
        chosen = ProvenanceMiddleware(Recorder(), audit=accounts, principal=lambda scope: scope["state"]["tenant"])
        await exchange(chosen, b'{"jsonrpc":"2.0","id":1,"method":"ping"}', scope={"state": {"tenant": "acme"}})
        self.assertEqual(accounts.witnessed()[-1]["principal"], "acme")


def call(request_id: Any, tool: str = "q") -> bytes:
    """A call of ``tool``, its request ``request_id``."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": tool, "_meta": {AI_INVOCATION_KEY: {"turnId": f"t-{request_id}"}}}}).encode()


def unknown(request_id: Any, code: int = -32602) -> bytes:
    """The error an app answers a call of a tool it does not have with."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": "Unknown tool"}}).encode()


class Outcome(unittest.IsolatedAsyncioTestCase):
    """Once the answer is over, the sink gets the exchange's outcome: what each request got,
    as the client got it."""

    def settled(self, kept: Tuple[OutcomeAccount, str]) -> Dict[str, Any]:
        """The outcome less what changes from run to run, checked: its line is the account,
        the worker this process."""
        account, line = kept
        self.assertEqual(json.loads(line), account)
        rest = dict(account)
        ms, pid, host = rest.pop("ms"), rest.pop("pid"), rest.pop("host")
        rest.pop("receivedAt", None)
        self.assertTrue(0 <= ms < 60_000, line)
        self.assertEqual((pid, host), (os.getpid(), socket.gethostname()))
        return rest

    async def test_once_the_answer_is_over_a_refused_call_reads_as_its_error_never_as_served(self) -> None:
        order: List[str] = []
        accounts = Accounts()

        def sink(account: Account, line: str) -> None:
            order.append(account["kind"])
            accounts(account, line)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            await Recorder(pieces=[b"[" + result("1") + b",", unknown(2, -32601) + b"]"])(scope, receive, send)
            order.append("answered")

        answer = await exchange(ProvenanceMiddleware(app, audit=sink), b"[%s,%s]" % (call(1), call(2, "nope")))
        self.assertEqual(answer.status, 200)
        self.assertEqual(order, ["request", "request", "answered", "outcome"])
        [outcome] = accounts.outcomes
        self.assertEqual(self.settled(outcome), {"kind": "outcome", "status": 200,
                                                 "requests": [{"id": 1, "answer": "result"}, {"id": 2, "answer": "error", "code": -32601}]})
        self.assertEqual(outcome[0].get("receivedAt"), accounts.kept[0][0]["record"]["witnessed"]["receivedAt"])

    async def test_an_event_stream_the_middleware_s_own_answer_and_a_body_of_notifications_each_have_theirs(self) -> None:
        progress = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}'
        cases: List[Tuple[Dict[str, Any], Recorder, bytes, Dict[str, Any]]] = [
            ({}, Recorder(headers=EVENTS, pieces=[event(progress), event(unknown(3))]), call(3),
             {"kind": "outcome", "status": 200, "requests": [{"id": 3, "answer": "error", "code": -32602}]}),
            # An answer no client reads a message from: the request's is unseen.
            ({}, Recorder(headers=[(b"content-type", b"text/html")], pieces=[b"<html>busy</html>"]), call(4),
             {"kind": "outcome", "status": 200, "requests": [{"id": 4, "answer": "unseen"}]}),
            ({}, Recorder(headers=[(b"content-type", b"application/json; charset=utf-16")], pieces=[result("5")]), call(5),
             {"kind": "outcome", "status": 200, "refused": "answer-unreadable", "requests": [{"id": 5, "answer": "error", "code": -32603}]}),
            ({"max_body_bytes": 256}, Recorder(), call(6, "x" * 300),
             {"kind": "outcome", "status": 413, "refused": "body-too-large", "requests": []}),
            ({}, Recorder(status=202, headers=[], pieces=[]), b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
             {"kind": "outcome", "status": 202, "requests": []}),
        ]
        for options, app, body, expected in cases:
            with self.subTest(body=body[:60]):
                accounts = Accounts()
                await exchange(ProvenanceMiddleware(app, audit=accounts, **options), body)
                [outcome] = accounts.outcomes
                self.assertEqual(self.settled(outcome), expected)

    async def test_an_app_that_fails_mid_answer_has_its_outcome_too(self) -> None:
        accounts = Accounts()

        async def failing(scope: Scope, receive: Receive, send: Send) -> None:
            await receive()
            await send({"type": "http.response.start", "status": 200, "headers": EVENTS})
            await send({"type": "http.response.body", "body": event(b'{"jsonrpc":"2.0","method":"notifications/progress"}'),
                        "more_body": True})
            raise RuntimeError("the app broke")

        with self.assertRaises(RuntimeError):
            await exchange(ProvenanceMiddleware(failing, audit=accounts), call(7))
        [outcome] = accounts.outcomes
        self.assertEqual(self.settled(outcome), {"kind": "outcome", "status": 200, "requests": [{"id": 7, "answer": "unseen"}]})

    async def test_a_sink_that_fails_on_an_outcome_changes_nothing_of_the_answer_sent(self) -> None:
        async def sink(account: Account, line: str) -> None:
            if account["kind"] == "outcome":
                raise OSError(f"could not keep {line}")

        with self.assertLogs("mcp_provenance", logging.ERROR) as logged:
            answer = await exchange(ProvenanceMiddleware(Recorder(pieces=[unknown(8)]), audit=sink), call(8))
        self.assertEqual((answer.status, answer.body), (200, unknown(8)))
        self.assertEqual(logged.output, ["ERROR:mcp_provenance:an exchange's outcome was not kept: its audit failed (OSError, code 'audit-failed')"])


def quiet(case: unittest.TestCase) -> None:
    """The SDK logs each session it starts and ends, the client each request, at INFO: noise
    for the length of ``case``."""
    for name in ("mcp", "httpx2"):
        noisy = logging.getLogger(name)
        case.addCleanup(noisy.setLevel, noisy.level)
        noisy.setLevel(logging.WARNING)


def fastmcp_server(seen: List[Dict[str, Any]]) -> FastMCP:
    """A FastMCP server whose tool keeps the `_meta` it got and hands it back whole, as a
    careless handler would."""
    made = FastMCP("orders")

    @made.tool
    def open_orders(region: str, ctx: Context) -> ToolResult:
        meta = dict((ctx.request_context.meta if ctx.request_context is not None else None) or {})
        seen.append(meta)
        return ToolResult(f"3 open orders in {region}", meta=meta)

    return made


def over(app: App, **client: Any) -> httpx2.AsyncClient:
    """An HTTP client of ``app`` in memory, on the loopback name the SDKs accept."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8000", **client)


def to(app: App) -> StreamableHttpTransport:
    """FastMCP's client transport to ``app``, in memory."""
    def client(headers: Optional[Dict[str, str]] = None, timeout: Optional[httpx2.Timeout] = None,
               auth: Optional[httpx2.Auth] = None, **rest: Any) -> httpx2.AsyncClient:
        return over(app, headers=headers, timeout=timeout, auth=auth, **rest)
    return StreamableHttpTransport("http://127.0.0.1:8000/mcp", httpx_client_factory=client)


#: What a tool gets of the host's envelope (META) behind a redacting middleware.
INTENT_REDACTED = {"invocationReason": {"text": "The user asked for the open orders"}, "model": {"name": "example-model"},
                   "userIntent": {"redacted": True}, "turnId": "turn-7"}


class InFrontOfRealServers(unittest.IsolatedAsyncioTestCase):
    """The middleware in front of FastMCP's and the `mcp` SDK's Streamable HTTP apps, each
    driven by its own client: the tool gets the redacted intent, the client only its turn."""

    def setUp(self) -> None:
        quiet(self)

    async def test_fastmcp(self) -> None:
        for mode, stateless, json_response in (("auto", True, False), ("legacy", False, False), ("legacy", False, True)):
            with self.subTest(mode=mode, stateless=stateless, json_response=json_response):
                seen: List[Dict[str, Any]] = []
                accounts = Accounts()
                app = ProvenanceMiddleware(fastmcp_server(seen).http_app(stateless_http=stateless, json_response=json_response),
                                           policy={"userIntent": "redact"}, audit=accounts)
                async with lifespan(app), FastMcpClient(to(app), mode=mode) as client:
                    called = await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
                self.assertEqual(seen[0][AI_INVOCATION_KEY], INTENT_REDACTED)
                self.assertEqual((called.meta or {})[AI_INVOCATION_KEY], {"turnId": "turn-7"})
                self.assertIn("tools/call", [account["record"]["method"] for account, _ in accounts.kept])
                sessions = {w.get("sessionId") for w in accounts.witnessed()[1:]}
                self.assertEqual(len(sessions), 1)
                self.assertEqual(None in sessions, stateless)

    async def test_each_exchange_s_outcome_says_what_the_client_got_a_refused_request_its_error_code(self) -> None:
        for stateless, json_response in ((True, False), (False, True)):
            with self.subTest(stateless=stateless, json_response=json_response):
                accounts = Accounts()
                app = ProvenanceMiddleware(fastmcp_server([]).http_app(stateless_http=stateless, json_response=json_response),
                                           audit=accounts)
                async with lifespan(app), FastMcpClient(to(app)) as client:
                    await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
                    # FastMCP has no such prompt: it answers a JSON-RPC error, which the client raises.
                    with self.assertRaises(MCPError) as refused:
                        await client.get_prompt_mcp("no_such_prompt")
                self.assertEqual(refused.exception.error.code, -32602)
                # An outcome for each body whose accounts the sink got, once its answer was over.
                self.assertEqual({outcome.get("receivedAt") for outcome, _ in accounts.outcomes},
                                 {account["record"]["witnessed"]["receivedAt"] for account, _ in accounts.kept})
                called, prompted = [outcome["requests"] for outcome, _ in accounts.outcomes[-2:]]
                self.assertEqual([(got["answer"], got.get("code")) for got in called + prompted],
                                 [("result", None), ("error", -32602)])

    async def test_the_mcp_sdk(self) -> None:
        seen: List[Any] = []
        server = MCPServer("orders")

        @server.tool()
        def open_orders(region: str, ctx: McpContext) -> str:
            seen.append(ctx.request_context.meta)
            return f"3 open orders in {region}"

        for mode, stateless in (("auto", True), ("legacy", False)):
            with self.subTest(mode=mode):
                app = ProvenanceMiddleware(server.streamable_http_app(stateless_http=stateless), policy={"userIntent": "redact"})
                async with lifespan(app), McpClient(streamable_http_client("http://127.0.0.1:8000/mcp", http_client=over(app)), mode=mode) as client:
                    called = await client.call_tool("open_orders", {"region": "EU"}, meta=cast(Any, META))
                self.assertEqual(seen[-1][AI_INVOCATION_KEY], INTENT_REDACTED)
                self.assertEqual((called.meta or {})[AI_INVOCATION_KEY], {"turnId": "turn-7"})

    async def test_inside_fastmcp_s_authentication_the_principal_is_the_token_s_client(self) -> None:
        made = fastmcp_server([])
        made.auth = StaticTokenVerifier(tokens={"secret-token": {"client_id": "alice", "scopes": []}})
        accounts = Accounts()
        app = made.http_app(middleware=[Middleware(ProvenanceMiddleware, audit=accounts)])

        def client(headers: Optional[Dict[str, str]] = None, timeout: Optional[httpx2.Timeout] = None,
                   auth: Optional[httpx2.Auth] = None, **rest: Any) -> httpx2.AsyncClient:
            return over(app, headers=headers, timeout=timeout, auth=auth, **rest)

        transport = StreamableHttpTransport("http://127.0.0.1:8000/mcp", httpx_client_factory=client, auth="secret-token")
        async with lifespan(app), FastMcpClient(transport) as authenticated:
            await authenticated.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
            # Without a token: recorded as no one's, then refused by FastMCP, whatever a header claims.
            async with over(app) as anonymous:
                refused = await anonymous.post("/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                               headers={"content-type": "application/json", "x-user": "alice"})
        self.assertEqual(refused.status_code, 401)
        self.assertEqual([w.get("principal") for w in accounts.witnessed()], ["alice"] * (len(accounts.kept) - 1) + [None])

    async def test_a_failing_sink_refuses_the_call_and_the_tool_never_runs(self) -> None:
        seen: List[Dict[str, Any]] = []
        store = Store()
        app = ProvenanceMiddleware(fastmcp_server(seen).http_app(stateless_http=True),
                                   audit=lambda account, line: store.keep(account["record"], {}) if "record" in account else None)
        async with lifespan(app), FastMcpClient(to(app)) as client:
            store.failing = True
            with self.assertLogs("mcp_provenance", logging.ERROR), self.assertRaises(MCPError) as refused:
                await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
        self.assertEqual(refused.exception.error.code, -32603)
        self.assertEqual(refused.exception.error.message, "the request could not be audited")
        self.assertEqual(refused.exception.error.data, {"code": "audit-failed"})
        self.assertEqual(seen, [])


class InTheReadme(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        quiet(self)

    async def test_the_http_server_section_s_code_runs_and_serves(self) -> None:
        # The package's README and the repository's: each shows the middleware in one block.
        for readme in (Path(__file__).resolve().parents[1] / "README.md", Path(__file__).resolve().parents[2] / "README.md"):
            with self.subTest(readme=str(readme)):
                await self._serves(readme.read_text(encoding="utf-8"))

    async def _serves(self, readme: str) -> None:
        section = re.search(r"^## In your HTTP server\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
        blocks = re.findall(r"```python\n(.*?)```", section.group(1), re.S) if section is not None else []
        self.assertEqual(len(blocks), 1, "'In your HTTP server' has no python block")
        [block] = blocks
        names: Dict[str, Any] = {}
        exec(compile(block, "README.md, In your HTTP server", "exec"), names)
        app, records = names["app"], names["records"]
        async with lifespan(app), FastMcpClient(to(app)) as client:
            called = await client.call_tool_mcp("open_orders", {"region": "EU"}, meta=META)
        self.assertEqual((called.meta or {})[AI_INVOCATION_KEY], {"turnId": "turn-7"})
        [call] = [account["record"] for account in records if account.get("record", {}).get("method") == "tools/call"]
        self.assertEqual(call["clientAsserted"]["turnId"], "turn-7")
        self.assertTrue(call["clientAsserted"]["userIntentRedacted"])

if __name__ == "__main__":
    unittest.main()
