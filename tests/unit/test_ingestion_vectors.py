"""Session-JSONL ingestion vectors (vectors/ingestion.json): traces, audits, observations.

Every case runs three ways that must agree: text lines through the generic path, the
file's bytes through the accelerated path, and the file's bytes with the accelerator off.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.meter import MeterState
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.native import ScanRecords, SessionScanner
from pytest_entropy.run.corpus import measure_plan, read_corpus, source_files
from tests.native_core_support import state_snapshot
from tests.vectors import cases_of, ids

CASES = cases_of("ingestion")


def _scan_text(lines: list[str]) -> ScanRecords:
    evidence = ScanRecords()
    scanner = SessionScanner(
        evidence.traces.append,
        on_audit=evidence.audit_calls.append,
        on_value=evidence.value_observations.append,
    )
    scanner.feed_lines(lines)
    return evidence


def _scan_bytes(data: bytes, *, accelerate: bool) -> tuple[ScanRecords, ScanDiagnostics]:
    evidence = ScanRecords()
    scanner = SessionScanner(
        evidence.traces.append,
        on_audit=evidence.audit_calls.append,
        on_value=evidence.value_observations.append,
        accelerate=accelerate,
    )
    scanner.scan_stream(io.BytesIO(data))
    return evidence, scanner.diagnostics


def _as_json(evidence: ScanRecords) -> tuple[list[Any], list[Any], list[Any]]:
    return (
        [trace.to_json() for trace in evidence.traces],
        [call.to_json() for call in evidence.audit_calls],
        [observation.to_json() for observation in evidence.value_observations],
    )


def _check(evidence: ScanRecords, expected: dict[str, Any]) -> None:
    traces, audits, observations = _as_json(evidence)
    assert traces == expected["expectedTraces"]
    assert audits == expected["expectedAuditCalls"]
    assert observations == expected["expectedValueObservations"]
    # Values compare equal across int/float; their types must match too (1 vs 1.0 matter
    # nowhere in output, but True must never become 1).
    for got, want in zip(observations, expected["expectedValueObservations"], strict=True):
        assert type(got["value"]) is type(want["value"]) or {
            type(got["value"]),
            type(want["value"]),
        } <= {int, float}


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _single(case: dict[str, Any]) -> list[str]:
    return "\n".join(case["lines"]).split("\n")


SINGLE = [case for case in CASES if "files" not in case]
MULTI = [case for case in CASES if "files" in case]


@pytest.mark.parametrize("case", SINGLE, ids=ids(SINGLE))
def test_single_file_scan(case: dict[str, Any]) -> None:
    _check(_scan_text(_single(case)), case)
    text = "\n".join(case["lines"])
    if not _encodable(text):
        pytest.skip("the lines hold lone surrogates, which no UTF-8 file can")
    data = text.encode("utf-8")
    fast, fast_diagnostics = _scan_bytes(data, accelerate=True)
    generic, generic_diagnostics = _scan_bytes(data, accelerate=False)
    _check(fast, case)
    _check(generic, case)
    assert fast_diagnostics.traces == generic_diagnostics.traces
    assert fast_diagnostics.rejected_traces == generic_diagnostics.rejected_traces


@pytest.mark.parametrize("case", MULTI, ids=ids(MULTI))
def test_window_evidence_scans_each_file_alone(case: dict[str, Any]) -> None:
    combined = ScanRecords()
    windows = []
    for item in case["files"]:
        evidence = _scan_text("\n".join(item["lines"]).split("\n"))
        combined.traces.extend(evidence.traces)
        combined.audit_calls.extend(evidence.audit_calls)
        combined.value_observations.extend(evidence.value_observations)
        windows.append(
            {
                "file": item["file"],
                "observations": [o.to_json() for o in evidence.value_observations],
            }
        )
    _check(combined, case)
    assert windows == case["expectedObservationWindows"]


@pytest.mark.parametrize("case", [c for c in MULTI if "corpusMode" in c])
def test_corpus_mode_is_one_concatenated_scan(case: dict[str, Any]) -> None:
    lines = [line for item in case["files"] for line in item["lines"]]
    _check(_scan_text(lines), case["corpusMode"])


@pytest.mark.parametrize("case", SINGLE, ids=ids(SINGLE))
def test_the_corpus_meters_the_vector_traces(
    case: dict[str, Any], scan_path: str, tmp_path: Path
) -> None:
    """The pipeline's meter (the Rust core, or the plain scan) hears exactly the traces the
    vector expects, and counts the file's lines as the plain scan of its records does."""
    text = "\n".join(case["lines"])
    if not _encodable(text):
        pytest.skip("the lines hold lone surrogates, which no UTF-8 file can")
    path = tmp_path / "session.jsonl"
    path.write_bytes(text.encode("utf-8"))
    read = read_corpus(source_files([path]), measure_plan())
    expected = MeterState()
    expected.add_traces(case["expectedTraces"])
    assert state_snapshot(read.state.copy()) == state_snapshot(expected)
    _, diagnostics = _scan_bytes(text.encode("utf-8"), accelerate=False)
    found = read.diagnostics
    for name in ("lines", "trace_lines", "model_lines", "traces", "rejected_traces"):
        assert getattr(found, name) == getattr(diagnostics, name), name
    assert found.rejection_reasons == diagnostics.rejection_reasons


def test_every_vector_was_exercised() -> None:
    assert len(CASES) == 105
