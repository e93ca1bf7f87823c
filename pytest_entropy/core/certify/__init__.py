"""The certification's v2 check list (spec §12.3) as data, and its report (spec §12.2).

Every check is a :class:`Check` - an id and a pure ``run(FixtureRun) -> CheckResult`` - that
computes its actual values from the spec's fixed corpora (§13.0) and compares them with the
values the spec states, exactly. The two effects a check needs come in as ports from the
non-core runner (:mod:`pytest_entropy.run.certification`): scanning session lines (the ingestion
layer) and a temporary artifact store (the round-trip check). Nothing here reads files,
imports pytest or looks at a clock.

Corpus mode (§12.1) reads the user's directory, which is I/O; the pure pieces it needs - the
surface summary, the ``corpus-mode`` and ``trial-costs`` checks, the report and its human and
Markdown forms - live here so the CLI and the pytest plugin print the same bytes.
"""

from __future__ import annotations

from pytest_entropy.core.certify.checks import (
    CHECK_IDS,
    CHECKS,
    CORPUS_CHECK_IDS,
    Check,
    check_by_id,
    run_check,
)
from pytest_entropy.core.certify.fixtures import (
    CERTIFICATION_KIND,
    NO_AGENT_ARTIFACT,
    SURFACE_REQUIRES_SESSIONS,
    TRIAL_REQUIRES_SURFACE,
    ArtifactStore,
    CheckResult,
    FixtureRun,
    Fixtures,
    LineScanner,
    Ports,
    SessionScan,
    sessions_not_found,
    trial_mode_failure,
)
from pytest_entropy.core.certify.report import (
    certification_report,
    corpus_mode_check,
    markdown_lines,
    summary_lines,
    surface_summary,
    trial_costs_check,
    trial_summary,
)

__all__ = [
    "CERTIFICATION_KIND",
    "CHECKS",
    "CHECK_IDS",
    "CORPUS_CHECK_IDS",
    "NO_AGENT_ARTIFACT",
    "SURFACE_REQUIRES_SESSIONS",
    "TRIAL_REQUIRES_SURFACE",
    "ArtifactStore",
    "Check",
    "CheckResult",
    "FixtureRun",
    "Fixtures",
    "LineScanner",
    "Ports",
    "SessionScan",
    "certification_report",
    "check_by_id",
    "corpus_mode_check",
    "markdown_lines",
    "run_check",
    "sessions_not_found",
    "summary_lines",
    "surface_summary",
    "trial_costs_check",
    "trial_mode_failure",
    "trial_summary",
]
