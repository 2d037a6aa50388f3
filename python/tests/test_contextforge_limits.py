"""What the ContextForge app checks of ContextForge's settings when it starts
(``mcp_provenance/contextforge/_limits.py``), without ContextForge: the largest
``_meta`` it measures is what the filter forwards (the package's own filter
passes it unchanged, and cuts each field one byte longer), the messages name
the setting and what to set, and the command finds uvicorn's ``--env-file``.
ContextForge's own verdicts on the same ``_meta`` are in test_contextforge.py."""

from __future__ import annotations

import doctest
import json
import unittest
from types import SimpleNamespace
from typing import Any, Dict, List

import mcp_provenance.contextforge._limits
from mcp_provenance import AI_INVOCATION_KEY, UI_KEY, Filter
from mcp_provenance.contextforge.__main__ import env_file
from mcp_provenance.contextforge._limits import DEFAULT_LIMITS, UNKNOWN_DEPTH, Needs, depth, envelope, largest, needs, refusals, text

#: Options documents as operators write them: the example's, none, the default policy, vendor
#: keys, small limits, fields dropped, a policy that keeps unknown fields.
OPTIONS: List[Dict[str, Any]] = [
    {"policy": {"userIntent": "redact"}}, {}, {"policy": {}},
    {"policy": {"userIntent": "keep"}, "invocationKeys": ["com.example/aiInvocation"], "uiKeys": ["com.example/ui"]},
    {"policy": {"maxReasonBytes": 17, "maxIntentBytes": 16, "maxModelBytes": 33, "maxTurnIdBytes": 64}},
    {"policy": {"userIntent": "drop", "model": "drop", "invocationReason": "drop"}, "liftLegacy": True},
]

#: ContextForge 1.1.0's defaults.
CONTEXTFORGE = {"meta_max_depth": 2, "meta_max_keys": 16, "meta_max_bytes": 4096, "validation_middleware_enabled": False,
                "experimental_validate_io": False, "environment": "development", "max_param_length": 10000,
                "dangerous_patterns": [r"[;&|`$(){}\[\]<>]", r"\.\.[\\/]", r"[\x00-\x1f\x7f-\x9f]"]}


