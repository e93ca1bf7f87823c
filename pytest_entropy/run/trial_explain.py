"""The trial with examples (``trial --explain``), over many session files, on any engine.

One read, as :func:`~pytest_entropy.run.trial.trial_sources` does, with the examples of
:mod:`pytest_entropy.core.trial_explain` collected beside the class counts; both merge in
file order, so the report is the trial's own, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import apply_compiled_surface
from pytest_entropy.core.trial import TrialCounts, TrialReport, TrialTally, trial_from_tally
from pytest_entropy.core.trial_explain import TrialExamples, TrialExampleTally, explain_trial
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.run.corpus import (
    CorpusPlan,
    EngineOptions,
    ReplayHooks,
    SourceFile,
    read_corpus,
)

__all__ = ["explained_trial_sources"]


@dataclass(slots=True)
class _Found:
    counts: TrialCounts = field(default_factory=TrialCounts)
    examples: TrialExamples = field(default_factory=TrialExamples)

    def merge(self, other: _Found) -> _Found:
        self.counts.merge(other.counts)
        self.examples.merge(other.examples)
        return self


@dataclass(frozen=True, slots=True)
class _ExplainedTrialReplay:
    live: Mapping[str, Any]
    effective: Mapping[str, Any]
    redact: bool

    def start(self, source: SourceFile) -> ReplayHooks:
        tally = TrialTally(self.live, self.effective)
        examples = TrialExampleTally(self.live, self.effective, redact=self.redact)

        def on_trace(trace: Any) -> None:
            tally.add_trace(trace)
            examples.add_trace(trace)

        def on_audit(call: Any) -> None:
            tally.add_audit(call)
            examples.add_audit(call)

        return ReplayHooks(
            on_trace, on_audit, None, lambda: _Found(tally.counts, examples.examples)
        )


def explained_trial_sources(
    sources: Sequence[SourceFile],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
    *,
    options: ReadOptions | None = None,
    engine: EngineOptions | None = None,
    redact_values: bool = False,
) -> tuple[TrialReport, ScanDiagnostics, list[dict[str, Any]]]:
    """``trial_sources`` plus one explanation per divergence (with examples)."""
    effective = apply_compiled_surface(live, artifact)
    plan = CorpusPlan(
        options or ReadOptions(),
        proposals=False,
        audit_refs=False,
        replay=_ExplainedTrialReplay(live, effective, redact_values),
    )
    corpus = read_corpus(sources, plan, engine, replayed=_Found())
    found: _Found = corpus.replayed
    report = trial_from_tally(corpus.state, found.counts, live, artifact, effective)
    return report, corpus.diagnostics, explain_trial(report, found.examples.chosen())
