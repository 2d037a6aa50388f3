"""The ContextForge app's routing and its params filter, on small Starlette apps
in memory (ContextForge itself is in test_contextforge.py): a request is
handled as the route the app would serve it with asks; a route that takes a
body and is not classified is refused, never passed; a params body reaches the
app as the very bytes the filter forwarded, and a bare intent, a body that is
not one JSON object or one that cannot be audited, not at all."""

from __future__ import annotations

import asyncio
import doctest
import json
import unittest
from typing import Any, Dict, List, MutableMapping, Optional, Sequence, Tuple

from starlette.routing import Mount, Route, WebSocketRoute

import mcp_provenance.contextforge._params
import mcp_provenance.contextforge._routes
from mcp_provenance import AI_INVOCATION_KEY
from mcp_provenance.asgi import App, ProvenanceMiddleware
from mcp_provenance.contextforge._params import ParamsFilter
from mcp_provenance.contextforge._routes import MESSAGE, MESSAGES, NONE, REFUSED, Gateway, RouteTable, params

Message = MutableMapping[str, Any]

#: The name this module's functions have in a route table.
HERE = __name__

#: A completion's params with the host's envelope, spelt as no serializer would write them.
ENVELOPE = (b'{ "ref" : {"type":"ref/prompt","name":"p"},\n "argument":{"name":"region","value":"no"}, "limit": 1.50e0,'
            b' "_meta":{"%s":{"turnId":"t-1","userIntent":{"text":"my salary"}}} }' % AI_INVOCATION_KEY.encode())


class Served:
    """An app that writes down each request (its scope and body) and answers ``answer``."""

    def __init__(self, answer: bytes = b'{"completion":{"values":[]}}', status: int = 200) -> None:
        self.requests: List[Tuple[Message, bytes]] = []
        self._answer = answer
        self._status = status

    async def __call__(self, scope: Message, receive: Any, send: Any) -> None:
        body = b""
        if scope["type"] == "http":
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body", False):
                    break
        self.requests.append((scope, body))
        await send({"type": "http.response.start", "status": self._status,
                    "headers": [(b"content-type", b"application/json"), (b"x-served", b"yes")]})
        await send({"type": "http.response.body", "body": self._answer})