def forwarded(options: Dict[str, Any], meta: Dict[str, Any]) -> Any:
    """What the filter forwards of a tools/call with ``meta``, and what it changed; or its refusal."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "t", "arguments": {}, "_meta": meta}}, ensure_ascii=False).encode()
    outcome = Filter(options)(body)
    if "forward" not in outcome:
        return None
    return json.loads(outcome["forward"])["params"]["_meta"], outcome["messages"][0]["changes"]


def leaves(value: Any) -> List[Any]:
    """The strings, numbers and flags of ``value``, at any depth."""
    if isinstance(value, dict):
        return [leaf for member in value.values() for leaf in leaves(member)]
    return [value]


def settings(**changed: Any) -> SimpleNamespace:
    return SimpleNamespace(**{**CONTEXTFORGE, **changed})


class Largest(unittest.TestCase):
    def test_the_filter_forwards_the_largest_meta_as_it_is_and_cuts_each_field_a_byte_longer(self) -> None:
        for options in OPTIONS:
            with self.subTest(options=options):
                meta = largest(options)
                self.assertEqual(forwarded(options, meta), (meta, []))
                policy = options.get("policy", {})
                longer = largest({**options, "policy": {**policy, **{name: policy.get(name, limit) + 1 for name, limit
                                                                     in DEFAULT_LIMITS.items() if name != "maxEnvelopeBytes"}}})
                texts = sum(1 for value in meta.values() if "initiator" not in value
                            for leaf in leaves(value) if isinstance(leaf, str))
                _, changes = forwarded(options, longer)
                if "policy" in options:
                    self.assertEqual([change["action"] for change in changes], ["truncated"] * texts)
                else:
                    # No policy: the filter forwards what it validated as it came (past the
                    # default limits with a warning); what is measured is the default policy's.
                    self.assertEqual(changes, [])

    def test_what_it_needs_is_what_contextforge_counts_of_the_largest_meta(self) -> None:
        for options in OPTIONS:
            with self.subTest(options=options):
                meta = largest(options)
                self.assertEqual(needs(options), Needs(depth=max(map(depth, meta.values())), keys=len(meta),
                                                       bytes=len(json.dumps(meta))))
        self.assertEqual(needs({"policy": {"userIntent": "redact"}}), Needs(3, 2, 4425))
        self.assertEqual(needs({}), Needs(3, 2, 10582))
        self.assertEqual(needs({"invocationKeys": ["com.example/aiInvocation"], "uiKeys": ["com.example/ui"]}),
                         Needs(3, 4, 21140))
        # Each field dropped: the turn and the Host's stamp are left.
        self.assertEqual(needs(OPTIONS[-1]), Needs(2, 2, 494))

    def test_a_text_at_its_limit_is_its_limit_in_bytes_and_thrice_as_json_dumps_writes_it(self) -> None:
        for limit in (16, 17, 1024):
            self.assertEqual(len(text(limit).encode()), limit)
            self.assertEqual(len(json.dumps(text(limit))), 2 + 3 * limit - limit % 2)

    def test_an_envelope_cut_to_fit_counts_at_most_three_bytes_a_byte(self) -> None:
        options = {"policy": {"maxEnvelopeBytes": 1000}}
        self.assertEqual(needs(options).bytes, 2 + len(json.dumps(AI_INVOCATION_KEY)) + 2 + 3000 + 2
                         + len(json.dumps(UI_KEY)) + 2 + len(json.dumps({"initiator": "model"})))
        # What fits is forwarded; what the filter makes of the largest envelope counts less.
        meta, changes = forwarded(options, largest(options))
        self.assertEqual({change["action"] for change in changes}, {"dropped"})
        self.assertLess(len(json.dumps(meta)), needs(options).bytes)

    def test_unknown_members_kept_are_as_deep_and_as_large_as_the_filter_lets_them(self) -> None:
        options = {"policy": {"unknownFields": "keep", "maxEnvelopeBytes": 256}, "maxDepth": 16}
        need = needs(options)
        self.assertEqual(need.depth, 14)
        nested: Any = "e"
        for _ in range(need.depth - 2):
            nested = {"x": nested}
        deepest = {"turnId": "t", "x": nested}
        self.assertEqual(depth(deepest), need.depth)
        self.assertEqual(forwarded(options, {AI_INVOCATION_KEY: deepest}), ({AI_INVOCATION_KEY: deepest}, []))
        self.assertIsNone(forwarded(options, {AI_INVOCATION_KEY: {"turnId": "t", "x": {"x": nested}}}))
        # The most json.dumps makes of a byte: 1e15 in an array, 1000000000000000.0.
        numbers = {"turnId": "t", "x": [1e15] * 40}
        while len(json.dumps(numbers, separators=(",", ":")).replace("1000000000000000.0", "1e15")) > 256:
            numbers["x"].pop()
        body_meta = json.dumps({AI_INVOCATION_KEY: numbers}, separators=(",", ":")).replace("1000000000000000.0", "1e15")
        body = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":%s}}' % body_meta).encode()
        went = Filter(options)(body)
        self.assertEqual(went["messages"][0]["changes"], [])
        self.assertEqual(json.loads(went["forward"])["params"]["_meta"], {AI_INVOCATION_KEY: numbers})
        self.assertLessEqual(len(json.dumps({AI_INVOCATION_KEY: numbers, UI_KEY: {"initiator": "model"}})), need.bytes)
        self.assertEqual(need.bytes, 2 + len(json.dumps(AI_INVOCATION_KEY)) + 2 + 4 * 256 + 2
                         + len(json.dumps(UI_KEY)) + 2 + len(json.dumps({"initiator": "model"})))

    def test_the_default_depth_and_envelope_limit_are_the_filters(self) -> None:
        options = {"policy": {"unknownFields": "keep"}}
        need = needs(options)
        self.assertEqual(need.depth, UNKNOWN_DEPTH + 3)
        # An unknown member of a field, its levels all objects: as deep as the filter keeps it.
        nested: Any = "e"
        for _ in range(UNKNOWN_DEPTH):
            nested = {"x": nested}
        deepest = {"turnId": "t", "userIntent": {"text": "a", "y": nested}}
        self.assertEqual(depth(deepest), need.depth)
        self.assertEqual(forwarded(options, {AI_INVOCATION_KEY: deepest})[1], [])
        _, changes = forwarded(options, {AI_INVOCATION_KEY: {**deepest, "userIntent": {"text": "a", "y": {"x": nested}}}})
        self.assertEqual([change["action"] for change in changes], ["dropped"])
        # An envelope of exactly maxEnvelopeBytes as compact JSON goes on; a byte more, its
        # unknown members do not.
        whole = {"turnId": "t", **{f"x{index}": "a" * 1000 for index in range(8)}, "x8": ""}
        whole["x8"] = "a" * (DEFAULT_LIMITS["maxEnvelopeBytes"] - len(json.dumps(whole, separators=(",", ":"))))
        self.assertEqual(forwarded(options, {AI_INVOCATION_KEY: whole})[1], [])
        _, changes = forwarded(options, {AI_INVOCATION_KEY: {**whole, "x8": whole["x8"] + "a"}})
        self.assertEqual({change["action"] for change in changes}, {"dropped"})

    def test_an_envelope_is_what_its_policy_keeps(self) -> None:
        self.assertEqual(envelope({"policy": {"userIntent": "redact", "model": "drop", "maxReasonBytes": 16,
                                              "maxTurnIdBytes": 17}}),
                         {"invocationReason": {"text": "é" * 8}, "userIntent": {"redacted": True}, "turnId": "é" * 8 + '"'})


class Refusals(unittest.TestCase):
    def test_contextforge_as_it_comes_refuses_the_envelope_twice(self) -> None:
        self.assertEqual(refusals(settings(), {"policy": {"userIntent": "redact"}}), [
            "META_MAX_DEPTH=2 makes ContextForge refuse the SEP-2817 envelope (3 levels below _meta): "
            "set META_MAX_DEPTH=3 or more",
            "META_MAX_BYTES=4096 makes ContextForge refuse the SEP-2817 envelope (4425 bytes of _meta as it counts them, "
            "each field at its limit): set META_MAX_BYTES=4425 or more"])

    def test_each_setting_at_what_it_needs_refuses_nothing_and_one_less_is_named(self) -> None:
        for options in OPTIONS:
            need = needs(options)
            enough = settings(meta_max_depth=need.depth, meta_max_keys=need.keys, meta_max_bytes=need.bytes)
            with self.subTest(options=options):
                self.assertEqual(refusals(enough, options), [])
                self.assertEqual(refusals(settings(meta_max_depth=need.depth - 1, meta_max_keys=need.keys,
                                                   meta_max_bytes=need.bytes), options),
                                 [f"META_MAX_DEPTH={need.depth - 1} makes ContextForge refuse the SEP-2817 envelope "
                                  f"({need.depth} levels below _meta): set META_MAX_DEPTH={need.depth} or more"])
                self.assertEqual(refusals(settings(meta_max_depth=need.depth, meta_max_keys=need.keys - 1,
                                                   meta_max_bytes=need.bytes), options),
                                 [f"META_MAX_KEYS={need.keys - 1} makes ContextForge refuse the SEP-2817 envelope "
                                  f"({need.keys} keys of _meta, an invocation or ui key each): "
                                  f"set META_MAX_KEYS={need.keys} or more"])

    def test_its_validation_middleware_is_named_only_where_it_refuses(self) -> None:
        need = needs({})
        enough = {"meta_max_depth": need.depth, "meta_max_keys": need.keys, "meta_max_bytes": need.bytes}
        refusing = {**enough, "validation_middleware_enabled": True, "experimental_validate_io": True,
                    "environment": "production"}
        self.assertEqual(refusals(settings(**refusing), {}), [
            'VALIDATION_MIDDLEWARE_ENABLED=true makes ContextForge refuse the SEP-2817 envelope (422, with '
            'EXPERIMENTAL_VALIDATE_IO=true in ENVIRONMENT=production) when its text holds "$", as DANGEROUS_PATTERNS '
            'says: set VALIDATION_MIDDLEWARE_ENABLED=false'])
        self.assertEqual(refusals(settings(**{**refusing, "dangerous_patterns": [r"\.\.[\\/]"], "max_param_length": 100}), {}), [
            "MAX_PARAM_LENGTH=100 makes ContextForge's validation middleware refuse the SEP-2817 envelope (422; a text of "
            "2048 characters): set MAX_PARAM_LENGTH=2048 or more, or VALIDATION_MIDDLEWARE_ENABLED=false",
            'VALIDATION_MIDDLEWARE_ENABLED=true makes ContextForge refuse the SEP-2817 envelope (422, with '
            'EXPERIMENTAL_VALIDATE_IO=true in ENVIRONMENT=production) when its text holds "../", as DANGEROUS_PATTERNS '
            'says: set VALIDATION_MIDDLEWARE_ENABLED=false'])
        # Control characters alone: the filter neutralizes them in every text it forwards.
        self.assertEqual(refusals(settings(**{**refusing, "dangerous_patterns": [r"[\x00-\x1f]"]}), {}), [])
        # In development or staging it only logs; off, or without EXPERIMENTAL_VALIDATE_IO, it does nothing.
        for changed in ({"environment": "staging"}, {"experimental_validate_io": False},
                        {"validation_middleware_enabled": False}):
            self.assertEqual(refusals(settings(**{**refusing, **changed}), {}), [])

    def test_the_examples_run(self) -> None:
        failed, attempted = doctest.testmod(mcp_provenance.contextforge._limits, optionflags=doctest.NORMALIZE_WHITESPACE)
        self.assertEqual((failed, attempted > 0), (0, True))


class Command(unittest.TestCase):
    def test_it_reads_the_env_file_uvicorn_reads(self) -> None:
        self.assertEqual(env_file(["--env-file", ".env", "--workers", "2"]), ".env")
        self.assertEqual(env_file(["--workers", "2", "--env-file=prod.env"]), "prod.env")
        self.assertEqual(env_file(["--env-file", "a.env", "--env-file", "b.env"]), "b.env")
        self.assertIsNone(env_file(["--workers", "2"]))
        self.assertIsNone(env_file(["--env-file"]))


if __name__ == "__main__":
    unittest.main()
