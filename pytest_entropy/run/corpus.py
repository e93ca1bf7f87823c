"""Where the map-merge-finalize runs: this process, a process pool, or a Dask cluster.

:func:`map_merge` is the generic, ordered map-merge: every item is mapped independently
(on any worker), and the results are folded into one accumulator strictly in item order,
each as soon as every earlier one has been folded. Results that finish early wait in a
bounded window, so the client holds at most ``window`` results however large the input is.

Measurement is the first user: each session file maps to a
:class:`~pytest_entropy.core.meter.MeterState` and the states merge in file order into a
root that drops churn terms, so every engine yields the bytes of one sequential pass
(:func:`meter_paths`). Dask is an optional extra, imported only when ``engine="dask"``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.pool import PoolMerger, WindowSummary, summarize_window
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import AuditCall, Trace, ValueObservation
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.executor import ENGINES, map_merge
from pytest_entropy.sources.scan import meter_source, read_file_evidence, scan_source
from pytest_entropy.sources.urls import is_url, url_stamp

# ----------------------------------------------------------------------- measurement


@dataclass(slots=True)
class MeterResult:
    """The merged meter state of many files and what their scans saw."""

    state: MeterState = field(default_factory=lambda: MeterState(retain_terms=False))
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


FileMeasurement = tuple[MeterState | None, ScanDiagnostics]


def _meter_one(source: str, options: ReadOptions) -> FileMeasurement:
    # Each file's state keeps its churn terms: it is the right-hand side of a merge.
    return meter_source(source, retain_terms=True, options=options)


def _combine_measurements(first: FileMeasurement, then: FileMeasurement) -> FileMeasurement:
    """Two consecutive files' measurements as one, still usable as a right-hand side."""
    first_state, first_diagnostics = first
    then_state, then_diagnostics = then
    if first_state is None:
        state = then_state
    elif then_state is None:
        state = first_state
    else:
        # Both keep their churn terms, so the merged state keeps them too, in order.
        state = first_state.merge(then_state)
    return state, first_diagnostics.merge(then_diagnostics)


def _merge_measurement(result: MeterResult, measured: FileMeasurement) -> MeterResult:
    state, diagnostics = measured
    # An unreadable file contributes nothing but its diagnostics, on every engine.
    if state is not None:
        result.state.merge(state)
    result.diagnostics.merge(diagnostics)
    return result


def meter_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    jobs: int = 1,
    engine: str = "local",
    options: ReadOptions | None = None,
    scheduler: str | None = None,
    window: int | None = None,
    batch: int | None = None,
) -> MeterResult:
    """Measure session files (local paths or fsspec URLs) in order on any engine.

    Workers measure files (``batch`` consecutive files per task, chosen automatically by
    default) and the client merges their states in file order into a root that drops churn
    terms (it is only ever the left-hand side of a merge), so the client's memory grows
    with distinct refs, signatures and sequences, not with the corpus. ``finalize()`` the
    result's state once.
    """
    sources = [os.fspath(path) for path in paths]
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}")
    measure_one = functools.partial(_meter_one, options=options or ReadOptions())
    return map_merge(
        sources,
        measure_one,
        _merge_measurement,
        MeterResult(),
        combine=_combine_measurements,
        engine=engine,
        jobs=jobs,
        scheduler=scheduler,
        window=window,
        batch=batch,
    )


PartT = TypeVar("PartT")
Stamp = tuple[Any, ...]


class SourceChangedError(EntropyInputError):
    """A session file changed between the compile's two reads; nothing was written."""


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """Where the work runs (see :func:`~pytest_entropy.engine.map_ordered`)."""

    engine: str = "local"
    jobs: int = 1
    scheduler: str | None = None
    window: int | None = None
    batch: int | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}")

    def fold(
        self,
        items: Sequence[Any],
        map_fn: Callable[[Any], PartT],
        merge_fn: Callable[[Any, PartT], Any],
        initial: Any,
        combine: Callable[[PartT, PartT], PartT],
    ) -> Any:
        return map_merge(
            items,
            map_fn,
            merge_fn,
            initial,
            combine=combine,
            engine=self.engine,
            jobs=self.jobs,
            scheduler=self.scheduler,
            window=self.window,
            batch=self.batch,
        )


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One session file: its position, what a worker opens, and the pool's name for it."""

    index: int
    location: str
    window: str


def source_files(sources: Iterable[str | os.PathLike[str]]) -> list[SourceFile]:
    """Expanded session files (paths or URLs) as map items. Local paths are named by their
    absolute path in the pool (as the one-pass reader names them), URLs as given."""
    out = []
    for index, source in enumerate(sources):
        location = os.fspath(source)
        window = location if is_url(location) else os.path.abspath(location)
        out.append(SourceFile(index, location, window))
    return out


def source_stamp(location: str) -> Stamp | None:
    """What must not change between the two compile passes (``None``: cannot stat)."""
    if is_url(location):
        return url_stamp(location)
    try:
        info = os.stat(location)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


