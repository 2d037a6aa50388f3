"""The hostile MCP server of js-tests/differential-back.test.mjs, on 127.0.0.1,
twice: bare, and behind ``mcp_provenance.asgi.ProvenanceMiddleware``.

It speaks Streamable HTTP well enough for the clients to get to a call:
``initialize`` is answered in JSON with an ``Mcp-Session-Id`` it issues,
notifications and responses with 202, ``ping`` and ``tools/list`` as they
should be, a DELETE with 200, a GET without ``Last-Event-ID`` with 405 (unless
the case pushes its result on the session's GET stream). Each ``tools/call``
(the tool named as the case) gets the case's scripted answer, played as
js-tests/differential/answers.mjs describes: a status, headers, the body in
pieces (each an ASGI message of its own), placeholders filled in for the
request it answers. A GET with the ``Last-Event-ID`` of an ``@EV@`` event gets
the case's ``resume`` answer.

  python hostile.py   # reads one JSON line {"cases": {name: answer}} on stdin, prints one JSON
                      # line {"bare": <port>, "asgi": <port>}, then serves until stdin closes
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import sys
import uuid
import zlib
from typing import Any, Dict, List, Optional
from urllib.parse import parse_qs

import uvicorn

from mcp_provenance.asgi import ProvenanceMiddleware

#: name -> answer, as the test sent them.
CASES: Dict[str, Dict[str, Any]] = {}
#: session id -> {"calls": [ids of its tools/calls], "pushed": asyncio.Queue of bytes for its GET stream}
SESSIONS: Dict[str, Dict[str, Any]] = {}
MAX_SESSIONS = 10_000
#: How long a GET stream of a session stays open at most, and a POST's stream waits for it.
STREAM_SECONDS = 10.0
#: How long the first call of a `concurrent` case waits on its stream.
HOLD_SECONDS = 1.5
#: The envelope's key.
KEY = "io.modelcontextprotocol/aiInvocation"


def _id_underscore(number: int) -> str:
    digits = str(number)
    return f"{digits[0]}_{digits[1:]}" if len(digits) > 1 else f"0_{digits}"


def fill(text: str, ids: Dict[str, Any]) -> str:
    """The piece with its placeholders filled in for the request it answers."""
    number = ids["id"]
    plain = json.dumps(number)
    numeric = isinstance(number, int) and not isinstance(number, bool)
    values = {
        "@ID_FLOAT@": f"{number}.0" if numeric else plain,
        "@ID_STR@": json.dumps(str(number)),
        "@ID_SPACED@": json.dumps(f" {number} "),
        "@ID_HEX@": json.dumps(hex(number)) if numeric else plain,
        "@ID_UNDERSCORE@": json.dumps(_id_underscore(number)) if numeric else plain,
        "@ID_ARABIC@": json.dumps("".join(chr(0x660 + int(d)) for d in str(number)), ensure_ascii=False) if numeric else plain,
        "@ID_ESCAPED@": '"' + "".join(f"\\u{ord(c):04x}" for c in str(number)) + '"',
        "@ID_OTHER@": json.dumps(number + 1000) if numeric else json.dumps(f"{number}-other"),
        "@ID_PREV@": json.dumps(ids.get("prev", number)),
        "@EV@": f"ev~{ids['case']}~{plain}",
        "@ID@": plain,
    }
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def body_pieces(answer: Dict[str, Any], ids: Dict[str, Any]) -> List[bytes]:
    """The answer's body as the pieces it goes in."""
    charset = answer.get("charset")
    if charset:
        # The whole text in that charset (one BOM for UTF-16), in one piece.
        pieces = ["".join(fill(p, ids) for p in answer.get("pieces", []) if isinstance(p, str)).encode(charset)]
    else:
        pieces = [bytes.fromhex(p["hex"]) if isinstance(p, dict) else fill(p, ids).encode() for p in answer.get("pieces", [])]
    if answer.get("gzip") or answer.get("deflate"):
        whole = b"".join(pieces)
        packed = gzip.compress(whole) if answer.get("gzip") else zlib.compress(whole)
        half = len(packed) // 2
        pieces = [packed[:half], packed[half:]]
    return pieces


async def play(send: Any, answer: Dict[str, Any], ids: Dict[str, Any], more: bool = False) -> None:
    """Sends a scripted answer: its head, each piece as a message of its own, then the end
    (unless ``more``: the caller ends it)."""
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in answer.get("headers", [])]
    await send({"type": "http.response.start", "status": answer.get("status", 200), "headers": headers})
    pieces = body_pieces(answer, ids)
    for piece in pieces:
        await send({"type": "http.response.body", "body": piece, "more_body": True})
        # Apart in time, so that they go apart on the wire too (but for a stream of many).
        await asyncio.sleep(0.002 if len(pieces) < 64 else 0)
    if not more:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def reply(send: Any, status: int, body: Any = None, headers: Optional[List[Any]] = None) -> None:
    data = b"" if body is None else json.dumps(body).encode()
    head = list(headers or [])
    if body is not None:
        head.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data, "more_body": False})


