"""The entropy meter as a map-merge-finalize (spec §3).

:class:`MeterState` accumulates traces one at a time and never keeps them: memory grows
with distinct refs, signatures, stages, tasks and action sequences, not with operations.
States of consecutive corpus slices merge in slice order and reproduce exactly what one
pass over the concatenation would have accumulated, including the first-seen order of
every map and the floating-point order of the churn sums (see :meth:`MeterState.merge`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pytest_entropy.core.canonical import stable_json_hash
from pytest_entropy.core.fingerprint import shape_signature, signature_distance
from pytest_entropy.core.jscompat import code_unit_key, round_metric
from pytest_entropy.core.meter_report import SurfaceIndex, flow_terms, ref_order, ref_scores
from pytest_entropy.core.meter_state import INVOCATION_REJECTION_STAGES, _RefAccumulator
from pytest_entropy.core.records import (
    ENTROPY_METRIC_VERSION,
    ENTROPY_METRIC_VERSION_V3,
    ModelRow,
    RepairRow,
    Report,
    Totals,
    Trace,
    check_metric_version,
    coerce_repairs,
)
from pytest_entropy.core.typing_lite import cast

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "DISCOVERY_PREFIX",
    "ENTROPY_WEIGHTS",
    "INVOCATION_REJECTION_STAGES",
    "WORKFLOW_PREFIX",
    "MeterState",
    "check_metric_version",
    "measure",
    "report_hash",
]

DISCOVERY_PREFIX = "fabric.discovery."
WORKFLOW_PREFIX = "fabric.workflow."
ENTROPY_WEIGHTS = {
    "shape": 1,
    "failureStage": 1,
    "churn": 4,
    "navigation": 4,
    "flow": 1,
    "lexicon": 2,
    "staticFreedom": 0.25,
}
# The formulas read the weights from the table above, one name each, so the table is the
# single place they are defined (multiplying by an int 1 keeps every float bit as it was).
_SHAPE_WEIGHT: Final = ENTROPY_WEIGHTS["shape"]
_STAGE_WEIGHT: Final = ENTROPY_WEIGHTS["failureStage"]
_CHURN_WEIGHT: Final = ENTROPY_WEIGHTS["churn"]
_NAVIGATION_WEIGHT: Final = ENTROPY_WEIGHTS["navigation"]
_FLOW_WEIGHT: Final = ENTROPY_WEIGHTS["flow"]
_LEXICON_WEIGHT: Final = ENTROPY_WEIGHTS["lexicon"]
_FREEDOM_WEIGHT: Final = ENTROPY_WEIGHTS["staticFreedom"]
# The per-ref score's weights in the order of its sum (meter_report.ref_scores).
_SCORE_WEIGHTS: Final = (
    _SHAPE_WEIGHT,
    _STAGE_WEIGHT,
    _CHURN_WEIGHT,
    _LEXICON_WEIGHT,
    _FREEDOM_WEIGHT,
)
_NO_TASK = "(none)"
_SEQUENCE_JOIN = "→"


def _merge_counts(into: dict[str, int], other: Mapping[str, int]) -> None:
    # Existing keys keep their position; new keys follow in the other map's order, which is
    # exactly the first-seen order of the concatenated input.
    for key, count in other.items():
        into[key] = into.get(key, 0) + count


def _counts(plain: Any) -> dict[str, int]:
    """A count map of ``MeterState.from_plain``'s data: a dict as it is, pairs as a dict."""
    return plain if type(plain) is dict else dict(plain)


