"""measureEntropy and measureSessionCorpus vectors (vectors/metric.json), byte for byte."""

from __future__ import annotations

import io
from typing import Any

import pytest

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.meter import MeterState, measure, report_hash
from pytest_entropy.core.records import Report
from pytest_entropy.core.status import format_status_lines, measure_session_corpus
from pytest_entropy.ingest.native import SessionScanner
from pytest_entropy.ingest.native_scan import NativeTraceReader
from tests.native_core_support import native_core_module
from tests.vectors import cases_of, ids

MEASURE = cases_of("metric", "measureEntropy")
CORPUS = cases_of("metric", "measureSessionCorpus")


def _kwargs(case: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if "surface" in case:
        kwargs["surface"] = case["surface"]
    if "repairs" in case:
        kwargs["repairs"] = case["repairs"]
    if "catalogDigest" in case:
        kwargs["catalog_digest"] = case["catalogDigest"]
    return kwargs


@pytest.mark.parametrize("case", MEASURE, ids=ids(MEASURE))
def test_measure_entropy(case: dict[str, Any]) -> None:
    report = measure(case["traces"], **_kwargs(case))
    assert report.to_json() == case["expectedReport"]
    assert canonical_json(report.to_json()) == case["expectedCanonicalJson"]
    assert report_hash(report) == case["expectedHash"]


@pytest.mark.parametrize("case", MEASURE, ids=ids(MEASURE))
def test_merge_at_every_split_equals_one_pass(case: dict[str, Any]) -> None:
    traces = case["traces"]
    kwargs = _kwargs(case)
    for cut in range(len(traces) + 1):
        left = MeterState()
        left.add_traces(traces[:cut])
        right = MeterState()
        right.add_traces(traces[cut:])
        merged = left.merge(right).finalize(**kwargs)
        assert report_hash(merged) == case["expectedHash"], f"split at {cut}"


@pytest.mark.parametrize("case", MEASURE, ids=ids(MEASURE))
def test_report_json_round_trip(case: dict[str, Any]) -> None:
    report = measure(case["traces"], **_kwargs(case))
    assert Report.from_json(report.to_json()) == report


def _file_state(lines: list[str], path: str = "plain") -> MeterState:
    """A session file's meter state: its lines as text through the plain scanner, or as the
    file's bytes through the Rust core (``path="native"``)."""
    state = MeterState()
    text = "\n".join(lines)
    if path == "plain":
        SessionScanner(meter=state).feed_lines(text.split("\n"))
        return state
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        pytest.skip("the lines hold lone surrogates, which no UTF-8 file can")
    NativeTraceReader(native_core_module(), meter=state).scan_stream(io.BytesIO(data))
    return state


@pytest.mark.parametrize("case", CORPUS, ids=ids(CORPUS))
def test_measure_session_corpus(case: dict[str, Any], scan_path: str) -> None:
    files = [(item["file"], _file_state(item["lines"], scan_path)) for item in case["files"]]
    corpus = measure_session_corpus(files, case.get("surface"), case.get("catalogDigest"))
    assert corpus.to_json() == case["expected"]


def test_status_session_line_of_v2_cv_32(scan_path: str) -> None:
    (case,) = [c for c in CORPUS if c["id"] == "V2-CV-27:4-surface"]
    files = [(item["file"], _file_state(item["lines"], scan_path)) for item in case["files"]]
    corpus = measure_session_corpus(files, case["surface"], case["catalogDigest"])
    lines = format_status_lines(case["surface"], corpus)
    assert lines[-1] == (
        "session entropy (observed): 1 sessions · latest 1 ops · behavioral 0.000000 + "
        "surface 0.375000 = 0.375000 · lower is better · slope 0.000000/session · "
        "ratchet holding"
    )
