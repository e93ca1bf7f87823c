"""The trial over many session files, on any engine (spec §10).

One read of the corpus pipeline (:func:`~pytest_entropy.run.corpus.read_corpus`) gives the
meter state and, through :class:`TrialReplay`, the class counts per ref (kept apart for
traces and audits); both merge exactly, so every engine gives the bytes of
``run_entropy_trial`` on the same files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.plain_record import replace
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.trial import (
    TrialCounts,
    TrialReport,
    TrialSurfaces,
    TrialTally,
    trial_from_tally,
)
from pytest_entropy.core.v3.meter import finalize_v3
from pytest_entropy.core.v3.trial import (
    V3TrialCounts,
    V3TrialReport,
    V3TrialTally,
    proven_plans,
    trial_from_counts,
)
from pytest_entropy.core.validation import CallChecks
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.corpus import (
    CorpusPlan,
    EngineOptions,
    ReplayHooks,
    SourceFile,
    read_corpus,
)

# ------------------------------------------------------------------------------ trial


@dataclass(frozen=True, slots=True)
class TrialReplay:
    """The trial as a :class:`~pytest_entropy.run.corpus.Replay`: every call classified
    against the declared and the compiled schemas, into plain :class:`TrialCounts`."""

    live: Mapping[str, Any]
    effective: Mapping[str, Any]
    # One command's checks, shared by the files read in this process (pickles empty); the
    # calls come from session files, so they are decoded JSON.
    checks: CallChecks = field(default_factory=lambda: CallChecks(decoded=True))
    # The surfaces prepared once for every file of the command (they pickle as the three
    # fields above, which the pickle shares with this replay's own).
    surfaces: TrialSurfaces | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.surfaces is None:
            surfaces = TrialSurfaces(self.live, self.effective, self.checks)
            object.__setattr__(self, "surfaces", surfaces)

    def start(self, source: SourceFile) -> ReplayHooks:
        surfaces = self.surfaces
        if surfaces is None:  # pragma: no cover - __post_init__ always prepares them
            surfaces = TrialSurfaces(self.live, self.effective, self.checks)
        tally = TrialTally.over(surfaces)
        on_trace, on_audit, on_signed = tally.hooks()
        return ReplayHooks(on_trace, on_audit, None, lambda: tally.counts, on_signed, trial=tally)


def trial_sources(
    sources: Sequence[SourceFile],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    engine: EngineOptions | None = None,
) -> tuple[TrialReport, ScanDiagnostics]:
    """``run_entropy_trial`` over session files, replayed where ``engine`` says (metric v3's
    representation replay is :func:`trial_sources_v3`)."""
    effective = apply_compiled_surface(live, artifact)
    plan = CorpusPlan(
        options or ReadOptions(),
        proposals=False,
        audit_refs=False,
        replay=TrialReplay(live, effective),
    )
    corpus = read_corpus(sources, plan, engine, replayed=TrialCounts())
    report = trial_from_tally(corpus.state, corpus.replayed, live, artifact, effective)
    return report, corpus.diagnostics


# ------------------------------------------------------------------------ v3 trial


@dataclass(frozen=True, slots=True)
class V3TrialReplay:
    """The v3 trial as a :class:`~pytest_entropy.run.corpus.Replay`: every call replayed
    through the normaliser with the artifact's proven plans, into :class:`V3TrialCounts`."""

    live: Mapping[str, Any]
    plans: Mapping[str, Any]

    def start(self, source: SourceFile) -> ReplayHooks:
        tally = V3TrialTally(self.live, self.plans)
        return ReplayHooks(tally.add_trace, tally.add_audit, None, lambda: tally.counts)


def trial_sources_v3(
    sources: Sequence[SourceFile],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    engine: EngineOptions | None = None,
) -> tuple[V3TrialReport, ScanDiagnostics]:
    """``runEntropyTrial`` of metric v3 over session files, replayed where ``engine`` says.

    Equals :func:`~pytest_entropy.core.v3.trial.run_entropy_trial_v3` on the files' traces
    and audit calls: the counts are kept per ref for audits and traces apart, so an audit in
    any file replaces the trace calls of its ref in every file.
    """
    plan = CorpusPlan(
        replace(options or ReadOptions(), metric_version=3),  # read as v3 ingests
        proposals=False,
        audit_refs=False,
        replay=V3TrialReplay(live, proven_plans(live, artifact)),
    )
    corpus = read_corpus(sources, plan, engine, replayed=V3TrialCounts())
    score = finalize_v3(corpus.state, live, None, surface_hash(live)).score
    return trial_from_counts(score, corpus.replayed), corpus.diagnostics
