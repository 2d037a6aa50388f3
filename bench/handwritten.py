"""What a Python engineer would write instead of this package: ``validate``
by hand in plain Python, under the default keys, giving the very report of
``mcp_provenance.validate`` (bench/python.py checks it against every
conformance vector of ``validate`` without options before it times
anything). A port of the ``validate`` part of bench/handwritten.mjs, written
to be fast as a careful engineer would write it: precompiled regexes, no
schema library, no regex at all for a plain string.

Strings are taken to be well-formed: a Python ``str`` from JSON can hold a
lone surrogate, but the package refuses such a string, so MSG-3 has nothing
here to compare with (conformance/utf16.json is left out).
"""

import re

KEY = "io.modelcontextprotocol/aiInvocation"
UI = "io.modelcontextprotocol/ui"
FIELDS = ("invocationReason", "model", "userIntent", "turnId")
KNOWN_FIELDS = frozenset(FIELDS)
KNOWN_INTENT = frozenset(("text", "redacted"))
INITIATORS = frozenset(("app", "model", "user", "host"))
REASON_LIMIT, INTENT_LIMIT, MODEL_LIMIT, TURN_ID_LIMIT = 1024, 2048, 256, 128
# AI-13: line breaks become a space, every other control or bidi control U+FFFD;
# TXT-1: invisible characters that carry no meaning become U+FFFD too.
_CONTROL = r"\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_INVISIBLE = r"\u200b\u2060-\u2064\ufeff\u180e\U000e0000-\U000e007f"
CONTROL = re.compile(f"[{_CONTROL}]")
INVISIBLE = re.compile(f"[{_INVISIBLE}]")
# Every character FORBIDDEN matches is unprintable to Python (Cc, Cf, Zl, Zp
# or unassigned), so `str.isprintable()`, a C loop twice as fast as a regex
# search, clears most strings before any regex runs.
FORBIDDEN = re.compile(f"[{_CONTROL}{_INVISIBLE}]")
LINE_BREAK = re.compile(r"[\r\n\t\x0b\x0c\x85\u2028\u2029]")
# MSG-2: a report lists this many diagnostics, then one saying how many more.
LISTED = 64
ELLIPSIS = "\u2026"
# A member that is not there, which JSON null (None) is not.
ABSENT = object()


def type_name(value):
    if value is None:
        return "null"
    if value is True or value is False:  # before int: a bool is an int in Python
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def neutralized(text):
    """The text with every AI-13 and TXT-1 character replaced, nothing cut."""
    if text.isprintable() or not FORBIDDEN.search(text):
        return text
    return FORBIDDEN.sub("\ufffd", LINE_BREAK.sub(" ", text))


def is_plain(text, limit):
    """Whether a string is surely within ``limit`` UTF-8 bytes and holds
    nothing AI-13 or TXT-1 replaces. ``len`` counts code points, of up to 4
    bytes each; the bytes are counted only when that bound does not settle it
    (``isascii`` is a flag lookup in CPython), and never for a string of more
    code points than ``limit``, which cannot fit."""
    n = len(text)
    fits = n <= limit and (text.isascii() or n * 4 <= limit or len(text.encode()) <= limit)
    return fits and (text.isprintable() or not FORBIDDEN.search(text))


def clean(text, limit):
    """AI-13, TXT-1 and AI-14 for one string: what is kept is neutralized and
    cut to ``limit`` bytes, the cut marked by an ellipsis. Returns the text,
    whether the kept part held control characters (AI-13), whether it held
    invisible ones (TXT-1), and whether it was cut (AI-14)."""
    # Every code point is at least one byte, so the first limit + 1 of them
    # decide everything: more are sure to be cut away.
    head = text[: limit + 1]
    safe = neutralized(head)
    encoded = safe.encode()
    if len(encoded) <= limit:
        return safe, bool(CONTROL.search(head)), bool(INVISIBLE.search(head)), False
    # Whole code points within limit - 3 bytes, room for the ellipsis.
    kept = encoded[: limit - 3].decode(errors="ignore")
    # Neutralizing maps each code point to one, so the kept part of the
    # original is as long; only what is kept counts as neutralized.
    part = head[: len(kept)]
    return kept + ELLIPSIS, bool(CONTROL.search(part)), bool(INVISIBLE.search(part)), True


def segment(name):
    """An RFC 6901 pointer segment, made safe as the package makes it."""
    return clean(name, 128)[0].replace("~", "~0").replace("/", "~1")


