"""Two scopes in one certification: the implementation's and the user's corpus.

The reference's certification (spec §12: the §12.3 check list, corpus mode, the trial and
their summary line) says whether *the installed meter is exact here*; it stays byte for byte
what the spec defines. The checks on the user's own sessions and surface (``corpus-health``,
``ratchet-holding``, ...) are scope ``corpus`` and live in a section of their own,
``corpusChecks``, added to the report only when such checks ran; ``checks`` then lists
every check of both scopes with its ``scope`` (and a plain ``reason`` when it failed) beside
the reference's ``id``/``passed``/``evidence``. A report without corpus checks is exactly
the spec's. See ``docs/decisions.md`` ("Certification in two scopes").

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_entropy.core.certify.fixtures import CheckResult

__all__ = [
    "CORPUS_CHECK_ORDER",
    "CORPUS_SCOPE",
    "IMPLEMENTATION_SCOPE",
    "ScopedResult",
    "corpus_line",
    "corpus_passed",
    "corpus_summary",
    "scope_of",
    "scoped_report",
    "spec_part",
]

IMPLEMENTATION_SCOPE: Final = "implementation"
CORPUS_SCOPE: Final = "corpus"
CORPUS_SECTION: Final = "corpusChecks"
SCOPED_LIST: Final = "checks"
# The user's checks, in the order they are planned and reported.
CORPUS_CHECK_ORDER: Final = (
    "corpus-health",
    "corpus-deterministic",
    "ratchet-holding",
    "compile-converges",
    "held-out-trial",
    "surface-contained",
)
# Checks of the spec's list that concern the user's data, not the meter.
_SPEC_CORPUS_IDS: Final = frozenset({"corpus-mode", "trial-mode", "trial-costs", "surface-lint"})


def scope_of(check_id: str) -> str:
    """The scope a check id belongs to."""
    if check_id in CORPUS_CHECK_ORDER or check_id in _SPEC_CORPUS_IDS:
        return CORPUS_SCOPE
    return IMPLEMENTATION_SCOPE


@dataclass(frozen=True, slots=True)
class ScopedResult:
    """A corpus check's result, a plain-language ``reason`` when it failed, and whether
    its failure fails the run (``gating``: ``ratchet-holding`` reports without gating
    unless asked to, ``corpus-health`` under ``--entropy-lenient``)."""

    result: CheckResult
    reason: str | None = None
    gating: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.result.id,
            "scope": scope_of(self.result.id),
            "passed": self.result.passed,
            "evidence": self.result.evidence,
        }
        if not self.result.passed:
            out["reason"] = self.reason or self.result.evidence
            out["gating"] = self.gating
        return out


def corpus_passed(results: Sequence[ScopedResult]) -> bool:
    """Whether no gating corpus check failed."""
    return all(item.result.passed or not item.gating for item in results)


def spec_part(report: Mapping[str, Any]) -> dict[str, Any]:
    """The spec's report inside a scoped one (itself when there are no corpus checks)."""
    return {key: value for key, value in report.items() if key not in (CORPUS_SECTION, SCOPED_LIST)}


def scoped_report(report: Mapping[str, Any], results: Sequence[ScopedResult]) -> dict[str, Any]:
    """The spec's ``report`` plus the corpus section and the scoped list; without corpus
    checks, the spec's report unchanged."""
    out = dict(report)
    if not results:
        return out
    out[CORPUS_SECTION] = {
        "passed": corpus_passed(results),
        "checks": [item.to_json() for item in results],
        "failed": [item.result.id for item in results if not item.result.passed and item.gating],
        "notGating": [
            item.result.id for item in results if not item.result.passed and not item.gating
        ],
    }
    listed: list[dict[str, Any]] = []
    for check in (report.get("evaluation") or {}).get("checks") or []:
        entry = {
            "id": check["id"],
            "scope": scope_of(str(check["id"])),
            "passed": check["passed"],
            "evidence": check["evidence"],
        }
        if not check["passed"]:
            entry["reason"] = check["evidence"]
        listed.append(entry)
    listed.extend(item.to_json() for item in results)
    out[SCOPED_LIST] = listed
    return out


def _failures(section: Mapping[str, Any]) -> list[str]:
    return [
        f"{check['id']}: {check.get('reason') or check['evidence']}"
        + ("" if check.get("gating", True) else " (not gating)")
        for check in section.get("checks") or []
        if not check["passed"]
    ]


def corpus_summary(report: Mapping[str, Any]) -> tuple[int, int, bool] | None:
    """``(passed, checks, section passed)`` of the corpus section, or ``None``."""
    section = report.get(CORPUS_SECTION)
    if not section:
        return None
    checks = section.get("checks") or []
    return sum(bool(check["passed"]) for check in checks), len(checks), bool(section["passed"])


def corpus_line(report: Mapping[str, Any]) -> str | None:
    """``your corpus: 5 of 6 checks passed (held-out-trial: ...)``, or ``None``."""
    section = report.get(CORPUS_SECTION)
    if not section:
        return None
    checks = section.get("checks") or []
    passed = sum(bool(check["passed"]) for check in checks)
    line = f"your corpus: {passed} of {len(checks)} checks passed"
    failures = _failures(section)
    reasons = {failure.split(": ", 1)[1] for failure in failures}
    if len(failures) > 1 and len(reasons) == 1:
        # One cause failed them all (a surface that cannot be read): said once.
        line += f" (all {len(failures)} failed: {reasons.pop()})"
    elif failures:
        line += f" ({'; '.join(failures)})"
    return line
