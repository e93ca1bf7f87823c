"""The v3 compile and trial over session files equal the in-memory ones, on every engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.pool import merge_observation_window, pool_to_value_observations
from pytest_entropy.core.v3.compiler import compile_entropy_surface_v3
from pytest_entropy.core.v3.normal_form import apply_normal_form_plan, derive_normal_form_plan
from pytest_entropy.core.v3.trial import run_entropy_trial_v3
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.run.compile import compile_sources
from pytest_entropy.run.corpus import EngineOptions, source_files
from pytest_entropy.run.trial import trial_sources_v3
from pytest_entropy.sources.scan import read_file_evidence
from tests.distributed_support import SURFACE as OPEN_SURFACE
from tests.distributed_support import OnePass, one_pass, write_corpus
from tests.sessions_support import write_native_sessions
from tests.v3_artifact_support import CANONICAL, LIVE, REF, SCHEMA, SPILLED

# The generated corpus's surface with every object closed, so that each action has a plan.
SURFACE_V3: dict[str, Any] = {
    "version": 1,
    "actions": [
        {**action, "inputSchema": {**action["inputSchema"], "additionalProperties": False}}
        for action in OPEN_SURFACE["actions"]
    ],
}
ENGINES = [EngineOptions(), EngineOptions(engine="processes", jobs=2, window=1)]


def witness() -> dict[str, Any]:
    plan = derive_normal_form_plan(REF, SCHEMA)
    result = apply_normal_form_plan(REF, SCHEMA, SPILLED, plan)
    assert result.witness is not None
    return dict(result.witness)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("v3")
    paths = write_corpus(root, 7)
    # A call that arrived normalised carries a witness: v3's guard keeps its trace (and its
    # audits), v2's drops it, so a v3 run that read as v2 would differ here.
    normalized = {"ref": REF, "args": CANONICAL, "outcome": "succeeded", "normalization": witness()}
    trace = {"taskKey": "n", "operations": [normalized]}
    paths.append(Path(write_native_sessions(root / "99-normalized.jsonl", [trace])))
    return paths


def one_pass_v3(paths: list[Path]) -> Any:
    """Each file's evidence read as metric v3 ingests it, without the pipeline."""
    out = OnePass()
    for path in paths:
        evidence = read_file_evidence(path, options=ReadOptions(metric_version=3))
        if evidence is None:
            continue
        out.traces.extend(evidence.traces)
        out.value_observations.extend(evidence.value_observations)
        out.audit_calls.extend(evidence.audit_calls)
        out.windows.append(
            {"file": os.path.abspath(path), "observations": evidence.value_observations}
        )
    return out


def test_the_corpus_reads_differently_under_v3(corpus: list[Path]) -> None:
    assert len(one_pass_v3(corpus).traces) == len(one_pass(corpus).traces) + 1


@pytest.mark.parametrize("engine", ENGINES, ids=["local", "processes"])
def test_the_v3_compile_over_files_equals_the_in_memory_compile(
    corpus: list[Path], engine: EngineOptions
) -> None:
    evidence = one_pass_v3(corpus)
    expected = compile_entropy_surface_v3(
        evidence.traces, SURFACE_V3, None, list(evidence.value_observations), evidence.audit_calls
    )
    run = compile_sources(source_files(corpus), SURFACE_V3, engine=engine, metric_version=3)
    assert canonical_json(run.outcome.to_json()) == canonical_json(expected.to_json())
    assert run.outcome.artifact is not None and run.outcome.artifact["version"] == 2
    # With the pool: the review evidence takes the merged pool's observations.
    pooled = compile_sources(
        source_files(corpus), SURFACE_V3, engine=engine, use_pool=True, metric_version=3
    )
    merged = merge_observation_window(None, evidence.windows)
    expected_pooled = compile_entropy_surface_v3(
        evidence.traces, SURFACE_V3, None, pool_to_value_observations(merged.file)
    )
    assert canonical_json(pooled.outcome.to_json()) == canonical_json(expected_pooled.to_json())
    assert pooled.pool is not None and pooled.pool.to_json() == merged.to_json()


@pytest.mark.parametrize("engine", ENGINES, ids=["local", "processes"])
def test_the_v3_trial_over_files_equals_the_in_memory_trial(
    corpus: list[Path], engine: EngineOptions
) -> None:
    evidence = one_pass_v3(corpus)
    artifact = compile_entropy_surface_v3([], SURFACE_V3).artifact
    expected = run_entropy_trial_v3(evidence.traces, SURFACE_V3, artifact, evidence.audit_calls)
    assert expected.totals["operations"] > 0
    trial, _ = trial_sources_v3(source_files(corpus), SURFACE_V3, artifact, engine=engine)
    assert trial.to_json() == expected.to_json()


def test_an_audit_in_a_later_file_replaces_the_trace_calls_of_earlier_files(tmp_path: Path) -> None:
    first = {
        "taskKey": "a",
        "operations": [
            {"ref": REF, "args": SPILLED, "outcome": "failed", "failureStage": "validate"}
        ],
    }
    second = {
        "taskKey": "b",
        "operations": [{"ref": REF, "args": CANONICAL, "outcome": "succeeded"}],
    }
    paths = [
        write_native_sessions(tmp_path / "1.jsonl", [first], unaudited=frozenset({REF})),
        write_native_sessions(tmp_path / "2.jsonl", [second]),
    ]
    artifact = compile_entropy_surface_v3([], LIVE).artifact
    for engine in ENGINES:
        trial, _ = trial_sources_v3(source_files(paths), LIVE, artifact, engine=engine)
        totals: dict[str, Any] = trial.totals
        assert (totals["operations"], totals["bothAccept"], totals["normalizationWin"]) == (1, 1, 0)
        assert trial.verdict == "clean"
