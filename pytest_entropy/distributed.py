"""Compile, propose, pool and trial over many session files, on any engine.

Every command here is a map-merge over session files (:func:`~pytest_entropy.engine.map_merge`):
a worker reads one file (or a run of consecutive files) and returns small, mergeable
summaries; the client folds them in file order and runs only the final steps. The
summaries are the core accumulators, each of which merges exactly (the merge of consecutive
pieces equals one pass over them), so every engine gives the bytes the one-pass functions
(``compile_entropy_surface``, ``run_entropy_trial``, ...) give on the same files:

* pass 1 (all commands): the meter state, the proposals' evidence (value tallies, key-set
  clusters, sequence windows), the refs that have audit calls, and one observation-window
  summary per file for the pool;
* pass 2 (compile, only when something would be applied): the replay of recorded calls
  against the candidate surface, plus the canonical JSON of observations and audit calls
  for the artifact's evidence digest (only when the score gate passed);
* the trial needs one pass: class counts per ref, kept apart for traces and audits.

Memory on the client grows with distinct refs, signatures, sequences and values, never with
the number of calls. Between the two compile passes each file must stay unchanged (same
device, inode, size and modification time, or the same size and version for a URL); a file
that changed fails the compile with a message naming it, and nothing is written.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .core.artifact import Artifact, apply_compiled_surface
from .core.canonical import ArrayHasher, array_fragment, stable_json_hash
from .core.compiler import CompileOutcome, EvidenceCounts, ReplayTally, compile_from_evidence
from .core.errors import EntropyInputError
from .core.meter import MeterState
from .core.pool import (
    PoolMerge,
    PoolMerger,
    WindowSummary,
    pool_to_value_observations,
    summarize_window,
)
from .core.proposals import Proposal, ProposalEvidence
from .core.records import AuditCall, RepairRow, Report, Trace, ValueObservation
from .core.regex import collect_unsupported_patterns, note_unsupported_patterns
from .core.trial import TrialReport, TrialTally, trial_from_tally
from .engine import ENGINES, map_merge
from .ingest.fabric import ScanDiagnostics
from .remote import is_url, scan_source, url_stamp
from .sessions import ReadOptions

__all__ = [
    "CompileRun",
    "CorpusEvidence",
    "EngineOptions",
    "GatherPlan",
    "ProposeRun",
    "SourceChangedError",
    "SourceFile",
    "compile_sources",
    "gather_sources",
    "pool_sources",
    "propose_sources",
    "source_files",
    "trial_sources",
]

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


def _stamp(location: str) -> Stamp | None:
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
    stamp = _stamp(source.location) if plan.stamps else None
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


# ------------------------------------------------------------------------ pass 2 (compile)


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    options: ReadOptions
    candidate: Mapping[str, Any]
    effective: Mapping[str, Any]
    touched: frozenset[str]
    audited: frozenset[str]
    check_stamps: bool
    audit_fragments: bool
    observation_fragments: bool


@dataclass(slots=True)
class ReplayPart:
    """Pass 2's result: the replay tally's fields (no schemas), digest fragments, the
    unsupported patterns met, and the files that changed since pass 1."""

    audit_invalid: dict[str, int] = field(default_factory=dict)
    trace_runs: list[list[Any]] = field(default_factory=list)
    audit_fragments: list[str] = field(default_factory=list)
    observation_fragments: list[str] = field(default_factory=list)
    patterns: set[str] = field(default_factory=set)
    changed: list[str] = field(default_factory=list)


def _replay_one(item: tuple[SourceFile, Stamp | None], plan: ReplayPlan) -> ReplayPart:
    source, stamp = item
    part = ReplayPart()
    if plan.check_stamps and _stamp(source.location) != stamp:
        part.changed.append(source.location)
        return part
    tally = ReplayTally(plan.candidate, plan.effective, plan.touched, plan.audited)
    audits: list[dict[str, Any]] = []
    observations: list[dict[str, Any]] = []

    def on_audit(call: AuditCall) -> None:
        tally.add_audit(call)
        if plan.audit_fragments:
            audits.append(call.to_json())

    def on_value(observation: ValueObservation) -> None:
        if plan.observation_fragments:
            observations.append(observation.to_json())

    diagnostics = ScanDiagnostics()
    with collect_unsupported_patterns() as patterns:
        readable = scan_source(
            source.location,
            tally.add_trace,
            diagnostics=diagnostics,
            on_audit=on_audit,
            on_value=on_value,
            options=plan.options,
        )
    if not readable or (plan.check_stamps and _stamp(source.location) != stamp):
        part.changed.append(source.location)
        return part
    part.audit_invalid = tally.audit_invalid
    part.trace_runs = tally.trace_runs
    part.audit_fragments.append(array_fragment(audits))
    part.observation_fragments.append(array_fragment(observations))
    part.patterns = patterns
    return part


def _combine_replayed(first: ReplayPart, then: ReplayPart) -> ReplayPart:
    joined = ReplayTally({}, {}, ())
    joined.merge_parts(first.audit_invalid, first.trace_runs)
    joined.merge_parts(then.audit_invalid, then.trace_runs)
    first.audit_invalid = joined.audit_invalid
    first.trace_runs = joined.trace_runs
    first.audit_fragments.extend(then.audit_fragments)
    first.observation_fragments.extend(then.observation_fragments)
    first.patterns.update(then.patterns)
    first.changed.extend(then.changed)
    return first


@dataclass(slots=True)
class _ReplayRoot:
    tally: ReplayTally
    audits: ArrayHasher = field(default_factory=ArrayHasher)
    observations: ArrayHasher = field(default_factory=ArrayHasher)
    changed: list[str] = field(default_factory=list)


def _merge_replayed(root: _ReplayRoot, part: ReplayPart) -> _ReplayRoot:
    root.tally.merge_parts(part.audit_invalid, part.trace_runs)
    for fragment in part.audit_fragments:
        root.audits.add_fragment(fragment)
    for fragment in part.observation_fragments:
        root.observations.add_fragment(fragment)
    note_unsupported_patterns(part.patterns)
    root.changed.extend(part.changed)
    return root


# ---------------------------------------------------------------------------- compile


@dataclass(frozen=True, slots=True)
class CompileRun:
    """A compile over session files: the outcome, the pool merge (when a pool was given)
    and what the reads saw."""

    outcome: CompileOutcome
    pool: PoolMerge | None
    diagnostics: ScanDiagnostics


def compile_sources(
    sources: Sequence[SourceFile],
    surface: Mapping[str, Any],
    *,
    options: ReadOptions | None = None,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    artifact: Artifact | None = None,
    catalog_digest: str | None = None,
    pool: Mapping[str, Any] | None = None,
    use_pool: bool = False,
    engine: EngineOptions | None = None,
) -> CompileRun:
    """``compile_entropy_surface`` over session files, read where ``engine`` says.

    Equals ``compile_entropy_surface(traces, surface, repairs, observations, audit_calls,
    artifact, catalog_digest)`` on the files' evidence, where the observations are the
    files' own, or (``use_pool``) those of ``pool`` after the files' windows merged into it.
    """
    options = options or ReadOptions()
    engine = engine or EngineOptions()
    plan = GatherPlan(options, observation_values=not use_pool, windows=use_pool, stamps=True)
    corpus = gather_sources(sources, plan, engine, pool=pool)
    merged = corpus.pool.result() if corpus.pool is not None else None
    pool_observations: list[ValueObservation] | None = None
    if merged is not None:
        pool_observations = pool_to_value_observations(merged.file)
        corpus.evidence.add_observations(pool_observations)
    replayed: list[_ReplayRoot] = []

    def replay(
        candidate: Mapping[str, Any],
        effective: Mapping[str, Any],
        touched: set[str],
        digest_needed: bool,
    ) -> list[dict[str, str]]:
        replay_plan = ReplayPlan(
            options,
            candidate,
            effective,
            frozenset(touched),
            frozenset(corpus.audit_refs & touched),
            check_stamps=True,
            audit_fragments=digest_needed,
            observation_fragments=digest_needed and pool_observations is None,
        )
        root: _ReplayRoot = engine.fold(
            corpus.readable,
            functools.partial(_replay_one, plan=replay_plan),
            _merge_replayed,
            _ReplayRoot(ReplayTally(candidate, effective, touched, replay_plan.audited)),
            _combine_replayed,
        )
        if root.changed:
            shown = ", ".join(root.changed[:3])
            more = f" and {len(root.changed) - 3} more" if len(root.changed) > 3 else ""
            raise SourceChangedError(
                f"session files changed while the compile read them twice (once to measure,"
                f" once to replay): {shown}{more}; nothing was written, run it again"
            )
        replayed.append(root)
        return root.tally.violations()

    def counts() -> EvidenceCounts:
        root = replayed[-1]
        if pool_observations is not None:
            observations_hash = stable_json_hash([o.to_json() for o in pool_observations])
        else:
            observations_hash = root.observations.hexdigest()
        return EvidenceCounts(
            corpus.state.traces,
            len(repairs or ()),
            observations_hash,
            root.audits.hexdigest(),
        )

    outcome = compile_from_evidence(
        corpus.state,
        corpus.evidence,
        surface,
        replay=replay,
        evidence_counts=counts,
        repairs=repairs,
        artifact=artifact,
        catalog_digest=catalog_digest,
    )
    return CompileRun(outcome, merged, corpus.diagnostics)


# ---------------------------------------------------------------------------- propose


@dataclass(frozen=True, slots=True)
class ProposeRun:
    """The report, the proposals and what the reads saw."""

    report: Report
    proposals: list[Proposal]
    diagnostics: ScanDiagnostics


def propose_sources(
    sources: Sequence[SourceFile],
    surface: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    catalog_digest: str | None = None,
    audit_values: bool = True,
    engine: EngineOptions | None = None,
) -> ProposeRun:
    """The report and ``propose_entropy_reductions`` over session files.

    ``audit_values`` takes the value corpus from the audits' observations; otherwise from
    the top-level primitive trace arguments (spec §5.2).
    """
    plan = GatherPlan(
        options or ReadOptions(), trace_values=not audit_values, observation_values=audit_values
    )
    corpus = gather_sources(sources, plan, engine or EngineOptions())
    report = corpus.state.finalize(surface, repairs, catalog_digest)
    return ProposeRun(report, corpus.evidence.proposals(report, surface), corpus.diagnostics)


# ------------------------------------------------------------------------------- pool


def pool_sources(
    sources: Sequence[SourceFile],
    pool: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    engine: EngineOptions | None = None,
) -> tuple[PoolMerge, ScanDiagnostics]:
    """``merge_observation_window`` of the files' windows into ``pool``."""
    plan = GatherPlan(options or ReadOptions(), meter=False, proposals=False, windows=True)
    corpus = gather_sources(sources, plan, engine or EngineOptions(), pool=pool)
    merger = corpus.pool if corpus.pool is not None else PoolMerger(pool)  # always set here
    return merger.result(), corpus.diagnostics


