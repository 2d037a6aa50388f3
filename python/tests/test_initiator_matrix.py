"""The conformance matrix of ext-apps#738 (initiator provenance), in Python: each cell,
the tests that show it, against the installed package. Each asserts what a correct
implementation gives, so that a broken one fails it.

1. The Host replaces any inbound ``initiator`` with "app" on View calls (UI-1, UI-3,
   UI-5), whatever the View put there ("model", "app", "user", "host", an unknown
   string, a number, a boolean, an object, an array, null, absent, the ui entry missing
   or not an object, no ``_meta``, no params), under the standard and a vendor key (KEY-3):
   ``ViewCalls.test_1_stamp_initiator_replaces_every_view_claim_with_app``
   (Python has no ext-apps bridge: js-tests/initiator-matrix.test.mjs drives one.)
2. Never "app" for model calls (UI-2):
   ``ModelCalls.test_2_clear_initiator_leaves_no_initiator_whatever_came``,
   ``ModelCalls.test_2_attach_invocation_adds_no_initiator_and_the_model_path_never_carries_app``
3. A gateway preserves the value without raising its trust (UI-6, UI-8):
   ``Gateways.test_3_the_filter_forwards_every_initiator_byte_for_byte_recorded_host_attested_only``,
   ``Gateways.test_3_the_asgi_middleware_passes_every_initiator_on_byte_for_byte``
   (and conformance/filter.json ``filter-initiators-that-disagree-are-not-recorded``, in every
   runtime: a View's claim under a key its Host does not stamp is never recorded as the Host's)
4. A missing value is recorded as unknown (UI-4): ``hostAttested`` without ``initiator``:
   ``Gateways.test_4_audit_record_records_an_absent_initiator_as_unknown``,
   ``Gateways.test_4_the_filter_records_an_absent_initiator_as_unknown``,
   and the absent case of ``test_3_the_asgi_middleware_...``
5. The marker alone changes no decision (AI-10, UI-6): the same forward or refusal,
   replies, changes and diagnostics with and without it, apart from the initiator itself:
   ``Decisions.test_5_the_filter_decides_the_same_with_any_marker_or_none``,
   ``Decisions.test_5_the_asgi_middleware_decides_the_same_with_any_marker_or_none``,
   ``Decisions.test_5_a_duplicated_initiator_is_refused_as_any_duplicated_member_whatever_its_values``
   (a member duplicated where a rule reads is refused, WIRE-3: the ambiguity decides, not the value)

The matrix's Node and Rust halves: js-tests/initiator-matrix.test.mjs, tests/initiator_matrix/.
"""

from __future__ import annotations

import copy
import json
import unittest
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, cast

from starlette.authentication import SimpleUser

from asgi_apps import JSON, Recorder, exchange
from mcp_provenance import (
    AI_INVOCATION_KEY as KEY,
    UI_KEY as UI,
    Filter,
    attach_invocation,
    audit_record,
    clear_initiator,
    stamp_initiator,
)
from mcp_provenance.asgi import ProvenanceMiddleware
from mcp_provenance.types import AuditContext, FilterContext, FilterOptions, KeyOptions, MessageAccount, Policy

VENDOR = "com.example/ui"
VIEW_REQUESTS = ["tools/call", "resources/read", "resources/list", "resources/templates/list", "prompts/list"]
SECRET = "my salary is 123456"
#: Every kind of value a View may put in ``initiator``.
VALUES: List[Any] = ["model", "app", "user", "host", "admin", "APP", "", 42, 0, True, None, {"value": "app", "trusted": True}, ["app"]]
#: Every ui entry that is not an object.
ENTRIES: List[Any] = ["app", None, ["model"], 7, False]
ABSENT = object()


def claims(key: str) -> List[Tuple[str, Any]]:
    """What a View may send under ``key``: label, its ``_meta`` (``ABSENT``: none)."""
    return [
        *((f"initiator {value!r}", {key: {"initiator": value, "theme": "dark"}, "other": 1}) for value in VALUES),
        ("initiator absent", {key: {"theme": "dark"}, "other": 1}),
        ("an empty ui entry", {key: {}, "other": 1}),
        *((f"the ui entry {entry!r}", {key: entry, "other": 1}) for entry in ENTRIES),
        ("no ui entry", {"other": 1}),
        ("no _meta", ABSENT),
    ]


