"""The Python side of the contract: dicts in, new dicts out, the input never
changed and what is not changed shared; what JSON cannot hold is unreadable;
errors are exceptions with codes; the filter hands bodies back as they came."""

from __future__ import annotations

import copy
import json
import math
import unittest
from typing import Any, Dict

import mcp_provenance as mp
from mcp_provenance import AI_INVOCATION_KEY, UI_KEY


def call(**meta: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "q", "arguments": {"rows": list(range(1000)), "user_query": "Show 10 employees"},
                       "_meta": dict(meta)}}


class Objects(unittest.TestCase):
    def test_no_function_changes_its_input_and_each_shares_what_it_leaves(self) -> None:
        request = call(**{UI_KEY: {"initiator": "model", "theme": "dark"}, AI_INVOCATION_KEY: {"turnId": "t\n1"}})
        before = copy.deepcopy(request)
        outputs = [
            mp.stamp_initiator(request),
            mp.clear_initiator(request),
            mp.attach_invocation(request, {"turnId": "t-2"}),
            mp.sanitize(request)["message"],
            mp.lift_legacy_arguments(request),
        ]
        self.assertEqual(request, before)
        for out in outputs:
            self.assertIsNot(out, request)
            self.assertIs(out["params"]["arguments"], request["params"]["arguments"])
        self.assertEqual(outputs[0]["params"]["_meta"][UI_KEY], {"initiator": "app", "theme": "dark"})
        self.assertEqual(outputs[3]["params"]["_meta"][AI_INVOCATION_KEY], {"turnId": "t 1"})
        # `remove` copies `arguments` (shallowly) to take the legacy keys out.
        removed = mp.lift_legacy_arguments(request, {"remove": True})
        self.assertEqual(removed["params"]["arguments"].keys(), {"rows"})
        self.assertIs(removed["params"]["arguments"]["rows"], request["params"]["arguments"]["rows"])

    def test_an_attached_invocation_is_a_copy_in_its_own_order(self) -> None:
        invocation: Dict[str, Any] = {"turnId": "t-1", "model": {"name": "m"}}
        sent = mp.attach_invocation(call(), invocation)  # type: ignore[arg-type]
        invocation["model"]["name"] = "changed later"
        envelope = sent["params"]["_meta"][AI_INVOCATION_KEY]
        self.assertEqual(envelope, {"turnId": "t-1", "model": {"name": "m"}})
        self.assertEqual(list(envelope), ["turnId", "model"])

    def test_results_keep_the_order_of_their_fields(self) -> None:
        record = mp.audit_record(call())
        self.assertEqual(list(record), ["method", "tool", "requestId", "clientAsserted", "hostAttested",
                                        "witnessed", "diagnostics", "valid"])
        self.assertEqual(list(mp.validate(call())), ["valid", "diagnostics"])

    def test_echo_sends_back_the_turn_id_alone(self) -> None:
        request = call(**{AI_INVOCATION_KEY: {"turnId": "t-1", "model": {"name": "m"}}})
        response = {"jsonrpc": "2.0", "id": 7, "result": {"content": [], "_meta": {AI_INVOCATION_KEY: {"model": {"name": "m"}}}}}
        reply = mp.echo_turn_id(request, response)
        self.assertEqual(reply["result"]["_meta"], {AI_INVOCATION_KEY: {"turnId": "t-1"}})
        self.assertIs(reply["result"]["content"], response["result"]["content"])
        self.assertEqual(response["result"]["_meta"], {AI_INVOCATION_KEY: {"model": {"name": "m"}}})


class Unreadable(unittest.TestCase):
    CASES = {
        "a set": ({1, 2}, "a `set`"),
        "nan": (math.nan, "a number JSON cannot hold"),
        "bytes": (b"t-1", "a `bytes`"),
        "a lone surrogate": ("t\ud800", "a string holding a lone surrogate"),
        "a name that is no string": ({1: "x"}, "a member name that is not a string"),
    }

    def test_validate_reports_where_json_cannot_be_read_and_the_rest_raise(self) -> None:
        for case, (value, what) in self.CASES.items():
            request = call(**{AI_INVOCATION_KEY: {"turnId": value}})
            pointer = f"/params/_meta/{AI_INVOCATION_KEY.replace('/', '~1')}/turnId"
            self.assertEqual(mp.validate(request), {"valid": False, "diagnostics": [{
                "code": "unreadable", "severity": "error", "rule": "MSG-1", "path": pointer,
                "message": f"`{pointer}` cannot be read as JSON: {what}"}]}, case)
            with self.assertRaises(mp.ProvenanceTypeError) as raised:
                mp.audit_record(request)
            self.assertEqual(raised.exception.code, "unreadable", case)

    def test_a_cycle_is_nesting_too_deep(self) -> None:
        loop: Dict[str, Any] = {}
        loop["again"] = loop
        report = mp.validate(call(**{AI_INVOCATION_KEY: {"turnId": "t", "x": loop}}))
        self.assertIn("nesting deeper than 128 levels (or a cycle)", report["diagnostics"][0]["message"])

    def test_an_integer_past_64_bits_reads_as_a_json_number(self) -> None:
        request = {"jsonrpc": "2.0", "id": 2**70, "method": "ping"}
        self.assertEqual(mp.audit_record(request)["requestId"], float(2**70))

    def test_what_arguments_hold_is_never_read(self) -> None:
        request = call()
        request["params"]["arguments"]["blob"] = {1, 2, 3}  # no JSON, and no rule reads it
        self.assertTrue(mp.validate(request)["valid"])
        self.assertEqual(mp.stamp_initiator(request)["params"]["_meta"], {UI_KEY: {"initiator": "app"}})


