"""tau-bench historical trajectories (gpt-4o, airline) against the commit-matched tools."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_entropy.ingest.surfaces import load_surface
from tests.formats_support import corpus, corpus_operations, damage, round_trip

TRAJECTORIES = "tau-bench-historical/gpt-4o-airline.json"
TOOLS = "tau-bench-historical/tools_at_7362a17.json"


def test_records_calls_and_errors(shared_corpora: Path) -> None:
    surface = load_surface(shared_corpora / TOOLS)
    assert len(surface["actions"]) == 30  # 14 airline + 16 retail tools
    files, diagnostics = corpus([shared_corpora / TRAJECTORIES], surface=surface)
    ((_, evidence),) = files
    assert len(evidence.traces) == 200
    assert len({trace.task_key for trace in evidence.traces}) == 50  # 50 tasks x 4 trials
    ops = corpus_operations(files)
    assert diagnostics.foreign_calls == len(ops) == 1164
    refs = Counter(op.ref for op in ops)
    assert len(refs) == 14
    assert refs["get_reservation_details"] == 377 and refs["search_direct_flight"] == 141
    failed = Counter(op.ref for op in ops if op.outcome == "failed")
    assert failed == {
        "update_reservation_flights": 42,
        "book_reservation": 30,
        "update_reservation_baggages": 1,
    }
    # No unknown tool, no schema violation: every Error: result is a runtime failure.
    assert {op.failure_stage for op in ops if op.outcome == "failed"} == {"invoke"}
    assert {trace.model for trace in evidence.traces} == {"tau-bench/gpt-4o"}
    assert damage(diagnostics) == {} and diagnostics.unanswered_calls == 0


def test_converted_trajectories_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    surface_path = shared_corpora / TOOLS
    direct, native = round_trip(
        [shared_corpora / TRAJECTORIES],
        tmp_path,
        "tau-bench",
        surface_path=surface_path,
        surface=load_surface(surface_path),
    )
    assert direct == native
