"""Every conformance vector through the Python package, its whole output
compared with the vector's ``expect``: the fourth runtime beside native,
Node and Chromium (conformance/README.md says what a vector holds)."""

from __future__ import annotations

import json
import unittest
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import mcp_provenance as mp
from mcp_provenance._native import Exchange, Gateway
from test_metrics import metered

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"
# Lone UTF-16 surrogates (MSG-3): the native runner leaves this file to the
# JS runners, and so does this one: the Python package refuses a `str`
# holding one as unreadable, rather than replacing it (see docs/rules.md).
UTF16_ONLY = "utf16.json"
# As many as the native runner requires.
MIN_VECTORS = 120


def load() -> List[Dict[str, Any]]:
    vectors: List[Dict[str, Any]] = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        if path.name != UTF16_ONLY:
            vectors.extend(json.loads(path.read_text(encoding="utf-8")))
    return vectors


def filtered(vector: Dict[str, Any]) -> Dict[str, Any]:
    """A filter's outcome, the body given as the bytes a gateway holds, in the vectors' shape."""
    out = mp.Filter(vector.get("options"))(vector["input"].encode(), vector.get("context"))
    if "reject" in out:
        return {"reject": out["reject"].decode(), "status": out["status"], "messages": out["messages"],
                "lines": out["lines"]}
    return {"forward": out["forward"].decode(), "replies": out["replies"], "messages": out["messages"],
            "lines": out["lines"]}


def echoed(vector: Dict[str, Any]) -> Dict[str, Any]:
    """An answer echoed after the filter forwarded the vector's body, in the vectors' shape."""
    echo = mp.Filter(vector.get("options"))
    answer = echo.echo(vector["answer"].encode(), echo(vector["input"].encode()))
    return {"answer": None if answer is None else answer.decode()}


Pairs = List[Tuple[bytes, bytes]]


def exchanged(vector: Dict[str, Any]) -> Any:
    """Each exchange of the vector through one gateway, as the ASGI middleware drives it, each
    way it ends an answer (through a gateway of its own): they agree."""
    def through(finish: bool) -> List[Dict[str, Any]]:
        gateway = Gateway(vector.get("options"))
        return [exchange(gateway, given, finish) for given in vector["input"]]

    pieces, finished = through(False), through(True)
    return pieces if pieces == finished else {"pieces then end": pieces, "finish": finished}


def exchange(gateway: Gateway, given: Dict[str, Any], finish: bool) -> Dict[str, Any]:
    """One exchange: what the app was handed, and what the client got (the answer's last piece
    given with its end, when ``finish``); with its outcome account, parsed from its line, when
    the vector gives the outcome's ``ms``, ``pid`` and ``host`` (a middleware with an audit sink
    keeps it)."""
    ex = gateway.begin(given.get("method", "POST"), given.get("path", "/mcp"), pairs(given.get("headers")))
    worker = given.get("outcome")
    if worker is None:
        return driven(ex, given, finish)
    ex.keep_outcome()
    out = driven(ex, given, finish)
    ended = ex.outcome(worker["ms"], worker["pid"], worker["host"])
    assert ended is not None, "an outcome kept"
    account, line = ended
    assert json.loads(line) == account, line
    return {**out, "outcome": json.loads(line)}


def pairs(value: Any) -> Pairs:
    """Header pairs as a vector gives them, as ASGI's."""
    return [(name.encode("latin-1"), text.encode("latin-1")) for name, text in value or []]


