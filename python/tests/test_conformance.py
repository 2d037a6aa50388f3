"""Every conformance vector through the Python package, its whole output
compared with the vector's ``expect``: the fourth runtime beside native,
Node and Chromium (conformance/README.md says what a vector holds)."""

from __future__ import annotations

import json
import unittest
from pathlib import Path
from typing import Any, Callable, Dict, List

import mcp_provenance as mp

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"
# Lone UTF-16 surrogates (MSG-3): the native runner leaves this file to the
# JS runners, and so does this one: the Python package refuses a `str`
# holding one as unreadable, rather than replacing it (see docs/rules.md).
UTF16_ONLY = "utf16.json"
# As many as the native runner requires.
MIN_VECTORS = 120


#: The ops of the core the package does not bind yet: the middleware's exchange
#: (src/wire/exchange.rs), whose vectors run natively until the ASGI middleware is moved onto it.
UNBOUND_OPS = frozenset({"exchange"})


def load() -> List[Dict[str, Any]]:
    vectors: List[Dict[str, Any]] = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        if path.name != UTF16_ONLY:
            vectors.extend(v for v in json.loads(path.read_text(encoding="utf-8")) if v["op"] not in UNBOUND_OPS)
    return vectors


def filtered(vector: Dict[str, Any]) -> Dict[str, Any]:
    """A filter's outcome, the body given as the bytes a gateway holds, in the vectors' shape."""
    out = mp.Filter(vector.get("options"))(vector["input"].encode(), vector.get("context"))
    if "reject" in out:
        return {"reject": out["reject"].decode(), "status": out["status"], "messages": out["messages"]}
    return {"forward": out["forward"].decode(), "replies": out["replies"], "messages": out["messages"]}


def echoed(vector: Dict[str, Any]) -> Dict[str, Any]:
    """An answer echoed after the filter forwarded the vector's body, in the vectors' shape."""
    echo = mp.Filter(vector.get("options"))
    answer = echo.echo(vector["answer"].encode(), echo(vector["input"].encode()))
    return {"answer": None if answer is None else answer.decode()}


OPS: Dict[str, Callable[[Dict[str, Any]], Any]] = {
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
