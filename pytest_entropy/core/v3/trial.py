"""The held-out trial of metric v3: representation replay (notes §7.2).

The v3 trial executes nothing and rewrites no outcome: it replays each recorded call's
arguments through the same normaliser the runtime uses (:mod:`pytest_entropy.core.v3.normal_form`)
with the artifact's proven plans, and checks four laws per call:

* a call the declared schema accepts comes back as the very same object with no witness
  (``canonicalIdentityCost`` otherwise);
* normalising a normalised call changes nothing (``idempotenceCost`` otherwise);
* a normalisation never turns an accepted call into a rejected one (``tighteningCost``);
* a rejected call the plan repairs, with a witness, is a ``normalization-win``.

The scores are the v3 measurement of the corpus on the live surface, so ``declaredScore``
equals ``effectiveScore`` and ``delta`` is 0. Audit calls replace the projected trace
arguments per ref, wholesale, which is known only once the whole corpus is read, so
:class:`V3TrialCounts` keeps audit and trace counts apart per ref and merges exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.core.meter import MeterState
from pytest_entropy.core.records import (
    AuditCall,
    Trace,
    action_schemas,
    audit_fields,
    operations_of,
)
from pytest_entropy.core.status import surface_hash
from pytest_entropy.core.v3.artifact import plans_of
from pytest_entropy.core.v3.meter import finalize_v3
from pytest_entropy.core.v3.normal_form import apply_normal_form_plan, proves_normal_form_plan
from pytest_entropy.core.validation import accepts

__all__ = [
    "TOTAL_FIELDS",
    "V3TrialCounts",
    "V3TrialReport",
    "V3TrialTally",
    "proven_plans",
    "run_entropy_trial_v3",
    "trial_from_counts",
]

TOTAL_FIELDS: Final = (
    "operations",
    "bothAccept",
    "bothReject",
    "normalizationWin",
    "canonicalIdentityChecks",
    "canonicalIdentityCost",
    "idempotenceCost",
    "tighteningCost",
    "typedFailureWin",
    "quarantineWin",
    "quarantineCost",
)
# Counted per ref beside the totals: calls that had a plan, and the divergent classes.
_PLANNED = "planned"
_CLASS_FIELDS: Final = {
    "tighteningCost": "tightening-cost",
    "normalizationWin": "normalization-win",
}
_SKIPPED_PREFIXES: Final = ("fabric.discovery.", "fabric.workflow.")


@dataclass(slots=True)
class V3TrialReport:
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

    def costs(self) -> int:
        """What v3 certification counts as a trial failure."""
        totals = self.totals
        return (
            totals["tighteningCost"]
            + totals["quarantineCost"]
            + totals["canonicalIdentityCost"]
            + totals["idempotenceCost"]
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "declaredScore": self.declared_score,
            "effectiveScore": self.effective_score,
            "delta": self.delta,
            "totals": dict(self.totals),
            "divergences": [dict(row) for row in self.divergences],
        }


def proven_plans(live: Mapping[str, Any], artifact: Mapping[str, Any] | None) -> dict[str, Any]:
    """The plans of a version-2 ``artifact`` that prove against ``live``, by ref."""
    schemas = action_schemas(live)
    plans: dict[str, Any] = {}
    for plan in plans_of(artifact):
        if proves_normal_form_plan(plan, schemas.get(plan.get("ref"))):
            plans[plan["ref"]] = plan
    return plans


def _bump(into: dict[str, dict[str, int]], ref: str, counts: Mapping[str, int]) -> None:
    mine = into.get(ref)
    if mine is None:
        mine = into[ref] = {}
    for name, n in counts.items():
        mine[name] = mine.get(name, 0) + n


@dataclass(slots=True)
class V3TrialCounts:
    """Per ref, the counters of its audit calls and of its trace calls: plain data that
    travels between processes; ``merge`` of consecutive pieces equals one pass. ``audited``
    holds every ref with an audit call (known or not), whose trace calls do not count."""

    audit: dict[str, dict[str, int]] = field(default_factory=dict)
    trace: dict[str, dict[str, int]] = field(default_factory=dict)
    audited: set[str] = field(default_factory=set)

    def merge(self, other: V3TrialCounts) -> V3TrialCounts:
        """Fold in the counts of the input that follows; returns ``self``."""
        for mine, theirs in ((self.audit, other.audit), (self.trace, other.trace)):
            for ref, counts in theirs.items():
                _bump(mine, ref, counts)
        self.audited |= other.audited
        return self

    def per_ref(self) -> dict[str, dict[str, int]]:
        """The counters that count: audits for audited refs, traces for the rest."""
        out = {ref: dict(counts) for ref, counts in self.audit.items()}
        for ref, counts in self.trace.items():
            if ref not in self.audited:
                out[ref] = dict(counts)
        return out


class V3TrialTally:
    """Classifies calls into :class:`V3TrialCounts` against one live surface and its plans."""

    __slots__ = ("_plans", "_schemas", "counts")

    def __init__(self, live: Mapping[str, Any], plans: Mapping[str, Any]) -> None:
        self._schemas = action_schemas(live)
        self._plans = plans
        self.counts = V3TrialCounts()

    def _classify(self, ref: str, args: Any) -> dict[str, int] | None:
        if ref.startswith(_SKIPPED_PREFIXES) or ref not in self._schemas:
            return None
        schema = self._schemas[ref]
        plan = self._plans.get(ref)
        counts: dict[str, int] = {"operations": 1}
        if plan is not None:
            counts[_PLANNED] = 1
        before = accepts(schema, args)
        once = apply_normal_form_plan(ref, schema, args, plan)
        normalized, witness = once.args, once.witness
        after = accepts(schema, normalized)
        if before:
            counts["canonicalIdentityChecks"] = 1
            if normalized is not args or witness is not None:
                counts["canonicalIdentityCost"] = 1
        twice = apply_normal_form_plan(ref, schema, normalized, plan)
        if twice.args is not normalized or twice.witness is not None:
            counts["idempotenceCost"] = 1
        if before and not after:
            counts["tighteningCost"] = 1
        elif before:
            counts["bothAccept"] = 1
        elif after and witness is not None:
            counts["normalizationWin"] = 1
        else:
            counts["bothReject"] = 1
        return counts

    def add_audit(self, call: AuditCall | Mapping[str, Any]) -> None:
        ref, args = audit_fields(call)
        self.counts.audited.add(ref)
        counts = self._classify(ref, args)
        if counts is not None:
            _bump(self.counts.audit, ref, counts)

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        for op in operations_of(trace):
            counts = self._classify(op[0], op[1])
            if counts is not None:
                _bump(self.counts.trace, op[0], counts)


def trial_from_counts(score: float, counts: V3TrialCounts) -> V3TrialReport:
    """The v3 trial report from the corpus's v3 ``score`` and its merged counts."""
    totals = dict.fromkeys(TOTAL_FIELDS, 0)
    planned = 0
    divergences: list[dict[str, Any]] = []
    for ref, per_ref in counts.per_ref().items():
        planned += per_ref.get(_PLANNED, 0)
        for name in TOTAL_FIELDS:
            totals[name] += per_ref.get(name, 0)
        for name, trial_class in _CLASS_FIELDS.items():
            if per_ref.get(name):
                divergences.append({"ref": ref, "trialClass": trial_class, "count": per_ref[name]})
    divergences.sort(key=lambda row: (code_unit_key(row["ref"]), code_unit_key(row["trialClass"])))
    costs = totals["tighteningCost"] + totals["canonicalIdentityCost"] + totals["idempotenceCost"]
    verdict = "costly" if costs > 0 else "no-evidence" if planned == 0 else "clean"
    return V3TrialReport(verdict, score, score, 0, totals, divergences)


def run_entropy_trial_v3(
    traces: Iterable[Trace | Mapping[str, Any]],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
) -> V3TrialReport:
    """``runEntropyTrial`` of metric v3 on in-memory records.

    The scores are the v3 measurement of ``traces`` on ``live`` with the live surface's
    hash as catalogue digest.
    """
    trace_list = list(traces)
    state = MeterState(retain_terms=False)
    state.add_traces(trace_list)
    score = finalize_v3(state, live, None, surface_hash(live)).score
    tally = V3TrialTally(live, proven_plans(live, artifact))
    for call in audit_calls or ():
        tally.add_audit(call)
    for trace in trace_list:
        tally.add_trace(trace)
    return trial_from_counts(score, tally.counts)