def request(method: str, meta: Any) -> Dict[str, Any]:
    params: Dict[str, Any] = {"name": "q", "arguments": {"a": 1}}
    if meta is not ABSENT:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def stamped(meta: Any, key: str) -> Dict[str, Any]:
    """The ``_meta`` a stamp must give: only ``initiator`` set, over an object entry's members."""
    meta = {} if meta is ABSENT else meta
    entry = meta.get(key)
    return {**meta, key: {**(entry if isinstance(entry, dict) else {}), "initiator": "app"}}


def options(key: str) -> Optional[KeyOptions]:
    return None if key == UI else {"uiKey": key}


class ViewCalls(unittest.TestCase):
    def test_1_stamp_initiator_replaces_every_view_claim_with_app(self) -> None:
        for key in (UI, VENDOR):
            for method in VIEW_REQUESTS:
                for label, meta in claims(key):
                    given = request(method, meta)
                    before = copy.deepcopy(given)
                    out = stamp_initiator(given, "app", options(key))
                    self.assertEqual(out, {**given, "params": {**given["params"], "_meta": stamped(meta, key)}}, f"{key} {method}: {label}")
                    self.assertEqual(given, before, "the input is left as it was")
            self.assertEqual(stamp_initiator({"method": "prompts/list"}, "app", options(key)), {"method": "prompts/list", "params": {"_meta": {key: {"initiator": "app"}}}})


def carries_app(message: Any) -> bool:
    return '"initiator": "app"' in json.dumps(message)


class ModelCalls(unittest.TestCase):
    def test_2_clear_initiator_leaves_no_initiator_whatever_came(self) -> None:
        for key in (UI, VENDOR):
            for label, meta in claims(key):
                out = clear_initiator(request("tools/call", meta), options(key))
                entry = None if meta is ABSENT else meta.get(key)
                # An object entry loses `initiator` alone; anything else has none to lose and stays.
                expected = meta if not isinstance(entry, dict) else {**meta, key: {k: v for k, v in entry.items() if k != "initiator"}}
                self.assertEqual(out["params"].get("_meta", ABSENT), expected, f"{key}: {label}")
                self.assertFalse(carries_app(out), label)
        # A Host that attests model calls says so: "model" over whatever came.
        self.assertEqual(stamp_initiator(request("tools/call", {UI: {"initiator": "app"}}), "model")["params"]["_meta"][UI], {"initiator": "model"})

    def test_2_attach_invocation_adds_no_initiator_and_the_model_path_never_carries_app(self) -> None:
        envelopes = [{"turnId": "t-1"}, {"invocationReason": {"text": "why"}, "model": {"name": "m"}, "userIntent": {"text": "hi", "redacted": False}, "turnId": "t-2"}]
        for key in (UI, VENDOR):
            for envelope in envelopes:
                for label, meta in claims(key):
                    attached = attach_invocation(request("tools/call", meta), envelope, options(key))  # type: ignore[arg-type]
                    # attach_invocation writes the envelope and nothing else: the ui entry is as it came, or absent.
                    had = meta is not ABSENT and key in meta
                    self.assertEqual(key in attached["params"]["_meta"], had, label)
                    if had:
                        self.assertEqual(attached["params"]["_meta"][key], meta[key], label)
                    self.assertFalse(carries_app(clear_initiator(attached, options(key))), f"{key}: {label}")


#: Initiator values as a body spells them: label, JSON text.
SPELLINGS = [
    ('"app"', '"app"'), ('"model"', '"model"'), ('"user"', '"user"'), ('"host"', '"host"'), ('"admin"', '"admin"'),
    ('an escaped "app"', '"\\u0061pp"'), ("a line break", '"app\\r\\nforged"'), ("a bidi override", '"a\\u202eb"'),
    ("a long string", '"' + "x" * 100 + '"'), ("42", "42"), ("1e400", "1e400"), ("-0.0", "-0.0"), ("true", "true"),
    ("null", "null"), ("an object", '{ "value" : "app", "trusted": true }'), ("an array", '["app"]'),
]
KNOWN = ("app", "model", "user", "host")
WITNESSED = {"receivedAt", "principal", "sessionId"}


def call_with(meta: str) -> bytes:
    return ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{"n":1e400},"_meta":{' + meta + '"progressToken":1}}}').encode()


