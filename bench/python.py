# What a call costs against what a Python user would write instead, in one
# process: `mcp_provenance.validate` on the SEP-2817 example request of
# docs/reference.md and on the demo's hostile request, beside pydantic v2
# (`model_validate`) of the envelope alone and of the message down to it,
# and the hand-written Python of bench/handwritten.py. Prints medians per
# call and the ratios the performance goals are stated in. It asserts
# nothing about time.
#
#   make bench        (or, with the Python package built, e.g. by
#                      make python-test: target/python/test/bin/python
#                      bench/python.py [--rounds N])

import argparse
import json
import re
import statistics
import timeit
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

import handwritten as hand
import mcp_provenance as mp

ROOT = Path(__file__).resolve().parent.parent
KEY = mp.AI_INVOCATION_KEY

parser = argparse.ArgumentParser()
parser.add_argument("--rounds", type=int, default=5)
rounds = parser.parse_args().rounds

# --- The two requests ---------------------------------------------------------

reference = (ROOT / "docs/reference.md").read_text()
sep = json.loads(re.search(r"A request a model made.*?```json\n(.*?)```", reference, re.DOTALL)[1])

transcript = json.loads((ROOT / "examples/prototype/data/transcript.json").read_text())
turn = next(t for t in transcript["turns"] if t.get("pad"))
hostile = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "tools/call",
    "params": {
        "name": turn["calls"][0]["tool"],
        "arguments": turn["calls"][0]["arguments"],
        "_meta": {
            KEY: {
                "invocationReason": {"text": turn["calls"][0]["reason"]},
                "model": {"name": turn["model"]},
                "userIntent": {"text": turn["user"] + "A" * turn["pad"]},
                "turnId": "0b8e4f7a-3c1d-4e2f-9a6b-5d7c8e9f0a1b",
            },
        },
    },
}

# --- What a user would write instead: pydantic, shape only ----------------------


class Reason(BaseModel):
    text: str


class ModelName(BaseModel):
    name: str


class Intent(BaseModel):
    text: str | None = None
    redacted: bool | None = None


class Envelope(BaseModel):
    invocationReason: Reason | None = None
    model: ModelName | None = None
    userIntent: Intent | None = None
    turnId: str | None = None


# The levels above the envelope keep the members they do not name, as MCP's
# own models do; `_meta` and the `_meta` keys are no Python names, so aliases.
class Ui(BaseModel):
    model_config = ConfigDict(extra="allow")
    initiator: Literal["app", "model", "user", "host"] | None = None


class Meta(BaseModel):
    model_config = ConfigDict(extra="allow")
    invocation: Envelope | None = Field(None, alias=KEY)
    ui: Ui | None = Field(None, alias=mp.UI_KEY)


class Params(BaseModel):
    model_config = ConfigDict(extra="allow")
    meta: Meta | None = Field(None, alias="_meta")


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    method: str
    params: Params | None = None


# --- The hand-written Python gives the package's outputs --------------------------


def strict(value):
    """JSON text that tells 1 from 1.0 and True from 1, member order aside."""
    return json.dumps(value, sort_keys=True)


vectors = [
    v
    for path in sorted((ROOT / "conformance").glob("*.json"))
    # The package refuses the lone surrogates these hold; see bench/handwritten.py.
    if path.name != "utf16.json"
    for v in json.loads(path.read_text())
    if v["op"] == "validate" and "options" not in v
]
for v in vectors:
    ours, theirs = hand.validate(v["input"]), mp.validate(v["input"])
    # Unsorted, so that member order must agree too.
    assert json.dumps(ours) == json.dumps(theirs), f"hand-written Python and the package differ on {v['id']}"
    assert strict(theirs) == strict(v["expect"]), f"the package does not give the expected report on {v['id']}"
for message in (sep, hostile):
    assert json.dumps(hand.validate(message)) == json.dumps(mp.validate(message))
    # model_validate raises on a message it refuses; the envelope must have
    # been read through its alias, not kept as an extra member.
    assert isinstance(Envelope.model_validate(message["params"]["_meta"][KEY]), Envelope)
    assert isinstance(Message.model_validate(message).params.meta.invocation, Envelope)

# --- Timing ---------------------------------------------------------------------


def tasks(message):
    """Each task as the function timed and its one argument."""
    return {
        "validate": (mp.validate, message),
        "pydantic Envelope.model_validate": (Envelope.model_validate, message["params"]["_meta"][KEY]),
        "pydantic Message.model_validate": (Message.model_validate, message),
        "hand-written validate": (hand.validate, message),
    }


def measure(message):
    # A statement timeit compiles into its loop: no wrapper call per call.
    timers = {name: timeit.Timer("f(m)", globals={"f": f, "m": m}) for name, (f, m) in tasks(message).items()}
    # Calls per round, enough for 0.2 s (timeit's autorange); it warms up too.
    numbers = {name: timer.autorange()[0] for name, timer in timers.items()}
    per_call = {name: [] for name in timers}
    names = list(timers)
    for round in range(rounds):
        # A different order each round, so no task always runs first.
        for name in names[round % len(names):] + names[: round % len(names)]:
            per_call[name].append(timers[name].timeit(numbers[name]) / numbers[name] * 1e9)
    return {name: statistics.median(values) for name, values in per_call.items()}


def ns(value):
    return f"{value / 1000:.1f} µs" if value >= 10_000 else f"{value:.0f} ns"


print(f"hand-written Python agrees with the package on {len(vectors)} vectors and both requests")
print(f"{rounds} rounds; median ns per call\n")
results = {"SEP example": measure(sep), "hostile": measure(hostile)}
names = list(results["SEP example"])
width = max(map(len, names))
print(f"{'':<{width}}  {'SEP example':>12}  {'hostile':>12}")
for name in names:
    print(f"{name:<{width}}  {ns(results['SEP example'][name]):>12}  {ns(results['hostile'][name]):>12}")

print("\nratios (SEP example; hostile in brackets)")


def line(label, a, b):
    sep_ratio = results["SEP example"][a] / results["SEP example"][b]
    hostile_ratio = results["hostile"][a] / results["hostile"][b]
    print(f"  {label:<50} {sep_ratio:>7.2f}×  ({hostile_ratio:.2f}×)")


line("validate / pydantic envelope (goal <= 2)", "validate", "pydantic Envelope.model_validate")
line("validate / pydantic message", "validate", "pydantic Message.model_validate")
line("validate / hand-written validate (goal < 1)", "validate", "hand-written validate")
