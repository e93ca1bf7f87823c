"""The compiler of metric v3: normal-form plans behind the gate (notes §6.6).

The v3 compiler never restricts a schema and never rewrites history. It measures the
corpus against the *declared* surface, derives one normal-form plan per action (in ref
order, at most 1000) from the schema alone, and writes them into a version-2 artifact.
Observations, audits, repairs and traces diagnose friction (the review signals) but never
change a plan or the artifact's evidence digest, so the same surface always compiles to the
same plans.

* ``converged``: the input artifact is a version-2 file with no legacy entries whose plans
  hash like the fresh ones (or there is no artifact and no plan); the input artifact object
  is returned as it is, with no gate.
* ``compiled`` otherwise (a version-1 artifact is always migrated): ``after`` is the very
  report object, the gate passes with ``delta`` 0, and the proposals are one ``normal-form``
  per plan followed by the review signals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.notices import DEFAULT_REVIEW_HINT, format_score_change
from pytest_entropy.core.proposals import ProposalEvidence
from pytest_entropy.core.records import AuditCall, RepairRow, Trace, ValueObservation
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.v3.artifact import (
    COMPILED_SURFACE_VERSION_2,
    applied_entries,
    empty_compiled_surface,
)
from pytest_entropy.core.v3.meter import finalize_v3
from pytest_entropy.core.v3.normal_form import MAX_NORMAL_FORM_PLANS, derive_normal_form_plan

__all__ = [
    "AUTO_APPLY_PROPOSAL_KINDS_V3",
    "REVIEW_KINDS",
    "V3CompileOutcome",
    "compile_entropy_surface_v3",
    "compile_from_evidence_v3",
    "compile_from_report",
    "derive_plans",
    "format_compile_notice_v3",
    "review_signals",
]

AUTO_APPLY_PROPOSAL_KINDS_V3: Final = ("normal-form",)
# The advisory proposals a v3 compile reports for a human to review (never applied).
REVIEW_KINDS: Final = ("declare-enum", "overload-split", "sequence-fuse")


@dataclass(frozen=True, slots=True)
class V3CompileOutcome:
    """``{status, artifact?, report, after?, proposals, gate?}`` of a v3 compile.

    ``report`` is the v3 report object (anything with ``score`` and ``to_json()``); ``after``
    is that same object when ``compiled``.
    """

    status: str
    report: Any
    proposals: list[dict[str, Any]]
    artifact: dict[str, Any] | None = None
    after: Any = None
    gate: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.artifact is not None:
            out["artifact"] = self.artifact
        out["report"] = self.report.to_json()
        if self.after is not None:
            out["after"] = self.after.to_json()
        out["proposals"] = self.proposals
        if self.gate is not None:
            out["gate"] = self.gate
        return out


def derive_plans(surface: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One plan per derivable action, actions in ref order (duplicates kept), at most 1000."""
    actions = sorted(surface.get("actions") or (), key=lambda action: code_unit_key(action["ref"]))
    plans: list[dict[str, Any]] = []
    for action in actions:
        plan = derive_normal_form_plan(action["ref"], action.get("inputSchema"))
        if plan is not None and len(plans) < MAX_NORMAL_FORM_PLANS:
            plans.append(dict(plan))
    return plans