class Gateways(unittest.IsolatedAsyncioTestCase):
    def check_record(self, record: Mapping[str, Any], text: Optional[str], label: str) -> None:
        """What the record of a call carrying ``text`` (JSON) as its initiator must say:
        host-attested, a string as sent (neutralized, at most 64 bytes), flagged when unknown
        (UI-7); anything else not recorded, an error; absent, unknown and unflagged."""
        value = ABSENT if text is None else json.loads(text)
        self.assertEqual(sorted(record), ["clientAsserted", "diagnostics", "hostAttested", "method", "requestId", "tool", "valid", "witnessed"], label)
        self.assertEqual(list(record["hostAttested"]), ["initiator"] if isinstance(value, str) else [], label)
        ui = [(d["rule"], d["code"], d["severity"]) for d in record["diagnostics"] if d["rule"].startswith("UI-")]
        if value is ABSENT:
            self.assertEqual(ui, [], label)
        elif not isinstance(value, str):
            self.assertEqual(ui, [("UI-7", "invalid-type", "error")], label)
        elif value in KNOWN:
            self.assertEqual((record["hostAttested"]["initiator"], ui), (value, []), label)
        else:
            self.assertEqual(ui, [("UI-7", "unknown-initiator", "warning")], label)
            recorded = record["hostAttested"]["initiator"]
            self.assertFalse(set(recorded) & {"\r", "\n", "\u202e"}, label)
            self.assertLessEqual(len(recorded.encode()), 64, label)
        # Never a witnessed fact, never the client's.
        self.assertEqual(record["clientAsserted"], {}, label)
        self.assertLessEqual(set(record["witnessed"]), WITNESSED, label)

    def test_3_the_filter_forwards_every_initiator_byte_for_byte_recorded_host_attested_only(self) -> None:
        policy = {"userIntent": "drop", "unknownFields": "keep", "maxEnvelopeBytes": 64}
        for filter_options, key in (({}, UI), ({"uiKeys": [VENDOR]}, VENDOR), ({"policy": policy}, UI)):
            gateway = Filter(filter_options)  # type: ignore[arg-type]
            for label, text in SPELLINGS:
                body = call_with(f'"{key}" : {{"initiator" :  {text} , "theme":"dark"}},')
                context: FilterContext = {"receivedAt": "2026-01-01T00:00:00Z", "principal": "alice", "sessionId": "s-1"}
                out = gateway(body, context)
                self.assertEqual(out.get("forward"), body, f"{key}: {label}")
                [account] = out["messages"]
                self.check_record(account["record"], text, f"{key}: {label}")
                self.assertEqual(account["record"]["witnessed"], context)
                self.assertEqual(account["changes"], [])

    async def test_3_the_asgi_middleware_passes_every_initiator_on_byte_for_byte(self) -> None:
        app, kept = Recorder(), cast(List[MessageAccount], [])
        # The messages' accounts: an exchange's outcome says nothing of initiators.
        guarded = ProvenanceMiddleware(app, ui_keys=[VENDOR],
                                       audit=lambda account, line: None if account["kind"] == "outcome" else kept.append(account))
        for key in (UI, VENDOR):
            for label, text in [*SPELLINGS, ("absent", None)]:
                body = call_with("" if text is None else f'"{key}":{{"initiator" : {text}}},')
                start = len(kept)
                answer = await exchange(guarded, body, scope={"user": SimpleUser("alice")})
                self.assertEqual(answer.status, 200)
                self.assertEqual(app.reached[-1].body, body, f"{key}: {label}")
                [account] = kept[start:]
                self.check_record(account["record"], text, f"{key}: {label}")
                self.assertEqual(account["record"]["witnessed"]["principal"], "alice")

    def test_4_audit_record_records_an_absent_initiator_as_unknown(self) -> None:
        for key in (UI, VENDOR):
            absent = [(label, meta) for label, meta in claims(key) if label in ("initiator absent", "an empty ui entry", "no ui entry", "no _meta")]
            for label, meta in [*absent, ("no params", None)]:
                message = {"method": "tools/call"} if meta is None else request("tools/call", meta)
                context: AuditContext = {"receivedAt": "2026-01-01T00:00:00Z", "policy": {"uiKey": key}}
                record = audit_record(message, context)
                self.assertEqual((record["hostAttested"], record["diagnostics"], record["valid"]), ({}, [], True), f"{key}: {label}")
                self.assertNotIn("model", json.dumps(record), "absence is never read as model")
        # A value that is not a string is not recorded either: unknown, with its error.
        record = audit_record(request("tools/call", {UI: {"initiator": 42}}))
        self.assertEqual((record["hostAttested"], [d["rule"] for d in record["diagnostics"]]), ({}, ["UI-7"]))

    def test_4_the_filter_records_an_absent_initiator_as_unknown(self) -> None:
        gateway = Filter({"uiKeys": [VENDOR]})
        for meta in ("", f'"{UI}":{{}},', f'"{UI}":{{"theme":"dark"}},', f'"{VENDOR}":{{}},'):
            [account] = gateway(call_with(meta))["messages"]
            self.check_record(account["record"], None, meta)


