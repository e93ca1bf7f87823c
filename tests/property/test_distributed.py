"""Compile, propose, pool and trial on every engine give the bytes of the one-pass functions.

Two levels. The accumulators (proposal evidence, replay tally, trial tally, pool windows)
are checked with hypothesis: any split of a corpus into consecutive pieces, merged in order,
equals one pass. The commands' engine paths are checked end to end on generated corpora
built to tighten, quarantine and get rejected, on the local engine, a process pool (with and
without batching), and a real in-process Dask cluster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_entropy.core.canonical import canonical_json
from pytest_entropy.core.compiler import (
    ReplayTally,
    compile_entropy_surface,
    replay_successful_calls,
    touched_refs,
)
from pytest_entropy.core.meter import measure, report_hash
from pytest_entropy.core.pool import (
    PoolMerger,
    merge_observation_window,
    pool_to_value_observations,
    summarize_window,
)
from pytest_entropy.core.proposals import ProposalEvidence, propose_entropy_reductions
from pytest_entropy.core.records import AuditCall, ValueObservation
from pytest_entropy.core.trial import TrialCounts, TrialTally, run_entropy_trial
from pytest_entropy.run import corpus as distributed
from pytest_entropy.run.compile import compile_sources, pool_sources, propose_sources
from pytest_entropy.run.corpus import (
    EngineOptions,
    SourceChangedError,
    source_files,
)
from pytest_entropy.run.trial import trial_sources
from pytest_entropy.testing import strategies as es

from ..dask_support import in_process_cluster
from ..distributed_support import SURFACE, one_pass, write_corpus

SEEDS = range(8)
LOCAL_ENGINES = [
    pytest.param(EngineOptions(), id="local"),
    pytest.param(EngineOptions("processes", 2), id="processes"),
    pytest.param(EngineOptions("processes", 2, batch=2), id="processes-batch2"),
]


def splits(items: list[Any]) -> st.SearchStrategy[list[list[Any]]]:
    """``items`` cut into consecutive (possibly empty) pieces."""
    return st.lists(st.integers(0, len(items)), max_size=4).map(
        lambda cuts: [
            items[start:end]
            for start, end in zip([0, *sorted(cuts)], [*sorted(cuts), len(items)], strict=True)
        ]
    )


# ------------------------------------------------------------------ accumulators


def evidence_state(evidence: ProposalEvidence) -> Any:
    tallies = [
        (ref, key, list(tally.counts.items()), tally.total, tally.overflowed)
        for (ref, key), tally in evidence.tallies.items()
    ]
    clusters = {ref: list(evidence.key_set_clusters(ref).items()) for ref in evidence.clusters}
    sequences = {
        identity: (window, occurrences, min(3, len(executions)))
        for identity, (window, occurrences, executions) in evidence.sequences.items()
    }
    return tallies, clusters, sequences


observation_lists = st.lists(
    st.builds(
        ValueObservation,
        st.sampled_from(["mcp.report.render", "pi.read"]),
        st.sampled_from(["format", "path"]),
        st.one_of(st.sampled_from(["html", "pdf", 1, 1.0, True]), st.text(max_size=2)),
        st.one_of(st.none(), st.integers(1, 3)),
    ),
    max_size=30,
)


@given(
    data=st.data(),
    traces=st.lists(es.traces(), max_size=12),
    observations=observation_lists,
    trace_values=st.booleans(),
)
def test_proposal_evidence_merges_like_one_pass(
    data: st.DataObject, traces: list[Any], observations: list[Any], trace_values: bool
) -> None:
    whole = ProposalEvidence(trace_values=trace_values)
    whole.add_traces(traces)
    whole.add_observations(observations)
    merged = ProposalEvidence(trace_values=trace_values)
    trace_pieces = data.draw(splits(traces))
    observation_pieces = data.draw(splits(observations))
    for origin, piece in enumerate(trace_pieces):
        part = ProposalEvidence(trace_values=trace_values, origin=origin)
        part.add_traces(piece)
        merged.merge(part)
    for piece in observation_pieces:
        part = ProposalEvidence(trace_values=trace_values)
        part.add_observations(piece)
        merged.merge(part)
    assert evidence_state(merged) == evidence_state(whole)
    surface = data.draw(es.surfaces())
    report = measure(traces, surface)
    expected = propose_entropy_reductions(
        report, traces, surface, None, None if trace_values else observations
    )
    if trace_values:
        merged_values = ProposalEvidence(trace_values=True)
        for origin, piece in enumerate(trace_pieces):
            part = ProposalEvidence(trace_values=True, origin=origin)
            part.add_traces(piece)
            merged_values.merge(part)
        assert merged_values.proposals(report, surface) == expected
    else:
        assert merged.proposals(report, surface) == expected


audit_lists = st.lists(
    st.builds(AuditCall, es.refs(), es.args()),
    max_size=10,
)


@given(
    data=st.data(),
    pair=es.surface_pairs(),
    traces=st.lists(es.traces(), max_size=10),
    audits=st.one_of(st.none(), audit_lists),
)
def test_replay_tally_merges_like_one_pass(
    data: st.DataObject, pair: Any, traces: list[Any], audits: list[Any] | None
) -> None:
    effective, candidate = pair
    touched = touched_refs(candidate, effective)
    expected = replay_successful_calls(candidate, effective, traces, touched, audits)
    audited = {call.ref for call in audits or () if call.ref in touched}
    root = ReplayTally(candidate, effective, touched, audited)
    for piece in data.draw(splits(audits or [])):
        part = ReplayTally(candidate, effective, touched, audited)
        for call in piece:
            part.add_audit(call)
        root.merge(part.counts)
    for piece in data.draw(splits(traces)):
        part = ReplayTally(candidate, effective, touched, audited)
        for trace in piece:
            part.add_trace(trace)
        root.merge(part.counts)
    assert root.violations() == expected


@given(
    data=st.data(),
    pair=es.surface_pairs(),
    traces=st.lists(es.traces(), max_size=10),
    audits=audit_lists,
)
def test_trial_tally_merges_like_one_pass(
    data: st.DataObject, pair: Any, traces: list[Any], audits: list[Any]
) -> None:
    live, compiled = pair
    artifact = {
        "version": 1,
        "metricVersion": 2,
        "actions": [],
        "quarantined": [],
        "applied": [],
    }
    expected = run_entropy_trial(traces, live, artifact, audits).to_json()
    root = TrialCounts()
    whole = TrialTally(live, live)
    for trace in traces:
        whole.add_trace(trace)
    for call in audits:
        whole.add_audit(call)
    trace_pieces = data.draw(splits(traces))
    audit_pieces = data.draw(splits(audits))
    for piece in trace_pieces:
        part = TrialTally(live, live)
        for trace in piece:
            part.add_trace(trace)
        root.merge(part.counts)
    for piece in audit_pieces:
        part = TrialTally(live, live)
        for call in piece:
            part.add_audit(call)
        root.merge(part.counts)
    assert root.counts() == whole.counts.counts()
    assert expected["totals"]["operations"] == sum(whole.counts.counts().values())
    # A real tightening too: the tallies of declared vs compiled schemas merge the same way.
    tight_whole = TrialTally(live, compiled)
    tight_root = TrialCounts()
    for trace in traces:
        tight_whole.add_trace(trace)
    for piece in trace_pieces:
        part = TrialTally(live, compiled)
        for trace in piece:
            part.add_trace(trace)
        tight_root.merge(part.counts)
    assert tight_root.counts() == tight_whole.counts.counts()


@given(
    windows=st.lists(
        st.tuples(st.sampled_from(["/a.jsonl", "/b.jsonl", "/c.jsonl"]), observation_lists),
        max_size=6,
    )
)
def test_pool_merger_matches_the_window_merge(windows: list[Any]) -> None:
    dicts = [{"file": file, "observations": observations} for file, observations in windows]
    expected = merge_observation_window(None, dicts).to_json()
    merger = PoolMerger(None)
    for file, observations in windows:
        merger.add(summarize_window(file, observations))
    assert merger.result().to_json() == expected


# --------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Path]]:
    root = tmp_path_factory.mktemp("generated")
    return {seed: write_corpus(root / f"seed{seed}", seed) for seed in SEEDS}


def one_pass_compile(
    paths: list[Path], pool: dict[str, Any] | None = None, use_pool: bool = False
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    evidence = one_pass(paths)
    observations: list[Any] = list(evidence.value_observations)
    merged = None
    if use_pool:
        merged = merge_observation_window(pool, evidence.windows)
        observations = pool_to_value_observations(merged.file)
    outcome = compile_entropy_surface(
        evidence.traces, SURFACE, None, observations, evidence.audit_calls
    )
    return outcome.to_json(), (merged.to_json() if merged is not None else None)


def check_compile(paths: list[Path], engine: EngineOptions, use_pool: bool = False) -> str:
    pool = None
    if use_pool:  # an older pool to merge into: the first half of the files alone
        pool = merge_observation_window(None, one_pass(paths[:3]).windows).file
    expected, expected_pool = one_pass_compile(paths, pool, use_pool)
    run = compile_sources(source_files(paths), SURFACE, engine=engine, pool=pool, use_pool=use_pool)
    assert canonical_json(run.outcome.to_json()) == canonical_json(expected)
    assert (run.pool.to_json() if run.pool is not None else None) == expected_pool
    return run.outcome.status


def check_trial(paths: list[Path], artifact: dict[str, Any] | None, engine: EngineOptions) -> None:
    evidence = one_pass(paths)
    expected = run_entropy_trial(evidence.traces, SURFACE, artifact, evidence.audit_calls)
    trial, _ = trial_sources(source_files(paths), SURFACE, artifact, engine=engine)
    assert trial.to_json() == expected.to_json()


def check_propose(paths: list[Path], engine: EngineOptions, audit_values: bool) -> None:
    evidence = one_pass(paths)
    report = measure(evidence.traces, SURFACE)
    expected = propose_entropy_reductions(
        report,
        evidence.traces,
        SURFACE,
        None,
        evidence.value_observations if audit_values else None,
    )
    run = propose_sources(source_files(paths), SURFACE, engine=engine, audit_values=audit_values)
    assert report_hash(run.report) == report_hash(report)
    assert run.proposals == expected


def check_pool(paths: list[Path], engine: EngineOptions) -> None:
    expected = merge_observation_window(None, one_pass(paths).windows).to_json()
    merged, _ = pool_sources(source_files(paths), None, engine=engine)
    assert merged.to_json() == expected


def trained_artifact(corpora: dict[int, list[Path]]) -> dict[str, Any] | None:
    for paths in corpora.values():
        outcome = compile_sources(source_files(paths), SURFACE).outcome
        if outcome.status == "compiled":
            return outcome.artifact
    return None


def test_the_generated_corpora_exercise_every_outcome(corpora: dict[int, list[Path]]) -> None:
    statuses = {check_compile(paths, EngineOptions()) for paths in corpora.values()}
    assert {"compiled", "rejected"} <= statuses
    kinds = set()
    for paths in corpora.values():
        for proposal in compile_sources(source_files(paths), SURFACE).outcome.proposals:
            kinds.add(proposal["kind"])
    assert kinds == {
        "enum-tighten",
        "declare-enum",
        "overload-split",
        "sequence-fuse",
        "noise-quarantine",
    }


# A process pool costs a start-up per run: one corpus of each profile is enough there (the
# Dask test below, on a cluster that stays up, takes every corpus).
PROFILE_SEEDS = range(4)


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("seed", PROFILE_SEEDS)
def test_compile_on_every_engine(
    corpora: dict[int, list[Path]], seed: int, engine: EngineOptions
) -> None:
    check_compile(corpora[seed], engine)
    check_compile(corpora[seed], engine, use_pool=True)


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_trial_propose_and_pool_on_every_engine(
    corpora: dict[int, list[Path]], engine: EngineOptions
) -> None:
    artifact = trained_artifact(corpora)
    assert artifact is not None
    for seed in PROFILE_SEEDS:
        paths = corpora[seed]
        check_trial(paths, artifact, engine)
        check_propose(paths, engine, audit_values=True)
        check_propose(paths, engine, audit_values=False)
        check_pool(paths, engine)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with in_process_cluster(2) as address:
        yield address


@pytest.mark.parametrize("batch", [None, 3])
def test_everything_on_a_dask_cluster(
    corpora: dict[int, list[Path]], scheduler: str, batch: int | None
) -> None:
    engine = EngineOptions("dask", scheduler=scheduler, batch=batch)
    artifact = trained_artifact(corpora)
    for paths in corpora.values():
        check_compile(paths, engine)
        check_compile(paths, engine, use_pool=True)
        check_trial(paths, artifact, engine)
        check_propose(paths, engine, audit_values=True)
        check_pool(paths, engine)


def test_a_file_that_changes_between_the_passes_fails_the_compile(
    corpora: dict[int, list[Path]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    statuses = {
        seed: compile_sources(source_files(paths), SURFACE).outcome.status
        for seed, paths in corpora.items()
    }
    seed = next(seed for seed, status in statuses.items() if status == "compiled")
    copies = []
    for path in corpora[seed]:
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes())
        copies.append(copy)
    original = distributed.source_stamp
    calls = {"n": 0}

    def stamp_then_append(location: str, *options: Any) -> Any:
        calls["n"] += 1
        if location.endswith("01.jsonl") and calls["n"] > len(copies):
            with open(location, "ab") as stream:  # the session grows between the passes
                stream.write(b"\n")
        return original(location, *options)

    monkeypatch.setattr(distributed, "source_stamp", stamp_then_append)
    with pytest.raises(SourceChangedError, match=r"01\.jsonl"):
        compile_sources(source_files(copies), SURFACE)


def test_unreadable_sources_count_but_add_nothing(tmp_path: Path) -> None:
    good = write_corpus(tmp_path / "c", 1)[:2]
    missing = tmp_path / "gone.jsonl"
    run = compile_sources(source_files([good[0], missing, good[1]]), SURFACE)
    alone = compile_sources(source_files(good), SURFACE)
    assert canonical_json(run.outcome.to_json()) == canonical_json(alone.outcome.to_json())
    assert run.diagnostics.unreadable_files == 1
    assert json.loads(canonical_json(run.diagnostics.to_json()))["files"] == 3


@pytest.mark.parametrize(
    ("first", "then", "overflowed"),
    [
        (["a", "b", "c", "d", "e"], ["c", "d", "e", "a", "b"], False),
        (["a", "b", "c", "d", "e"], ["f", "g", "h"], False),
        (["a", "b", "c", "d", "e"], ["f", "g", "h", "i"], True),
        ([str(n) for n in range(12)], ["a"], True),
        (["a"], [str(n) for n in range(12)], True),
    ],
)
def test_a_tally_forgets_its_values_once_it_cannot_be_an_enum(
    first: list[str], then: list[str], overflowed: bool
) -> None:
    def evidence(values: list[str]) -> ProposalEvidence:
        out = ProposalEvidence()
        out.add_observations(ValueObservation("r", "k", value, 2) for value in values)
        return out

    whole = evidence(first + then)
    merged = evidence(first).merge(evidence(then))
    assert evidence_state(merged) == evidence_state(whole)
    tally = whole.tallies[("r", "k")]
    assert tally.overflowed is overflowed
    assert tally.total == 2 * len(first + then)
    assert (tally.counts == {}) is overflowed