class Errors(unittest.TestCase):
    def test_errors_are_type_and_value_errors_with_codes(self) -> None:
        with self.assertRaises(TypeError) as not_request:
            mp.stamp_initiator([1, 2])  # type: ignore[arg-type]
        self.assertEqual(getattr(not_request.exception, "code", None), "not-a-request")
        with self.assertRaises(ValueError) as bad_initiator:
            mp.stamp_initiator(call(), "robot")  # type: ignore[arg-type]
        self.assertEqual(getattr(bad_initiator.exception, "code", None), "invalid-initiator")
        with self.assertRaises(mp.ProvenanceValueError) as reserved:
            mp.clear_initiator(call(), {"uiKey": "io.modelcontextprotocol/mine"})
        self.assertEqual(reserved.exception.code, "reserved-key")
        self.assertIsInstance(reserved.exception, mp.ProvenanceError)

    def test_validate_never_raises(self) -> None:
        self.assertEqual(mp.validate(None)["diagnostics"][0]["code"], "not-a-message")
        self.assertEqual(mp.validate(call(), {"uiKey": 3})["diagnostics"][0]["rule"], "KEY-3")  # type: ignore[typeddict-item]

    def test_key_predicates_take_anything(self) -> None:
        self.assertTrue(mp.is_valid_meta_key("com.example/turn"))
        self.assertFalse(mp.is_valid_meta_key(3))
        self.assertTrue(mp.is_reserved_meta_key("io.modelcontextprotocol/x"))
        self.assertFalse(mp.is_reserved_meta_key(None))


class Filter(unittest.TestCase):
    BODY = b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"q","arguments":{"n":1e400}}}'

    def test_a_clean_body_goes_on_as_the_very_object_given(self) -> None:
        out = mp.Filter()(self.BODY, {"sessionId": "s-1"})
        assert "forward" in out
        self.assertIs(out["forward"], self.BODY)
        self.assertEqual(out["ids"], ["12345678901234567890"])
        self.assertEqual(out["messages"][0]["record"]["witnessed"], {"sessionId": "s-1"})

    def test_a_changed_body_comes_back_of_the_type_given_changed_only_where_a_rule_did(self) -> None:
        body = self.BODY.replace(b'"name":"q"', b'"name":"q","_meta":{"' + AI_INVOCATION_KEY.encode() + b'":{"userIntent":{"text":"hi"}}}')
        redact = mp.Filter({"policy": {"userIntent": "redact"}})
        for given in (body, body.decode()):
            out = redact(given)
            assert "forward" in out
            self.assertIs(type(out["forward"]), type(given))
        out = redact(body)
        assert "forward" in out
        self.assertEqual(out["forward"], body.replace(b'{"text":"hi"}', b'{"redacted":true}'))

    def test_what_cannot_be_processed_is_refused(self) -> None:
        out = mp.Filter()(b'{"id":1,"method":"ping","id":2}')
        assert "reject" in out
        self.assertEqual((out["status"], out["messages"][0]["refused"]), (200, "duplicate-member"))
        self.assertEqual(mp.Filter()(b"not json")["status"], 400)  # type: ignore[typeddict-item]
        # A str that no UTF-8 can be (a lone surrogate) is a body that is not UTF-8.
        self.assertEqual(mp.Filter()('{"method":"ping","id":"\ud800"}')["reject"], '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the body is not UTF-8","data":{"code":"parse-error"}}}')  # type: ignore[typeddict-item]
        with self.assertRaises(mp.ProvenanceTypeError):
            mp.Filter()(bytearray(b"{}"))  # type: ignore[call-overload]

    def test_every_line_is_one_line_whatever_the_body_held(self) -> None:
        forging = "\u2028\u2029\u0085\u202e\u2066\ufeff\x7f"
        body = json.dumps({"jsonrpc": "2.0", "id": "1" + forging, "method": "tools/call", "params": {
            "name": forging, "arguments": {forging: forging},
            "_meta": {AI_INVOCATION_KEY: {"turnId": forging, "userIntent": {"text": forging}}}}}, indent="\t", ensure_ascii=False)
        body = body.replace("\n", "\r\n")
        for gate in (mp.Filter(), mp.Filter({"policy": {"userIntent": "redact"}})):
            out = gate(body)
            assert "forward" in out
            self.assertEqual(len(out["lines"]), 1)
            for line in out["lines"]:
                self.assertFalse(any(c in line for c in "\r\n\t" + forging), line)
                self.assertEqual(json.loads(line)["message"], json.loads(out["forward"]))

    def test_a_body_its_headers_would_have_a_server_decode_otherwise_is_refused(self) -> None:
        # UTF-7 turns this string argument into `}}`: the server would read what the filter did not.
        for headers, code in (
            ({"content-type": "application/json; charset=utf-7"}, "unsupported-charset"),
            ({"Content-Type": "application/json", "Content-Encoding": "gzip"}, "unsupported-encoding"),
            ({"content-type": ["application/json", "text/plain"]}, "unsupported-media-type"),
            ({}, "unsupported-media-type"),
        ):
            out = mp.Filter()(self.BODY, {"headers": headers})
            assert "reject" in out
            self.assertEqual(out["status"], 415)
            self.assertEqual(json.loads(out["reject"])["error"]["data"]["code"], code)
        out = mp.Filter()(self.BODY, {"headers": {"content-type": "application/json; charset=UTF-8"}})
        assert "forward" in out
        self.assertIs(out["forward"], self.BODY)
        with self.assertRaises(mp.ProvenanceValueError):
            mp.Filter({"maxBatch": 0})