ENVELOPE = f'"{KEY}":{{"turnId":"t-1","userIntent":{{"text":"{SECRET}"}}}}'


def _call(request_id: int, m: str, rest: str = "") -> str:
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"name":"q","_meta":{{{m}{ENVELOPE}}}{rest}}}}}'


def _deep(request_id: int, m: str) -> str:
    return (f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"_meta":{{{m}"progressToken":1}},'
            f'"arguments":{"[" * 200}{"]" * 200}}}}}')


#: Bodies whose every `_meta` begins with the marker `m`: label, body, what the filter does with it bare.
BODIES: List[Tuple[str, Callable[[str], str], List[Any]]] = [
    ("a call with an envelope (its intent redacted)", lambda m: _call(1, m, ',"arguments":{"n":1e400}'), ["forward", "-"]),
    ("a call whose envelope breaks its schema (repaired)",
     lambda m: f'{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"_meta":{{{m}"{KEY}":{{"turnId":7,"model":{{}},"extra":1}}}}}}}}', ["forward", "-"]),
    ("a call with legacy arguments (lifted)",
     lambda m: f'{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"arguments":{{"user_query":"q","invocation_reason":"r"}},"_meta":{{{m}"progressToken":1}}}}}}', ["forward", "-"]),
    ("a bare intent under a redacting policy (refused)",
     lambda m: f'{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"_meta":{{{m}"userIntent":{{"text":"{SECRET}"}}}}}}}}', [200, "bare-user-intent"]),
    ("a duplicated turnId (refused)",
     lambda m: f'{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"_meta":{{{m}"{KEY}":{{"turnId":"a","turnId":"b"}}}}}}}}', [200, "duplicate-member"]),
    ("a call nested too deep (refused)", lambda m: _deep(6, m), [200, "too-deep"]),
    ("a batch with a refused message", lambda m: f"[{_call(7, m)}, {_deep(8, m)}]", ["forward", "-", "too-deep"]),
    ("a batch past max_batch (refused whole)", lambda m: "[" + ",".join(_call(i, m) for i in (9, 10, 11, 12)) + "]", [413]),
    ("a notification", lambda m: f'{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"_meta":{{{m}"progressToken":1}},"progress":1}}}}', ["forward", "-"]),
    ("a response to the server", lambda m: f'{{"jsonrpc":"2.0","id":"s-1","result":{{"_meta":{{{m}"x":1}}}}}}', ["forward", "-"]),
    ("an envelope past maxEnvelopeBytes",
     lambda m: f'{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"_meta":{{{m}"{KEY}":{{"turnId":"t","model":{{"name":"{"m" * 200}"}},"invocationReason":{{"text":"{"r" * 900}"}}}}}}}}}}', ["forward", "-"]),
    ("not JSON (refused whole)", lambda m: f'{{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{{"_meta":{{{m}"x":1}}}}', [400]),
]
POLICY: Policy = {"userIntent": "redact", "maxEnvelopeBytes": 512}
#: The markers a body may carry, as `_meta` members (none first).
MARKERS = ["", *(f'"{UI}":{{"initiator":{json.dumps(v, separators=(",", ":"))}}},' for v in ("app", "model", 42, None, {"value": "app"})),
           f'"{UI}":"app",', f'"{UI}":{{}},', f'"{VENDOR}":{{"initiator":"app"}},']


def apart(account: Mapping[str, Any]) -> Dict[str, Any]:
    """An account less what the initiator itself is: its host-attested record, its UI-*
    diagnostics and the validity they decide; a middleware's clock, as recorded or not."""
    out = {name: value for name, value in account.items() if name != "valid"}
    if "diagnostics" in out:
        out["diagnostics"] = [d for d in out["diagnostics"] if not d["rule"].startswith("UI-")]
    if "record" in out:
        record = {name: value for name, value in out["record"].items() if name not in ("hostAttested", "valid")}
        record["diagnostics"] = [d for d in record["diagnostics"] if not d["rule"].startswith("UI-")]
        record["witnessed"] = {**record["witnessed"], "receivedAt": "receivedAt" in record["witnessed"]}
        out["record"] = record
    return out


