"""Metric v3's finalisation: the invocation-rejection rate as the objective (notes §3.3-§3.4).

The accumulation pass is the one :class:`~pytest_entropy.core.meter.MeterState` runs for
every generation; only the step from counts to numbers differs, and it differs in three
places:

* a ref's ``score`` is its share of calls rejected before they could take effect (failed at
  ``resolve``, ``prepare`` or ``validate``), a fraction in [0, 1];
* the global ``score`` is the same share over all action operations, and
  ``behavioralScore`` equals it, so duplicating a corpus leaves it unchanged (v2 divides a
  sum of entropy terms by the successes, which a growing corpus flatters);
* ``staticScore`` is 0.25 × the calls-weighted mean schema freedom (a diagnostic, never
  part of the score).

Every other field (shape, stage, churn, navigation, flow, lexicon, static freedom, totals,
ref order) is computed as in v2, so the report has v2's keys with ``metricVersion`` 3.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

from pytest_entropy.core.fingerprint import shannon_entropy_bits
from pytest_entropy.core.jscompat import code_unit_key, round_metric
from pytest_entropy.core.meter_report import SurfaceIndex, flow_terms, top_shapes
from pytest_entropy.core.meter_state import INVOCATION_REJECTION_STAGES, _RefAccumulator
from pytest_entropy.core.records import (
    ModelRow,
    RefRow,
    RepairRow,
    Report,
    Totals,
    coerce_repairs,
)
from pytest_entropy.core.v3 import ENTROPY_METRIC_VERSION_V3


class MeterState(Protocol):
    """What finalisation reads of :class:`pytest_entropy.core.meter.MeterState` (named by
    shape, so that the meter can import this module without a cycle)."""

    traces: int
    operations: int
    action_operations: int
    discovery_operations: int
    workflow_operations: int
    succeeded: int
    failed: int
    aborted: int
    timed_out: int
    invocation_rejections: int
    churn_pairs: int
    churn_sum: float
    refs: dict[str, _RefAccumulator]
    task_sequences: dict[str, dict[str, int]]

    @property
    def models(self) -> Mapping[str, MeterState]: ...


__all__ = ["STATIC_FREEDOM_WEIGHT", "finalize_v3"]

# The one v2 weight v3 still reads (``ENTROPY_WEIGHTS.staticFreedom``), for ``staticScore``.
STATIC_FREEDOM_WEIGHT: Final = 0.25


def ref_rejections(acc: _RefAccumulator) -> int:
    """Calls of one ref that failed at an invocation stage (resolve, prepare, validate)."""
    return sum(acc.stages.get(stage, 0) for stage in INVOCATION_REJECTION_STAGES)


def finalize_v3(
    state: MeterState,
    surface: Mapping[str, Any] | None = None,
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    catalog_digest: str | None = None,
) -> Report:
    """The v3 report of everything ``state`` accumulated (``measureEntropy`` at metric 3).

    ``byModel`` rows come from each model's own state finalised against the same surface,
    repairs and catalog digest; their ``behavioralScore`` is that model's rejection rate.
    """
    rows = coerce_repairs(repairs)
    lexicon: dict[str, int] = {}
    for row in rows:
        lexicon[row.ref] = lexicon.get(row.ref, 0) + 1
    index = SurfaceIndex(surface)
    digest = "" if catalog_digest is None else catalog_digest
    by_model = tuple(
        _model_row(model, _report(state.models[model], index, lexicon, len(rows), digest, ()))
        for model in sorted(state.models, key=code_unit_key)
    )
    return _report(state, index, lexicon, len(rows), digest, by_model)


def _model_row(model: str, scoped: Report) -> ModelRow:
    totals = scoped.totals
    return ModelRow(
        model,
        totals.operations,
        totals.action_operations,
        totals.succeeded,
        totals.invocation_rejections,
        totals.invocation_rejections_per_1k,
        scoped.behavioral_score,
    )


def _report(
    state: MeterState,
    index: SurfaceIndex,
    lexicon: Mapping[str, int],
    repair_count: int,
    digest: str,
    by_model: tuple[ModelRow, ...],
) -> Report:
    ref_rows: list[RefRow] = []
    static_total = 0.0
    static_weighted = 0.0
    shape_weighted = 0.0
    stage_weighted = 0.0
    for ref in sorted(state.refs, key=code_unit_key):
        acc = state.refs[ref]
        shape_bits = shannon_entropy_bits(acc.signatures.values())
        stage_bits = shannon_entropy_bits(acc.stages.values())
        freedom = index.freedom(ref)
        static_total += freedom
        # Left to right as the reference multiplies: (weight × freedom) × calls.
        static_weighted += STATIC_FREEDOM_WEIGHT * freedom * acc.calls
        shape_weighted += shape_bits * acc.calls
        stage_weighted += stage_bits * acc.failed
        ref_rows.append(
            RefRow(
                ref=ref,
                calls=acc.calls,
                succeeded=acc.succeeded,
                failed=acc.failed,
                shape_signatures=top_shapes(acc.signatures),
                shape_entropy_bits=shape_bits,
                failure_stage_entropy_bits=stage_bits,
                churn_rate=(
                    round_metric(acc.churn_sum / acc.churn_pairs) if acc.churn_pairs else 0.0
                ),
                lexicon_rows=lexicon.get(ref, 0),
                static_freedom=freedom,
                score=round_metric(ref_rejections(acc) / acc.calls),
            )
        )
    actions = state.action_operations
    rejections = state.invocation_rejections
    flow_weighted, flow_occurrences = flow_terms(state.task_sequences)
    score = round_metric(rejections / actions) if actions else 0.0
    totals = Totals(
        traces=state.traces,
        operations=state.operations,
        action_operations=actions,
        discovery_operations=state.discovery_operations,
        workflow_operations=state.workflow_operations,
        succeeded=state.succeeded,
        failed=state.failed,
        aborted=state.aborted,
        timed_out=state.timed_out,
        invocation_rejections=rejections,
        invocation_rejections_per_1k=(
            round_metric(rejections / actions * 1000) if actions else 0.0
        ),
    )
    ref_rows.sort(key=lambda row: -row.score)
    return Report(
        metric_version=ENTROPY_METRIC_VERSION_V3,
        catalog_digest=digest,
        totals=totals,
        shape_entropy_bits=round_metric(shape_weighted / actions) if actions else 0.0,
        failure_stage_entropy_bits=(
            round_metric(stage_weighted / state.failed) if state.failed else 0.0
        ),
        churn_rate=(
            round_metric(state.churn_sum / state.churn_pairs) if state.churn_pairs else 0.0
        ),
        navigation_ratio=(round_metric(state.discovery_operations / actions) if actions else 0.0),
        flow_entropy_bits=(
            round_metric(flow_weighted / flow_occurrences) if flow_occurrences else 0.0
        ),
        lexicon_rows=repair_count,
        static_freedom=round_metric(static_total),
        static_score=round_metric(static_weighted / actions) if actions else 0.0,
        behavioral_score=score,
        score=score,
        refs=tuple(ref_rows),
        by_model=by_model,
    )
