"""The Rust core's accumulators across files (``NativeMeter``, ``NativeEvidence``): the files'
meter states and proposals' evidence merge in the core in corpus order and leave it once
as plain data; the meter pickles as bytes, the evidence as its plain data. A local read, a
pool of processes and a Dask cluster of worker processes give the plain path's state and
evidence bit for bit (execution ids included), on a corpus where the core's files and files
of another session format (read by the plain scanner) take turns."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_entropy.core.meter import MeterState, report_hash
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.ingest import native_tallies
from pytest_entropy.run.corpus import (
    CorpusPlan,
    CorpusRead,
    EngineOptions,
    read_corpus,
    source_files,
)
from tests.dask_support import require_distributed, write_mixed_corpus
from tests.distributed_support import measured
from tests.native_core_support import native_core_module, on_path, state_snapshot

CODEX = Path(__file__).parents[1] / "data" / "codex"


@pytest.fixture(scope="module")
def interleaved(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The mixed corpus (a truncated ``.gz`` and malformed lines included) with a Codex
    rollout (another format: the plain scanner's) after the first file and at the end."""
    directory = tmp_path_factory.mktemp("interleaved")
    paths = write_mixed_corpus(directory / "mixed")
    rollouts = sorted(CODEX.glob("*.jsonl.gz"))
    copies = []
    for index, rollout in enumerate(rollouts):
        copy = directory / f"codex-{index}-{rollout.name}"
        shutil.copy(rollout, copy)
        copies.append(copy)
    return [paths[0], copies[0], *paths[1:], copies[-1]]


def _evidence(evidence: ProposalEvidence) -> list[Any]:
    tallies = [
        (key, tally.total, tally.overflowed, repr(list(tally.counts.items())))
        for key, tally in evidence.tallies.items()
    ]
    clusters = [(ref, list(rows.items())) for ref, rows in evidence.clusters.items()]
    sequences = [
        (identity, window, occurrences, sorted(executions))
        for identity, (window, occurrences, executions) in evidence.sequences.items()
    ]
    return [evidence.trace_values, tallies, clusters, sequences]


def _fingerprint(read: CorpusRead) -> tuple[str, dict[str, Any], list[Any], list[str]]:
    snapshot = state_snapshot(read.state)
    del snapshot["churn"]  # the corpus's root drops its terms (it is only a left-hand side)
    refs = sorted(read.audit_refs)
    return report_hash(read.state.finalize()), snapshot, _evidence(read.evidence), refs


PLANS = {
    "measure": None,
    "propose": CorpusPlan(trace_values=True),
    "observations": CorpusPlan(observation_values=True),
}


def _read(paths: list[Path], plan: str, **engine: Any) -> CorpusRead:
    chosen = PLANS[plan]
    if chosen is None:
        return measured(paths, **engine)
    return read_corpus(source_files(paths), chosen, EngineOptions(**engine))


def _scans(paths: list[Path], native: Any) -> list[Any]:
    meters = []
    for path in paths:
        scanner = native.TraceScanner(None, None)
        scanner.feed(path.read_bytes())
        scanner.finish()
        meters.append(scanner.take_meter())
    return meters


def test_native_meters_merge_in_order_and_pickle_as_bytes(interleaved: list[Path]) -> None:
    native = native_core_module()
    paths = [path for path in interleaved if path.suffix == ".jsonl"]
    expected = MeterState(retain_terms=True)
    for meter in _scans(paths, native):
        expected.merge_plain(meter.export())
    merged = native.NativeMeter()
    for meter in _scans(paths, native):
        travelled = pickle.loads(pickle.dumps(meter))
        assert travelled.to_bytes() == meter.to_bytes()
        merged.merge(travelled)
    assert merged.traces == expected.traces > 0
    data = merged.to_bytes()
    again = native.meter_from_bytes(data)
    assert again.to_bytes() == data
    assert state_snapshot(MeterState.from_plain(merged.export())) == state_snapshot(expected)
    # The export moves the state out: the meter is left empty.
    assert merged.traces == 0 and merged.to_bytes() == native.NativeMeter().to_bytes()
    assert state_snapshot(MeterState.from_plain(again.export())) == state_snapshot(expected)
    for broken in (data[:-1], data + b"\0", b"\xff" * 8):
        with pytest.raises(ValueError):
            native.meter_from_bytes(broken)


