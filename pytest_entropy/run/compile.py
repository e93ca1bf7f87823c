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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import Artifact
from pytest_entropy.core.canonical import ArrayHasher, array_fragment, stable_json_hash
from pytest_entropy.core.compiler import (
    CompileOutcome,
    EvidenceCounts,
    ReplayCounts,
    ReplayTally,
    compile_from_evidence,
)
from pytest_entropy.core.pool import (
    PoolMerge,
    PoolMerger,
    pool_to_value_observations,
)
from pytest_entropy.core.proposals import Proposal
from pytest_entropy.core.records import AuditCall, RepairRow, Report, ValueObservation
from pytest_entropy.core.regex import collect_unsupported_patterns, note_unsupported_patterns
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run import corpus
from pytest_entropy.run.corpus import (
    EngineOptions,
    GatherPlan,
    SourceChangedError,
    SourceFile,
    Stamp,
    gather_sources,
)
from pytest_entropy.sources.scan import scan_source

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
    """Pass 2's result: the replay counts (no schemas), digest fragments, the unsupported
    patterns met, and the files that changed since pass 1."""

    replay: ReplayCounts = field(default_factory=ReplayCounts)
    audit_fragments: list[str] = field(default_factory=list)
    observation_fragments: list[str] = field(default_factory=list)
    patterns: set[str] = field(default_factory=set)
    changed: list[str] = field(default_factory=list)


def _replay_one(item: tuple[SourceFile, Stamp | None], plan: ReplayPlan) -> ReplayPart:
    source, stamp = item
    part = ReplayPart()
    if plan.check_stamps and corpus.source_stamp(source.location) != stamp:
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
    if not readable or (plan.check_stamps and corpus.source_stamp(source.location) != stamp):
        part.changed.append(source.location)
        return part
    part.replay = tally.counts
    part.audit_fragments.append(array_fragment(audits))
    part.observation_fragments.append(array_fragment(observations))
    part.patterns = patterns
    return part


def _combine_replayed(first: ReplayPart, then: ReplayPart) -> ReplayPart:
    first.replay.merge(then.replay)
    first.audit_fragments.extend(then.audit_fragments)
    first.observation_fragments.extend(then.observation_fragments)
    first.patterns.update(then.patterns)
    first.changed.extend(then.changed)
    return first


@dataclass(slots=True)
class _ReplayRoot:
    """Pass 2 on the client: the parts' fragments are hashed as they arrive, not kept."""

    replay: ReplayCounts = field(default_factory=ReplayCounts)
    audits: ArrayHasher = field(default_factory=ArrayHasher)
    observations: ArrayHasher = field(default_factory=ArrayHasher)
    changed: list[str] = field(default_factory=list)


def _merge_replayed(root: _ReplayRoot, part: ReplayPart) -> _ReplayRoot:
    root.replay.merge(part.replay)
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
            _ReplayRoot(),
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
        tally = ReplayTally(candidate, effective, touched, replay_plan.audited)
        return tally.merge(root.replay).violations()

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