async def read_body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def session_of(headers: Dict[bytes, bytes]) -> Optional[Dict[str, Any]]:
    sid = headers.get(b"mcp-session-id")
    return SESSIONS.get(sid.decode("latin-1")) if sid is not None else None


async def hostile(scope: Dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    headers = {name.lower(): value for name, value in scope["headers"]}
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    case_name = query.get("case", [""])[0]
    session = session_of(headers)
    method = scope["method"]
    if method == "DELETE":
        return await reply(send, 200)
    if method == "GET":
        last = headers.get(b"last-event-id")
        if last is not None:
            parts = last.decode("latin-1").split("~")
            if len(parts) == 3 and parts[0] == "ev" and parts[1] in CASES and "resume" in CASES[parts[1]] and parts[2].isdigit():
                ids = {"id": int(parts[2]), "case": parts[1]}
                if session is not None and len(session["calls"]) > 1:
                    ids["prev"] = session["calls"][-2]
                return await play(send, CASES[parts[1]]["resume"], ids)
            return await reply(send, 404)
        if session is not None and "standalone" in CASES.get(case_name, {}):
            return await standalone(receive, send, session)
        return await reply(send, 405)
    if method != "POST":
        return await reply(send, 405)
    body = await read_body(receive)
    try:
        message = json.loads(body)
    except ValueError:
        return await reply(send, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return await reply(send, 202)
    request_id = message["id"]
    params = message.get("params") or {}
    if message["method"] == "initialize":
        sid = uuid.uuid4().hex
        if len(SESSIONS) >= MAX_SESSIONS:
            SESSIONS.pop(next(iter(SESSIONS)))
        SESSIONS[sid] = {"calls": [], "pushed": asyncio.Queue()}
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "hostile", "version": "1.0.0"}}
        return await reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": result},
                           [(b"mcp-session-id", sid.encode())])
    if message["method"] == "ping":
        return await reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": {}})
    if message["method"] == "tools/list":
        return await reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": {"tools": []}})
    if message["method"] != "tools/call":
        return await reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
    name = params.get("name")
    answer = CASES.get(name)
    if answer is None:
        return await reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "no such case"}})
    ids = {"id": request_id, "case": name}
    if session is not None:
        if session["calls"]:
            ids["prev"] = session["calls"][-1]
        session["calls"].append(request_id)
        if answer.get("concurrent") and len(session["calls"]) < answer.get("calls", 1):
            # The calls before the last wait on a stream that ends, a while later, without a result.
            await play(send, {"status": 200, "headers": [["content-type", "text/event-stream"]], "pieces": [": waiting\n\n"]}, ids, more=True)
            await asyncio.sleep(HOLD_SECONDS)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if answer.get("calls", 1) > 1 and len(session["calls"]) < answer["calls"]:
            # The calls before the last: a well-formed answer, the server's envelope in it.
            result = {"content": [{"type": "text", "text": "ok"}], "_meta": {KEY: {"turnId": "server-turn", "userIntent": {"text": "leak"}}}}
            return await reply(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": result})
    if scope["path"].rstrip("/").endswith("/again") and "again" in answer:
        return await play(send, answer["again"], ids)
    if "standalone" in answer:
        await play(send, answer, ids, more=True)
        if session is not None:
            for piece in answer["standalone"]:
                session["pushed"].put_nowait(fill(piece, ids).encode())
        # The result goes on the GET stream; this one ends a moment later, without it.
        await asyncio.sleep(0.3)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    await play(send, answer, ids)


async def standalone(receive: Any, send: Any, session: Dict[str, Any]) -> None:
    """The session's own GET stream: what a call pushes, until the client goes (or the bound)."""
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    gone = asyncio.ensure_future(disconnected())
    try:
        deadline = asyncio.get_running_loop().time() + STREAM_SECONDS
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            pushed = asyncio.ensure_future(session["pushed"].get())
            done, _ = await asyncio.wait({pushed, gone}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if pushed not in done:
                pushed.cancel()
                break
            await send({"type": "http.response.body", "body": pushed.result(), "more_body": True})
    finally:
        gone.cancel()
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def listening() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    sock.set_inheritable(True)
    return sock


async def main() -> None:
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    CASES.update(json.loads(line)["cases"])
    fronts = {"bare": hostile, "asgi": ProvenanceMiddleware(hostile)}
    servers = []
    ports = {}
    for name, app in fronts.items():
        sock = listening()
        ports[name] = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="critical", lifespan="off", access_log=False, timeout_graceful_shutdown=1)
        servers.append((uvicorn.Server(config), sock))
    tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in servers]
    while not all(server.started for server, _ in servers):
        for task in tasks:
            if task.done():
                task.result()
                raise SystemExit("a server stopped before it started")
        await asyncio.sleep(0.02)
    print(json.dumps(ports), flush=True)
    # Serve until the test closes our stdin (or dies).
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for server, _ in servers:
        server.should_exit = True
    await asyncio.wait(tasks, timeout=3)


if __name__ == "__main__":
    asyncio.run(main())