def review_signals(proposals: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The advisory proposals among ``proposals``, in their order."""
    return [dict(proposal) for proposal in proposals if proposal["kind"] in REVIEW_KINDS]


def _is_current(artifact: Mapping[str, Any] | None, plans: list[dict[str, Any]]) -> bool:
    if artifact is None or artifact.get("version") != COMPILED_SURFACE_VERSION_2:
        return False
    if artifact.get("actions") or artifact.get("quarantined"):
        return False
    return stable_json_hash(artifact.get("normalizations") or []) == stable_json_hash(plans)


def compile_from_report(
    report: Any,
    surface: Mapping[str, Any],
    review: Sequence[Mapping[str, Any]],
    artifact: dict[str, Any] | None = None,
    plans: list[dict[str, Any]] | None = None,
) -> V3CompileOutcome:
    """The v3 compile's decision once the corpus is measured.

    ``report`` is the v3 report of the corpus against ``surface`` (the declared one);
    ``review`` the v3 review signals; ``plans`` the surface's plans (derived when omitted).
    """
    plans = derive_plans(surface) if plans is None else plans
    review_list = review_signals(review)
    if _is_current(artifact, plans) or (artifact is None and not plans):
        return V3CompileOutcome("converged", report, review_list, artifact=artifact)
    score = report.score
    proposals: list[dict[str, Any]] = [
        {
            "kind": "normal-form",
            "ref": plan["ref"],
            "baseSchemaDigest": plan["baseSchemaDigest"],
            "rules": plan["rules"],
        }
        for plan in plans
    ]
    new_artifact = empty_compiled_surface()
    new_artifact["normalizations"] = plans
    new_artifact["applied"] = applied_entries(plans)
    new_artifact["gate"] = {
        "passed": True,
        "beforeScore": score,
        "afterScore": score,
        "reasons": [],
    }
    new_artifact["evidenceDigest"] = stable_json_hash(
        {"surface": surface_hash(surface), "plans": plans}
    )
    gate = {"passed": True, "beforeScore": score, "afterScore": score, "delta": 0, "reasons": []}
    return V3CompileOutcome(
        "compiled",
        report,
        [*proposals, *review_list],
        artifact=new_artifact,
        after=report,
        gate=gate,
    )


def compile_from_evidence_v3(
    state: MeterState,
    evidence: ProposalEvidence,
    surface: Mapping[str, Any],
    *,
    repairs: Sequence[RepairRow | Mapping[str, Any]] | None = None,
    artifact: dict[str, Any] | None = None,
    catalog_digest: str | None = None,
) -> V3CompileOutcome:
    """The v3 compile of a corpus read into ``state`` and ``evidence`` (any engine).

    The report is the v3 measurement against the declared ``surface`` (its hash as the
    catalogue digest unless one is given); the review signals are the advisory proposals of
    that report.
    """
    digest = catalog_digest if catalog_digest is not None else surface_hash(surface)
    report = finalize_v3(state, surface, repairs, digest)
    review = evidence.proposals(report, surface, metric_version=3)
    return compile_from_report(report, surface, review, artifact)


def compile_entropy_surface_v3(
    traces: Iterable[Trace | Mapping[str, Any]],
    surface: Mapping[str, Any],
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    value_observations: Iterable[ValueObservation | Mapping[str, Any]] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
    artifact: dict[str, Any] | None = None,
    catalog_digest: str | None = None,
) -> V3CompileOutcome:
    """``compileEntropySurface`` of metric v3 on in-memory records.

    ``audit_calls`` are accepted for the signature's sake: under v3 no audit, observation,
    repair or trace changes a plan or the evidence digest.
    """
    trace_list = list(traces)
    repair_list = list(repairs) if repairs is not None else None
    observations = list(value_observations) if value_observations is not None else None
    state = MeterState(retain_terms=False)
    state.add_traces(trace_list)
    evidence = ProposalEvidence(trace_values=observations is None)
    evidence.add_traces(trace_list)
    if observations is not None:
        evidence.add_observations(observations)
    return compile_from_evidence_v3(
        state,
        evidence,
        surface,
        repairs=repair_list,
        artifact=artifact,
        catalog_digest=catalog_digest,
    )


def format_compile_notice_v3(
    before_score: float,
    after_score: float,
    review_count: int = 0,
    *,
    review_hint: str = DEFAULT_REVIEW_HINT,
) -> str:
    """The v3 notice for a newly saved artifact: no duration and no per-proposal details
    (the upstream's v3 presentation), the score change, then the review count."""
    notice = (
        "entropy: background optimization complete · "
        f"{format_score_change(before_score, after_score)} · safety checks passed"
    )
    if review_count:
        noun = "suggestion" if review_count == 1 else "suggestions"
        notice += f" · {review_count} {noun} await review ({review_hint})"
    return notice