@pytest.mark.parametrize("plan", list(PLANS))
@pytest.mark.parametrize(
    "engine",
    [{}, {"engine": "processes", "jobs": 2}, {"engine": "processes", "jobs": 2, "batch": 3}],
    ids=["local", "processes", "processes-batched"],
)
def test_every_engine_gives_the_plain_state(
    interleaved: list[Path], engine: dict[str, Any], plan: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_core_module()
    with on_path("plain"):
        expected = _fingerprint(_read(interleaved, plan))
    kept: list[Any] = []
    original = native_tallies.NativeTallies.keep_meter

    def keep(self: native_tallies.NativeTallies, meter: Any) -> None:
        kept.append(meter)
        original(self, meter)

    monkeypatch.setattr(native_tallies.NativeTallies, "keep_meter", keep)
    with on_path("native"):
        read = _read(interleaved, plan, **engine)
    assert read.native_meter is None and read.native_evidence is None  # exported once
    assert _fingerprint(read) == expected
    if not engine:
        assert kept, "the core's meter accumulator was never used"


@pytest.mark.parametrize("plan", ["measure", "propose"])
def test_a_dask_cluster_of_processes_gives_the_plain_state(
    interleaved: list[Path], plan: str
) -> None:
    require_distributed()
    native_core_module()
    with on_path("plain"):
        expected = _fingerprint(_read(interleaved, plan))
    with on_path("native"):
        assert _fingerprint(_read(interleaved, plan, engine="dask", jobs=2)) == expected


def test_native_evidence_pickles_as_the_plain_evidence(interleaved: list[Path]) -> None:
    native = native_core_module()
    evidences = []
    for origin, path in enumerate(p for p in interleaved if p.suffix == ".jsonl"):
        scanner = native.TraceScanner(None, None)
        scanner.gather(operations=True, trace_values=True)
        scanner.feed(path.read_bytes())
        scanner.finish()
        evidences.append(scanner.take_evidence(origin))
        assert scanner.gathered()[1] is None  # taken: not exported again
    first = evidences[0]
    for more in evidences[1:]:
        first.merge(more)
    travelled = pickle.loads(pickle.dumps(first))
    assert isinstance(travelled, ProposalEvidence)
    expected = native_tallies.settled_evidence(first.origin, True, first.export())
    assert _evidence(travelled) == _evidence(expected)
    assert any(len(ids) > 1 for _, _, ids in travelled.sequences.values())


def test_an_export_makes_one_str_per_distinct_name(interleaved: list[Path]) -> None:
    # The export named every ref, model, stage and key afresh each time it occurred: on the
    # 64 MB real-call corpus that was 3-6 MB of the commands' peak (issue 28, point 5).
    native = native_core_module()
    merged = native.NativeMeter()
    for meter in _scans([p for p in interleaved if p.suffix == ".jsonl"], native):
        merged.merge(meter)
    data = merged.to_bytes()
    exported = merged.export()
    seen: dict[str, list[int]] = {}

    def note(name: str) -> None:
        seen.setdefault(name, [])
        if id(name) not in seen[name]:
            seen[name].append(id(name))

    def walk(state: Any) -> None:
        _, refs, _, _, _, tasks, models = state
        for ref, *_, signatures, stages, _, _, _ in refs:
            note(ref)
            for key in (*signatures, *stages):
                note(key)
        for task, sequences in tasks:
            note(task)
            for key in sequences:
                note(key)
        for model, inner in models:
            note(model)
            walk(inner)

    walk(exported)
    assert len(seen) > 5
    assert all(len(ids) == 1 for ids in seen.values()), [n for n, i in seen.items() if len(i) > 1]
    assert state_snapshot(MeterState.from_plain(exported)) == state_snapshot(
        MeterState.from_plain(native.meter_from_bytes(data).export())
    )
