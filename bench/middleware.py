"""What the ASGI middleware adds to each request, in one process and one run.

Each server serves the same request, alone and behind two middlewares, and
the filter does its part alone, every setup in turn a few requests at a
time (interleaved, so that whatever else the machine runs weighs on all of
them alike). The requests: the SEP-2817 example of docs/reference.md, and
the same call whose ``arguments`` hold ~0.7 MB of rows.

- The servers: a minimal MCP app that reads the body and answers its
  request with a result, as JSON or as an event stream of one event (as the
  SDKs answer a POST by default); and FastMCP 4.x's ``http_app()``
  (stateless, JSON answers).
- The floor: an ASGI middleware that only reads the body and wraps
  ``receive`` and ``send``, as any middleware that reads a body must; no
  middleware that filters it can add less. And the same with the filter and
  its echo between, in front of the JSON answers: the filter's work where a
  request runs it, and nothing else of ProvenanceMiddleware's.
- ``ProvenanceMiddleware``, redacting intents and echoing ``turnId``, with a
  sink that keeps the last accounts as a log's buffer does, and with no sink;
  and, at the end, with that sink with and without the outcome account, and
  with Prometheus metrics besides (``outcome_cost``).
- The filter alone, the work the middleware cannot leave out:
  ``Filter(...)`` on the body, given the context the middleware gives it,
  and ``echo`` on the app's answer; and the same, timed alone, right after
  a FastMCP request each time, as it runs in front of one: a request of
  FastMCP's leaves the caches cold, and the filter takes ~4x longer.

Prints p50 and p99 per request, what each middleware adds over its server
alone, that against the filter's own cost where it runs (the issue's aim:
at most 1.5x), what is left once the filter and the floor are taken
out: the middleware's own work, and what ProvenanceMiddleware adds against
what the filtering floor adds. It asserts nothing about time.

    make bench   (or: target/python/test/bin/python bench/middleware.py [--rounds N])
"""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Deque, Dict, List, MutableMapping, NamedTuple, Optional, Tuple

from prometheus_client import CollectorRegistry

from mcp_provenance import Filter
from mcp_provenance._asgi_io import received_at
from mcp_provenance.asgi import App, ProvenanceMiddleware, Receive, Scope, Send
from mcp_provenance.prometheus import PrometheusMetrics
from mcp_provenance.types import FilterContext, MessageAccount, Policy

ROOT = Path(__file__).resolve().parent.parent
#: How many times each setup takes its turn; each turn serves a block of requests.
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 100
POLICY: Policy = {"userIntent": "redact"}
HEADERS = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
           (b"host", b"127.0.0.1:8000"), (b"user-agent", b"bench")]

reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
example = re.search(r"A request a model made[\s\S]*?```json\n([\s\S]*?)```", reference).group(1).strip()  # type: ignore[union-attr]
sep = json.loads(example)
rows = [{"id": i, "name": f"Employee {i}", "department": ["Support", "Engineering", "Sales"][i % 3],
         "title": "Engineer", "salary": 50_000 + i, "active": i % 2 == 0, "tags": ["a", "b"]} for i in range(5600)]
big = json.dumps({**sep, "params": {**sep["params"], "arguments": {**sep["params"]["arguments"], "rows": rows}}},
                 separators=(",", ":"))
#: Each request, and how many of it each setup serves a turn (FastMCP's, which take ~50x longer, apart).
BODIES = [("the SEP example", example.encode(), 25, 3), ("0.7 MB of rows in arguments", big.encode(), 1, 1)]

Message = MutableMapping[str, Any]


async def read(receive: Receive) -> bytes:
    """A request's body, whole."""
    body = b""
    while True:
        message = await receive()
        piece: bytes = message.get("body", b"")
        body += piece
        if not message.get("more_body"):
            return body


#: Where the minimal app finds its request's id: the first `"id"` of the bodies, which is theirs.
ID = re.compile(rb'"id"\s*:\s*(\d+)')


def minimal(events: bool) -> App:
    """An MCP app at its smallest: reads the body, answers its request with a result, as JSON
    or as an event stream. It finds the request's id without parsing the body: the time a
    server takes to parse 0.7 MB (and to collect what it made) varies by more than the
    middleware adds, which FastMCP shows."""
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        request_id = ID.search(await read(receive)).group(1)  # type: ignore[union-attr]
        answer = b'{"jsonrpc": "2.0", "id": %s, "result": {"content": []}}' % request_id
        if events:
            headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"event: message\r\ndata: " + answer + b"\r\n\r\n", "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        else:
            headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(answer))]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": answer})
    return app