class Decisions(unittest.IsolatedAsyncioTestCase):
    def assert_same(self, marked: Dict[str, Any], bare: Dict[str, Any], marker: str, label: str) -> None:
        """``marked`` (for the body whose every ``_meta`` begins with ``marker``) is ``bare``'s:
        what went on holds the marker once per ``_meta``, as it came, and is otherwise the same."""
        self.assertEqual(len(marked["sent"]), len(bare["sent"]), label)
        for text, plain in zip(marked["sent"], bare["sent"]):
            self.assertEqual(text.count(marker.encode()), plain.count(b'"_meta":{'), f"{label}: the marker goes on as it came")
        self.assertEqual({**marked, "sent": [text.replace(marker.encode(), b"") for text in marked["sent"]]}, bare, label)

    def test_5_the_filter_decides_the_same_with_any_marker_or_none(self) -> None:
        filter_options: FilterOptions = {"policy": POLICY, "liftLegacy": True, "maxBatch": 3, "uiKeys": [VENDOR]}
        gateway = Filter(filter_options)

        def decide(body: str, headers: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
            context: FilterContext = {"principal": "alice", "sessionId": "s-1", "headers": headers or {"content-type": "application/json"}}
            out: Dict[str, Any] = dict(gateway(body.encode(), context))
            out["sent"] = [out.pop("forward")] if "forward" in out else []
            out["messages"] = [apart(account) for account in out["messages"]]
            del out["lines"]  # the messages as forwarded: `sent` has them
            return out

        for label, body, expected in BODIES:
            bare = decide(body(""))
            self.assertEqual([bare.get("status", "forward"), *(a.get("refused", "-") for a in bare["messages"])], expected, label)
            for marker in MARKERS[1:]:
                self.assert_same(decide(body(marker)), bare, marker, f"{label} with {marker}")
        typed = decide(BODIES[8][1](""), {"content-type": "text/plain"})
        self.assertEqual(typed["status"], 415)
        for marker in MARKERS[1:]:
            self.assert_same(decide(BODIES[8][1](marker), {"content-type": "text/plain"}), typed, marker, marker)

    def test_5_a_duplicated_initiator_is_refused_as_any_duplicated_member_whatever_its_values(self) -> None:
        gateway = Filter()
        duplicated = gateway(call_with(f'"{KEY}":{{"turnId":"a","turnId":"a"}},'))
        self.assertIn(b"duplicate-member", duplicated["reject"])  # type: ignore[typeddict-item]
        for first, second in (("app", "app"), ("model", "app"), ("app", "model"), (1, None)):
            out = gateway(call_with(f'"{UI}":{{"initiator":{json.dumps(first)},"initiator":{json.dumps(second)}}},'))
            self.assertEqual(out.get("reject"), duplicated["reject"], f"{first}, {second}")  # type: ignore[typeddict-item]

    async def test_5_the_asgi_middleware_decides_the_same_with_any_marker_or_none(self) -> None:
        app, kept = Recorder(), cast(List[MessageAccount], [])
        guarded = ProvenanceMiddleware(app, policy=POLICY, lift_legacy=True, max_batch=3, ui_keys=[VENDOR], max_body_bytes=4096,
                                       audit=lambda account, line: None if account["kind"] == "outcome" else kept.append(account))
        oversize: Tuple[str, Callable[[str], str], List[Any]] = ("a body past max_body_bytes (413)", lambda m: _call(15, m, f',"arguments":{{"s":"{"x" * 5000}"}}'), [])

        async def decide(body: str, headers: Any = tuple(JSON)) -> Dict[str, Any]:
            start, reached = len(kept), len(app.reached)
            answer = await exchange(guarded, body.encode(), headers=headers, scope={"user": SimpleUser("alice")})
            return {"status": answer.status, "headers": answer.headers, "body": answer.body,
                    "sent": [r.body for r in app.reached[reached:]], "accounts": [apart(a) for a in kept[start:]]}

        for label, body, _ in [*BODIES, oversize]:
            bare = await decide(body(""))
            for marker in MARKERS[1:]:
                self.assert_same(await decide(body(marker)), bare, marker, f"{label} with {marker}")
        plain = [(b"content-type", b"text/plain")]
        typed = await decide(BODIES[8][1](""), plain)
        self.assertEqual(typed["status"], 415)
        for marker in MARKERS[1:]:
            self.assert_same(await decide(BODIES[8][1](marker), plain), typed, marker, marker)


if __name__ == "__main__":
    unittest.main()
