"""Human-readable text for reports and diagnostics (shared by the CLI and the plugin)."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_entropy.core.jscompat import js_string, js_to_fixed
from pytest_entropy.core.proposals import (
    AUTO_APPLY_PROPOSAL_KINDS,
    format_review_signal,
)
from pytest_entropy.core.records import Report
from pytest_entropy.core.review_signals import V3_AUTO_APPLY_PROPOSAL_KINDS
from pytest_entropy.ingest.diagnostics import ScanDiagnostics

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "TRIAL_CLASSES",
    "diagnostics_lines",
    "freedom_lines",
    "proposal_line",
    "proposal_lines",
    "report_lines",
]

# The held-out trial's classes (spec §10) and how every display names them.
TRIAL_CLASSES: Final = (
    ("bothAccept", "both accept"),
    ("bothReject", "both reject"),
    ("tighteningCost", "tightening costs"),
    ("typedFailureWin", "typed-failure wins"),
    ("quarantineWin", "quarantine wins"),
    ("quarantineCost", "quarantine costs"),
)


def _num(value: float) -> str:
    return js_to_fixed(value, 6)


def report_lines(report: Report, digest: str, *, top: int = 10) -> list[str]:
    """A readable summary: score and split, totals, the worst refs, per-model rows."""
    totals = report.totals
    if report.metric_version == 3:
        # v3's score is a rate; staticScore is a diagnostic beside it, never a part of it.
        headline = (
            f"entropy score {_num(report.score)} (lower is better; metric v3: invocation"
            f" rejections / action calls) · static diagnostic {_num(report.static_score)}"
        )
    else:
        headline = (
            f"entropy score {_num(report.score)} (lower is better) = static"
            f" {_num(report.static_score)} + behavioral {_num(report.behavioral_score)}"
        )
    lines = [
        headline,
        f"operations: {totals.operations} in {totals.traces} traces · {totals.action_operations}"
        f" actions · {totals.discovery_operations} discovery · {totals.workflow_operations}"
        f" workflow",
        f"outcomes: {totals.succeeded} succeeded · {totals.failed} failed · {totals.aborted}"
        f" aborted · {totals.timed_out} timed out",
        f"invocation rejections: {totals.invocation_rejections}"
        f" ({js_string(totals.invocation_rejections_per_1k)} per 1k actions)",
        f"terms: shape {js_string(report.shape_entropy_bits)} bits · stages"
        f" {js_string(report.failure_stage_entropy_bits)} bits · churn"
        f" {js_string(report.churn_rate)} · navigation {js_string(report.navigation_ratio)} ·"
        f" flow {js_string(report.flow_entropy_bits)} bits · lexicon rows {report.lexicon_rows}"
        f" · static freedom {js_string(report.static_freedom)}",
    ]
    if report.refs:
        shown = report.refs[:top]
        width = max(len(row.ref) for row in shown)
        lines.append(f"top refs ({len(shown)} of {len(report.refs)}):")
        for row in shown:
            lines.append(
                f"  {row.ref.ljust(width)}  score {_num(row.score)}  calls {row.calls}"
                f" ({row.succeeded} ok, {row.failed} failed)  shape"
                f" {js_string(row.shape_entropy_bits)}  stages"
                f" {js_string(row.failure_stage_entropy_bits)}  churn {js_string(row.churn_rate)}"
                f"  lexicon {row.lexicon_rows}  freedom {js_string(row.static_freedom)}"
            )
    if report.by_model:
        width = max(len(row.model) for row in report.by_model)
        lines.append("models:")
        for model in report.by_model:
            lines.append(
                f"  {model.model.ljust(width)}  ops {model.operations}  ok {model.succeeded}"
                f"  rejections/1k {js_string(model.invocation_rejections_per_1k)}  behavioral"
                f" {_num(model.behavioral_score)}"
            )
    lines.append(f"report hash {digest}")
    return lines


def _skipped_problems(diagnostics: ScanDiagnostics) -> list[str]:
    """What a read passed over inside the files it read, one phrase per kind."""
    problems = []
    skipped = diagnostics.skipped_lines
    if skipped:
        problems.append(f"{skipped} unusable lines")
    if diagnostics.rejected_traces:
        reasons = ", ".join(
            f"{reason} ×{count}" for reason, count in sorted(diagnostics.rejection_reasons.items())
        )
        problems.append(f"{diagnostics.rejected_traces} traces failed the guard ({reasons})")
    if diagnostics.skipped_audits:
        problems.append(
            f"{diagnostics.skipped_audits} unusable audit records (no ref, or args not an object)"
        )
    return problems


def diagnostics_lines(diagnostics: ScanDiagnostics) -> list[str]:
    """One summary line, plus one line per sampled problem."""
    summary = (
        f"read {diagnostics.files} files · {diagnostics.lines} lines · {diagnostics.traces} traces"
    )
    problems = _skipped_problems(diagnostics)
    if diagnostics.unreadable_files:
        problems.insert(0, f"{diagnostics.unreadable_files} unreadable files")
    lines = [summary + (" · skipped: " + "; ".join(problems) if problems else "")]
    lines.extend(f"  {sample}" for sample in diagnostics.samples)
    return lines


def corpus_warnings(
    diagnostics: ScanDiagnostics, *, flags: str = "--", lines: bool = True
) -> list[str]:
    """The warnings a read leaves for stderr: the files it passed over (options spelt with
    ``flags``) and, with ``lines`` (the output does not show the diagnostics), what it
    skipped inside the files."""
    from pytest_entropy.run.empty import skipped_files_warning

    found = [skipped_files_warning(diagnostics, flags)]
    if lines:
        found.append(skipped_lines_warning(diagnostics))
    return [warning for warning in found if warning is not None]


def skipped_lines_warning(diagnostics: ScanDiagnostics) -> str | None:
    """``warning: ...`` for the commands whose output does not carry the diagnostics: the
    unusable lines, guard failures and unusable audit records a read skipped, with the first
    sampled one (``None`` when it skipped none)."""
    problems = _skipped_problems(diagnostics)
    if not problems:
        return None
    first = f" (the first: {diagnostics.samples[0]})" if diagnostics.samples else ""
    # measure reads no audit records, so it lists the lines and traces only.
    listed = diagnostics.skipped_lines or diagnostics.rejected_traces
    return (
        "warning: skipped inside the session files: "
        + "; ".join(problems)
        + first
        + (" (`pytest-entropy measure` lists them)" if listed else "")
    )


def freedom_lines(report: Mapping[str, Any]) -> list[str]:
    """The surface freedom report, worst first."""
    rows = report["actions"]
    lines = [
        f"surface freedom: total {js_string(report['total'])} · mean {js_string(report['mean'])}"
        f" · {len(rows)} actions (lower is better)"
    ]
    if rows:
        width = max(len(js_to_fixed(row["freedom"], 6)) for row in rows)
        for row in rows:
            lines.append(f"  {js_to_fixed(row['freedom'], 6).rjust(width)}  {row['ref']}")
    return lines


def proposal_line(proposal: Mapping[str, Any]) -> str:
    """One readable line per proposal (review kinds use their one-line signal text)."""
    kind = proposal.get("kind")
    if kind == "enum-tighten":
        values = ", ".join(js_string(value) for value in proposal["values"])
        return (
            f"enum-tighten {proposal['ref']}.{proposal['key']} to {{{values}}}"
            f" ({proposal['calls']} observations, top share {js_string(proposal['topShare'])})"
        )
    if kind == "noise-quarantine":
        return (
            f"noise-quarantine {proposal['ref']} ({proposal['failed']} failed,"
            f" {proposal['succeeded']} succeeded, stage entropy"
            f" {js_string(proposal['failureStageEntropyBits'])} bits)"
        )
    if kind == "normal-form":
        rules = ", ".join(f"{rule['kind']} {rule['key']}" for rule in proposal["rules"][:4])
        more = ", ..." if len(proposal["rules"]) > 4 else ""
        return (
            f"normal-form {proposal['ref']} ({len(proposal['rules'])} proven rules: {rules}{more})"
        )
    return format_review_signal(proposal)


# What a compile applies: v2's restrictions, or metric v3's normal forms (a v2 proposal list
# never holds one, a v3 list never holds the others).
_AUTOMATIC_KINDS: Final = (*AUTO_APPLY_PROPOSAL_KINDS, *V3_AUTO_APPLY_PROPOSAL_KINDS)


def proposal_lines(proposals: list[dict[str, Any]]) -> list[str]:
    """Automatic proposals first, then the review suggestions, each on its own line."""
    automatic = [p for p in proposals if p.get("kind") in _AUTOMATIC_KINDS]
    review = [p for p in proposals if p.get("kind") not in _AUTOMATIC_KINDS]
    lines = [f"automatic proposals ({len(automatic)}):"]
    lines.extend(f"  {proposal_line(p)}" for p in automatic)
    lines.append(f"review suggestions ({len(review)}):")
    lines.extend(f"  {format_review_signal(p)}" for p in review)
    return lines