def driven(ex: Exchange, given: Dict[str, Any], finish: bool) -> Dict[str, Any]:
    """What the app was handed, and what the client got, through ``ex``."""
    def own(answer: Tuple[int, Pairs, bytes], ex: Exchange) -> Dict[str, Any]:
        status, headers, body = answer
        return {"status": status, "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in headers],
                "body": body.decode(), "refused": ex.refused}

    out: Dict[str, Any] = {}
    if ex.start == "read":
        if ex.declared_too_large:
            return own(ex.too_large(), ex)
        outcome = ex.admit(given["body"].encode())
        rejected = ex.rejected()
        if rejected is not None:
            return own(rejected, ex)
        out["forwarded"] = outcome["forward"].decode()  # type: ignore[typeddict-item]
        if "auditFails" in given:
            return own(ex.audit_failed(given["auditFails"]), ex)
    else:
        out["forwarded"] = ex.start == "watch"
    answer = given["answer"]
    status: int = answer.get("status", 200)
    headers = pairs(answer.get("headers"))
    body = b""
    if ex.start == "pass":
        body = "".join(answer.get("pieces", [])).encode()
    else:
        steps = [ex.head(status, headers)]
        given_pieces = answer.get("pieces", [])
        last = len(given_pieces) - 1 if finish and given_pieces else -1
        for at, piece in enumerate(given_pieces):
            if not steps[-1][2]:
                steps.append(ex.finish(piece.encode()) if at == last else ex.piece(piece.encode()))
        if not steps[-1][2] and last < 0:
            steps.append(ex.end())
        for head, pieces, _ in steps:
            if head is not None:
                status, headers, _ = head
            body += b"".join(pieces)
    out.update(status=status, headers=[[n.decode("latin-1"), v.decode("latin-1")] for n, v in headers],
               body=body.decode(), refused=ex.refused, session=ex.session)
    return out


OPS: Dict[str, Callable[[Dict[str, Any]], Any]] = {
    "exchange": exchanged,
    "validate": lambda v: mp.validate(v["input"], v.get("options")),
    "sanitize": lambda v: mp.sanitize(v["input"], v.get("options")),
    "attachInvocation": lambda v: mp.attach_invocation(v["input"], v["invocation"], v.get("options")),
    "stampInitiator": lambda v: mp.stamp_initiator(v["input"], v.get("initiator", "app"), v.get("options")),
    "clearInitiator": lambda v: mp.clear_initiator(v["input"], v.get("options")),
    "echoTurnId": lambda v: mp.echo_turn_id(v["request"], v["input"], v.get("options")),
    "auditRecord": lambda v: mp.audit_record(v["input"], v.get("options")),
    "liftLegacyArguments": lambda v: mp.lift_legacy_arguments(v["input"], v.get("options")),
    "isValidMetaKey": lambda v: mp.is_valid_meta_key(v["input"]),
    "isReservedMetaKey": lambda v: mp.is_reserved_meta_key(v["input"]),
    "filter": filtered,
    "filterEcho": echoed,
    # Through the ASGI middleware, its metrics into a Prometheus registry of their own.
    "metrics": metered,
}


def run(vector: Dict[str, Any]) -> Any:
    """The output of the vector's call, an exception as the vectors write one."""
    try:
        return OPS[vector["op"]](vector)
    except mp.ProvenanceError as error:
        name = "TypeError" if isinstance(error, TypeError) else "RangeError"
        return {"error": {"code": error.code, "name": name}}


def exact(value: Any) -> str:
    """JSON text that tells `1` from `1.0` and `True` (Python's `==` does not), members sorted."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class Conformance(unittest.TestCase):
    def test_every_vector_gives_exactly_its_expected_output(self) -> None:
        vectors = load()
        self.assertGreaterEqual(len(vectors), MIN_VECTORS)
        failures = []
        for vector in vectors:
            got = run(vector)
            if exact(got) != exact(vector["expect"]):
                failures.append(f"{vector['id']}: {vector['description']}\n  expected: {exact(vector['expect'])}\n  got:      {exact(got)}")
        self.assertEqual(failures, [], f"{len(failures)} of {len(vectors)} vectors failed")

    def test_no_call_changes_its_input(self) -> None:
        for vector in load():
            before = exact(vector)
            run(vector)
            self.assertEqual(exact(vector), before, vector["id"])


if __name__ == "__main__":
    unittest.main()