def call(app: App, path: str, body: bytes = b"", method: str = "POST", root_path: str = "",
         headers: Sequence[Tuple[bytes, bytes]] = ((b"content-type", b"application/json"),),
         pieces: int = 1) -> Tuple[int, Dict[bytes, bytes], bytes]:
    """``app``'s answer (status, headers, body) to a request, its body sent in ``pieces``."""
    size = max(1, -(-len(body) // pieces))
    chunks = [body[at:at + size] for at in range(0, len(body), size)] or [b""]
    sent: List[Message] = []

    async def receive() -> Message:
        if chunks:
            piece = chunks.pop(0)
            return {"type": "http.request", "body": piece, "more_body": bool(chunks)}
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    async def served() -> None:
        await app({"type": "http", "method": method, "path": path, "root_path": root_path, "headers": list(headers)},
                  receive, send)
    asyncio.run(served())
    starts = [message for message in sent if message["type"] == "http.response.start"]
    if len(starts) != 1:
        raise AssertionError(f"{len(starts)} answers")
    answer = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    return starts[0]["status"], dict(starts[0]["headers"]), answer


class Audit:
    """An audit sink: keeps each message's account, and each exchange's outcome apart;
    ``failing`` makes it raise."""

    def __init__(self, failing: bool = False) -> None:
        self.accounts: List[Dict[str, Any]] = []
        self.outcomes: List[Dict[str, Any]] = []
        self._failing = failing

    def __call__(self, account: Any, line: str) -> None:
        if self._failing:
            raise OSError("the disk is full of my salary")
        (self.outcomes if account["kind"] == "outcome" else self.accounts).append(account)


def middleware(audit: Audit) -> Any:
    return lambda behind: ProvenanceMiddleware(behind, policy={"userIntent": "redact"}, audit=audit)


async def completion(request: Any) -> None: ...
async def notification(request: Any) -> None: ...
async def rpc(request: Any) -> None: ...
async def internal(request: Any) -> None: ...
async def tools(request: Any) -> None: ...
async def upload(request: Any) -> None: ...
async def ws(websocket: Any) -> None: ...


#: The table of the apps below.
TABLE = {f"{HERE}.rpc": MESSAGES, f"{HERE}.completion": params("completion/complete"),
         f"{HERE}.notification": MESSAGE, f"{HERE}.internal": REFUSED, f"{HERE}.tools": NONE, "mount /mcp": MESSAGES}


def routes(*extra: Any) -> List[Any]:
    return [Route("/rpc", rpc, methods=["POST"]), Route("/protocol/completion/complete", completion, methods=["POST"]),
            Route("/protocol/notifications", notification, methods=["POST"]),
            Route("/_internal/rpc", internal, methods=["POST"]), Route("/tools", tools, methods=["GET", "POST"]),
            Route("/tools/{tool_id}", tools, methods=["PUT"]), Mount("/mcp", app=Served()),
            WebSocketRoute("/ws", ws), *extra]


class Docs(unittest.TestCase):
    def test_every_example_runs(self) -> None:
        for module in (mcp_provenance.contextforge._routes, mcp_provenance.contextforge._params):
            failed, attempted = doctest.testmod(module, verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE)
            self.assertEqual(failed, 0, module.__name__)
            self.assertGreater(attempted, 0, module.__name__)


class TheRouteTable(unittest.TestCase):
    def find(self, table: RouteTable, path: str, method: str = "POST", root_path: str = "") -> Optional[str]:
        found = table.find({"type": "http", "method": method, "path": path, "root_path": root_path, "headers": []})
        return found.handling.kind

    def test_a_request_is_handled_as_the_route_the_app_serves_it_with_asks(self) -> None:
        table = RouteTable(routes(), TABLE)
        self.assertEqual([self.find(table, path) for path in (
            "/rpc", "/mcp/", "/mcp/sse", "/protocol/completion/complete", "/protocol/notifications", "/_internal/rpc",
            "/tools", "/tools/t-1", "/rpc/", "/mcp", "/nowhere")],
            ["messages", "messages", "messages", "params", "message", "refused", "none", "none", "none", "none", "none"])

    def test_the_route_that_matches_whole_comes_before_one_that_matches_the_path_alone(self) -> None:
        async def anything(request: Any) -> None: ...
        table = RouteTable([Route("/x", tools, methods=["GET"]), Route("/x", anything, methods=["POST"])], TABLE)
        # The first answers a POST 405; the second takes it: it is not classified.
        self.assertEqual((self.find(table, "/x", "GET"), self.find(table, "/x")), ("none", "unclassified"))
        self.assertEqual(self.find(table, "/x", "PUT"), "none")

    def test_the_root_path_is_the_apps_when_it_sets_one_else_the_servers(self) -> None:
        table = RouteTable(routes(), TABLE)
        self.assertEqual([self.find(table, path, root_path="/proxy") for path in ("/proxy/rpc", "/rpc", "/proxyrpc")],
                         ["messages", "messages", "none"])
        own = RouteTable(routes(), TABLE, root_path="/gateway")
        self.assertEqual([self.find(own, path, root_path=root) for root, path in (
            ("", "/gateway/rpc"), ("", "/rpc"), ("/proxy", "/proxy/rpc"), ("/proxy", "/gateway/rpc"))],
            ["messages", "messages", "none", "messages"])

    def test_the_apps_own_rewrite_comes_first(self) -> None:
        def rewrite(scope: Message) -> Message:
            return {**scope, "path": "/mcp/"} if scope["path"].endswith("/mcp") else scope
        table = RouteTable(routes(), TABLE, rewrite=rewrite)
        self.assertEqual(self.find(table, "/servers/s-1/mcp"), "messages")

    def test_a_route_that_takes_a_body_and_is_not_in_the_table_is_listed(self) -> None:
        def wrapped() -> Any:
            # A decorator that does not wrap: its function names no code of its own.
            async def wrapper(request: Any) -> None: ...
            return wrapper
        table = RouteTable(routes(Route("/upload", upload, methods=["PATCH"]), Route("/page", tools),
                                  Route("/wrapped", wrapped(), methods=["POST"]), Mount("/files", app=Served())), TABLE)
        self.assertEqual(table.unclassified(), [f"PATCH /upload ({HERE}.upload)", "POST /wrapped (an endpoint without a name)",
                                                "* /files (mount /files)"])
        self.assertEqual(self.find(table, "/wrapped"), "unclassified")


class TheGateway(unittest.TestCase):
    def gateway(self, audit: Audit, *extra: Any) -> Tuple[Gateway, Served]:
        app = Served()
        return Gateway(app, RouteTable(routes(*extra), TABLE), middleware(audit)), app

    def test_a_body_sent_to_a_route_not_classified_is_refused_and_the_app_never_sees_it(self) -> None:
        audit = Audit()
        with self.assertLogs("mcp_provenance", "WARNING") as logged:
            gateway, app = self.gateway(audit, Route("/upload", upload, methods=["POST", "GET"]))
        self.assertIn("1 route(s) that take a body are not classified", logged.output[0])
        with self.assertLogs("mcp_provenance", "WARNING") as logged:
            status, _, body = call(gateway, "/upload", ENVELOPE)
        self.assertEqual((status, json.loads(body)["code"]), (501, "unclassified-route"))
        self.assertNotIn(b"salary", body)
        self.assertIn(f"GET,HEAD,POST /upload ({HERE}.upload)", logged.output[0])
        # Without a body, the route is the app's.
        self.assertEqual(call(gateway, "/upload", method="GET")[0], 200)
        self.assertEqual([scope["method"] for scope, _ in app.requests], ["GET"])
        self.assertEqual(audit.accounts, [])

    def test_an_internal_route_is_refused(self) -> None:
        gateway, app = self.gateway(Audit())
        status, _, body = call(gateway, "/_internal/rpc", ENVELOPE)
        self.assertEqual((status, json.loads(body)["code"]), (403, "internal-route"))
        self.assertEqual(app.requests, [])

    def test_each_route_gets_what_it_asks(self) -> None:
        audit = Audit()
        gateway, app = self.gateway(audit)
        bare = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"q","_meta":{"userIntent":{"text":"my salary"}}}}'
        self.assertEqual(call(gateway, "/rpc", bare)[0:3:2], (200, b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,'
                         b'"message":"a bare _meta.userIntent, which a policy that redacts intents cannot reach",'
                         b'"data":{"code":"bare-user-intent"}}}'))
        self.assertEqual(call(gateway, "/protocol/completion/complete", ENVELOPE)[0], 200)
        self.assertEqual(call(gateway, "/tools", b'{"name":"my salary"}')[0], 200)
        self.assertEqual([(scope["path"], body) for scope, body in app.requests],
                         [("/protocol/completion/complete", ENVELOPE.replace(b'"text":"my salary"', b'"redacted":true')),
                          ("/tools", b'{"name":"my salary"}')])
        self.assertEqual([account.get("refused") for account in audit.accounts], ["bare-user-intent", None])

    def test_websockets_and_lifespan_go_to_the_app(self) -> None:
        gateway, app = self.gateway(Audit())

        async def nothing() -> Message:
            return {"type": "websocket.connect"}

        async def dropped(message: Message) -> None: ...
        for kind in ("websocket", "lifespan"):
            asyncio.run(gateway({"type": kind, "path": "/_internal/rpc", "headers": []}, nothing, dropped))
        self.assertEqual([scope["type"] for scope, _ in app.requests], ["websocket", "lifespan"])


