"""What ContextForge 1.1.0 would refuse of the ``_meta`` the filter forwards, by its own
settings: the start checks of ``mcp_provenance.contextforge:app`` beyond its own two.

ContextForge refuses a request whose ``_meta`` passes its limits (``validate_meta_data``,
``-32602``), on ``/mcp`` (``tools/call``, ``prompts/get``, ``resources/read``) and in
``prompts/get`` and ``resources/read`` wherever they come from (``/rpc`` too):

- ``META_MAX_DEPTH`` (default 2) levels below a key of ``_meta``: SEP-2817's text is three
  deep (``io.modelcontextprotocol/aiInvocation`` › ``userIntent`` › ``text``);
- ``META_MAX_KEYS`` (default 16) keys, its own three ``io.modelcontextprotocol/`` keys aside;
- ``META_MAX_BYTES`` (default 4096) bytes of ``_meta`` as Python's ``json.dumps`` writes it,
  every character past ASCII as ``\\uXXXX``: a field of 1024 bytes of two-byte characters
  counts 3072.

Its validation middleware, when it refuses (``VALIDATION_MIDDLEWARE_ENABLED`` and
``EXPERIMENTAL_VALIDATE_IO`` true, ``ENVIRONMENT=production``), refuses (422) any body with a
string longer than ``MAX_PARAM_LENGTH`` characters or that one of ``DANGEROUS_PATTERNS``
matches: shell characters such as ``(`` and ``;`` by default, which an intent in words holds.

Each is measured against the largest ``_meta`` the filter forwards under its options: under
every invocation key an envelope with each field its policy keeps at its byte limit (in two-byte
characters, the most ``json.dumps`` makes of a byte), under every ui key the ``initiator`` a Host
stamps. Where the policy keeps unknown fields, members as deep as the filter keeps them (16
levels of their own, in a field, within ``maxDepth``) and as large as ``maxEnvelopeBytes`` lets
them (a byte of an unknown field counts at most four: ``1e15,``); with no policy, an envelope
within the default policy's limits (past them, ``validate`` warns).

>>> from types import SimpleNamespace
>>> contextforge = SimpleNamespace(meta_max_depth=2, meta_max_keys=16, meta_max_bytes=4096,
...     validation_middleware_enabled=False, experimental_validate_io=False, environment="development",
...     max_param_length=10000, dangerous_patterns=[])
>>> needs({"policy": {"userIntent": "redact"}})
Needs(depth=3, keys=2, bytes=4425)
>>> for refusal in refusals(contextforge, {"policy": {"userIntent": "redact"}}):
...     print(refusal)
META_MAX_DEPTH=2 makes ContextForge refuse the SEP-2817 envelope (3 levels below _meta): set META_MAX_DEPTH=3 or more
META_MAX_BYTES=4096 makes ContextForge refuse the SEP-2817 envelope (4425 bytes of _meta as it counts them, each field at its limit): set META_MAX_BYTES=4425 or more
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Mapping, NamedTuple

from .. import AI_INVOCATION_KEY, UI_KEY

#: The default policy's limits (``Policy``'s defaults), where the options name none.
DEFAULT_LIMITS = {"maxReasonBytes": 1024, "maxIntentBytes": 2048, "maxModelBytes": 256, "maxTurnIdBytes": 128,
                  "maxEnvelopeBytes": 8192}
#: The deepest a message may nest, where the options name no ``maxDepth``.
DEFAULT_MAX_DEPTH = 128
#: How many levels of containers a kept unknown member holds; deeper ones the filter drops.
UNKNOWN_DEPTH = 16

#: What a Host stamps under a ui key (the longest ``initiator`` of UI-7).
UI_ENTRY = {"initiator": "model"}

#: How many levels of a message are above a value of its ``_meta`` (the message, ``params``,
#: ``_meta``), and so not in ContextForge's count.
_ABOVE = 3

#: The most ``json.dumps`` writes of one byte of an envelope of known fields (``é``,
#: ``\\u00e9``), and of one of unknown fields (``1e15,`` in an array, ``1000000000000000.0, ``).
_KNOWN_FACTOR, _UNKNOWN_FACTOR = 3, 4

#: A text of every printable ASCII character (the filter forwards each as it came) and a path
#: that climbs: what ContextForge's ``DANGEROUS_PATTERNS`` are tried on.
_PRINTABLE = "".join(map(chr, range(0x20, 0x7F))) + " ../ ..\\"


class Needs(NamedTuple):
    """What ContextForge must let through of the ``_meta`` the filter forwards, as it counts."""

    #: Levels below a key of ``_meta`` (``META_MAX_DEPTH``).
    depth: int
    #: Keys of ``_meta`` (``META_MAX_KEYS``).
    keys: int
    #: Bytes of ``_meta`` as ``json.dumps`` writes it (``META_MAX_BYTES``).
    bytes: int


def text(limit: int) -> str:
    """A text of ``limit`` bytes that ``json.dumps`` writes as long as any: two-byte characters
    (six each), and a quote (two) for an odd byte."""
    return "é" * (limit // 2) + '"' * (limit % 2)


def _policy(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The policy the options give, or the default policy where they give none."""
    policy = options.get("policy")
    return dict(policy) if isinstance(policy, Mapping) else {}