# ------------------------------------------------------------------------------ trial


@dataclass(frozen=True, slots=True)
class TrialPlan:
    options: ReadOptions
    live: Mapping[str, Any]
    effective: Mapping[str, Any]


@dataclass(slots=True)
class TrialPart:
    state: MeterState
    trace_classes: dict[str, dict[str, int]] = field(default_factory=dict)
    audit_classes: dict[str, dict[str, int]] = field(default_factory=dict)
    patterns: set[str] = field(default_factory=set)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _trial_one(source: SourceFile, plan: TrialPlan) -> TrialPart:
    state = MeterState(retain_terms=True)
    tally = TrialTally(plan.live, plan.effective)
    diagnostics = ScanDiagnostics()

    def on_trace(trace: Trace) -> None:
        tally.add_trace(trace)

    with collect_unsupported_patterns() as patterns:
        readable = scan_source(
            source.location,
            on_trace,
            diagnostics=diagnostics,
            meter=state,
            on_audit=tally.add_audit,
            options=plan.options,
        )
    if not readable:
        return TrialPart(MeterState(retain_terms=True), diagnostics=diagnostics)
    return TrialPart(state, tally.trace_classes, tally.audit_classes, patterns, diagnostics)


def _merge_trial_parts(first: TrialPart, then: TrialPart) -> TrialPart:
    joined = TrialTally({}, {})
    joined.merge_parts(first.trace_classes, first.audit_classes)
    joined.merge_parts(then.trace_classes, then.audit_classes)
    first.state.merge(then.state)
    first.trace_classes = joined.trace_classes
    first.audit_classes = joined.audit_classes
    first.patterns.update(then.patterns)
    first.diagnostics.merge(then.diagnostics)
    return first


@dataclass(slots=True)
class _TrialRoot:
    tally: TrialTally
    state: MeterState = field(default_factory=lambda: MeterState(retain_terms=False))
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _merge_trial(root: _TrialRoot, part: TrialPart) -> _TrialRoot:
    root.state.merge(part.state)
    root.tally.merge_parts(part.trace_classes, part.audit_classes)
    note_unsupported_patterns(part.patterns)
    root.diagnostics.merge(part.diagnostics)
    return root


def trial_sources(
    sources: Sequence[SourceFile],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    engine: EngineOptions | None = None,
) -> tuple[TrialReport, ScanDiagnostics]:
    """``run_entropy_trial`` over session files, replayed where ``engine`` says."""
    effective = apply_compiled_surface(live, artifact)
    plan = TrialPlan(options or ReadOptions(), live, effective)
    root = (engine or EngineOptions()).fold(
        sources,
        functools.partial(_trial_one, plan=plan),
        _merge_trial,
        _TrialRoot(TrialTally(live, effective)),
        _merge_trial_parts,
    )
    report = trial_from_tally(root.state, root.tally, live, artifact, effective)
    return report, root.diagnostics
