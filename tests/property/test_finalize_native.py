"""The finalising kernel (``core/_finalize_native.c``) against its Python twins.

A state's report must come out the same on the three paths (native, python, plain): every
number bit for bit (``repr`` of the report: floats keep their bits, -0.0 is not 0.0), every
row and its order, the shapes listed, the report hash. The kernel's pieces -
``static_freedom``, ``entropy_bits``, ``round_metric``, ``flow_terms``, ``ref_scores`` - must
equal the Python they replace on generated and hostile inputs, or hand them back.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core import meter_report
from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.core.meter_state import _RefAccumulator
from pytest_entropy.testing import strategies as es
from tests.native_support import paths

KERNEL = "core._finalize_native"
PATHS = ("native", "python", "plain")

REFS = ["pi.read", "pi.write", "pi.读", "pi.\U0001f600", "fabric.discovery.x", "a", "B", ""]
SIGNATURES = [
    "()",
    "(path:str)",
    "(a:num,b:str)",
    "(ζ:str)",
    "(\U0001f600:num)",
    "(\ud83d\ude00:num)",  # code-unit equal to the astral one above
    "(\uffff:str)",
    "(\ue000:str)",
]
STAGES = [None, "resolve", "validate", "invoke", "guard", "", "\U0001f600"]
OUTCOMES = ["succeeded", "failed", "aborted", "timed_out"]
MODELS = [None, "", "p/a", "p/b", "модель", "\U0001f600/x"]

operation = st.tuples(
    st.sampled_from(REFS),
    st.just({}),
    st.sampled_from(OUTCOMES),
    st.sampled_from(STAGES),
    st.sampled_from(SIGNATURES),
)
trace = st.tuples(
    st.lists(operation, max_size=6),
    st.sampled_from([None, "t1", "t2", "", "задача"]),
    st.sampled_from(MODELS),
)


@st.composite
def surfaces(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(REFS), max_size=6))
    return {
        "version": 1,
        "actions": [{"ref": name, "inputSchema": draw(es.schemas())} for name in names],
    }


repairs = st.lists(
    st.builds(
        lambda ref: {"kind": "alias", "ref": ref, "from": "a", "to": "b"},
        st.sampled_from(REFS),
    ),
    max_size=4,
)


def _bits(value: float) -> str:
    return struct.pack("<d", value).hex()


def finalized(
    traces: list[Any], surface: Any, rows: Any, kind: str, retain: bool = False
) -> tuple[str, str]:
    with paths(kind):
        state = MeterState(retain_terms=retain)
        for operations, task, model in traces:
            state.add_signed(operations, task, model)
        report = state.finalize(surface, rows, "digest")
        return repr(report), report_hash(report)


@settings(max_examples=100, deadline=None)
@given(traces=st.lists(trace, max_size=12), surface=st.one_of(st.none(), surfaces()), rows=repairs)
def test_reports_agree_on_every_path(traces: list[Any], surface: Any, rows: Any) -> None:
    seen = {kind: finalized(traces, surface, rows, kind) for kind in PATHS}
    assert seen["native"] == seen["python"] == seen["plain"]


hostile_schemas = st.sampled_from(
    [
        {"type": "object", "properties": {"\U0001f600": {"type": "string"}, "a": {}}},
        {"type": "object", "properties": {"\ue000": {"type": "string"}, "\U00010000": {}}},
        {"type": "object", "properties": {1: {"type": "string"}}},
        {"type": "object", "properties": {"b": {}, "a": {"type": "number"}}, "required": ["a", 1]},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": 0},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
        {"type": "object", "properties": {}},
        {"type": "object", "properties": []},
        {"type": "array"},
        {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {}}}},
        {"anyOf": {"type": "string"}, "oneOf": [{"type": "string"}, {"type": "boolean"}]},
        {"anyOf": []},
        {"oneOf": [True, 1, None]},
        {"enum": []},
        {"enum": list(range(63))},
        {"enum": list(range(64))},
        {"enum": list(range(65))},
        {"enum": list(range(1000))},
        {"enum": "ab", "const": 1},
        {"const": None, "type": "string"},
        {"type": "String"},
        {"type": ["string"]},
        {1: 2},
        [],
        "string",
        None,
    ]
)


counts = st.dictionaries(
    st.text(max_size=3),
    st.one_of(
        st.integers(-5, 50),
        st.integers(),
        st.sampled_from([2**53, 2**53 + 1, -(2**53), 2**60]),
        st.floats(allow_nan=False),
        st.booleans(),
    ),
    max_size=8,
)


sequences = st.dictionaries(
    st.sampled_from(["t1", "t2", "", "(none)"]),
    st.dictionaries(st.text(max_size=3), st.integers(-3, 40), max_size=5),
    max_size=4,
)


def accumulator(
    calls: Any = 3,
    failed: Any = 1,
    signatures: Any = None,
    stages: Any = None,
    churn_pairs: Any = 1,
    churn_sum: Any = 0.25,
) -> _RefAccumulator:
    acc = _RefAccumulator()
    acc.calls = calls
    acc.succeeded = 2
    acc.failed = failed
    acc.signatures = {"(a:str)": 2, "()": 1} if signatures is None else signatures
    acc.stages = {"validate": 1} if stages is None else stages
    acc.churn_pairs = churn_pairs
    acc.churn_sum = churn_sum
    return acc


HOSTILE_ACCUMULATORS = [
    accumulator(calls=2**60),
    accumulator(calls=True),
    accumulator(failed=1.5),
    accumulator(signatures={"a": 2**53, "b": 1}),
    accumulator(signatures={"a": 1.0}),
    accumulator(stages={"x": -1, "y": 3}),
    accumulator(churn_sum=1),
    accumulator(churn_pairs=0, churn_sum="unused"),
    accumulator(churn_pairs=2**54),
    accumulator(signatures={"\U0001f600": 1, "\ud83d\ude00": 1, "a": 1}),
    accumulator(signatures={f"s{i}": i % 3 for i in range(20)}),
    accumulator(signatures={"b": 1, "a": 1, "\uffff": 1, "\ue000": 1}),
]


def test_model_rows_take_the_global_order() -> None:
    refs = {"b": 1, "a": 2}
    assert meter_report.ref_order(refs, ["a", "b", "c"]) == ["a", "b"]
    # A ref outside the given order: sorted anew.
    assert meter_report.ref_order({"z": 1, "a": 2}, ["a"]) == ["a", "z"]
    with paths("plain"):
        assert meter_report.ref_order({"\U0001f600": 1, "\uffff": 2}, None) == [
            "\U0001f600",
            "\uffff",
        ]


@pytest.mark.parametrize("retain", [False, True])
def test_merged_states_finalise_alike(retain: bool) -> None:
    traces = [
        ([("pi.read", {}, "failed", "validate", "(a:str)")], "t1", "p/a"),
        ([("pi.read", {}, "succeeded", None, "(a:num)")], "t1", "p/a"),
        ([("pi.\U0001f600", {}, "succeeded", None, "(\U0001f600:num)")], None, "p/b"),
    ]
    seen = {kind: finalized(traces, None, None, kind, retain) for kind in PATHS}
    assert seen["native"] == seen["python"] == seen["plain"]
