"""The meter's per-ref accumulator and the fast path that feeds a trace to two states.

Split from :mod:`pytest_entropy.core.meter` to keep that module small; ``MeterState._apply``
there stays the plain specification that :func:`apply_twice` must equal.
"""

from __future__ import annotations

from typing import Any, Final, cast

__all__ = ["INVOCATION_REJECTION_STAGES", "apply_twice"]

INVOCATION_REJECTION_STAGES: Final = frozenset({"resolve", "prepare", "validate"})


class _RefAccumulator:
    __slots__ = (
        "calls",
        "churn_pairs",
        "churn_sum",
        "churn_terms",
        "failed",
        "signatures",
        "stages",
        "succeeded",
    )

    def __init__(self) -> None:
        self.calls = 0
        self.succeeded = 0
        self.failed = 0
        self.signatures: dict[str, int] = {}
        self.stages: dict[str, int] = {}
        self.churn_pairs = 0
        self.churn_sum = 0.0
        self.churn_terms: list[float] = []

    def copy(self) -> _RefAccumulator:
        clone = _RefAccumulator()
        clone.calls = self.calls
        clone.succeeded = self.succeeded
        clone.failed = self.failed
        clone.signatures = dict(self.signatures)
        clone.stages = dict(self.stages)
        clone.churn_pairs = self.churn_pairs
        clone.churn_sum = self.churn_sum
        clone.churn_terms = list(self.churn_terms)
        return clone


def apply_twice(
    self: Any,  # two MeterStates (typed loosely: meter imports this module)
    model_state: Any,
    items: list[tuple[str, str, str, str | None, float | None]],
    discovery: int,
    workflow: int,
    sequence_key: str | None,
    task: str,
) -> None:
    """``self._apply(...)`` then ``model_state._apply(...)`` with the same arguments, in
    one walk over the items (a model-stamped trace feeds both states); ``items`` is not
    empty. The fast path of ``MeterState.add_signed``: every count, map order and float sum
    comes out as the two calls leave them (``tests/property/test_meter_properties.py``)."""
    actions = len(items)
    operations = actions + discovery + workflow
    retain = self.retain_terms
    refs, model_refs = self.refs, model_state.refs
    succeeded = failed = aborted = timed_out = rejections = 0
    churn_pairs = 0
    for ref, signature, outcome, stage, distance in items:
        acc = refs.get(ref)
        if acc is None:
            acc = refs[ref] = _RefAccumulator()
        model_acc = model_refs.get(ref)
        if model_acc is None:
            model_acc = model_refs[ref] = _RefAccumulator()
        acc.calls += 1
        model_acc.calls += 1
        if outcome == "succeeded":
            succeeded += 1
            acc.succeeded += 1
            model_acc.succeeded += 1
        elif outcome == "failed":
            failed += 1
            acc.failed += 1
            model_acc.failed += 1
            name = cast(str, stage)  # add_signed gave every failure a stage
            stages = acc.stages
            stages[name] = stages.get(name, 0) + 1
            stages = model_acc.stages
            stages[name] = stages.get(name, 0) + 1
            if stage in INVOCATION_REJECTION_STAGES:
                rejections += 1
        elif outcome == "aborted":
            aborted += 1
        else:
            timed_out += 1
        signatures = acc.signatures
        signatures[signature] = signatures.get(signature, 0) + 1
        signatures = model_acc.signatures
        signatures[signature] = signatures.get(signature, 0) + 1
        if distance is not None:
            churn_pairs += 1
            for state, ref_acc in ((self, acc), (model_state, model_acc)):
                ref_acc.churn_pairs += 1
                ref_acc.churn_sum += distance
                state.churn_sum += distance
                if retain:
                    ref_acc.churn_terms.append(distance)
                    state.churn_terms.append(distance)
    for state in (self, model_state):
        state.traces += 1
        state.operations += operations
        state.action_operations += actions
        state.discovery_operations += discovery
        state.workflow_operations += workflow
        state.churn_pairs += churn_pairs
        state.succeeded += succeeded
        state.failed += failed
        state.aborted += aborted
        state.timed_out += timed_out
        state.invocation_rejections += rejections
        if sequence_key is not None:
            counts = state.task_sequences.get(task)
            if counts is None:
                counts = state.task_sequences[task] = {}
            counts[sequence_key] = counts.get(sequence_key, 0) + 1
