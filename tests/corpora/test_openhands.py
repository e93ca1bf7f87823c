"""OpenHands CodeAct trajectories: the Multi-SWE-bench runs and the replay files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pytest_entropy.ingest.surfaces import load_surface
from tests.formats_support import corpus, corpus_operations, damage, round_trip

ROOT = "openhands-trajectories"
RUNS = "evaluation/benchmarks/multi_swe_bench/examples/output.jsonl"
TRAJS = "tests/runtime/trajs"
RESOLVER = "tests/unit/resolver/mock_output/output.jsonl"
TOOLS = "surface/openhands-codeact-tools@3d22520.json"


def test_multi_swe_bench_runs(shared_corpora: Path) -> None:
    root = shared_corpora / ROOT
    surface = load_surface(root / TOOLS)
    files, diagnostics = corpus([root / RUNS], surface=surface)
    ((_, evidence),) = files
    assert [trace.task_key for trace in evidence.traces] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    ops = corpus_operations(files)
    assert Counter(op.ref for op in ops) == {
        "str_replace_editor": 52,
        "execute_bash": 49,
        "think": 2,
        "finish": 2,
    }
    # 19 non-zero exits; every recorded call validates, so each is an invoke failure.
    assert Counter((op.outcome, op.failure_stage) for op in ops) == {
        ("succeeded", None): 86,
        ("failed", "invoke"): 19,
    }
    # The two enum-violation ErrorObservations name no recorded call: counted, not invented.
    assert diagnostics.unmatched_results == 2
    assert {trace.model for trace in evidence.traces} == {"openai/openrouter-llama-4-maverick"}
    assert damage(diagnostics) == {}


def test_replay_files_and_the_old_resolver_format(shared_corpora: Path) -> None:
    root = shared_corpora / ROOT
    files, diagnostics = corpus([root / TRAJS], "openhands")
    assert len(files) == 4
    ops = corpus_operations(files)
    assert Counter(op.ref for op in ops) == {
        "str_replace_editor": 5,
        "execute_bash": 3,
        "finish": 3,
    }
    assert Counter(op.outcome for op in ops) == {"succeeded": 10, "timed_out": 1}  # exit code -1
    resolver, resolver_diagnostics = corpus([root / RESOLVER], "openhands")
    # Text-parsed actions without a tool call are counted, never turned into operations.
    assert corpus_operations(resolver) == []
    assert len(resolver[0][1].traces) == 2 and resolver_diagnostics.unstructured_outputs > 0
    assert damage(diagnostics) == damage(resolver_diagnostics) == {}


def test_converted_trajectories_measure_the_same(shared_corpora: Path, tmp_path: Path) -> None:
    root = shared_corpora / ROOT
    direct, native = round_trip([root / RUNS, root / TRAJS], tmp_path, "openhands")
    assert direct == native
