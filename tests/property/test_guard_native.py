"""The native trace guard (``ingest/_guard_native.c``) decides exactly as its Python twins.

Traces are generated as JSON, written out and decoded by the real msgspec decoder, so the
kernel reads the same Structs the scanner hands it: argument trees nested to and beyond
the depth bound, more than 32 keys, astral, private-use and other non-ASCII keys (UTF-16
order differs from code-point order between astral characters and U+E000-U+FFFF), huge
integers, extreme floats, booleans beside integers, empty containers, sequences that do not
increase or are floats, counts out of range. Each trace is compared on three paths:

* native: the kernel's ``struct_guard`` (with the Python deciding what it hands back),
* python: ``native_decode.struct_guard`` (the kernels refused),
* plain: the generic guard ``guard_signed`` on the line parsed as plain JSON.

Argument trees are also compared directly (``signed_args``, ``shape_signature``,
``value_floats``) with hostile Python values the decoder never makes: lone surrogates, keys
whose UTF-16 spellings collide, subclasses, tuples, NaN, infinities, foreign objects, for
which the kernel must agree or answer NotImplemented. Scanning whole lines must give the
same traces and diagnostics on all three paths.
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_entropy.ingest.native import ScanRecords, SessionScanner
from pytest_entropy.ingest.native_decode import (
    struct_guard,
)
from tests.native_support import paths

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Keys from characters whose UTF-16 order differs from their code-point order (astral
# against U+E000-U+FFFF), Latin-1, the signature's own punctuation and plain ASCII.
KEY_CHARACTERS = [
    "a", "b", "Z", "0", "_", ":", ",", "{", "é", "ÿ", "Ā", "中", "…",
    "\ue000", "\uffff", "\ufffd", "\U00010000", "\U0001f600", "\U0010ffff",
]  # fmt: skip
keys = st.text(st.sampled_from(KEY_CHARACTERS), max_size=4)

BIG_INTEGERS = [
    2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64, 2**64 + 1, -(2**63), -(2**63) - 1,
    10**30, -(10**30),
]  # fmt: skip
EXTREME_FLOATS = [1e308, -1e308, -0.0, 0.0, 5e-324, 2.0**53, 1.5, 9007199254740991.0]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.integers(),
    st.sampled_from(BIG_INTEGERS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(EXTREME_FLOATS),
    st.text(max_size=3),
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(keys, inner, max_size=4),
    )


json_values = st.recursive(scalars, _containers, max_leaves=10)


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    """A chain of containers 10 to 17 deep (the bound is 14 below ``args``)."""
    value = draw(st.one_of(scalars, st.just({}), st.just([])))
    for _ in range(draw(st.integers(10, 17))):
        value = [value] if draw(st.booleans()) else {draw(keys): value}
    return value


@st.composite
def wide_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """More than 32 keys (some of them nested dicts, to cut the list at each depth)."""
    wide = draw(st.dictionaries(st.text(max_size=3), st.none(), min_size=30, max_size=40))
    for key in draw(st.lists(st.sampled_from(sorted(wide)), max_size=4)):
        wide[key] = draw(json_values)
    for key in draw(st.lists(keys, max_size=3)):
        wide[key] = draw(scalars)
    return wide


arg_values = st.one_of(scalars, json_values, deep_values(), wide_dicts())
arg_trees = st.one_of(
    st.dictionaries(keys, scalars, max_size=5),  # flat: the cached Python shortcut
    st.dictionaries(keys, arg_values, max_size=5),
    wide_dicts(),
    st.builds(lambda d: {"k": d}, deep_values()),
)

NUMBERS = st.one_of(
    st.sampled_from([0, 1, 2, 7, 0.0, 1.0, 3.0, -0.0, -1, 1.5, 2**53 - 1, 2**53]),
    st.sampled_from([9007199254740991.0, 9007199254740992.0, 2**70, -(2**70), 1e300, -1e-300]),
    st.integers(),
)
STAGES = ["resolve", "prepare", "validate", "approve", "invoke", "guard"]


@st.composite
def sequences(draw: st.DrawFn, count: int) -> list[Any]:
    values: list[Any] = []
    current = draw(st.integers(0, 3))
    for _ in range(count):
        step = draw(st.sampled_from(["int", "int", "int", "float", "same", "back", "any"]))
        if step == "int":
            current += draw(st.integers(1, 3))
            values.append(current)
        elif step == "float":
            current += draw(st.integers(1, 3))
            values.append(float(current))
        elif step == "same":
            values.append(current)
        elif step == "back":
            values.append(current - draw(st.integers(1, 5)))
        else:
            values.append(draw(NUMBERS))
    return values


@st.composite
def operations(draw: st.DrawFn, sequence: Any) -> dict[str, Any]:
    op: dict[str, Any] = {
        "type": "call",
        "sequence": sequence,
        "ref": draw(st.sampled_from(["pi.read", "pi.write", "x", "é.\U0001f600"])),
        "args": draw(arg_trees),
        "outcome": draw(st.sampled_from(["succeeded", "failed", "aborted", "timed_out"])),
    }
    if draw(st.booleans()):
        op["failureStage"] = draw(st.sampled_from(STAGES))
    if draw(st.booleans()):
        op["result"] = draw(st.one_of(scalars, json_values, deep_values()))
    if draw(st.booleans()):
        op["provider"] = "p"
    return op


def _count() -> st.SearchStrategy[Any]:
    return st.one_of(st.just(0), NUMBERS)


@st.composite
def traces(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(0, 4))
    ops = [draw(operations(sequence)) for sequence in draw(sequences(count))]
    return {
        "kind": "pi-fabric.execution",
        "version": draw(st.sampled_from([1, 1, 1, 1.0, 2, 0, 1.5, 2**64, -1])),
        "outcome": "succeeded",
        "phases": draw(st.lists(st.sampled_from(["build", "fix"]), max_size=2)),
        "operations": ops,
        "counts": {
            "droppedValues": draw(_count()),
            "truncatedValues": draw(_count()),
            "redactedValues": draw(_count()),
            "droppedOperations": draw(_count()),
        },
    }


def _line(trace: dict[str, Any]) -> bytes:
    return json.dumps({"details": {"trace": trace}}, ensure_ascii=False).encode()


def _native_guard(kernel: Any, trace: Any) -> Any:
    guarded = kernel.struct_guard(trace)
    return struct_guard(trace) if guarded is NotImplemented else guarded


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, floats bit for bit, in the same order."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return math.copysign(1.0, a) == math.copysign(1.0, b) and (
            a == b or (math.isnan(a) and math.isnan(b))
        )
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


class _Key(str):
    pass


class _Int(int):
    pass


HOSTILE_LEAVES = st.one_of(
    scalars,
    st.sampled_from([math.inf, -math.inf, math.nan, (1, 2), (), _Int(3), _Key("s"), b"x"]),
    st.builds(object),
    st.sets(st.integers(), max_size=2),
)
HOSTILE_KEYS = st.one_of(
    keys,
    # Lone surrogates, and the surrogate-pair spelling of an astral character (its UTF-16
    # code units equal the astral character's).
    st.sampled_from(["\ud83d", "\ude00", "\ud83d\ude00", "\U0001f600", "\ud800\udc00"]),
    st.builds(_Key, keys),
)
hostile_trees = st.recursive(
    st.dictionaries(HOSTILE_KEYS, HOSTILE_LEAVES, max_size=6),
    lambda inner: st.dictionaries(
        HOSTILE_KEYS, st.one_of(HOSTILE_LEAVES, inner, st.lists(inner, max_size=2)), max_size=5
    ),
    max_leaves=8,
)


def _python_or_error(function: Any, value: Any) -> Any:
    try:
        return function(value)
    except Exception as error:  # the generic guard turns these into "guard error: ..."
        return type(error)


def _scan(data: bytes) -> tuple[list[str], dict[str, Any]]:
    evidence = ScanRecords()
    scanner = SessionScanner(evidence.traces.append)
    scanner.scan_stream(io.BytesIO(data))
    return (
        [json.dumps(t.to_json(), sort_keys=True) for t in evidence.traces],
        scanner.diagnostics.to_json(),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batch=st.lists(traces(), max_size=5),
    escaped=st.booleans(),
    lone=st.sampled_from([None, "\ud83d", "\ud83d\ude00", "\ude00\U0001f600"]),
)
def test_scanning_agrees_on_every_path(
    batch: list[dict[str, Any]], escaped: bool, lone: str | None
) -> None:
    """Whole lines: msgspec-decoded ones meet the kernel's struct_guard; lines with a lone
    surrogate (which msgspec refuses) meet the generic guard with the kernel's signed_args."""
    if lone is not None:
        for trace in batch:
            for op in trace["operations"]:
                op["args"] = {lone: 1, "\U0001f600": [op["args"]], **op["args"]}
    data = b"".join(
        json.dumps({"details": {"trace": t}}, ensure_ascii=escaped or lone is not None).encode()
        + b"\n"
        for t in batch
    )
    results = []
    for kind in ("native", "python", "plain"):
        with paths(kind):
            results.append(_scan(data))
    assert results[0] == results[1] == results[2]