def join(path, name):
    return f"{path}/{segment(name)}"


def sorted_unknown(obj, known):
    """Members outside ``known``, sorted by code point as the package sorts them."""
    if known.issuperset(obj):
        return ()
    return sorted(obj.keys() - known)


def diagnostic(code, severity, rule, path, message):
    return {"code": code, "severity": severity, "rule": rule, "path": path, "message": message}


def invalid_type(what, expected, value, rule, path):
    return diagnostic("invalid-type", "error", rule, path, f"{what} must be {expected}, not {type_name(value)}")


def unknown_field(path):
    return diagnostic("unknown-field", "warning", "AI-8", path, "a field SEP-2817 does not define; the default policy drops it")


# Every pointer a clean message could need, built once: only unknown member
# names are joined per call, and only when a diagnostic names them.
META = "/params/_meta"
ENVELOPE = join(META, KEY)
UI_PATH = join(META, UI)
INITIATOR_PATH = join(UI_PATH, "initiator")
AT = {field: f"{ENVELOPE}/{field}" for field in FIELDS}
INTENT_TEXT = f"{AT['userIntent']}/text"
INTENT_REDACTED = f"{AT['userIntent']}/redacted"
# The two fields with a required string: field, member, rule, limit, the
# member's path, the set of known members.
REQUIRED = tuple(
    (field, member, rule, limit, f"{AT[field]}/{member}", frozenset((member,)))
    for field, member, rule, limit in (("invocationReason", "text", "AI-3", REASON_LIMIT), ("model", "name", "AI-4", MODEL_LIMIT))
)
BARE = tuple(
    (field, join(META, field), f"a bare `_meta.{field}` is not SEP-2817's convention; put `{field}` inside the envelope")
    for field in FIELDS
)


def check_envelope(envelope, out):
    if not isinstance(envelope, dict):
        out.append(invalid_type("the invocation envelope", "an object", envelope, "AI-2", ENVELOPE))
        return
    for field, member, rule, _, path, known in REQUIRED:
        value = envelope.get(field, ABSENT)
        if value is ABSENT:
            continue
        if not isinstance(value, dict):
            out.append(invalid_type(f"`{field}`", "an object", value, rule, AT[field]))
            continue
        text = value.get(member, ABSENT)
        if text is ABSENT:
            out.append(diagnostic("missing-field", "error", rule, path, f"`{field}` must have a string `{member}`"))
        elif not isinstance(text, str):
            out.append(invalid_type(f"`{field}.{member}`", "a string", text, rule, path))
        for name in sorted_unknown(value, known):
            out.append(unknown_field(join(AT[field], name)))
    intent = envelope.get("userIntent", ABSENT)
    if intent is not ABSENT:
        if not isinstance(intent, dict):
            out.append(invalid_type("`userIntent`", "an object", intent, "AI-5", AT["userIntent"]))
        else:
            text = intent.get("text", ABSENT)
            if text is not ABSENT and not isinstance(text, str):
                out.append(invalid_type("`userIntent.text`", "a string", text, "AI-5", INTENT_TEXT))
            redacted = intent.get("redacted", ABSENT)
            if redacted is not ABSENT and not isinstance(redacted, bool):
                out.append(invalid_type("`userIntent.redacted`", "a boolean", redacted, "AI-5", INTENT_REDACTED))
            for name in sorted_unknown(intent, KNOWN_INTENT):
                out.append(unknown_field(join(AT["userIntent"], name)))
    turn_id = envelope.get("turnId", ABSENT)
    if turn_id is not ABSENT and not isinstance(turn_id, str):
        out.append(invalid_type("`turnId`", "a string", turn_id, "AI-7", AT["turnId"]))
    for name in sorted_unknown(envelope, KNOWN_FIELDS):
        out.append(unknown_field(join(ENVELOPE, name)))
    # What sanitize would change under the default policy (AI-13, TXT-1, AI-14), in its order.
    for field, member, _, limit, path, _ in REQUIRED:
        value = envelope.get(field)
        if isinstance(value, dict):
            text = value.get(member)
            if isinstance(text, str):
                warn_text(text, limit, path, out)
    if isinstance(intent, dict):
        text = intent.get("text")
        if isinstance(text, str):
            warn_text(text, INTENT_LIMIT, INTENT_TEXT, out)
    if isinstance(turn_id, str):
        warn_text(turn_id, TURN_ID_LIMIT, AT["turnId"], out)