class TheParamsFilter(unittest.TestCase):
    def params(self, audit: Audit, answer: bytes = b'{"completion":{"values":[]}}') -> Tuple[ParamsFilter, Served]:
        app = Served(answer)
        return ParamsFilter(app, middleware(audit), "completion/complete"), app

    def test_the_app_reads_the_params_the_filter_forwarded_byte_for_byte(self) -> None:
        audit = Audit()
        filtered, app = self.params(audit)
        clean = ENVELOPE.replace(b'"userIntent":{"text":"my salary"}', b'"userIntent":{"redacted":true}')
        for pieces in (1, 5):
            for body in (ENVELOPE, clean):
                with self.subTest(pieces=pieces, body=body):
                    status, headers, answer = call(filtered, "/protocol/completion/complete", body, pieces=pieces)
                    self.assertEqual((status, headers[b"x-served"], answer), (200, b"yes", b'{"completion":{"values":[]}}'))
                    scope, got = app.requests[-1]
                    # Only the intent's span changed: whitespace, member order, number spellings as they came.
                    self.assertEqual(got, clean)
                    self.assertEqual(dict(scope["headers"])[b"content-length"], b"%d" % len(clean))
        records = [account["record"] for account in audit.accounts]
        self.assertEqual({(record["method"], record["clientAsserted"]["turnId"]) for record in records},
                         {("completion/complete", "t-1")})
        self.assertEqual(len({record["requestId"] for record in records}), 4)

    def test_a_bare_intent_is_refused_as_contextforge_answers_its_errors_and_audited(self) -> None:
        audit = Audit()
        filtered, app = self.params(audit)
        status, headers, body = call(filtered, "/protocol/completion/complete",
                                     b'{"ref":{"type":"ref/prompt","name":"p"},"_meta":{"userIntent":{"text":"my salary"}}}')
        self.assertEqual((status, headers[b"content-type"]), (400, b"application/json"))
        self.assertEqual(json.loads(body), {
            "detail": "a bare _meta.userIntent, which a policy that redacts intents cannot reach", "code": "bare-user-intent",
            "error": {"code": -32602, "message": "a bare _meta.userIntent, which a policy that redacts intents cannot reach",
                      "data": {"code": "bare-user-intent"}}})
        self.assertEqual(app.requests, [])
        self.assertEqual([account["refused"] for account in audit.accounts], ["bare-user-intent"])

    def test_a_body_that_is_not_one_json_object_is_refused_before_it_is_read_as_a_request(self) -> None:
        audit = Audit()
        filtered, app = self.params(audit)
        for body in (b'{"ref":{}},"params":{"_meta":{"userIntent":{"text":"my salary"}}}', b'{"ref":{}}}', b"[]", b'"p"',
                     b'{"a":1} {"b":2}', b"", b'{"n":NaN}', b'\xff{}'):
            with self.subTest(body=body):
                status, _, answer = call(filtered, "/protocol/completion/complete", body, pieces=3)
                self.assertEqual((status, json.loads(answer)), (400, {"detail": "the body is not one JSON object",
                                                                    "code": "not-one-object"}))
        self.assertEqual((app.requests, audit.accounts), ([], []))

    def test_what_cannot_be_audited_is_refused(self) -> None:
        filtered, app = self.params(Audit(failing=True))
        with self.assertLogs("mcp_provenance", "ERROR"):
            status, _, body = call(filtered, "/protocol/completion/complete", ENVELOPE)
        self.assertEqual((status, json.loads(body)["code"]), (500, "audit-failed"))
        self.assertNotIn(b"salary", body)
        self.assertEqual(app.requests, [])

    def test_a_body_the_filter_refuses_whole_keeps_its_status(self) -> None:
        filtered, app = self.params(Audit())
        status, _, body = call(filtered, "/protocol/completion/complete", ENVELOPE, headers=[(b"content-type", b"text/plain")])
        self.assertEqual((status, json.loads(body)["code"]), (415, "unsupported-media-type"))
        self.assertEqual(app.requests, [])

    def test_what_is_not_a_post_goes_to_the_app_as_it_came(self) -> None:
        filtered, app = self.params(Audit())
        self.assertEqual(call(filtered, "/protocol/completion/complete", method="GET")[0], 200)
        self.assertEqual([scope["method"] for scope, _ in app.requests], ["GET"])

    def test_a_message_answered_apart_is_filtered_and_its_answer_passed_on(self) -> None:
        audit = Audit()
        app = Served(b"null")
        filtered = ParamsFilter(app, middleware(audit), None)
        cancelled = (b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,'
                     b'"_meta":{"%s":{"turnId":"t-1","userIntent":{"text":"my salary"}}}}}' % AI_INVOCATION_KEY.encode())
        self.assertEqual(call(filtered, "/protocol/notifications", cancelled)[0:3:2], (200, b"null"))
        self.assertEqual(app.requests[0][1], cancelled.replace(b'{"text":"my salary"}', b'{"redacted":true}'))
        # A notification refused gets no answer of its own: 202, and the app never sees it.
        bare = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"userIntent":{"text":"my salary"}}}}'
        self.assertEqual(call(filtered, "/protocol/notifications", bare)[0:3:2], (202, b""))
        self.assertEqual(len(app.requests), 1)
        self.assertEqual([account["kind"] for account in audit.accounts], ["notification", "notification"])
        # Each exchange's outcome: the status the client got (ContextForge's own, or the filter's).
        self.assertEqual([(outcome["status"], outcome["requests"]) for outcome in audit.outcomes], [(200, []), (202, [])])

    def test_the_outcome_of_a_params_body_has_the_status_contextforge_answered_and_no_answer_read(self) -> None:
        audit = Audit()
        for status in (200, 404):
            filtered = ParamsFilter(Served(b'{"detail":"Prompt not found"}', status), middleware(audit), "completion/complete")
            self.assertEqual(call(filtered, "/protocol/completion/complete", ENVELOPE)[0], status)
        # ContextForge answers in a form of its own: what the request got is not read from it.
        self.assertEqual([(outcome["status"], outcome["requests"]) for outcome in audit.outcomes],
                         [(200, [{"id": 1, "answer": "unseen"}]), (404, [{"id": 1, "answer": "unseen"}])])


if __name__ == "__main__":
    unittest.main()