# --------------------------------------------------------------------------- pass 1


@dataclass(frozen=True, slots=True)
class GatherPlan:
    """What pass 1 collects from each file."""

    options: ReadOptions
    meter: bool = True
    proposals: bool = True
    trace_values: bool = False
    observation_values: bool = False
    windows: bool = False
    stamps: bool = False


@dataclass(slots=True)
class GatherPart:
    """Pass 1's result for one file or a run of consecutive files."""

    state: MeterState
    evidence: ProposalEvidence
    audit_refs: set[str] = field(default_factory=set)
    windows: list[WindowSummary] = field(default_factory=list)
    readable: list[tuple[SourceFile, Stamp | None]] = field(default_factory=list)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _gather_one(source: SourceFile, plan: GatherPlan) -> GatherPart:
    stamp = source_stamp(source.location) if plan.stamps else None
    state = MeterState(retain_terms=True)
    evidence = ProposalEvidence(trace_values=plan.trace_values, origin=source.index)
    part = GatherPart(state, evidence)
    observations: list[ValueObservation] = []
    audit_refs = part.audit_refs

    def on_audit(call: AuditCall) -> None:
        audit_refs.add(call.ref)

    def on_value(observation: ValueObservation) -> None:
        if plan.observation_values:
            evidence.add_observation(observation)
        if plan.windows:
            observations.append(observation)

    readable = scan_source(
        source.location,
        evidence.add_trace if plan.proposals else None,
        diagnostics=part.diagnostics,
        meter=state if plan.meter else None,
        on_audit=on_audit,
        on_value=on_value,
        options=plan.options,
    )
    if not readable:
        # An unreadable file contributes its diagnostics and nothing else, as in one pass.
        return GatherPart(
            MeterState(retain_terms=True),
            ProposalEvidence(trace_values=plan.trace_values, origin=source.index),
            diagnostics=part.diagnostics,
        )
    if plan.windows:
        part.windows.append(summarize_window(source.window, observations))
    part.readable.append((source, stamp))
    return part


def _combine_gathered(first: GatherPart, then: GatherPart) -> GatherPart:
    first.state.merge(then.state)  # both keep churn terms: still a right-hand side
    first.evidence.merge(then.evidence)
    first.audit_refs.update(then.audit_refs)
    first.windows.extend(then.windows)
    first.readable.extend(then.readable)
    first.diagnostics.merge(then.diagnostics)
    return first


@dataclass(slots=True)
class CorpusEvidence:
    """Pass 1 over a whole corpus, merged in file order on the client."""

    state: MeterState = field(default_factory=lambda: MeterState(retain_terms=False))
    evidence: ProposalEvidence = field(default_factory=ProposalEvidence)
    audit_refs: set[str] = field(default_factory=set)
    pool: PoolMerger | None = None
    readable: list[tuple[SourceFile, Stamp | None]] = field(default_factory=list)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _merge_gathered(corpus: CorpusEvidence, part: GatherPart) -> CorpusEvidence:
    corpus.state.merge(part.state)
    corpus.evidence.merge(part.evidence)
    corpus.audit_refs.update(part.audit_refs)
    if corpus.pool is not None:
        for summary in part.windows:
            corpus.pool.add(summary)
    corpus.readable.extend(part.readable)
    corpus.diagnostics.merge(part.diagnostics)
    return corpus


def gather_sources(
    sources: Sequence[SourceFile],
    plan: GatherPlan,
    engine: EngineOptions,
    *,
    pool: Mapping[str, Any] | None = None,
) -> CorpusEvidence:
    """Pass 1 over ``sources``; with ``plan.windows`` the windows merge into ``pool``."""
    corpus = CorpusEvidence(
        evidence=ProposalEvidence(trace_values=plan.trace_values),
        pool=PoolMerger(pool) if plan.windows else None,
    )
    return engine.fold(  # type: ignore[no-any-return]
        sources,
        functools.partial(_gather_one, plan=plan),
        _merge_gathered,
        corpus,
        _combine_gathered,
    )


@dataclass(slots=True)
class WindowEvidence:
    traces: list[Trace] = field(default_factory=list)
    value_observations: list[ValueObservation] = field(default_factory=list)
    audit_calls: list[AuditCall] = field(default_factory=list)
    windows: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def read_window_evidence(
    paths: Sequence[Path], options: ReadOptions | None = None
) -> WindowEvidence:
    """Scan every file alone, in the given order, and gather the window evidence."""
    window = WindowEvidence()
    for path in paths:
        evidence = read_file_evidence(path, diagnostics=window.diagnostics, options=options)
        if evidence is None:
            continue
        window.traces.extend(evidence.traces)
        window.value_observations.extend(evidence.value_observations)
        window.audit_calls.extend(evidence.audit_calls)
        window.windows.append(
            {"file": os.path.abspath(path), "observations": evidence.value_observations}
        )
    return window
