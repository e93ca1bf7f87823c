"""Corpus mode and the certification report: JSON, human and Markdown (spec §12.1-§12.2)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.certify.fixtures import (
    CERTIFICATION_KIND,
    CERTIFICATION_VERSION,
    CheckResult,
)
from pytest_entropy.core.certify.scopes import corpus_line, spec_part
from pytest_entropy.core.fingerprint import surface_freedom_report
from pytest_entropy.core.jscompat import js_string
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION, Report
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.trial import TrialReport

# ----------------------------------------------------------------- corpus mode pieces


def surface_summary(path: str, surface: Mapping[str, Any]) -> dict[str, Any]:
    """``{path, actions, freedomTotal, freedomMean, digest}`` (spec §12.1)."""
    freedom = surface_freedom_report(surface)
    return {
        "path": path,
        "actions": len(freedom["actions"]),
        "freedomTotal": freedom["total"],
        "freedomMean": freedom["mean"],
        "digest": surface_hash(surface),
    }


def corpus_mode_check(files: int, traces: int, report: Report) -> CheckResult:
    """``corpus-mode`` passes iff the corpus has operations."""
    operations = report.totals.operations
    evidence = f"files {files} traces {traces} operations {operations}"
    return CheckResult("corpus-mode", operations > 0, evidence)


def trial_costs_check(trial: TrialReport) -> CheckResult:
    """``trial-costs`` passes iff no held-out successful call is rejected (spec §10)."""
    cost = trial.totals["tighteningCost"]
    evidence = f"{cost} held-out successful calls rejected by the compiled schema"
    return CheckResult("trial-costs", cost == 0, evidence)


def trial_summary(trial: TrialReport) -> dict[str, Any]:
    """``{verdict, declaredScore, effectiveScore, delta, totals, divergences}``."""
    return trial.to_json()


# ---------------------------------------------------------------------- the report


def certification_report(
    fixtures: Mapping[str, Any],
    checks: Sequence[CheckResult],
    *,
    corpus: Mapping[str, Any] | None = None,
    surface: Mapping[str, Any] | None = None,
    trial: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON report of spec §12.2 (serialise it with ``file_text``)."""
    report: dict[str, Any] = {
        "kind": CERTIFICATION_KIND,
        "version": CERTIFICATION_VERSION,
        "metricVersion": ENTROPY_METRIC_VERSION,
        "fixtures": dict(fixtures),
    }
    if corpus is not None:
        report["corpus"] = dict(corpus)
    if surface is not None:
        report["surface"] = dict(surface)
    if trial is not None:
        report["trial"] = dict(trial)
    failed = [check.id for check in checks if not check.passed]
    report["evaluation"] = {
        "passed": not failed,
        "checks": [check.to_json() for check in checks],
        "failed": failed,
    }
    return report


def _num(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return js_string(value)
    return "?"


def _headline_lines(report: Mapping[str, Any]) -> Iterator[str]:
    fixtures = report.get("fixtures") or {}
    converged = fixtures.get("converged") or {}
    wobble = fixtures.get("wobble") or {}
    ratchet = fixtures.get("ratchet") or {}
    yield (
        f"converged: score {_num(converged.get('score'))} · static freedom"
        f" {_num(converged.get('staticFreedom'))}"
    )
    yield (
        f"wobble: shape {_num(wobble.get('shapeEntropyBits'))} bits · stages"
        f" {_num(wobble.get('failureStageEntropyBits'))} · churn {_num(wobble.get('churnRate'))}"
        f" · flow {_num(wobble.get('flowEntropyBits'))}"
    )
    yield (
        f"ratchet: {_num(ratchet.get('beforeScore'))} → {_num(ratchet.get('afterScore'))}"
        f" (delta {_num(ratchet.get('delta'))}) · {len(ratchet.get('proposals') or [])} proposals"
    )
    corpus = report.get("corpus")
    if corpus is not None:
        totals = corpus.get("totals") or {}
        yield (
            f"corpus: {_num(totals.get('operations'))} operations · score"
            f" {_num(corpus.get('score'))} · rejections/1k"
            f" {_num(totals.get('invocationRejectionsPer1k'))}"
        )
    surface = report.get("surface")
    if surface is not None:
        yield (
            f"surface: {_num(surface.get('actions'))} actions · freedom"
            f" {_num(surface.get('freedomTotal'))} (mean {_num(surface.get('freedomMean'))})"
            f" · digest {str(surface.get('digest'))[:12]}"
        )
    trial = report.get("trial")
    if trial is not None:
        totals = trial.get("totals") or {}
        wins = totals.get("typedFailureWin", 0) + totals.get("quarantineWin", 0)
        costs = totals.get("tighteningCost", 0) + totals.get("quarantineCost", 0)
        yield (
            f"trial: {trial.get('verdict')} · score {_num(trial.get('declaredScore'))} →"
            f" {_num(trial.get('effectiveScore'))} (delta {_num(trial.get('delta'))}) · wins"
            f" {wins} · costs {costs}"
        )


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The human summary of spec §12.2, one string per line."""
    lines = ["Entropy certification (metric v2)"]
    lines.extend(f"  {line}" for line in _headline_lines(report))
    evaluation = report.get("evaluation") or {}
    for check in evaluation.get("checks") or []:
        if check.get("passed"):
            lines.append(f"  ✓ {check.get('id')}")
        else:
            lines.append(f"  ✗ {check.get('id')} — {check.get('evidence')}")
    lines.append("  PASS" if evaluation.get("passed") else "  FAIL")
    # The user's checks (scope corpus) follow the spec's verdict on a line of their own.
    corpus = corpus_line(report)
    if corpus is not None:
        lines.append(f"  {corpus}")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_lines(report: Mapping[str, Any]) -> list[str]:
    """A Markdown summary for CI step summaries (``$GITHUB_STEP_SUMMARY``)."""
    evaluation = report.get("evaluation") or {}
    checks = evaluation.get("checks") or []
    verdict = "PASS" if evaluation.get("passed") else "FAIL"
    failed = len(evaluation.get("failed") or [])
    lines = [
        f"## Entropy certification (metric v2): {verdict}",
        "",
        f"{len(checks) - failed} of {len(checks)} checks passed.",
        "",
    ]
    lines.extend(f"- {_cell(line)}" for line in _headline_lines(report))
    lines += ["", "| Check | Result | Evidence |", "| --- | --- | --- |"]
    for check in checks:
        mark = "✓ pass" if check.get("passed") else "✗ **fail**"
        lines.append(f"| `{check.get('id')}` | {mark} | {_cell(str(check.get('evidence', '')))} |")
    # The hash is the spec's report's: a corpus section (scopes.py) follows, hashed apart.
    report_digest = stable_json_hash(spec_part(report))
    lines += ["", f"Report hash `{report_digest}`."]
    return lines
