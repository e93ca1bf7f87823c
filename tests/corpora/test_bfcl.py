"""BFCL result + score files: v4 gpt-oss runs (single and multi-turn) and the 2024 leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.surfaces import load_surface
from pytest_entropy.sources.locate import expand_session_paths
from tests.formats_support import corpus, damage, measured_hash, round_trip

V4 = "bfcl-v4-results-gpt-oss/results"
V4_DOCS = "bfcl-v4-data/multi_turn_func_doc"
V1 = "bfcl-results-2024-08/result"
MODELS_V4 = {
    "openai/gpt-oss-120b": "2025-11-12-harmony-fixes-2",
    "openai/gpt-oss-20b": "2025-11-12-main",
}


def test_v4_calls_per_model_and_execution_failures(shared_corpora: Path) -> None:
    surface = load_surface(shared_corpora / V4_DOCS)
    assert len(surface["actions"]) == 153  # 162 docs over 12 classes; memory classes share names
    declared = {action["ref"] for action in surface["actions"]}
    options = ReadOptions("bfcl", surface)
    paths = expand_session_paths([shared_corpora / V4], options)
    assert len(paths) == 32
    _, report, diagnostics = measured_hash(paths, options, surface)
    assert report["totals"]["traces"] == 8482  # every entry id
    assert {row["model"]: row["actionOperations"] for row in report["byModel"]} == {
        "openai/gpt-oss-120b": 7020,
        "openai/gpt-oss-20b": 7203,
    }
    assert diagnostics.undecodable_arguments == 2 + 19
    assert diagnostics.foreign_calls == 14223 and diagnostics.unscored_entries == 0
    assert damage(diagnostics) == {}
    files, _ = corpus(
        [path for path in paths if "multi_turn" in path.name], "bfcl", surface=surface
    )
    multi: dict[str, list[Any]] = {model: [] for model in MODELS_V4}
    for _, evidence in files:
        for trace in evidence.traces:
            multi[str(trace.model)].extend(trace.operations)
    assert {model: len(ops) for model, ops in multi.items()} == {
        "openai/gpt-oss-120b": 4459,
        "openai/gpt-oss-20b": 4603,
    }
    # Unknown tool names (harmony channel leakage such as "echo<|channel|>commentary").
    assert {model: sum(op.ref not in declared for op in ops) for model, ops in multi.items()} == {
        "openai/gpt-oss-120b": 20,
        "openai/gpt-oss-20b": 233,
    }
    # Execution errors: the README's 436 / 777 results start with {"error"; 4 / 6 more are
    # objects whose error member follows another key ({"booking_status": false, "error": ...}).
    # 20b adds 17 calls whose arguments never decoded (its step was not executed).
    failed = {model: sum(op.outcome == "failed" for op in ops) for model, ops in multi.items()}
    assert failed == {"openai/gpt-oss-120b": 440, "openai/gpt-oss-20b": 783 + 17}
    resolved = {
        model: sum(op.failure_stage == "resolve" for op in ops) for model, ops in multi.items()
    }
    # One unknown name of 20b sits in a step that never ran (aborted, so no stage).
    assert resolved == {"openai/gpt-oss-120b": 20, "openai/gpt-oss-20b": 232}


def test_v1_leaderboard_structured_calls(shared_corpora: Path) -> None:
    options = ReadOptions("bfcl")
    paths = expand_session_paths([shared_corpora / V1], options)
    assert len(paths) == 12 * 12
    _, report, diagnostics = measured_hash(paths, options, None)
    assert report["totals"]["traces"] == 20400
    calls = {row["model"]: row["actionOperations"] for row in report["byModel"]}
    # Six function-calling models produce structured calls; prompt-style models' raw strings
    # are counted as unstructured outputs, never decoded.
    assert {model: count for model, count in calls.items() if count} == {
        "bfcl/claude-3-5-sonnet-20240620-FC": 2066,
        "bfcl/gemini-1.5-pro-preview-0514": 2176,
        "bfcl/gpt-4o-2024-08-06-FC": 2371,
        "bfcl/gpt-4o-mini-2024-07-18-FC": 2394,
        "meetkai/functionary-small-v3.1-FC": 2421,
        "bfcl/mistral-large-2407-FC-Any": 2661,
    }
    assert len(calls) == 12
    assert diagnostics.unstructured_outputs == 6 * 1700 + 204 + 33 + 280 + 262 + 211 + 368
    assert damage(diagnostics) == {}
    assert 0 < report["totals"]["failed"] < report["totals"]["operations"] == 14089


def test_converted_results_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    sources = [
        shared_corpora / V4 / "2025-11-12-main" / "result" / "openai_gpt-oss-20b" / "multi_turn",
        shared_corpora / V1 / "gpt-4o-2024-08-06-FC",
    ]
    surface_path = shared_corpora / V4_DOCS
    direct, native = round_trip(
        sources, tmp_path, "bfcl", surface_path=surface_path, surface=load_surface(surface_path)
    )
    assert direct == native
