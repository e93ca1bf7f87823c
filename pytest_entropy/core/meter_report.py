"""The meter's finalising loops (spec §3.3-§3.5): per-ref scores and the flow entropy.

:meth:`~pytest_entropy.core.meter.MeterState.finalize` turns a state into a report; the two
loops over its refs and its task sequences live here (on every path: the Rust core hands
over a finished state, and the report is finalised in Python).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_entropy.core.fingerprint import shannon_entropy_bits, static_freedom
from pytest_entropy.core.jscompat import code_unit_key, round_metric
from pytest_entropy.core.meter_state import _RefAccumulator
from pytest_entropy.core.records import RefRow, ShapeCount
from pytest_entropy.core.typing_lite import NamedTuple

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["RefScores", "SurfaceIndex", "flow_terms", "ref_order", "ref_scores", "top_shapes"]

# A ref row lists its most frequent shape signatures, at most this many (spec §3).
_SHAPES_SHOWN: Final = 8


class SurfaceIndex:
    """Ref -> schema (later duplicates win) with static freedom computed once per ref."""

    __slots__ = ("_freedom", "schemas")

    def __init__(self, surface: Mapping[str, Any] | None) -> None:
        self.schemas: dict[str, Any] = {}
        self._freedom: dict[str, float] = {}
        if surface is None:
            return
        for action in surface.get("actions") or ():
            if type(action) is dict and type(action.get("ref")) is str:
                self.schemas[action["ref"]] = action.get("inputSchema")

    def freedom(self, ref: str) -> float:
        if ref not in self.schemas:
            return 0.0
        value = self._freedom.get(ref)
        if value is None:
            value = self._freedom[ref] = static_freedom(self.schemas[ref])
        return value


class RefScores(NamedTuple):
    """The sums over a state's refs that the report's totals need, and its ref rows."""

    static_total: float
    static_weighted: float
    shape_weighted: float
    stage_weighted: float
    score_sum: float
    rows: list[RefRow]


def ref_order(refs: Mapping[str, Any], order: Sequence[str] | None) -> list[str]:
    """``refs`` in code-unit order. ``order`` (the global state's refs in that order) orders
    a model's refs, a subset of them, without sorting again; a ref outside it sorts anew."""
    if order is not None:
        ordered = [ref for ref in order if ref in refs]
        if len(ordered) == len(refs):
            return ordered
    return sorted(refs, key=code_unit_key)


def ref_scores(
    refs: dict[str, _RefAccumulator],
    order: list[str],
    index: SurfaceIndex,
    lexicon: Mapping[str, int],
    weights: tuple[Any, Any, Any, Any, Any],
    with_rows: bool,
) -> RefScores:
    """Each ref's entropy components and score, in ``order``, and the running sums."""
    shape_weight, stage_weight, churn_weight, lexicon_weight, freedom_weight = weights
    ref_rows: list[RefRow] = []
    static_total = 0.0
    static_weighted = 0.0
    shape_weighted = 0.0
    stage_weighted = 0.0
    score_sum = 0.0
    entropy = shannon_entropy_bits
    freedom_of = index.freedom
    for ref in order:
        acc = refs[ref]
        shape_bits = entropy(acc.signatures.values())
        stage_bits = entropy(acc.stages.values())
        churn = round_metric(acc.churn_sum / acc.churn_pairs) if acc.churn_pairs else 0.0
        rows = lexicon.get(ref, 0)
        freedom = freedom_of(ref)
        # Spec §4: the per-ref score is the weighted sum of its five components.
        score = round_metric(
            shape_weight * shape_bits
            + stage_weight * stage_bits
            + churn_weight * churn
            + lexicon_weight * rows
            + freedom_weight * freedom
        )
        static_total += freedom
        static_weighted += freedom_weight * freedom
        shape_weighted += shape_bits * acc.calls
        stage_weighted += stage_bits * acc.failed
        score_sum += score
        if with_rows:
            ref_rows.append(_ref_row(ref, acc, shape_bits, stage_bits, churn, rows, freedom, score))
    return RefScores(
        static_total, static_weighted, shape_weighted, stage_weighted, score_sum, ref_rows
    )


def _ref_row(
    ref: str,
    acc: _RefAccumulator,
    shape_bits: float,
    stage_bits: float,
    churn: float,
    rows: int,
    freedom: float,
    score: float,
) -> RefRow:
    return RefRow(
        ref=ref,
        calls=acc.calls,
        succeeded=acc.succeeded,
        failed=acc.failed,
        shape_signatures=_top_shapes(acc.signatures),
        shape_entropy_bits=shape_bits,
        failure_stage_entropy_bits=stage_bits,
        churn_rate=churn,
        lexicon_rows=rows,
        static_freedom=freedom,
        score=score,
    )


def _top_shapes(signatures: dict[str, int]) -> tuple[ShapeCount, ...]:
    """The most frequent signatures first, ties in code-unit order, at most eight."""
    shapes = sorted(signatures.items(), key=lambda item: code_unit_key(item[0]))
    shapes.sort(key=lambda item: -item[1])
    return tuple(ShapeCount(sig, count) for sig, count in shapes[:_SHAPES_SHOWN])


# Public name of the same function for the metric-v3 finalisation (core/v3/meter.py).
top_shapes = _top_shapes


def flow_terms(task_sequences: dict[str, dict[str, int]]) -> tuple[float, int]:
    """``(flow_weighted, flow_occurrences)``: each task's sequence entropy weighted by its
    occurrences, summed in first-seen order."""
    flow_weighted = 0.0
    flow_occurrences = 0
    for sequences in task_sequences.values():
        occurrences = 0
        for count in sequences.values():
            occurrences += count
        flow_weighted += shannon_entropy_bits(sequences.values()) * occurrences
        flow_occurrences += occurrences
    return flow_weighted, flow_occurrences
