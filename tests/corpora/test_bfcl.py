"""BFCL result + score files: v4 gpt-oss runs (single and multi-turn) and the 2024 leaderboard."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_entropy.surfaces import load_surface
from tests.formats_support import corpus, corpus_operations, damage, round_trip

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
    files, diagnostics = corpus([shared_corpora / V4], "bfcl", surface=surface)
    assert len(files) == 32
    assert sum(len(evidence.traces) for _, evidence in files) == 8482  # every entry id
    calls = Counter()
    multi: dict[str, list] = {model: [] for model in MODELS_V4}
    for path, evidence in files:
        for trace in evidence.traces:
            calls[trace.model] += len(trace.operations)
            if "multi_turn" in path.name:
                multi[trace.model].extend(trace.operations)
    assert calls == {"openai/gpt-oss-120b": 7020, "openai/gpt-oss-20b": 7203}
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
    assert {
        model: Counter(op.failure_stage for op in ops if op.outcome == "failed")["resolve"]
        for model, ops in multi.items()
    } == {
        "openai/gpt-oss-120b": 20,
        "openai/gpt-oss-20b": 232,  # one more unknown name sits in a step that never ran
    }
    assert diagnostics.undecodable_arguments == 2 + 19
    assert diagnostics.foreign_calls == 14223 and diagnostics.unscored_entries == 0
    assert damage(diagnostics) == {}


def test_v1_leaderboard_structured_calls(shared_corpora: Path) -> None:
    files, diagnostics = corpus([shared_corpora / V1], "bfcl")
    assert len(files) == 12 * 12
    assert sum(len(evidence.traces) for _, evidence in files) == 20400
    calls = Counter(
        trace.model for _, evidence in files for trace in evidence.traces for _ in trace.operations
    )
    # Six function-calling models produce structured calls; prompt-style models' raw strings
    # are counted as unstructured outputs, never decoded.
    assert calls == {
        "bfcl/claude-3-5-sonnet-20240620-FC": 2066,
        "bfcl/gemini-1.5-pro-preview-0514": 2176,
        "bfcl/gpt-4o-2024-08-06-FC": 2371,
        "bfcl/gpt-4o-mini-2024-07-18-FC": 2394,
        "meetkai/functionary-small-v3.1-FC": 2421,
        "bfcl/mistral-large-2407-FC-Any": 2661,
    }
    assert diagnostics.unstructured_outputs == 6 * 1700 + 204 + 33 + 280 + 262 + 211 + 368
    assert damage(diagnostics) == {}
    ops = corpus_operations(files)
    assert 0 < sum(op.outcome == "failed" for op in ops) < len(ops)


def test_converted_results_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    sources = [
        shared_corpora / V4 / "2025-11-12-main" / "result" / "openai_gpt-oss-20b",
        shared_corpora / V1 / "gpt-4o-2024-08-06-FC",
    ]
    surface_path = shared_corpora / V4_DOCS
    direct, native = round_trip(
        sources, tmp_path, "bfcl", surface_path=surface_path, surface=load_surface(surface_path)
    )
    assert direct == native
