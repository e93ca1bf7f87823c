"""The meter's per-ref accumulator, in a module of its own so that ``core/meter.py`` and
``core/meter_report.py`` can both import it."""

from __future__ import annotations

from typing import Final

__all__ = ["INVOCATION_REJECTION_STAGES"]

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