def floor(app: App) -> App:
    """The least a middleware that reads the body adds: it reads it, then hands it to ``app``
    through a ``receive`` of its own, and the answer back through a ``send`` of its own."""
    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body = await read(receive)

        async def sent(message: Message) -> None:
            await send(message)

        await app(scope, replaying(body, receive), sent)
    return middleware


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` whole, then what the client's ``receive`` brings."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}
    return replayed


def filtering_floor(app: App) -> App:
    """The floor middleware with the filter's work between: the body filtered on its way in and
    the answer echoed on its way back, where a request runs them (the caches as the request
    leaves them), and nothing else of ProvenanceMiddleware's (no sessions, limits, refusals,
    events, audit)."""
    filter_ = Filter({"policy": POLICY})

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        body = await read(receive)
        forwarded = filter_(body, {"headers": {"content-type": ["application/json"]}, "receivedAt": received_at()})

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.body":
                echoed = filter_.echo(message.get("body", b""), forwarded)
                assert echoed is not None, "a JSON answer, whole"
                message = {**message, "body": echoed}
            await send(message)

        await app(scope, replaying(forwarded["forward"], receive), sent)  # type: ignore[typeddict-item]
    return middleware


def fastmcp_app() -> Any:
    """FastMCP's Streamable HTTP app (stateless, JSON answers) with the tool the bodies call."""
    from fastmcp import FastMCP

    server = FastMCP("bench")

    @server.tool
    def execute_query(database_id: str, query: str, rows: List[Dict[str, Any]] | None = None) -> str:  # noqa: ARG001
        return "ok"

    return server.http_app(path="/mcp", stateless_http=True, json_response=True)


async def serve(app: App, body: bytes) -> bytes:
    """One request through ``app`` as an ASGI server makes it; the answer's body."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "",
             "headers": [*HEADERS, (b"content-length", b"%d" % len(body))],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}
    sent = False
    out: List[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            await asyncio.Event().wait()  # a client that stays: the app is not told of a disconnect
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            out.append(message.get("body", b""))

    await app(scope, receive, send)
    return b"".join(out)


def percentiles(samples: List[float]) -> Tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


class Setup(NamedTuple):
    """What is timed, how many calls a turn, and what runs untimed before each call."""

    call: Callable[[], Awaitable[Any]]
    block: int
    before: Optional[Callable[[], Awaitable[Any]]] = None


async def interleaved(setups: Dict[str, Setup], rounds: int) -> Dict[str, List[float]]:
    """Each setup's time per call, in µs: ``rounds`` turns each, a turn a block of calls, the
    setups in turn, in a new order each round (what one leaves behind, cold caches, memory
    to map again, falls on each alike). A turn of each first, untimed, to warm up."""
    times: Dict[str, List[float]] = {name: [] for name in setups}
    order = list(setups)
    shuffled = random.Random(2817)
    for turn in range(rounds + 1):
        shuffled.shuffle(order)
        for name in order:
            setup = setups[name]
            for _ in range(setup.block):
                if setup.before is not None:
                    await setup.before()
                started = time.perf_counter_ns()
                await setup.call()
                if turn:
                    times[name].append((time.perf_counter_ns() - started) / 1000)
    return times


#: The floor middleware with the filter's work between.
FILTERING = "+ floor middleware, filtering"

#: The filter's own cost each server's figures are held to: where the server's own work
#: leaves the caches to the filter (the minimal app's is small), or runs between its calls.
WARM, AFTER_FASTMCP = "filter + echo alone", "filter + echo, each after a FastMCP request"
BASELINE = {"app, JSON answer": WARM, "app, event stream": WARM, "FastMCP": AFTER_FASTMCP}


async def main() -> None:
    # A sink as a log's buffer is: the last accounts and their lines, the older ones let go.
    kept: Deque[Tuple[MessageAccount, str]] = collections.deque(maxlen=100)

    def keep(account: MessageAccount, line: str) -> None:
        kept.append((account, line))

    framework = fastmcp_app()
    servers: Dict[str, App] = {"app, JSON answer": minimal(events=False), "app, event stream": minimal(events=True),
                               "FastMCP": framework}
    filter_ = Filter({"policy": POLICY})
    async with framework.router.lifespan_context(framework):
        for title, body, block, slow_block in BODIES:
            # The context the middleware gives the filter: the body's Content-* headers, the time.
            context: FilterContext = {"headers": {"content-type": ["application/json"], "content-length": [str(len(body))]},
                                      "receivedAt": "2026-01-01T00:00:00.000Z"}
            answer = await serve(servers["app, JSON answer"], body)

            async def filter_alone(body: bytes = body, context: FilterContext = context, answer: bytes = answer) -> None:
                forwarded = filter_(body, context)
                assert "forward" in forwarded
                filter_.echo(answer, forwarded)

            setups = {WARM: Setup(filter_alone, block),
                      AFTER_FASTMCP: Setup(filter_alone, slow_block, functools.partial(serve, framework, body))}
            for server, app in servers.items():
                count = slow_block if server == "FastMCP" else block
                # The filtering floor holds no event stream: in front of JSON answers only.
                filtering = [] if server == "app, event stream" else [(FILTERING, filtering_floor(app))]
                for setup, made in (("alone", app), ("+ floor middleware", floor(app)), *filtering,
                                    ("+ ProvenanceMiddleware", ProvenanceMiddleware(app, policy=POLICY, audit=keep)),
                                    ("+ ProvenanceMiddleware, no sink", ProvenanceMiddleware(app, policy=POLICY))):
                    setups[f"{server}: {setup}"] = Setup(functools.partial(serve, made, body), count)
            times = await interleaved(setups, ROUNDS if block > 1 else max(ROUNDS // 2, 10))
            report(title, len(body), times)


def report(title: str, size: int, times: Dict[str, List[float]]) -> None:
    """The figures of one request: each setup's, and each middleware's against its server and
    against the filter's own cost."""
    got = {name: percentiles(samples) for name, samples in times.items()}
    floors: Dict[str, float] = {}
    filtering: Dict[str, float] = {}
    print(f"\n{title} ({size} bytes), {len(times[WARM])} requests a setup ({len(times[AFTER_FASTMCP])} with FastMCP), "
          "interleaved; µs per request:")
    print(f"  {'':48} {'p50':>9} {'p99':>9}   {'added p50':>9} {'p99':>9}   {'/ filter':>8}   {'own work':>8}   {'/ floor':>8}")
    for name in (WARM, AFTER_FASTMCP):
        print(f"  {name:48} {got[name][0]:9.1f} {got[name][1]:9.1f}")
    for name, (p50, p99) in got.items():
        if ": " not in name:
            continue
        server, setup = name.split(": ")
        alone, own = got[f"{server}: alone"], got[BASELINE[server]][0]
        if setup == "alone":
            print(f"  {name:48} {p50:9.1f} {p99:9.1f}")
            continue
        added = p50 - alone[0]
        line = f"  {'  ' + setup:48} {p50:9.1f} {p99:9.1f}   {added:9.1f} {p99 - alone[1]:9.1f}   {added / own:7.2f}x"
        if setup == "+ floor middleware":
            floors[server] = added
        elif setup == FILTERING:
            filtering[server] = added
        else:
            # What is left of what it adds once the filter's work and the floor are taken out.
            line += f"   {added - own - floors[server]:8.1f}"
            if server in filtering:
                line += f"   {added / filtering[server]:7.2f}x"
        print(line)
    print("  '/ filter': what a middleware adds at p50 over the filter's own cost (the aim: at most 1.5x), in front of")
    print("  FastMCP the filter's cost right after a FastMCP request (its code and data no longer in the caches);")
    print("  'own work': what it adds beyond that cost and the floor middleware's; '/ floor': what it adds over")
    print("  what the floor middleware, filtering, adds: the filter's work where the request runs it.")


class _OutcomeNotGiven(ProvenanceMiddleware):
    """The middleware as it was before the outcome account: what it keeps of the exchange
    (read in the core off what the echo parsed already) never made into an account nor
    handed to the sink. Only this measure has it."""

    def _ended(self, exchange: Any, began: float) -> None:
        return None


async def outcome_cost(requests: int) -> None:
    """What the outcome account and Prometheus metrics add to the middleware with a sink, on
    the SEP example in front of the minimal app: one request to each setup in turn, the order turning each time
    (round-robin by the request: blocks of requests drift by more than the outcome costs)."""
    kept: Deque[Tuple[Any, str]] = collections.deque(maxlen=100)

    def keep(account: Any, line: str) -> None:
        kept.append((account, line))

    app, body = minimal(events=False), BODIES[0][1]
    metrics = PrometheusMetrics(CollectorRegistry())
    setups: Dict[str, App] = {"app alone": app,
                              "+ ProvenanceMiddleware, outcome not given": _OutcomeNotGiven(app, policy=POLICY, audit=keep),
                              "+ ProvenanceMiddleware": ProvenanceMiddleware(app, policy=POLICY, audit=keep),
                              "+ ProvenanceMiddleware, Prometheus metrics": ProvenanceMiddleware(
                                  app, policy=POLICY, audit=keep, metrics=metrics)}
    names = list(setups)
    for name in names:
        for _ in range(500):
            await serve(setups[name], body)
    times: Dict[str, List[float]] = {name: [] for name in names}
    for n in range(requests):
        for k in range(len(names)):
            name = names[(n + k) % len(names)]
            started = time.perf_counter_ns()
            await serve(setups[name], body)
            times[name].append((time.perf_counter_ns() - started) / 1000)
    p50 = {name: sorted(samples)[len(samples) // 2] for name, samples in times.items()}
    print(f"\nthe outcome account, the SEP example, {requests} requests a setup round-robin; µs per request (p50):")
    for name in names:
        print(f"  {name:48} {p50[name]:9.1f}   adds {p50[name] - p50['app alone']:7.1f}")
    before, after, metered = (p50[name] - p50["app alone"] for name in names[1:])
    print(f"  the outcome account adds {after - before:.1f} µs: {(after - before) / before * 100:.1f}% of what the middleware "
          "with a sink adds without it (the aim: at most 5%)")
    print(f"  the metrics add {metered - after:.1f} µs: {(metered - after) / after * 100:.1f}% of what the middleware "
          "with a sink adds without them")


asyncio.run(main())
asyncio.run(outcome_cost(ROUNDS * 200))
