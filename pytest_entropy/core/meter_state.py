"""What the meter keeps per ref, shared by the v2 meter (``core/meter.py``), its finalising
loops (``core/meter_report.py``) and the v3 meter (``core/v3/meter.py``): the accumulator of
one ref's calls and the failure stages that count as invocation rejections."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Final


__all__ = ["INVOCATION_REJECTION_STAGES"]

# The failure stages at which a call was refused before it ran: the meter's invocation
# rejections (metric v3 scores their rate).
INVOCATION_REJECTION_STAGES: Final = frozenset({"resolve", "prepare", "validate"})


class _RefAccumulator:
    """One ref's calls, outcomes, shape signatures, failure stages and churn terms (the
    slots :meth:`MeterState.finalize` reads; the Rust core hands the same fields over as
    plain data, ``MeterState.from_plain``)."""

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