class MeterState:
    """A mergeable accumulator over traces; :meth:`finalize` turns it into a :class:`Report`.

    ``retain_terms`` keeps the individual churn distances so that this state can later be
    merged *into* another one (as the right-hand side) with bit-identical float sums. A
    state that only ever accumulates, or only ever receives merges, can drop them.

    >>> state = MeterState()
    >>> state.add_trace(Trace((Operation("pi.read", {"path": "a"}, "succeeded"),), "t"))
    >>> state.finalize().totals.succeeded
    1
    """

    __slots__ = (
        "aborted",
        "action_operations",
        "churn_pairs",
        "churn_sum",
        "churn_terms",
        "discovery_operations",
        "failed",
        "invocation_rejections",
        "models",
        "operations",
        "refs",
        "retain_terms",
        "succeeded",
        "task_sequences",
        "timed_out",
        "traces",
        "workflow_operations",
    )

    def __init__(self, *, retain_terms: bool = True) -> None:
        self.retain_terms = retain_terms
        self.traces = 0
        self.operations = 0
        self.action_operations = 0
        self.discovery_operations = 0
        self.workflow_operations = 0
        self.succeeded = 0
        self.failed = 0
        self.aborted = 0
        self.timed_out = 0
        self.invocation_rejections = 0
        self.refs: dict[str, _RefAccumulator] = {}
        self.churn_pairs = 0
        self.churn_sum = 0.0
        self.churn_terms: list[float] = []
        self.task_sequences: dict[str, dict[str, int]] = {}
        self.models: dict[str, MeterState] = {}

    # ------------------------------------------------------------------ accumulation

    def add_trace(self, trace: Trace | Mapping[str, Any]) -> None:
        """Accumulate one trace (a :class:`Trace` or a spec-shaped dict)."""
        if isinstance(trace, Trace):
            self.add_operations(trace.operations, trace.task_key, trace.model)
            return
        ops = [
            (op["ref"], op["args"], op["outcome"], op.get("failureStage"))
            for op in trace.get("operations", ())
        ]
        self.add_operations(ops, trace.get("taskKey"), trace.get("model"))

    def add_traces(self, traces: Iterable[Trace | Mapping[str, Any]]) -> None:
        for trace in traces:
            self.add_trace(trace)

    def add_operations(
        self,
        operations: Iterable[Sequence[Any]],
        task_key: str | None = None,
        model: str | None = None,
    ) -> None:
        """Accumulate one trace given as ``(ref, args, outcome, failure_stage)`` tuples."""
        self.add_signed(
            [(op[0], op[1], op[2], op[3], shape_signature(op[1])) for op in operations],
            task_key,
            model,
        )

    def add_signed_many(
        self, entries: list[tuple[Iterable[Sequence[Any]], str | None, str | None]]
    ) -> None:
        """:meth:`add_signed` for each ``(operations, task_key, model)`` of ``entries``, in
        order."""
        for operations, task_key, model in entries:
            self.add_signed(operations, task_key, model)

    def add_signed(
        self,
        operations: Iterable[Sequence[Any]],
        task_key: str | None = None,
        model: str | None = None,
    ) -> None:
        """Accumulate one trace of ``(ref, args, outcome, failure_stage, signature)`` tuples.

        The per-trace derivations (churn distances, the action sequence) happen once; the
        counts then go to the global state and, for a stamped trace, to the model's own
        state. The Rust core's ``meter.rs`` mirrors this method and :meth:`_apply`.
        """
        pending: dict[str, str] | None = None
        sequence: list[str] = []
        items: list[tuple[str, str, str, str | None, float | None]] = []
        append = items.append
        discovery = workflow = 0
        for ref, _args, outcome, stage, signature in operations:
            if ref.startswith("fabric."):
                if ref.startswith(DISCOVERY_PREFIX):
                    discovery += 1
                    continue
                if ref.startswith(WORKFLOW_PREFIX):
                    workflow += 1
                    continue
            sequence.append(ref)
            distance = None
            if pending:
                previous = pending.pop(ref, None)
                if previous is not None:
                    distance = signature_distance(previous, signature)
            if outcome == "failed":
                if stage is None:
                    stage = "unknown"
                if pending is None:
                    pending = {}
                pending[ref] = signature
            append((ref, signature, outcome, stage, distance))
        key = _SEQUENCE_JOIN.join(sequence) if sequence else None
        task = _NO_TASK if task_key is None else task_key
        if not model:
            self._apply(items, discovery, workflow, key, task)
            return
        model_state = self.models.get(model)
        if model_state is None:
            model_state = MeterState(retain_terms=self.retain_terms)
            self.models[model] = model_state
        self._apply(items, discovery, workflow, key, task)
        model_state._apply(items, discovery, workflow, key, task)

    def _apply(
        self,
        items: list[tuple[str, str, str, str | None, float | None]],
        discovery: int,
        workflow: int,
        sequence_key: str | None,
        task: str,
    ) -> None:
        self.traces += 1
        actions = len(items)
        self.operations += actions + discovery + workflow
        self.action_operations += actions
        self.discovery_operations += discovery
        self.workflow_operations += workflow
        if not actions:
            return
        refs = self.refs
        retain = self.retain_terms
        succeeded = failed = aborted = timed_out = rejections = 0
        for ref, signature, outcome, stage, distance in items:
            acc = refs.get(ref)
            if acc is None:
                acc = _RefAccumulator()
                refs[ref] = acc
            acc.calls += 1
            if outcome == "succeeded":
                succeeded += 1
                acc.succeeded += 1
            elif outcome == "failed":
                failed += 1
                acc.failed += 1
                stages = acc.stages
                name = cast("str", stage)  # add_signed gave every failure a stage
                stages[name] = stages.get(name, 0) + 1
                if stage in INVOCATION_REJECTION_STAGES:
                    rejections += 1
            elif outcome == "aborted":
                aborted += 1
            else:
                timed_out += 1
            signatures = acc.signatures
            signatures[signature] = signatures.get(signature, 0) + 1
            if distance is not None:
                acc.churn_pairs += 1
                acc.churn_sum += distance
                self.churn_pairs += 1
                self.churn_sum += distance
                if retain:
                    acc.churn_terms.append(distance)
                    self.churn_terms.append(distance)
        self.succeeded += succeeded
        self.failed += failed
        self.aborted += aborted
        self.timed_out += timed_out
        self.invocation_rejections += rejections
        if sequence_key is not None:
            counts = self.task_sequences.get(task)
            if counts is None:
                counts = {}
                self.task_sequences[task] = counts
            counts[sequence_key] = counts.get(sequence_key, 0) + 1

    @classmethod
    def from_plain(cls, data: Sequence[Any]) -> MeterState:
        """The state the native core accumulated for one file, from its plain data.

        ``data`` is ``(totals, refs, churn_pairs, churn_sum, churn_terms, task_sequences,
        models)``: ``totals`` the ten counters in ``__slots__`` order of the Python names
        (traces, operations, action, discovery and workflow operations, succeeded, failed,
        aborted, timed out, invocation rejections); ``refs`` ``(ref, calls, succeeded,
        failed, signatures, stages, churn_pairs, churn_sum, churn_terms)`` with the count
        maps as dicts (taken as they are, so the caller hands them over) or ``(key, count)``
        pairs, every map and list in first-seen order; ``models`` ``(model, data)`` pairs.
        The result keeps its churn terms (it is merged as a right-hand side).
        """
        state = cls(retain_terms=True)
        (
            state.traces,
            state.operations,
            state.action_operations,
            state.discovery_operations,
            state.workflow_operations,
            state.succeeded,
            state.failed,
            state.aborted,
            state.timed_out,
            state.invocation_rejections,
        ) = data[0]
        refs = state.refs
        for ref, calls, succeeded, failed, signatures, stages, pairs, total, terms in data[1]:
            acc = _RefAccumulator()
            acc.calls, acc.succeeded, acc.failed = calls, succeeded, failed
            acc.signatures = _counts(signatures)
            acc.stages = _counts(stages)
            acc.churn_pairs, acc.churn_sum, acc.churn_terms = pairs, total, terms
            refs[ref] = acc
        state.churn_pairs, state.churn_sum, state.churn_terms = data[2], data[3], data[4]
        state.task_sequences = {task: _counts(sequences) for task, sequences in data[5]}
        state.models = {model: cls.from_plain(inner) for model, inner in data[6]}
        return state

    def merge_plain(self, data: Sequence[Any]) -> MeterState:
        """``self.merge(MeterState.from_plain(data))``; a state that is still empty (a
        file's fresh part) takes the built state's contents instead of copying them."""
        other = MeterState.from_plain(data)
        if self.traces or self.refs or self.models or self.task_sequences or self.churn_terms:
            return self.merge(other)
        for name in MeterState.__slots__:
            if name != "retain_terms":
                setattr(self, name, getattr(other, name))
        if not self.retain_terms:
            self._drop_terms()
        return self

    def _drop_terms(self) -> None:
        self.retain_terms = False
        self.churn_terms = []
        for acc in self.refs.values():
            acc.churn_terms = []
        for model in self.models.values():
            model._drop_terms()

    # ------------------------------------------------------------------------ merging

    def copy(self) -> MeterState:
        """An independent deep copy."""
        clone = MeterState(retain_terms=self.retain_terms)
        clone.merge(self)
        return clone

    def merge(self, other: MeterState) -> MeterState:
        """Fold ``other`` (the slice that follows this one) into this state; returns ``self``.

        The result equals one pass over this state's input followed by ``other``'s input:
        counters add, every ordered map keeps first-seen order, and the churn sums replay
        ``other``'s distances one by one onto this state's running sums so the float
        rounding happens in the same order as in a single pass.
        """
        if other.churn_pairs and not other.retain_terms:
            raise ValueError(
                "cannot merge a state that dropped its churn terms (create it with "
                "retain_terms=True to use it as the right-hand side of a merge)"
            )
        self.traces += other.traces
        self.operations += other.operations
        self.action_operations += other.action_operations
        self.discovery_operations += other.discovery_operations
        self.workflow_operations += other.workflow_operations
        self.succeeded += other.succeeded
        self.failed += other.failed
        self.aborted += other.aborted
        self.timed_out += other.timed_out
        self.invocation_rejections += other.invocation_rejections
        for ref, theirs in other.refs.items():
            mine = self.refs.get(ref)
            if mine is None:
                mine = theirs.copy()
                if not self.retain_terms:
                    mine.churn_terms = []
                self.refs[ref] = mine
                continue
            mine.calls += theirs.calls
            mine.succeeded += theirs.succeeded
            mine.failed += theirs.failed
            _merge_counts(mine.signatures, theirs.signatures)
            _merge_counts(mine.stages, theirs.stages)
            mine.churn_pairs += theirs.churn_pairs
            running = mine.churn_sum
            for term in theirs.churn_terms:
                running += term
            mine.churn_sum = running
            if self.retain_terms:
                mine.churn_terms.extend(theirs.churn_terms)
        self.churn_pairs += other.churn_pairs
        running = self.churn_sum
        for term in other.churn_terms:
            running += term
        self.churn_sum = running
        if self.retain_terms:
            self.churn_terms.extend(other.churn_terms)
        for task, sequences in other.task_sequences.items():
            mine_sequences = self.task_sequences.get(task)
            if mine_sequences is None:
                self.task_sequences[task] = dict(sequences)
            else:
                _merge_counts(mine_sequences, sequences)
        for model, theirs_state in other.models.items():
            mine_state = self.models.get(model)
            if mine_state is None:
                mine_state = MeterState(retain_terms=self.retain_terms)
                self.models[model] = mine_state
            mine_state.merge(theirs_state)
        return self

    # --------------------------------------------------------------------- finalising

    def finalize(
        self,
        surface: Mapping[str, Any] | None = None,
        repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
        catalog_digest: str | None = None,
        *,
        metric_version: int = ENTROPY_METRIC_VERSION,
    ) -> Report:
        """The report of everything accumulated so far (spec §3.3-§3.5); ``metric_version=3``
        finalises as the upstream's metric v3 (:mod:`pytest_entropy.core.v3.meter`)."""
        if check_metric_version(metric_version) == ENTROPY_METRIC_VERSION_V3:
            from pytest_entropy.core.v3.meter import finalize_v3  # v2 runs never load it

            return finalize_v3(self, surface, repairs, catalog_digest)
        rows = coerce_repairs(repairs)
        lexicon: dict[str, int] = {}
        for row in rows:
            lexicon[row.ref] = lexicon.get(row.ref, 0) + 1
        index = SurfaceIndex(surface)
        digest = "" if catalog_digest is None else catalog_digest
        # The refs in code-unit order, sorted once: each model's refs are a subset.
        order = sorted(self.refs, key=code_unit_key)
        by_model = tuple(
            self._model_row(model, index, lexicon, len(rows), digest, order)
            for model in sorted(self.models, key=code_unit_key)
        )
        return self._finalize(index, lexicon, len(rows), digest, by_model, order=order)

    def _model_row(
        self,
        model: str,
        index: SurfaceIndex,
        lexicon: Mapping[str, int],
        repair_count: int,
        digest: str,
        order: list[str],
    ) -> ModelRow:
        # A model row needs the scoped totals and score, not the scoped ref rows.
        scoped = self.models[model]._finalize(
            index, lexicon, repair_count, digest, (), with_rows=False, order=order
        )
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

    def _finalize(
        self,
        index: SurfaceIndex,
        lexicon: Mapping[str, int],
        repair_count: int,
        digest: str,
        by_model: tuple[ModelRow, ...],
        *,
        with_rows: bool = True,
        order: list[str] | None = None,
    ) -> Report:
        """The report; ``with_rows=False`` leaves ``refs`` empty (every number is the same: the
        per-ref scores are summed in the same order either way). ``order``: the refs of the
        state finalised first in code-unit order, a superset of this state's."""
        refs = self.refs
        scores = ref_scores(refs, ref_order(refs, order), index, lexicon, _SCORE_WEIGHTS, with_rows)
        ref_rows = scores.rows
        static_total = scores.static_total
        static_weighted = scores.static_weighted
        score_sum = scores.score_sum
        actions = self.action_operations
        successes = max(1, self.succeeded)
        flow_weighted, flow_occurrences = flow_terms(self.task_sequences)
        navigation = round_metric(self.discovery_operations / actions) if actions else 0.0
        flow = round_metric(flow_weighted / flow_occurrences) if flow_occurrences else 0.0
        score = round_metric(
            (score_sum + _NAVIGATION_WEIGHT * navigation + _FLOW_WEIGHT * flow) / successes
        )
        static_score = round_metric(static_weighted / successes)
        per_1k = round_metric(self.invocation_rejections / actions * 1000) if actions else 0.0
        totals = Totals(
            traces=self.traces,
            operations=self.operations,
            action_operations=actions,
            discovery_operations=self.discovery_operations,
            workflow_operations=self.workflow_operations,
            succeeded=self.succeeded,
            failed=self.failed,
            aborted=self.aborted,
            timed_out=self.timed_out,
            invocation_rejections=self.invocation_rejections,
            invocation_rejections_per_1k=per_1k,
        )
        ref_rows.sort(key=lambda row: code_unit_key(row.ref))
        ref_rows.sort(key=lambda row: -row.score)
        return Report(
            metric_version=ENTROPY_METRIC_VERSION,
            catalog_digest=digest,
            totals=totals,
            shape_entropy_bits=(round_metric(scores.shape_weighted / actions) if actions else 0.0),
            failure_stage_entropy_bits=(
                round_metric(scores.stage_weighted / self.failed) if self.failed else 0.0
            ),
            churn_rate=(
                round_metric(self.churn_sum / self.churn_pairs) if self.churn_pairs else 0.0
            ),
            navigation_ratio=navigation,
            flow_entropy_bits=flow,
            lexicon_rows=repair_count,
            static_freedom=round_metric(static_total),
            static_score=static_score,
            behavioral_score=round_metric(score - static_score),
            score=score,
            refs=tuple(ref_rows),
            by_model=by_model,
        )


def measure(
    traces: Iterable[Trace | Mapping[str, Any]],
    surface: Mapping[str, Any] | None = None,
    repairs: Iterable[RepairRow | Mapping[str, Any]] | None = None,
    catalog_digest: str | None = None,
    *,
    metric_version: int = ENTROPY_METRIC_VERSION,
) -> Report:
    """``measureEntropy``: the report of a corpus of traces (spec §3); ``metric_version``
    2 (the default, the reference) or 3 (the upstream's current generation).

    >>> measure([{"operations": [{"ref": "pi.read", "args": {}, "outcome": "succeeded"}]}]).score
    0.0
    >>> failed = {"ref": "pi.read", "args": {}, "outcome": "failed", "failureStage": "validate"}
    >>> measure([{"operations": [failed]}], metric_version=3).score
    1.0
    """
    check_metric_version(metric_version)
    state = MeterState(retain_terms=False)
    state.add_traces(traces)
    return state.finalize(surface, repairs, catalog_digest, metric_version=metric_version)


def report_hash(report: Report | Mapping[str, Any]) -> str:
    """``entropyReportHash``: the stable hash of the report's JSON form."""
    value = report.to_json() if isinstance(report, Report) else report
    return stable_json_hash(value)
