"""The native writer: whatever foreign calls hold, the lines pass the guard and keep the shape.

Every call becomes exactly one guarded operation with the signature of its recorded
arguments, and one audit carrying those arguments verbatim, however deep, odd-numbered or
large they are.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_entropy.core.fingerprint import shape_signature
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import scan_lines
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter
from pytest_entropy.testing import strategies as es

hostile_numbers = st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 2**60])


def nested(depth: int) -> Any:
    value: Any = {"leaf": [1.5]}
    for level in range(depth):
        value = {"down": value, "side": [level]} if level % 2 else [value, {"n": level}]
    return value


@st.composite
def foreign_calls(draw: st.DrawFn) -> ForeignCall:
    args = draw(es.args())
    if draw(st.booleans()):
        args[draw(es.keys)] = draw(st.one_of(hostile_numbers, st.integers(15, 17).map(nested)))
    outcome = draw(st.sampled_from(["succeeded", "failed", "aborted", "timed_out"]))
    stage = draw(st.sampled_from([None, "resolve", "validate", "invoke"]))
    return ForeignCall(draw(st.sampled_from(["read", "mcp.x.render", "a"])), args, outcome, stage)


def _exact(value: Any) -> bool:
    """Whether the JSON text JavaScript writes reads back to the same JSON value."""
    if isinstance(value, float):
        return math.isfinite(value)  # JavaScript writes NaN and infinities as null
    if isinstance(value, dict):
        return all(_exact(item) for item in value.values())
    if isinstance(value, list):
        return all(_exact(item) for item in value)
    return True


def _same(left: Any, right: Any) -> bool:
    """JSON equality with numbers compared as the doubles JavaScript reads."""
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return float(left) == float(right)
    if isinstance(left, dict) and isinstance(right, dict):
        # Key order is JavaScript's own-key order (integer-like keys first) once written.
        return set(left) == set(right) and all(_same(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


@settings(max_examples=50)
@given(st.lists(foreign_calls(), max_size=6), st.sampled_from([None, "p/m", "acme/x/y"]))
def test_every_call_is_one_guarded_operation(calls: list[ForeignCall], model: str | None) -> None:
    diagnostics = ScanDiagnostics()
    writer = NativeWriter(ReadOptions(), diagnostics)
    expected = [(call.name, call.args, call.outcome, call.stage) for call in calls]
    lines = list(writer.lines(ForeignTrace("task", model, calls)))
    evidence = scan_lines(lines, diagnostics=diagnostics)
    assert diagnostics.rejected_traces == 0 and diagnostics.malformed_lines == 0
    (trace,) = evidence.traces
    assert trace.task_key == "task" and trace.model == model
    assert len(trace.operations) == len(expected)
    for operation, (name, args, outcome, stage) in zip(trace.operations, expected, strict=True):
        assert operation.ref == name
        assert operation.outcome == outcome
        assert operation.failure_stage == (stage if outcome == "failed" else None)
        assert shape_signature(operation.args) == shape_signature(args)
    assert [audit.ref for audit in evidence.audit_calls] == [name for name, *_ in expected]
    for audit, (_, args, _, _) in zip(evidence.audit_calls, expected, strict=True):
        if _exact(args):
            assert _same(audit.args, args)


def test_a_trace_past_the_size_bound_is_cut_not_lost() -> None:
    diagnostics = ScanDiagnostics()
    writer = NativeWriter(ReadOptions(), diagnostics)
    wide = {f"key{index}": index for index in range(400)}
    calls = [ForeignCall("wide", dict(wide), "succeeded") for _ in range(120)]
    lines = list(writer.lines(ForeignTrace("task", None, calls)))
    assert len(lines) > 1
    evidence = scan_lines(lines, diagnostics=diagnostics)
    assert diagnostics.rejected_traces == 0
    assert sum(len(trace.operations) for trace in evidence.traces) == 120
    assert diagnostics.split_traces == len(lines) - 1
    assert {trace.task_key for trace in evidence.traces} == {"task"}


def test_one_call_past_the_bound_is_counted_and_audited() -> None:
    diagnostics = ScanDiagnostics()
    writer = NativeWriter(ReadOptions(), diagnostics)
    huge = {f"k{index}": "v" for index in range(60_000)}
    lines = list(writer.lines(ForeignTrace("task", None, [ForeignCall("huge", huge, "failed")])))
    evidence = scan_lines(lines, diagnostics=diagnostics)
    assert evidence.traces == [] and diagnostics.rejected_traces == 1
    assert diagnostics.rejection_reasons == {"trace larger than 512 KiB": 1}
    assert [audit.ref for audit in evidence.audit_calls] == ["huge"]
