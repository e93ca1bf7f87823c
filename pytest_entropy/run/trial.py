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

from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.regex import collect_unsupported_patterns, note_unsupported_patterns
from pytest_entropy.core.trial import TrialCounts, TrialReport, TrialTally, trial_from_tally
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.corpus import EngineOptions, SourceFile
from pytest_entropy.sources.scan import scan_source

# ------------------------------------------------------------------------------ trial


@dataclass(frozen=True, slots=True)
class TrialPlan:
    options: ReadOptions
    live: Mapping[str, Any]
    effective: Mapping[str, Any]


@dataclass(slots=True)
class TrialPart:
    """The trial of one file, a run of consecutive files or (on the client) the corpus."""

    state: MeterState = field(default_factory=lambda: MeterState(retain_terms=True))
    counts: TrialCounts = field(default_factory=TrialCounts)
    patterns: set[str] = field(default_factory=set)
    diagnostics: ScanDiagnostics = field(default_factory=ScanDiagnostics)


def _trial_one(source: SourceFile, plan: TrialPlan) -> TrialPart:
    state = MeterState(retain_terms=True)
    tally = TrialTally(plan.live, plan.effective)
    diagnostics = ScanDiagnostics()
    with collect_unsupported_patterns() as patterns:
        readable = scan_source(
            source.location,
            tally.add_trace,
            diagnostics=diagnostics,
            meter=state,
            on_audit=tally.add_audit,
            options=plan.options,
        )
    if not readable:
        return TrialPart(diagnostics=diagnostics)
    return TrialPart(state, tally.counts, patterns, diagnostics)


def _merge_trial(first: TrialPart, then: TrialPart) -> TrialPart:
    first.state.merge(then.state)
    first.counts.merge(then.counts)
    first.patterns.update(then.patterns)
    first.diagnostics.merge(then.diagnostics)
    return first


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
    # The client's root drops churn terms: it is only ever the left-hand side of a merge.
    root = (engine or EngineOptions()).fold(
        sources,
        functools.partial(_trial_one, plan=plan),
        _merge_trial,
        TrialPart(MeterState(retain_terms=False)),
        _merge_trial,
    )
    note_unsupported_patterns(root.patterns)
    report = trial_from_tally(root.state, root.counts, live, artifact, effective)
    return report, root.diagnostics
