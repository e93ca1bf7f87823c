"""The held-out trial (spec §10): replay recorded calls against declared and compiled surfaces.

Every recorded call is classified, deterministically and pessimistically where the record is
silent (audits carry no outcome, so an audited call the artifact would reject is a cost,
never a win).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_entropy.core.artifact import apply_compiled_surface
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
from pytest_entropy.core.validation import CHECK_REJECT, CallChecks, accepts

__all__ = [
    "TrialCounts",
    "TrialReport",
    "TrialSurfaces",
    "TrialTally",
    "run_entropy_trial",
    "trial_from_tally",
]

BOTH_ACCEPT = "both-accept"
BOTH_REJECT = "both-reject"
TIGHTENING_COST = "tightening-cost"
TYPED_FAILURE_WIN = "typed-failure-win"
QUARANTINE_WIN = "quarantine-win"
QUARANTINE_COST = "quarantine-cost"
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


def _classify(declared: Any, compiled: Any, quarantined: bool, args: Any, ok: bool) -> str:
    """The trial class of one call; ``ok`` is whether it is known to have succeeded
    (audits carry no outcome and count as succeeded: the pessimistic reading)."""
    if not accepts(declared, args):
        return BOTH_REJECT
    if quarantined:
        return QUARANTINE_COST if ok else QUARANTINE_WIN
    if accepts(compiled, args):
        return BOTH_ACCEPT
    return TIGHTENING_COST if ok else TYPED_FAILURE_WIN


_RefChecks = tuple[Callable[[Any], bool], Callable[[Any], bool] | None, bool]


def _count(into: dict[str, dict[str, int]], ref: str, trial_class: str, n: int = 1) -> None:
    per_ref = into.get(ref)
    if per_ref is None:
        per_ref = into[ref] = {}
    per_ref[trial_class] = per_ref.get(trial_class, 0) + n


@dataclass(slots=True)
class TrialCounts:
    """The trial's class counts per ref, kept apart for trace calls and audit calls: plain
    data that travels between processes. ``merge`` of consecutive pieces equals one pass;
    an empty one is the start.

    A ref with any audit call is judged by its audits only (spec §10), which is known only
    once the whole corpus is read, so both are kept and :meth:`counts` chooses.
    """

    trace_classes: dict[str, dict[str, int]] = field(default_factory=dict)
    audit_classes: dict[str, dict[str, int]] = field(default_factory=dict)

    def merge(self, other: TrialCounts) -> TrialCounts:
        """Fold in the counts of the input that follows; returns ``self``."""
        for mine, theirs in (
            (self.trace_classes, other.trace_classes),
            (self.audit_classes, other.audit_classes),
        ):
            for ref, classes in theirs.items():
                per_ref = mine.get(ref)
                if per_ref is None:
                    # What _count builds class by class: the same order, the same sums.
                    mine[ref] = {trial_class: 0 + n for trial_class, n in classes.items()}
                    continue
                for trial_class, n in classes.items():
                    per_ref[trial_class] = per_ref.get(trial_class, 0) + n
        return self

    def add_native(
        self, counted: tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]
    ) -> TrialCounts:
        """Fold in what the Rust core counted over the input that follows (its
        ``TrialTally.counts()``: trace and audit classes per ref); returns ``self``."""
        trace_classes, audit_classes = counted
        if not self.trace_classes and not self.audit_classes:
            # Nothing to add to: the core's fresh dicts (no one else holds them) are the counts.
            self.trace_classes, self.audit_classes = trace_classes, audit_classes
            return self
        return self.merge(TrialCounts(trace_classes, audit_classes))

    def counts(self) -> dict[tuple[str, str], int]:
        """Calls per ``(ref, trial class)``: audits for audited refs, traces for the rest."""
        out: dict[tuple[str, str], int] = {}
        for source, skip in ((self.trace_classes, self.audit_classes), (self.audit_classes, {})):
            for ref, classes in source.items():
                if ref in skip:
                    continue
                for trial_class, n in classes.items():
                    out[(ref, trial_class)] = out.get((ref, trial_class), 0) + n
        return out


class TrialSurfaces:
    """The declared and compiled schemas of one trial and the checks built from them,
    prepared once and shared by the tallies of one command (one tally per file): the
    surfaces' action maps and each ref's two checks are built once per process. It pickles
    as its surfaces and checks; a worker prepares its own."""

    __slots__ = (
        "_built_checks",
        "_verdicts",
        "checks",
        "compiled",
        "declared",
        "effective",
        "live",
        "per_ref",
    )

    def __init__(
        self,
        live: Mapping[str, Any],
        effective: Mapping[str, Any],
        checks: CallChecks | None = None,
    ) -> None:
        self.live = live
        self.effective = effective
        self.checks = checks
        # What builds the per-ref checks (a private one when the tallies run plain).
        self._built_checks = checks if checks is not None else CallChecks()
        self.declared = action_schemas(live)
        self.compiled = action_schemas(effective)
        self.per_ref: dict[str, _RefChecks] = {}
        self._verdicts: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"live": self.live, "effective": self.effective, "checks": self.checks}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["live"], state["effective"], state["checks"])  # type: ignore[misc]

    def ref_checks(self, ref: str) -> _RefChecks:
        """``(declared check, compiled check or None, quarantined)`` of a declared ref."""
        per_ref = self.per_ref.get(ref)
        if per_ref is None:
            checks = self._built_checks
            declared = checks(self.declared[ref])
            quarantined = ref not in self.compiled
            compiled = None if quarantined else checks(self.compiled.get(ref))
            per_ref = self.per_ref[ref] = (declared, compiled, quarantined)
        return per_ref

    def native_verdicts(self, native: Any) -> Any:
        """The Rust core's ``TrialVerdicts`` of these surfaces, built on first use."""
        if self._verdicts is None:
            self._verdicts = native.TrialVerdicts(list(self.declared), self._native_parts)
        return self._verdicts

    def _native_parts(self, ref: str) -> tuple[int, Any, int, Any, bool, bool]:
        # What the Rust core's trial runs for ref: each check's kind and function, and
        # whether the compiled check is the declared one (CallChecks.parts).
        declared, compiled, quarantined = self.ref_checks(ref)
        checks = self._built_checks
        dkind, dfunc = checks.parts(declared)
        ckind, cfunc = (CHECK_REJECT, None) if compiled is None else checks.parts(compiled)
        return dkind, dfunc, ckind, cfunc, quarantined, compiled is declared