def warn_text(text, limit, path, out):
    if is_plain(text, limit):
        return
    _, control, invisible, truncated = clean(text, limit)
    if control:
        out.append(diagnostic("control-character", "warning", "AI-13", path, "holds line breaks, control or bidi characters that could forge or disguise log lines; sanitize replaces them"))
    if invisible:
        out.append(diagnostic("invisible-character", "warning", "TXT-1", path, "holds invisible characters (tag or zero-width characters) that could hide text from a reader; sanitize replaces them"))
    if truncated:
        out.append(diagnostic("over-limit", "warning", "AI-14", path, "is over its default byte limit; sanitize truncates it"))


def check_request(message, out):
    params = message.get("params", ABSENT)
    if params is ABSENT:
        return
    if not isinstance(params, dict):
        out.append(diagnostic("invalid-type", "error", "MSG-1", "/params", f"`/params` must be an object, not {type_name(params)}"))
        return
    meta = params.get("_meta", ABSENT)
    if meta is ABSENT:
        return
    if not isinstance(meta, dict):
        out.append(diagnostic("invalid-type", "error", "MSG-1", META, f"`{META}` must be an object, not {type_name(meta)}"))
        return
    envelope = meta.get(KEY, ABSENT)
    if envelope is not ABSENT:
        check_envelope(envelope, out)
    for field, path, note in BARE:
        if field in meta:
            out.append(diagnostic("bare-key", "warning", "AI-9", path, note))
    check_ui(meta.get(UI, ABSENT), out)
    check_correlation(meta, envelope, out)


def check_ui(ui, out):
    if ui is ABSENT:
        return
    if not isinstance(ui, dict):
        out.append(invalid_type("the ui entry", "an object", ui, "UI-7", UI_PATH))
        return
    initiator = ui.get("initiator", ABSENT)
    if initiator is ABSENT:
        return
    if not isinstance(initiator, str):
        out.append(invalid_type("`initiator`", "a string", initiator, "UI-7", INITIATOR_PATH))
    elif initiator not in INITIATORS:
        out.append(diagnostic("unknown-initiator", "warning", "UI-7", INITIATOR_PATH, 'initiator is not one of "app", "model", "user", "host"'))


# Correlation ids (COR-2..COR-5): the known `_meta` keys, (key, member, kind).
SOURCES = (
    ("vscode.conversationId", None, "conversation"), ("vscode.requestId", None, "request"),
    ("openai/session", None, "conversation"), ("openai/subject", None, "user"), ("openai/organization", None, "organization"),
    ("x-codex-turn-metadata", "session_id", "conversation"), ("x-codex-turn-metadata", "turn_id", "turn"),
)
SOURCE_KEYS = frozenset(("traceparent", *(key for key, _, _ in SOURCES)))
TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(.*)", re.DOTALL)
ZERO_TRACE, ZERO_PARENT = "0" * 32, "0" * 16
TRACEPARENT_PATH = f"{META}/traceparent"


def cor_warning(code, rule, path, message):
    return diagnostic(code, "warning", rule, path, message)


def check_correlation(meta, envelope, out):
    # Most requests carry none of these keys: one set test, no closure.
    if meta.keys().isdisjoint(SOURCE_KEYS):
        return
    ids = []
    # The envelope's turnId, neutralized only when another turn id is there to compare.
    turn_id = envelope.get("turnId") if isinstance(envelope, dict) else None

    def keep(kind, value, path):
        differs = (kind == "turn" and isinstance(turn_id, str) and neutralized(turn_id) != value) or any(
            k == kind and v != value for k, v in ids
        )
        if differs:
            out.append(cor_warning("correlation-conflict", "COR-5", path, f"a `{kind}` id that differs from another source's; both are kept, each with its source"))
        ids.append((kind, value))

    traceparent = meta.get("traceparent", ABSENT)
    if traceparent is not ABSENT:
        match = TRACEPARENT.fullmatch(traceparent) if isinstance(traceparent, str) else None
        well_formed = False
        if match:
            version, trace, parent, flags, rest = match.groups()
            # Version 00 is exactly 55 characters; a later one may go on after a "-".
            versioned = rest == "" if version == "00" else version != "ff" and (rest == "" or rest[0] == "-")
            well_formed = versioned and trace != ZERO_TRACE and parent != ZERO_PARENT
        if well_formed:
            keep("trace", trace, TRACEPARENT_PATH)
            keep("parentSpan", parent, TRACEPARENT_PATH)
            keep("traceFlags", flags, TRACEPARENT_PATH)
        else:
            out.append(cor_warning("invalid-traceparent", "COR-4", TRACEPARENT_PATH, "`traceparent` is not W3C Trace Context (version-traceid-parentid-flags in lower-case hex, neither id all zeros); it is ignored"))
    for key, member, kind in SOURCES:
        value = meta.get(key, ABSENT)
        if value is ABSENT:
            continue
        at = join(META, key)
        if member is None:
            check_id(value, kind, at, keep, out)
        elif isinstance(value, dict):
            check_id(value.get(member, ABSENT), kind, join(at, member), keep, out)
        elif not any(d["path"] == at for d in out):  # one warning for an entry of two members
            out.append(cor_warning("invalid-correlation", "COR-3", at, f"an entry holding correlation ids must be an object, not {type_name(value)}; none is kept"))