class Provenance(unittest.TestCase):
    """A policy read once: each method gives what the function gives with the same options."""

    OPTIONS: Dict[str, Any] = {"invocationKey": "com.example/aiInvocation", "uiKey": "com.example/ui", "userIntent": "redact"}
    KEYS = {"invocationKey": "com.example/aiInvocation", "uiKey": "com.example/ui"}
    REQUEST: Dict[str, Any] = {
        "jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "q", "arguments": {"user_query": "find it"}, "_meta": {
            "com.example/aiInvocation": {"turnId": "t-9", "userIntent": {"text": "why\r\nnot"}},
            "com.example/ui": {"initiator": "model"},
        }},
    }

    def test_each_method_is_its_function_under_the_bound_options(self) -> None:
        bound = mp.Provenance(self.OPTIONS)
        self.assertEqual((bound.invocation_key, bound.ui_key), ("com.example/aiInvocation", "com.example/ui"))
        request, keys = self.REQUEST, self.KEYS
        response = {"jsonrpc": "2.0", "id": 4, "result": {"content": []}}
        self.assertEqual(bound.validate(request), mp.validate(request, keys))
        self.assertEqual(bound.validate(response, request), mp.validate(response, {**keys, "request": request}))
        self.assertEqual(bound.sanitize(request), mp.sanitize(request, self.OPTIONS))
        self.assertEqual(bound.sanitize(request)["changes"][0]["action"], "redacted")
        self.assertEqual(bound.stamp_initiator(request), mp.stamp_initiator(request, "app", keys))
        self.assertEqual(bound.stamp_initiator(request, "user"), mp.stamp_initiator(request, "user", keys))
        self.assertEqual(bound.clear_initiator(request), mp.clear_initiator(request, keys))
        invocation = {"turnId": "t-10"}
        self.assertEqual(bound.attach_invocation(request, invocation), mp.attach_invocation(request, invocation, keys))
        self.assertEqual(bound.echo_turn_id(request, response), mp.echo_turn_id(request, response, keys))
        witnessed = {"sessionId": "s-1", "principal": "alice"}
        self.assertEqual(
            bound.audit_record(request, witnessed), mp.audit_record(request, {**witnessed, "policy": self.OPTIONS})
        )
        self.assertEqual(bound.audit_record(request)["clientAsserted"]["userIntentRedacted"], True)
        self.assertEqual(bound.lift_legacy_arguments(request), mp.lift_legacy_arguments(request, keys))
        self.assertEqual(
            bound.lift_legacy_arguments(request, remove=True),
            mp.lift_legacy_arguments(request, {**keys, "remove": True}),
        )

    def test_bad_options_are_refused_when_it_is_made_and_a_context_names_no_policy(self) -> None:
        for options, code in (({"maxIntentBytes": 3}, "invalid-limit"), ({"invocationKey": "io.modelcontextprotocol/x"}, "reserved-key"), ({"userIntnet": "drop"}, "unknown-option")):
            with self.assertRaises(mp.ProvenanceValueError) as raised:
                mp.Provenance(options)
            self.assertEqual(raised.exception.code, code)
        with self.assertRaises(mp.ProvenanceValueError) as raised:
            mp.Provenance().audit_record(self.REQUEST, {"policy": {}})
        self.assertEqual(raised.exception.code, "invalid-option")


if __name__ == "__main__":
    unittest.main()