class TrialTally:
    """The trial's replay as a mergeable accumulator: it classifies calls against the
    declared and compiled schemas into :attr:`counts` (:class:`TrialCounts`). The schemas
    stay with the tally; a worker sends back only the counts.

    ``checks`` (a :class:`~pytest_entropy.core.validation.CallChecks` shared by the tallies
    of one command) turns each ref's two schemas into one check each, built once, and a
    compiled schema equal to the declared one is not evaluated a second time. Without it
    (a caller that passes none) every call goes through
    :func:`~pytest_entropy.core.validation.accepts`.
    :meth:`over` makes a tally of prepared :class:`TrialSurfaces` (the tallies of one
    command share them).

    The Rust core's trial (``native/src/trial.rs``) classifies and counts with the same
    checks (:meth:`native_parts`) where the pipeline reads a file natively."""

    __slots__ = (
        "_checks",
        "_compiled",
        "_declared",
        "_per_ref",
        "_surfaces",
        "counts",
    )

    def __init__(
        self,
        live: Mapping[str, Any],
        effective: Mapping[str, Any],
        checks: CallChecks | None = None,
    ) -> None:
        self._start(TrialSurfaces(live, effective, checks))

    @classmethod
    def over(cls, surfaces: TrialSurfaces) -> TrialTally:
        """A fresh tally of prepared surfaces (and their checks)."""
        tally = cls.__new__(cls)
        tally._start(surfaces)
        return tally

    def _start(self, surfaces: TrialSurfaces) -> None:
        self._surfaces = surfaces
        self._declared = surfaces.declared
        self._compiled = surfaces.compiled
        checks = surfaces.checks
        self._checks = checks
        self._per_ref = surfaces.per_ref
        self.counts = TrialCounts()

    def hooks(
        self,
    ) -> tuple[
        Callable[[Any], None],
        Callable[[Any], None],
        Callable[[Sequence[Sequence[Any]], str, str | None], None] | None,
    ]:
        """``(on_trace, on_audit, on_signed)`` for a reader; ``on_signed`` (a scanner's
        guarded operations, without the :class:`Trace` built from them) only for a tally
        with checks."""
        return self.add_trace, self.add_audit, self.add_signed if self._checks else None

    def counts_natively(self) -> bool:
        """Whether the Rust core may count for this tally: it has checks (without them,
        every call goes through ``accepts``)."""
        return self._checks is not None

    def native_verdicts(self, native: Any) -> Any:
        """The Rust core's ``TrialVerdicts`` of these surfaces (``native`` is the core):
        the declared refs and, per ref, its checks (``TrialSurfaces._native_parts``), with
        the verdicts remembered across the tallies of one command. What the core counts
        comes back through :meth:`TrialCounts.add_native` of :attr:`counts`."""
        return self._surfaces.native_verdicts(native)

    def _classify_call(self, ref: str, args: Any, ok: bool) -> str:
        checks = self._checks
        if checks is None:
            return _classify(
                self._declared[ref], self._compiled.get(ref), ref not in self._compiled, args, ok
            )
        per_ref = self._per_ref.get(ref)
        if per_ref is None:
            per_ref = self._surfaces.ref_checks(ref)
        declared, compiled, quarantined = per_ref
        if not declared(args):
            return BOTH_REJECT
        if quarantined:
            return QUARANTINE_COST if ok else QUARANTINE_WIN
        # One check serves equal schemas, and it just accepted these arguments.
        if compiled is declared or (compiled is not None and compiled(args)):
            return BOTH_ACCEPT
        return TIGHTENING_COST if ok else TYPED_FAILURE_WIN

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        declared = self._declared
        trace_classes = self.counts.trace_classes
        classify = self._classify_call
        for op in operations_of(trace):
            ref, args, outcome = op[0], op[1], op[2]
            if ref.startswith("fabric.") or ref not in declared:
                continue
            _count(trace_classes, ref, classify(ref, args, outcome == "succeeded"))

    def add_signed(self, signed: Sequence[Sequence[Any]], task_key: str, model: str | None) -> None:
        """:meth:`add_trace` of the trace a scanner builds from its guarded operations
        ``signed`` (``(ref, args, outcome, failure stage, signature)``), not built."""
        declared = self._declared
        trace_classes = self.counts.trace_classes
        classify = self._classify_call
        for op in signed:
            ref, args, outcome = op[0], op[1], op[2]
            if ref.startswith("fabric.") or ref not in declared:
                continue
            _count(trace_classes, ref, classify(ref, args, outcome == "succeeded"))

    def add_audit(self, call: AuditCall | Mapping[str, Any]) -> None:
        ref, args = audit_fields(call)
        if ref not in self._declared:
            return
        _count(self.counts.audit_classes, ref, self._classify_call(ref, args, True))