def check_id(value, kind, path, keep, out):
    if value is ABSENT:
        return
    if not isinstance(value, str) or value == "":
        what = "an empty string" if value == "" else type_name(value)
        out.append(cor_warning("invalid-correlation", "COR-3", path, f"a correlation id must be a non-empty string, not {what}; it is not kept"))
        return
    # 64 code points are at most 256 bytes: only a longer id is counted.
    if len(value) > 64 and len(value.encode()) > 256:
        out.append(cor_warning("over-limit", "COR-3", path, "a correlation id must be at most 256 bytes long; it is not kept"))
        return
    if value.isprintable():
        keep(kind, value, path)
        return
    if CONTROL.search(value):
        out.append(cor_warning("control-character", "COR-3", path, "a correlation id holds line breaks, control or bidi characters; it is kept with them replaced"))
    elif INVISIBLE.search(value):
        out.append(cor_warning("invisible-character", "COR-3", path, "a correlation id holds invisible characters; it is kept with them replaced"))
    keep(kind, neutralized(value), path)


def check_response(message, out):
    result = message.get("result", ABSENT)
    if result is ABSENT:
        return
    if not isinstance(result, dict):
        out.append(diagnostic("invalid-type", "error", "MSG-1", "/result", f"`/result` must be an object, not {type_name(result)}"))
        return
    meta = result.get("_meta", ABSENT)
    if meta is ABSENT:
        return
    if not isinstance(meta, dict):
        out.append(diagnostic("invalid-type", "error", "MSG-1", "/result/_meta", f"`/result/_meta` must be an object, not {type_name(meta)}"))
        return
    envelope = meta.get(KEY, ABSENT)
    if envelope is ABSENT:
        return
    path = join("/result/_meta", KEY)
    if not isinstance(envelope, dict):
        out.append(invalid_type("the echoed envelope", "an object", envelope, "AI-11", path))
        return
    leaked = [f for f in FIELDS if f != "turnId" and f in envelope]
    leaked.extend(sorted_unknown(envelope, KNOWN_FIELDS))
    for name in leaked:
        out.append(diagnostic("echo-leak", "warning", "AI-11", join(path, name), "a response should echo only turnId, never the request's other audit context"))
    turn_id = envelope.get("turnId", ABSENT)
    if turn_id is not ABSENT and not isinstance(turn_id, str):
        out.append(invalid_type("`turnId`", "a string", turn_id, "AI-7", join(path, "turnId")))


def validate(message):
    """The package's report, under the default keys: {"valid", "diagnostics"}."""
    out = []
    method = message.get("method", ABSENT) if isinstance(message, dict) else ABSENT
    if isinstance(method, str):
        check_request(message, out)
    elif method is not ABSENT:
        out.append(diagnostic("invalid-type", "error", "MSG-1", "/method", "`method` must be a string"))
    elif isinstance(message, dict) and ("result" in message or "error" in message):
        check_response(message, out)
    else:
        found = "an object with neither" if isinstance(message, dict) else type_name(message)
        out.append(diagnostic("not-a-message", "error", "MSG-1", "", f"expected a JSON-RPC message: an object with a string `method`, or with `result` or `error`; found {found}"))
    valid = not any(d["severity"] == "error" for d in out)
    if len(out) > LISTED:
        left = out[LISTED:]
        del out[LISTED:]
        severity = "error" if any(d["severity"] == "error" for d in left) else "warning"
        out.append(diagnostic("too-many-diagnostics", severity, "MSG-2", "", f"{len(left)} more diagnostics were found; a report lists the first {LISTED}"))
    return {"valid": valid, "diagnostics": out}
