"""Trace guard details beyond the vectors: the size bound and its shortcut."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from pytest_entropy.core.canonical import js_stringify
from pytest_entropy.ingest.guard import TRACE_SIZE_BOUND, guard_trace
from pytest_entropy.ingest.native import ScanRecords, SessionScanner

COUNTS = {"droppedValues": 0, "truncatedValues": 0, "redactedValues": 0, "droppedOperations": 0}


def trace_with(args: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "pi-fabric.execution",
        "version": 1,
        "outcome": "succeeded",
        "phases": ["p"],
        "operations": [
            {"type": "call", "sequence": 0, "ref": "pi.read", "args": args, "outcome": "succeeded"}
        ],
        "counts": COUNTS,
    }


def scan_bytes(line: bytes, *, accelerate: bool) -> ScanRecords:
    evidence = ScanRecords()
    SessionScanner(evidence.traces.append, accelerate=accelerate).scan_stream(
        io.BytesIO(line + b"\n")
    )
    return evidence


def _line(source_args: str) -> bytes:
    template = json.dumps({"details": {"trace": trace_with({"v": "@@"})}}, separators=(",", ":"))
    return template.replace('"@@"', source_args).encode()


@pytest.mark.parametrize("accelerate", [True, False])
def test_exponent_numbers_that_grow_past_the_bound_are_caught(accelerate: bool) -> None:
    # "1e20" is 4 bytes in the source and "100000000000000000000" (21) in JavaScript: the
    # line fits the bound while the trace's JavaScript text does not.
    count = TRACE_SIZE_BOUND // 20
    line = _line("[" + ",".join(["1e20"] * count) + "]")
    assert len(line) < TRACE_SIZE_BOUND
    trace = json.loads(line)["details"]["trace"]
    assert len(js_stringify(trace).encode()) > TRACE_SIZE_BOUND
    assert scan_bytes(line, accelerate=accelerate).traces == []


@pytest.mark.parametrize("accelerate", [True, False])
def test_a_big_line_whose_trace_fits_is_measured(accelerate: bool) -> None:
    # Tool output outside the trace can make the line far larger than the bound.
    trace = trace_with({"path": "a"})
    record = {"message": {"content": "x" * (2 * TRACE_SIZE_BOUND)}, "details": {"trace": trace}}
    line = json.dumps(record, separators=(",", ":")).encode()
    assert len(scan_bytes(line, accelerate=accelerate).traces) == 1


def test_guard_reports_reasons() -> None:
    assert guard_trace(trace_with({"a": 1}))[1] == ""
    bad = trace_with({"a": 1})
    bad["operations"][0]["normalization"] = {}
    assert guard_trace(bad) == ((), "unknown operation key")
    assert guard_trace(None) == ((), "trace is not an object")