def run_entropy_trial(
    traces: Iterable[Trace | Mapping[str, Any]],
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None = None,
    audit_calls: Iterable[AuditCall | Mapping[str, Any]] | None = None,
) -> TrialReport:
    """``runEntropyTrial`` (spec §10)."""
    effective = apply_compiled_surface(live, artifact)
    state = MeterState(retain_terms=False)
    tally = TrialTally(live, effective, CallChecks())
    for trace in traces:
        state.add_trace(trace)
        tally.add_trace(trace)
    for call in audit_calls or ():
        tally.add_audit(call)
    return trial_from_tally(state, tally.counts, live, artifact, effective)


def trial_from_tally(
    state: MeterState,
    counts: TrialCounts,
    live: Mapping[str, Any],
    artifact: Mapping[str, Any] | None,
    effective: Mapping[str, Any],
) -> TrialReport:
    """The trial report from the whole corpus's meter state and trial counts;
    ``effective`` is ``live`` with ``artifact`` applied (the counts were taken against it)."""
    declared_score = state.finalize(live, catalog_digest=surface_hash(live)).score
    effective_score = state.finalize(effective, catalog_digest=surface_hash(effective)).score
    totals = {"operations": 0, **dict.fromkeys(_TOTAL_FIELDS.values(), 0)}
    diverging: dict[tuple[str, str], int] = {}
    for (ref, trial_class), n in counts.counts().items():
        totals["operations"] += n
        totals[_TOTAL_FIELDS[trial_class]] += n
        if trial_class not in (BOTH_ACCEPT, BOTH_REJECT):
            diverging[(ref, trial_class)] = n
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
