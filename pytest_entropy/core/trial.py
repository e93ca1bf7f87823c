"""The held-out trial (spec §10): replay recorded calls against declared and compiled surfaces.

Every recorded call is classified, deterministically and pessimistically where the record is
silent (audits carry no outcome, so an audited call the artifact would reject is a cost,
never a win).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .artifact import apply_compiled_surface
from .corpus import surface_hash
from .jscompat import code_unit_key
from .meter import measure
from .records import AuditCall, Operation, Trace
from .validation import accepts

__all__ = ["TRIAL_CLASSES", "TrialReport", "run_entropy_trial"]

BOTH_ACCEPT = "both-accept"
BOTH_REJECT = "both-reject"
TIGHTENING_COST = "tightening-cost"
TYPED_FAILURE_WIN = "typed-failure-win"
QUARANTINE_WIN = "quarantine-win"
QUARANTINE_COST = "quarantine-cost"
TRIAL_CLASSES = (
    BOTH_ACCEPT,
    BOTH_REJECT,
    TIGHTENING_COST,
    TYPED_FAILURE_WIN,
    QUARANTINE_WIN,
    QUARANTINE_COST,
)
_TOTAL_FIELDS = {
    BOTH_ACCEPT: "bothAccept",
    BOTH_REJECT: "bothReject",
    TIGHTENING_COST: "tighteningCost",
    TYPED_FAILURE_WIN: "typedFailureWin",
    QUARANTINE_WIN: "quarantineWin",
    QUARANTINE_COST: "quarantineCost",
}


@dataclass(slots=True)
class TrialReport:
    """``{verdict, declaredScore, effectiveScore, delta, totals, divergences}``."""

    verdict: str
    declared_score: float
    effective_score: float
    delta: float
    totals: dict[str, int] = field(default_factory=dict)
    divergences: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tightening_cost(self) -> int:
        return self.totals["tighteningCost"]

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "declaredScore": self.declared_score,
            "effectiveScore": self.effective_score,
            "delta": self.delta,
            "totals": dict(self.totals),
            "divergences": [dict(row) for row in self.divergences],
        }


def _schemas(surface: Mapping[str, Any]) -> dict[str, Any]:
    return {action["ref"]: action.get("inputSchema") for action in surface.get("actions") or ()}


def _operations(trace: Trace | Mapping[str, Any]) -> Sequence[Any]:
    if isinstance(trace, Trace):
        return trace.operations
    return [
        Operation(op["ref"], op["args"], op["outcome"], op.get("failureStage"))
        for op in trace.get("operations", ())
    ]


def run_entropy_trial(
    traces: Iterable[Trace | Mapping[str, Any]],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
) -> TrialReport:
    """``runEntropyTrial`` (spec §10)."""
    trace_list = list(traces)
    effective = apply_compiled_surface(live, artifact)
    declared = _schemas(live)
    compiled = _schemas(effective)
    declared_score = measure(trace_list, live, catalog_digest=surface_hash(live)).score
    effective_score = measure(trace_list, effective, catalog_digest=surface_hash(effective)).score
    buckets: dict[str, list[Any]] = {}
    for call in audit_calls or ():
        ref, args = (
            (call.ref, call.args) if isinstance(call, AuditCall) else (call["ref"], call["args"])
        )
        if ref in declared:
            buckets.setdefault(ref, []).append(args)
    totals = {"operations": 0, **dict.fromkeys(_TOTAL_FIELDS.values(), 0)}
    diverging: dict[tuple[str, str], int] = {}

    def record(ref: str, trial_class: str) -> None:
        totals["operations"] += 1
        totals[_TOTAL_FIELDS[trial_class]] += 1
        if trial_class not in (BOTH_ACCEPT, BOTH_REJECT):
            diverging[(ref, trial_class)] = diverging.get((ref, trial_class), 0) + 1

    for trace in trace_list:
        for op in _operations(trace):
            ref, args, outcome = op[0], op[1], op[2]
            if ref.startswith("fabric.") or ref not in declared or ref in buckets:
                continue
            if not accepts(declared[ref], args):
                record(ref, BOTH_REJECT)
            elif ref not in compiled:
                record(ref, QUARANTINE_COST if outcome == "succeeded" else QUARANTINE_WIN)
            elif accepts(compiled[ref], args):
                record(ref, BOTH_ACCEPT)
            else:
                record(ref, TIGHTENING_COST if outcome == "succeeded" else TYPED_FAILURE_WIN)
    for ref in sorted(buckets, key=code_unit_key):
        for args in buckets[ref]:
            if not accepts(declared[ref], args):
                record(ref, BOTH_REJECT)
            elif ref not in compiled:
                record(ref, QUARANTINE_COST)
            elif accepts(compiled[ref], args):
                record(ref, BOTH_ACCEPT)
            else:
                record(ref, TIGHTENING_COST)
    ordered = sorted(diverging.items(), key=lambda item: tuple(map(code_unit_key, item[0])))
    divergences: list[dict[str, Any]] = [
        {"ref": ref, "trialClass": trial_class, "count": count}
        for (ref, trial_class), count in ordered
    ]
    entries = 0
    if artifact is not None:
        entries = len(artifact.get("actions") or ()) + len(artifact.get("quarantined") or ())
    if entries == 0 or totals["operations"] == 0:
        verdict = "no-evidence"
    elif totals["tighteningCost"] + totals["quarantineCost"] == 0:
        verdict = "clean"
    else:
        verdict = "costly"
    return TrialReport(
        verdict,
        declared_score,
        effective_score,
        effective_score - declared_score,
        totals,
        divergences,
    )