def _limit(policy: Mapping[str, Any], name: str) -> int:
    limit = policy.get(name, DEFAULT_LIMITS[name])
    return int(limit)


def envelope(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The envelope of known fields at its largest under the options' policy: each field it
    keeps at its byte limit, the intent with ``redacted: false`` where it is kept."""
    policy = _policy(options)
    made: Dict[str, Any] = {}
    if policy.get("invocationReason", "keep") == "keep":
        made["invocationReason"] = {"text": text(_limit(policy, "maxReasonBytes"))}
    if policy.get("model", "keep") == "keep":
        made["model"] = {"name": text(_limit(policy, "maxModelBytes"))}
    intent = policy.get("userIntent", "keep")
    if intent == "keep":
        made["userIntent"] = {"text": text(_limit(policy, "maxIntentBytes")), "redacted": False}
    elif intent == "redact":
        made["userIntent"] = {"redacted": True}
    made["turnId"] = text(_limit(policy, "maxTurnIdBytes"))
    return made


def _keys(options: Mapping[str, Any], standard: str, member: str) -> List[str]:
    """The standard key and the options' vendor keys of one kind, each once."""
    return list(dict.fromkeys([standard, *options.get(member, ())]))


def largest(options: Mapping[str, Any]) -> Dict[str, Any]:
    """The largest ``_meta`` of known fields the filter forwards under ``options`` (where its
    ``maxEnvelopeBytes`` holds them): the envelope at its largest under every invocation key,
    the Host's stamp under every ui key."""
    made = {key: envelope(options) for key in _keys(options, AI_INVOCATION_KEY, "invocationKeys")}
    made.update({key: dict(UI_ENTRY) for key in _keys(options, UI_KEY, "uiKeys")})
    return made


def depth(value: Any, level: int = 1) -> int:
    """How deep ContextForge counts ``value``, a value of ``_meta``: itself 1, each object one
    more, an array none."""
    if isinstance(value, dict):
        return max([depth(member, level + 1) for member in value.values()], default=level)
    if isinstance(value, list):
        return max([depth(item, level) for item in value], default=level)
    return level


def needs(options: Mapping[str, Any]) -> Needs:
    """What ContextForge must let through of what the filter forwards under ``options``."""
    meta = largest(options)
    policy = _policy(options)
    envelope_limit = _limit(policy, "maxEnvelopeBytes")
    deepest = max(depth(value) for value in meta.values())
    sizes = {key: len(json.dumps(value)) for key, value in meta.items()}
    if "policy" in options and policy.get("unknownFields", "drop") == "keep":
        # Unknown members as deep as the filter keeps them (in a field of the envelope, all
        # objects) and reads them, and as many as the envelope holds.
        deepest = max(deepest, min(UNKNOWN_DEPTH + 3, int(options.get("maxDepth", DEFAULT_MAX_DEPTH)) - _ABOVE + 1))
        invocation = _UNKNOWN_FACTOR * envelope_limit
    elif len(json.dumps(envelope(options), separators=(",", ":"), ensure_ascii=False).encode()) > envelope_limit:
        # The policy drops fields to fit; what fits counts at most three bytes a byte.
        invocation = _KNOWN_FACTOR * envelope_limit
    else:
        invocation = len(json.dumps(envelope(options)))
    for key in _keys(options, AI_INVOCATION_KEY, "invocationKeys"):
        sizes[key] = invocation
    # `{"key": value, ...}` as json.dumps writes it.
    size = 2 + sum(len(json.dumps(key)) + 2 + value for key, value in sizes.items()) + 2 * (len(sizes) - 1)
    return Needs(depth=deepest, keys=len(meta), bytes=size)


def _longest_text(options: Mapping[str, Any]) -> int:
    """The most characters a text of what the filter forwards has (ASCII, a byte each)."""
    policy = _policy(options)
    kept = envelope(options)
    limits = [_limit(policy, "maxTurnIdBytes")]
    if "invocationReason" in kept or ("policy" in options and policy.get("unknownFields", "drop") == "keep"):
        # Unknown fields' strings are cut to the reason's limit.
        limits.append(_limit(policy, "maxReasonBytes"))
    if "model" in kept:
        limits.append(_limit(policy, "maxModelBytes"))
    if "text" in kept.get("userIntent", {}):
        limits.append(_limit(policy, "maxIntentBytes"))
    return max(limits)


def refusals(settings: Any, options: Mapping[str, Any]) -> List[str]:
    """What ContextForge, with ``settings`` (its ``Settings``, as it reads them), would refuse
    of what the filter forwards under ``options`` (the filter's options document): one
    sentence a setting, naming it, its value, and what to set it to; none when it refuses none."""
    need = needs(options)
    found = []
    if settings.meta_max_depth < need.depth:
        found.append(f"META_MAX_DEPTH={settings.meta_max_depth} makes ContextForge refuse the SEP-2817 envelope "
                     f"({need.depth} levels below _meta): set META_MAX_DEPTH={need.depth} or more")
    if settings.meta_max_keys < need.keys:
        found.append(f"META_MAX_KEYS={settings.meta_max_keys} makes ContextForge refuse the SEP-2817 envelope "
                     f"({need.keys} keys of _meta, an invocation or ui key each): set META_MAX_KEYS={need.keys} or more")
    if settings.meta_max_bytes < need.bytes:
        found.append(f"META_MAX_BYTES={settings.meta_max_bytes} makes ContextForge refuse the SEP-2817 envelope "
                     f"({need.bytes} bytes of _meta as it counts them, each field at its limit): "
                     f"set META_MAX_BYTES={need.bytes} or more")
    refusing = (settings.validation_middleware_enabled and settings.experimental_validate_io
                and settings.environment not in ("development", "staging"))
    if refusing:
        longest = _longest_text(options)
        if settings.max_param_length < longest:
            found.append(f"MAX_PARAM_LENGTH={settings.max_param_length} makes ContextForge's validation middleware "
                         f"refuse the SEP-2817 envelope (422; a text of {longest} characters): "
                         f"set MAX_PARAM_LENGTH={longest} or more, or VALIDATION_MIDDLEWARE_ENABLED=false")
        for pattern in settings.dangerous_patterns:
            try:
                matched = re.search(pattern, _PRINTABLE)
            except re.error:
                continue  # ContextForge fails on it itself, when it compiles its patterns
            if matched is not None:
                found.append(f"VALIDATION_MIDDLEWARE_ENABLED=true makes ContextForge refuse the SEP-2817 envelope "
                             f"(422, with EXPERIMENTAL_VALIDATE_IO=true in ENVIRONMENT={settings.environment}) "
                             f"when its text holds {json.dumps(matched.group())}, as DANGEROUS_PATTERNS says: "
                             "set VALIDATION_MIDDLEWARE_ENABLED=false")
                break
    return found
